/*
 * kv_tides.c -- tides engine adapter.
 *
 * The engine owns no threads.  This adapter
 *   - allocates the shared region with mmap(MAP_SHARED | MAP_ANONYMOUS),
 *   - lays it out with tides_region_init() and attaches with
 *     tides_open(recover = true) (the "main" handle, used by the driver),
 *   - gives every worker thread and every background thread its own
 *     tides_db handle (tides_open(recover = false)), since a handle must not
 *     be used by two threads at once,
 *   - runs background work on a small pthread pool: 1 flush thread
 *     (tides_flush_work, then tides_maint_work), 1 compaction thread
 *     (tides_compact_work, then tides_maint_work) and, only in
 *     TIDES_SYNC_INTERVAL mode, 1 sync thread (tides_sync_work).  Idle
 *     threads wait on a condition variable signalled from the wakeup option
 *     callback, with a short timed wait as fallback,
 *   - retries tides_write on TIDES_BUSY after waiting (up to 1 ms) for a
 *     background thread to report progress, and counts those waits.
 */
#define _GNU_SOURCE
#include "kv_adapter.h"

#include "tides_engine.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define MAX_BG 3

typedef struct bg_thread
{
	struct kv_db *d;
	pthread_t	tid;
	int			kinds;			/* TIDES_WORK_* this thread serves */
	tides_db   *h;
	bool		idle;			/* protected by d->mu */
} bg_thread;

struct kv_db
{
	char	   *dir;
	void	   *region;
	size_t		region_size;
	tides_options opts;
	tides_db   *main;			/* recovery handle; used by the driver thread only */

	pthread_mutex_t mu;
	pthread_cond_t work_cv;		/* background threads wait here */
	pthread_cond_t progress_cv; /* BUSY writers and flush_wait_idle wait here */
	int			pending;		/* TIDES_WORK_* bits from wakeup() */
	uint64_t	progress;		/* units of background work done */
	bool		stop;

	bg_thread	bg[MAX_BG];
	int			nbg;

	_Atomic uint64_t busy_waits;
	_Atomic uint64_t bg_errors;
	char		bg_err[256];
};

struct kv_handle
{
	kv_db	   *d;
	tides_db   *h;
	tides_batch *b;
	char		err[512];
};

struct kv_iter
{
	kv_handle  *h;
	tides_iter *it;
};

static void
deadline_after(struct timespec *ts, long us)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_nsec += us * 1000;
	while (ts->tv_nsec >= 1000000000L)
	{
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* the engine calls this (from a writer) when background work became due */
static void
wakeup_cb(void *arg, int kind)
{
	kv_db	   *d = arg;

	pthread_mutex_lock(&d->mu);
	d->pending |= kind;
	pthread_cond_broadcast(&d->work_cv);
	pthread_mutex_unlock(&d->mu);
}

static void
kick(kv_db *d, int kinds)
{
	if (kinds)
		wakeup_cb(d, kinds);
}

static tides_status
do_work(bg_thread *b, bool *did)
{
	tides_status st = TIDES_OK;

	*did = false;
	if (b->kinds & TIDES_WORK_FLUSH)
	{
		st = tides_flush_work(b->h, did);
		if (st != TIDES_OK || *did)
			return st;
	}
	if (b->kinds & TIDES_WORK_COMPACT)
	{
		st = tides_compact_work(b->h, did);
		if (st != TIDES_OK || *did)
			return st;
	}
	if (b->kinds & TIDES_WORK_SYNC)
	{
		st = tides_sync_work(b->h, did);
		if (st != TIDES_OK || *did)
			return st;
	}
	if (b->kinds & TIDES_WORK_MAINT)
		st = tides_maint_work(b->h, did);
	return st;
}

static void *
bg_main(void *arg)
{
	bg_thread  *b = arg;
	kv_db	   *d = b->d;
	/* fallback poll interval when no wakeup arrives */
	long		wait_us = (b->kinds & TIDES_WORK_SYNC) ?
		(long) d->opts.sync_interval_ms * 1000 / 4 + 1000 : 10000;

	for (;;)
	{
		bool		did = false;
		tides_status st = do_work(b, &did);

		if (st != TIDES_OK)
		{
			atomic_fetch_add(&d->bg_errors, 1);
			pthread_mutex_lock(&d->mu);
			snprintf(d->bg_err, sizeof(d->bg_err), "background work: %s: %s",
					 tides_status_name(st), tides_errmsg(b->h));
			pthread_mutex_unlock(&d->mu);
			did = false;		/* back off below */
		}

		pthread_mutex_lock(&d->mu);
		if (did)
		{
			d->progress++;
			pthread_cond_broadcast(&d->progress_cv);
			bool		stop = d->stop;

			pthread_mutex_unlock(&d->mu);
			if (stop)
				break;
			continue;
		}
		if (d->stop)
		{
			pthread_mutex_unlock(&d->mu);
			break;
		}
		if (!(d->pending & b->kinds))
		{
			struct timespec ts;

			b->idle = true;
			pthread_cond_broadcast(&d->progress_cv);	/* for flush_wait_idle */
			deadline_after(&ts, st != TIDES_OK ? 50000 : wait_us);
			pthread_cond_timedwait(&d->work_cv, &d->mu, &ts);
			b->idle = false;
		}
		d->pending &= ~b->kinds;
		pthread_mutex_unlock(&d->mu);
	}
	return NULL;
}

static void
set_err(char *err, size_t errlen, const char *what, tides_status st, tides_db *h)
{
	snprintf(err, errlen, "%s: %s%s%s", what, tides_status_name(st),
			 h ? ": " : "", h ? tides_errmsg(h) : "");
}

static void tides_kv_shutdown(kv_db *d);

static kv_db *
tides_kv_open(const kv_config *cfg, char *err, size_t errlen)
{
	kv_db	   *d = calloc(1, sizeof(*d));
	tides_status st;

	d->dir = strdup(cfg->dir);
	pthread_mutex_init(&d->mu, NULL);
	pthread_cond_init(&d->work_cv, NULL);
	pthread_cond_init(&d->progress_cv, NULL);

	tides_options_default(&d->opts);
	d->opts.memtable_size = cfg->memtable_bytes;
	d->opts.memtable_count = cfg->memtable_count;
	d->opts.block_cache_size = cfg->block_cache_bytes;
	d->opts.block_size = cfg->block_size;
	d->opts.bloom_bits_per_key = cfg->bloom_bits;
	d->opts.target_file_size = cfg->target_file_bytes;
	d->opts.level_base_size = cfg->level_base_bytes;
	d->opts.level0_compaction_trigger = cfg->l0_compact;
	d->opts.level0_slowdown_trigger = cfg->l0_slowdown;
	d->opts.level0_stop_trigger = cfg->l0_stop;
	d->opts.compression = cfg->compression == KV_COMP_LZ4 ?
		TIDES_COMPRESS_LZ4 : TIDES_COMPRESS_NONE;
	/* the last level as the others, as RocksDB is set (the engine's default is LZ4 there) */
	d->opts.bottommost_compression = d->opts.compression;
	d->opts.sync_mode = TIDES_SYNC_NONE;
	{
		const char *s = getenv("BENCH_TIDES_SYNC");

		if (s && strcmp(s, "interval") == 0)
			d->opts.sync_mode = TIDES_SYNC_INTERVAL;
	}
	d->opts.wakeup = wakeup_cb;
	d->opts.wakeup_arg = d;

	d->region_size = tides_region_size(&d->opts);
	d->region = mmap(NULL, d->region_size, PROT_READ | PROT_WRITE,
					 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (d->region == MAP_FAILED)
	{
		snprintf(err, errlen, "mmap of %zu bytes: %s", d->region_size, strerror(errno));
		d->region = NULL;
		goto fail;
	}
	st = tides_region_init(d->region, d->region_size, &d->opts);
	if (st != TIDES_OK)
	{
		set_err(err, errlen, "tides_region_init", st, NULL);
		goto fail;
	}
	st = tides_open(d->region, d->dir, &d->opts, tides_vfs_posix(), true, NULL, &d->main);
	if (st != TIDES_OK)
	{
		set_err(err, errlen, "tides_open(recover)", st, d->main);
		d->main = NULL;
		goto fail;
	}

	/* background pool: 1 flush + 1 compaction (+ 1 sync in interval mode) */
	d->bg[d->nbg++].kinds = TIDES_WORK_FLUSH | TIDES_WORK_MAINT;
	d->bg[d->nbg++].kinds = TIDES_WORK_COMPACT | TIDES_WORK_MAINT;
	if (d->opts.sync_mode == TIDES_SYNC_INTERVAL)
		d->bg[d->nbg++].kinds = TIDES_WORK_SYNC;
	for (int i = 0; i < d->nbg; i++)
	{
		bg_thread  *b = &d->bg[i];

		b->d = d;
		st = tides_open(d->region, d->dir, &d->opts, tides_vfs_posix(), false, NULL, &b->h);
		if (st != TIDES_OK)
		{
			set_err(err, errlen, "tides_open(background)", st, NULL);
			b->h = NULL;
			goto fail;
		}
	}
	for (int i = 0; i < d->nbg; i++)
	{
		if (pthread_create(&d->bg[i].tid, NULL, bg_main, &d->bg[i]) != 0)
		{
			snprintf(err, errlen, "pthread_create failed");
			d->nbg = i;			/* join only the started ones */
			goto fail;
		}
	}
	/* recovery may have left work behind */
	kick(d, tides_work_pending(d->main));
	return d;

fail:
	tides_kv_shutdown(d);
	return NULL;
}

/* stop the pool and release everything (no clean shutdown) */
static void
tides_kv_shutdown(kv_db *d)
{
	pthread_mutex_lock(&d->mu);
	d->stop = true;
	pthread_cond_broadcast(&d->work_cv);
	pthread_mutex_unlock(&d->mu);
	for (int i = 0; i < MAX_BG; i++)
	{
		if (i < d->nbg && d->bg[i].tid)
			pthread_join(d->bg[i].tid, NULL);
		if (d->bg[i].h)
			tides_close(d->bg[i].h);
	}
	if (d->main)
		tides_close(d->main);
	if (d->region)
		munmap(d->region, d->region_size);
	pthread_cond_destroy(&d->work_cv);
	pthread_cond_destroy(&d->progress_cv);
	pthread_mutex_destroy(&d->mu);
	free(d->dir);
	free(d);
}

static int
tides_kv_close(kv_db *d, char *err, size_t errlen)
{
	int			rc = 0;

	/* stop background threads first: tides_shutdown wants no concurrent users */
	pthread_mutex_lock(&d->mu);
	d->stop = true;
	pthread_cond_broadcast(&d->work_cv);
	pthread_mutex_unlock(&d->mu);
	for (int i = 0; i < d->nbg; i++)
	{
		pthread_join(d->bg[i].tid, NULL);
		d->bg[i].tid = 0;
		tides_close(d->bg[i].h);
		d->bg[i].h = NULL;
	}
	d->nbg = 0;

	tides_status st = tides_shutdown(d->main);

	if (st != TIDES_OK)
	{
		set_err(err, errlen, "tides_shutdown", st, d->main);
		rc = -1;
	}
	tides_kv_shutdown(d);
	return rc;
}

static kv_handle *
tides_kv_attach(kv_db *d, char *err, size_t errlen)
{
	kv_handle  *h = calloc(1, sizeof(*h));
	tides_status st;

	h->d = d;
	st = tides_open(d->region, d->dir, &d->opts, tides_vfs_posix(), false, NULL, &h->h);
	if (st != TIDES_OK)
	{
		set_err(err, errlen, "tides_open(worker)", st, NULL);
		free(h);
		return NULL;
	}
	h->b = tides_batch_new();
	return h;
}

static void
tides_kv_detach(kv_handle *h)
{
	tides_batch_free(h->b);
	tides_close(h->h);
	free(h);
}

/*
 * Wait (up to max_us) until a background thread reports progress beyond
 * 'seen'.  Also makes sure the pool knows about pending work.
 */
static void
wait_progress(kv_db *d, tides_db *h, uint64_t seen, long max_us)
{
	int			pend = tides_work_pending(h);
	struct timespec ts;

	pthread_mutex_lock(&d->mu);
	if (pend & ~d->pending)
	{
		d->pending |= pend;
		pthread_cond_broadcast(&d->work_cv);
	}
	deadline_after(&ts, max_us);
	while (d->progress == seen && !d->stop)
	{
		if (pthread_cond_timedwait(&d->progress_cv, &d->mu, &ts) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&d->mu);
}

static uint64_t
progress_now(kv_db *d)
{
	pthread_mutex_lock(&d->mu);
	uint64_t	p = d->progress;

	pthread_mutex_unlock(&d->mu);
	return p;
}

static int
tides_kv_put_batch(kv_handle *h, const kv_pair *kv, int n)
{
	tides_status st;
	uint64_t	lsn;

	tides_batch_clear(h->b);
	for (int i = 0; i < n; i++)
	{
		st = tides_batch_put(h->b, kv[i].key, kv[i].klen, kv[i].val, kv[i].vlen);
		if (st != TIDES_OK)
		{
			set_err(h->err, sizeof(h->err), "tides_batch_put", st, h->h);
			return -1;
		}
	}
	for (;;)
	{
		/* cheap snapshot of progress without the lock: only a hint */
		uint64_t	seen = __atomic_load_n(&h->d->progress, __ATOMIC_ACQUIRE);

		st = tides_write(h->h, h->b, &lsn);
		if (st == TIDES_OK)
			return 0;
		if (st != TIDES_BUSY)
		{
			set_err(h->err, sizeof(h->err), "tides_write", st, h->h);
			return -1;
		}
		atomic_fetch_add(&h->d->busy_waits, 1);
		wait_progress(h->d, h->h, seen, 1000);
	}
}

static int
tides_kv_get(kv_handle *h, const void *key, size_t klen, void *buf, size_t cap, size_t *vlen)
{
	tides_status st = tides_get_into(h->h, NULL, key, klen, buf, cap, vlen);

	if (st == TIDES_OK)
		return 0;
	if (st == TIDES_NOT_FOUND)
		return KV_NOTFOUND;
	set_err(h->err, sizeof(h->err), "tides_get_into", st, h->h);
	return -1;
}

static kv_iter *
tides_kv_iter_new(kv_handle *h)
{
	tides_iter_options io;
	kv_iter    *it = malloc(sizeof(*it));

	memset(&io, 0, sizeof(io));
	io.fill_cache = true;
	it->h = h;
	it->it = tides_iter_new(h->h, &io);
	return it;
}

static void
tides_kv_iter_seek(kv_iter *it, const void *key, size_t klen)
{
	if (it->it)
		tides_iter_seek(it->it, key, klen);
}

static void
tides_kv_iter_next(kv_iter *it)
{
	tides_iter_next(it->it);
}

static bool
tides_kv_iter_valid(kv_iter *it)
{
	return it->it && tides_iter_valid(it->it);
}

static const void *
tides_kv_iter_key(kv_iter *it, size_t *len)
{
	return tides_iter_key(it->it, len);
}

static const void *
tides_kv_iter_value(kv_iter *it, size_t *len)
{
	return tides_iter_value(it->it, len);
}

static int
tides_kv_iter_free(kv_iter *it)
{
	int			rc = 0;

	if (!it->it)
	{
		snprintf(it->h->err, sizeof(it->h->err), "tides_iter_new failed: %s",
				 tides_errmsg(it->h->h));
		rc = -1;
	}
	else
	{
		tides_status st = tides_iter_status(it->it);

		if (st != TIDES_OK)
		{
			set_err(it->h->err, sizeof(it->h->err), "iterator", st, it->h->h);
			rc = -1;
		}
		tides_iter_free(it->it);
	}
	free(it);
	return rc;
}

static bool
pool_idle(kv_db *d)
{
	bool		idle = true;

	pthread_mutex_lock(&d->mu);
	for (int i = 0; i < d->nbg; i++)
		if (!d->bg[i].idle)
			idle = false;
	pthread_mutex_unlock(&d->mu);
	return idle;
}

static int
tides_kv_flush_wait_idle(kv_db *d, char *err, size_t errlen)
{
	tides_status st;
	uint64_t	deadline = kv_now_ns() + kv_idle_timeout_s() * 1000000000ull;
	uint64_t	errors0 = atomic_load(&d->bg_errors);
	const int	bg_kinds = TIDES_WORK_FLUSH | TIDES_WORK_COMPACT | TIDES_WORK_MAINT;

	/* seal the active memtable so the flush thread writes it out */
	for (;;)
	{
		uint64_t	seen = progress_now(d);

		st = tides_seal_memtable(d->main);
		if (st == TIDES_OK)
			break;
		if (st != TIDES_BUSY)
		{
			set_err(err, errlen, "tides_seal_memtable", st, d->main);
			return -1;
		}
		if (kv_now_ns() > deadline)
			goto timeout;
		wait_progress(d, d->main, seen, 10000);
	}

	/* then wait until nothing is pending and the pool sits idle */
	int			quiet = 0;

	while (quiet < 3)
	{
		uint64_t	seen = progress_now(d);
		int			pend = tides_work_pending(d->main) & bg_kinds;

		if (pend == 0 && pool_idle(d) && progress_now(d) == seen)
			quiet++;
		else
		{
			quiet = 0;
			kick(d, pend);
		}
		if (atomic_load(&d->bg_errors) >= errors0 + 20)
		{
			snprintf(err, errlen, "background work keeps failing: %s", d->bg_err);
			return -1;
		}
		if (kv_now_ns() > deadline)
			goto timeout;
		kv_sleep_us(5000);
	}
	return 0;

timeout:
	snprintf(err, errlen, "background work did not become idle (%s)", d->bg_err);
	return -1;
}

static uint64_t
tides_kv_size_on_disk(kv_db *d, uint64_t *allocated, uint64_t *table_bytes)
{
	return kv_dir_size(d->dir, allocated, table_bytes);
}

static void
tides_kv_counters(kv_db *d, kv_counters *c)
{
	tides_stats st;

	memset(c, 0, sizeof(*c));
	c->busy_waits = atomic_load(&d->busy_waits);
	c->bg_errors = atomic_load(&d->bg_errors);
	memset(&st, 0, sizeof(st));
	tides_get_stats(d->main, &st);
	c->stalls = st.stall_count + st.slowdown_count;
}

static const char *
tides_kv_errmsg(kv_handle *h)
{
	return h->err;
}

const kv_engine kv_engine_tides = {
	.name = "tides",
	.open = tides_kv_open,
	.close = tides_kv_close,
	.attach = tides_kv_attach,
	.detach = tides_kv_detach,
	.put_batch = tides_kv_put_batch,
	.get = tides_kv_get,
	.iter_new = tides_kv_iter_new,
	.iter_seek = tides_kv_iter_seek,
	.iter_next = tides_kv_iter_next,
	.iter_valid = tides_kv_iter_valid,
	.iter_key = tides_kv_iter_key,
	.iter_value = tides_kv_iter_value,
	.iter_free = tides_kv_iter_free,
	.flush_wait_idle = tides_kv_flush_wait_idle,
	.size_on_disk = tides_kv_size_on_disk,
	.counters = tides_kv_counters,
	.errmsg = tides_kv_errmsg,
};
