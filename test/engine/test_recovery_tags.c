/*
 * test_recovery_tags.c -- unsealed tags are reported exactly: never lost,
 * never invented.
 *
 *   1. A crash during recovery.  A tagged, unsealed batch sits at the start
 *      of a log that fills every memtable, so the replay must flush (its
 *      memtables take each batch at the tallest node height); the flush's
 *      manifest edit moves the replay position past the tag's records.
 *      The store is crashed (an OS crash: unsynced writes lost) after every
 *      possible number of file-system calls of that recovery, then
 *      recovered again: the tag must be reported unsealed every time --
 *      its records are in a table now, so only the manifest's pending list
 *      can remember it.
 *
 *   2. A tagged write that returns TIDES_BUSY (all memtables full) wrote
 *      nothing; after flushes and a crash its tag must not be reported
 *      unsealed (it has no records).
 */
#include "harness.h"
#include "vfs_fault.h"

#define TAG_OPEN 0x7a67000000000001ull
#define TAG_BUSY 0x7a67000000000002ull
#define TAG_DONE 0x7a67000000000003ull

static store st;
static int	failures_before;

static void
opts(tides_options *o)
{
	tides_options_default(o);
	o->memtable_size = 64 << 10;
	o->memtable_count = 2;
	o->block_cache_size = 1 << 20;
	o->meta_size = 1 << 20;
	o->max_open_tags = 16;
	o->log_segment_size = 256 << 10;
	o->target_file_size = 64 << 10;
	o->level_base_size = 64 << 10;
	o->sync_mode = TIDES_SYNC_NONE;
}

static tides_status
write_one(const char *k, size_t vlen, uint64_t tag, bool seal)
{
	tides_batch *b = tides_batch_new();
	uint8_t		v[512];
	tides_status s;

	memset(v, 'v', sizeof(v));
	tides_batch_put(b, k, strlen(k), v, vlen);
	if (tag != 0)
		tides_batch_set_tag(b, tag, seal);
	s = tides_write(st.db, b, NULL);
	tides_batch_free(b);
	return s;
}

/*
 * Untagged writes until every memtable is full; returns how many.  First
 * batches of many tiny entries: recovery reserves room for each entry at
 * the tallest node height, so the replay fits far fewer of them in a
 * memtable than the writers did and must flush.  Then single small writes
 * until not even one fits.
 */
static int
fill(const char *prefix)
{
	tides_status s = TIDES_OK;
	int			n = 0;

	for (int single = 0; single < 2; single++)
	{
		s = TIDES_OK;
		while (s == TIDES_OK)
		{
			tides_batch *b = tides_batch_new();

			for (int i = 0; i < (single ? 1 : 500); i++)
			{
				char		k[48];

				sprintf(k, "%s%d-%d", prefix, n, i);
				tides_batch_put(b, k, strlen(k), "", 0);
			}
			s = tides_write(st.db, b, NULL);
			tides_batch_free(b);
			if (s == TIDES_OK)
				n++;
		}
		CHECK(s == TIDES_BUSY);
	}
	return n;
}

static bool
reported(const tides_recovery_info *info, uint64_t tag)
{
	for (uint32_t i = 0; i < info->n_unsealed_tags; i++)
		if (info->unsealed_tags[i] == tag)
			return true;
	return false;
}

static void
copy_dir(const char *from, const char *to)
{
	char		cmd[4096];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -a '%s' '%s'", to, from, to);
	if (system(cmd) != 0)
		abort();
}

static void
crash_during_recovery(const char *root)
{
	char		pristine[1024],
				work[1024];
	int			points = 0,
				lost = 0;
	bool		completed = false;

	snprintf(pristine, sizeof(pristine), "%s/pristine", root);
	snprintf(work, sizeof(work), "%s/work", root);

	/* the store: one open tag first, then every memtable full, all synced */
	memset(&st, 0, sizeof(st));
	opts(&st.opts);
	st.dir = pristine;
	CHECK_OK(store_open(&st));
	CHECK_OK(write_one("open-tag-key", 100, TAG_OPEN, false));
	CHECK_OK(write_one("done-tag-key", 100, TAG_DONE, false));
	CHECK_OK(write_one("done-tag-key2", 100, TAG_DONE, true));
	fill("fill");
	CHECK_OK(tides_sync(st.db, 0, true));
	store_crash(&st);

	for (uint64_t n = 0; !completed && n < 2000; n++)
	{
		tides_vfs_fault *vf = tides_vfs_fault_new(tides_vfs_posix(), test_seed + n);
		tides_status s;

		copy_dir(pristine, work);
		memset(&st, 0, sizeof(st));
		opts(&st.opts);
		st.dir = work;
		st.vfs = tides_vfs_fault_vfs(vf);
		tides_vfs_fault_freeze_after(vf, n);
		s = store_open(&st);
		completed = !tides_vfs_fault_frozen(vf);
		if (completed)
		{
			tides_stats stats;

			CHECK_OK(s);
			/* the point of the exercise: the replay had to flush */
			tides_get_stats(st.db, &stats);
			CHECK(stats.flushes > 0);
			if (stats.flushes == 0)
				fprintf(stderr, "replayed %llu batches %llu bytes, level0 %u\n",
						(unsigned long long) st.info.batches_replayed,
						(unsigned long long) st.info.log_bytes_replayed, stats.level_files[0]);
			if (s == TIDES_OK)
			{
				CHECK(reported(&st.info, TAG_OPEN));
				CHECK(!reported(&st.info, TAG_DONE));
			}
		}
		/* the machine dies here */
		store_crash(&st);
		CHECK(tides_vfs_fault_crash(vf, 0) == 0);
		tides_vfs_fault_free(vf);

		memset(&st, 0, sizeof(st));
		opts(&st.opts);
		st.dir = work;
		s = store_open(&st);
		if (s != TIDES_OK)
		{
			test_failures++;
			fprintf(stderr, "test_recovery_tags: recovery after a crash %llu calls into recovery "
					"failed: %s: %s\n", (unsigned long long) n, tides_status_name(s),
					st.db ? tides_errmsg(st.db) : "");
		}
		else
		{
			void	   *v = NULL;
			size_t		vl;

			/* the tag's records survived (they were synced), so it must be reported */
			CHECK(tides_get(st.db, NULL, "open-tag-key", 12, &v, &vl) == TIDES_OK);
			free(v);
			if (!reported(&st.info, TAG_OPEN))
			{
				lost++;
				if (lost <= 3)
					fprintf(stderr, "test_recovery_tags: crash %llu calls into recovery: the open tag "
							"is not reported unsealed\n", (unsigned long long) n);
			}
			if (reported(&st.info, TAG_DONE))
			{
				test_failures++;
				fprintf(stderr, "test_recovery_tags: crash %llu calls into recovery: a sealed tag is "
						"reported unsealed\n", (unsigned long long) n);
			}
		}
		store_crash(&st);
		points++;
	}
	CHECK(completed);
	if (lost > 0)
	{
		test_failures++;
		fprintf(stderr, "test_recovery_tags: the open tag was lost after %d of %d crash points\n", lost,
				points);
	}
	fprintf(stderr, "test_recovery_tags: %d crash points during recovery\n", points);
}

static void
busy_tag(const char *root)
{
	char		dir[1024];
	bool		did;
	tides_status s;

	snprintf(dir, sizeof(dir), "%s/busy", root);
	memset(&st, 0, sizeof(st));
	opts(&st.opts);
	st.dir = dir;
	CHECK_OK(store_open(&st));
	fill("a");
	/* every memtable is full: the tagged write is turned away */
	s = write_one("busy-tag-key", 100, TAG_BUSY, false);
	CHECK(s == TIDES_BUSY);
	/* flushes now, and later ones past the position the write saw */
	do
		CHECK_OK(tides_flush_work(st.db, &did));
	while (did);
	CHECK_OK(write_one("after", 100, 0, false));
	do
		CHECK_OK(tides_flush_work(st.db, &did));
	while (did);
	CHECK_OK(tides_seal_memtable(st.db));
	do
		CHECK_OK(tides_flush_work(st.db, &did));
	while (did);
	CHECK_OK(write_one("after2", 100, 0, false));
	store_crash(&st);
	s = store_open(&st);
	CHECK_OK(s);
	if (s == TIDES_OK && reported(&st.info, TAG_BUSY))
	{
		test_failures++;
		fprintf(stderr, "test_recovery_tags: a tag whose only write returned TIDES_BUSY is reported "
				"unsealed\n");
	}
	store_crash(&st);
}

int
main(int argc, char **argv)
{
	char	   *root;

	test_init(argc, argv);
	root = fast_tmpdir("rtags");
	failures_before = test_failures;
	crash_during_recovery(root);
	busy_tag(root);
	if (test_failures == 0)
		test_rmdir(root);
	else
		fprintf(stderr, "test_recovery_tags: stores kept under %s\n", root);
	free(root);
	return test_finish("test_recovery_tags");
}
