/*
 * test_ingest.c -- ingestion of sorted data as table files (db/ingest.c).
 *
 *   placement   where installed files go: a new range to the bottom, above
 *               data of its range, below a level-0 file whose bounds merely
 *               span it, level 0 under keys in level 0, and BUSY while a
 *               memtable holds a key of the range;
 *   visibility  one sequence number for the whole install: snapshots and
 *               iterators from before do not see it, everything after sees
 *               all of it; tables built for ingestion report it on every
 *               read path (point reads, iterators, compaction outputs);
 *   model       TEST_OPS (default 200,000) random operations against an
 *               in-memory oracle: writes, deletes, batches, reads at the
 *               latest and at snapshots, iterator walks, held iterators,
 *               flushes, compactions, a dropped prefix, process crashes,
 *               and ingestions interleaved with all of them (writes into the
 *               range being ingested, partial installs, aborts, cuts);
 *   crash       TEST_CRASH_POINTS (default 150) simulated OS crashes at a
 *               random point of an ingestion and its install (and of the
 *               seal of its tag): afterwards all of it or none of it, all
 *               of it once install returned OK, no file left behind, the
 *               tag reported unsealed exactly when its files survived
 *               without a durable seal;
 *   faults      ENOSPC / EIO while building, stamping and installing: the
 *               install fails, nothing becomes visible, abort leaves no
 *               file, and the same load succeeds once the fault is gone;
 *   external    the external-log mode: ingestion works, tags are refused.
 */
#include "harness.h"
#include "vfs_fault.h"

#include <dirent.h>
#include <errno.h>

#define KEYS 6000
#define TREES 4				/* the last is written only by ingestions, in ascending runs */
#define MAX_SNAPS 4
#define MAX_HELD 2

static keyspace ks;
static store st;
static tides_rand rnd;
static uint64_t opno;

#define FAILF(...) \
	do { \
		test_failures++; \
		fprintf(stderr, "test_ingest: op %llu (seed %llu): ", (unsigned long long) opno, \
				(unsigned long long) test_seed); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
	} while (0)

static void
small_options(tides_options *o)
{
	tides_options_default(o);
	o->memtable_size = 64 << 10;
	o->memtable_count = 4;
	o->block_cache_size = 1 << 20;
	o->meta_size = 4 << 20;
	o->block_size = 1024;
	o->log_segment_size = 64 << 10;
	o->target_file_size = 64 << 10;
	o->level_base_size = 64 << 10;
	o->level_size_ratio = 4;
	o->level0_compaction_trigger = 3;
	o->level0_slowdown_trigger = 8;
	o->level0_stop_trigger = 14;
	o->delayed_write_rate = 0;
	o->max_open_files = 16;
	o->max_open_tags = 256;
	o->sync_mode = TIDES_SYNC_NONE;
}

/* .sst files in the directory */
static uint32_t
count_sst_files(const char *dir)
{
	DIR		   *d = opendir(dir);
	struct dirent *de;
	uint32_t	n = 0;

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
	{
		size_t		l = strlen(de->d_name);

		if (l > 4 && strcmp(de->d_name + l - 4, ".sst") == 0)
			n++;
	}
	closedir(d);
	return n;
}

static uint32_t
version_files(tides_db *db)
{
	tides_stats s;
	uint32_t	n = 0;

	tides_get_stats(db, &s);
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		n += s.level_files[l];
	return n;
}

static bool
write_one(tides_db *db, const void *k, size_t kl, const void *v, size_t vl, bool del)
{
	tides_batch *b = tides_batch_new();
	tides_status s = TIDES_BUSY;

	if (del)
		tides_batch_delete(b, k, kl);
	else
		tides_batch_put(b, k, kl, v, vl);
	for (int tries = 0; tries < 100000 && s == TIDES_BUSY; tries++)
	{
		tides_status e;

		s = tides_write(db, b, NULL);
		if (s == TIDES_BUSY)
			work_once(db, &e);
	}
	tides_batch_free(b);
	return s == TIDES_OK;
}

/* install, running flush work while a memtable holds keys of the range */
static tides_status
install(tides_ingest *in, tides_ingest_result *res, tides_db *db)
{
	tides_status s = TIDES_BUSY;

	for (int tries = 0; tries < 10000 && s == TIDES_BUSY; tries++)
	{
		tides_status e;

		s = tides_ingest_install(in, res);
		if (s == TIDES_BUSY)
			for (int i = 0; i < 4; i++)
				work_once(db, &e);
	}
	return s;
}

static bool
get_is(tides_db *db, const tides_snapshot *snap, const void *k, size_t kl, const char *want)
{
	void	   *v = NULL;
	size_t		vl = 0;
	tides_status s = tides_get(db, snap, k, kl, &v, &vl);
	bool		ok;

	if (want == NULL)
		ok = s == TIDES_NOT_FOUND;
	else
		ok = s == TIDES_OK && vl == strlen(want) && memcmp(v, want, vl) == 0;
	free(v);
	return ok;
}

/* ------------------------------------------------------------- placement */

static size_t
pkey(char *buf, int tree, int row)
{
	return (size_t) sprintf(buf, "%c/%06d", 'a' + tree, row);
}

static int
ingest_rows(tides_db *db, int tree, int from, int to, int step, const char *val,
			tides_ingest_result *res)
{
	tides_ingest *in;
	char		k[32];
	tides_status s;

	CHECK_OK(tides_ingest_begin(db, &in));
	for (int r = from; r < to; r += step)
		CHECK_OK(tides_ingest_put(in, k, pkey(k, tree, r), val, strlen(val)));
	CHECK(tides_ingest_pending_entries(in) == (uint64_t) ((to - from + step - 1) / step));
	s = install(in, res, db);
	CHECK_OK(s);
	tides_ingest_free(in);
	return res->level;
}

#define LONGVAL "long value: 0123456789 abcdefghijklmnopqrstuvwxyz 0123456789 abcdefghijklmnopqrstuvwxyz"

static void
test_placement(void)
{
	tides_ingest_result res;
	tides_ingest *in;
	char		k[32];
	int			quiet = 0;
	tides_snapshot snap;
	tides_iter *it;
	uint64_t	n;

	memset(&st, 0, sizeof(st));
	small_options(&st.opts);
	/* uncompressed, so that LONGVAL rows fill files (ingested files take the bottommost setting) */
	st.opts.compression = TIDES_COMPRESS_NONE;
	st.opts.bottommost_compression = TIDES_COMPRESS_NONE;
	st.dir = fast_tmpdir("ingest-place");
	CHECK_OK(store_open(&st));

	/* an empty store: the bottom */
	CHECK(ingest_rows(st.db, 0, 0, 2000, 1, "one", &res) == TIDES_MAX_LEVELS - 1);
	CHECK(res.entries == 2000);
	CHECK(ingest_rows(st.db, 0, 4000, 6000, 1, LONGVAL, &res) == TIDES_MAX_LEVELS - 1);
	CHECK(res.files > 1);		/* cut at target_file_size */
	/* a new range next to it: the bottom too */
	CHECK(ingest_rows(st.db, 0, 2000, 2500, 1, "two", &res) == TIDES_MAX_LEVELS - 1);
	/* over data: above it, newer */
	CHECK(ingest_rows(st.db, 0, 100, 300, 2, "three", &res) == TIDES_MAX_LEVELS - 2);
	CHECK(get_is(st.db, NULL, k, pkey(k, 0, 100), "three"));
	CHECK(get_is(st.db, NULL, k, pkey(k, 0, 101), "one"));
	CHECK(get_is(st.db, NULL, k, pkey(k, 0, 2100), "two"));

	/* a memtable holding a key of the range: BUSY, then the flushed file's level 0 */
	CHECK(write_one(st.db, k, pkey(k, 1, 50), "mem", 3, false));
	CHECK_OK(tides_ingest_begin(st.db, &in));
	for (int r = 0; r < 100; r++)
		CHECK_OK(tides_ingest_put(in, k, pkey(k, 1, r), "four", 4));
	CHECK(tides_ingest_install(in, &res) == TIDES_BUSY);
	CHECK(tides_ingest_pending_entries(in) == 100);
	CHECK(get_is(st.db, NULL, k, pkey(k, 1, 50), "mem"));
	CHECK_OK(install(in, &res, st.db));
	CHECK(res.level == 0);		/* the flushed memtable is on level 0 (with tree 1's key) */
	tides_ingest_free(in);
	CHECK(get_is(st.db, NULL, k, pkey(k, 1, 50), "four"));
	CHECK(get_is(st.db, NULL, k, pkey(k, 1, 99), "four"));

	/* a level-0 file whose bounds span the range without a key in it: below it */
	CHECK(write_one(st.db, k, pkey(k, 2, 0), "lo", 2, false));
	CHECK(write_one(st.db, k, pkey(k, 2, 900), "hi", 2, false));
	for (int i = 0; i < 100 && tides_seal_memtable(st.db) == TIDES_BUSY; i++)
		drain(st.db);
	{
		bool		did = true;

		for (int i = 0; i < 100 && did; i++)
			CHECK_OK(tides_flush_work(st.db, &did));
	}
	CHECK(ingest_rows(st.db, 2, 100, 800, 1, "five", &res) > 0);
	CHECK(get_is(st.db, NULL, k, pkey(k, 2, 0), "lo"));
	CHECK(get_is(st.db, NULL, k, pkey(k, 2, 500), "five"));

	/* visibility: a snapshot and an iterator from before do not see the next install */
	CHECK_OK(tides_snapshot_acquire(st.db, &snap));
	it = tides_iter_new(st.db, NULL);
	CHECK(ingest_rows(st.db, 2, 3000, 3400, 1, "six", &res) >= 0);
	CHECK(res.seq > snap.seq);
	CHECK(get_is(st.db, &snap, k, pkey(k, 2, 3100), NULL));
	CHECK(get_is(st.db, NULL, k, pkey(k, 2, 3100), "six"));
	pkey(k, 2, 3000);
	tides_iter_seek(it, k, strlen(k));
	CHECK(!tides_iter_valid(it));
	tides_iter_free(it);
	{
		tides_iter_options o = {0};

		o.snap = &snap;
		it = tides_iter_new(st.db, &o);
		tides_iter_seek(it, k, strlen(k));
		CHECK(!tides_iter_valid(it));
		tides_iter_free(it);
	}
	/* ...until compaction has moved everything: then still not, the seq went with it */
	{
		tides_full_compaction fc;
		bool		done = false,
					did;

		for (int i = 0; i < 100 && tides_seal_memtable(st.db) == TIDES_BUSY; i++)
			drain(st.db);
		drain(st.db);
		tides_full_compaction_begin(st.db, &fc);
		for (int i = 0; i < 10000 && !done; i++)
			CHECK_OK(tides_full_compaction_step(st.db, &fc, &done, &did));
	}
	CHECK(get_is(st.db, &snap, k, pkey(k, 2, 3100), NULL));
	CHECK(get_is(st.db, &snap, k, pkey(k, 1, 60), "four"));
	CHECK(get_is(st.db, NULL, k, pkey(k, 1, 60), "four"));
	tides_snapshot_release(st.db, &snap);
	it = tides_iter_new(st.db, NULL);
	n = 0;
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
		n++;
	CHECK(tides_iter_status(it) == TIDES_OK);
	tides_iter_free(it);
	CHECK(n == 2500 + 2000 + 100 + 2 + 700 + 400);

	/* keys out of order and bad keys fail, stickily; abort leaves no file */
	CHECK_OK(tides_ingest_begin(st.db, &in));
	CHECK_OK(tides_ingest_put(in, "z/2", 3, "x", 1));
	CHECK(tides_ingest_put(in, "z/1", 3, "x", 1) == TIDES_INVALID);
	CHECK(tides_ingest_put(in, "z/3", 3, "x", 1) == TIDES_INVALID);
	CHECK(tides_ingest_install(in, &res) == TIDES_INVALID);
	tides_ingest_abort(in);
	CHECK_OK(tides_ingest_begin(st.db, &in));
	CHECK_OK(tides_ingest_put(in, "z/1", 3, "x", 1));
	CHECK(tides_ingest_put(in, "z/1", 3, "x", 1) == TIDES_INVALID);
	tides_ingest_abort(in);
	drain(st.db);
	CHECK(count_sst_files(st.dir) == version_files(st.db));

	/* an empty install does nothing */
	CHECK_OK(tides_ingest_begin(st.db, &in));
	CHECK_OK(tides_ingest_install(in, &res));
	CHECK(res.seq == 0 && res.files == 0);
	tides_ingest_free(in);

	CHECK(tides_verify(st.db, report_problem, &quiet) == 0);
	/* recovery keeps it all */
	store_crash(&st);
	CHECK_OK(store_open(&st));
	CHECK(get_is(st.db, NULL, k, pkey(k, 1, 60), "four"));
	CHECK(get_is(st.db, NULL, k, pkey(k, 2, 3399), "six"));
	CHECK(get_is(st.db, NULL, k, pkey(k, 0, 102), "three"));
	CHECK(tides_verify(st.db, report_problem, &quiet) == 0);
	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(st.dir);
	free(st.dir);
	fprintf(stderr, "test_ingest: placement and visibility done\n");
}

/* ------------------------------------------------------------------ model */

typedef struct msnap
{
	bool		used;
	tides_snapshot s;
	uint32_t   *vers;
} msnap;

typedef struct mheld
{
	bool		used;
	tides_iter *it;
	uint32_t   *vers;
} mheld;

static uint32_t *cur;
static uint32_t *nextver;
static uint32_t fresh_lo;		/* first rank of the last tree */
static uint32_t fresh_next;		/* where the next ascending run starts */
static msnap snaps[MAX_SNAPS];
static mheld held[MAX_HELD];
static struct
{
	uint64_t	ingests,
				ingested,
				installs,
				aborts,
				busy,
				partial,
				restarts,
				levels[TIDES_MAX_LEVELS],
				files;
}			mc;

static void
model_background(void)
{
	tides_status s;

	work_once(st.db, &s);
	if (s != TIDES_OK)
		FAILF("background work: %s: %s", tides_status_name(s), tides_errmsg(st.db));
}

static uint32_t
write_rank(void)
{
	return (uint32_t) tides_rand_uniform(&rnd, fresh_lo);
}

static uint32_t
new_version(uint32_t r)
{
	return nextver[r]++;
}

static void
model_write(uint32_t r, bool del)
{
	uint8_t		val[KS_MAX_VALUE];
	uint32_t	v = del ? 0 : new_version(r);
	size_t		n = del ? 0 : ks_value(r, v, true, val);

	if (write_one(st.db, ks.key[r], ks.len[r], val, n, del))
		cur[r] = v;
	else
		FAILF("write: %s", tides_errmsg(st.db));
}

static void
model_batch(void)
{
	tides_batch *b = tides_batch_new();
	uint32_t	n = 2 + (uint32_t) tides_rand_uniform(&rnd, 10);
	uint32_t	ranks[16],
				vers[16];
	tides_status s = TIDES_BUSY;

	for (uint32_t i = 0; i < n; i++)
	{
		uint8_t		val[KS_MAX_VALUE];

		ranks[i] = write_rank();
		vers[i] = tides_rand_uniform(&rnd, 5) == 0 ? 0 : new_version(ranks[i]);
		if (vers[i] == 0)
			tides_batch_delete(b, ks.key[ranks[i]], ks.len[ranks[i]]);
		else
			tides_batch_put(b, ks.key[ranks[i]], ks.len[ranks[i]], val,
							ks_value(ranks[i], vers[i], true, val));
	}
	for (int t = 0; t < 100000 && s == TIDES_BUSY; t++)
	{
		s = tides_write(st.db, b, NULL);
		if (s == TIDES_BUSY)
			model_background();
	}
	if (s == TIDES_OK)
		for (uint32_t i = 0; i < n; i++)
			cur[ranks[i]] = vers[i];
	else
		FAILF("batch: %s", tides_errmsg(st.db));
	tides_batch_free(b);
}

static void
check_get(uint32_t r, const uint32_t *vers, const tides_snapshot *snap, const char *what)
{
	void	   *v = NULL;
	size_t		n = 0;
	tides_status s = tides_get(st.db, snap, ks.key[r], ks.len[r], &v, &n);

	if (vers[r] == 0 ? s != TIDES_NOT_FOUND : (s != TIDES_OK || !ks_value_is(r, vers[r], true, v, n)))
	{
		FAILF("%s of rank %u: want %s version %u, got %s", what, r, vers[r] ? "present" : "absent",
			  vers[r], tides_status_name(s));
		if (s == TIDES_OK && n >= 8)
			fprintf(stderr, "    value names rank %u version %u\n", tides_get32(v),
					tides_get32((uint8_t *) v + 4));
	}
	free(v);
}

/* walk it from the first key (or from a random key) forward, against vers */
static void
check_walk(tides_iter *it, const uint32_t *vers, const char *what, bool from_random)
{
	uint32_t	r = from_random ? (uint32_t) tides_rand_uniform(&rnd, ks.n) : 0;
	int			steps = from_random ? 1 + (int) tides_rand_uniform(&rnd, 60) : 1 << 30;

	if (from_random)
		tides_iter_seek(it, ks.key[r], ks.len[r]);
	else
		tides_iter_first(it);
	for (int i = 0; i < steps; i++)
	{
		size_t		kl,
					vl;
		const void *k,
				   *v;

		while (r < ks.n && vers[r] == 0)
			r++;
		if (!tides_iter_valid(it))
		{
			if (tides_iter_status(it) != TIDES_OK)
				FAILF("%s: iterator error: %s", what, tides_errmsg(st.db));
			else if (r < ks.n)
				FAILF("%s: iterator ended, oracle has rank %u", what, r);
			return;
		}
		k = tides_iter_key(it, &kl);
		v = tides_iter_value(it, &vl);
		if (r >= ks.n || ks_cmp_raw(k, kl, ks.key[r], ks.len[r]) != 0 ||
			!ks_value_is(r, vers[r], true, v, vl))
		{
			FAILF("%s: iterator and oracle differ at oracle rank %u (version %u)", what, r,
				  r < ks.n ? vers[r] : 0);
			return;
		}
		r++;
		tides_iter_next(it);
	}
}

static void
model_snapshot(void)
{
	msnap	   *s = &snaps[tides_rand_uniform(&rnd, MAX_SNAPS)];

	if (s->used)
	{
		for (int i = 0; i < 20; i++)
			check_get((uint32_t) tides_rand_uniform(&rnd, ks.n), s->vers, &s->s, "get(snapshot)");
		tides_snapshot_release(st.db, &s->s);
		free(s->vers);
		s->used = false;
		return;
	}
	CHECK_OK(tides_snapshot_acquire(st.db, &s->s));
	s->vers = malloc(ks.n * sizeof(uint32_t));
	memcpy(s->vers, cur, ks.n * sizeof(uint32_t));
	s->used = true;
}

static void
model_held(void)
{
	mheld	   *h = &held[tides_rand_uniform(&rnd, MAX_HELD)];

	if (h->used)
	{
		check_walk(h->it, h->vers, "held iterator", tides_rand_uniform(&rnd, 3) != 0);
		tides_iter_free(h->it);
		free(h->vers);
		h->used = false;
		return;
	}
	h->it = tides_iter_new(st.db, NULL);
	h->vers = malloc(ks.n * sizeof(uint32_t));
	memcpy(h->vers, cur, ks.n * sizeof(uint32_t));
	h->used = true;
}

static void
model_scan(void)
{
	int			i = (int) tides_rand_uniform(&rnd, MAX_SNAPS);
	tides_iter_options o = {0};
	tides_iter *it;

	o.snap = snaps[i].used ? &snaps[i].s : NULL;
	it = tides_iter_new(st.db, &o);
	check_walk(it, snaps[i].used ? snaps[i].vers : cur, snaps[i].used ? "scan(snapshot)" : "scan", true);
	tides_iter_free(it);
}

static void
release_all(void)
{
	for (int i = 0; i < MAX_SNAPS; i++)
		if (snaps[i].used)
		{
			tides_snapshot_release(st.db, &snaps[i].s);
			free(snaps[i].vers);
			snaps[i].used = false;
		}
	for (int i = 0; i < MAX_HELD; i++)
		if (held[i].used)
		{
			tides_iter_free(held[i].it);
			free(held[i].vers);
			held[i].used = false;
		}
}

/* a read or write while an ingestion is being built (maybe into its range) */
static void
model_other_op(uint32_t near)
{
	uint64_t	p = tides_rand_uniform(&rnd, 10);
	uint32_t	r = tides_rand_uniform(&rnd, 2) == 0 || near >= fresh_lo ? write_rank() :
		(near + (uint32_t) tides_rand_uniform(&rnd, 50)) % fresh_lo;

	if (p < 3)
		model_write(r, tides_rand_uniform(&rnd, 4) == 0);
	else if (p < 4)
		model_batch();
	else if (p < 6)
		check_get(r, cur, NULL, "get");
	else if (p < 7)
		model_snapshot();
	else if (p < 8)
		model_scan();
	else
		model_background();
}

static void
apply_installed(const uint32_t *ranks, const uint32_t *vers, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		cur[ranks[i]] = vers[i];
}

static bool
model_install(tides_ingest *in)
{
	tides_ingest_result res;
	tides_status s = TIDES_BUSY;

	for (int tries = 0; tries < 100000 && s == TIDES_BUSY; tries++)
	{
		s = tides_ingest_install(in, &res);
		if (s == TIDES_BUSY)
		{
			mc.busy++;
			model_background();
			if (tries == 1000)
				release_all();	/* held iterators pin memtables */
		}
	}
	if (s != TIDES_OK)
	{
		FAILF("install: %s: %s", tides_status_name(s), tides_errmsg(st.db));
		return false;
	}
	mc.installs++;
	if (res.files > 0)
		mc.levels[res.level]++;
	mc.files += res.files;
	return true;
}

static void
model_ingest(void)
{
	tides_ingest *in;
	bool		fresh = fresh_next < ks.n && tides_rand_uniform(&rnd, 3) == 0;
	uint32_t	r = fresh ? fresh_next : write_rank();
	uint32_t	end = fresh ? ks.n : fresh_lo;	/* the last tree only in ascending runs */
	uint32_t	n = 1 + (uint32_t) tides_rand_uniform(&rnd, fresh ? 60 : tides_rand_uniform(&rnd, 4) == 0 ? 1500 : 200);
	uint32_t	step = 1 + (uint32_t) tides_rand_uniform(&rnd, fresh ? 2 : 4);
	uint32_t   *ranks = malloc(n * sizeof(uint32_t));
	uint32_t   *vers = malloc(n * sizeof(uint32_t));
	uint32_t	np = 0;
	bool		ok = true;

	CHECK_OK(tides_ingest_begin(st.db, &in));
	mc.ingests++;
	for (uint32_t i = 0; i < n && r < end && ok; i++, r += step)
	{
		uint8_t		val[KS_MAX_VALUE];
		uint32_t	v = tides_rand_uniform(&rnd, 8) == 0 ? 0 : new_version(r);
		tides_status s = v == 0 ? tides_ingest_delete(in, ks.key[r], ks.len[r]) :
			tides_ingest_put(in, ks.key[r], ks.len[r], val, ks_value(r, v, true, val));

		if (s != TIDES_OK)
		{
			FAILF("ingest put: %s: %s", tides_status_name(s), tides_errmsg(st.db));
			ok = false;
			break;
		}
		ranks[np] = r;
		vers[np++] = v;
		mc.ingested++;
		if (r >= fresh_next)
			fresh_next = r + 1;
		if (tides_rand_uniform(&rnd, 60) == 0)
			CHECK_OK(tides_ingest_cut(in));
		if (tides_rand_uniform(&rnd, 20) == 0)
			model_other_op(r);
		if (tides_rand_uniform(&rnd, 300) == 0)
		{
			/* part of it now; the rest continues above */
			ok = model_install(in);
			if (ok)
				apply_installed(ranks, vers, np);
			np = 0;
			mc.partial++;
		}
	}
	if (ok && tides_rand_uniform(&rnd, 10) == 0)
	{
		tides_ingest_abort(in);
		mc.aborts++;
	}
	else
	{
		if (ok && model_install(in))
			apply_installed(ranks, vers, np);
		tides_ingest_free(in);
	}
	free(ranks);
	free(vers);
}

static void
model_restart(void)
{
	int			quiet = 0;

	release_all();
	if (tides_verify(st.db, report_problem, &quiet) != 0)
		FAILF("tides_verify found problems before a restart");
	store_crash(&st);
	if (store_open(&st) != TIDES_OK)
	{
		FAILF("recovery: %s", st.db ? tides_errmsg(st.db) : "");
		exit(test_finish("test_ingest"));
	}
	mc.restarts++;
	{
		tides_iter *it = tides_iter_new(st.db, NULL);

		check_walk(it, cur, "full scan after restart", false);
		tides_iter_free(it);
	}
	if (count_sst_files(st.dir) != version_files(st.db))
		FAILF("after recovery %u table files on disk, %u in the store", count_sst_files(st.dir),
			  version_files(st.db));
}

static void
test_model(void)
{
	uint64_t	nops = env_u64("TEST_OPS", 200000);
	int			quiet = 0;

	ks_init(&ks, KEYS, TREES, test_seed);
	cur = calloc(ks.n, sizeof(uint32_t));
	nextver = malloc(ks.n * sizeof(uint32_t));
	for (uint32_t i = 0; i < ks.n; i++)
		nextver[i] = 1;
	{
		uint8_t		t[8];

		tides_put_be64(t, TREES - 1);
		fresh_lo = fresh_next = ks_lower_bound(&ks, t, 8);
	}
	memset(&st, 0, sizeof(st));
	small_options(&st.opts);
	st.dir = fast_tmpdir("ingest-model");
	tides_rand_seed(&rnd, test_seed * 0x9E3779B97F4A7C15ull + 17);
	if (store_open(&st) != TIDES_OK)
	{
		FAILF("open failed");
		return;
	}
	for (opno = 1; opno <= nops && test_failures < 20; opno++)
	{
		uint64_t	p = tides_rand_uniform(&rnd, 1000);

		if (p < 250)
			model_write(write_rank(), false);
		else if (p < 320)
			model_write(write_rank(), true);
		else if (p < 360)
			model_batch();
		else if (p < 600)
			check_get((uint32_t) tides_rand_uniform(&rnd, ks.n), cur, NULL, "get");
		else if (p < 680)
		{
			int			i = (int) tides_rand_uniform(&rnd, MAX_SNAPS);

			if (snaps[i].used)
				check_get((uint32_t) tides_rand_uniform(&rnd, ks.n), snaps[i].vers, &snaps[i].s,
						  "get(snapshot)");
		}
		else if (p < 740)
			model_scan();
		else if (p < 750)
			model_snapshot();
		else if (p < 753)
			model_held();
		else if (p < 758)
			(void) tides_seal_memtable(st.db);
		else if (p < 770)
			model_ingest();
		else if (p < 771)
		{
			tides_full_compaction fc;
			bool		done = false,
						did;

			tides_full_compaction_begin(st.db, &fc);
			for (int i = 0; i < 100000 && !done; i++)
			{
				tides_status s = tides_full_compaction_step(st.db, &fc, &done, &did);

				if (s != TIDES_OK)
				{
					FAILF("full compaction: %s", tides_errmsg(st.db));
					break;
				}
			}
		}
		if (opno % 16 == 0)
			model_background();
		if (opno == nops / 3 || opno == 2 * nops / 3)
			model_restart();
		if (opno == nops / 2)
		{
			uint8_t		prefix[8];

			tides_put_be64(prefix, 1);
			if (tides_drop_prefix(st.db, prefix, 8) == TIDES_OK)
				for (uint32_t r = 0; r < ks.n; r++)
					if (memcmp(ks.key[r], prefix, 8) == 0)
					{
						cur[r] = 0;
						for (int i = 0; i < MAX_SNAPS; i++)
							if (snaps[i].used)
								snaps[i].vers[r] = 0;
					}
		}
		if (opno % 20000 == 0)
		{
			tides_iter *it = tides_iter_new(st.db, NULL);

			check_walk(it, cur, "periodic full scan", false);
			tides_iter_free(it);
		}
	}
	for (int i = 0; i < 100 && tides_seal_memtable(st.db) == TIDES_BUSY; i++)
		drain(st.db);
	drain(st.db);
	{
		tides_iter *it = tides_iter_new(st.db, NULL);

		check_walk(it, cur, "final full scan", false);
		tides_iter_free(it);
	}
	if (tides_verify(st.db, report_problem, &quiet) != 0)
		FAILF("tides_verify found problems");
	model_restart();
	release_all();
	fprintf(stderr, "test_ingest: model: %llu ops, %llu ingestions (%llu entries, %llu installs, "
			"%llu partial, %llu aborted, %llu files, %llu busy), %llu restarts; installs by level:",
			(unsigned long long) nops, (unsigned long long) mc.ingests,
			(unsigned long long) mc.ingested, (unsigned long long) mc.installs,
			(unsigned long long) mc.partial, (unsigned long long) mc.aborts,
			(unsigned long long) mc.files, (unsigned long long) mc.busy,
			(unsigned long long) mc.restarts);
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		fprintf(stderr, " %llu", (unsigned long long) mc.levels[l]);
	fputc('\n', stderr);
	if (nops >= 50000 && (mc.levels[0] == 0 || mc.levels[TIDES_MAX_LEVELS - 1] == 0))
		FAILF("installs never reached level 0 or the bottom");
	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(st.dir);
	else
		fprintf(stderr, "test_ingest: store kept in %s\n", st.dir);
	free(st.dir);
	free(cur);
	free(nextver);
	ks_free(&ks);
}

/* ------------------------------------------------------------------ crash */

static tides_vfs_fault *vf;

static bool
frozen(void)
{
	return tides_vfs_fault_frozen(vf);
}

static size_t
crash_value(char *buf, int gen, int row)
{
	size_t		n = (size_t) sprintf(buf, "g%d/r%d/", gen, row);

	while (n < 40 + (size_t) (row % 100))
	{
		buf[n] = (char) ('a' + (row + gen + (int) n) % 26);
		n++;
	}
	return n;
}

/* which generation does each row hold?  -1: absent, -2: some other value */
static int
row_gen(int row, int ngens)
{
	char		k[32],
				want[256];
	void	   *v = NULL;
	size_t		vl = 0;
	tides_status s = tides_get(st.db, NULL, k, pkey(k, 0, row), &v, &vl);
	int			g = -2;

	if (s == TIDES_NOT_FOUND)
		g = -1;
	else if (s == TIDES_OK)
		for (int i = 0; i < ngens && g == -2; i++)
		{
			size_t		n = crash_value(want, i, row);

			if (n == vl && memcmp(want, v, n) == 0)
				g = i;
		}
	else
		FAILF("get: %s: %s", tides_status_name(s), tides_errmsg(st.db));
	free(v);
	return g;
}

static void
test_crash(void)
{
	int			points = (int) env_u64("TEST_CRASH_POINTS", 150);
	uint64_t	per_life = 0;
	struct
	{
		uint64_t	installed,
					lost,
					kept,
					unsealed,
					sealed;
	}			cc = {0};

	memset(&st, 0, sizeof(st));
	small_options(&st.opts);
	st.opts.sync_mode = TIDES_SYNC_FULL;
	tides_rand_seed(&rnd, test_seed * 31 + 5);
	for (int point = 0; point < points && test_failures < 10; point++)
	{
		int			rows = 300 + (int) tides_rand_uniform(&rnd, 1500);
		int			from = (int) tides_rand_uniform(&rnd, 2000);
		int			gens = 2;
		int		   *before = malloc(4000 * sizeof(int));
		tides_ingest *in = NULL;
		tides_ingest_result res;
		tides_status s = TIDES_OK;
		bool		installed = false,
					sealed = false,
					seal_tried = false;
		uint64_t	tag = 1000 + (uint64_t) point;
		uint64_t	start;
		unsigned	keep;
		int			quiet = 1;

		opno = (uint64_t) point;
		if (st.dir != NULL)
		{
			store_crash(&st);
			test_rmdir(st.dir);
			free(st.dir);
		}
		tides_vfs_fault_free(vf);
		vf = tides_vfs_fault_new(NULL, test_seed ^ (uint64_t) point * 977);
		st.vfs = tides_vfs_fault_vfs(vf);
		st.dir = fast_tmpdir("ingest-crash");
		if (store_open(&st) != TIDES_OK)
		{
			FAILF("cannot create a store");
			break;
		}
		/* generation 0: every other row of [0, 4000), durable (full mode), partly in files */
		for (int r = 0; r < 4000; r += 2)
		{
			char		k[32],
						v[256];

			write_one(st.db, k, pkey(k, 0, r), v, crash_value(v, 0, r), false);
			if (r % 500 == 0)
				drain(st.db);
		}
		if (tides_rand_uniform(&rnd, 2) == 0)
		{
			for (int i = 0; i < 100 && tides_seal_memtable(st.db) == TIDES_BUSY; i++)
				drain(st.db);
			drain(st.db);
		}
		for (int r = 0; r < 4000; r++)
			before[r] = row_gen(r, gens);

		/* generation 1, ingested over [from, from + rows) with a tag, then sealed */
		start = tides_vfs_fault_mutations(vf);
		if (per_life > 0)
			tides_vfs_fault_freeze_after(vf, tides_rand_uniform(&rnd, per_life + per_life / 8));
		s = tides_ingest_begin(st.db, &in);
		if (s == TIDES_OK)
			tides_ingest_set_tag(in, tag);
		for (int r = from; r < from + rows && s == TIDES_OK; r++)
		{
			char		k[32],
						v[256];

			s = tides_ingest_put(in, k, pkey(k, 0, r), v, crash_value(v, 1, r));
		}
		if (s == TIDES_OK)
		{
			/* make room: the memtable holds generation 0 keys of the range */
			for (int i = 0; i < 100 && !frozen() && tides_seal_memtable(st.db) == TIDES_BUSY; i++)
				drain(st.db);
			s = install(in, &res, st.db);
			installed = s == TIDES_OK;
		}
		if (installed)
		{
			tides_batch *b = tides_batch_new();

			tides_batch_set_tag(b, tag, true);
			seal_tried = true;	/* a failed write may still have reached the log */
			sealed = tides_write(st.db, b, NULL) == TIDES_OK;	/* full mode: durable */
			tides_batch_free(b);
		}
		if (s != TIDES_OK && !frozen())
			FAILF("ingestion failed without a crash: %s: %s", tides_status_name(s), tides_errmsg(st.db));
		if (!frozen())
		{
			uint64_t	used = tides_vfs_fault_mutations(vf) - start;

			per_life = per_life ? (per_life * 3 + used) / 4 : used;
		}
		if (in != NULL)
		{
			if (installed)
				tides_ingest_free(in);
			else
				tides_ingest_abort(in);
		}

		/* the machine dies */
		keep = tides_rand_uniform(&rnd, 3) == 0 ? 20 + (unsigned) tides_rand_uniform(&rnd, 70) : 0;
		if (tides_vfs_fault_crash(vf, keep) != 0)
			FAILF("vfs crash restore failed");
		store_crash(&st);
		s = store_open(&st);
		if (s != TIDES_OK)
		{
			FAILF("recovery failed: %s: %s", tides_status_name(s), st.db ? tides_errmsg(st.db) : "");
			free(before);
			continue;
		}
		{
			int			nnew = 0,
						nold = 0;
			bool		unsealed = false;

			for (uint32_t i = 0; i < st.info.n_unsealed_tags; i++)
				unsealed |= st.info.unsealed_tags[i] == tag;
			for (int r = 0; r < 4000; r++)
			{
				int			g = row_gen(r, gens);

				if (r >= from && r < from + rows)
				{
					if (g == 1)
						nnew++;
					else if (g == before[r])
						nold++;
					else
						FAILF("row %d holds generation %d, before %d", r, g, before[r]);
				}
				else if (g != before[r])
					FAILF("row %d outside the range changed: generation %d, before %d", r, g, before[r]);
			}
			if (nnew != 0 && nold != 0)
				FAILF("ingestion partly there after a crash: %d rows new, %d old", nnew, nold);
			if (installed && nnew != rows)
				FAILF("install returned OK but the ingestion is gone after a crash");
			if (nnew == rows && !seal_tried && !unsealed)
				FAILF("the ingestion survived without its seal, and its tag %llu is not reported unsealed",
					  (unsigned long long) tag);
			if (sealed && unsealed)
				FAILF("tag %llu was sealed durably, yet reported unsealed", (unsigned long long) tag);
			if (nnew == rows)
				cc.kept++;
			else
				cc.lost++;
			cc.installed += installed;
			cc.unsealed += unsealed;
			cc.sealed += sealed;
			if (st.info.n_unsealed_tags > 0)
				CHECK_OK(tides_settle_tags(st.db, st.info.unsealed_tags, st.info.n_unsealed_tags));
		}
		if (count_sst_files(st.dir) != version_files(st.db))
			FAILF("after recovery %u table files on disk, %u in the store", count_sst_files(st.dir),
				  version_files(st.db));
		quiet = 0;
		if (tides_verify(st.db, report_problem, &quiet) != 0)
			FAILF("tides_verify found problems after recovery");
		free(before);
	}
	if (st.db != NULL)
		store_crash(&st);
	if (st.dir != NULL)
	{
		if (test_failures == 0)
			test_rmdir(st.dir);
		free(st.dir);
		st.dir = NULL;
	}
	tides_vfs_fault_free(vf);
	vf = NULL;
	st.vfs = NULL;
	fprintf(stderr, "test_ingest: crash: %d points: %llu installed, %llu sealed, ingestion kept %llu times "
			"(%llu of them reported unsealed), lost %llu times\n", points,
			(unsigned long long) cc.installed, (unsigned long long) cc.sealed,
			(unsigned long long) cc.kept, (unsigned long long) cc.unsealed,
			(unsigned long long) cc.lost);
	if (points >= 50 && (cc.kept == 0 || cc.lost == 0 || cc.unsealed == 0))
		FAILF("the crash points missed a case (kept %llu, lost %llu, unsealed %llu)",
			  (unsigned long long) cc.kept, (unsigned long long) cc.lost, (unsigned long long) cc.unsealed);
}

/* ----------------------------------------------------------------- faults */

typedef struct fault_case
{
	const char *name;
	int			ops;
	const char *pattern;
	int			err;
	bool		torn;
} fault_case;

static void
test_faults(void)
{
	static const fault_case cases[] = {
		{"ENOSPC writing a table", TIDES_FAULT_WRITE, ".sst", ENOSPC, true},
		{"EIO writing a table", TIDES_FAULT_WRITE, ".sst", EIO, true},
		{"ENOSPC creating a table", TIDES_FAULT_CREATE, ".sst", ENOSPC, false},
		{"EIO syncing a table", TIDES_FAULT_SYNC, ".sst", EIO, false},
		{"EIO opening a table", TIDES_FAULT_OPEN, ".sst", EIO, false},
		{"EIO reading a table", TIDES_FAULT_READ, ".sst", EIO, false},
		{"EIO appending to the manifest", TIDES_FAULT_WRITE, "MANIFEST", EIO, true},
		{"EIO syncing the manifest", TIDES_FAULT_SYNC, "MANIFEST", EIO, false},
		{"EIO syncing the directory", TIDES_FAULT_SYNC_DIR, NULL, EIO, false},
	};
	uint64_t	failed_installs = 0,
				ok_installs = 0;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		for (int skip = 0; skip < 6; skip++)
		{
			tides_fault_rule rule = {0};
			tides_ingest *in = NULL;
			tides_ingest_result res;
			tides_status s;
			int			quiet = 0;
			int			rows = 1500;
			int			nnew = 0;
			char		k[32],
						v[256];

			opno = c * 100 + (uint64_t) skip;
			memset(&st, 0, sizeof(st));
			small_options(&st.opts);
			vf = tides_vfs_fault_new(NULL, test_seed + c * 7 + (uint64_t) skip);
			st.vfs = tides_vfs_fault_vfs(vf);
			st.dir = fast_tmpdir("ingest-fault");
			CHECK_OK(store_open(&st));
			for (int r = 0; r < 3000; r += 3)
				write_one(st.db, k, pkey(k, 0, r), v, crash_value(v, 0, r), false);
			for (int i = 0; i < 100 && tides_seal_memtable(st.db) == TIDES_BUSY; i++)
				drain(st.db);
			drain(st.db);

			rule.ops = cases[c].ops;
			rule.pattern = cases[c].pattern;
			/* one manifest append and one directory sync per install */
			rule.skip = (cases[c].pattern != NULL && strcmp(cases[c].pattern, "MANIFEST") == 0) ||
				cases[c].ops == TIDES_FAULT_SYNC_DIR ? 0 : (uint64_t) skip;
			rule.count = 1 + (uint64_t) (skip % 2);
			rule.err = cases[c].err;
			rule.torn = cases[c].torn;
			rule.sync_loses = skip % 2 == 1;
			tides_vfs_fault_add_rule(vf, &rule);

			s = tides_ingest_begin(st.db, &in);
			for (int r = 1000; r < 1000 + rows && s == TIDES_OK; r++)
				s = tides_ingest_put(in, k, pkey(k, 0, r), v, crash_value(v, 1, r));
			if (s == TIDES_OK)
				s = install(in, &res, st.db);
			tides_vfs_fault_clear_rules(vf);
			if (s == TIDES_OK)
			{
				ok_installs++;
				tides_ingest_free(in);
			}
			else
			{
				failed_installs++;
				if (s == TIDES_BUSY || s == TIDES_INVALID)
					FAILF("%s: the ingestion failed with %s", cases[c].name, tides_status_name(s));
				/* failed for good: sticky */
				if (tides_ingest_install(in, &res) == TIDES_OK)
					FAILF("%s: a failed ingestion installed on a second try", cases[c].name);
				tides_ingest_abort(in);
			}
			for (int r = 1000; r < 1000 + rows; r++)
				nnew += row_gen(r, 2) == 1;
			if (s == TIDES_OK ? nnew != rows : nnew != 0)
				FAILF("%s (skip %d): install %s, %d of %d rows visible", cases[c].name, skip,
					  tides_status_name(s), nnew, rows);
			drain(st.db);
			if (count_sst_files(st.dir) > version_files(st.db) + (s == TIDES_OK ? 0 : 8))
				FAILF("%s: %u table files on disk, %u in the store", cases[c].name,
					  count_sst_files(st.dir), version_files(st.db));
			if (tides_verify(st.db, report_problem, &quiet) != 0)
				FAILF("%s: tides_verify found problems", cases[c].name);

			/* the same load once the fault is gone */
			if (s != TIDES_OK)
			{
				CHECK_OK(tides_ingest_begin(st.db, &in));
				for (int r = 1000; r < 1000 + rows; r++)
					CHECK_OK(tides_ingest_put(in, k, pkey(k, 0, r), v, crash_value(v, 1, r)));
				CHECK_OK(install(in, &res, st.db));
				tides_ingest_free(in);
			}
			/* and across a restart: all of it, nothing left over */
			store_crash(&st);
			CHECK_OK(store_open(&st));
			nnew = 0;
			for (int r = 1000; r < 1000 + rows; r++)
				nnew += row_gen(r, 2) == 1;
			if (nnew != rows)
				FAILF("%s: after a restart %d of %d rows visible", cases[c].name, nnew, rows);
			if (count_sst_files(st.dir) != version_files(st.db))
				FAILF("%s: after recovery %u table files on disk, %u in the store", cases[c].name,
					  count_sst_files(st.dir), version_files(st.db));
			store_crash(&st);
			if (test_failures == 0)
				test_rmdir(st.dir);
			free(st.dir);
			st.dir = NULL;
			tides_vfs_fault_free(vf);
			vf = NULL;
		}
	fprintf(stderr, "test_ingest: faults: %llu installs failed, %llu went through (the fault came elsewhere)\n",
			(unsigned long long) failed_installs, (unsigned long long) ok_installs);
	if (failed_installs < 24)
		FAILF("only %llu faults hit an ingestion", (unsigned long long) failed_installs);
}

/* --------------------------------------------------------------- external */

static uint64_t ext_pos;

static uint64_t
ext_append(void *arg, const void *rec, size_t len)
{
	ext_pos += len;
	return ext_pos;
}

static void
ext_sync(void *arg, uint64_t pos)
{
}

static void
count_one(void *arg, bool del, const void *key, size_t kl, const void *val, size_t vl)
{
	int		   *n = arg;

	if (!del && vl == 1 && kl == 8)
		(*n)++;
}

static void
test_external(void)
{
	tides_ingest *in;
	tides_ingest_result res;
	char		k[32];
	tides_batch *b = tides_batch_new();
	const void *enc;
	size_t		elen;

	memset(&st, 0, sizeof(st));
	small_options(&st.opts);
	st.opts.log_mode = TIDES_LOG_EXTERNAL;
	st.dir = fast_tmpdir("ingest-ext");
	CHECK_OK(store_open(&st));
	tides_set_log_sync(st.db, ext_sync, NULL);
	tides_batch_put(b, "a/000001", 8, "x", 1);
	CHECK_OK(tides_write_external(st.db, b, ext_append, NULL));
	/* the encoding an application logs is what tides_batch_load takes */
	enc = tides_batch_encoding(b, &elen);
	CHECK(enc != NULL && elen > 0);
	{
		tides_batch *c = tides_batch_new();

		CHECK_OK(tides_batch_load(c, enc, elen));
		CHECK(tides_batch_count(c) == 1);
		tides_batch_free(c);
	}
	tides_batch_free(b);
	CHECK_OK(tides_ingest_begin(st.db, &in));
	for (int r = 10; r < 500; r++)
		CHECK_OK(tides_ingest_put(in, k, pkey(k, 0, r), "ext", 3));
	CHECK_OK(install(in, &res, st.db));
	CHECK(res.entries == 490);
	tides_ingest_free(in);
	CHECK(get_is(st.db, NULL, k, pkey(k, 0, 10), "ext"));
	CHECK(get_is(st.db, NULL, "a/000001", 8, "x"));
	CHECK_OK(tides_ingest_begin(st.db, &in));
	tides_ingest_set_tag(in, 7);
	CHECK_OK(tides_ingest_put(in, k, pkey(k, 0, 600), "t", 1));
	CHECK(tides_ingest_install(in, &res) == TIDES_INVALID);
	tides_ingest_abort(in);
	/* foreach reads back what is not installed */
	CHECK_OK(tides_ingest_begin(st.db, &in));
	for (int r = 700; r < 800; r++)
		CHECK_OK(tides_ingest_put(in, k, pkey(k, 0, r), "f", 1));
	CHECK(tides_ingest_foreach(in, NULL, NULL) == TIDES_INVALID);	/* not cut yet */
	CHECK_OK(tides_ingest_cut(in));
	{
		int			seen = 0;

		CHECK_OK(tides_ingest_foreach(in, count_one, &seen));
		CHECK(seen == 100);
	}
	tides_ingest_abort(in);
	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(st.dir);
	free(st.dir);
	fprintf(stderr, "test_ingest: external log done\n");
}

int
main(int argc, char **argv)
{
	const char *only = getenv("TEST_INGEST_ONLY");

	test_init(argc, argv);
	if (only == NULL || strcmp(only, "placement") == 0)
		test_placement();
	if (only == NULL || strcmp(only, "external") == 0)
		test_external();
	if (only == NULL || strcmp(only, "faults") == 0)
		test_faults();
	if (only == NULL || strcmp(only, "crash") == 0)
		test_crash();
	if (only == NULL || strcmp(only, "model") == 0)
		test_model();
	return test_finish("test_ingest");
}
