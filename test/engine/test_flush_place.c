/*
 * test_flush_place.c -- a flush places the keys above every key their tree
 * has in the files into files below level 0 (db/flush_place.h).
 *
 * Two loads, each run with range_prefix_len 8 (the trees are the keys'
 * first 8 bytes) and with 0 (no placement), level 0 tiered for odd seeds,
 * uncompressed or LZ4 by seed:
 *
 *   append  tree 1 and tree 3 filled in key order, tree 2 put and deleted
 *           at random (its keys fall among the ones it has: never placed);
 *   queue   the same, but tree 1 is a short queue: its lowest rows are
 *           deleted as it grows, and rows in between updated.
 *
 * A snapshot is taken halfway.  Memtables are flushed and compacted as
 * they fill.  Every row reads as the oracle says (point reads and a
 * whole-store iterator, in key order) during the load, at the snapshot after
 * it, after a full compaction and after a crash, and tides_verify finds
 * every level sound (levels 1 and below sorted and disjoint) each time.
 * Once the load's work is done, no run of small placed files that
 * compaction_small.c would merge is left (the placed files of a 64 KB
 * memtable are a fraction of the 128 KB target: without those merges
 * tree 1 ended as a run of 86 to 125 of them).
 * With placement, flushes placed files (flush_placed_files) holding at least
 * a third of what flushes wrote, and on the append load compaction wrote less
 * than without.  On the queue load it may write more (tree 1's rows, placed
 * at the bottom, are deleted young and their deletions must go down to them):
 * the figures are printed, not asserted.
 */
#include "harness.h"
#include "db/compaction.h"
#include "db/db_impl.h"

#define KB (1ull << 10)
#define MB (1ull << 20)
#define VLEN 60
#define ROWS 24000
#define TREES 3
#define OPS 90000

static uint32_t ver[TREES + 1][ROWS];	/* newest version of a row; 0: none or deleted */
static uint32_t snapver[TREES + 1][ROWS];

static void
put(tides_batch *b, uint32_t tree, uint32_t row)
{
	uint8_t		k[H_ROW_KEY_LEN],
				v[VLEN];

	h_row_key(k, tree, row);
	h_row_value(v, VLEN, tree, row, ++ver[tree][row]);
	CHECK_OK(tides_batch_put(b, k, sizeof(k), v, VLEN));
}

static void
del(tides_batch *b, uint32_t tree, uint32_t row)
{
	uint8_t		k[H_ROW_KEY_LEN];

	h_row_key(k, tree, row);
	CHECK_OK(tides_batch_delete(b, k, sizeof(k)));
	ver[tree][row] = 0;
}

/* every row by point reads, then the whole store by one iterator */
static bool
reads_all(tides_db *db, const tides_snapshot *snap, uint32_t want[TREES + 1][ROWS], const char *when)
{
	uint8_t		k[H_ROW_KEY_LEN],
				v[VLEN];
	void	   *got = NULL;
	size_t		n = 0;
	uint64_t	live = 0,
				seen = 0;
	tides_iter_options io = {0};
	tides_iter *it;
	bool		ok = true;

	for (uint32_t t = 1; t <= TREES && ok; t++)
		for (uint32_t row = 0; row < ROWS && ok; row++)
		{
			tides_status s;

			h_row_key(k, t, row);
			s = tides_get(db, snap, k, sizeof(k), &got, &n);
			if (want[t][row] == 0)
				ok = s == TIDES_NOT_FOUND;
			else
			{
				live++;
				h_row_value(v, VLEN, t, row, want[t][row]);
				ok = s == TIDES_OK && n == VLEN && memcmp(got, v, VLEN) == 0;
			}
			if (!ok)
				fprintf(stderr, "test_flush_place: %s: tree %u row %u: %s, want version %u\n",
						when, t, row, tides_status_name(s), want[t][row]);
			free(got);
			got = NULL;
		}
	io.snap = snap;
	io.fill_cache = true;
	it = tides_iter_new(db, &io);
	for (tides_iter_first(it); ok && tides_iter_valid(it); tides_iter_next(it))
	{
		size_t		kl,
					vl;
		const uint8_t *ik = tides_iter_key(it, &kl);
		const uint8_t *iv = tides_iter_value(it, &vl);
		uint32_t	t,
					row;

		ok = kl == H_ROW_KEY_LEN;
		if (!ok)
			break;
		t = (uint32_t) tides_get_be64(ik);
		row = ((uint32_t) ik[8] << 24) | ((uint32_t) ik[9] << 16) | ((uint32_t) ik[10] << 8) | ik[11];
		ok = t >= 1 && t <= TREES && row < ROWS && want[t][row] != 0 && vl == VLEN;
		if (ok)
		{
			h_row_value(v, VLEN, t, row, want[t][row]);
			ok = memcmp(iv, v, VLEN) == 0;
		}
		if (!ok)
			fprintf(stderr, "test_flush_place: %s: the iterator shows tree %u row %u, not the oracle's\n",
					when, t, row);
		seen++;
	}
	ok = ok && tides_iter_status(it) == TIDES_OK && seen == live;
	if (!ok)
		fprintf(stderr, "test_flush_place: %s: the iterator saw %llu rows of %llu\n", when,
				(unsigned long long) seen, (unsigned long long) live);
	tides_iter_free(it);
	return ok;
}

static void
sound(tides_db *db, const char *when)
{
	int			quiet = 0;

	if (tides_verify(db, report_problem, &quiet) != 0)
	{
		fprintf(stderr, "test_flush_place: %s: tides_verify found problems\n", when);
		test_failures++;
	}
}

/*
 * Files below level 0 and their longest run of consecutive files of one
 * tree smaller than a quarter of the target size, at the bottom of their
 * range: compaction_small.c merges such runs once they hold a quarter of
 * the target or 32 files, so with no work left none is that long.
 */
static void
small_files(tides_db *db, uint32_t prefix, uint32_t *files, uint32_t *longest, uint64_t *longest_bytes)
{
	tides_shared *sh = db->sh;
	tides_version *v;

	*files = *longest = 0;
	*longest_bytes = 0;
	tides_lock_version(sh);
	v = sh->current;
	for (int l = 1; l < TIDES_MAX_LEVELS; l++)
	{
		uint32_t	run = 0;
		uint64_t	bytes = 0;

		*files += v->nfiles[l];
		for (uint32_t i = 0; i < v->nfiles[l]; i++)
		{
			tides_file_meta *f = v->files[l][i];
			const uint8_t *lo = tides_file_smallest(f);
			bool		small = f->size < db->opts.target_file_size / 4 &&
				memcmp(lo, tides_file_largest(f), prefix) == 0 &&
				!tides_compaction_deeper_data(sh, v, l, f);

			if (small && run > 0 && memcmp(lo, tides_file_smallest(v->files[l][i - 1]), prefix) == 0)
			{
				run++;
				bytes += f->size;
			}
			else
			{
				run = small;
				bytes = small ? f->size : 0;
			}
			if (run > *longest)
			{
				*longest = run;
				*longest_bytes = bytes;
			}
		}
	}
	tides_mutex_unlock(&sh->version_mutex);
}

static void
store_opts(store *st, uint32_t prefix, const char *tag)
{
	memset(st, 0, sizeof(*st));
	tides_options_default(&st->opts);
	st->opts.memtable_size = 64 * KB;
	st->opts.memtable_count = 4;
	st->opts.block_cache_size = 2 * MB;
	st->opts.meta_size = 4 * MB;
	st->opts.log_segment_size = 1 * MB;
	st->opts.compression = test_seed % 4 < 2 ? TIDES_COMPRESS_NONE : TIDES_COMPRESS_LZ4;
	st->opts.sync_mode = TIDES_SYNC_NONE;
	st->opts.target_file_size = 128 * KB;
	st->opts.level_base_size = 256 * KB;
	st->opts.level_size_ratio = 4;
	st->opts.level0_compaction_trigger = 4;
	st->opts.level0_slowdown_trigger = 100;
	st->opts.level0_stop_trigger = 200;
	st->opts.delayed_write_rate = 0;
	st->opts.level0_tiered = test_seed % 2 == 1;
	st->opts.range_prefix_len = prefix;
	st->dir = test_tmpdir(tag);
}

/* a load (queue: tree 1 is a short queue); returns the engine's counters at its end */
static tides_stats
load(uint32_t prefix, bool queue)
{
	store		st;
	tides_batch *b = tides_batch_new();
	tides_snapshot snap;
	tides_stats ss;
	tides_rand	rnd;
	uint32_t	head = 0,
				tail = 0,
				next3 = 0;
	bool		have_snap = false;
	char		when[64];

	memset(ver, 0, sizeof(ver));
	memset(&snap, 0, sizeof(snap));
	tides_rand_seed(&rnd, test_seed * 31 + 5);
	store_opts(&st, prefix, queue ? "queue" : "append");
	CHECK_OK(store_open(&st));
	for (uint32_t op = 1; op <= OPS; op++)
	{
		uint32_t	pick = (uint32_t) tides_rand_uniform(&rnd, 8);

		if (pick < 3 && tail < ROWS)
			put(b, 1, tail++);
		else if (queue && pick == 3 && tail - head > 3000)
			del(b, 1, head++);
		else if (queue && pick == 4 && tail > head)
			put(b, 1, head + (uint32_t) tides_rand_uniform(&rnd, tail - head));
		else if (pick == 5)
		{
			uint32_t	row = (uint32_t) tides_rand_uniform(&rnd, ROWS);

			if (tides_rand_uniform(&rnd, 4) == 0)
				del(b, 2, row);
			else
				put(b, 2, row);
		}
		else if (next3 < ROWS)
			put(b, 3, next3++);
		if (tides_batch_count(b) >= 8)
			h_write_through(st.db, b);
		if (op % 2000 == 0)
			CHECK_OK(drain(st.db));
		if (op == OPS / 2)
		{
			h_write_through(st.db, b);
			CHECK_OK(tides_snapshot_acquire(st.db, &snap));
			memcpy(snapver, ver, sizeof(ver));
			have_snap = true;
		}
		if (op % 30000 == 0)
		{
			h_write_through(st.db, b);
			snprintf(when, sizeof(when), "%s, prefix %u, op %u", queue ? "queue" : "append", prefix, op);
			CHECK(reads_all(st.db, NULL, ver, when));
			sound(st.db, when);
		}
	}
	h_write_through(st.db, b);
	h_seal_and_flush(st.db);
	CHECK_OK(drain(st.db));
	snprintf(when, sizeof(when), "%s, prefix %u, after the load", queue ? "queue" : "append", prefix);
	CHECK(reads_all(st.db, NULL, ver, when));
	CHECK(have_snap && reads_all(st.db, &snap, snapver, "at the snapshot"));
	sound(st.db, when);
	{
		uint32_t	files,
					longest;
		uint64_t	bytes;

		small_files(st.db, prefix, &files, &longest, &bytes);
		fprintf(stderr, "test_flush_place: %s: %u files below level 0, longest run of small files %u (%llu bytes)\n",
				when, files, longest, (unsigned long long) bytes);
		CHECK(longest < 32 && (longest < 2 || bytes < st.opts.target_file_size / 4));
	}
	tides_snapshot_release(st.db, &snap);
	tides_get_stats(st.db, &ss);
	h_compact_full(st.db);
	CHECK(reads_all(st.db, NULL, ver, "after a full compaction"));
	sound(st.db, "after a full compaction");
	store_crash(&st);
	CHECK_OK(store_open(&st));
	CHECK(reads_all(st.db, NULL, ver, "after a crash"));
	sound(st.db, "after a crash");
	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(st.dir);
	else
		fprintf(stderr, "test_flush_place: store kept in %s\n", st.dir);
	free(st.dir);
	tides_batch_free(b);
	return ss;
}

static void
report(const char *name, const tides_stats *with, const tides_stats *without)
{
	fprintf(stderr, "test_flush_place: %s: placed %llu files, %llu of %llu bytes flushed; "
			"compaction wrote %llu bytes (without placement %llu)\n", name,
			(unsigned long long) with->flush_placed_files, (unsigned long long) with->flush_placed_bytes,
			(unsigned long long) with->flush_bytes_written,
			(unsigned long long) with->compaction_bytes_written,
			(unsigned long long) without->compaction_bytes_written);
	CHECK(with->flush_placed_files > 0);
	CHECK(with->flush_placed_bytes * 3 >= with->flush_bytes_written);
	CHECK(without->flush_placed_files == 0 && without->flush_placed_bytes == 0);
}

int
main(int argc, char **argv)
{
	tides_stats with,
				without;

	test_init(argc, argv);
	with = load(8, false);
	without = load(0, false);
	report("append", &with, &without);
	CHECK(with.compaction_bytes_written < without.compaction_bytes_written);
	with = load(8, true);
	without = load(0, true);
	report("queue", &with, &without);
	return test_finish("test_flush_place");
}
