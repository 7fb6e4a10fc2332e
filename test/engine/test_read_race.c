/*
 * test_read_race.c -- a reader delayed at its read point while a newer
 * version is written, flushed (dropping the older one, which no snapshot
 * needs) and compacted must still see the version that was current when it
 * started, never an older one and never nothing.
 *
 * The delay is made deterministic with the engine's test point
 * "read.pinned" / "iter.pinned" (util/testpoint.h), reached once a read has
 * fixed its sequence number and superversion and before it reads anything.
 * The hook writes the newer version through a second handle, seals, flushes,
 * compacts and deletes obsolete files.  A reader that took its sequence
 * number first and pinned the superversion only afterwards pairs an old
 * sequence number with a state in which the version it should see is gone:
 * it finds the version before it (or nothing).
 */
#include "harness.h"
#include "util/testpoint.h"

static store st;
static tides_db *db2;
static const char *hook_point;	/* fire at this point, once */
static int	hook_fired;
static int	next_ver;

static void
opts(tides_options *o)
{
	tides_options_default(o);
	o->memtable_size = 64 << 10;
	o->memtable_count = 4;
	o->block_cache_size = 1 << 20;
	o->meta_size = 1 << 20;
	o->max_open_tags = 16;
	o->log_segment_size = 256 << 10;
	o->target_file_size = 64 << 10;
	o->level_base_size = 64 << 10;
	o->level0_compaction_trigger = 1;
	o->sync_mode = TIDES_SYNC_NONE;
}

static void
put_ver(tides_db *db, const char *k, int ver)
{
	tides_batch *b = tides_batch_new();
	char		v[32];

	sprintf(v, "version-%d", ver);
	CHECK_OK(tides_batch_put(b, k, strlen(k), v, strlen(v)));
	CHECK_OK(tides_write(db, b, NULL));
	tides_batch_free(b);
}

/* everything a busy store does behind a reader's back */
static void
churn(tides_db *db)
{
	bool		did;

	CHECK_OK(tides_seal_memtable(db));
	do
		CHECK_OK(tides_flush_work(db, &did));
	while (did);
	do
		CHECK_OK(tides_compact_work(db, &did));
	while (did);
	CHECK_OK(tides_maint_work(db, &did));
}

static void
hook(const char *point, void *db)
{
	if (hook_point == NULL || strcmp(point, hook_point) != 0 || db == db2)
		return;
	hook_point = NULL;
	hook_fired++;
	put_ver(db2, "key", next_ver);
	churn(db2);
}

/* the version a read returned, 0 for none, -1 for an error */
static int
version_of(tides_status s, const void *v, size_t vl)
{
	char		buf[32];

	if (s == TIDES_NOT_FOUND)
		return 0;
	if (s != TIDES_OK || vl >= sizeof(buf))
		return -1;
	memcpy(buf, v, vl);
	buf[vl] = 0;
	return strncmp(buf, "version-", 8) == 0 ? atoi(buf + 8) : -1;
}

static void
one_round(bool iter, bool older_in_file)
{
	int			cur,
				got;

	/* an older version already in a file, so a stale read has something to find */
	if (older_in_file)
	{
		put_ver(st.db, "key", ++next_ver);
		churn(st.db);
	}
	/* the current version, in the memtable */
	cur = ++next_ver;
	put_ver(st.db, "key", cur);
	next_ver++;					/* what the hook writes */

	hook_point = iter ? "iter.pinned" : "read.pinned";
	if (!iter)
	{
		void	   *v = NULL;
		size_t		vl = 0;
		tides_status s = tides_get(st.db, NULL, "key", 3, &v, &vl);

		got = version_of(s, v, vl);
		free(v);
	}
	else
	{
		tides_iter *it = tides_iter_new(st.db, NULL);

		tides_iter_seek(it, "key", 3);
		if (tides_iter_valid(it))
		{
			size_t		kl,
						vl;
			const void *k = tides_iter_key(it, &kl);
			const void *v = tides_iter_value(it, &vl);

			got = kl == 3 && memcmp(k, "key", 3) == 0 ? version_of(TIDES_OK, v, vl) : 0;
		}
		else
			got = tides_iter_status(it) == TIDES_OK ? 0 : -1;
		tides_iter_free(it);
	}
	CHECK(hook_fired == 1);
	hook_fired = 0;
	/* the version current at the start, or the one written meanwhile */
	if (got != cur && got != cur + 1)
	{
		test_failures++;
		fprintf(stderr, "test_read_race: %s%s: read version %d, expected %d (or %d)\n",
				iter ? "iterator" : "point read", older_in_file ? ", older version in a file" : "",
				got, cur, cur + 1);
	}
	churn(st.db);
}

int
main(int argc, char **argv)
{
	test_init(argc, argv);
	memset(&st, 0, sizeof(st));
	opts(&st.opts);
	st.dir = fast_tmpdir("rrace");
	CHECK_OK(store_open(&st));
	CHECK_OK(tides_open(st.region, st.dir, &st.opts, NULL, false, NULL, &db2));
	tides_test_point_hook = hook;
	for (int round = 0; round < 4; round++)
	{
		one_round(false, round % 2 == 1);
		one_round(true, round % 2 == 1);
	}
	tides_test_point_hook = NULL;
	tides_close(db2);
	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(st.dir);
	else
		fprintf(stderr, "test_read_race: store kept in %s\n", st.dir);
	free(st.dir);
	return test_finish("test_read_race");
}
