/*
 * test_compaction_race.c -- two compactions at once must keep the levels
 * ordered: no overlapping files in a level, no older version above a newer
 * one, no tombstone dropped while an older value survives.
 *
 * The race is made deterministic: a vfs wrapper runs a second compaction
 * (through a second handle on the same region, as a second compaction
 * worker or SQL tides_compact() would) at the moment the first one creates
 * its first output file, i.e. after it picked its inputs and before it
 * installs its result.
 *
 * The store is built so that the base level moved down: the last level
 * (L6) held enough data for the base to be L5, a level-0 file F went to L5,
 * then the data in L6 was dropped (tides_drop_prefix + reclaim), so the
 * base is L6 again and F sits above it.  Two newer level-0 files update and
 * delete keys in F's range.  Compaction A pushes F down into L6 (merging a
 * small L6 file).  While A runs, compaction B must not move level 0 past F:
 * written straight into L6 (the old behaviour) its newer versions and
 * dropped tombstones end up beside A's copy of F's older versions -- two
 * overlapping L6 files, stale reads, deleted keys back.
 *
 * While A runs, its claim on the L6 key range is checked in the shared
 * state; after everything settles: tides_verify is clean, every key reads
 * its newest version (deleted ones absent), before and after a crash.
 */
#include "harness.h"
#include "db/db_impl.h"

#include <fcntl.h>

#define NKEYS 100

static store st;
static tides_db *db2;			/* the second "process" */
static tides_vfs hooked;
static bool armed;
static int	hook_calls;
static tides_status hook_status;
static bool hook_did;
static int	want[NKEYS];		/* newest version of a%03d, 0: deleted/absent */

static int
hooked_open(tides_vfs *v, const char *path, int flags, int mode)
{
	size_t		n = strlen(path);

	if (armed && (flags & O_CREAT) && n > 4 && strcmp(path + n - 4, ".sst") == 0)
	{
		tides_shared *sh = (tides_shared *) st.region;
		int			claims = 0;

		armed = false;
		hook_calls++;
		/* compaction A is between pick and install: its claim must be there */
		for (int i = 0; i < TIDES_MAX_COMPACTIONS; i++)
			if (sh->running[i].used)
			{
				claims++;
				CHECK(sh->running[i].output_level == 6);
				CHECK(sh->running[i].level == 5);
			}
		CHECK(claims == 1);
		hook_status = tides_compact_work(db2, &hook_did);
	}
	return tides_vfs_posix()->open(tides_vfs_posix(), path, flags, mode);
}

static void
opts(tides_options *o)
{
	tides_options_default(o);
	o->memtable_size = 512 << 10;
	o->memtable_count = 3;
	o->block_cache_size = 1 << 20;
	o->meta_size = 1 << 20;
	o->max_open_tags = 16;
	o->compression = TIDES_COMPRESS_NONE;
	o->log_segment_size = 1 << 20;
	o->target_file_size = 64 << 10;
	o->level_base_size = 64 << 10;
	o->level_size_ratio = 2;
	o->level0_compaction_trigger = 1;
	o->level0_slowdown_trigger = 100;
	o->level0_stop_trigger = 100;
	o->sync_mode = TIDES_SYNC_NONE;
}

static void
put(const char *k, const void *v, size_t vlen)
{
	tides_batch *b = tides_batch_new();

	CHECK_OK(tides_batch_put(b, k, strlen(k), v, vlen));
	CHECK_OK(tides_write(st.db, b, NULL));
	tides_batch_free(b);
}

static void
del(const char *k)
{
	tides_batch *b = tides_batch_new();

	CHECK_OK(tides_batch_delete(b, k, strlen(k)));
	CHECK_OK(tides_write(st.db, b, NULL));
	tides_batch_free(b);
}

static size_t
aval(char *buf, int i, int ver)
{
	return (size_t) sprintf(buf, "a%03d-version-%d", i, ver);
}

/* version ver of keys [from, to); deletions where i % 5 == 0 if del5 */
static void
write_a(int from, int to, int ver, bool del5)
{
	for (int i = from; i < to; i++)
	{
		char		k[16],
					v[64];

		sprintf(k, "a%03d", i);
		if (del5 && i % 5 == 0)
		{
			del(k);
			want[i] = 0;
		}
		else
		{
			put(k, v, aval(v, i, ver));
			want[i] = ver;
		}
	}
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

static void
levels(uint32_t out[TIDES_MAX_LEVELS])
{
	tides_stats s;

	tides_get_stats(st.db, &s);
	memcpy(out, s.level_files, sizeof(s.level_files));
}

static void
expect_levels(const char *when, const uint32_t *expect)
{
	uint32_t	l[TIDES_MAX_LEVELS];

	levels(l);
	for (int i = 0; i < TIDES_MAX_LEVELS; i++)
		if (l[i] != expect[i])
		{
			test_failures++;
			fprintf(stderr, "test_compaction_race: %s: level files %u %u %u %u %u %u %u, expected "
					"%u %u %u %u %u %u %u\n", when, l[0], l[1], l[2], l[3], l[4], l[5], l[6],
					expect[0], expect[1], expect[2], expect[3], expect[4], expect[5], expect[6]);
			return;
		}
}

static void
check(const char *when)
{
	int			quiet = 0;

	for (int i = 0; i < NKEYS; i++)
	{
		char		k[16],
					w[64];
		void	   *v = NULL;
		size_t		vl,
					wl = want[i] ? aval(w, i, want[i]) : 0;
		tides_status s;

		sprintf(k, "a%03d", i);
		s = tides_get(st.db, NULL, k, strlen(k), &v, &vl);
		if (want[i] == 0 && s != TIDES_NOT_FOUND)
		{
			test_failures++;
			fprintf(stderr, "test_compaction_race: %s: deleted %s reads %s \"%.*s\"\n", when, k,
					tides_status_name(s), s == TIDES_OK ? (int) vl : 0, s == TIDES_OK ? (char *) v : "");
		}
		else if (want[i] != 0 && (s != TIDES_OK || vl != wl || memcmp(v, w, wl) != 0))
		{
			test_failures++;
			fprintf(stderr, "test_compaction_race: %s: %s reads %s \"%.*s\", expected \"%s\"\n", when,
					k, tides_status_name(s), s == TIDES_OK ? (int) vl : 0,
					s == TIDES_OK ? (char *) v : "", w);
		}
		free(v);
	}
	/* and a scan sees exactly the same */
	{
		tides_iter *it = tides_iter_new(st.db, NULL);
		int			next = 0;

		for (tides_iter_seek(it, "a", 1); tides_iter_valid(it); tides_iter_next(it))
		{
			size_t		kl;
			const char *k = tides_iter_key(it, &kl);
			int			i;

			if (kl != 4 || k[0] != 'a')
				break;
			i = atoi(k + 1);
			while (next < i && want[next] == 0)
				next++;
			if (i != next)
			{
				test_failures++;
				fprintf(stderr, "test_compaction_race: %s: scan found a%03d, expected a%03d\n", when, i,
						next);
				break;
			}
			next++;
		}
		CHECK_OK(tides_iter_status(it));
		tides_iter_free(it);
	}
	if (tides_verify(st.db, report_problem, &quiet) != 0)
	{
		test_failures++;
		fprintf(stderr, "test_compaction_race: %s: tides_verify found problems\n", when);
	}
}

int
main(int argc, char **argv)
{
	bool		did;
	char		filler[1000];
	tides_status s;

	test_init(argc, argv);
	memset(&st, 0, sizeof(st));
	opts(&st.opts);
	st.dir = fast_tmpdir("crace");
	hooked = *tides_vfs_posix();
	hooked.open = hooked_open;
	st.vfs = &hooked;
	CHECK_OK(store_open(&st));
	CHECK_OK(tides_open(st.region, st.dir, &st.opts, NULL, false, NULL, &db2));

	/* X: a small last-level file at the start of the a-range */
	write_a(0, 10, 1, false);
	flush_all();
	CHECK_OK(tides_compact_work(st.db, &did));
	expect_levels("X moved to the last level", (uint32_t[]) {0, 0, 0, 0, 0, 0, 1});

	/* Z: filler that makes the last level large enough for base = L5 */
	for (int i = 0; i < 180; i++)
	{
		char		k[16];

		sprintf(k, "z%05d", i);
		memset(filler, 'a' + i % 26, sizeof(filler));
		put(k, filler, sizeof(filler));
	}
	flush_all();
	CHECK_OK(tides_compact_work(st.db, &did));
	expect_levels("Z moved to the last level", (uint32_t[]) {0, 0, 0, 0, 0, 0, 2});

	/* F: the whole a-range, version 2, into the base level L5 */
	write_a(0, NKEYS, 2, false);
	flush_all();
	CHECK_OK(tides_compact_work(st.db, &did));
	expect_levels("F moved to the base level", (uint32_t[]) {0, 0, 0, 0, 0, 1, 2});

	/* two newer level-0 files over the upper half, with deletions */
	write_a(50, NKEYS, 3, true);
	flush_all();
	write_a(60, NKEYS, 4, false);
	flush_all();
	expect_levels("two level-0 files", (uint32_t[]) {2, 0, 0, 0, 0, 1, 2});

	/* drop the filler: the base moves down to L6, F is above it */
	CHECK_OK(tides_drop_prefix(st.db, "z", 1));
	CHECK_OK(tides_maint_work(st.db, &did));
	expect_levels("filler reclaimed", (uint32_t[]) {2, 0, 0, 0, 0, 1, 1});
	check("before the compactions");

	/* A: push F down into L6; B runs while A is between pick and install */
	armed = true;
	s = tides_compact_work(st.db, &did);
	CHECK_OK(s);
	CHECK(did);
	CHECK(hook_calls == 1);
	CHECK_OK(hook_status);
	{
		tides_shared *sh = (tides_shared *) st.region;

		for (int i = 0; i < TIDES_MAX_COMPACTIONS; i++)
			CHECK(!sh->running[i].used);
	}
	check("after two concurrent compactions");

	/* let everything settle; then once more after a crash */
	for (int i = 0; i < 100 && tides_compact_work(db2, &did) == TIDES_OK && did; i++)
		;
	check("after all compactions");
	tides_close(db2);
	db2 = NULL;
	store_crash(&st);
	st.vfs = NULL;
	CHECK_OK(store_open(&st));
	check("after a crash and recovery");
	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(st.dir);
	else
		fprintf(stderr, "test_compaction_race: store kept in %s\n", st.dir);
	free(st.dir);
	return test_finish("test_compaction_race");
}
