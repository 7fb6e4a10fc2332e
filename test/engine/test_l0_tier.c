/*
 * test_l0_tier.c -- what level 0 asks of compaction (db/compaction_l0.c):
 * the adaptive trigger (tides_options.level0_adaptive_trigger) and sorted
 * runs (level0_tiered).
 *
 *   trigger    the adaptive trigger on versions made of file sizes: off, the
 *              configured trigger; a base level no larger than ratio x L0,
 *              the configured one; base / ratio / average L0 file size when
 *              between; capped at the slowdown trigger; monotone in the base
 *              level's size; the shift = trigger - configured trigger, with
 *              the base level the targets choose; degenerate versions (no L0
 *              file, an empty base, L0 files of no bytes, no room above the
 *              trigger): the configured trigger
 *   plan       tides_compaction_l0_plan on versions made of file sizes: a
 *              merge of the newest run of level0_compaction_trigger similar
 *              files (within 3x), passing over busy files and dissimilar
 *              sizes; a move down once level 0 is half the base level, at
 *              an empty base, or at the shifted slowdown trigger; the shift
 *              is the room between trigger and slowdown trigger; without
 *              the option, the plain (or adaptive) trigger as before;
 *              while a compaction holds the oldest file, the runs above it
 *              merge instead (a move down waits for it anyway)
 *   cheaper    one random-key load into a store whose base level is its
 *              last, plain and tiered: both read every key's newest version
 *              (deletes included) after the load and after a crash; tiered
 *              merged runs in place and wrote at most two thirds of the
 *              plain store's compaction bytes
 *   tombstone  a deletion in the newest runs merges while an older, larger
 *              level-0 file (not in the merge) still holds the deleted key
 *              and the base level does not: the merge must keep the
 *              tombstone, and the key stays deleted (also after a crash)
 */
#include "harness.h"
#include "db/db_impl.h"
#include "db/compaction.h"

#define MB (1ull << 20)
#define KB (1ull << 10)

/* ------------------------------------------------------------------ plan */

static tides_file_meta l0f[16],
			basef[1];
static tides_file_meta *l0p[16],
		   *basep[1];

/* level 0 of the given sizes (newest first), one base-level file */
static void
make_version(tides_version *v, const uint64_t *sizes, uint32_t n, int base, uint64_t base_size)
{
	memset(v, 0, sizeof(*v));
	for (uint32_t i = 0; i < n; i++)
	{
		memset(&l0f[i], 0, sizeof(l0f[i]));
		l0f[i].size = sizes[i];
		l0p[i] = &l0f[i];
	}
	memset(&basef[0], 0, sizeof(basef[0]));
	basef[0].size = base_size;
	basep[0] = &basef[0];
	v->nfiles[0] = n;
	v->files[0] = l0p;
	v->nfiles[base] = base_size > 0 ? 1 : 0;
	v->files[base] = basep;
}

/* n level-0 files of l0_size bytes each */
static void
make_even(tides_version *v, uint32_t n, uint64_t l0_size, int base, uint64_t base_size)
{
	uint64_t	sizes[16];

	for (uint32_t i = 0; i < n; i++)
		sizes[i] = l0_size;
	make_version(v, sizes, n, base, base_size);
}

static void
test_trigger(void)
{
	tides_db	db;
	tides_version v;
	uint32_t	prev = 0;

	memset(&db, 0, sizeof(db));
	tides_options_default(&db.opts);
	db.opts.level0_compaction_trigger = 4;
	db.opts.level0_slowdown_trigger = 12;
	db.opts.level_size_ratio = 10;

	/* off */
	db.opts.level0_adaptive_trigger = false;
	make_even(&v, 4, 16 * MB, 6, 2000 * MB);
	CHECK(tides_compaction_l0_trigger(&db, &v, 6) == 4);
	CHECK(tides_compaction_l0_shift(&db, &v) == 0);

	db.opts.level0_adaptive_trigger = true;
	/* small: base 400 MB, L0 files of 16 MB: 400 / 10 / 16 = 2.5 < 4 */
	make_even(&v, 4, 16 * MB, 6, 400 * MB);
	CHECK(tides_compaction_l0_trigger(&db, &v, 6) == 4);
	/* grows: 1120 MB / 10 / 16 MB = 7 */
	make_even(&v, 4, 16 * MB, 6, 1120 * MB);
	CHECK(tides_compaction_l0_trigger(&db, &v, 6) == 7);
	/* the same with the base level higher up */
	make_even(&v, 4, 16 * MB, 3, 1120 * MB);
	CHECK(tides_compaction_l0_trigger(&db, &v, 3) == 7);
	/* capped at the slowdown trigger */
	make_even(&v, 4, 16 * MB, 6, 100000 * MB);
	CHECK(tides_compaction_l0_trigger(&db, &v, 6) == 12);
	/* monotone in the base level's size */
	for (uint64_t b = 0; b <= 4000; b += 40)
	{
		uint32_t	t;

		make_even(&v, 5, 16 * MB, 6, b * MB);
		t = tides_compaction_l0_trigger(&db, &v, 6);
		CHECK(t >= 4 && t <= 12 && t >= prev);
		prev = t;
	}
	/*
	 * The shift, on the base level the targets choose: the only data is on
	 * the last level (its size sets every target), so that is the base.
	 */
	db.opts.level_base_size = 256 * MB;
	make_even(&v, 4, 16 * MB, TIDES_MAX_LEVELS - 1, 1120 * MB);
	CHECK(tides_compaction_l0_shift(&db, &v) ==
		  tides_compaction_l0_trigger(&db, &v, TIDES_MAX_LEVELS - 1) - 4);
	CHECK(tides_compaction_l0_shift(&db, &v) == 3);
	make_even(&v, 4, 16 * MB, TIDES_MAX_LEVELS - 1, 2000 * MB);
	CHECK(tides_compaction_l0_shift(&db, &v) == 8);
	/* a last level large enough for an empty base level above it: no shift */
	make_even(&v, 4, 16 * MB, TIDES_MAX_LEVELS - 1, 100000 * MB);
	CHECK(tides_compaction_l0_shift(&db, &v) == 0);
	make_even(&v, 4, 16 * MB, TIDES_MAX_LEVELS - 1, 100 * MB);
	CHECK(tides_compaction_l0_shift(&db, &v) == 0);
	/* degenerate */
	make_even(&v, 0, 16 * MB, 6, 4000 * MB);
	CHECK(tides_compaction_l0_trigger(&db, &v, 6) == 4);
	make_even(&v, 4, 16 * MB, 6, 0);
	CHECK(tides_compaction_l0_trigger(&db, &v, 6) == 4);
	make_even(&v, 4, 0, 6, 4000 * MB);
	CHECK(tides_compaction_l0_trigger(&db, &v, 6) == 4);
	db.opts.level0_slowdown_trigger = 4;	/* no room above the trigger */
	make_even(&v, 4, 16 * MB, 6, 4000 * MB);
	CHECK(tides_compaction_l0_trigger(&db, &v, 6) == 4);
}

static void
test_plan(void)
{
	tides_db	db;
	tides_version v;
	tides_l0_plan p;
	const int	base = TIDES_MAX_LEVELS - 1;

	memset(&db, 0, sizeof(db));
	tides_options_default(&db.opts);
	db.opts.level0_compaction_trigger = 4;
	db.opts.level0_slowdown_trigger = 12;
	db.opts.level_size_ratio = 10;
	db.opts.level0_tiered = true;
	db.opts.level0_adaptive_trigger = true;	/* tiered takes its place */

	/* three similar runs: nothing yet */
	make_version(&v, (uint64_t[]) {5 * MB, 5 * MB, 6 * MB}, 3, base, 1000 * MB);
	p = tides_compaction_l0_plan(&db, &v, base);
	CHECK(p.kind == TIDES_L0_NONE && p.score < 1.0);
	/* four: merged in place */
	make_version(&v, (uint64_t[]) {5 * MB, 4 * MB, 6 * MB, 5 * MB}, 4, base, 1000 * MB);
	p = tides_compaction_l0_plan(&db, &v, base);
	CHECK(p.kind == TIDES_L0_MERGE && p.first == 0 && p.nfiles == 4 && p.score >= 1.0);
	/* the newest similar run is too short; the older one goes */
	make_version(&v, (uint64_t[]) {5 * MB, 5 * MB, 5 * MB, 20 * MB, 21 * MB, 19 * MB, 20 * MB}, 7,
				 base, 1000 * MB);
	p = tides_compaction_l0_plan(&db, &v, base);
	CHECK(p.kind == TIDES_L0_MERGE && p.first == 3 && p.nfiles == 4);
	/* a larger older run does not join */
	make_version(&v, (uint64_t[]) {5 * MB, 5 * MB, 5 * MB, 5 * MB, 20 * MB}, 5, base, 1000 * MB);
	p = tides_compaction_l0_plan(&db, &v, base);
	CHECK(p.kind == TIDES_L0_MERGE && p.first == 0 && p.nfiles == 4);
	/* a run of five similar files merges whole */
	make_version(&v, (uint64_t[]) {5 * MB, 5 * MB, 5 * MB, 5 * MB, 7 * MB, 40 * MB}, 6, base, 1000 * MB);
	p = tides_compaction_l0_plan(&db, &v, base);
	CHECK(p.kind == TIDES_L0_MERGE && p.first == 0 && p.nfiles == 5);
	/* a busy file breaks a run */
	make_version(&v, (uint64_t[]) {5 * MB, 5 * MB, 5 * MB, 5 * MB, 5 * MB}, 5, base, 1000 * MB);
	atomic_store(&l0f[2].being_compacted, 1);
	p = tides_compaction_l0_plan(&db, &v, base);
	CHECK(p.kind == TIDES_L0_NONE);
	atomic_store(&l0f[2].being_compacted, 0);
	/* level 0 is half the base level: down, as a whole */
	make_version(&v, (uint64_t[]) {100 * MB, 150 * MB, 250 * MB}, 3, base, 1000 * MB);
	p = tides_compaction_l0_plan(&db, &v, base);
	CHECK(p.kind == TIDES_L0_DOWN && p.score >= 1.0);
	/*
	 * While a compaction holds the oldest file (a move down takes them all),
	 * runs flushed above it merge; with none to merge, down (it waits).  A
	 * busy file that is not the oldest does not hold the move down back.
	 */
	make_version(&v, (uint64_t[]) {5 * MB, 5 * MB, 5 * MB, 5 * MB, 250 * MB, 250 * MB}, 6, base,
				 1000 * MB);
	CHECK(tides_compaction_l0_plan(&db, &v, base).kind == TIDES_L0_DOWN);
	atomic_store(&l0f[4].being_compacted, 1);
	atomic_store(&l0f[5].being_compacted, 1);
	p = tides_compaction_l0_plan(&db, &v, base);
	CHECK(p.kind == TIDES_L0_MERGE && p.first == 0 && p.nfiles == 4);
	atomic_store(&l0f[3].being_compacted, 1);
	CHECK(tides_compaction_l0_plan(&db, &v, base).kind == TIDES_L0_DOWN);
	atomic_store(&l0f[4].being_compacted, 0);
	atomic_store(&l0f[5].being_compacted, 0);
	p = tides_compaction_l0_plan(&db, &v, base);
	CHECK(p.kind == TIDES_L0_DOWN && p.score >= 1.0);
	atomic_store(&l0f[3].being_compacted, 0);
	/* an empty base: down at the trigger, as without the option */
	make_version(&v, (uint64_t[]) {5 * MB, 5 * MB, 5 * MB}, 3, base, 0);
	CHECK(tides_compaction_l0_plan(&db, &v, base).kind == TIDES_L0_NONE);
	make_version(&v, (uint64_t[]) {5 * MB, 5 * MB, 5 * MB, 5 * MB}, 4, base, 0);
	CHECK(tides_compaction_l0_plan(&db, &v, base).kind == TIDES_L0_DOWN);
	/* the shift: slowdown - trigger; at slowdown + shift files, down */
	CHECK(tides_compaction_l0_shift(&db, &v) == 8);
	{
		uint64_t	sizes[16];

		/* 1, 4, 16, 64 MB, again and again: no two neighbours similar */
		for (int i = 0; i < 16; i++)
			sizes[i] = MB << (2 * (i % 4));
		make_version(&v, sizes, 16, base, 1000000 * MB);
		CHECK(tides_compaction_l0_plan(&db, &v, base).kind == TIDES_L0_NONE);	/* < 12 + 8 */
		db.opts.level0_slowdown_trigger = 10;	/* shift 6: down at 16 */
		p = tides_compaction_l0_plan(&db, &v, base);
		CHECK(p.kind == TIDES_L0_DOWN && p.score >= 1.0);
		make_version(&v, sizes, 15, base, 1000000 * MB);
		CHECK(tides_compaction_l0_plan(&db, &v, base).kind == TIDES_L0_NONE);
		db.opts.level0_slowdown_trigger = 12;
	}
	/* without the option: the plain trigger, or the adaptive one */
	db.opts.level0_tiered = false;
	db.opts.level0_adaptive_trigger = false;
	make_version(&v, (uint64_t[]) {5 * MB, 5 * MB, 5 * MB, 5 * MB}, 4, base, 1000 * MB);
	p = tides_compaction_l0_plan(&db, &v, base);
	CHECK(p.kind == TIDES_L0_DOWN && p.score == 1.0);
	CHECK(tides_compaction_l0_shift(&db, &v) == 0);
	db.opts.level0_adaptive_trigger = true;
	p = tides_compaction_l0_plan(&db, &v, base);
	CHECK(p.kind == TIDES_L0_NONE);	/* 1000 / 10 / 5 = 20, capped at 12 */
	CHECK(tides_compaction_l0_shift(&db, &v) == 8);
}

/* ------------------------------------------------------------- a store */

#define KEYLEN H_ROW_KEY_LEN
#define VLEN 100
#define ROWS 40000

static uint32_t version[ROWS];		/* newest version of each row, 0: none or deleted */

static void
put_row(tides_db *db, tides_batch *b, uint32_t row)
{
	uint8_t		k[KEYLEN],
				v[VLEN];

	h_row_key(k, 1, row);
	h_row_value(v, VLEN, 1, row, ++version[row]);
	CHECK_OK(tides_batch_put(b, k, KEYLEN, v, VLEN));
	if (tides_batch_count(b) >= 64)
		h_write_through(db, b);
}

static void
delete_row(tides_db *db, tides_batch *b, uint32_t row)
{
	uint8_t		k[KEYLEN];

	h_row_key(k, 1, row);
	CHECK_OK(tides_batch_delete(b, k, KEYLEN));
	version[row] = 0;
	if (tides_batch_count(b) >= 64)
		h_write_through(db, b);
}

static bool
reads_all(tides_db *db, const char *when)
{
	uint8_t		k[KEYLEN],
				want[VLEN];
	void	   *v = NULL;
	size_t		n = 0;
	bool		ok = true;

	for (uint32_t row = 0; row < ROWS && ok; row++)
	{
		tides_status s;

		h_row_key(k, 1, row);
		s = tides_get(db, NULL, k, KEYLEN, &v, &n);
		if (version[row] == 0)
			ok = s == TIDES_NOT_FOUND;
		else
		{
			h_row_value(want, VLEN, 1, row, version[row]);
			ok = s == TIDES_OK && n == VLEN && memcmp(v, want, VLEN) == 0;
		}
		if (!ok)
			fprintf(stderr, "test_l0_tier: %s: row %u: %s, want version %u\n", when, row,
					tides_status_name(s), version[row]);
		free(v);
		v = NULL;
	}
	return ok;
}

static void
store_opts(store *st, bool tiered, const char *tag)
{
	memset(st, 0, sizeof(*st));
	tides_options_default(&st->opts);
	st->opts.memtable_size = 256 * KB;
	st->opts.memtable_count = 4;
	st->opts.block_cache_size = 4 * MB;
	st->opts.meta_size = 4 * MB;
	st->opts.log_segment_size = 4 * MB;
	st->opts.compression = TIDES_COMPRESS_NONE;
	st->opts.sync_mode = TIDES_SYNC_NONE;
	st->opts.target_file_size = 1 * MB;
	st->opts.level_base_size = 256 * MB;	/* one level under level 0 */
	st->opts.level0_compaction_trigger = 4;
	st->opts.level0_slowdown_trigger = 100;
	st->opts.level0_stop_trigger = 200;
	st->opts.delayed_write_rate = 0;
	st->opts.level0_tiered = tiered;
	st->dir = test_tmpdir(tag);
}

static void
close_store(store *st)
{
	store_crash(st);
	if (test_failures == 0)
		test_rmdir(st->dir);
	else
		fprintf(stderr, "test_l0_tier: store kept in %s\n", st->dir);
	free(st->dir);
}

/* the largest level-0 file now, in bytes */
static uint64_t
largest_l0(tides_db *db)
{
	tides_version *v = db->sh->current;
	uint64_t	m = 0;

	for (uint32_t i = 0; i < v->nfiles[0]; i++)
		if (v->files[0][i]->size > m)
			m = v->files[0][i]->size;
	return m;
}

/* the random load; returns the compaction bytes written */
static uint64_t
random_load(bool tiered)
{
	store		st;
	tides_batch *b = tides_batch_new();
	tides_stats ss;
	tides_rand	rnd;
	uint64_t	flush_max = 0,
				l0_max = 0;
	int			quiet = 0;

	memset(version, 0, sizeof(version));
	tides_rand_seed(&rnd, test_seed + 7);
	store_opts(&st, tiered, tiered ? "tiered" : "plain");
	CHECK_OK(store_open(&st));
	/* a first load, all down to the base level */
	for (uint32_t row = 0; row < ROWS; row += 2)
		put_row(st.db, b, row);
	h_write_through(st.db, b);
	h_seal_and_flush(st.db);
	h_compact_full(st.db);
	/* then random overwrites and deletes, one memtable at a time */
	for (int m = 0; m < 48; m++)
	{
		tides_stats before;

		for (int i = 0; i < 1500; i++)
		{
			uint32_t	row = (uint32_t) tides_rand_uniform(&rnd, ROWS);

			if (i % 10 == 9)
				delete_row(st.db, b, row);
			else
				put_row(st.db, b, row);
		}
		h_write_through(st.db, b);
		tides_get_stats(st.db, &before);
		h_seal_and_flush(st.db);
		tides_get_stats(st.db, &ss);
		if (ss.flush_bytes_written - before.flush_bytes_written > flush_max)
			flush_max = ss.flush_bytes_written - before.flush_bytes_written;
		CHECK_OK(drain(st.db));
		if (largest_l0(st.db) > l0_max)
			l0_max = largest_l0(st.db);
		if (m % 16 == 15)
			CHECK(reads_all(st.db, tiered ? "tiered, during the load" : "plain, during the load"));
	}
	tides_get_stats(st.db, &ss);
	fprintf(stderr, "test_l0_tier: %s: flushed %llu bytes, compactions wrote %llu in %llu, largest L0 file %llu (flush %llu)\n",
			tiered ? "tiered" : "plain", (unsigned long long) ss.flush_bytes_written,
			(unsigned long long) ss.compaction_bytes_written, (unsigned long long) ss.compactions,
			(unsigned long long) l0_max, (unsigned long long) flush_max);
	/* tiered: runs were merged in place (an L0 file larger than any flush) */
	CHECK(!tiered || l0_max > flush_max * 2);
	CHECK(tiered || l0_max <= flush_max);
	CHECK(reads_all(st.db, "after the load"));
	CHECK(tides_verify(st.db, report_problem, &quiet) == 0);
	store_crash(&st);
	CHECK_OK(store_open(&st));
	CHECK(reads_all(st.db, "after a crash"));
	CHECK(tides_verify(st.db, report_problem, &quiet) == 0);
	close_store(&st);
	tides_batch_free(b);
	return ss.compaction_bytes_written;
}

static void
test_tombstone(void)
{
	store		st;
	tides_batch *b = tides_batch_new();
	const uint32_t victim = 1;
	int			quiet = 0;

	memset(version, 0, sizeof(version));
	store_opts(&st, true, "tombstone");
	CHECK_OK(store_open(&st));
	/* the base level: rows above every other this test writes */
	for (uint32_t row = ROWS / 2; row < ROWS; row += 2)
		put_row(st.db, b, row);
	h_write_through(st.db, b);
	h_seal_and_flush(st.db);
	h_compact_full(st.db);
	CHECK(st.db->sh->current->nfiles[0] == 0);
	/* an older, larger level-0 file holding the victim */
	for (uint32_t row = 1; row < 3000; row += 2)
		put_row(st.db, b, row);
	h_write_through(st.db, b);
	h_seal_and_flush(st.db);
	CHECK_OK(drain(st.db));
	CHECK(st.db->sh->current->nfiles[0] == 1);
	/* four small runs, the oldest deleting the victim: they merge, the large file stays */
	for (int m = 0; m < 4; m++)
	{
		if (m == 0)
			delete_row(st.db, b, victim);
		for (uint32_t row = 5000 + m * 80u; row < 5000 + m * 80u + 80; row += 2)
			put_row(st.db, b, row);
		h_write_through(st.db, b);
		h_seal_and_flush(st.db);
	}
	CHECK(st.db->sh->current->nfiles[0] == 5);
	CHECK_OK(drain(st.db));
	CHECK(st.db->sh->current->nfiles[0] == 2);
	CHECK(reads_all(st.db, "after the merge"));
	store_crash(&st);
	CHECK_OK(store_open(&st));
	CHECK(reads_all(st.db, "after a crash"));
	CHECK(tides_verify(st.db, report_problem, &quiet) == 0);
	close_store(&st);
	tides_batch_free(b);
}

int
main(int argc, char **argv)
{
	uint64_t	plain,
				tiered;

	test_init(argc, argv);
	test_trigger();
	test_plan();
	plain = random_load(false);
	tiered = random_load(true);
	fprintf(stderr, "test_l0_tier: tiered wrote %.2f of the plain store's compaction bytes\n",
			(double) tiered / (double) plain);
	CHECK(tiered * 3 <= plain * 2);
	test_tombstone();
	return test_finish("test_l0_tier");
}
