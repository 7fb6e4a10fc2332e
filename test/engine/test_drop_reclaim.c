/*
 * test_drop_reclaim.c -- dropping a prefix gives its disk space back, and
 * the dropped-prefix list drains.
 *
 * tides_drop_prefix deletes the files wholly inside the prefix in the edit
 * that lists it and marks the files that overlap it partly; compaction
 * picks marked files first and rewrites one at the bottom of its range in
 * place; the prefix retires once no file or memtable holds a key it hides.
 *
 *   big        ~30 MB of one tree between two live trees (written
 *              interleaved), all compacted into one shared last-level file;
 *              after the drop and compaction work, the level bytes and the
 *              .sst bytes on disk fall by >= 90% of the dropped data, the
 *              live trees read back exactly, the prefix is retired.
 *   levels     small files on several levels: wholly-inside files go with
 *              the drop itself, partly overlapping ones (on the last level
 *              and above it) are rewritten; keys written under the prefix
 *              after the drop survive and do not keep the prefix listed;
 *              after retirement nothing of the old tree comes back, also
 *              after a restart.
 *   crash      (fault vfs) an OS crash after the drop, before the rewrite:
 *              recovery still hides the prefix, marks the file again, and
 *              the maintenance work wakes compaction, which rewrites it;
 *              then crashes at points spread over the rewrite and the
 *              retirement: the prefix stays hidden, nothing is lost, the
 *              rewrite and retirement happen after recovery.
 *   race       a second compaction (second handle) while the in-place
 *              rewrite runs: level 0 over the claimed range waits, level 0
 *              elsewhere goes ahead; results exact.
 *   replay     keys of the dropped tree only in the log, and restarts: a
 *              memtable replayed by recovery can hold seqs below its
 *              first_seq; the prefix must stay until a flush discards them.
 *   many       300 drops of small trees between live ones, with a round of
 *              every work function (flush, compaction, maintenance) between
 *              them, on memtables that never fill (after the first 100
 *              rounds only maintenance sealing the active memtable at half
 *              a list drains it); then 300 drops with no work between them
 *              (TIDES_BUSY when full, resolved by doing the work): never
 *              permanently busy, everything retires in the end.
 */
#include "harness.h"
#include "db/db_impl.h"
#include "vfs_fault.h"

#include <dirent.h>
#include <fcntl.h>

static int	woken;				/* TIDES_WORK_* kinds passed to the wakeup callback */

static void
on_wakeup(void *arg, int kind)
{
	(void) arg;
	woken |= kind;
}

/* ---------------------------------------------------------------- keys */

#define KEYLEN 15

static size_t
mkkey(uint8_t *k, uint64_t tree, uint32_t row)
{
	tides_put_be64(k, tree);
	memcpy(k + 8, "row", 3);
	k[11] = (uint8_t) (row >> 24);
	k[12] = (uint8_t) (row >> 16);
	k[13] = (uint8_t) (row >> 8);
	k[14] = (uint8_t) row;
	return KEYLEN;
}

/* incompressible value of version ver of (tree, row) */
static void
mkval(uint8_t *v, size_t n, uint64_t tree, uint32_t row, uint32_t ver)
{
	uint64_t	x = h_mix((tree << 40) ^ ((uint64_t) row << 8) ^ ver);

	for (size_t i = 0; i < n; i++)
	{
		if (i % 8 == 0)
			x = h_mix(x + i);
		v[i] = (uint8_t) (x >> (8 * (i % 8)));
	}
}

static tides_batch *batch;
static uint32_t batch_n;

/* write the pending batch, flushing while the memtables are full */
static void
commit(tides_db *db)
{
	if (batch_n == 0)
		return;
	h_write_retrying(db, batch, false);
	batch_n = 0;
}

static void
put(tides_db *db, uint64_t tree, uint32_t row, uint32_t ver, size_t vlen)
{
	uint8_t		k[KEYLEN],
				v[4096];

	mkkey(k, tree, row);
	mkval(v, vlen, tree, row, ver);
	CHECK_OK(tides_batch_put(batch, k, KEYLEN, v, vlen));
	if (++batch_n >= 64)
		commit(db);
}

/* does (tree, row) read version ver (0: absent)? */
static bool
reads(tides_db *db, uint64_t tree, uint32_t row, uint32_t ver, size_t vlen)
{
	uint8_t		k[KEYLEN],
				want[4096];
	void	   *v = NULL;
	size_t		n = 0;
	tides_status s;
	bool		ok;

	mkkey(k, tree, row);
	s = tides_get(db, NULL, k, KEYLEN, &v, &n);
	if (ver == 0)
		ok = s == TIDES_NOT_FOUND;
	else
	{
		mkval(want, vlen, tree, row, ver);
		ok = s == TIDES_OK && n == vlen && memcmp(v, want, vlen) == 0;
	}
	if (!ok)
		fprintf(stderr, "tree %llu row %u: %s (%zu bytes), expected %s\n", (unsigned long long) tree, row,
				tides_status_name(s), n, ver ? "a value" : "absent");
	free(v);
	return ok;
}

/* keys of one tree an iterator sees */
static uint32_t
count_tree(tides_db *db, uint64_t tree)
{
	uint8_t		lo[8],
				hi[8];
	tides_iter_options io;
	tides_iter *it;
	uint32_t	n = 0;

	tides_put_be64(lo, tree);
	tides_put_be64(hi, tree + 1);
	memset(&io, 0, sizeof(io));
	io.lower = lo;
	io.lower_len = 8;
	io.upper = hi;
	io.upper_len = 8;
	it = tides_iter_new(db, &io);
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
		n++;
	CHECK_OK(tides_iter_status(it));
	tides_iter_free(it);
	return n;
}

static bool
drop_tree(tides_db *db, uint64_t tree, tides_status *s)
{
	uint8_t		p[8];

	tides_put_be64(p, tree);
	*s = tides_drop_prefix(db, p, 8);
	return *s == TIDES_OK;
}

/* ------------------------------------------------------------- helpers */

static void
flush_all(tides_db *db)
{
	bool		did;

	commit(db);
	for (int tries = 0; tides_seal_memtable(db) == TIDES_BUSY && tries < 1000; tries++)
		CHECK_OK(tides_flush_work(db, &did));	/* every memtable is full */
	do
		CHECK_OK(tides_flush_work(db, &did));
	while (did);
}

/* compaction and maintenance until neither has anything to do; rounds run */
static int
compact_idle(tides_db *db)
{
	int			rounds = 0;

	for (; rounds < 1000; rounds++)
	{
		bool		c = false,
					m = false;

		CHECK_OK(tides_compact_work(db, &c));
		CHECK_OK(tides_maint_work(db, &m));
		if (!c && !m)
			break;
	}
	CHECK(rounds < 1000);
	return rounds;
}

static uint64_t
level_bytes(tides_db *db)
{
	tides_stats st;
	uint64_t	sum = 0;

	tides_get_stats(db, &st);
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		sum += st.level_bytes[l];
	return sum;
}

static uint64_t
stat_counter(tides_db *db, int which)
{
	tides_stats st;

	tides_get_stats(db, &st);
	return which == 0 ? st.compactions : st.trivial_moves;
}

/* bytes of .sst files in the directory */
static uint64_t
sst_bytes(const char *dir)
{
	DIR		   *d = opendir(dir);
	struct dirent *e;
	uint64_t	sum = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL)
	{
		size_t		n = strlen(e->d_name);
		char		path[1024];
		struct stat st;

		if (n < 4 || strcmp(e->d_name + n - 4, ".sst") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st) == 0)
			sum += (uint64_t) st.st_size;
	}
	closedir(d);
	return sum;
}

static uint32_t
ndropped(const store *s)
{
	return ((tides_shared *) s->region)->ndropped;
}

/* files marked for compaction in the current version */
static uint32_t
nmarked(const store *s)
{
	tides_version *v = ((tides_shared *) s->region)->current;
	uint32_t	n = 0;

	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		for (uint32_t i = 0; i < v->nfiles[l]; i++)
			n += v->files[l][i]->marked != 0;
	return n;
}

static void
verify_clean(tides_db *db, const char *when)
{
	int			quiet = 0;

	if (tides_verify(db, report_problem, &quiet) != 0)
	{
		test_failures++;
		fprintf(stderr, "test_drop_reclaim: %s: tides_verify found problems\n", when);
	}
}

static void
base_opts(tides_options *o)
{
	tides_options_default(o);
	o->memtable_count = 4;
	o->block_cache_size = 4 << 20;
	o->meta_size = 4 << 20;
	o->compression = TIDES_COMPRESS_NONE;	/* bytes on disk = bytes of data */
	o->bottommost_compression = TIDES_COMPRESS_NONE;
	o->sync_mode = TIDES_SYNC_NONE;
	o->level0_compaction_trigger = 1;
	o->level0_slowdown_trigger = 100;
	o->level0_stop_trigger = 200;
	o->delayed_write_rate = 0;
	o->wakeup = on_wakeup;
}

/* ------------------------------------------------------------------ big */

#define BIG_VLEN 1000

static void
test_big(void)
{
	store		st;
	const uint32_t dropped_rows = 30000;	/* ~30 MB */
	const uint32_t live_rows = 1500;	/* per live tree, ~1.5 MB */
	uint64_t	before,
				disk_before,
				after,
				disk_after,
				dropped_bytes,
				comps;
	tides_stats ss;
	uint8_t		lo[8],
				hi[8];

	memset(&st, 0, sizeof(st));
	base_opts(&st.opts);
	st.opts.memtable_size = 8 << 20;
	st.opts.log_segment_size = 16 << 20;
	/* default target_file_size (64 MiB) and level_base_size: one shared L6 file */
	st.dir = fast_tmpdir("dropbig");
	CHECK_OK(store_open(&st));

	/* tree 2 between trees 1 and 3, written interleaved */
	for (uint32_t r = 0; r < dropped_rows; r++)
	{
		put(st.db, 2, r, 1, BIG_VLEN);
		if (r % 20 == 0)
		{
			put(st.db, 1, r / 20, 1, BIG_VLEN);
			put(st.db, 3, r / 20, 1, BIG_VLEN);
		}
	}
	flush_all(st.db);
	compact_idle(st.db);
	tides_get_stats(st.db, &ss);
	for (int l = 0; l < TIDES_MAX_LEVELS - 1; l++)
		CHECK(ss.level_files[l] == 0);
	CHECK(ss.level_files[6] == 1);

	tides_put_be64(lo, 2);
	tides_put_be64(hi, 3);
	dropped_bytes = tides_approximate_size(st.db, lo, 8, hi, 8);
	before = level_bytes(st.db);
	disk_before = sst_bytes(st.dir);
	CHECK(dropped_bytes > 28u << 20);

	woken = 0;
	CHECK_OK(tides_drop_prefix(st.db, lo, 8));
	CHECK(ndropped(&st) == 1);
	CHECK(nmarked(&st) == 1);
	CHECK(woken & TIDES_WORK_COMPACT);
	CHECK(tides_work_pending(st.db) & TIDES_WORK_COMPACT);
	CHECK(reads(st.db, 2, 17, 0, BIG_VLEN));
	CHECK(count_tree(st.db, 2) == 0);

	comps = stat_counter(st.db, 0);
	compact_idle(st.db);
	after = level_bytes(st.db);
	disk_after = sst_bytes(st.dir);
	CHECK(stat_counter(st.db, 0) == comps + 1);	/* one rewrite in place */
	CHECK(nmarked(&st) == 0);
	CHECK(ndropped(&st) == 0);
	CHECK(!(tides_work_pending(st.db) & TIDES_WORK_COMPACT));
	if (before - after < dropped_bytes / 10 * 9 || disk_before - disk_after < dropped_bytes / 10 * 9)
	{
		test_failures++;
		fprintf(stderr, "test_drop_reclaim: big: dropped %llu bytes; level bytes %llu -> %llu, "
				".sst bytes %llu -> %llu\n", (unsigned long long) dropped_bytes,
				(unsigned long long) before, (unsigned long long) after,
				(unsigned long long) disk_before, (unsigned long long) disk_after);
	}
	tides_get_stats(st.db, &ss);
	CHECK(ss.level_files[6] == 1);

	/* the live trees are unchanged, the dropped one is gone for good */
	for (uint32_t r = 0; r < live_rows; r++)
	{
		CHECK(reads(st.db, 1, r, 1, BIG_VLEN));
		CHECK(reads(st.db, 3, r, 1, BIG_VLEN));
	}
	CHECK(count_tree(st.db, 1) == live_rows);
	CHECK(count_tree(st.db, 3) == live_rows);
	CHECK(count_tree(st.db, 2) == 0);
	verify_clean(st.db, "big");
	fprintf(stderr, "test_drop_reclaim: big: dropped ~%llu bytes; level bytes %llu -> %llu; "
			".sst bytes %llu -> %llu\n", (unsigned long long) dropped_bytes,
			(unsigned long long) before, (unsigned long long) after,
			(unsigned long long) disk_before, (unsigned long long) disk_after);

	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(st.dir);
	else
		fprintf(stderr, "test_drop_reclaim: big: store kept in %s\n", st.dir);
	free(st.dir);
}

/* --------------------------------------------------------------- levels */

#define LV_TREES 5
#define LV_ROWS 1200
#define LV_VLEN 200
/* sizes vary, so that file boundaries do not fall on tree boundaries */
#define LV_LEN(t, r) (LV_VLEN + ((t) * 31 + (r) * 7) % 64)

/* version of (tree, row) after the writes of test_levels (0: absent) */
static uint32_t
lv_version(uint64_t t, uint32_t r, bool dropped)
{
	if (t == 3 && dropped)
		return r < 50 ? 7 : 0;
	if (t != 3 && t >= 2 && t <= 4 && r % 5 == 0)
		return 3;
	return r % 3 == 0 ? 2 : 1;
}

static void
test_levels(void)
{
	store		st;
	uint8_t		p[8];
	tides_stats ss;
	uint64_t	after_drop,
				before;
	int			upper_marked = 0,
				bottom_marked = 0;
	bool		upper = false;

	memset(&st, 0, sizeof(st));
	base_opts(&st.opts);
	st.opts.memtable_size = 256 << 10;
	st.opts.log_segment_size = 1 << 20;
	st.opts.target_file_size = 64 << 10;
	st.opts.level_base_size = 128 << 10;
	st.opts.level_size_ratio = 4;
	st.opts.level0_compaction_trigger = 2;
	st.dir = fast_tmpdir("droplv");
	CHECK_OK(store_open(&st));

	/* two generations compacted (the base level holds part of the second) ... */
	for (uint32_t ver = 1; ver <= 2; ver++)
	{
		for (uint32_t r = 0; r < LV_ROWS; r++)
			for (uint64_t t = 1; t <= LV_TREES; t++)
				if (ver == 1 || r % 3 == 0)
					put(st.db, t, r, ver, LV_LEN(t, r));
		flush_all(st.db);
		compact_idle(st.db);
	}
	/* ... and a level-0 file across trees 2..4 */
	for (uint32_t r = 0; r < LV_ROWS; r += 5)
		for (uint64_t t = 2; t <= 4; t++)
			put(st.db, t, r, 3, LV_LEN(t, r));
	flush_all(st.db);
	tides_get_stats(st.db, &ss);
	CHECK(ss.level_files[6] > 4);
	CHECK(ss.level_files[0] >= 1);
	for (int l = 1; l < 6; l++)
		upper |= ss.level_files[l] > 0;
	CHECK(upper);

	before = level_bytes(st.db);
	tides_put_be64(p, 3);
	CHECK_OK(tides_drop_prefix(st.db, p, 8));
	after_drop = level_bytes(st.db);
	CHECK(after_drop < before);	/* files wholly inside went with the drop */
	{
		tides_version *v = ((tides_shared *) st.region)->current;

		for (int l = 0; l < TIDES_MAX_LEVELS; l++)
			for (uint32_t i = 0; i < v->nfiles[l]; i++)
				if (v->files[l][i]->marked)
				{
					if (l == 6)
						bottom_marked++;
					else
						upper_marked++;
				}
	}
	CHECK(bottom_marked >= 1 && bottom_marked <= 2);
	CHECK(upper_marked >= 1);

	/* new keys under the dropped prefix: visible, and kept by the rewrites */
	for (uint32_t r = 0; r < 50; r++)
		put(st.db, 3, r, 7, LV_LEN(3, r));
	flush_all(st.db);
	compact_idle(st.db);
	CHECK(nmarked(&st) == 0);
	CHECK(ndropped(&st) == 0);
	CHECK(level_bytes(st.db) < before - (before / LV_TREES) * 8 / 10);
	for (uint32_t r = 0; r < LV_ROWS; r++)
		for (uint64_t t = 1; t <= LV_TREES; t++)
			CHECK(reads(st.db, t, r, lv_version(t, r, true), LV_LEN(t, r)));
	CHECK(count_tree(st.db, 3) == 50);
	verify_clean(st.db, "levels");
	fprintf(stderr, "test_drop_reclaim: levels: %d marked on the last level, %d above; level bytes "
			"%llu -> %llu (drop) -> %llu\n", bottom_marked, upper_marked, (unsigned long long) before,
			(unsigned long long) after_drop, (unsigned long long) level_bytes(st.db));

	/* retired: nothing of the old tree may exist anywhere, also after a restart */
	store_crash(&st);
	CHECK_OK(store_open(&st));
	CHECK(ndropped(&st) == 0);
	CHECK(count_tree(st.db, 3) == 50);
	for (uint32_t r = 0; r < LV_ROWS; r++)
		for (uint64_t t = 1; t <= LV_TREES; t++)
			CHECK(reads(st.db, t, r, lv_version(t, r, true), LV_LEN(t, r)));
	verify_clean(st.db, "levels after restart");

	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(st.dir);
	else
		fprintf(stderr, "test_drop_reclaim: levels: store kept in %s\n", st.dir);
	free(st.dir);
}

/* ---------------------------------------------------------------- crash */

#define CR_ROWS 600
#define CR_VLEN 300

static store cst;
static tides_vfs_fault *vf;

static void
crash_open_store(void)
{
	memset(&cst, 0, sizeof(cst));
	base_opts(&cst.opts);
	cst.opts.memtable_size = 512 << 10;
	cst.opts.log_segment_size = 1 << 20;
	cst.opts.target_file_size = 4 << 20;
	cst.opts.sync_mode = TIDES_SYNC_FULL;
	cst.dir = fast_tmpdir("dropcr");
	vf = tides_vfs_fault_new(NULL, test_seed);
	cst.vfs = tides_vfs_fault_vfs(vf);
	CHECK_OK(store_open(&cst));
}

static void
crash_close_store(void)
{
	store_crash(&cst);
	if (test_failures == 0)
		test_rmdir(cst.dir);
	else
		fprintf(stderr, "test_drop_reclaim: crash: store kept in %s\n", cst.dir);
	free(cst.dir);
	tides_vfs_fault_free(vf);
	vf = NULL;
}

/* OS crash: everything not fsynced is lost; then recovery */
static void
os_crash(void)
{
	CHECK(tides_vfs_fault_crash(vf, 0) == 0);
	store_crash(&cst);
	CHECK_OK(store_open(&cst));
}

/* trees 1..3 in one last-level file, durable; then tree 2 dropped (durable) */
static uint64_t
crash_setup(void)
{
	uint8_t		p[8];
	tides_stats ss;

	crash_open_store();
	for (uint32_t r = 0; r < CR_ROWS; r++)
		for (uint64_t t = 1; t <= 3; t++)
			put(cst.db, t, r, 1, CR_VLEN);
	flush_all(cst.db);
	compact_idle(cst.db);
	tides_get_stats(cst.db, &ss);
	CHECK(ss.level_files[6] == 1 && ss.level_files[0] == 0);
	tides_put_be64(p, 2);
	CHECK_OK(tides_drop_prefix(cst.db, p, 8));
	return level_bytes(cst.db);
}

static void
crash_check(const char *when, bool settled, uint64_t full_bytes)
{
	for (uint32_t r = 0; r < CR_ROWS; r += 5)
	{
		CHECK(reads(cst.db, 1, r, 1, CR_VLEN));
		CHECK(reads(cst.db, 2, r, 0, CR_VLEN));
		CHECK(reads(cst.db, 3, r, 1, CR_VLEN));
	}
	CHECK(count_tree(cst.db, 2) == 0);
	CHECK(count_tree(cst.db, 1) == CR_ROWS);
	CHECK(count_tree(cst.db, 3) == CR_ROWS);
	if (settled)
	{
		CHECK(ndropped(&cst) == 0);
		CHECK(nmarked(&cst) == 0);
		CHECK(level_bytes(cst.db) < full_bytes * 3 / 4);
	}
	verify_clean(cst.db, when);
}

static void
test_crash(void)
{
	uint64_t	full,
				start,
				span;
	bool		did;
	int			points = 0;

	/* a crash after the drop, before any rewrite */
	full = crash_setup();
	CHECK(nmarked(&cst) == 1);
	os_crash();
	CHECK(ndropped(&cst) == 1);
	CHECK(nmarked(&cst) == 1);		/* recomputed by recovery */
	crash_check("recovered after the drop", false, full);
	woken = 0;
	CHECK_OK(tides_maint_work(cst.db, &did));
	CHECK(woken & TIDES_WORK_COMPACT);	/* maintenance wakes compaction */
	CHECK(tides_work_pending(cst.db) & TIDES_WORK_COMPACT);
	start = tides_vfs_fault_mutations(vf);
	compact_idle(cst.db);
	span = tides_vfs_fault_mutations(vf) - start;
	crash_check("rewritten after recovery", true, full);
	os_crash();
	crash_check("rewritten, then crashed", true, full);
	crash_close_store();

	/* crashes during the rewrite and the retirement */
	for (uint64_t k = 0; k <= span + 1 && test_failures == 0; k += k + 8 >= span ? 1 : span / 12 + 1)
	{
		full = crash_setup();
		tides_vfs_fault_freeze_after(vf, k);
		for (int i = 0; i < 20; i++)
		{
			bool		c = false,
						m = false;

			(void) tides_compact_work(cst.db, &c);	/* fails once frozen */
			(void) tides_maint_work(cst.db, &m);
			if (!c && !m)
				break;
		}
		os_crash();
		crash_check("recovered mid-rewrite", false, full);
		compact_idle(cst.db);
		crash_check("rewritten after a crash mid-rewrite", true, full);
		crash_close_store();
		points++;
	}
	fprintf(stderr, "test_drop_reclaim: crash: %d crash points over %llu mutating calls\n", points,
			(unsigned long long) span);
}

/* ----------------------------------------------------------------- race */

/*
 * A second compaction (a second handle, as another worker) runs while the
 * in-place rewrite of a marked last-level file is between pick and
 * install: level 0 over the file's range must wait (it would write into
 * the claimed range of the last level), level 0 elsewhere may go ahead.
 */
static store rst;
static tides_db *rdb2;
static bool rarmed;
static int	rclaims;
static bool rdid2;
static tides_status rst2;

static int
race_open(tides_vfs *v, const char *path, int flags, int mode)
{
	size_t		n = strlen(path);

	if (rarmed && (flags & O_CREAT) && n > 4 && strcmp(path + n - 4, ".sst") == 0)
	{
		tides_shared *sh = (tides_shared *) rst.region;

		rarmed = false;
		rclaims = 0;
		for (int i = 0; i < TIDES_MAX_COMPACTIONS; i++)
			if (sh->running[i].used)
			{
				rclaims++;
				CHECK(sh->running[i].level == 6 && sh->running[i].output_level == 6);
			}
		rst2 = tides_compact_work(rdb2, &rdid2);
	}
	return tides_vfs_posix()->open(tides_vfs_posix(), path, flags, mode);
}

static void
race_once(bool overlap)
{
	static tides_vfs hooked;
	uint8_t		p[8];
	bool		did;
	tides_stats ss;
	uint64_t	l0tree = overlap ? 3 : 9;

	memset(&rst, 0, sizeof(rst));
	base_opts(&rst.opts);
	rst.opts.memtable_size = 256 << 10;
	rst.opts.log_segment_size = 1 << 20;
	rst.dir = fast_tmpdir("droprace");
	hooked = *tides_vfs_posix();
	hooked.open = race_open;
	rst.vfs = &hooked;
	CHECK_OK(store_open(&rst));
	CHECK_OK(tides_open(rst.region, rst.dir, &rst.opts, &hooked, false, NULL, &rdb2));
	for (uint32_t r = 0; r < 300; r++)
		for (uint64_t t = 1; t <= 3; t++)
			put(rst.db, t, r, 1, 200);
	flush_all(rst.db);
	compact_idle(rst.db);
	/* a level-0 file: new versions in tree 3 (inside the marked file's range) or tree 9 */
	for (uint32_t r = 0; r < 300; r += 2)
		put(rst.db, l0tree, r, 2, 200);
	flush_all(rst.db);
	tides_get_stats(rst.db, &ss);
	CHECK(ss.level_files[0] == 1 && ss.level_files[6] == 1);

	tides_put_be64(p, 2);
	CHECK_OK(tides_drop_prefix(rst.db, p, 8));
	CHECK(nmarked(&rst) == 1);
	rarmed = true;
	CHECK_OK(tides_compact_work(rst.db, &did));	/* the marked file comes first */
	CHECK(did);
	CHECK(!rarmed && rclaims == 1);
	CHECK_OK(rst2);
	CHECK(rdid2 == !overlap);
	compact_idle(rst.db);
	CHECK(ndropped(&rst) == 0 && nmarked(&rst) == 0);
	for (uint32_t r = 0; r < 300; r++)
	{
		CHECK(reads(rst.db, 1, r, 1, 200));
		CHECK(reads(rst.db, 2, r, 0, 200));
		CHECK(reads(rst.db, 3, r, overlap && r % 2 == 0 ? 2 : 1, 200));
		if (!overlap)
			CHECK(reads(rst.db, 9, r, r % 2 == 0 ? 2 : 0, 200));
	}
	verify_clean(rst.db, overlap ? "race, overlapping" : "race, apart");
	tides_close(rdb2);
	rdb2 = NULL;
	store_crash(&rst);
	if (test_failures == 0)
		test_rmdir(rst.dir);
	else
		fprintf(stderr, "test_drop_reclaim: race: store kept in %s\n", rst.dir);
	free(rst.dir);
}

static void
test_race(void)
{
	race_once(true);
	race_once(false);
}

/* --------------------------------------------------------------- replay */

/*
 * Keys of a dropped tree only in the log, and two restarts: the first
 * recovery's manifest rewrite records a last_seq above them, so the second
 * one replays them into a memtable whose first_seq lies above their seqs.
 * The prefix must stay listed (hiding them) until a flush discards them.
 */
static void
test_replay(void)
{
	store		st;
	uint8_t		p[8];

	memset(&st, 0, sizeof(st));
	base_opts(&st.opts);
	st.opts.memtable_size = 1 << 20;
	st.opts.log_segment_size = 1 << 20;
	st.dir = fast_tmpdir("droprp");
	CHECK_OK(store_open(&st));
	for (uint32_t r = 0; r < 100; r++)
		for (uint64_t t = 1; t <= 3; t++)
			put(st.db, t, r, 1, 100);
	commit(st.db);
	tides_put_be64(p, 2);
	CHECK_OK(tides_drop_prefix(st.db, p, 8));
	for (int restart = 0; restart < 3; restart++)
	{
		store_crash(&st);
		CHECK_OK(store_open(&st));
		CHECK(ndropped(&st) == 1);
		CHECK(count_tree(st.db, 2) == 0);
		CHECK(reads(st.db, 2, 5, 0, 100));
		CHECK(count_tree(st.db, 1) == 100 && count_tree(st.db, 3) == 100);
	}
	flush_all(st.db);
	compact_idle(st.db);
	CHECK(ndropped(&st) == 0);
	CHECK(count_tree(st.db, 2) == 0);
	CHECK(count_tree(st.db, 1) == 100 && count_tree(st.db, 3) == 100);
	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(st.dir);
	else
		fprintf(stderr, "test_drop_reclaim: replay: store kept in %s\n", st.dir);
	free(st.dir);
}

/* ----------------------------------------------------------------- many */

#define MANY_DROPS 300
#define MANY_LIVE 25			/* live trees 1000, 2000, ..., 25000 */
#define MANY_VLEN 100

static uint32_t live_ver[MANY_LIVE + 1][64];

/* live tree lt (1..MANY_LIVE) */
static uint64_t
live_tree(uint32_t lt)
{
	return 1000 * (uint64_t) lt;
}

/* the tree dropped in round i: between two live trees */
static uint64_t
many_tree(uint32_t i)
{
	return live_tree(1 + i % MANY_LIVE) + 1 + i / MANY_LIVE;
}

static void
many_write(store *s, uint32_t i)
{
	uint64_t	tree = many_tree(i);

	for (uint32_t r = 0; r < 20; r++)
		put(s->db, tree, r, 1, MANY_VLEN);
	for (uint32_t r = 0; r < 8; r++)
	{
		uint32_t	lt = 1 + (i + r) % MANY_LIVE;
		uint32_t	row = (i * 7 + r) % 64;

		put(s->db, live_tree(lt), row, ++live_ver[lt][row], MANY_VLEN);
	}
	commit(s->db);
}

/* drop round i's tree, doing work while busy; retries needed */
static int
many_drop(store *s, uint32_t i, uint32_t *max_listed)
{
	tides_status ds;
	int			busy = 0;

	while (!drop_tree(s->db, many_tree(i), &ds) && ds == TIDES_BUSY && busy < 50)
	{
		busy++;
		drain(s->db);
	}
	CHECK_OK(ds);
	if (ndropped(s) > *max_listed)
		*max_listed = ndropped(s);
	return busy;
}

static void
many_check(store *s, uint32_t rounds)
{
	for (uint32_t i = 0; i < rounds; i += 13)
		CHECK(count_tree(s->db, many_tree(i)) == 0);
	for (uint32_t lt = 1; lt <= MANY_LIVE; lt++)
		for (uint32_t row = 0; row < 64; row++)
			CHECK(reads(s->db, live_tree(lt), row, live_ver[lt][row], MANY_VLEN));
}

static void
test_many(void)
{
	store		st;
	uint32_t	max_listed = 0;
	int			busy_rounds = 0,
				busy_max = 0;

	memset(&st, 0, sizeof(st));
	memset(live_ver, 0, sizeof(live_ver));
	base_opts(&st.opts);
	st.opts.memtable_size = 4 << 20;	/* never fills: only sealing drains the list */
	st.opts.memtable_count = 3;
	st.opts.log_segment_size = 4 << 20;
	st.opts.target_file_size = 64 << 10;
	st.opts.level_base_size = 64 << 10;
	st.opts.level_size_ratio = 4;
	st.opts.level0_compaction_trigger = 2;
	st.dir = fast_tmpdir("dropmany");
	if (store_open(&st) != TIDES_OK)
	{
		test_failures++;
		fprintf(stderr, "test_drop_reclaim: many: cannot open a store\n");
		return;
	}

	/* live data on disk first, so drops meet shared files */
	for (uint32_t i = 0; i < MANY_DROPS; i++)
		for (uint32_t r = 0; r < 8; r++)
		{
			uint32_t	lt = 1 + (i + r) % MANY_LIVE;
			uint32_t	row = (i * 7 + r) % 64;

			put(st.db, live_tree(lt), row, ++live_ver[lt][row], MANY_VLEN);
		}
	flush_all(st.db);
	compact_idle(st.db);

	/* 1: drops with compaction work between them */
	for (uint32_t i = 0; i < MANY_DROPS && test_failures == 0; i++)
	{
		int			b;

		many_write(&st, i);
		/*
		 * Early trees reach files before their drop; later ones stay in the
		 * active memtable, which never fills: maintenance must seal it once
		 * the list is half full.
		 */
		if (i % 3 == 0 && i < 100)
			flush_all(st.db);
		b = many_drop(&st, i, &max_listed);
		busy_rounds += b > 0;
		busy_max = b > busy_max ? b : busy_max;
		CHECK_OK(drain(st.db));	/* flush, compaction, maintenance: the workers' rounds */
	}
	CHECK(max_listed <= TIDES_MAX_DROPPED / 2 + 8);
	CHECK(busy_rounds == 0);
	many_check(&st, MANY_DROPS);
	fprintf(stderr, "test_drop_reclaim: many, with work: at most %u prefixes listed, %d drops busy, "
			"%u listed at the end\n", max_listed, busy_rounds, ndropped(&st));

	/* 2: drops with no work between them: busy when full, until work is done */
	max_listed = 0;
	for (uint32_t i = MANY_DROPS; i < 2 * MANY_DROPS && test_failures == 0; i++)
	{
		int			b;

		many_write(&st, i);
		b = many_drop(&st, i, &max_listed);
		busy_rounds += b > 0;
		busy_max = b > busy_max ? b : busy_max;
	}
	CHECK(busy_max <= 3);
	CHECK_OK(tides_seal_memtable(st.db));
	CHECK_OK(drain(st.db));
	CHECK(ndropped(&st) == 0);
	CHECK(nmarked(&st) == 0);
	many_check(&st, 2 * MANY_DROPS);
	verify_clean(st.db, "many");
	fprintf(stderr, "test_drop_reclaim: many, without work: at most %u listed, %d drops were busy "
			"(at most %d retries)\n", max_listed, busy_rounds, busy_max);

	store_crash(&st);
	CHECK_OK(store_open(&st));
	many_check(&st, 2 * MANY_DROPS);
	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(st.dir);
	else
		fprintf(stderr, "test_drop_reclaim: many: store kept in %s\n", st.dir);
	free(st.dir);
}

int
main(int argc, char **argv)
{
	const char *only = getenv("TEST_DROP_ONLY");

	test_init(argc, argv);
	batch = tides_batch_new();
	if (only == NULL || strcmp(only, "big") == 0)
		test_big();
	if (only == NULL || strcmp(only, "levels") == 0)
		test_levels();
	if (only == NULL || strcmp(only, "crash") == 0)
		test_crash();
	if (only == NULL || strcmp(only, "race") == 0)
		test_race();
	if (only == NULL || strcmp(only, "replay") == 0)
		test_replay();
	if (only == NULL || strcmp(only, "many") == 0)
		test_many();
	tides_batch_free(batch);
	return test_finish("test_drop_reclaim");
}
