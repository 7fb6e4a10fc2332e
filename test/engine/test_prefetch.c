/*
 * test_prefetch.c -- tides_prefetch and tides_prefetch_stems ask only for
 * blocks that the gets and seeks after them read, and for nearly all of
 * those.
 *
 * The store holds rows of one tree (200-byte incompressible values, about
 * twenty to a block) in the last level; some rows rewritten into level 0,
 * some deleted there, some new ones in level 0 and in the memtable.  A
 * vfs over POSIX records every will_need and every pread.  Per round: 64
 * random keys (rows in the last level, rewritten, deleted, in the
 * memtable, never written but inside the files' ranges, beyond every
 * file), then
 *
 *   asked      tides_prefetch's count equals the will_need calls made, and
 *              blocks_prefetched moves by it;
 *   exact      the gets of the same keys that follow, one by one, read from
 *              the files every block that was asked for (descriptor and
 *              offset: nothing asked in vain); a get of a row rewritten in
 *              level 0 reads only blocks asked for, others rarely read one
 *              not asked for (a filter's false positive above the table
 *              holding the key, an absent key's next block); every get
 *              returns what the oracle says;
 *   cached     the same keys prefetched again ask for nothing (every block
 *              is in the block cache now), nor do keys in the memtable;
 *   stems      index-like entries (stem || 6-byte suffix, the suffix
 *              changing with each version) in the last level, rewritten in
 *              level 0, new in level 0 and the memtable, with gaps:
 *              tides_prefetch_stems asks only for blocks the stem seeks
 *              that follow read, a seek rarely reads one not asked for,
 *              every seek finds exactly the live entry, and the same stems
 *              again ask for nothing;
 *   no hint    with a vfs that offers no will_need, tides_prefetch asks for
 *              nothing and the gets still read right.
 */
#include "harness.h"

#define NROWS 20000
#define VLEN 200
#define NKEYS 64
#define ROUNDS 12
#define MAX_CALLS 4096

typedef struct io_call
{
	int			fd;
	uint64_t	off;
} io_call;

static store st;
static tides_vfs rec_vfs;
static io_call hints[MAX_CALLS];
static int	nhints;
static io_call reads[MAX_CALLS];
static int	nreads;
static int	reading = -1;		/* the key whose get is reading (check_gets) */
static int	read_by[MAX_CALLS];
static uint32_t version[NROWS + 1000];	/* 0: absent */

static int64_t
rec_pread(tides_vfs *v, int fd, void *buf, size_t n, uint64_t off)
{
	(void) v;
	if (nreads < MAX_CALLS)
	{
		read_by[nreads] = reading;
		reads[nreads++] = (io_call) {fd, off};
	}
	return tides_vfs_posix()->pread(tides_vfs_posix(), fd, buf, n, off);
}

static void
rec_will_need(tides_vfs *v, int fd, uint64_t off, uint64_t len)
{
	(void) v;
	CHECK(len > 0);
	if (nhints < MAX_CALLS)
		hints[nhints++] = (io_call) {fd, off};
}

static int
call_cmp(const void *a, const void *b)
{
	const io_call *x = a,
			   *y = b;

	if (x->fd != y->fd)
		return x->fd < y->fd ? -1 : 1;
	return x->off < y->off ? -1 : (x->off > y->off ? 1 : 0);
}

/* sort and drop repeats; the count left */
static int
as_set(io_call *c, int n)
{
	int			w = 0;

	qsort(c, n, sizeof(*c), call_cmp);
	for (int i = 0; i < n; i++)
		if (w == 0 || call_cmp(&c[w - 1], &c[i]) != 0)
			c[w++] = c[i];
	return w;
}

static void
put_rows(uint32_t from, uint32_t to, uint32_t step, uint32_t ver)
{
	tides_batch *b = tides_batch_new();
	uint8_t		k[H_ROW_KEY_LEN],
				v[VLEN];

	for (uint32_t r = from; r < to; r += step)
	{
		h_row_key(k, 1, r);
		h_row_value(v, VLEN, 1, r, ver);
		CHECK_OK(tides_batch_put(b, k, sizeof(k), v, VLEN));
		version[r] = ver;
		if (tides_batch_count(b) >= 200)
			h_write_through(st.db, b);
	}
	h_write_through(st.db, b);
	tides_batch_free(b);
}

static void
delete_rows(uint32_t from, uint32_t to, uint32_t step)
{
	tides_batch *b = tides_batch_new();
	uint8_t		k[H_ROW_KEY_LEN];

	for (uint32_t r = from; r < to; r += step)
	{
		h_row_key(k, 1, r);
		CHECK_OK(tides_batch_delete(b, k, sizeof(k)));
		version[r] = 0;
	}
	h_write_through(st.db, b);
	tides_batch_free(b);
}

/* the keys of a round: every kind of row, some twice */
static void
pick(tides_rand *r, uint32_t *rows)
{
	for (int i = 0; i < NKEYS; i++)
	{
		switch (tides_rand_uniform(r, 6))
		{
			case 0:				/* in the memtable */
				rows[i] = NROWS + 500 + (uint32_t) tides_rand_uniform(r, 100);
				break;
			case 1:				/* rewritten or deleted in level 0 */
				rows[i] = (uint32_t) tides_rand_uniform(r, NROWS / 10) * 10 + 3;
				break;
			case 2:				/* beyond every file */
				rows[i] = NROWS + 800 + (uint32_t) tides_rand_uniform(r, 100);
				break;
			case 3:				/* the one before: twice in a round */
				rows[i] = i > 0 ? rows[i - 1] : 7;
				break;
			default:			/* the last level, some never written */
				rows[i] = (uint32_t) tides_rand_uniform(r, NROWS);
		}
	}
}

static void
check_gets(const uint32_t *rows)
{
	uint8_t		k[H_ROW_KEY_LEN],
				want[VLEN];

	for (int i = 0; i < NKEYS; i++)
	{
		void	   *v = NULL;
		size_t		vl = 0;
		tides_status s;

		h_row_key(k, 1, rows[i]);
		reading = i;
		s = tides_get(st.db, NULL, k, sizeof(k), &v, &vl);
		if (version[rows[i]] == 0)
			CHECK(s == TIDES_NOT_FOUND);
		else
		{
			h_row_value(want, VLEN, 1, rows[i], version[rows[i]]);
			CHECK(s == TIDES_OK && vl == VLEN && memcmp(v, want, VLEN) == 0);
		}
		free(v);
	}
	reading = -1;
}

static size_t
prefetch(const uint32_t *rows)
{
	uint8_t		keys[NKEYS][H_ROW_KEY_LEN];
	const void *ptrs[NKEYS];
	size_t		lens[NKEYS];

	for (int i = 0; i < NKEYS; i++)
	{
		h_row_key(keys[i], 1, rows[i]);
		ptrs[i] = keys[i];
		lens[i] = H_ROW_KEY_LEN;
	}
	return tides_prefetch(st.db, ptrs, lens, NKEYS);
}

/* is every call in a (a set) also in b (a set)? */
static bool
subset(const io_call *a, int na, const io_call *b, int nb)
{
	int			j = 0;

	for (int i = 0; i < na; i++)
	{
		while (j < nb && call_cmp(&b[j], &a[i]) < 0)
			j++;
		if (j == nb || call_cmp(&b[j], &a[i]) != 0)
			return false;
	}
	return true;
}

static void
rounds(tides_rand *r)
{
	int			asked_total = 0,
				unasked = 0;

	for (int round = 0; round < ROUNDS; round++)
	{
		uint32_t	rows[NKEYS];
		uint64_t	before = h_stats(st.db).blocks_prefetched;
		size_t		asked;
		int			nh,
					nr;

		pick(r, rows);
		nhints = nreads = 0;
		asked = prefetch(rows);
		CHECK(asked == (size_t) nhints);
		CHECK(h_stats(st.db).blocks_prefetched - before == asked);
		nh = as_set(hints, nhints);
		nreads = 0;
		check_gets(rows);
		/*
		 * A get reads from the files a block that was not asked for only
		 * when it goes on past a table the prefetch stopped at: a filter
		 * let the key through a table above the one holding it (a false
		 * positive: the prefetch asked for that table's block and stopped
		 * there), or the key is absent and the first entry after it is in
		 * the next block.  Neither can happen to a row rewritten into level
		 * 0, which is the first table holding it: each of its gets' reads
		 * was asked for.
		 */
		for (int i = 0; i < nreads; i++)
		{
			bool		was_asked = subset(&reads[i], 1, hints, nh);

			CHECK(was_asked || version[rows[read_by[i]]] != 2);
			unasked += !was_asked;
		}
		nr = as_set(reads, nreads);
		/* and nothing was asked that no get read */
		CHECK(subset(hints, nh, reads, nr));
		asked_total += (int) asked;

		/* everything the gets read is cached now */
		nhints = 0;
		CHECK(prefetch(rows) == 0);
		CHECK(nhints == 0);
	}
	/* the rounds did ask for blocks (the keys are not all cached ones) */
	CHECK(asked_total > ROUNDS * 10);
	/* few gets read a block not asked for */
	CHECK(unasked <= ROUNDS * NKEYS / 16);
}

/* --------------------------------------------------------------- stems */

/*
 * Index-like entries of tree 2: stem (tree || 8-byte number) || a 6-byte
 * suffix that changes with the version (an index entry's row id), read by
 * stem seeks.  entver[n]: the live version (0: none).
 */
#define SUFFIX 6
#define NSTEMS 20000
static uint32_t entver[NSTEMS + 1000];

static size_t
entry_key(uint8_t *k, uint32_t n, uint32_t ver)
{
	tides_put_be64(k, 2);
	tides_put_be64(k + 8, n);
	for (int i = 0; i < SUFFIX; i++)
		k[16 + i] = (uint8_t) (n * 31 + ver * 7 + (uint32_t) i);
	return 16 + SUFFIX;
}

/* entries [from, to) by step at version ver, the older version's deleted */
static void
put_entries(uint32_t from, uint32_t to, uint32_t step, uint32_t ver)
{
	tides_batch *b = tides_batch_new();
	uint8_t		k[16 + SUFFIX],
				v[VLEN];

	for (uint32_t n = from; n < to; n += step)
	{
		if (entver[n] != 0)
			CHECK_OK(tides_batch_delete(b, k, entry_key(k, n, entver[n])));
		/* as large as a row: the entries span many blocks, as an index's do */
		h_row_value(v, VLEN, 2, n, ver);
		CHECK_OK(tides_batch_put(b, k, entry_key(k, n, ver), v, VLEN));
		entver[n] = ver;
		if (tides_batch_count(b) >= 200)
			h_write_through(st.db, b);
	}
	h_write_through(st.db, b);
	tides_batch_free(b);
}

static void
delete_entries(uint32_t from, uint32_t to)
{
	tides_batch *b = tides_batch_new();
	uint8_t		k[16 + SUFFIX];

	for (uint32_t n = from; n < to; n++)
		if (entver[n] != 0)
		{
			CHECK_OK(tides_batch_delete(b, k, entry_key(k, n, entver[n])));
			entver[n] = 0;
		}
	h_write_through(st.db, b);
	tides_batch_free(b);
}

static void
stem_rounds(tides_rand *r)
{
	int			asked_total = 0,
				unasked = 0;

	for (int round = 0; round < ROUNDS; round++)
	{
		uint32_t	ns[NKEYS];
		uint8_t		stems[NKEYS][16];
		const void *ptrs[NKEYS];
		size_t		lens[NKEYS];
		size_t		asked;
		int			nh,
					nr;

		pick(r, ns);			/* the same kinds of numbers as the rows' */
		for (int i = 0; i < NKEYS; i++)
		{
			tides_put_be64(stems[i], 2);
			tides_put_be64(stems[i] + 8, ns[i]);
			ptrs[i] = stems[i];
			lens[i] = 16;
		}
		nhints = 0;
		asked = tides_prefetch_stems(st.db, ptrs, lens, NKEYS);
		CHECK(asked == (size_t) nhints);
		nh = as_set(hints, nhints);
		nreads = 0;
		for (int i = 0; i < NKEYS; i++)
		{
			tides_iter_options io;
			tides_iter *it;
			uint8_t		want[16 + SUFFIX];
			bool		found = false;

			memset(&io, 0, sizeof(io));
			io.fill_cache = true;
			it = tides_iter_new(st.db, &io);
			reading = i;
			tides_iter_seek_stem(it, stems[i], 16);
			if (tides_iter_valid(it))
			{
				size_t		kl;
				const void *k = tides_iter_key(it, &kl);

				found = kl == 16 + SUFFIX && memcmp(k, stems[i], 16) == 0;
				if (found)
					CHECK(entver[ns[i]] != 0 &&
						  memcmp(k, want, entry_key(want, ns[i], entver[ns[i]])) == 0);
			}
			CHECK(found == (entver[ns[i]] != 0));
			CHECK_OK(tides_iter_status(it));
			tides_iter_free(it);
		}
		reading = -1;
		/* nothing asked that no seek read; a seek rarely reads a block not asked for */
		for (int i = 0; i < nreads; i++)
			unasked += !subset(&reads[i], 1, hints, nh);
		nr = as_set(reads, nreads);
		CHECK(subset(hints, nh, reads, nr));
		asked_total += (int) asked;
		nhints = 0;
		CHECK(tides_prefetch_stems(st.db, ptrs, lens, NKEYS) == 0);
	}
	CHECK(asked_total > ROUNDS * 10);
	CHECK(unasked <= ROUNDS * NKEYS / 16);
}

int
main(int argc, char **argv)
{
	tides_rand	r;

	test_init(argc, argv);
	tides_rand_seed(&r, test_seed);
	rec_vfs = *tides_vfs_posix();
	rec_vfs.pread = rec_pread;
	rec_vfs.will_need = rec_will_need;

	memset(&st, 0, sizeof(st));
	tides_options_default(&st.opts);
	st.opts.memtable_size = 1 << 20;
	st.opts.memtable_count = 4;
	st.opts.block_cache_size = 32 << 20;
	st.opts.meta_size = 4 << 20;
	st.opts.target_file_size = 512 << 10;
	st.opts.level_base_size = 1 << 20;
	st.opts.level0_compaction_trigger = 100;
	st.opts.level0_slowdown_trigger = 200;
	st.opts.level0_stop_trigger = 300;
	st.opts.delayed_write_rate = 0;
	st.opts.sync_mode = TIDES_SYNC_NONE;
	st.opts.compression = TIDES_COMPRESS_NONE;
	st.opts.bottommost_compression = TIDES_COMPRESS_NONE;
	st.opts.filter_stem_suffix = SUFFIX;
	st.dir = fast_tmpdir("prefetch");
	st.vfs = &rec_vfs;
	CHECK_OK(store_open(&st));

	/* the last level: every row but the odd thousands (gaps inside the files) */
	for (uint32_t t = 0; t < NROWS; t += 1000)
		if ((t / 1000) % 2 == 0 || t == 0)
			put_rows(t, t + 1000, 1, 1);
		else
			put_rows(t, t + 1000, 2, 1);
	put_entries(0, NSTEMS, 1, 1);
	for (uint32_t t = 1000; t < NSTEMS; t += 2000)
		delete_entries(t, t + 1000);
	h_seal_and_flush(st.db);
	h_compact_full(st.db);
	/* level 0: every tenth row (+3) rewritten or deleted, new rows past the end */
	put_rows(3, NROWS, 20, 2);
	delete_rows(13, NROWS, 20);
	put_rows(NROWS, NROWS + 500, 1, 1);
	put_entries(3, NSTEMS, 20, 2);
	put_entries(NSTEMS, NSTEMS + 500, 1, 1);
	h_seal_and_flush(st.db);
	/* the memtable */
	put_rows(NROWS + 500, NROWS + 600, 1, 1);
	put_entries(NSTEMS + 500, NSTEMS + 600, 1, 1);

	rounds(&r);
	stem_rounds(&r);

	/* a vfs without will_need: no hint, the same reads */
	tides_close(st.db);
	st.db = NULL;
	test_shared_free(st.region, st.size);
	rec_vfs.will_need = NULL;
	CHECK_OK(store_open(&st));
	{
		uint32_t	rows[NKEYS];

		pick(&r, rows);
		nhints = 0;
		CHECK(prefetch(rows) == 0);
		CHECK(nhints == 0);
		check_gets(rows);
	}
	tides_close(st.db);
	test_shared_free(st.region, st.size);
	test_rmdir(st.dir);
	return test_finish("test_prefetch");
}
