/*
 * test_space_reclaim.c -- deletions give their space back: deletion-heavy
 * files are compacted by the background work, and a full (manual)
 * compaction leaves nothing obsolete behind.
 *
 *   above      ~20 MB of rows on the last level, base level L5; 75% of the
 *              rows deleted: the deletions land on L5 (a trivial move,
 *              far under L5's target, so no score ever compacts them).  The
 *              deletion-heavy file is pushed down and meets the rows: the
 *              level bytes fall to about the live rows, reads are exact.
 *   bottom     rows written and 90% of them deleted before one flush: a
 *              last-level file of deletions and the rows they shadow (moved
 *              there trivially) is rewritten in place; with a snapshot that
 *              needs them, it is rewritten once and then left alone (no
 *              endless rewrites), the snapshot reads the old rows, and once
 *              it is released the next round drops them.
 *   full       rows on L0, L5 and L6 with overwrites and deletions, more
 *              writes and background compactions between the steps of a
 *              full compaction: it ends, only the last level holds data,
 *              no last-level file holds a deletion, the level bytes are
 *              about the live rows, every row reads its newest version, also
 *              after a restart; a second full compaction rewrites nothing.
 */
#include "harness.h"
#include "db/db_impl.h"

#define KEYLEN H_ROW_KEY_LEN

static tides_batch *batch;
static uint32_t batch_n;

static void
commit(tides_db *db)
{
	if (batch_n == 0)
		return;
	h_write_retrying(db, batch, false);
	batch_n = 0;
}

static void
put(tides_db *db, uint32_t tree, uint32_t row, uint32_t ver, size_t vlen)
{
	uint8_t		k[KEYLEN],
				v[2048];

	h_row_key(k, tree, row);
	h_row_value(v, vlen, tree, row, ver);
	CHECK_OK(tides_batch_put(batch, k, KEYLEN, v, vlen));
	if (++batch_n >= 64)
		commit(db);
}

static void
del(tides_db *db, uint32_t tree, uint32_t row)
{
	uint8_t		k[KEYLEN];

	h_row_key(k, tree, row);
	CHECK_OK(tides_batch_delete(batch, k, KEYLEN));
	if (++batch_n >= 64)
		commit(db);
}

/* does (tree, row) read version ver (0: absent) at snap? */
static bool
reads(tides_db *db, const tides_snapshot *snap, uint32_t tree, uint32_t row, uint32_t ver, size_t vlen)
{
	uint8_t		k[KEYLEN],
				want[2048];
	void	   *v = NULL;
	size_t		n = 0;
	tides_status s;
	bool		ok;

	h_row_key(k, tree, row);
	s = tides_get(db, snap, k, KEYLEN, &v, &n);
	if (ver == 0)
		ok = s == TIDES_NOT_FOUND;
	else
	{
		h_row_value(want, vlen, tree, row, ver);
		ok = s == TIDES_OK && n == vlen && memcmp(v, want, vlen) == 0;
	}
	if (!ok)
		fprintf(stderr, "tree %u row %u: %s (%zu bytes), expected %s (version %u)\n", tree, row,
				tides_status_name(s), n, ver ? "a value" : "absent", ver);
	free(v);
	return ok;
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

/* compaction and maintenance until neither has anything to do; compactions run */
static int
compact_idle(tides_db *db)
{
	int			n = 0,
				rounds;

	for (rounds = 0; rounds < 1000; rounds++)
	{
		bool		c = false,
					m = false;

		CHECK_OK(tides_compact_work(db, &c));
		CHECK_OK(tides_maint_work(db, &m));
		n += c;
		if (!c && !m)
			break;
	}
	CHECK(rounds < 1000);
	return n;
}

/* a whole full compaction, with `between` run after every step; steps taken */
static int
full_compact(tides_db *db, void (*between) (tides_db *db, int step))
{
	tides_full_compaction fc;
	bool		done = false,
				did;
	int			steps = 0;

	tides_full_compaction_begin(db, &fc);
	while (!done && steps < 10000)
	{
		CHECK_OK(tides_full_compaction_step(db, &fc, &done, &did));
		steps++;
		if (between != NULL)
			between(db, steps);
	}
	CHECK(done);
	compact_idle(db);
	return steps;
}

static void
stats(tides_db *db, tides_stats *st)
{
	tides_get_stats(db, st);
}

static uint64_t
level_bytes(tides_db *db)
{
	tides_stats st;
	uint64_t	sum = 0;

	stats(db, &st);
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		sum += st.level_bytes[l];
	return sum;
}

/* deletions in the files of one level */
static uint64_t
level_deletions(tides_db *db, int level)
{
	tides_version *v = db->sh->current;
	uint64_t	n = 0;

	for (uint32_t i = 0; i < v->nfiles[level]; i++)
		n += v->files[level][i]->deletions;
	return n;
}

static void
verify_clean(tides_db *db, const char *when)
{
	int			quiet = 0;

	if (tides_verify(db, report_problem, &quiet) != 0)
	{
		test_failures++;
		fprintf(stderr, "test_space_reclaim: %s: tides_verify found problems\n", when);
	}
}

static void
base_opts(tides_options *o)
{
	tides_options_default(o);
	o->memtable_size = 8 << 20;
	o->memtable_count = 4;
	o->block_cache_size = 4 << 20;
	o->meta_size = 4 << 20;
	o->log_segment_size = 16 << 20;
	o->compression = TIDES_COMPRESS_NONE;	/* bytes on disk = bytes of data */
	o->bottommost_compression = TIDES_COMPRESS_NONE;
	o->sync_mode = TIDES_SYNC_NONE;
	o->target_file_size = 2 << 20;
	o->level_base_size = 1 << 20;
	o->level_size_ratio = 10;
	o->level0_compaction_trigger = 1;
	o->level0_slowdown_trigger = 100;
	o->level0_stop_trigger = 200;
	o->delayed_write_rate = 0;
}

static void
finish(store *st, const char *name)
{
	store_crash(st);
	if (test_failures == 0)
		test_rmdir(st->dir);
	else
		fprintf(stderr, "test_space_reclaim: %s: store kept in %s\n", name, st->dir);
	free(st->dir);
}

/* ---------------------------------------------------------------- above */

#define VLEN 1000
#define AB_ROWS 20000

static void
test_above(void)
{
	store		st;
	tides_stats ss;
	uint64_t	loaded,
				after;

	memset(&st, 0, sizeof(st));
	base_opts(&st.opts);
	st.dir = fast_tmpdir("spabove");
	CHECK_OK(store_open(&st));

	for (uint32_t r = 0; r < AB_ROWS; r++)
		put(st.db, 1, r, 1, VLEN);
	flush_all(st.db);
	full_compact(st.db, NULL);
	stats(st.db, &ss);
	for (int l = 0; l < TIDES_MAX_LEVELS - 1; l++)
		CHECK(ss.level_files[l] == 0);
	loaded = level_bytes(st.db);
	CHECK(loaded > 19u << 20);

	/* 75% deleted; the deletions go down to the base level, L5 */
	for (uint32_t r = 0; r < AB_ROWS; r++)
		if (r % 4 != 0)
			del(st.db, 1, r);
	flush_all(st.db);
	{
		bool		did;

		/* exactly one background step: the trivial move of level 0 to L5 */
		CHECK_OK(tides_compact_work(st.db, &did));
		CHECK(did);
		stats(st.db, &ss);
		CHECK(ss.level_files[0] == 0);
		CHECK(ss.level_files[5] == 1);
		CHECK(level_deletions(st.db, 5) == AB_ROWS / 4 * 3);
		/* far under L5's target: only its deletions make it compaction work */
		CHECK(ss.level_bytes[5] < 1u << 20);
		CHECK(tides_work_pending(st.db) & TIDES_WORK_COMPACT);
	}
	compact_idle(st.db);
	stats(st.db, &ss);
	after = level_bytes(st.db);
	for (int l = 0; l < TIDES_MAX_LEVELS - 1; l++)
		CHECK(ss.level_files[l] == 0);
	CHECK(level_deletions(st.db, 6) == 0);
	CHECK(!(tides_work_pending(st.db) & TIDES_WORK_COMPACT));
	/* a quarter of the rows is left (and some block and index overhead) */
	if (after > loaded / 4 + loaded / 20)
	{
		test_failures++;
		fprintf(stderr, "test_space_reclaim: above: level bytes %llu -> %llu, want <= %llu\n",
				(unsigned long long) loaded, (unsigned long long) after,
				(unsigned long long) (loaded / 4 + loaded / 20));
	}
	for (uint32_t r = 0; r < AB_ROWS; r += 7)
		CHECK(reads(st.db, NULL, 1, r, r % 4 == 0 ? 1 : 0, VLEN));
	verify_clean(st.db, "above");
	fprintf(stderr, "test_space_reclaim: above: level bytes %llu loaded, %llu after deleting 75%%\n",
			(unsigned long long) loaded, (unsigned long long) after);
	finish(&st, "above");
}

/* --------------------------------------------------------------- bottom */

#define BT_ROWS 5000

static void
bottom_round(bool with_snapshot)
{
	store		st;
	tides_stats ss;
	tides_snapshot snap;
	uint64_t	written,
				after;
	int			n;

	memset(&st, 0, sizeof(st));
	base_opts(&st.opts);
	st.dir = fast_tmpdir("spbottom");
	CHECK_OK(store_open(&st));

	for (uint32_t r = 0; r < BT_ROWS; r++)
		put(st.db, 1, r, 1, VLEN);
	commit(st.db);
	if (with_snapshot)
		CHECK_OK(tides_snapshot_acquire(st.db, &snap));
	for (uint32_t r = 0; r < BT_ROWS; r++)
		if (r % 10 != 0)
			del(st.db, 1, r);
	flush_all(st.db);
	written = level_bytes(st.db);

	/* a trivial move to the last level, then the rewrite in place */
	n = compact_idle(st.db);
	stats(st.db, &ss);
	CHECK(ss.level_files[6] >= 1);	/* several with the snapshot: 5 MB, cut at 2 MB */
	CHECK(ss.level_files[0] == 0);
	CHECK(ss.trivial_moves == 1);
	after = level_bytes(st.db);
	if (!with_snapshot)
	{
		CHECK(n == 2 && ss.compactions == 1);
		CHECK(level_deletions(st.db, 6) == 0);
		/* the flush kept the deletions only: the rows they shadow were in its memtable */
		CHECK(after < written);
		CHECK(after < BT_ROWS / 10 * VLEN + (BT_ROWS / 10 * VLEN) / 5);
	}
	else
	{
		/* the snapshot needs everything: one rewrite, then left alone */
		CHECK(n == 2 && ss.compactions == 1);
		CHECK(level_deletions(st.db, 6) == BT_ROWS / 10 * 9);
		CHECK(ss.level_files[6] > 1);
		CHECK(!(tides_work_pending(st.db) & TIDES_WORK_COMPACT));
		CHECK(compact_idle(st.db) == 0);
		for (uint32_t r = 0; r < BT_ROWS; r += 3)
		{
			CHECK(reads(st.db, &snap, 1, r, 1, VLEN));
			CHECK(reads(st.db, NULL, 1, r, r % 10 == 0 ? 1 : 0, VLEN));
		}
		tides_snapshot_release(st.db, &snap);
		CHECK(tides_work_pending(st.db) & TIDES_WORK_COMPACT);
		CHECK(compact_idle(st.db) == (int) ss.level_files[6]);	/* each once more */
		CHECK(level_deletions(st.db, 6) == 0);
		after = level_bytes(st.db);
		CHECK(after < BT_ROWS / 10 * VLEN + (BT_ROWS / 10 * VLEN) / 5);
	}
	for (uint32_t r = 0; r < BT_ROWS; r += 3)
		CHECK(reads(st.db, NULL, 1, r, r % 10 == 0 ? 1 : 0, VLEN));
	verify_clean(st.db, "bottom");
	fprintf(stderr, "test_space_reclaim: bottom%s: level bytes %llu flushed, %llu after\n",
			with_snapshot ? " (snapshot)" : "", (unsigned long long) written, (unsigned long long) after);
	finish(&st, "bottom");
}

static void
test_bottom(void)
{
	bottom_round(false);
	bottom_round(true);
}

/* ----------------------------------------------------------------- full */

#define FU_ROWS 16000
#define FU_EXTRA 2000			/* rows of tree 2 written during the full compaction */

static uint32_t fu_ver[FU_ROWS];
static uint32_t fu_extra;

/* between the steps: background work and some writes of another tree */
static void
fu_between(tides_db *db, int step)
{
	bool		did;

	CHECK_OK(tides_compact_work(db, &did));
	for (int i = 0; i < 100 && fu_extra < FU_EXTRA; i++)
		put(db, 2, fu_extra++, 1, VLEN);
	if (step % 5 == 0)
		flush_all(db);
}

static void
fu_check(tides_db *db)
{
	for (uint32_t r = 0; r < FU_ROWS; r++)
		if (!reads(db, NULL, 1, r, fu_ver[r], VLEN))
		{
			test_failures++;
			break;
		}
	for (uint32_t r = 0; r < fu_extra; r += 5)
		CHECK(reads(db, NULL, 2, r, 1, VLEN));
}

static void
test_full(void)
{
	store		st;
	tides_stats ss;
	uint64_t	before,
				after,
				live;
	uint64_t	comps;
	int			steps;

	memset(&st, 0, sizeof(st));
	base_opts(&st.opts);
	st.dir = fast_tmpdir("spfull");
	CHECK_OK(store_open(&st));

	/* version 1 of every row, on the last level */
	for (uint32_t r = 0; r < FU_ROWS; r++)
	{
		put(st.db, 1, r, 1, VLEN);
		fu_ver[r] = 1;
	}
	flush_all(st.db);
	full_compact(st.db, NULL);
	/* overwrites on L5 (the base level: the last one holds 16 MB), under its target */
	for (uint32_t r = 0; r < FU_ROWS; r += 20)
	{
		put(st.db, 1, r, 2, VLEN);
		fu_ver[r] = 2;
	}
	flush_all(st.db);
	compact_idle(st.db);
	stats(st.db, &ss);
	CHECK(ss.level_files[5] > 0);

	/* level 0 kept until the full compaction from now on */
	CHECK_OK(tides_shutdown(st.db));
	store_crash(&st);
	st.opts.level0_compaction_trigger = 8;
	CHECK_OK(store_open(&st));
	for (int i = 0; i < 7; i++)
	{
		/* overwrites and deletions in level 0 (7 files: under its trigger) */
		for (uint32_t r = (uint32_t) i; r < FU_ROWS; r += 11)
		{
			if (r % 2)
			{
				put(st.db, 1, r, 3 + (uint32_t) i, VLEN);
				fu_ver[r] = 3 + (uint32_t) i;
			}
			else
			{
				del(st.db, 1, r);
				fu_ver[r] = 0;
			}
		}
		flush_all(st.db);
	}
	compact_idle(st.db);
	stats(st.db, &ss);
	CHECK(ss.level_files[0] == 7);
	CHECK(ss.level_files[5] > 0);
	fu_check(st.db);
	before = level_bytes(st.db);

	fu_extra = 0;
	steps = full_compact(st.db, fu_between);
	flush_all(st.db);
	stats(st.db, &ss);
	after = level_bytes(st.db) - ss.level_bytes[0];	/* tree 2 flushed after it */
	CHECK(ss.level_files[1] + ss.level_files[2] + ss.level_files[3] + ss.level_files[4] == 0);
	CHECK(level_deletions(st.db, 6) == 0);
	live = 0;
	for (uint32_t r = 0; r < FU_ROWS; r++)
		live += fu_ver[r] != 0 ? VLEN : 0;
	live += (uint64_t) fu_extra * VLEN;
	fu_check(st.db);
	if (after > live + live / 10)
	{
		test_failures++;
		fprintf(stderr, "test_space_reclaim: full: %llu level bytes (not L0) after, live rows %llu bytes\n",
				(unsigned long long) after, (unsigned long long) live);
	}
	verify_clean(st.db, "full");

	/* nothing obsolete is left, so a second one rewrites nothing */
	full_compact(st.db, NULL);
	stats(st.db, &ss);
	comps = ss.compactions;
	CHECK(ss.level_files[0] == 0);
	full_compact(st.db, NULL);
	stats(st.db, &ss);
	CHECK(ss.compactions == comps);

	/* and after a restart */
	CHECK_OK(tides_shutdown(st.db));
	store_crash(&st);
	CHECK_OK(store_open(&st));
	fu_check(st.db);
	fprintf(stderr, "test_space_reclaim: full: %d steps; level bytes %llu before, %llu after "
			"(live rows %llu bytes)\n", steps, (unsigned long long) before,
			(unsigned long long) after, (unsigned long long) live);
	finish(&st, "full");
}

int
main(int argc, char **argv)
{
	const char *only = getenv("TEST_SPACE_ONLY");

	test_init(argc, argv);
	batch = tides_batch_new();
	if (only == NULL || strcmp(only, "above") == 0)
		test_above();
	if (only == NULL || strcmp(only, "bottom") == 0)
		test_bottom();
	if (only == NULL || strcmp(only, "full") == 0)
		test_full();
	tides_batch_free(batch);
	return test_finish("test_space_reclaim");
}
