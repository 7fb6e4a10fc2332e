/*
 * test_iter_bounds.c -- an iterator's bounds keep it away from files that
 * cannot hold a key inside them, and never change what it returns.
 *
 *   model      trees of rows spread over memtables, level 0 and deeper
 *              levels (outputs cut at tree boundaries, as the access
 *              method's partitioner cuts its metadata), some rows deleted
 *              or overwritten; random bounds (in gaps between files, inside
 *              files, before and after every key, empty) and every way of
 *              moving (first/next, last/prev, seek, seek_for_prev, changes
 *              of direction) give what a sorted model gives.
 *   no reads   with the files open, an iterator over a range that no file
 *              holds -- past the end of a tree, before the first key,
 *              after the last, between two files of a level -- reads no
 *              block (block cache hits and misses unchanged): answered from
 *              the files' smallest and largest keys.  An ascending unique
 *              key beyond the end of its tree costs the same nothing.
 */
#include "harness.h"
#include "db/db_impl.h"

#define KEYLEN H_ROW_KEY_LEN
#define NTREES 8
#define NROWS 1500
#define VLEN 120

static tides_batch *batch;
static uint32_t batch_n;
/* the model: version of (tree, row), 0 = absent */
static uint32_t model[NTREES + 1][NROWS];

static void
commit(tides_db *db)
{
	if (batch_n == 0)
		return;
	h_write_retrying(db, batch, false);
	batch_n = 0;
}

static void
put(tides_db *db, uint32_t tree, uint32_t row, uint32_t ver)
{
	uint8_t		k[KEYLEN],
				v[VLEN];

	h_row_key(k, tree, row);
	h_row_value(v, VLEN, tree, row, ver);
	CHECK_OK(tides_batch_put(batch, k, KEYLEN, v, VLEN));
	model[tree][row] = ver;
	if (++batch_n >= 64)
		commit(db);
}

static void
del(tides_db *db, uint32_t tree, uint32_t row)
{
	uint8_t		k[KEYLEN];

	h_row_key(k, tree, row);
	CHECK_OK(tides_batch_delete(batch, k, KEYLEN));
	model[tree][row] = 0;
	if (++batch_n >= 64)
		commit(db);
}

static void
flush_all(tides_db *db)
{
	bool		did;

	commit(db);
	for (int tries = 0; tides_seal_memtable(db) == TIDES_BUSY && tries < 1000; tries++)
		CHECK_OK(tides_flush_work(db, &did));
	do
		CHECK_OK(tides_flush_work(db, &did));
	while (did);
}

static void
compact_idle(tides_db *db)
{
	for (int rounds = 0; rounds < 1000; rounds++)
	{
		bool		c = false,
					m = false;

		CHECK_OK(tides_compact_work(db, &c));
		CHECK_OK(tides_maint_work(db, &m));
		if (!c && !m)
			break;
	}
}

/* outputs never mix trees (the access method's partitioner does this for tree 0) */
static bool
tree_partition(void *arg, const void *prev, size_t prevlen, const void *key, size_t klen)
{
	return prevlen < 8 || klen < 8 || memcmp(prev, key, 8) != 0;
}

/* ---- the model, in key order: positions tree * NROWS + row */

static int
pos_of(const uint8_t *k, size_t n)
{
	uint64_t	tree = tides_get_be64(k);
	uint32_t	row;

	CHECK(n == KEYLEN);
	row = ((uint32_t) k[8] << 24) | ((uint32_t) k[9] << 16) | ((uint32_t) k[10] << 8) | k[11];
	return (int) (tree * NROWS + row);
}

static bool
present(int p)
{
	return p >= 0 && p < (NTREES + 1) * NROWS && model[p / NROWS][p % NROWS] != 0;
}

/* first present position >= p (and < end), or -1 */
static int
model_next(int p, int end)
{
	for (; p < end; p++)
		if (present(p))
			return p;
	return -1;
}

static int
model_prev(int p, int begin)
{
	for (; p >= begin; p--)
		if (present(p))
			return p;
	return -1;
}

static bool
at(tides_iter *it, int want)
{
	size_t		n,
				vn;
	const uint8_t *k;
	const uint8_t *v;
	uint8_t		expect[VLEN];
	int			p;

	if (want < 0)
		return !tides_iter_valid(it) && tides_iter_status(it) == TIDES_OK;
	if (!tides_iter_valid(it))
		return false;
	k = tides_iter_key(it, &n);
	p = pos_of(k, n);
	if (p != want)
		return false;
	v = tides_iter_value(it, &vn);
	h_row_value(expect, VLEN, p / NROWS, p % NROWS, model[p / NROWS][p % NROWS]);
	return vn == VLEN && memcmp(v, expect, VLEN) == 0;
}

/* a bound: a position's key, or a key just after a position's (between rows) */
static void
bound_key(uint8_t *k, int p)
{
	h_row_key(k, (uint32_t) (p / NROWS), (uint32_t) (p % NROWS));
}

static void
check_bounds(tides_db *db, int lo, int hi)
{
	uint8_t		lk[KEYLEN],
				hk[KEYLEN],
				sk[KEYLEN];
	tides_iter_options io = {0};
	tides_iter *it;
	int			p,
				q,
				s;

	bound_key(lk, lo);
	bound_key(hk, hi);
	io.lower = lk;
	io.lower_len = KEYLEN;
	io.upper = hk;
	io.upper_len = KEYLEN;
	io.fill_cache = true;
	it = tides_iter_new(db, &io);
	CHECK(it != NULL);
	if (it == NULL)
		return;

	/* forward from the start */
	tides_iter_first(it);
	p = model_next(lo, hi);
	for (int steps = 0; steps < 40 && p >= 0; steps++)
	{
		if (!at(it, p))
		{
			fprintf(stderr, "first/next in [%d, %d): expected %d\n", lo, hi, p);
			test_failures++;
			break;
		}
		tides_iter_next(it);
		p = model_next(p + 1, hi);
	}
	/* backward from the end */
	tides_iter_last(it);
	p = model_prev(hi - 1, lo);
	for (int steps = 0; steps < 40 && p >= 0; steps++)
	{
		if (!at(it, p))
		{
			fprintf(stderr, "last/prev in [%d, %d): expected %d\n", lo, hi, p);
			test_failures++;
			break;
		}
		tides_iter_prev(it);
		p = model_prev(p - 1, lo);
	}
	/* seeks anywhere (also outside the bounds), then a change of direction */
	for (int i = 0; i < 6; i++)
	{
		s = lo - 20 + (int) (h_mix(test_seed + lo * 7 + hi * 13 + i) % (uint64_t) (hi - lo + 40));
		if (s < 0)
			s = 0;
		bound_key(sk, s);
		tides_iter_seek(it, sk, KEYLEN);
		p = model_next(s < lo ? lo : s, hi);
		if (!at(it, p))
		{
			size_t		n = 0;

			fprintf(stderr, "seek %d in [%d, %d): expected %d, got %d\n", s, lo, hi, p,
					tides_iter_valid(it) ? pos_of(tides_iter_key(it, &n), KEYLEN) : -1);
			test_failures++;
		}
		if (p >= 0)
		{
			tides_iter_prev(it);
			q = model_prev(p - 1, lo);
			CHECK(at(it, q));
		}
		tides_iter_seek_for_prev(it, sk, KEYLEN);
		p = model_prev(s >= hi ? hi - 1 : s, lo);
		CHECK(at(it, p));
		if (p >= 0)
		{
			tides_iter_next(it);
			q = model_next(p + 1, hi);
			CHECK(at(it, q));
		}
	}
	tides_iter_free(it);
}

/* block reads (hits and misses of the block cache) of one bounded scan */
static uint64_t
reads_of_scan(tides_db *db, const uint8_t *lo, const uint8_t *hi, int *found)
{
	tides_stats a,
				b;
	tides_iter_options io = {0};
	tides_iter *it;

	io.lower = lo;
	io.lower_len = KEYLEN;
	io.upper = hi;
	io.upper_len = KEYLEN;
	io.fill_cache = true;
	tides_get_stats(db, &a);
	it = tides_iter_new(db, &io);
	*found = 0;
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
		(*found)++;
	CHECK_OK(tides_iter_status(it));
	tides_iter_last(it);
	if (tides_iter_valid(it))
		(*found)++;
	tides_iter_free(it);
	tides_get_stats(db, &b);
	return (b.cache_hits - a.cache_hits) + (b.cache_misses - a.cache_misses);
}

/* does a level-0 file's range (whatever its memtable held) reach into [lo, hi)? */
static bool
l0_spans(const tides_version *v, const uint8_t *lo, const uint8_t *hi)
{
	for (uint32_t i = 0; i < v->nfiles[0]; i++)
	{
		const tides_file_meta *f = v->files[0][i];

		if (memcmp(tides_file_smallest(f), hi, KEYLEN) < 0 &&
			memcmp(tides_file_largest(f), lo, KEYLEN) >= 0)
			return true;
	}
	return false;
}

static int
test_no_reads(tides_db *db)
{
	tides_version *v = db->sh->current;
	uint8_t		lo[KEYLEN],
				hi[KEYLEN];
	int			found;
	int			gaps = 0;
	uint64_t	r;

	/* open every file (table cache) with one full scan */
	{
		tides_iter *it = tides_iter_new(db, NULL);

		for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
			;
		tides_iter_free(it);
	}

	/* after the last key, before the first */
	h_row_key(lo, NTREES + 5, 0);
	h_row_key(hi, NTREES + 6, 0);
	r = reads_of_scan(db, lo, hi, &found);
	CHECK(found == 0);
	CHECK(r == 0);
	h_row_key(lo, 0, 0);
	h_row_key(hi, 0, 5);
	r = reads_of_scan(db, lo, hi, &found);
	CHECK(found == 0);
	CHECK(r == 0);

	/*
	 * Past the end of each tree, as a unique check of an ascending key
	 * probes: [row NROWS, row 2 NROWS) of tree t lies between t's files
	 * and t+1's, which the partitioner keeps apart -- unless a level-0 file
	 * (which holds whatever a memtable held) spans it.
	 */
	for (uint32_t t = 1; t <= NTREES; t++)
	{
		h_row_key(lo, t, NROWS + 10);
		h_row_key(hi, t, NROWS + 11);
		if (l0_spans(v, lo, hi))
			continue;
		gaps++;
		r = reads_of_scan(db, lo, hi, &found);
		CHECK(found == 0);
		if (r != 0)
		{
			fprintf(stderr, "the range past the end of tree %u read %llu blocks\n", t,
					(unsigned long long) r);
			test_failures++;
		}
	}

	/* between two consecutive files of each level */
	for (int l = 1; l < TIDES_MAX_LEVELS; l++)
		for (uint32_t i = 0; i + 1 < v->nfiles[l]; i++)
		{
			const tides_file_meta *a = v->files[l][i];
			const tides_file_meta *b = v->files[l][i + 1];
			const uint8_t *la = tides_file_largest(a);
			const uint8_t *sb = tides_file_smallest(b);
			int			pa = pos_of(la, a->largest_len - TIDES_TRAILER);
			int			pb = pos_of(sb, b->smallest_len - TIDES_TRAILER);

			if (pb - pa < 2)
				continue;
			/* no other level may hold a key there either */
			if (model_next(pa + 1, pb) >= 0)
				continue;
			bound_key(lo, pa + 1);
			bound_key(hi, pb);
			if (l0_spans(v, lo, hi))
				continue;
			r = reads_of_scan(db, lo, hi, &found);
			CHECK(found == 0);
			gaps++;
			if (r != 0)
			{
				fprintf(stderr, "the gap between files %llu and %llu of L%d read %llu blocks\n",
						(unsigned long long) a->number, (unsigned long long) b->number, l,
						(unsigned long long) r);
				test_failures++;
			}
		}
	printf("no reads: %d ranges past a tree's end or between files checked\n", gaps);
	return gaps;
}

int
main(int argc, char **argv)
{
	store		st = {0};
	tides_db   *db;
	uint64_t	x;

	test_init(argc, argv);
	batch = tides_batch_new();
	tides_options_default(&st.opts);
	st.opts.memtable_size = 1 << 20;
	st.opts.memtable_count = 4;
	st.opts.block_cache_size = 4 << 20;
	st.opts.meta_size = 4 << 20;
	st.opts.log_segment_size = 4 << 20;
	st.opts.sync_mode = TIDES_SYNC_NONE;
	st.opts.compression = TIDES_COMPRESS_NONE;
	st.opts.target_file_size = 64 << 10;
	st.opts.level_base_size = 256 << 10;
	st.opts.level0_compaction_trigger = 4;
	st.opts.level0_slowdown_trigger = 100;
	st.opts.level0_stop_trigger = 200;
	st.dir = test_tmpdir("iter_bounds");
	st.vfs = tides_vfs_posix();
	CHECK_OK(store_open(&st));
	db = st.db;
	tides_set_partitioner(db, tree_partition, NULL);

	/* trees 1..NTREES (even rows only: gaps between rows), tree by tree */
	for (uint32_t t = 1; t <= NTREES; t++)
	{
		for (uint32_t r = 0; r < NROWS; r += 2)
			put(db, t, r, 1);
		flush_all(db);
	}
	compact_idle(db);
	/* overwrites and deletions, some of them on level 0, some in memtables */
	x = test_seed;
	for (int i = 0; i < 3000; i++)
	{
		uint32_t	t,
					r;

		x = h_mix(x + i);
		t = 1 + (uint32_t) (x % NTREES);
		r = (uint32_t) ((x >> 20) % NROWS) & ~1u;
		if ((x >> 50) % 3 == 0)
			del(db, t, r);
		else
			put(db, t, r, 2 + i);
		if (i == 1500)
		{
			flush_all(db);
			compact_idle(db);
		}
		if (i == 2500)
			flush_all(db);
	}
	commit(db);
	{
		tides_stats s;

		tides_get_stats(db, &s);
		printf("levels:");
		for (int l = 0; l < TIDES_MAX_LEVELS; l++)
			printf(" L%d %u", l, s.level_files[l]);
		printf("\n");
		CHECK(s.level_files[0] > 0);
	}

	/* the model */
	x = test_seed * 31 + 7;
	for (int i = 0; i < 400; i++)
	{
		int			lo,
					hi;

		x = h_mix(x + i);
		lo = (int) (x % ((NTREES + 1) * NROWS));
		hi = lo + (int) ((x >> 32) % (i % 4 == 0 ? 3 * NROWS : 60));
		if (i % 17 == 0)
			hi = lo;			/* empty */
		check_bounds(db, lo, hi + 1);
	}

	test_no_reads(db);

	/* the same after everything went down (a full compaction empties level 0) */
	flush_all(db);
	h_compact_full(db);
	CHECK(db->sh->current->nfiles[0] == 0);
	for (int i = 0; i < 100; i++)
	{
		int			lo;

		x = h_mix(x + i);
		lo = (int) (x % ((NTREES + 1) * NROWS));
		check_bounds(db, lo, lo + 1 + (int) ((x >> 32) % 200));
	}
	CHECK(test_no_reads(db) >= NTREES);

	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(st.dir);
	free(st.dir);
	tides_batch_free(batch);
	return test_finish("test_iter_bounds");
}
