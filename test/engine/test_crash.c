/*
 * test_crash.c -- simulated OS crashes at random points, in every sync mode.
 *
 * A workload of tagged multi-batch transactions runs against a store on the
 * fault-injecting vfs (env/vfs_fault.h), with flushes, compactions,
 * maintenance and syncs interleaved.  At a random point (after N mutating
 * file-system calls, N random: inside log writes, fsyncs, segment
 * preparation, flush and compaction output, manifest appends and
 * rewrites, even recovery) the "machine dies": the vfs fails everything,
 * then drops every write not fsynced and every directory change not synced
 * (sometimes keeping a random part of them, torn).  The store is recovered
 * into a fresh region and checked:
 *
 *   - every transaction acknowledged as durable is wholly present: in full
 *     mode, acknowledged = the tides_write of its sealing batch returned OK;
 *     in interval and none mode, acknowledged = covered by a later
 *     successful tides_sync(force) or tides_sync_work();
 *   - no transaction is partially present unless recovery reports its tag
 *     unsealed; an acknowledged transaction is never reported unsealed;
 *   - a transaction that vanished in a crash never comes back;
 *   - deletions: a delete transaction (which removes every key of an older
 *     durable transaction and writes one marker key per batch) is atomic
 *     too, and a complete one leaves none of the deleted keys;
 *   - every value read is exactly what was written, no unknown key exists,
 *     and tides_verify() reports no problem.
 *
 * Then the workload goes on in the recovered store (recovery after
 * recovery), with a fresh store every few crashes.  TEST_CRASH_POINTS
 * (default 200) crash points per sync mode; `make engine-soak` runs more.
 */
#include "harness.h"
#include "vfs_fault.h"

#define MAX_KEYS_PER_TXN 24
#define MAX_OPEN 3
#define LIVES_PER_STORE 8

enum txn_kind
{
	K_INSERT, K_DELETE
};

enum txn_status
{
	S_OPEN,						/* batches still to come */
	S_SEALED,					/* sealing write returned OK, not known durable */
	S_DURABLE,					/* acknowledged durable */
	S_ABANDONED,				/* a write failed (the crash came): never sealed */
	S_GONE,						/* absent after a crash: must stay absent */
	S_IGNORED,					/* was partial and reported unsealed: settled */
	S_DELETED					/* an insert whose delete transaction is durable */
};

typedef struct txn
{
	uint64_t	tag;
	int			kind;
	int			status;
	int			nbatches;
	int			written;		/* batches whose write returned OK */
	int			nkeys;			/* insert: keys; delete: markers (= nbatches) */
	int			target;			/* delete: index of the insert transaction */
	int			deleter;		/* insert: index of its delete transaction, or -1 */
	bool		seal_tried;		/* the sealing write was attempted (it may have landed) */
	uint64_t	seal_lsn;
} txn;

static store st;
static tides_vfs_fault *vf;
static tides_rand rnd;
static txn *txns;
static int	ntxns,
			captxns;
static int	open_txns[MAX_OPEN];
static int	nopen;
static uint64_t next_tag = 1;
static int	mode;
static const char *mode_name;
static int	point;
static struct
{
	uint64_t	txns,
				crashes,
				durable_checked,
				partial_reported,
				gone,
				recov_crashes,
				flushes,
				compactions,
				kept_crashes;
}			cnt;

#define FAILF(...) \
	do { \
		test_failures++; \
		fprintf(stderr, "test_crash [%s, crash point %d, seed %llu]: ", mode_name, point, \
				(unsigned long long) test_seed); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
	} while (0)

/* ------------------------------------------------------------ keys, values */

static size_t
txn_key(char *buf, const txn *t, int i)
{
	return (size_t) sprintf(buf, "%c/%012llx/%02d", t->kind == K_INSERT ? 'i' : 'm',
							(unsigned long long) t->tag, i);
}

static size_t
txn_value(uint8_t *out, uint64_t tag, int i)
{
	uint64_t	h = h_mix(tag * 131 + (uint64_t) i);
	size_t		n = (h % 50 == 0) ? 1500 + h % 1000 : 8 + h % 200;

	for (size_t k = 0; k < n; k++)
		out[k] = (uint8_t) (h_mix(h + k / 8) >> (8 * (k % 8)));
	tides_put64(out, tag);
	return n;
}

static txn *
txn_new(int kind)
{
	txn		   *t;

	if (ntxns == captxns)
	{
		captxns = captxns ? captxns * 2 : 1024;
		txns = realloc(txns, captxns * sizeof(txn));
	}
	t = &txns[ntxns++];
	memset(t, 0, sizeof(*t));
	t->tag = next_tag++;
	t->kind = kind;
	t->status = S_OPEN;
	t->deleter = -1;
	t->target = -1;
	t->nbatches = 1 + (int) tides_rand_uniform(&rnd, 4);
	if (kind == K_INSERT)
		t->nkeys = t->nbatches * (1 + (int) tides_rand_uniform(&rnd, MAX_KEYS_PER_TXN / 4));
	else
		t->nkeys = t->nbatches;
	cnt.txns++;
	return t;
}

/* ------------------------------------------------------------- workload */

static bool
frozen(void)
{
	return tides_vfs_fault_frozen(vf);
}

/* one round of background work; false once the machine is dead */
static bool
background(void)
{
	bool		a = false,
				b = false,
				c = false,
				d = false;
	tides_status s;

	if ((s = tides_flush_work(st.db, &a)) == TIDES_OK && a)
		cnt.flushes++;
	if (s == TIDES_OK && (s = tides_compact_work(st.db, &b)) == TIDES_OK && b)
		cnt.compactions++;
	if (s == TIDES_OK)
		s = tides_maint_work(st.db, &c);
	if (s == TIDES_OK)
	{
		s = tides_sync_work(st.db, &d);
		if (s == TIDES_OK && d)
		{
			/* everything written so far is durable now */
			for (int i = 0; i < ntxns; i++)
				if (txns[i].status == S_SEALED)
					txns[i].status = S_DURABLE;
		}
	}
	if (s != TIDES_OK && !frozen())
		FAILF("background work: %s: %s", tides_status_name(s), tides_errmsg(st.db));
	return s == TIDES_OK;
}

static void
explicit_sync(void)
{
	tides_status s = tides_sync(st.db, 0, true);

	if (s == TIDES_OK)
	{
		for (int i = 0; i < ntxns; i++)
			if (txns[i].status == S_SEALED)
				txns[i].status = S_DURABLE;
	}
	else if (!frozen())
		FAILF("tides_sync: %s: %s", tides_status_name(s), tides_errmsg(st.db));
}

/* keys [from, to) of an insert transaction's batch b */
static void
batch_range(const txn *t, int b, int *from, int *to)
{
	int			per = t->nkeys / t->nbatches;

	*from = b * per;
	*to = b == t->nbatches - 1 ? t->nkeys : (b + 1) * per;
}

/* write the next batch of transaction ti; false once the machine is dead */
static bool
step_txn(int ti)
{
	txn		   *t = &txns[ti];
	int			b = t->written;
	bool		seal = b == t->nbatches - 1;
	tides_batch *batch = tides_batch_new();
	char		k[64];
	uint8_t		v[4096];
	size_t		kl,
				vl;
	uint64_t	lsn = 0;
	tides_status s = TIDES_OK;

	if (t->kind == K_INSERT)
	{
		int			from,
					to;

		batch_range(t, b, &from, &to);
		for (int i = from; i < to; i++)
		{
			kl = txn_key(k, t, i);
			vl = txn_value(v, t->tag, i);
			tides_batch_put(batch, k, kl, v, vl);
		}
	}
	else
	{
		txn		   *victim = &txns[t->target];
		int			from,
					to;

		/* the marker of this batch, and the victim's keys of the same slice */
		kl = txn_key(k, t, b);
		vl = txn_value(v, t->tag, b);
		tides_batch_put(batch, k, kl, v, vl);
		from = victim->nkeys * b / t->nbatches;
		to = victim->nkeys * (b + 1) / t->nbatches;
		for (int i = from; i < to; i++)
		{
			kl = txn_key(k, victim, i);
			tides_batch_delete(batch, k, kl);
		}
	}
	tides_batch_set_tag(batch, t->tag, seal);
	for (int tries = 0; tries < 10000; tries++)
	{
		s = tides_write(st.db, batch, &lsn);
		if (s != TIDES_BUSY)
			break;
		if (!background())
			break;
	}
	tides_batch_free(batch);
	if (s != TIDES_OK)
	{
		if (!frozen())
			FAILF("tides_write of tag %llu: %s: %s", (unsigned long long) t->tag,
				  tides_status_name(s), tides_errmsg(st.db));
		t->status = S_ABANDONED;
		t->seal_tried = seal;
		return false;
	}
	t->written++;
	if (seal)
	{
		t->seal_lsn = lsn;
		t->status = mode == TIDES_SYNC_FULL ? S_DURABLE : S_SEALED;
	}
	return true;
}

/* a durable insert transaction nobody deletes yet, or -1 */
static int
pick_victim(void)
{
	for (int tries = 0; tries < 8 && ntxns > 0; tries++)
	{
		int			i = (int) tides_rand_uniform(&rnd, (uint64_t) ntxns);

		if (txns[i].kind == K_INSERT && txns[i].status == S_DURABLE && txns[i].deleter < 0)
			return i;
	}
	return -1;
}

/* run transactions until the machine dies or `steps` batches are written */
static void
workload(int steps)
{
	for (int n = 0; n < steps; n++)
	{
		int			slot;

		if (nopen < MAX_OPEN && (nopen == 0 || tides_rand_uniform(&rnd, 3) == 0))
		{
			int			victim = tides_rand_uniform(&rnd, 5) == 0 ? pick_victim() : -1;
			txn		   *t = txn_new(victim >= 0 ? K_DELETE : K_INSERT);

			if (victim >= 0)
			{
				t->target = victim;
				txns[victim].deleter = (int) (t - txns);
			}
			open_txns[nopen++] = (int) (t - txns);
		}
		slot = (int) tides_rand_uniform(&rnd, (uint64_t) nopen);
		if (!step_txn(open_txns[slot]))
			return;
		if (txns[open_txns[slot]].status != S_OPEN)
			open_txns[slot] = open_txns[--nopen];
		if (tides_rand_uniform(&rnd, 4) == 0 && !background())
			return;
		if (mode != TIDES_SYNC_FULL && tides_rand_uniform(&rnd, 25) == 0)
		{
			explicit_sync();
			if (frozen())
				return;
		}
		if (tides_rand_uniform(&rnd, 200) == 0)
		{
			tides_status s = tides_seal_memtable(st.db);

			if (s != TIDES_OK && s != TIDES_BUSY && !frozen())
				FAILF("seal: %s", tides_status_name(s));
		}
		if (frozen())
			return;
	}
}

/* ------------------------------------------------------------- checking */

enum
{
	OBS_ABSENT, OBS_PARTIAL, OBS_COMPLETE
};

static int
observe_keys(const txn *t, int *present_out)
{
	int			present = 0;

	for (int i = 0; i < t->nkeys; i++)
	{
		char		k[64];
		size_t		kl = txn_key(k, t, i);
		void	   *v = NULL;
		size_t		vl = 0;
		tides_status s = tides_get(st.db, NULL, k, kl, &v, &vl);

		if (s == TIDES_OK)
		{
			uint8_t		want[4096];
			size_t		wl = txn_value(want, t->tag, i);

			present++;
			if (wl != vl || memcmp(want, v, vl) != 0)
				FAILF("key %s has a wrong value (%zu bytes, want %zu)", k, vl, wl);
		}
		else if (s != TIDES_NOT_FOUND)
			FAILF("get %s: %s: %s", k, tides_status_name(s), tides_errmsg(st.db));
		free(v);
	}
	*present_out = present;
	return present == 0 ? OBS_ABSENT : (present == t->nkeys ? OBS_COMPLETE : OBS_PARTIAL);
}

static const char *
status_name(int s)
{
	static const char *names[] = {"open", "sealed", "durable", "abandoned", "gone", "ignored", "deleted"};

	return names[s];
}

static bool
is_unsealed(uint64_t tag)
{
	for (uint32_t i = 0; i < st.info.n_unsealed_tags; i++)
		if (st.info.unsealed_tags[i] == tag)
			return true;
	return false;
}

/* every key in the store belongs to a known transaction and has its value */
static void
scan_all(void)
{
	tides_iter *it = tides_iter_new(st.db, NULL);
	uint64_t	n = 0;

	if (it == NULL)
	{
		FAILF("tides_iter_new failed");
		return;
	}
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
	{
		size_t		kl,
					vl;
		const char *k = tides_iter_key(it, &kl);
		const uint8_t *v = tides_iter_value(it, &vl);
		char		kb[64];
		unsigned long long tag;
		int			idx;
		uint8_t		want[4096];
		size_t		wl;

		n++;
		if (kl >= sizeof(kb) || kl < 4)
		{
			FAILF("unknown key of %zu bytes in the store", kl);
			continue;
		}
		memcpy(kb, k, kl);
		kb[kl] = 0;
		if (sscanf(kb + 2, "%llx/%d", &tag, &idx) != 2 || tag == 0 || tag >= next_tag)
		{
			FAILF("unknown key %s in the store", kb);
			continue;
		}
		wl = txn_value(want, tag, idx);
		if (wl != vl || memcmp(want, v, vl) != 0)
			FAILF("key %s has a wrong value in a scan", kb);
	}
	if (tides_iter_status(it) != TIDES_OK)
		FAILF("scan failed: %s: %s", tides_status_name(tides_iter_status(it)), tides_errmsg(st.db));
	tides_iter_free(it);
}

static void
check_after_crash(void)
{
	int		   *obs = malloc((ntxns + 1) * sizeof(int));
	uint64_t   *settle = malloc((ntxns + 1) * sizeof(uint64_t));
	uint32_t	nsettle = 0;
	int			problems,
				quiet = 0;
	int			fails_before = test_failures;

	for (int i = 0; i < ntxns; i++)
	{
		int			present;

		obs[i] = observe_keys(&txns[i], &present);
		if (is_unsealed(txns[i].tag) && txns[i].status == S_DURABLE)
			FAILF("tag %llu (durable %s transaction, %d batches, seal lsn %llu, %s) reported unsealed "
				  "(recovery replayed %llu batches, last seq %llu, log tail %s)",
				  (unsigned long long) txns[i].tag, txns[i].kind == K_INSERT ? "insert" : "delete",
				  txns[i].nbatches, (unsigned long long) txns[i].seal_lsn,
				  obs[i] == OBS_COMPLETE ? "complete" : obs[i] == OBS_ABSENT ? "absent" : "partial",
				  (unsigned long long) st.info.batches_replayed, (unsigned long long) st.info.last_seq,
				  st.info.log_tail_damaged ? "damaged" : "clean");
	}
	for (int i = 0; i < ntxns; i++)
	{
		txn		   *t = &txns[i];
		int			o = obs[i];
		bool		unsealed = is_unsealed(t->tag);
		bool		may_be_partial = unsealed || t->status == S_IGNORED;

		if (t->kind == K_INSERT && t->deleter >= 0 && txns[t->deleter].status != S_GONE)
		{
			int			dob = obs[t->deleter];

			/* judged with its delete transaction below */
			if (dob == OBS_COMPLETE && o != OBS_ABSENT)
				FAILF("tag %llu: its delete transaction %llu is complete but %s of its keys survive",
					  (unsigned long long) t->tag, (unsigned long long) txns[t->deleter].tag,
					  o == OBS_COMPLETE ? "all" : "some");
			if (dob == OBS_ABSENT && t->status == S_DURABLE && o != OBS_COMPLETE)
				FAILF("tag %llu: durable, its delete transaction left no trace, yet it is %s",
					  (unsigned long long) t->tag, o == OBS_ABSENT ? "absent" : "partial");
			continue;
		}
		switch (t->status)
		{
			case S_DURABLE:
				cnt.durable_checked++;
				if (o != OBS_COMPLETE)
					FAILF("tag %llu: acknowledged durable (%s, seal lsn %llu) but %s after the crash",
						  (unsigned long long) t->tag, t->kind == K_INSERT ? "insert" : "delete",
						  (unsigned long long) t->seal_lsn, o == OBS_ABSENT ? "absent" : "partial");
				break;
			case S_GONE:
			case S_DELETED:
				if (o != OBS_ABSENT)
					FAILF("tag %llu: %s earlier, but present again (%s)", (unsigned long long) t->tag,
						  status_name(t->status), o == OBS_COMPLETE ? "complete" : "partial");
				break;
			case S_IGNORED:
				break;
			default:			/* open, sealed, abandoned */
				if (o == OBS_PARTIAL && !may_be_partial)
					FAILF("tag %llu (%s, %d of %d batches written) is partial but not reported unsealed",
						  (unsigned long long) t->tag, status_name(t->status), t->written, t->nbatches);
				if (o == OBS_COMPLETE && t->status != S_SEALED && !t->seal_tried)
					FAILF("tag %llu is complete though it was never sealed", (unsigned long long) t->tag);
				break;
		}
	}

	if (getenv("TEST_CRASH_DEBUG") != NULL || test_failures > fails_before)
	{
		fprintf(stderr, "--- point %d: replayed %llu batches, %u unsealed tags:", point,
				(unsigned long long) st.info.batches_replayed, st.info.n_unsealed_tags);
		for (uint32_t i = 0; i < st.info.n_unsealed_tags; i++)
			fprintf(stderr, " %llu", (unsigned long long) st.info.unsealed_tags[i]);
		fputc('\n', stderr);
		for (int i = 0; i < ntxns; i++)
			fprintf(stderr, "  tag %llu %s %s batches %d/%d keys %d seal lsn %llu obs %d deleter %lld target %lld\n",
					(unsigned long long) txns[i].tag, txns[i].kind == K_INSERT ? "ins" : "del",
					status_name(txns[i].status), txns[i].written, txns[i].nbatches, txns[i].nkeys,
					(unsigned long long) txns[i].seal_lsn, obs[i],
					txns[i].deleter >= 0 ? (long long) txns[txns[i].deleter].tag : -1LL,
					txns[i].target >= 0 ? (long long) txns[txns[i].target].tag : -1LL);
	}
	/* what recovery found becomes the truth the next life builds on */
	for (int i = 0; i < ntxns; i++)
	{
		txn		   *t = &txns[i];
		int			o = obs[i];

		if (t->kind == K_INSERT && t->deleter >= 0 && txns[t->deleter].status != S_GONE)
			continue;			/* settled with its deleter */
		if (t->status == S_GONE || t->status == S_DELETED || t->status == S_IGNORED)
			continue;
		if (o == OBS_COMPLETE)
			t->status = S_DURABLE;
		else if (o == OBS_ABSENT)
		{
			if (t->status != S_DURABLE)
				cnt.gone++;
			t->status = S_GONE;
		}
		else
		{
			t->status = S_IGNORED;
			cnt.partial_reported++;
		}
		if (is_unsealed(t->tag))
			settle[nsettle++] = t->tag;
		if (t->kind == K_DELETE)
		{
			txn		   *victim = &txns[t->target];

			if (t->status == S_DURABLE)
				victim->status = S_DELETED;
			else if (t->status == S_GONE)
				victim->deleter = -1;	/* may be deleted again later */
			else
				victim->status = S_IGNORED;
		}
	}
	for (uint32_t i = 0; i < st.info.n_unsealed_tags; i++)
	{
		uint64_t	tag = st.info.unsealed_tags[i];
		bool		have = false;

		for (uint32_t j = 0; j < nsettle; j++)
			have |= settle[j] == tag;
		if (!have)
			settle[nsettle++] = tag;
	}
	if (nsettle > 0)
		CHECK_OK(tides_settle_tags(st.db, settle, nsettle));
	scan_all();
	problems = tides_verify(st.db, report_problem, &quiet);
	if (problems != 0)
		FAILF("tides_verify found %d problems after recovery", problems);
	nopen = 0;
	free(obs);
	free(settle);
}

/* ------------------------------------------------------------ life cycle */

static void
new_store(void)
{
	if (st.dir != NULL)
	{
		test_rmdir(st.dir);
		free(st.dir);
	}
	st.dir = fast_tmpdir("crash");
	tides_vfs_fault_free(vf);
	vf = tides_vfs_fault_new(NULL, test_seed ^ (uint64_t) point);
	st.vfs = tides_vfs_fault_vfs(vf);
	ntxns = 0;
	nopen = 0;
	if (store_open(&st) != TIDES_OK)
	{
		FAILF("cannot create a store: %s", st.db ? tides_errmsg(st.db) : "");
		exit(test_finish("test_crash"));
	}
}

/* crash the machine, recover (maybe crashing again during recovery) */
static void
crash_and_recover(void)
{
	unsigned	keep = tides_rand_uniform(&rnd, 3) == 0 ? 30 + (unsigned) tides_rand_uniform(&rnd, 60) : 0;
	int			r;

	if (keep)
		cnt.kept_crashes++;
	r = tides_vfs_fault_crash(vf, keep);
	if (r != 0)
		FAILF("vfs crash restore failed: %d", r);
	store_crash(&st);
	cnt.crashes++;
	for (int attempt = 0;; attempt++)
	{
		tides_status s;

		if (attempt == 0 && tides_rand_uniform(&rnd, 8) == 0)
		{
			tides_vfs_fault_freeze_after(vf, tides_rand_uniform(&rnd, 24));
			cnt.recov_crashes++;
		}
		s = store_open(&st);
		if (s == TIDES_OK && !frozen())
			break;
		if (!frozen() || attempt > 3)
		{
			FAILF("recovery failed: %s: %s", tides_status_name(s), st.db ? tides_errmsg(st.db) : "");
			store_crash(&st);
			new_store();
			return;
		}
		/* the machine died during recovery: crash again */
		tides_vfs_fault_crash(vf, 0);
		store_crash(&st);
	}
	check_after_crash();
}

static void
run_mode(int m, const char *name, int points)
{
	uint64_t	mut_per_life = 0;

	mode = m;
	mode_name = name;
	next_tag = 1;
	memset(&st, 0, sizeof(st));
	tides_options_default(&st.opts);
	st.opts.memtable_size = 64 << 10;
	st.opts.memtable_count = 3;
	/* every other mode flushes two memtables at once (db/flush.c) */
	st.opts.memtables_per_flush = 1 + (uint32_t) (m % 2);
	st.opts.block_cache_size = 1 << 20;
	st.opts.meta_size = 2 << 20;
	st.opts.log_segment_size = 64 << 10;
	st.opts.target_file_size = 64 << 10;
	st.opts.level_base_size = 64 << 10;
	st.opts.level_size_ratio = 4;
	st.opts.level0_compaction_trigger = 2;
	st.opts.level0_slowdown_trigger = 6;
	st.opts.level0_stop_trigger = 10;
	st.opts.delayed_write_rate = 0;
	st.opts.max_open_tags = 256;
	st.opts.sync_mode = (tides_sync_mode) m;
	st.opts.sync_interval_ms = 1;
	tides_rand_seed(&rnd, test_seed * 7919 + (uint64_t) m);

	for (point = 0; point < points && test_failures < 10; point++)
	{
		uint64_t	start;
		int			steps = 150 + (int) tides_rand_uniform(&rnd, 300);

		if (point % LIVES_PER_STORE == 0)
		{
			if (st.db != NULL)
				store_crash(&st);
			new_store();
		}
		start = tides_vfs_fault_mutations(vf);
		/* the crash comes after a random number of mutating calls */
		if (mut_per_life > 0)
			tides_vfs_fault_freeze_after(vf, tides_rand_uniform(&rnd, mut_per_life + mut_per_life / 4));
		workload(steps);
		if (!frozen())
		{
			uint64_t	used = tides_vfs_fault_mutations(vf) - start;

			/* learn how long a life is, so that crash points spread over it */
			mut_per_life = mut_per_life ? (mut_per_life * 3 + used) / 4 : used;
		}
		crash_and_recover();
	}
	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(st.dir);
	else
		fprintf(stderr, "test_crash: store kept in %s\n", st.dir);
	free(st.dir);
	st.dir = NULL;
	tides_vfs_fault_free(vf);
	vf = NULL;
	free(txns);
	txns = NULL;
	ntxns = captxns = 0;
	fprintf(stderr, "test_crash: %s: %d crash points, %llu transactions, %llu durable checked, "
			"%llu partial and reported, %llu lost unacknowledged, %llu crashes during recovery, "
			"%llu crashes keeping part of the unsynced writes, %llu flushes, %llu compactions\n",
			name, point, (unsigned long long) cnt.txns, (unsigned long long) cnt.durable_checked,
			(unsigned long long) cnt.partial_reported, (unsigned long long) cnt.gone,
			(unsigned long long) cnt.recov_crashes, (unsigned long long) cnt.kept_crashes,
			(unsigned long long) cnt.flushes, (unsigned long long) cnt.compactions);
	memset(&cnt, 0, sizeof(cnt));
}

int
main(int argc, char **argv)
{
	int			points;
	const char *only = getenv("TEST_CRASH_MODE");

	test_init(argc, argv);
	points = (int) env_u64("TEST_CRASH_POINTS", 200);
	if (only == NULL || strcmp(only, "full") == 0)
		run_mode(TIDES_SYNC_FULL, "full", points);
	if (only == NULL || strcmp(only, "interval") == 0)
		run_mode(TIDES_SYNC_INTERVAL, "interval", points);
	if (only == NULL || strcmp(only, "none") == 0)
		run_mode(TIDES_SYNC_NONE, "none", points);
	return test_finish("test_crash");
}
