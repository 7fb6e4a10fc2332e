/*
 * test_multiproc.c -- several processes on one shared region.
 *
 * The parent lays out a region in MAP_SHARED memory (test_shared_alloc),
 * recovers the store and forks:
 *
 *   - WRITERS writer processes (more than the CPUs of a test machine, so
 *     that writers lose their CPU between reserving and publishing, and
 *     later writers publish them).  Each owns a key range ("w<n>/...", one
 *     digit), so its own oracle is exact even though everyone writes at once: single puts,
 *     deletes, multi-entry batches; every read of its own keys (point reads,
 *     bounded iterator walks both ways) must match its oracle; snapshots are
 *     taken, written past, and read much later; and pair batches write two
 *     keys with one value, for the reader's atomicity check;
 *   - one background process running flush, compaction and maintenance in
 *     a loop (as a Postgres background worker would), and a second one
 *     running only compaction (a second compaction worker: two compactions
 *     at once must keep the levels ordered; with an even seed level 0 is
 *     kept as sorted runs, so merges in level 0 race with its moves down);
 *   - one reader process taking snapshots and iterating across all ranges
 *     while compactions replace files underneath: every pair it sees must
 *     be consistent (a batch is visible whole or not at all), every value
 *     well formed, and a snapshot iterator must see the same thing twice.
 *
 * At the end the parent compares the full contents against the union of
 * the writers' oracles (published through shared memory), verifies every
 * file, simulates a process crash (fresh region, recovery) and compares
 * again.  Deterministic per process for a given TEST_SEED.
 */
#include "harness.h"

#include <sched.h>
#include <stdatomic.h>
#include <sys/wait.h>

#define WRITERS 9			/* at most 9: the key ranges are "w<digit>/" */
#define KEYS_PER_WRITER 1500
#define PAIRS 64
#define MAX_SNAPS 3

typedef struct ctl
{
	_Atomic int stop;
	_Atomic int writers_done;
	_Atomic uint64_t reader_checks;
	_Atomic uint64_t bg_rounds;
	_Atomic uint64_t compactor_compactions;
	uint32_t	final[WRITERS][KEYS_PER_WRITER];
} ctl;

static store st;
static ctl *C;
static int	me = -1;				/* writer index, or -1 */
static const char *role = "parent";
static tides_rand rnd;
static uint64_t ops;

#define FAILF(...) \
	do { \
		test_failures++; \
		fprintf(stderr, "test_multiproc [%s %d, pid %d, op %llu, seed %llu]: ", role, me, (int) getpid(), \
				(unsigned long long) ops, (unsigned long long) test_seed); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
	} while (0)

static size_t
wkey(char *buf, int w, int i)
{
	return (size_t) sprintf(buf, "w%d/k%05d", w, i);
}

static size_t
pkey(char *buf, int w, int j, char ab)
{
	return (size_t) sprintf(buf, "w%d/pair%c/%03d", w, ab, j);
}

/* value of version ver of writer w's key i: names all three */
static size_t
wval(uint8_t *out, int w, int i, uint32_t ver)
{
	uint64_t	h = h_mix(((uint64_t) w << 48) ^ ((uint64_t) i << 24) ^ ver);
	size_t		n = 12 + h % 120;

	if (h % 97 == 0)
		n = 1500;
	for (size_t k = 12; k < n; k++)
		out[k] = (uint8_t) (h_mix(h + k) >> 7);
	tides_put32(out, (uint32_t) w);
	tides_put32(out + 4, (uint32_t) i);
	tides_put32(out + 8, ver);
	return n;
}

static bool
wval_is(const void *v, size_t n, int w, int i, uint32_t ver)
{
	uint8_t		buf[2048];
	size_t		want = wval(buf, w, i, ver);

	return n == want && memcmp(v, buf, n) == 0;
}

/*
 * Writers with an odd number write in sync mode none, and half of their
 * batches without waiting for publication (tides_batch_no_wait): their own
 * reads right after must still see them, other processes must see each
 * batch whole, and a point taken after one must become published.
 */
static tides_status
write_retry(tides_batch *b)
{
	tides_status s;
	bool		no_wait = me % 2 == 1 && tides_rand_uniform(&rnd, 2) == 0;

	for (int tries = 0;; tries++)
	{
		if (no_wait)
			tides_batch_no_wait(b);
		s = tides_write(st.db, b, NULL);
		if (s == TIDES_OK && no_wait && tides_rand_uniform(&rnd, 8) == 0)
		{
			tides_await_point(st.db, tides_write_point(st.db));
			if (tides_write_point(st.db) != 0)
				FAILF("a no-wait write is not published after tides_await_point");
		}
		if (s != TIDES_BUSY || tries > 200000)
			return s;
		/* the background process will flush; wait without spinning hard */
		if (tries % 16 == 15)
			usleep(200);
		else
			sched_yield();
	}
}

/* ---------------------------------------------------------------- writer */

typedef struct wsnap
{
	bool		used;
	tides_snapshot s;
	uint32_t	vers[KEYS_PER_WRITER];
} wsnap;

static uint32_t vers[KEYS_PER_WRITER];
static uint32_t nextver[KEYS_PER_WRITER];
static wsnap wsnaps[MAX_SNAPS];

static void
w_check_get(int i, const uint32_t *v, const tides_snapshot *snap)
{
	char		k[32];
	size_t		kl = wkey(k, me, i);
	void	   *val = NULL;
	size_t		vl = 0;
	tides_status s = tides_get(st.db, snap, k, kl, &val, &vl);

	if (v[i] == 0 ? s != TIDES_NOT_FOUND : (s != TIDES_OK || !wval_is(val, vl, me, i, v[i])))
		FAILF("get %s%s: want version %u, got %s (%s)", k, snap ? " at a snapshot" : "", v[i],
			  tides_status_name(s), s == TIDES_OK && vl >= 12 ? "another version" : tides_errmsg(st.db));
	free(val);
}

/* a bounded walk over this writer's keys, compared with v */
static void
w_scan(const uint32_t *v, const tides_snapshot *snap)
{
	int			lo = (int) tides_rand_uniform(&rnd, KEYS_PER_WRITER);
	int			hi = lo + 1 + (int) tides_rand_uniform(&rnd, 200);
	char		lok[32],
				hik[32];
	tides_iter_options o;
	tides_iter *it;
	int			pos;
	bool		backward = tides_rand_uniform(&rnd, 2) == 0;

	if (hi > KEYS_PER_WRITER)
		hi = KEYS_PER_WRITER;
	memset(&o, 0, sizeof(o));
	o.snap = snap;
	o.lower = lok;
	o.lower_len = wkey(lok, me, lo);
	o.upper = hik;
	o.upper_len = wkey(hik, me, hi);
	o.fill_cache = true;
	it = tides_iter_new(st.db, &o);
	if (it == NULL)
	{
		FAILF("tides_iter_new failed");
		return;
	}
	if (backward)
	{
		tides_iter_last(it);
		pos = hi - 1;
	}
	else
	{
		tides_iter_first(it);
		pos = lo;
	}
	for (;;)
	{
		size_t		kl,
					vl;

		while (pos >= lo && pos < hi && v[pos] == 0)
			pos += backward ? -1 : 1;
		if (pos < lo || pos >= hi)
		{
			if (tides_iter_valid(it))
				FAILF("scan [%d,%d) %s: iterator has an extra key", lo, hi, backward ? "backward" : "forward");
			else if (tides_iter_status(it) != TIDES_OK)
				FAILF("scan: %s", tides_errmsg(st.db));
			break;
		}
		if (!tides_iter_valid(it))
		{
			FAILF("scan [%d,%d) %s%s: iterator ended before key %d (%s)", lo, hi,
				  backward ? "backward" : "forward", snap ? " (snapshot)" : "", pos,
				  tides_status_name(tides_iter_status(it)));
			break;
		}
		{
			char		want[32];
			size_t		wl = wkey(want, me, pos);
			const void *k = tides_iter_key(it, &kl);
			const void *val = tides_iter_value(it, &vl);

			if (kl != wl || memcmp(k, want, wl) != 0 || !wval_is(val, vl, me, pos, v[pos]))
			{
				FAILF("scan [%d,%d) %s%s: at key %d the iterator differs", lo, hi,
					  backward ? "backward" : "forward", snap ? " (snapshot)" : "", pos);
				break;
			}
		}
		pos += backward ? -1 : 1;
		if (backward)
			tides_iter_prev(it);
		else
			tides_iter_next(it);
	}
	tides_iter_free(it);
}

static void
writer_main(int w, int nops)
{
	tides_batch *b = tides_batch_new();
	uint32_t	pairver = 1;

	me = w;
	role = "writer";
	if (w % 2 == 1)
		tides_set_sync_mode(st.db, TIDES_SYNC_NONE);
	tides_rand_seed(&rnd, test_seed * 1000 + (uint64_t) w + 1);
	for (int i = 0; i < KEYS_PER_WRITER; i++)
		nextver[i] = 1;
	for (ops = 0; ops < (uint64_t) nops && test_failures < 10; ops++)
	{
		uint64_t	p = tides_rand_uniform(&rnd, 100);
		char		k[32];
		uint8_t		v[2048];
		size_t		kl,
					vl;

		tides_batch_clear(b);
		if (p < 40)
		{
			int			i = (int) tides_rand_uniform(&rnd, KEYS_PER_WRITER);
			uint32_t	ver = nextver[i]++;

			kl = wkey(k, w, i);
			vl = wval(v, w, i, ver);
			tides_batch_put(b, k, kl, v, vl);
			if (write_retry(b) == TIDES_OK)
				vers[i] = ver;
			else
				FAILF("put: %s", tides_errmsg(st.db));
		}
		else if (p < 50)
		{
			int			i = (int) tides_rand_uniform(&rnd, KEYS_PER_WRITER);

			kl = wkey(k, w, i);
			tides_batch_delete(b, k, kl);
			if (write_retry(b) == TIDES_OK)
				vers[i] = 0;
			else
				FAILF("delete: %s", tides_errmsg(st.db));
		}
		else if (p < 58)
		{
			int			n = 2 + (int) tides_rand_uniform(&rnd, 10);
			int			idx[12];
			uint32_t	vv[12];

			for (int j = 0; j < n; j++)
			{
				idx[j] = (int) tides_rand_uniform(&rnd, KEYS_PER_WRITER);
				kl = wkey(k, w, idx[j]);
				if (tides_rand_uniform(&rnd, 4) == 0)
				{
					vv[j] = 0;
					tides_batch_delete(b, k, kl);
				}
				else
				{
					vv[j] = nextver[idx[j]]++;
					vl = wval(v, w, idx[j], vv[j]);
					tides_batch_put(b, k, kl, v, vl);
				}
			}
			if (write_retry(b) == TIDES_OK)
				for (int j = 0; j < n; j++)
					vers[idx[j]] = vv[j];
			else
				FAILF("batch: %s", tides_errmsg(st.db));
		}
		else if (p < 62)
		{
			/* a pair: two keys, one value, one batch */
			int			j = (int) tides_rand_uniform(&rnd, PAIRS);
			uint8_t		pv[16];

			tides_put32(pv, (uint32_t) w);
			tides_put32(pv + 4, (uint32_t) j);
			tides_put64(pv + 8, pairver++);
			kl = pkey(k, w, j, 'A');
			tides_batch_put(b, k, kl, pv, sizeof(pv));
			kl = pkey(k, w, j, 'B');
			tides_batch_put(b, k, kl, pv, sizeof(pv));
			if (write_retry(b) != TIDES_OK)
				FAILF("pair: %s", tides_errmsg(st.db));
		}
		else if (p < 85)
			w_check_get((int) tides_rand_uniform(&rnd, KEYS_PER_WRITER), vers, NULL);
		else if (p < 92)
			w_scan(vers, NULL);
		else if (p < 96)
		{
			wsnap	   *s = &wsnaps[tides_rand_uniform(&rnd, MAX_SNAPS)];

			if (s->used)
			{
				if (tides_rand_uniform(&rnd, 2))
					w_scan(s->vers, &s->s);
				else
					for (int r = 0; r < 20; r++)
						w_check_get((int) tides_rand_uniform(&rnd, KEYS_PER_WRITER), s->vers, &s->s);
			}
		}
		else
		{
			wsnap	   *s = &wsnaps[tides_rand_uniform(&rnd, MAX_SNAPS)];

			if (s->used)
			{
				tides_snapshot_release(st.db, &s->s);
				s->used = false;
			}
			else if (tides_snapshot_acquire(st.db, &s->s) == TIDES_OK)
			{
				memcpy(s->vers, vers, sizeof(vers));
				s->used = true;
			}
		}
	}
	for (int i = 0; i < MAX_SNAPS; i++)
		if (wsnaps[i].used)
		{
			w_scan(wsnaps[i].vers, &wsnaps[i].s);
			tides_snapshot_release(st.db, &wsnaps[i].s);
		}
	memcpy(C->final[w], vers, sizeof(vers));
	tides_batch_free(b);
	atomic_fetch_add(&C->writers_done, 1);
}

/* ------------------------------------------------------ background, reader */

static void
background_main(void)
{
	role = "background";
	while (!atomic_load(&C->stop))
	{
		bool		a = false,
					b = false,
					c = false;
		tides_status s;

		if ((s = tides_flush_work(st.db, &a)) != TIDES_OK)
			FAILF("flush: %s: %s", tides_status_name(s), tides_errmsg(st.db));
		if ((s = tides_compact_work(st.db, &b)) != TIDES_OK)
			FAILF("compact: %s: %s", tides_status_name(s), tides_errmsg(st.db));
		if ((s = tides_maint_work(st.db, &c)) != TIDES_OK)
			FAILF("maint: %s: %s", tides_status_name(s), tides_errmsg(st.db));
		atomic_fetch_add(&C->bg_rounds, 1);
		if (!a && !b && !c)
			usleep(500);
		if (test_failures > 10)
			break;
	}
}

/* a second compaction worker */
static void
compactor_main(void)
{
	role = "compactor";
	while (!atomic_load(&C->stop))
	{
		bool		did = false;
		tides_status s;

		if ((s = tides_compact_work(st.db, &did)) != TIDES_OK)
			FAILF("compact: %s: %s", tides_status_name(s), tides_errmsg(st.db));
		if (did)
			atomic_fetch_add(&C->compactor_compactions, 1);
		else
			usleep(300);
		if (test_failures > 10)
			break;
	}
}

/* scan everything at a snapshot: pairs consistent, values well formed */
static uint64_t
reader_scan(const tides_snapshot *snap, uint64_t *digest)
{
	tides_iter_options o;
	tides_iter *it;
	uint64_t	n = 0,
				d = 0;
	uint8_t		lastA[16];
	char		lastAkey[32];
	bool		haveA = false;

	memset(&o, 0, sizeof(o));
	o.snap = snap;
	o.fill_cache = tides_rand_uniform(&rnd, 2);
	it = tides_iter_new(st.db, &o);
	if (it == NULL)
	{
		FAILF("tides_iter_new failed");
		return 0;
	}
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
	{
		size_t		kl,
					vl;
		const char *k = tides_iter_key(it, &kl);
		const uint8_t *v = tides_iter_value(it, &vl);
		char		kb[40];
		int			w,
					i;

		n++;
		d = h_mix(d ^ h_mix(kl * 31 + vl)) + (vl >= 12 ? tides_get32(v + 8) : 0);
		if (kl >= sizeof(kb))
		{
			FAILF("reader: unknown key of %zu bytes", kl);
			continue;
		}
		memcpy(kb, k, kl);
		kb[kl] = 0;
		if (sscanf(kb, "w%d/k%d", &w, &i) == 2)
		{
			if (vl < 12 || tides_get32(v) != (uint32_t) w || tides_get32(v + 4) != (uint32_t) i ||
				!wval_is(v, vl, w, i, tides_get32(v + 8)))
				FAILF("reader: key %s has a malformed value", kb);
		}
		else if (strstr(kb, "/pairA/") != NULL)
		{
			if (vl != 16)
				FAILF("reader: pair key %s has %zu bytes", kb, vl);
			memcpy(lastA, v, 16);
			memcpy(lastAkey, kb, kl + 1);
			haveA = true;
		}
		else if (strstr(kb, "/pairB/") != NULL)
		{
			char		want[40];

			snprintf(want, sizeof(want), "%s", kb);
			want[strstr(want, "/pairB/") - want + 5] = 'A';
			/* pairA keys of one writer all come before its pairB keys: look up A */
			{
				void	   *av = NULL;
				size_t		al = 0;
				tides_status s = tides_get(st.db, snap, want, strlen(want), &av, &al);

				if (s != TIDES_OK || al != vl || memcmp(av, v, vl) != 0)
					FAILF("reader: pair %s / %s torn at a snapshot (%s)", want, kb, tides_status_name(s));
				free(av);
			}
		}
		else
			FAILF("reader: unknown key %s", kb);
	}
	(void) lastA;
	(void) lastAkey;
	(void) haveA;
	if (tides_iter_status(it) != TIDES_OK)
		FAILF("reader scan: %s", tides_errmsg(st.db));
	tides_iter_free(it);
	*digest = d;
	return n;
}

static void
reader_main(void)
{
	role = "reader";
	tides_rand_seed(&rnd, test_seed * 77 + 5);
	while (atomic_load(&C->writers_done) < WRITERS && test_failures < 10)
	{
		tides_snapshot s;
		uint64_t	d1,
					d2,
					n1,
					n2;

		if (tides_snapshot_acquire(st.db, &s) != TIDES_OK)
		{
			FAILF("snapshot: %s", tides_errmsg(st.db));
			break;
		}
		n1 = reader_scan(&s, &d1);
		usleep(2000);
		/* the same snapshot, later, after flushes and compactions */
		n2 = reader_scan(&s, &d2);
		if (n1 != n2 || d1 != d2)
			FAILF("reader: a snapshot changed: %llu keys then %llu", (unsigned long long) n1,
				  (unsigned long long) n2);
		tides_snapshot_release(st.db, &s);
		atomic_fetch_add(&C->reader_checks, 1);
		ops++;
	}
}

/* ---------------------------------------------------------------- parent */

static pid_t
spawn(void (*fn) (int, int), int a, int b)
{
	pid_t		pid = fork();

	if (pid < 0)
	{
		perror("fork");
		abort();
	}
	if (pid == 0)
	{
		tides_db   *parent_db = st.db;
		tides_status s;

		/* attach: a process of its own with its own handle */
		s = tides_open(st.region, st.dir, &st.opts, NULL, false, NULL, &st.db);
		if (s != TIDES_OK)
		{
			fprintf(stderr, "child cannot attach: %s\n", tides_status_name(s));
			_exit(2);
		}
		(void) parent_db;
		fn(a, b);
		tides_close(st.db);
		_exit(test_failures ? 1 : 0);
	}
	return pid;
}

static void
run_writer(int w, int nops)
{
	writer_main(w, nops);
}

static void
run_background(int a, int b)
{
	(void) a;
	(void) b;
	background_main();
}

static void
run_compactor(int a, int b)
{
	(void) a;
	(void) b;
	compactor_main();
}

static void
run_reader(int a, int b)
{
	(void) a;
	(void) b;
	reader_main();
}

static void
compare_all(const char *when)
{
	uint32_t	expect = 0,
				seen = 0;

	for (int w = 0; w < WRITERS; w++)
		for (int i = 0; i < KEYS_PER_WRITER; i++)
		{
			char		k[32];
			size_t		kl = wkey(k, w, i);
			void	   *v = NULL;
			size_t		vl;
			tides_status s = tides_get(st.db, NULL, k, kl, &v, &vl);
			uint32_t	want = C->final[w][i];

			if (want)
				expect++;
			if (want == 0 ? s != TIDES_NOT_FOUND : (s != TIDES_OK || !wval_is(v, vl, w, i, want)))
				FAILF("%s: %s want version %u, got %s", when, k, want, tides_status_name(s));
			free(v);
		}
	/* and no extra keys */
	{
		tides_iter *it = tides_iter_new(st.db, NULL);

		for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
		{
			size_t		kl;
			const char *k = tides_iter_key(it, &kl);

			if (kl > 3 && k[2] == '/' && k[3] == 'k')
				seen++;
		}
		if (tides_iter_status(it) != TIDES_OK)
			FAILF("%s: scan failed: %s", when, tides_errmsg(st.db));
		tides_iter_free(it);
	}
	if (seen != expect)
		FAILF("%s: the store holds %u writer keys, the oracles %u", when, seen, expect);
}

int
main(int argc, char **argv)
{
	pid_t		pids[WRITERS + 3];
	int			nops;
	int			quiet = 0;

	test_init(argc, argv);
	nops = (int) env_u64("TEST_OPS", 25000);
	memset(&st, 0, sizeof(st));
	tides_options_default(&st.opts);
	st.opts.memtable_size = 64 << 10;
	st.opts.memtable_count = 4;
	/* merged flushes (db/flush.c) for most seeds, the default 42 among them */
	st.opts.memtables_per_flush = (uint32_t) (3 - test_seed % 3);
	/* free slots give their pages back after 1 ms: while other processes write (db/maint.c) */
	st.opts.memtable_discard_ms = 1;
	st.opts.block_cache_size = 2 << 20;
	st.opts.meta_size = 4 << 20;
	st.opts.log_segment_size = 64 << 10;
	st.opts.target_file_size = 64 << 10;
	st.opts.level_base_size = 64 << 10;
	st.opts.level_size_ratio = 4;
	st.opts.level0_compaction_trigger = 3;
	st.opts.level0_slowdown_trigger = 8;
	st.opts.level0_stop_trigger = 16;
	st.opts.delayed_write_rate = 1 << 20;	/* paced writers share one clock across processes */
	st.opts.sync_mode = TIDES_SYNC_FULL;
	st.opts.block_size = 1024;
	/* level 0 as sorted runs (merges in place beside moves down) for even seeds */
	st.opts.level0_tiered = test_seed % 2 == 0;
	/*
	 * The writers' skiplist splices, kept from batch to batch per key
	 * prefix (write.c, splice_for): one per memtable (0), one shared by all
	 * writers' keys "w..." so that other processes link nodes between a
	 * splice's pairs between two of its uses (1), or two per writer,
	 * "w<n>/k" and "w<n>/p", alternating as singles and pairs do (4).
	 */
	st.opts.range_prefix_len = (uint32_t[]) {0, 1, 4}[(test_seed / 2) % 3];
	st.dir = fast_tmpdir("multiproc");
	C = test_shared_alloc(sizeof(ctl));
	memset(C, 0, sizeof(*C));
	if (store_open(&st) != TIDES_OK)
	{
		FAILF("open failed");
		return test_finish("test_multiproc");
	}

	pids[0] = spawn(run_background, 0, 0);
	pids[1] = spawn(run_reader, 0, 0);
	pids[2] = spawn(run_compactor, 0, 0);
	for (int w = 0; w < WRITERS; w++)
		pids[3 + w] = spawn(run_writer, w, nops);
	for (int w = 0; w < WRITERS; w++)
	{
		int			status;

		waitpid(pids[3 + w], &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			FAILF("writer %d failed (status 0x%x)", w, status);
	}
	atomic_store(&C->stop, 1);
	for (int i = 0; i < 3; i++)
	{
		static const char *const names[] = {"background", "reader", "compactor"};
		int			status;

		waitpid(pids[i], &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			FAILF("%s process failed (status 0x%x)", names[i], status);
	}
	fprintf(stderr, "test_multiproc: %d writers x %d ops, %llu reader snapshot checks, %llu background rounds, "
			"%llu compactions by the second compactor\n",
			WRITERS, nops, (unsigned long long) atomic_load(&C->reader_checks),
			(unsigned long long) atomic_load(&C->bg_rounds),
			(unsigned long long) atomic_load(&C->compactor_compactions));
	if (atomic_load(&C->reader_checks) == 0)
		FAILF("the reader never completed a check");
	{
		uint64_t	discards = h_stats(st.db).memtable_discards;

		fprintf(stderr, "test_multiproc: %llu idle memtables discarded while writers ran\n",
				(unsigned long long) discards);
		if (discards == 0)
			FAILF("no idle memtable was discarded");
	}

	compare_all("after the run");
	for (int i = 0; i < 100 && tides_seal_memtable(st.db) == TIDES_BUSY; i++)
		drain(st.db);
	if (drain(st.db) != TIDES_OK)
		FAILF("drain: %s", tides_errmsg(st.db));
	compare_all("after draining");
	if (tides_verify(st.db, report_problem, &quiet) != 0)
		FAILF("tides_verify found problems");

	store_crash(&st);
	if (store_open(&st) != TIDES_OK)
		FAILF("recovery failed: %s", st.db ? tides_errmsg(st.db) : "");
	else
		compare_all("after a process crash and recovery");
	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(st.dir);
	else
		fprintf(stderr, "test_multiproc: store kept in %s\n", st.dir);
	free(st.dir);
	test_shared_free(C, sizeof(ctl));
	return test_finish("test_multiproc");
}
