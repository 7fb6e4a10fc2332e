/*
 * test_fault.c -- injected I/O errors (ENOSPC, EIO) on every kind of engine
 * file operation, in full and none sync mode.
 *
 * Each scenario warms a store up, arms one fault rule of the fault vfs
 * (env/vfs_fault.h) -- log writes (plain and torn), log segment creation,
 * log fsyncs (with the Linux semantics of losing the dirty pages), flush
 * and compaction output writes and fsyncs, manifest appends and rewrites,
 * directory syncs, reads of tables -- and keeps the workload and the
 * background work going while it fires.  Then:
 *
 *   - every failing call returned an error status (I/O error, no space or
 *     busy), never a wrong answer: a read either fails or returns exactly
 *     what was written;
 *   - once the fault is cleared the engine works again: background work
 *     succeeds, writes succeed, every acknowledged write reads back;
 *   - tides_verify() finds no problem;
 *   - after a simulated OS crash (unsynced writes dropped) and recovery,
 *     every transaction acknowledged as durable is present, and no
 *     transaction is partial unless its tag is reported unsealed.
 */
#include "harness.h"
#include "vfs_fault.h"

#include <sys/stat.h>

typedef struct ftxn
{
	uint64_t	tag;
	int			nkeys;
	int			nbatches;
	int			written;
	bool		visible;		/* every batch returned OK */
	bool		durable;		/* acknowledged durable */
	bool		tried_seal;
} ftxn;

typedef struct scenario
{
	const char *name;
	int			ops;
	const char *pattern;
	int			err;
	bool		torn;
	bool		sync_loses;
	uint64_t	count;			/* failures before the rule stops (0: until cleared) */
	bool		shutdown;		/* exercise tides_shutdown while armed */
	bool		early;			/* arm before the store has its first log segments */
} scenario;

static store st;
static tides_vfs_fault *vf;
static tides_rand rnd;
static ftxn *txns;
static int	ntxns;
static int	mode;
static const scenario *cur_sc;
static uint64_t errors_seen;

#define FAILF(...) \
	do { \
		test_failures++; \
		fprintf(stderr, "test_fault [%s, %s mode, seed %llu]: ", cur_sc ? cur_sc->name : "-", \
				mode == TIDES_SYNC_FULL ? "full" : "none", (unsigned long long) test_seed); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
	} while (0)

static size_t
fkey(char *buf, uint64_t tag, int i)
{
	return (size_t) sprintf(buf, "f/%08llx/%02d", (unsigned long long) tag, i);
}

static size_t
fval(uint8_t *out, uint64_t tag, int i)
{
	uint64_t	h = h_mix(tag * 977 + (uint64_t) i);
	size_t		n = 16 + h % 300;

	for (size_t k = 0; k < n; k++)
		out[k] = (uint8_t) (h_mix(h ^ k) & 0xff);
	tides_put64(out, tag);
	return n;
}

static bool
status_allowed(tides_status s)
{
	return s == TIDES_OK || s == TIDES_IO_ERROR || s == TIDES_NO_SPACE || s == TIDES_BUSY;
}

/* one round of background work; errors are expected while a fault is armed */
static void
background(bool armed)
{
	bool		did;
	tides_status s[4];

	s[0] = tides_flush_work(st.db, &did);
	s[1] = tides_compact_work(st.db, &did);
	s[2] = tides_maint_work(st.db, &did);
	s[3] = tides_sync_work(st.db, &did);
	for (int i = 0; i < 4; i++)
	{
		if (s[i] != TIDES_OK)
			errors_seen++;
		if (!status_allowed(s[i]) || (!armed && s[i] != TIDES_OK))
			FAILF("background work %d: %s: %s", i, tides_status_name(s[i]), tides_errmsg(st.db));
	}
}

static void
mark_synced(void)
{
	for (int i = 0; i < ntxns; i++)
		if (txns[i].visible)
			txns[i].durable = true;
}

/* write the next batch of transaction t */
static tides_status
step(ftxn *t, bool armed)
{
	tides_batch *b = tides_batch_new();
	bool		seal = t->written == t->nbatches - 1;
	int			per = t->nkeys / t->nbatches;
	int			from = t->written * per,
				to = seal ? t->nkeys : from + per;
	tides_status s = TIDES_OK;

	for (int i = from; i < to; i++)
	{
		char		k[32];
		uint8_t		v[400];
		size_t		kl = fkey(k, t->tag, i),
					vl = fval(v, t->tag, i);

		tides_batch_put(b, k, kl, v, vl);
	}
	tides_batch_set_tag(b, t->tag, seal);
	for (int tries = 0; tries < (armed ? 10 : 200); tries++)
	{
		/* a transaction's earlier batches, as the table AM writes HOT updates */
		if (!seal && tides_rand_uniform(&rnd, 2) == 0)
			tides_batch_no_wait(b);
		s = tides_write(st.db, b, NULL);
		if (s != TIDES_BUSY)
			break;
		background(armed);
	}
	tides_batch_free(b);
	if (s != TIDES_OK)
	{
		errors_seen++;
		if (!status_allowed(s) || !armed)
			FAILF("tides_write: %s: %s", tides_status_name(s), tides_errmsg(st.db));
		t->tried_seal = seal;
		return s;
	}
	t->written++;
	if (seal)
	{
		t->visible = true;
		if (mode == TIDES_SYNC_FULL)
			t->durable = true;
	}
	return TIDES_OK;
}

/* read a random known key; a read may fail while armed, but never lie */
static void
random_read(bool armed)
{
	ftxn	   *t;
	int			i;
	char		k[32];
	uint8_t		want[400];
	void	   *v = NULL;
	size_t		kl,
				vl,
				wl;
	tides_status s;

	if (ntxns == 0)
		return;
	t = &txns[tides_rand_uniform(&rnd, (uint64_t) ntxns)];
	i = (int) tides_rand_uniform(&rnd, (uint64_t) t->nkeys);
	kl = fkey(k, t->tag, i);
	wl = fval(want, t->tag, i);
	s = tides_get(st.db, NULL, k, kl, &v, &vl);
	if (s == TIDES_OK)
	{
		if (vl != wl || memcmp(v, want, wl) != 0)
			FAILF("read of %s returned a wrong value", k);
	}
	else if (s == TIDES_NOT_FOUND)
	{
		if (t->visible)
			FAILF("read of %s (acknowledged) returned not found%s", k, armed ? " while a fault was armed" : "");
	}
	else
	{
		errors_seen++;
		if (!armed || (s != TIDES_IO_ERROR && s != TIDES_CORRUPTION))
			FAILF("read of %s: %s: %s", k, tides_status_name(s), tides_errmsg(st.db));
	}
	free(v);
}

/* run n transactions (interleaving reads and background work) */
static void
workload(int n, bool armed)
{
	for (int j = 0; j < n; j++)
	{
		ftxn	   *t = &txns[ntxns++];

		memset(t, 0, sizeof(*t));
		t->tag = (uint64_t) ntxns;
		t->nbatches = 1 + (int) tides_rand_uniform(&rnd, 3);
		t->nkeys = t->nbatches * (1 + (int) tides_rand_uniform(&rnd, 6));
		while (t->written < t->nbatches)
			if (step(t, armed) != TIDES_OK)
				break;
		if (t->written < t->nbatches && t->written > 0)
		{
			/* the caller aborts the transaction and says so once it is durable */
			tides_settle_tags(st.db, &t->tag, 1);
		}
		for (int r = 0; r < 3; r++)
			random_read(armed);
		if (tides_rand_uniform(&rnd, 3) == 0)
			background(armed);
		if (mode != TIDES_SYNC_FULL && tides_rand_uniform(&rnd, 10) == 0)
		{
			tides_status s = tides_sync(st.db, 0, true);

			if (s == TIDES_OK)
				mark_synced();
			else
			{
				errors_seen++;
				if (!armed || !status_allowed(s))
					FAILF("tides_sync: %s: %s", tides_status_name(s), tides_errmsg(st.db));
			}
		}
	}
}

/*
 * A small store on a fresh fault vfs for scenario sc in sync mode m (not yet
 * opened): memtables of memtable_size, the other options small too.
 */
static void
store_setup(const scenario *sc, int m, uint64_t memtable_size, uint32_t memtables, const char *dirname)
{
	cur_sc = sc;
	mode = m;
	errors_seen = 0;
	ntxns = 0;
	memset(&st, 0, sizeof(st));
	tides_options_default(&st.opts);
	st.opts.memtable_size = memtable_size;
	st.opts.memtable_count = memtables;
	st.opts.block_cache_size = 1 << 20;
	st.opts.meta_size = 2 << 20;
	st.opts.log_segment_size = 1 << 20;
	st.opts.sync_mode = (tides_sync_mode) m;
	st.dir = fast_tmpdir(dirname);
	vf = tides_vfs_fault_new(NULL, test_seed);
	st.vfs = tides_vfs_fault_vfs(vf);
}

/* every acknowledged transaction reads back in full */
static void
check_visible(const char *when)
{
	for (int i = 0; i < ntxns; i++)
	{
		ftxn	   *t = &txns[i];

		for (int k = 0; k < t->nkeys; k++)
		{
			char		key[32];
			uint8_t		want[400];
			void	   *v = NULL;
			size_t		kl = fkey(key, t->tag, k),
						wl = fval(want, t->tag, k),
						vl;
			tides_status s = tides_get(st.db, NULL, key, kl, &v, &vl);

			if (s == TIDES_OK && (vl != wl || memcmp(v, want, wl) != 0))
				FAILF("%s: %s has a wrong value", when, key);
			else if (s == TIDES_NOT_FOUND && t->visible)
				FAILF("%s: %s of acknowledged tag %llu is missing", when, key, (unsigned long long) t->tag);
			else if (s != TIDES_OK && s != TIDES_NOT_FOUND)
				FAILF("%s: read %s: %s: %s", when, key, tides_status_name(s), tides_errmsg(st.db));
			free(v);
		}
	}
}

static bool
tag_unsealed(uint64_t tag)
{
	for (uint32_t i = 0; i < st.info.n_unsealed_tags; i++)
		if (st.info.unsealed_tags[i] == tag)
			return true;
	return false;
}

static void
check_after_crash(void)
{
	for (int i = 0; i < ntxns; i++)
	{
		ftxn	   *t = &txns[i];
		int			present = 0;

		for (int k = 0; k < t->nkeys; k++)
		{
			char		key[32];
			uint8_t		want[400];
			void	   *v = NULL;
			size_t		kl = fkey(key, t->tag, k),
						wl = fval(want, t->tag, k),
						vl;
			tides_status s = tides_get(st.db, NULL, key, kl, &v, &vl);

			if (s == TIDES_OK)
			{
				present++;
				if (vl != wl || memcmp(v, want, wl) != 0)
					FAILF("after crash: %s has a wrong value", key);
			}
			else if (s != TIDES_NOT_FOUND)
				FAILF("after crash: read %s: %s: %s", key, tides_status_name(s), tides_errmsg(st.db));
			free(v);
		}
		if (t->durable && present != t->nkeys)
			FAILF("after crash: durable tag %llu has %d of %d keys", (unsigned long long) t->tag,
				  present, t->nkeys);
		if (present > 0 && present < t->nkeys && !tag_unsealed(t->tag) &&
			!(t->written < t->nbatches && t->written > 0))
			FAILF("after crash: tag %llu is partial (%d of %d keys) and not reported unsealed",
				  (unsigned long long) t->tag, present, t->nkeys);
		if (t->durable && tag_unsealed(t->tag))
			FAILF("after crash: durable tag %llu reported unsealed", (unsigned long long) t->tag);
	}
}

static void
run_scenario(const scenario *sc, int m)
{
	tides_fault_rule r;
	int			quiet = 0,
				problems;
	bool		healthy = false;
	uint64_t	injected;

	store_setup(sc, m, 64 << 10, 3, "fault");
	st.opts.log_segment_size = 64 << 10;
	st.opts.target_file_size = 64 << 10;
	st.opts.level_base_size = 64 << 10;
	st.opts.level_size_ratio = 4;
	st.opts.level0_compaction_trigger = 2;
	st.opts.level0_slowdown_trigger = 6;
	st.opts.level0_stop_trigger = 10;
	st.opts.delayed_write_rate = 0;
	st.opts.block_size = 1024;
	if (!sc->early && store_open(&st) != TIDES_OK)
	{
		FAILF("open failed");
		return;
	}

	/* arm (rare operations fail from their first occurrence) */
	memset(&r, 0, sizeof(r));
	r.ops = sc->ops;
	r.pattern = sc->pattern;
	r.err = sc->err;
	r.torn = sc->torn;
	r.sync_loses = sc->sync_loses;
	r.count = sc->count;
	r.skip = (sc->ops & (TIDES_FAULT_WRITE | TIDES_FAULT_READ)) ? tides_rand_uniform(&rnd, 8) : 0;
	if (sc->shutdown)
		r.skip = 0;
	if (sc->early)
		r.skip = 1;				/* the store's first segment gets made */
	else
	{
		workload(150, false);
		if (mode != TIDES_SYNC_FULL && tides_sync(st.db, 0, true) == TIDES_OK)
			mark_synced();
	}
	injected = tides_vfs_fault_injected(vf);
	if (!sc->shutdown)
		tides_vfs_fault_add_rule(vf, &r);
	if (sc->early && store_open(&st) != TIDES_OK)
	{
		FAILF("open failed: %s", st.db ? tides_errmsg(st.db) : "");
		return;
	}
	workload(250, !sc->shutdown);
	if (sc->shutdown)
	{
		/* armed only for the shutdown's manifest rewrite */
		tides_vfs_fault_add_rule(vf, &r);
		tides_status s = tides_shutdown(st.db);

		if (s != TIDES_OK)
			errors_seen++;
		if (!status_allowed(s))
			FAILF("shutdown while armed: %s", tides_status_name(s));
	}
	injected = tides_vfs_fault_injected(vf) - injected;
	if (injected == 0)
		FAILF("the fault never fired (rule ops 0x%x pattern %s)", sc->ops, sc->pattern ? sc->pattern : "-");
	if (injected > 0 && errors_seen == 0 && !(sc->ops & TIDES_FAULT_READ))
		FAILF("%llu faults injected but no call reported an error", (unsigned long long) injected);

	/* clear: the engine must get well by running its work */
	tides_vfs_fault_clear_rules(vf);
	for (int round = 0; round < 50 && !healthy; round++)
	{
		bool		did;
		tides_status s;

		s = tides_seal_memtable(st.db);
		if (s == TIDES_OK || s == TIDES_BUSY)
			s = tides_flush_work(st.db, &did);
		if (s == TIDES_OK)
			s = tides_compact_work(st.db, &did);
		if (s == TIDES_OK)
			s = tides_maint_work(st.db, &did);
		if (s == TIDES_OK)
			s = tides_sync(st.db, 0, true);
		healthy = s == TIDES_OK;
	}
	if (!healthy)
		FAILF("the engine did not recover after the fault was cleared: %s", tides_errmsg(st.db));
	else
		mark_synced();
	check_visible("after the fault cleared");
	workload(100, false);
	if (mode != TIDES_SYNC_FULL && tides_sync(st.db, 0, true) == TIDES_OK)
		mark_synced();
	check_visible("after more writes");
	problems = tides_verify(st.db, report_problem, &quiet);
	if (problems != 0)
		FAILF("tides_verify found %d problems", problems);

	/* an OS crash now: what was acknowledged durable must be there */
	workload(40, false);
	tides_vfs_fault_crash(vf, 0);
	store_crash(&st);
	if (store_open(&st) != TIDES_OK)
		FAILF("recovery after the crash failed: %s", st.db ? tides_errmsg(st.db) : "");
	else
	{
		check_after_crash();
		problems = tides_verify(st.db, report_problem, &quiet);
		if (problems != 0)
			FAILF("tides_verify after the crash found %d problems", problems);
	}
	store_crash(&st);
	tides_vfs_fault_free(vf);
	if (test_failures == 0)
		test_rmdir(st.dir);
	else
		fprintf(stderr, "test_fault: store kept in %s\n", st.dir);
	free(st.dir);
	fprintf(stderr, "test_fault: %-34s %s: %llu faults injected, %llu error returns\n", sc->name,
			m == TIDES_SYNC_FULL ? "full" : "none", (unsigned long long) injected,
			(unsigned long long) errors_seen);
}

/*
 * A manifest that outgrows its limit is rewritten (rolled) into a new file
 * by the next edit.  If that rewrite fails (ENOSPC creating the new
 * manifest), the edit -- here a flush that added a table -- must neither be
 * lost nor leave the store naming a file that was deleted.
 */
static void
check_rolled(int n, const char *when)
{
	for (int i = 0; i < n; i++)
	{
		char		k[32];
		void	   *v = NULL;
		size_t		vl;
		tides_status s;

		snprintf(k, sizeof(k), "rolled%03d", i);
		s = tides_get(st.db, NULL, k, strlen(k), &v, &vl);
		if (s != TIDES_OK || vl != 5 || memcmp(v, "value", 5) != 0)
			FAILF("%s: %s reads %s: %s", when, k, tides_status_name(s), tides_errmsg(st.db));
		free(v);
	}
}

static void
manifest_roll_failure(void)
{
	static const scenario sc = {"manifest roll ENOSPC", 0, NULL, 0, false, false, 0, false, false};
	tides_fault_rule r;
	char		mpath[1200];
	struct stat stt;
	uint64_t	tag = 1;
	bool		did;
	int			flushes = 0,
				nrolled,
				quiet = 0;
	tides_status s;

	store_setup(&sc, TIDES_SYNC_NONE, 64 << 10, 2, "roll");
	st.opts.meta_size = 8 << 20;
	st.opts.max_open_tags = 16384;
	CHECK_OK(store_open(&st));
	/* many open tags make every flush edit big (it lists them) */
	for (; tag <= 6000; tag++)
	{
		tides_batch *b = tides_batch_new();
		char		k[32];

		snprintf(k, sizeof(k), "open/%06llu", (unsigned long long) tag);
		tides_batch_put(b, k, strlen(k), "v", 1);
		tides_batch_set_tag(b, tag, false);
		while ((s = tides_write(st.db, b, NULL)) == TIDES_BUSY)
			drain(st.db);
		CHECK_OK(s);
		tides_batch_free(b);
	}
	snprintf(mpath, sizeof(mpath), "%s/MANIFEST-", st.dir);
	for (;;)
	{
		char		cur[1300],
					name[64] = {0};
		FILE	   *f;
		tides_batch *b = tides_batch_new();

		snprintf(cur, sizeof(cur), "%s/CURRENT", st.dir);
		f = fopen(cur, "r");
		if (f == NULL || fgets(name, sizeof(name), f) == NULL)
			break;
		fclose(f);
		name[strcspn(name, "\n")] = 0;
		snprintf(mpath, sizeof(mpath), "%s/%s", st.dir, name);
		if (stat(mpath, &stt) == 0 && stt.st_size > (4 << 20) - (64 << 10))
		{
			tides_batch_free(b);
			break;
		}
		tides_batch_put(b, "filler", 6, "x", 1);
		while ((s = tides_write(st.db, b, NULL)) == TIDES_BUSY)
			drain(st.db);
		CHECK_OK(s);
		tides_batch_free(b);
		if (tides_seal_memtable(st.db) == TIDES_BUSY)
			drain(st.db);
		CHECK_OK(tides_flush_work(st.db, &did));
		CHECK_OK(tides_compact_work(st.db, &did));
		CHECK_OK(tides_maint_work(st.db, &did));
		if (++flushes > 2000)
		{
			FAILF("the manifest does not grow");
			break;
		}
	}
	/* an edit soon rolls the manifest: make creating the new one fail */
	memset(&r, 0, sizeof(r));
	r.ops = TIDES_FAULT_CREATE;
	r.pattern = "MANIFEST";
	r.err = ENOSPC;
	r.count = 1;
	tides_vfs_fault_add_rule(vf, &r);
	for (nrolled = 0; nrolled < 100 && tides_vfs_fault_injected(vf) == 0; nrolled++)
	{
		tides_batch *b = tides_batch_new();
		char		k[32];

		snprintf(k, sizeof(k), "rolled%03d", nrolled);
		tides_batch_put(b, k, strlen(k), "value", 5);
		while ((s = tides_write(st.db, b, NULL)) == TIDES_BUSY)
			drain(st.db);
		CHECK_OK(s);
		tides_batch_free(b);
		if (tides_seal_memtable(st.db) == TIDES_BUSY)
			tides_flush_work(st.db, &did);
		tides_seal_memtable(st.db);
		s = tides_flush_work(st.db, &did);
		if (s != TIDES_OK)
			fprintf(stderr, "test_fault: a failed manifest roll made the flush fail: %s\n",
					tides_errmsg(st.db));
	}
	if (tides_vfs_fault_injected(vf) == 0)
		FAILF("the manifest roll was not attempted (%d flushes)", flushes + nrolled);
	tides_vfs_fault_clear_rules(vf);
	drain(st.db);
	check_rolled(nrolled, "after a failed manifest roll");
	if (tides_verify(st.db, report_problem, &quiet) != 0)
		FAILF("tides_verify found problems after a failed manifest roll");
	tides_vfs_fault_crash(vf, 0);
	store_crash(&st);
	if (store_open(&st) != TIDES_OK)
		FAILF("recovery after a failed manifest roll: %s", st.db ? tides_errmsg(st.db) : "");
	else
	{
		check_rolled(nrolled, "after a failed manifest roll and a crash");
		if (st.info.n_unsealed_tags < 6000)
			FAILF("only %u of 6000 open tags reported after the crash", st.info.n_unsealed_tags);
	}
	store_crash(&st);
	tides_vfs_fault_free(vf);
	if (test_failures == 0)
		test_rmdir(st.dir);
	free(st.dir);
	fprintf(stderr, "test_fault: manifest roll failure: %d flushes to grow the manifest\n", flushes);
}

static bool
all_synced(void)
{
	tides_stats x;

	tides_get_stats(st.db, &x);
	return x.durable_lsn == x.written_lsn;
}

/*
 * A log fsync fails (the kernel drops the dirty pages), the fault goes away,
 * and the application shuts down.  A shutdown that reports success promises
 * that everything written is durable: after an OS crash it must all be back.
 */
static void
shutdown_after_failed_fsync(void)
{
	static const scenario sc = {"shutdown after a failed log fsync", 0, NULL, 0, false, false, 0, false, false};
	tides_fault_rule r;
	tides_status s;

	store_setup(&sc, TIDES_SYNC_NONE, 256 << 10, 2, "shutdown");
	CHECK_OK(store_open(&st));
	workload(30, false);
	/* the fsync must have something to lose: unsynced records (a flush syncs the log) */
	for (int i = 0; i < 100 && all_synced(); i++)
		workload(1, false);
	CHECK(!all_synced());
	memset(&r, 0, sizeof(r));
	r.ops = TIDES_FAULT_SYNC;
	r.pattern = ".log";
	r.err = EIO;
	r.count = 1;
	r.sync_loses = true;
	tides_vfs_fault_add_rule(vf, &r);
	CHECK(tides_sync(st.db, 0, true) == TIDES_IO_ERROR);
	tides_vfs_fault_clear_rules(vf);
	s = tides_shutdown(st.db);
	if (s != TIDES_OK)
	{
		/* the honest answer; flushing makes the data durable by another path */
		for (int i = 0; i < 10 && s != TIDES_OK; i++)
		{
			drain(st.db);
			s = tides_shutdown(st.db);
		}
		CHECK_OK(s);
	}
	for (int i = 0; i < ntxns; i++)
		if (txns[i].visible)
			txns[i].durable = true;	/* a clean shutdown promised it */
	tides_vfs_fault_crash(vf, 0);
	store_crash(&st);
	if (store_open(&st) != TIDES_OK)
		FAILF("recovery failed: %s", st.db ? tides_errmsg(st.db) : "");
	else
		check_after_crash();
	store_crash(&st);
	tides_vfs_fault_free(vf);
	if (test_failures == 0)
		test_rmdir(st.dir);
	free(st.dir);
}

/* one 1 KB entry under key i; the status of tides_write */
static tides_status
put_one(int i)
{
	tides_batch *b = tides_batch_new();
	char		k[32];
	uint8_t		v[1024];
	tides_status s;

	memset(v, i & 0xff, sizeof(v));
	tides_batch_put(b, k, (size_t) sprintf(k, "stall/%06d", i), v, sizeof(v));
	s = tides_write(st.db, b, NULL);
	tides_batch_free(b);
	return s;
}

static void
expect_cause(tides_status s, const char *why, const char *when)
{
	const char *msg = tides_errmsg(st.db);

	if (s != TIDES_NO_SPACE || strstr(msg, why) == NULL || strstr(msg, ".sst") == NULL ||
		strstr(msg, "No space left on device") == NULL)
		FAILF("%s: %s \"%s\", want NO_SPACE naming the table file", when, tides_status_name(s), msg);
}

/*
 * A writer stalled on background work that keeps failing gets the work's
 * failure, not TIDES_BUSY forever: every memtable full while the last
 * flush failed, and level 0 at its stop trigger while the last compaction
 * failed.  The failure stands until the work succeeds again.
 */
static void
stalls_fail_with_cause(void)
{
	static const scenario sc = {"stalled writes fail with the cause", 0, NULL, 0, false, false, 0, false, false};
	tides_fault_rule r;
	tides_stats stats;
	tides_status s = TIDES_OK;
	bool		did;
	int			i = 0;

	store_setup(&sc, TIDES_SYNC_NONE, 64 << 10, 2, "stall");
	st.opts.level0_compaction_trigger = 2;
	st.opts.level0_slowdown_trigger = 3;
	st.opts.level0_stop_trigger = 3;
	st.opts.delayed_write_rate = 0;
	CHECK_OK(store_open(&st));
	memset(&r, 0, sizeof(r));
	r.ops = TIDES_FAULT_WRITE;
	r.pattern = ".sst";
	r.err = ENOSPC;

	/* memtables: fill them all, then the flush fails */
	while (i < 1000 && (s = put_one(i)) == TIDES_OK)
		i++;
	CHECK(s == TIDES_BUSY);		/* no flush has failed yet: wait */
	tides_vfs_fault_add_rule(vf, &r);
	CHECK(tides_flush_work(st.db, &did) == TIDES_NO_SPACE);
	expect_cause(put_one(i), "all memtables are full and the last flush failed", "write after a failed flush");
	tides_vfs_fault_clear_rules(vf);
	expect_cause(put_one(i), "last flush failed", "write before the retried flush");
	CHECK_OK(tides_flush_work(st.db, &did));
	CHECK(did);
	CHECK_OK(put_one(i));

	/*
	 * level 0: flush files up to the stop trigger (each spans the same two
	 * keys, so no flush can place its file below level 0), then compaction
	 * fails
	 */
	for (int round = 0; round < 20 && (s = put_one(0)) == TIDES_OK && (s = put_one(999)) == TIDES_OK; round++)
	{
		(void) tides_seal_memtable(st.db);
		do
			CHECK_OK(tides_flush_work(st.db, &did));
		while (did);
	}
	CHECK(s == TIDES_BUSY);
	tides_get_stats(st.db, &stats);
	CHECK(stats.level_files[0] >= 3);
	tides_vfs_fault_add_rule(vf, &r);
	CHECK(tides_compact_work(st.db, &did) == TIDES_NO_SPACE);
	expect_cause(put_one(i), "level 0 has too many files and the last compaction failed",
				 "write after a failed compaction");
	tides_vfs_fault_clear_rules(vf);
	CHECK_OK(tides_compact_work(st.db, &did));
	CHECK(did);
	CHECK_OK(put_one(i));

	store_crash(&st);
	tides_vfs_fault_free(vf);
	if (test_failures == 0)
		test_rmdir(st.dir);
	free(st.dir);
}

int
main(int argc, char **argv)
{
	static const scenario scenarios[] = {
		{"log write EIO", TIDES_FAULT_WRITE, ".log", EIO, false, false, 1, false, false},
		{"log write EIO, repeated", TIDES_FAULT_WRITE, ".log", EIO, false, false, 5, false, false},
		{"log write ENOSPC, torn", TIDES_FAULT_WRITE, ".log", ENOSPC, true, false, 3, false, false},
		{"log segment allocate ENOSPC", TIDES_FAULT_ALLOCATE, ".log", ENOSPC, false, false, 0, false, true},
		{"log segment create ENOSPC", TIDES_FAULT_CREATE, ".log", ENOSPC, false, false, 0, false, true},
		{"log segment recycle EIO", TIDES_FAULT_RENAME, ".log", EIO, false, false, 4, false, false},
		{"log fsync EIO (pages lost)", TIDES_FAULT_SYNC, ".log", EIO, false, true, 1, false, false},
		{"log fsync EIO, repeated", TIDES_FAULT_SYNC, ".log", EIO, false, true, 6, false, false},
		{"table write ENOSPC", TIDES_FAULT_WRITE, ".sst", ENOSPC, false, false, 0, false, false},
		{"table write EIO, torn", TIDES_FAULT_WRITE, ".sst", EIO, true, false, 3, false, false},
		{"table create ENOSPC", TIDES_FAULT_CREATE, ".sst", ENOSPC, false, false, 3, false, false},
		{"table fsync EIO", TIDES_FAULT_SYNC, ".sst", EIO, false, true, 3, false, false},
		{"table read EIO", TIDES_FAULT_READ, ".sst", EIO, false, false, 20, false, false},
		{"manifest write ENOSPC", TIDES_FAULT_WRITE, "MANIFEST", ENOSPC, false, false, 3, false, false},
		{"manifest fsync EIO", TIDES_FAULT_SYNC, "MANIFEST", EIO, false, true, 2, false, false},
		{"manifest truncate EIO", TIDES_FAULT_WRITE | TIDES_FAULT_TRUNCATE, "MANIFEST", EIO, true, false, 4, false, false},
		{"manifest rewrite ENOSPC (shutdown)", TIDES_FAULT_CREATE | TIDES_FAULT_WRITE, "MANIFEST", ENOSPC, false, false, 0, true, false},
		{"CURRENT install EIO (shutdown)", TIDES_FAULT_WRITE | TIDES_FAULT_RENAME, "CURRENT", EIO, false, false, 0, true, false},
		{"directory sync EIO", TIDES_FAULT_SYNC_DIR, NULL, EIO, false, false, 3, false, false},
		{"CURRENT dir sync EIO (shutdown)", TIDES_FAULT_SYNC_DIR, NULL, EIO, false, false, 1, true, false},
		{"any fsync EIO", TIDES_FAULT_SYNC, NULL, EIO, false, true, 4, false, false},
	};
	const char *only = getenv("TEST_FAULT_ONLY");

	test_init(argc, argv);
	tides_rand_seed(&rnd, test_seed * 31 + 7);
	txns = calloc(2000, sizeof(ftxn));
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
	{
		if (only != NULL && strstr(scenarios[i].name, only) == NULL)
			continue;
		run_scenario(&scenarios[i], TIDES_SYNC_FULL);
		run_scenario(&scenarios[i], TIDES_SYNC_NONE);
	}
	if (only == NULL || strstr("manifest roll", only) != NULL)
		manifest_roll_failure();
	if (only == NULL || strstr("shutdown after a failed log fsync", only) != NULL)
		shutdown_after_failed_fsync();
	if (only == NULL || strstr("stalled writes fail with the cause", only) != NULL)
		stalls_fail_with_cause();
	free(txns);
	return test_finish("test_fault");
}
