/*
 * kvbench.c -- key/value workload driver: tides vs RocksDB.
 *
 * Every engine is driven by the same workload code below through the
 * kv_engine adapter table (kv_adapter.h).  Each measured point (engine,
 * compression, value size, threads, workload) runs in its own forked child
 * process, so peak RSS (VmHWM) and the /proc/self/io counters belong to that
 * engine alone; the child sends its result to the parent through a pipe and
 * the parent writes the CSV.
 *
 * Workloads (per engine / compression / value size / thread count group,
 * in this order, on one database directory):
 *   fillseq     fresh database, keys 0..N-1 in ascending order
 *   fillrandom  fresh database, keys 0..N-1 in a pseudo-random permutation
 *   overwrite   N puts of uniformly random existing keys
 *   readrandom  READ_FRAC*N gets of uniformly random existing keys
 *   seekrandom  SEEK_FRAC*N iterator seeks to random keys + NEXTS nexts each
 *   mixed       MIXED_FRAC*N ops, each a get or a put with probability 1/2
 *
 * Configuration comes from environment variables; see README.md.
 */
#define _GNU_SOURCE
#include "hist.h"
#include "kv_adapter.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define KEY_LEN 16
#define MAX_VALUE 65536
#define POOL_SIZE (1u << 20)
#define MAX_LIST 8
#define MAX_THREADS 64
#define MAX_BATCH 1024

/* ------------------------------------------------------------ settings */

typedef enum wl_kind
{
	WL_FILLSEQ,
	WL_FILLRANDOM,
	WL_OVERWRITE,
	WL_READRANDOM,
	WL_SEEKRANDOM,
	WL_MIXED,
	WL_COUNT
} wl_kind;

static const char *const wl_names[WL_COUNT] = {
	"fillseq", "fillrandom", "overwrite", "readrandom", "seekrandom", "mixed"
};

typedef struct settings
{
	bool		quick;
	const kv_engine *engines[MAX_LIST];
	int			n_engines;
	kv_comp		comps[MAX_LIST];
	int			n_comps;
	int			vsizes[MAX_LIST];
	int			n_vsizes;
	int			threads[MAX_LIST];
	int			n_threads;
	wl_kind		wls[WL_COUNT];
	int			n_wls;
	uint64_t	n_small;		/* keys for values < 1 KiB */
	uint64_t	n_large;		/* keys for values >= 1 KiB */
	double		read_frac, seek_frac, mixed_frac;
	int			nexts;
	int			batch;
	uint64_t	seed;
	const char *dir;
	const char *out;
	int			child_timeout;
	bool		keep;			/* keep the database directories at the end */
	bool		reuse;			/* read workloads run on a database left by BENCH_KEEP */
	kv_config	base;			/* engine settings */
} settings;

static settings S;

/* ------------------------------------------------------------- results */

typedef struct result
{
	char		engine[16];
	kv_comp		comp;
	int			vsize;
	int			threads;
	wl_kind		wl;
	uint64_t	nkeys;
	uint64_t	ops;			/* keys written + gets + seeks */
	uint64_t	reads, writes, found, not_found, errors, entries;
	double		seconds;
	double		drain_seconds;
	uint64_t	p50_ns, p99_ns, p999_ns, max_ns, mean_ns;
	uint64_t	rd_p99_ns, wr_p99_ns;
	uint64_t	user_bytes;
	uint64_t	io_write_bytes, io_cancelled_bytes, io_read_bytes;
	uint64_t	size_on_disk, alloc_on_disk, sst_bytes;
	uint64_t	peak_rss_kb;
	uint64_t	busy_waits, bg_errors, stalls;
	double		cpu_user_s, cpu_sys_s;	/* whole process, workload + drain */
	uint64_t	invol_csw;		/* involuntary context switches (CPU contention) */
	bool		ok;
	char		msg[256];
} result;

static const char *
comp_name(kv_comp c)
{
	return c == KV_COMP_LZ4 ? "lz4" : "none";
}

/* -------------------------------------------------- keys, values, RNG */

static inline uint64_t
mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static inline uint64_t
rng_next(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ull;
	return mix64(*s);
}

/* 16 ASCII decimal digits, zero padded: memcmp order == numeric order */
static inline void
make_key(char *buf, uint64_t k)
{
	for (int i = KEY_LEN - 1; i >= 0; i--)
	{
		buf[i] = (char) ('0' + k % 10);
		k /= 10;
	}
}

static unsigned char *value_pool;

/*
 * Values: the first half is vsize/2 random bytes taken from a fixed 1 MiB
 * pool of random bytes at an offset derived from (key, version); the second
 * half repeats the first half.  Like db_bench's compression_ratio = 0.5:
 * a block compressor finds the repeat, so values compress about 2x, while
 * the random halves defeat any further compression.  Identical for every
 * engine (the pool comes from a fixed seed).
 */
static void
make_pool(uint64_t seed)
{
	uint64_t	s = seed ^ 0x5eed5eed5eedull;

	value_pool = malloc(POOL_SIZE);
	for (size_t i = 0; i < POOL_SIZE; i += 8)
	{
		uint64_t	r = rng_next(&s);

		memcpy(value_pool + i, &r, 8);
	}
}

static inline void
make_value(unsigned char *buf, uint64_t k, uint64_t version, int vsize)
{
	size_t		half = (size_t) vsize / 2;
	size_t		off;

	if (half == 0)
	{
		memset(buf, 'v', (size_t) vsize);
		return;
	}
	off = mix64(k * 0x2545f4914f6cdd1dull + version * 0x9e3779b97f4a7c15ull + S.seed)
		% (POOL_SIZE - half);
	memcpy(buf, value_pool + off, half);
	memcpy(buf + half, buf, (size_t) vsize - half);
}

/* a value made by make_value: its second half repeats its first half */
static inline bool
value_ok(const unsigned char *v, size_t len, int vsize)
{
	size_t		half = (size_t) vsize / 2;

	if (len != (size_t) vsize)
		return false;
	return half == 0 || memcmp(v, v + half, half) == 0;
}

/*
 * Pseudo-random permutation of [0, n): a 4-round Feistel network over the
 * smallest even number of bits covering n, with cycle walking.
 */
typedef struct perm
{
	uint64_t	n;
	unsigned	hb;
	uint64_t	mask;
	uint64_t	keys[4];
} perm;

static void
perm_init(perm *p, uint64_t n, uint64_t seed)
{
	unsigned	bits = 1;

	while (bits < 64 && ((uint64_t) 1 << bits) < n)
		bits++;
	p->n = n;
	p->hb = (bits + 1) / 2;
	p->mask = ((uint64_t) 1 << p->hb) - 1;
	for (int i = 0; i < 4; i++)
		p->keys[i] = mix64(seed + (uint64_t) i * 0x1234567ull);
}

static inline uint64_t
perm_apply(const perm *p, uint64_t x)
{
	do
	{
		uint64_t	l = x >> p->hb,
					r = x & p->mask;

		for (int i = 0; i < 4; i++)
		{
			uint64_t	t = r;

			r = l ^ (mix64(r ^ p->keys[i]) & p->mask);
			l = t;
		}
		x = (l << p->hb) | r;
	} while (x >= p->n);
	return x;
}

/* ---------------------------------------------------------- /proc data */

typedef struct io_counters
{
	uint64_t	read_bytes, write_bytes, cancelled;
} io_counters;

static void
read_io(io_counters *c)
{
	FILE	   *f = fopen("/proc/self/io", "r");
	char		line[128];

	memset(c, 0, sizeof(*c));
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
	{
		unsigned long long v;

		if (sscanf(line, "read_bytes: %llu", &v) == 1)
			c->read_bytes = v;
		else if (sscanf(line, "write_bytes: %llu", &v) == 1)
			c->write_bytes = v;
		else if (sscanf(line, "cancelled_write_bytes: %llu", &v) == 1)
			c->cancelled = v;
	}
	fclose(f);
}

static uint64_t
read_hwm_kb(void)
{
	FILE	   *f = fopen("/proc/self/status", "r");
	char		line[256];
	unsigned long long v = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* ------------------------------------------------------------- workers */

typedef struct run_ctx
{
	const kv_engine *e;
	wl_kind		wl;
	int			vsize;
	uint64_t	nkeys;
	uint64_t	total_ops;		/* op slots handed out by 'next' */
	int			batch;
	perm		perm;
	_Atomic uint64_t next;
	_Atomic bool abort;
	pthread_barrier_t start;
} run_ctx;

typedef struct worker
{
	pthread_t	tid;
	int			id;
	run_ctx    *rc;
	kv_handle  *h;
	hist		lat, rlat, wlat;
	uint64_t	reads, writes, found, not_found, errors, entries, user_bytes;
	char		err[256];
} worker;

static void
note_error(worker *w, const char *what)
{
	w->errors++;
	if (w->err[0] == '\0')
		snprintf(w->err, sizeof(w->err), "%s: %s", what, w->rc->e->errmsg(w->h));
	if (w->errors > 100)
		atomic_store(&w->rc->abort, true);
}

static inline uint64_t
now_ns(void)
{
	return kv_now_ns();
}

static void
do_get(worker *w, uint64_t k, unsigned char *vbuf, bool mixed)
{
	char		key[KEY_LEN];
	size_t		vlen = 0;
	const kv_engine *e = w->rc->e;

	make_key(key, k);
	uint64_t	t0 = now_ns();
	int			rc = e->get(w->h, key, KEY_LEN, vbuf, MAX_VALUE, &vlen);
	uint64_t	dt = now_ns() - t0;

	hist_add(&w->lat, dt);
	if (mixed)
		hist_add(&w->rlat, dt);
	w->reads++;
	if (rc == 0)
	{
		w->found++;
		if (!value_ok(vbuf, vlen, w->rc->vsize))
		{
			w->errors++;
			if (w->err[0] == '\0')
				snprintf(w->err, sizeof(w->err), "bad value for key %" PRIu64 " (len %zu)", k, vlen);
		}
	}
	else if (rc == KV_NOTFOUND)
		w->not_found++;
	else
		note_error(w, "get");
}

static void
do_puts(worker *w, const uint64_t *keys, int n, uint64_t version,
		unsigned char *vbufs, bool mixed)
{
	char		kbuf[MAX_BATCH][KEY_LEN];
	kv_pair		kv[MAX_BATCH];
	int			vsize = w->rc->vsize;

	for (int i = 0; i < n; i++)
	{
		make_key(kbuf[i], keys[i]);
		make_value(vbufs + (size_t) i * vsize, keys[i], version, vsize);
		kv[i].key = kbuf[i];
		kv[i].klen = KEY_LEN;
		kv[i].val = vbufs + (size_t) i * vsize;
		kv[i].vlen = (size_t) vsize;
	}
	uint64_t	t0 = now_ns();
	int			rc = w->rc->e->put_batch(w->h, kv, n);
	uint64_t	dt = now_ns() - t0;

	hist_add(&w->lat, dt);
	if (mixed)
		hist_add(&w->wlat, dt);
	if (rc != 0)
	{
		note_error(w, "put");
		return;
	}
	w->writes += (uint64_t) n;
	w->user_bytes += (uint64_t) n * (KEY_LEN + (uint64_t) vsize);
}

static void
do_seek(worker *w, uint64_t k, int nexts)
{
	char		key[KEY_LEN];
	char		prev[KEY_LEN];
	const kv_engine *e = w->rc->e;
	uint64_t	seen = 0;
	uint64_t	sum = 0;
	bool		bad_order = false;

	make_key(key, k);
	uint64_t	t0 = now_ns();
	kv_iter    *it = e->iter_new(w->h);

	e->iter_seek(it, key, KEY_LEN);
	for (int i = 0; i <= nexts && e->iter_valid(it); i++)
	{
		size_t		kl, vl;
		const unsigned char *kp = e->iter_key(it, &kl);
		const unsigned char *vp = e->iter_value(it, &vl);

		/* consume the entry: check ordering, touch the value */
		if (kl != KEY_LEN || (seen == 0 ? memcmp(kp, key, KEY_LEN) < 0
							  : memcmp(kp, prev, KEY_LEN) <= 0))
			bad_order = true;
		memcpy(prev, kp, KEY_LEN);
		sum += vl + (vl ? vp[vl - 1] : 0);
		seen++;
		if (i < nexts)
			e->iter_next(it);
	}
	int			rc = e->iter_free(it);
	uint64_t	dt = now_ns() - t0;

	hist_add(&w->lat, dt);
	w->reads++;
	w->entries += seen;
	if (seen)
		w->found++;
	else
		w->not_found++;
	if (rc != 0)
		note_error(w, "iterator");
	else if (bad_order)
	{
		w->errors++;
		if (w->err[0] == '\0')
			snprintf(w->err, sizeof(w->err), "iterator returned keys out of order");
	}
	if (sum == 42)				/* keep the loop from being optimised out */
		__asm__ volatile ("");
}

static void *
worker_main(void *arg)
{
	worker	   *w = arg;
	run_ctx    *rc = w->rc;
	uint64_t	rng = mix64(S.seed ^ ((uint64_t) rc->wl << 32) ^ (uint64_t) (w->id + 1) * 0x51ed27ull);
	int			batch = (rc->wl == WL_FILLSEQ || rc->wl == WL_FILLRANDOM ||
						 rc->wl == WL_OVERWRITE) ? rc->batch : 1;
	unsigned char *vbuf = malloc((size_t) MAX_BATCH * (size_t) rc->vsize + MAX_VALUE);
	uint64_t	keys[MAX_BATCH];

	hist_init(&w->lat);
	hist_init(&w->rlat);
	hist_init(&w->wlat);
	pthread_barrier_wait(&rc->start);

	while (!atomic_load_explicit(&rc->abort, memory_order_relaxed))
	{
		uint64_t	i = atomic_fetch_add(&rc->next, (uint64_t) batch);

		if (i >= rc->total_ops)
			break;
		int			n = (int) ((rc->total_ops - i) < (uint64_t) batch ? rc->total_ops - i : (uint64_t) batch);

		switch (rc->wl)
		{
			case WL_FILLSEQ:
				for (int j = 0; j < n; j++)
					keys[j] = i + (uint64_t) j;
				do_puts(w, keys, n, 0, vbuf, false);
				break;
			case WL_FILLRANDOM:
				for (int j = 0; j < n; j++)
					keys[j] = perm_apply(&rc->perm, i + (uint64_t) j);
				do_puts(w, keys, n, 0, vbuf, false);
				break;
			case WL_OVERWRITE:
				for (int j = 0; j < n; j++)
					keys[j] = rng_next(&rng) % rc->nkeys;
				do_puts(w, keys, n, 1, vbuf, false);
				break;
			case WL_READRANDOM:
				do_get(w, rng_next(&rng) % rc->nkeys, vbuf, false);
				break;
			case WL_SEEKRANDOM:
				do_seek(w, rng_next(&rng) % rc->nkeys, S.nexts);
				break;
			case WL_MIXED:
				{
					uint64_t	r = rng_next(&rng);

					keys[0] = (r >> 1) % rc->nkeys;
					if (r & 1)
						do_puts(w, keys, 1, 2, vbuf, true);
					else
						do_get(w, keys[0], vbuf, true);
				}
				break;
			default:
				break;
		}
	}
	free(vbuf);
	return NULL;
}

/* -------------------------------------------------------- child process */

static uint64_t
keys_for(int vsize)
{
	return vsize >= 1024 ? S.n_large : S.n_small;
}

static uint64_t
ops_for(wl_kind wl, uint64_t n)
{
	double		f = 1.0;

	if (wl == WL_READRANDOM)
		f = S.read_frac;
	else if (wl == WL_SEEKRANDOM)
		f = S.seek_frac;
	else if (wl == WL_MIXED)
		f = S.mixed_frac;
	uint64_t	ops = (uint64_t) ((double) n * f);

	return ops ? ops : 1;
}

static void
run_point(const kv_engine *e, kv_comp comp, int vsize, int nthreads, wl_kind wl,
		  const char *dir, result *r)
{
	kv_config	cfg = S.base;
	char		err[512] = "";
	worker	   *ws = calloc((size_t) nthreads, sizeof(worker));
	run_ctx    *rc = calloc(1, sizeof(run_ctx));
	io_counters io0, io1;
	kv_counters kc;

	cfg.dir = dir;
	cfg.compression = comp;
	cfg.create = (wl == WL_FILLSEQ || wl == WL_FILLRANDOM);
	cfg.nthreads = nthreads;

	make_pool(S.seed);

	kv_db	   *db = e->open(&cfg, err, sizeof(err));

	if (!db)
	{
		snprintf(r->msg, sizeof(r->msg), "open: %s", err);
		return;
	}
	for (int t = 0; t < nthreads; t++)
	{
		ws[t].h = e->attach(db, err, sizeof(err));
		if (!ws[t].h)
		{
			snprintf(r->msg, sizeof(r->msg), "attach: %s", err);
			return;
		}
		ws[t].id = t;
		ws[t].rc = rc;
	}

	rc->e = e;
	rc->wl = wl;
	rc->vsize = vsize;
	rc->nkeys = keys_for(vsize);
	rc->total_ops = ops_for(wl, rc->nkeys);
	rc->batch = S.batch;
	perm_init(&rc->perm, rc->nkeys, S.seed ^ 0xfeedull);
	atomic_init(&rc->next, 0);
	atomic_init(&rc->abort, false);
	pthread_barrier_init(&rc->start, NULL, (unsigned) nthreads + 1);

	for (int t = 0; t < nthreads; t++)
		pthread_create(&ws[t].tid, NULL, worker_main, &ws[t]);

	struct rusage ru0, ru1;

	read_io(&io0);
	getrusage(RUSAGE_SELF, &ru0);
	pthread_barrier_wait(&rc->start);
	uint64_t	t0 = now_ns();

	for (int t = 0; t < nthreads; t++)
		pthread_join(ws[t].tid, NULL);
	uint64_t	t1 = now_ns();

	/* flush memtables and wait for flush/compaction to finish */
	int			frc = e->flush_wait_idle(db, err, sizeof(err));
	uint64_t	t2 = now_ns();

	read_io(&io1);
	getrusage(RUSAGE_SELF, &ru1);
	r->cpu_user_s = (double) (ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) +
		(double) (ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6;
	r->cpu_sys_s = (double) (ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
		(double) (ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
	r->invol_csw = (uint64_t) (ru1.ru_nivcsw - ru0.ru_nivcsw);

	hist		lat, rlat, wlat;

	hist_init(&lat);
	hist_init(&rlat);
	hist_init(&wlat);
	for (int t = 0; t < nthreads; t++)
	{
		worker	   *w = &ws[t];

		hist_merge(&lat, &w->lat);
		hist_merge(&rlat, &w->rlat);
		hist_merge(&wlat, &w->wlat);
		r->reads += w->reads;
		r->writes += w->writes;
		r->found += w->found;
		r->not_found += w->not_found;
		r->errors += w->errors;
		r->entries += w->entries;
		r->user_bytes += w->user_bytes;
		if (w->err[0] && r->msg[0] == '\0')
			snprintf(r->msg, sizeof(r->msg), "%s", w->err);
	}
	r->nkeys = rc->nkeys;
	r->ops = r->writes + r->reads;
	r->seconds = (double) (t1 - t0) / 1e9;
	r->drain_seconds = (double) (t2 - t1) / 1e9;
	r->p50_ns = hist_quantile(&lat, 0.50);
	r->p99_ns = hist_quantile(&lat, 0.99);
	r->p999_ns = hist_quantile(&lat, 0.999);
	r->max_ns = lat.count ? lat.max : 0;
	r->mean_ns = lat.count ? lat.sum / lat.count : 0;
	r->rd_p99_ns = hist_quantile(&rlat, 0.99);
	r->wr_p99_ns = hist_quantile(&wlat, 0.99);
	r->io_write_bytes = io1.write_bytes - io0.write_bytes;
	r->io_cancelled_bytes = io1.cancelled - io0.cancelled;
	r->io_read_bytes = io1.read_bytes - io0.read_bytes;
	r->size_on_disk = e->size_on_disk(db, &r->alloc_on_disk, &r->sst_bytes);
	r->peak_rss_kb = read_hwm_kb();
	e->counters(db, &kc);
	r->busy_waits = kc.busy_waits;
	r->bg_errors = kc.bg_errors;
	r->stalls = kc.stalls;

	for (int t = 0; t < nthreads; t++)
		e->detach(ws[t].h);
	if (frc != 0 && r->msg[0] == '\0')
		snprintf(r->msg, sizeof(r->msg), "flush_wait_idle: %s", err);
	if (e->close(db, err, sizeof(err)) != 0 && r->msg[0] == '\0')
		snprintf(r->msg, sizeof(r->msg), "close: %s", err);

	r->ok = (frc == 0 && r->errors == 0 && r->bg_errors == 0 && !atomic_load(&rc->abort));
	if (r->ok)
	{
		/* loads must leave every key readable */
		if ((wl == WL_READRANDOM && r->not_found > 0))
		{
			r->ok = false;
			snprintf(r->msg, sizeof(r->msg), "%" PRIu64 " keys not found", r->not_found);
		}
		else
			r->msg[0] = '\0';
	}
	pthread_barrier_destroy(&rc->start);
	free(rc);
	free(ws);
	free(value_pool);
}

/*
 * Write back dirty pages of the benchmark file system before each child.
 * /proc/self/io write_bytes counts a page when it becomes dirty, so a page
 * still dirty from the previous child (e.g. a preallocated log segment) would
 * be rewritten for free; with everything clean, each child is charged for
 * every page it dirties, and the previous child's writeback does not run
 * during this one's measurement.
 */
static void
settle_page_cache(void)
{
	int			fd = open(S.dir, O_RDONLY | O_DIRECTORY);

	if (fd >= 0)
	{
		syncfs(fd);
		close(fd);
	}
}

/* run one point in a forked child; returns false if the child failed */
static bool
run_child(const kv_engine *e, kv_comp comp, int vsize, int nthreads, wl_kind wl,
		  const char *dir, result *r)
{
	int			fds[2];

	memset(r, 0, sizeof(*r));
	snprintf(r->engine, sizeof(r->engine), "%s", e->name);
	r->comp = comp;
	r->vsize = vsize;
	r->threads = nthreads;
	r->wl = wl;

	if (pipe(fds) != 0)
	{
		snprintf(r->msg, sizeof(r->msg), "pipe: %s", strerror(errno));
		return false;
	}
	settle_page_cache();
	fflush(NULL);
	pid_t		pid = fork();

	if (pid < 0)
	{
		snprintf(r->msg, sizeof(r->msg), "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return false;
	}
	if (pid == 0)
	{
		result		cr = *r;

		close(fds[0]);
		alarm((unsigned) S.child_timeout);
		run_point(e, comp, vsize, nthreads, wl, dir, &cr);
		ssize_t		wn = write(fds[1], &cr, sizeof(cr));

		_exit(wn == (ssize_t) sizeof(cr) ? 0 : 1);
	}
	close(fds[1]);

	result		cr;
	size_t		got = 0;

	while (got < sizeof(cr))
	{
		ssize_t		n = read(fds[0], (char *) &cr + got, sizeof(cr) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t) n;
	}
	close(fds[0]);

	int			status = 0;

	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got == sizeof(cr))
		*r = cr;
	else if (WIFSIGNALED(status))
		snprintf(r->msg, sizeof(r->msg), "child killed by signal %d (%s)",
				 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(r->msg, sizeof(r->msg), "child exited with status %d", WEXITSTATUS(status));
	return got == sizeof(cr) && r->ok;
}

/* ------------------------------------------------------------- output */

static result *results;
static int	n_results;

static const result *
find_rocksdb(const result *t)
{
	for (int i = 0; i < n_results; i++)
	{
		const result *r = &results[i];

		if (strcmp(r->engine, "rocksdb") == 0 && r->comp == t->comp &&
			r->vsize == t->vsize && r->threads == t->threads && r->wl == t->wl && r->ok)
			return r;
	}
	return NULL;
}

static double
ops_per_s(const result *r)
{
	return r->seconds > 0 ? (double) r->ops / r->seconds : 0;
}

static void
csv_field_clean(char *dst, size_t len, const char *src)
{
	size_t		i;

	for (i = 0; i + 1 < len && src[i]; i++)
		dst[i] = (src[i] == ',' || src[i] == '\n' || src[i] == '"') ? ';' : src[i];
	dst[i] = '\0';
}

static void
write_csv(void)
{
	char		tmp[4096];

	snprintf(tmp, sizeof(tmp), "%s.tmp", S.out);
	FILE	   *f = fopen(tmp, "w");

	if (!f)
	{
		fprintf(stderr, "kvbench: cannot write %s: %s\n", tmp, strerror(errno));
		return;
	}
	fprintf(f, "engine,compression,value_size,threads,workload,n_keys,ops,seconds,"
			"ops_per_s,ratio_tides_rocksdb,p50_us,p99_us,p999_us,max_us,mean_us,"
			"read_p99_us,write_p99_us,user_bytes_written,device_bytes_written,"
			"write_amp,cancelled_write_bytes,device_bytes_read,size_on_disk,"
			"alloc_on_disk,sst_bytes,peak_rss_kb,drain_s,ops_per_s_incl_drain,busy_waits,"
			"stalls,cpu_user_s,cpu_sys_s,invol_ctx_switches,entries_scanned,not_found,"
			"errors,status\n");
	for (int i = 0; i < n_results; i++)
	{
		const result *r = &results[i];
		const result *base = strcmp(r->engine, "rocksdb") != 0 ? find_rocksdb(r) : NULL;
		char		ratio[32] = "";
		char		wamp[32] = "";
		char		status[300];
		bool		mixed = r->wl == WL_MIXED;

		if (base && r->ok && ops_per_s(base) > 0)
			snprintf(ratio, sizeof(ratio), "%.3f", ops_per_s(r) / ops_per_s(base));
		if (r->user_bytes > 0)
			snprintf(wamp, sizeof(wamp), "%.3f", (double) r->io_write_bytes / (double) r->user_bytes);
		csv_field_clean(status, sizeof(status), r->ok ? "ok" : r->msg[0] ? r->msg : "failed");
		char		rd_p99[32] = "",
					wr_p99[32] = "";

		if (mixed)
		{
			snprintf(rd_p99, sizeof(rd_p99), "%.2f", r->rd_p99_ns / 1e3);
			snprintf(wr_p99, sizeof(wr_p99), "%.2f", r->wr_p99_ns / 1e3);
		}
		fprintf(f, "%s,%s,%d,%d,%s,", r->engine, comp_name(r->comp), r->vsize, r->threads,
				wl_names[r->wl]);
		fprintf(f, "%" PRIu64 ",%" PRIu64 ",%.3f,%.0f,%s,", r->nkeys, r->ops, r->seconds,
				ops_per_s(r), ratio);
		fprintf(f, "%.2f,%.2f,%.2f,%.1f,%.2f,%s,%s,", r->p50_ns / 1e3, r->p99_ns / 1e3,
				r->p999_ns / 1e3, r->max_ns / 1e3, r->mean_ns / 1e3, rd_p99, wr_p99);
		fprintf(f, "%" PRIu64 ",%" PRIu64 ",%s,%" PRIu64 ",%" PRIu64 ",", r->user_bytes,
				r->io_write_bytes, wamp, r->io_cancelled_bytes, r->io_read_bytes);
		fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", r->size_on_disk,
				r->alloc_on_disk, r->sst_bytes, r->peak_rss_kb);
		fprintf(f, "%.2f,%.0f,", r->drain_seconds,
				(r->seconds + r->drain_seconds) > 0 ?
				(double) r->ops / (r->seconds + r->drain_seconds) : 0.0);
		fprintf(f, "%" PRIu64 ",%" PRIu64 ",%.2f,%.2f,%" PRIu64 ",", r->busy_waits, r->stalls,
				r->cpu_user_s, r->cpu_sys_s, r->invol_csw);
		fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s\n", r->entries, r->not_found,
				r->errors, status);
	}
	fclose(f);
	if (rename(tmp, S.out) != 0)
		fprintf(stderr, "kvbench: rename %s: %s\n", tmp, strerror(errno));
}

static void
print_point(const result *r)
{
	const result *base = strcmp(r->engine, "rocksdb") != 0 ? find_rocksdb(r) : NULL;

	printf("%-8s %-4s v%-5d t%d %-11s ", r->engine, comp_name(r->comp), r->vsize,
		   r->threads, wl_names[r->wl]);
	if (!r->ok)
	{
		printf("FAILED: %s\n", r->msg);
		fflush(stdout);
		return;
	}
	printf("%9.0f ops/s", ops_per_s(r));
	if (base)
		printf(" (x%.2f)", ops_per_s(r) / ops_per_s(base));
	printf("  p50 %7.1fus p99 %8.1fus", r->p50_ns / 1e3, r->p99_ns / 1e3);
	if (r->user_bytes)
		printf("  wamp %5.2f", (double) r->io_write_bytes / (double) r->user_bytes);
	printf("  disk %7.1fMB (sst %7.1fMB) rss %6.1fMB  %.1fs+%.1fs",
		   r->size_on_disk / 1048576.0, r->sst_bytes / 1048576.0, r->peak_rss_kb / 1024.0, r->seconds, r->drain_seconds);
	printf(" cpu %.1fus/op", r->ops ? (r->cpu_user_s + r->cpu_sys_s) * 1e6 / (double) r->ops : 0.0);
	if (r->busy_waits)
		printf(" busy %" PRIu64, r->busy_waits);
	printf("\n");
	fflush(stdout);
}

/* ------------------------------------------------------------ settings */

static const char *
env_str(const char *name, const char *def)
{
	const char *s = getenv(name);

	return s && *s ? s : def;
}

static double
env_num(const char *name, double def)
{
	const char *s = getenv(name);

	return s && *s ? strtod(s, NULL) : def;
}

typedef void (*list_cb) (const char *item);

static void
for_each_item(const char *list, list_cb cb)
{
	char	   *copy = strdup(list);
	char	   *save = NULL;

	for (char *t = strtok_r(copy, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
		cb(t);
	free(copy);
}

static void
die(const char *fmt, const char *arg)
{
	fprintf(stderr, "kvbench: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	exit(2);
}

static void
add_engine(const char *s)
{
	if (S.n_engines >= MAX_LIST)
		die("too many engines", "");
	if (strcmp(s, "rocksdb") == 0)
		S.engines[S.n_engines++] = &kv_engine_rocksdb;
#ifdef HAVE_TIDES
	else if (strcmp(s, "tides") == 0)
		S.engines[S.n_engines++] = &kv_engine_tides;
#else
	else if (strcmp(s, "tides") == 0)
		fprintf(stderr, "kvbench: tides engine not built in "
				"(build/engine/libtides_engine.a missing at build time); skipping it\n");
#endif
	else
		die("unknown engine '%s'", s);
}

static void
add_comp(const char *s)
{
	if (S.n_comps >= MAX_LIST)
		die("too many compression settings", "");
	if (strcmp(s, "none") == 0)
		S.comps[S.n_comps++] = KV_COMP_NONE;
	else if (strcmp(s, "lz4") == 0)
		S.comps[S.n_comps++] = KV_COMP_LZ4;
	else
		die("unknown compression '%s' (none, lz4)", s);
}

static void
add_vsize(const char *s)
{
	int			v = atoi(s);

	if (S.n_vsizes >= MAX_LIST || v < 0 || v > MAX_VALUE)
		die("bad value size '%s'", s);
	S.vsizes[S.n_vsizes++] = v;
}

static void
add_threads(const char *s)
{
	int			v = atoi(s);

	if (S.n_threads >= MAX_LIST || v < 1 || v > MAX_THREADS)
		die("bad thread count '%s'", s);
	S.threads[S.n_threads++] = v;
}

static void
add_wl(const char *s)
{
	for (int i = 0; i < WL_COUNT; i++)
		if (strcmp(s, wl_names[i]) == 0)
		{
			S.wls[S.n_wls++] = (wl_kind) i;
			return;
		}
	die("unknown workload '%s'", s);
}

static void
load_settings(void)
{
	S.quick = env_num("BENCH_QUICK", 0) != 0;
#ifdef HAVE_TIDES
	for_each_item(env_str("BENCH_ENGINES", "rocksdb,tides"), add_engine);
#else
	for_each_item(env_str("BENCH_ENGINES", "rocksdb"), add_engine);
#endif
	for_each_item(env_str("BENCH_COMPRESSION", "none,lz4"), add_comp);
	for_each_item(env_str("BENCH_VALUE_SIZES", "100,4096"), add_vsize);
	for_each_item(env_str("BENCH_THREADS", "1,2,4"), add_threads);
	for_each_item(env_str("BENCH_WORKLOADS",
						  "fillseq,fillrandom,overwrite,readrandom,seekrandom,mixed"), add_wl);
	S.n_small = (uint64_t) env_num("BENCH_N_SMALL", S.quick ? 30000 : 1500000);
	S.n_large = (uint64_t) env_num("BENCH_N_LARGE", S.quick ? 3000 : 150000);
	S.read_frac = env_num("BENCH_READ_FRAC", 0.5);
	S.seek_frac = env_num("BENCH_SEEK_FRAC", 0.05);
	S.mixed_frac = env_num("BENCH_MIXED_FRAC", 0.5);
	S.nexts = (int) env_num("BENCH_NEXTS", 100);
	S.batch = (int) env_num("BENCH_BATCH", 1);
	S.seed = (uint64_t) env_num("BENCH_SEED", 20240601);
	S.dir = env_str("BENCH_DIR", "data");
	S.out = env_str("BENCH_OUT", "../results/kv.csv");
	S.child_timeout = (int) env_num("BENCH_CHILD_TIMEOUT", 3600);
	S.keep = env_num("BENCH_KEEP", 0) != 0;
	S.reuse = env_num("BENCH_REUSE", 0) != 0;
	if (S.batch < 1 || S.batch > MAX_BATCH)
		die("BENCH_BATCH must be 1..1024%s", "");
	if (S.n_small < 1 || S.n_large < 1)
		die("key counts must be positive%s", "");

	/* engine settings: the tides defaults, applied to both engines */
	S.base.memtable_bytes = (uint64_t) env_num("BENCH_MEMTABLE_MB", S.quick ? 2 : 64) << 20;
	S.base.memtable_count = 4;
	S.base.block_cache_bytes = (uint64_t) env_num("BENCH_CACHE_MB", 128) << 20;
	S.base.block_size = 4096;
	S.base.bloom_bits = 10;
	S.base.target_file_bytes = 64ull << 20;
	S.base.level_base_bytes = 256ull << 20;
	S.base.l0_compact = 4;
	S.base.l0_slowdown = 12;
	S.base.l0_stop = 20;
	S.base.bg_threads = 2;
}

/* ---------------------------------------------------------------- main */

/* other work on this 2-core machine distorts the numbers: say so */
static void
print_loadavg(const char *when)
{
	double		la[3];

	if (getloadavg(la, 3) == 3)
		printf("kvbench: load average %s: %.2f %.2f %.2f%s\n", when, la[0], la[1], la[2],
			   la[0] > 0.5 ? " (machine busy: expect noisy numbers)" : "");
}

int
main(void)
{
	char		dir[4096];
	int			max_results;

	load_settings();
	if (S.n_engines == 0)
		die("no engine to run%s", "");
	mkdir(S.dir, 0755);

	max_results = S.n_engines * S.n_comps * S.n_vsizes * S.n_threads * S.n_wls;
	results = calloc((size_t) max_results, sizeof(result));

	printf("kvbench: engines");
	for (int i = 0; i < S.n_engines; i++)
		printf(" %s", S.engines[i]->name);
	printf("; keys %" PRIu64 " (values < 1 KiB) / %" PRIu64 " (>= 1 KiB); memtable %" PRIu64
		   " MiB; batch %d; data dir %s\n", S.n_small, S.n_large,
		   S.base.memtable_bytes >> 20, S.batch, S.dir);
	print_loadavg("at start");
	uint64_t	t_start = kv_now_ns();

	for (int ci = 0; ci < S.n_comps; ci++)
		for (int vi = 0; vi < S.n_vsizes; vi++)
			for (int ti = 0; ti < S.n_threads; ti++)
				for (int ei = 0; ei < S.n_engines; ei++)
				{
					const kv_engine *e = S.engines[ei];
					kv_comp		comp = S.comps[ci];
					int			vsize = S.vsizes[vi];
					int			nthreads = S.threads[ti];
					bool		loaded = false;
					struct stat st;

					snprintf(dir, sizeof(dir), "%s/%s-%s-v%d-t%d", S.dir, e->name,
							 comp_name(comp), vsize, nthreads);
					if (S.reuse && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
						loaded = true;	/* the same data for every build compared */
					else
						kv_rmtree(dir);

					for (int wi = 0; wi < S.n_wls; wi++)
					{
						wl_kind		wl = S.wls[wi];
						result	   *r = &results[n_results];

						if (wl == WL_FILLSEQ || wl == WL_FILLRANDOM)
							kv_rmtree(dir);
						else if (!loaded)
						{
							/* later workloads need a loaded database */
							result		lr;

							kv_rmtree(dir);
							if (!run_child(e, comp, vsize, nthreads, WL_FILLRANDOM, dir, &lr))
							{
								printf("%s: load for %s failed: %s\n", e->name, wl_names[wl], lr.msg);
								continue;
							}
							loaded = true;
						}
						bool		ok = run_child(e, comp, vsize, nthreads, wl, dir, r);

						n_results++;
						print_point(r);
						write_csv();
						if (wl == WL_FILLSEQ || wl == WL_FILLRANDOM)
							loaded = ok;
						else if (!ok)
							loaded = false;
					}
					if (!S.keep)
						kv_rmtree(dir);
				}

	print_loadavg("at end");
	printf("kvbench: %d points in %.0f s, results in %s\n", n_results,
		   (kv_now_ns() - t_start) / 1e9, S.out);
	int			failed = 0;

	for (int i = 0; i < n_results; i++)
		if (!results[i].ok)
			failed++;
	if (failed)
		printf("kvbench: %d point(s) FAILED\n", failed);
	return failed ? 1 : 0;
}
