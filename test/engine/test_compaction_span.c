/*
 * test_compaction_span.c -- a level-0 compaction rewrites only the files of
 * the output level that its keys touch, not every file between its bounds.
 *
 * The shape is a table being loaded through the access method: rows of one
 * tree in ascending order, and in every memtable also one key of tree 0
 * (the access method's metadata, such as the row ids handed out) and one
 * overwrite of an earlier row.  Each level-0 file then spans from tree 0 to
 * the newest rows, over every file already on the last level.
 *
 *   load      40 memtables of ~2 MB, level-0 compactions as they come: the
 *             compactions write at most 2.5x the data (merging with every
 *             file in the span wrote 5.5x here), and some output-level
 *             files were left as they were; every row reads its newest
 *             version, the metadata key its last value, tides_verify finds
 *             the levels in order, and all of it again after a crash and
 *             recovery.
 *   partitioned  the same load without the overwrites, 8 MB output files
 *             and a partitioner that keeps tree 0 apart (as the access
 *             method installs): the metadata key gets a file of its own on
 *             the last level, and the compactions write at most 1.1x the
 *             data (the file the metadata key shared with rows was
 *             rewritten at every compaction without it).
 */
#include "harness.h"
#include "db/db_impl.h"

#define KEYLEN H_ROW_KEY_LEN
#define VLEN 1000
#define ROWS_PER_MEMTABLE 2000
#define MEMTABLES 40
#define ROWS (ROWS_PER_MEMTABLE * MEMTABLES)

static uint32_t version[ROWS];	/* newest version of each row, 0: never written */
static uint32_t meta_value;
static uint32_t batched;			/* entries in the batch being built */

static void
write_one(tides_db *db, tides_batch *b)
{
	h_write_through(db, b);
	batched = 0;
}

static void
put_row(tides_db *db, tides_batch *b, uint32_t row)
{
	uint8_t		k[KEYLEN],
				v[VLEN];

	h_row_key(k, 1, row);
	h_row_value(v, VLEN, 1, row, ++version[row]);
	CHECK_OK(tides_batch_put(b, k, KEYLEN, v, VLEN));
	if (++batched >= 64)
		write_one(db, b);
}

static void
put_meta(tides_db *db, tides_batch *b)
{
	uint8_t		k[KEYLEN];

	meta_value++;
	h_row_key(k, 0, 0x56000000);
	CHECK_OK(tides_batch_put(b, k, KEYLEN, &meta_value, sizeof(meta_value)));
	write_one(db, b);
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
		h_row_key(k, 1, row);
		h_row_value(want, VLEN, 1, row, version[row]);
		ok = tides_get(db, NULL, k, KEYLEN, &v, &n) == TIDES_OK && n == VLEN && memcmp(v, want, VLEN) == 0;
		if (!ok)
			fprintf(stderr, "test_compaction_span: %s: row %u does not read version %u\n", when, row,
					version[row]);
		free(v);
		v = NULL;
	}
	h_row_key(k, 0, 0x56000000);
	if (ok && (tides_get(db, NULL, k, KEYLEN, &v, &n) != TIDES_OK || n != sizeof(meta_value) ||
			   memcmp(v, &meta_value, n) != 0))
	{
		fprintf(stderr, "test_compaction_span: %s: the metadata key is not %u\n", when, meta_value);
		ok = false;
	}
	free(v);
	return ok;
}

/*
 * Drain the work; if it compacted, how many last-level files from before
 * are still there (merging with every file in the span keeps none).
 */
static uint64_t
drain_counting_kept(tides_db *db)
{
	tides_version *v = db->sh->current;
	tides_stats ss;
	uint64_t	compactions;
	uint32_t	n = v->nfiles[TIDES_MAX_LEVELS - 1];
	uint64_t   *before = malloc((n + 1) * sizeof(uint64_t));
	uint64_t	kept = 0;

	CHECK(before != NULL);
	for (uint32_t i = 0; i < n; i++)
		before[i] = v->files[TIDES_MAX_LEVELS - 1][i]->number;
	tides_get_stats(db, &ss);
	compactions = ss.compactions;
	CHECK_OK(drain(db));
	tides_get_stats(db, &ss);
	if (ss.compactions == compactions)
		n = 0;
	v = db->sh->current;
	for (uint32_t i = 0; i < v->nfiles[TIDES_MAX_LEVELS - 1]; i++)
		for (uint32_t j = 0; j < n; j++)
			kept += v->files[TIDES_MAX_LEVELS - 1][i]->number == before[j];
	free(before);
	return kept;
}

static bool
tree0_apart(void *arg, const void *prev, size_t prevlen, const void *key, size_t klen)
{
	static const uint8_t zero[8] = {0};

	(void) arg;
	(void) prevlen;
	(void) klen;
	return (memcmp(prev, zero, 8) == 0) != (memcmp(key, zero, 8) == 0);
}

/* does the last level have a file of tree 0 alone? */
static bool
tree0_file(tides_db *db)
{
	tides_version *v = db->sh->current;
	static const uint8_t zero[8] = {0};

	for (uint32_t i = 0; i < v->nfiles[TIDES_MAX_LEVELS - 1]; i++)
	{
		const tides_file_meta *f = v->files[TIDES_MAX_LEVELS - 1][i];

		if (memcmp(tides_file_smallest(f), zero, 8) == 0 && memcmp(tides_file_largest(f), zero, 8) == 0)
			return true;
	}
	return false;
}

static void
test_load(bool partitioned)
{
	store		st;
	tides_batch *b = tides_batch_new();
	tides_stats ss;
	uint64_t	data = 0,
				written,
				kept_files = 0;
	int			quiet = 0;

	memset(&st, 0, sizeof(st));
	tides_options_default(&st.opts);
	st.opts.memtable_size = 4 << 20;
	st.opts.memtable_count = 4;
	st.opts.block_cache_size = 4 << 20;
	st.opts.meta_size = 4 << 20;
	st.opts.log_segment_size = 16 << 20;
	st.opts.compression = TIDES_COMPRESS_NONE;
	st.opts.sync_mode = TIDES_SYNC_NONE;
	st.opts.target_file_size = partitioned ? 8 << 20 : 1 << 20;
	st.opts.level_base_size = 256 << 20;	/* one level under level 0 */
	st.opts.level0_compaction_trigger = 4;
	st.opts.level0_slowdown_trigger = 100;
	st.opts.level0_stop_trigger = 200;
	st.opts.delayed_write_rate = 0;
	st.dir = test_tmpdir("span");
	memset(version, 0, sizeof(version));
	meta_value = 0;
	CHECK_OK(store_open(&st));
	if (partitioned)
		tides_set_partitioner(st.db, tree0_apart, NULL);

	for (uint32_t m = 0; m < MEMTABLES; m++)
	{
		uint32_t	first = m * ROWS_PER_MEMTABLE;

		for (uint32_t row = first; row < first + ROWS_PER_MEMTABLE; row++)
			put_row(st.db, b, row);
		/* an earlier row, somewhere in the middle of what is loaded */
		if (m > 0 && !partitioned)
			put_row(st.db, b, (uint32_t) (h_mix(m) % first));
		write_one(st.db, b);
		put_meta(st.db, b);
		h_seal_and_flush(st.db);
		kept_files += drain_counting_kept(st.db);
	}
	tides_get_stats(st.db, &ss);
	data = ss.flush_bytes_written;
	written = ss.compaction_bytes_written;
	fprintf(stderr, "test_compaction_span: %s: flushed %llu bytes, compactions wrote %llu (%.2fx) in %llu compactions\n",
			partitioned ? "partitioned" : "load", (unsigned long long) data, (unsigned long long) written, (double) written / (double) data,
			(unsigned long long) ss.compactions);
	CHECK(ss.compactions >= 5);
	CHECK(written <= (partitioned ? data * 11 / 10 : data * 5 / 2));
	CHECK(kept_files > 0);
	CHECK(!partitioned || tree0_file(st.db));
	CHECK(reads_all(st.db, "after the load"));
	CHECK(tides_verify(st.db, report_problem, &quiet) == 0);

	store_crash(&st);
	CHECK_OK(store_open(&st));
	CHECK(reads_all(st.db, "after recovery"));
	CHECK(tides_verify(st.db, report_problem, &quiet) == 0);
	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(st.dir);
	else
		fprintf(stderr, "test_compaction_span: store kept in %s\n", st.dir);
	free(st.dir);
	tides_batch_free(b);
}

int
main(int argc, char **argv)
{
	test_init(argc, argv);
	test_load(false);
	test_load(true);
	return test_finish("test_compaction_span");
}
