/*
 * test_stats.c -- the counters and shapes the engine reports for
 * monitoring (the extension's tides_engine_stats, tides_levels,
 * tides_compactions and tides_relations views read these):
 *
 *   - flush and compaction entry counts; compaction entries read;
 *   - bloom filter probes: checked >= useful, both moving on absent keys;
 *     none for gets in the last level, where keys are found right without;
 *   - this process's block I/O (tides_get_process_io) agrees with the
 *     shared cache and read counters in a one-process run;
 *   - stalls: a write refused with TIDES_BUSY counts once however often it
 *     is retried, and the time until it succeeds goes to stall_us;
 *   - tides_set_compression: the next flush writes with the new setting
 *     (uncompressed output is several times the lz4 output); bad values
 *     are refused; tides_set_bottommost_compression: a compaction into the
 *     last level writes with it (none: the rows come out whole);
 *   - tides_get_level_info: files, bytes, scores and pending bytes before
 *     and after level 0 is compacted; bytes agree with tides_get_stats;
 *   - tides_get_compactions, seen from inside a running compaction (test
 *     point "compaction.progress"): this process, the input level, input
 *     figures, progress that only grows; nothing once it is done;
 *   - tides_get_range_info: bytes, entries and deletions of one tree of two
 *     sharing files, and the flush / compaction times;
 *   - tides_estimate_size of rows in a memtable written through several
 *     handles: each handle reserves a piece of the arena for its batches
 *     (db/write.c), and the unfilled rest must not count as rows (a
 *     planner would see a small table grow with the backends that wrote).
 */
#include "harness.h"

#include <time.h>

#include "util/testpoint.h"

static store st;

static void
opts(tides_options *o)
{
	tides_options_default(o);
	o->memtable_size = 256 << 10;
	o->memtable_count = 2;
	o->block_cache_size = 4 << 20;
	o->meta_size = 2 << 20;
	o->max_open_tags = 16;
	o->log_segment_size = 1 << 20;
	o->target_file_size = 1 << 20;
	o->level_base_size = 1 << 20;
	o->level0_compaction_trigger = 4;
	o->sync_mode = TIDES_SYNC_NONE;
}

/* keys: 8-byte tree id, 8-byte row number (as the extension's, roughly) */
static size_t
key_of(uint8_t *k, uint64_t tree, uint64_t row)
{
	for (int i = 7; i >= 0; i--)
	{
		k[i] = (uint8_t) tree;
		k[8 + i] = (uint8_t) row;
		tree >>= 8;
		row >>= 8;
	}
	return 16;
}

static tides_status
put_rows(uint64_t tree, uint64_t from, uint64_t n, char fill, bool del)
{
	tides_batch *b = tides_batch_new();
	char		v[200];
	uint8_t		k[16];
	tides_status s = TIDES_OK;

	memset(v, fill, sizeof(v));
	for (uint64_t i = from; i < from + n && s == TIDES_OK; i++)
	{
		size_t		kl = key_of(k, tree, i);

		/* a row number in the value, so that values differ a little */
		snprintf(v, 16, "%015llu", (unsigned long long) i % 1000000);
		v[15] = fill;
		if (del)
			CHECK_OK(tides_batch_delete(b, k, kl));
		else
			CHECK_OK(tides_batch_put(b, k, kl, v, sizeof(v)));
		if (tides_batch_count(b) == 100 || i + 1 == from + n)
		{
			while ((s = tides_write(st.db, b, NULL)) == TIDES_BUSY)
				drain(st.db);
			tides_batch_clear(b);
		}
	}
	tides_batch_free(b);
	return s;
}

static void
flush_all(void)
{
	bool		did;

	CHECK_OK(tides_seal_memtable(st.db));
	do
		CHECK_OK(tides_flush_work(st.db, &did));
	while (did);
}

static tides_stats
stats(void)
{
	tides_stats s;

	tides_get_stats(st.db, &s);
	return s;
}

/* ---- progress seen from inside a compaction */

static int	progress_calls;
static int	progress_bad;
static tides_compaction_info seen;

static void
progress_hook(const char *point, void *db)
{
	tides_compaction_info ci[4];
	int			n;

	if (strcmp(point, "compaction.progress") != 0)
		return;
	n = tides_get_compactions(st.db, ci, 4);
	progress_calls++;
	if (n != 1 || ci[0].pid != (int32_t) getpid() || ci[0].level != 0 ||
		ci[0].input_entries == 0 || ci[0].input_bytes == 0 || ci[0].input_files < 4 ||
		ci[0].entries_read < seen.entries_read || ci[0].entries_read > ci[0].input_entries ||
		ci[0].bytes_written < seen.bytes_written || ci[0].entries_written > ci[0].entries_read)
	{
		progress_bad++;
		fprintf(stderr, "progress: n=%d pid=%d level=%d in=%u/%llu/%llu read=%llu written=%llu/%llu\n",
				n, n > 0 ? ci[0].pid : 0, n > 0 ? ci[0].level : -1,
				n > 0 ? ci[0].input_files : 0,
				n > 0 ? (unsigned long long) ci[0].input_bytes : 0,
				n > 0 ? (unsigned long long) ci[0].input_entries : 0,
				n > 0 ? (unsigned long long) ci[0].entries_read : 0,
				n > 0 ? (unsigned long long) ci[0].entries_written : 0,
				n > 0 ? (unsigned long long) ci[0].bytes_written : 0);
	}
	if (n > 0)
		seen = ci[0];
}

static uint64_t
wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

/*
 * gets of rows 0..199 of tree (written by put_rows with fill) and of a key
 * between each and the next: the row is found with its value, the other not
 */
static void
gets_of_rows(uint64_t tree, char fill)
{
	for (uint64_t i = 0; i < 200; i++)
	{
		uint8_t		k[17];
		void	   *v = NULL;
		size_t		vl;
		size_t		kl = key_of(k, tree, i) + 1;	/* absent, between rows i and i + 1 */

		k[16] = 1;
		CHECK(tides_get(st.db, NULL, k, kl, &v, &vl) == TIDES_NOT_FOUND);
		kl = key_of(k, tree, i);
		CHECK_OK(tides_get(st.db, NULL, k, kl, &v, &vl));
		CHECK(vl == 200 && ((const char *) v)[15] == fill && strtoull((const char *) v, NULL, 10) == i);
		free(v);
	}
}

/* a row of tree 41 through each of four handles into an empty memtable */
static void
estimate_with_writers(void)
{
	tides_db   *dbs[4] = {st.db};
	uint8_t		lo[16],
				hi[16];
	uint64_t	exact,
				estimate;

	CHECK_OK(drain(st.db));
	flush_all();
	for (int i = 1; i < 4; i++)
		CHECK_OK(tides_open(st.region, st.dir, &st.opts, NULL, false, NULL, &dbs[i]));
	for (int i = 0; i < 4; i++)
	{
		tides_db   *own = st.db;

		st.db = dbs[i];
		CHECK_OK(put_rows(41, (uint64_t) i, 1, 'h', false));
		st.db = own;
	}
	key_of(lo, 41, 0);
	key_of(hi, 42, 0);
	exact = tides_approximate_size(st.db, lo, 16, hi, 16);
	estimate = tides_estimate_size(st.db, lo, 16, hi, 16);
	CHECK(exact == 4 * (16 + 8 + 200));
	/* the estimate counts nodes and index headers too, not the pieces' rest */
	if (!(estimate >= exact && estimate < exact * 3 / 2))
	{
		test_failures++;
		fprintf(stderr, "estimate of 4 rows in a memtable: %llu bytes (walked: %llu)\n",
				(unsigned long long) estimate, (unsigned long long) exact);
	}
	for (int i = 1; i < 4; i++)
		tides_close(dbs[i]);
}

/* in the last level a get asks no filter (db/read.c), and still finds right */
static void
last_level_gets(void)
{
	tides_full_compaction fc;
	bool		done = false,
				did;
	tides_stats s0,
				s1;

	CHECK_OK(put_rows(30, 0, 500, 'g', false));
	tides_full_compaction_begin(st.db, &fc);
	for (int i = 0; i < 10000 && !done; i++)
		CHECK_OK(tides_full_compaction_step(st.db, &fc, &done, &did));
	CHECK(done);
	s0 = stats();
	CHECK(s0.level_files[TIDES_MAX_LEVELS - 1] > 0 && s0.level_files[0] == 0);
	gets_of_rows(30, 'g');
	s1 = stats();
	CHECK(s1.bloom_checked == s0.bloom_checked);
}

int
main(int argc, char **argv)
{
	tides_stats s0,
				s1;
	tides_io_stats io0,
				io1;
	tides_level_info li[TIDES_MAX_LEVELS];
	tides_range_info ri;
	uint8_t		lo[16],
				hi[16];
	uint64_t	t_start;
	int			base;

	test_init(argc, argv);
	memset(&st, 0, sizeof(st));
	opts(&st.opts);
	st.dir = fast_tmpdir("stats");
	CHECK_OK(store_open(&st));
	t_start = wall_us();

	/* ---- flush: entries written */
	s0 = stats();
	CHECK_OK(put_rows(16, 0, 500, 'a', false));
	flush_all();
	s1 = stats();
	CHECK(s1.flushes == s0.flushes + 1);
	CHECK(s1.flush_entries_written - s0.flush_entries_written == 500);
	CHECK(s1.keys_written - s0.keys_written == 500);
	CHECK(s1.memtable_count == 2 && s1.memtable_size == 256 << 10);

	/* ---- bloom filters and this process's I/O */
	s0 = stats();
	tides_get_process_io(&io0);
	gets_of_rows(16, 'a');
	s1 = stats();
	tides_get_process_io(&io1);
	CHECK(s1.bloom_checked - s0.bloom_checked >= 400);
	CHECK(s1.bloom_useful - s0.bloom_useful > 150);
	CHECK(s1.bloom_useful - s0.bloom_useful <= s1.bloom_checked - s0.bloom_checked);
	CHECK(io1.cache_hits - io0.cache_hits == s1.cache_hits - s0.cache_hits);
	CHECK(io1.bytes_read - io0.bytes_read == s1.bytes_read - s0.bytes_read);
	CHECK(io1.cache_hits + io1.blocks_read - io0.cache_hits - io0.blocks_read >= 200);
	CHECK(io1.blocks_read > io0.blocks_read);	/* the first reads of each block */

	/* ---- compression: a reload of the setting reaches the next flush */
	CHECK(tides_set_compression(st.db, (tides_compression) 7, 3) == TIDES_INVALID);
	CHECK(tides_set_compression(st.db, TIDES_COMPRESS_ZSTD, 0) == TIDES_INVALID);
	CHECK(tides_set_compression(st.db, TIDES_COMPRESS_ZSTD, 23) == TIDES_INVALID);
	CHECK(tides_set_compression(st.db, TIDES_COMPRESS_ZSTD, TIDES_ZSTD_FASTEST - 1) == TIDES_INVALID);
	CHECK_OK(tides_set_compression(st.db, TIDES_COMPRESS_ZSTD, TIDES_ZSTD_FASTEST));
	CHECK(tides_set_bottommost_compression(st.db, TIDES_COMPRESS_ZSTD, 0) == TIDES_INVALID);
	CHECK_OK(tides_set_compression(st.db, TIDES_COMPRESS_NONE, 3));
	s0 = stats();
	CHECK_OK(put_rows(17, 0, 500, 'b', false));
	flush_all();
	s1 = stats();
	{
		uint64_t	plain = s1.flush_bytes_written - s0.flush_bytes_written;
		uint64_t	packed;

		CHECK_OK(tides_set_compression(st.db, TIDES_COMPRESS_LZ4, 3));
		s0 = s1;
		CHECK_OK(put_rows(18, 0, 500, 'c', false));
		flush_all();
		s1 = stats();
		packed = s1.flush_bytes_written - s0.flush_bytes_written;
		/* and the deletions of tree 16: the fourth level-0 file */
		CHECK_OK(put_rows(16, 0, 500, 'x', true));
		flush_all();
		if (!(plain > 500 * 200 && packed * 3 < plain))
		{
			test_failures++;
			fprintf(stderr, "compression: uncompressed flush %llu bytes, lz4 flush %llu bytes\n",
					(unsigned long long) plain, (unsigned long long) packed);
		}
	}

	/* ---- levels: 4 level-0 files reach the trigger */
	base = tides_get_level_info(st.db, li);
	CHECK(li[0].files == 4);
	CHECK(li[0].score == 1.0);
	CHECK(li[0].pending_bytes >= li[0].bytes && li[0].bytes > 0);
	CHECK(li[0].entries == 2000 && li[0].deletions == 500);
	CHECK(li[0].target_bytes == 0);
	CHECK(base == TIDES_MAX_LEVELS - 1);
	CHECK(li[base].target_bytes == st.opts.level_base_size);
	s1 = stats();
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		CHECK(li[l].bytes == s1.level_bytes[l] && li[l].files == s1.level_files[l]);

	/* ---- range info before any compaction: tree 16 has two files of its own */
	key_of(lo, 16, 0);
	key_of(hi, 17, 0);
	tides_get_range_info(st.db, lo, 16, hi, 16, &ri);
	CHECK(ri.level_files[0] == 2);	/* its rows, and their deletions */
	CHECK(ri.entries == 1000 && ri.deletions == 500);
	CHECK(ri.flushed_us >= t_start && ri.flushed_us <= wall_us());
	CHECK(ri.compacted_us == 0);
	CHECK(ri.memtable_bytes == 0);

	/*
	 * ---- a compaction, watched from inside.  Its output goes to the last
	 * level, written with the bottommost compression (none here, while
	 * flushes keep lz4): the 1000 rows of 200 bytes come out whole.
	 */
	CHECK(tides_set_bottommost_compression(st.db, (tides_compression) 7, 3) == TIDES_INVALID);
	CHECK(tides_set_bottommost_compression(st.db, TIDES_COMPRESS_ZSTD, 23) == TIDES_INVALID);
	CHECK_OK(tides_set_bottommost_compression(st.db, TIDES_COMPRESS_NONE, 3));
	tides_test_point_hook = progress_hook;
	s0 = stats();
	{
		bool		did;

		CHECK_OK(tides_compact_work(st.db, &did));
		CHECK(did);
	}
	tides_test_point_hook = NULL;
	s1 = stats();
	CHECK(progress_calls >= 1);
	CHECK(progress_bad == 0);
	CHECK(seen.input_entries == 2000);
	CHECK(seen.started_us >= t_start && seen.started_us <= wall_us());
	CHECK(s1.compactions == s0.compactions + 1);
	CHECK(s1.compaction_entries_read - s0.compaction_entries_read == 2000);
	/* the 500 deletions at the bottom take their 500 keys with them */
	CHECK(s1.compaction_entries_written - s0.compaction_entries_written == 1000);
	CHECK(s1.compactions_running == 0);
	{
		tides_compaction_info ci[4];

		CHECK(tides_get_compactions(st.db, ci, 4) == 0);
	}
	tides_get_level_info(st.db, li);
	CHECK(li[0].files == 0 && li[0].score == 0 && li[0].pending_bytes == 0);
	CHECK(li[TIDES_MAX_LEVELS - 1].entries == 1000);
	CHECK(li[TIDES_MAX_LEVELS - 1].bytes > 1000 * 200);	/* uncompressed */
	CHECK_OK(tides_set_bottommost_compression(st.db, TIDES_COMPRESS_LZ4, 3));

	/* ---- range info after it: tree 17 and 18 share the output file */
	key_of(lo, 17, 0);
	key_of(hi, 18, 0);
	tides_get_range_info(st.db, lo, 16, hi, 16, &ri);
	CHECK(ri.level_files[TIDES_MAX_LEVELS - 1] == 1);
	CHECK(ri.level_bytes[TIDES_MAX_LEVELS - 1] > 0 &&
		  ri.level_bytes[TIDES_MAX_LEVELS - 1] < li[TIDES_MAX_LEVELS - 1].bytes);
	CHECK(ri.entries > 350 && ri.entries < 650);	/* half the file's 1000, prorated by bytes */
	CHECK(ri.compacted_us >= seen.started_us);
	CHECK(ri.flushed_us == 0);
	key_of(lo, 16, 0);
	key_of(hi, 17, 0);
	tides_get_range_info(st.db, lo, 16, hi, 16, &ri);
	CHECK(ri.entries == 0 && ri.level_bytes[TIDES_MAX_LEVELS - 1] == 0);

	/* ---- stalls: both memtables full, nobody flushing */
	CHECK_OK(put_rows(19, 0, 50, 'd', false));
	CHECK_OK(tides_seal_memtable(st.db));
	s0 = stats();
	{
		tides_batch *b = tides_batch_new();
		char		big[100 << 10];
		uint8_t		k[16];
		tides_status s = TIDES_OK;
		int			busy = 0;

		memset(big, 'e', sizeof(big));
		/* fill the active memtable until a write is refused, then retry */
		for (int i = 0; i < 100 && busy < 5; i++)
		{
			tides_batch_clear(b);
			CHECK_OK(tides_batch_put(b, k, key_of(k, 20, i), big, sizeof(big)));
			while ((s = tides_write(st.db, b, NULL)) == TIDES_BUSY && ++busy < 5)
				usleep(10000);
			if (s == TIDES_BUSY)
				break;
		}
		CHECK(s == TIDES_BUSY && busy == 5);
		s1 = stats();
		CHECK(s1.stall_count == s0.stall_count + 1);
		CHECK(s1.stall_us == s0.stall_us);	/* still waiting */
		CHECK_OK(drain(st.db));
		CHECK_OK(tides_write(st.db, b, NULL));
		s1 = stats();
		CHECK(s1.stall_count == s0.stall_count + 1);
		CHECK(s1.stall_us - s0.stall_us >= 40000);
		tides_batch_free(b);
	}

	last_level_gets();
	estimate_with_writers();

	tides_close(st.db);
	test_shared_free(st.region, st.size);
	test_rmdir(st.dir);
	return test_finish("test_stats");
}
