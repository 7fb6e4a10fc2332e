/*
 * tides_mock.c -- a tiny stand-in for libtides_engine.a, used only to test
 * the benchmark's tides adapter (background thread pool, wakeup callback,
 * TIDES_BUSY retry loop, flush/idle wait, reopen) before the real engine
 * exists.  NOT an engine: one process, a mutex-protected sorted array, a
 * simulated memtable/L0 pipeline with sleeps standing in for flush and
 * compaction, and a dump file written at shutdown so that the next benchmark
 * child can reopen the data.  Only good for small key counts (BENCH_QUICK).
 *
 *   make -C bench/kv mock-test
 */
#define _GNU_SOURCE
#include "tides_engine.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct ent
{
	size_t		klen, vlen;
	char		data[];			/* key then value */
} ent;

static struct
{
	pthread_mutex_t mu;
	ent		  **e;
	size_t		n, cap;
	uint64_t	active_bytes;
	uint32_t	sealed;
	uint32_t	l0;
	uint64_t	seq;
	char		dir[4096];
	tides_stats st;
}			M = {.mu = PTHREAD_MUTEX_INITIALIZER};

struct tides_db
{
	tides_options opts;
	char		err[256];
};

struct tides_batch
{
	size_t		n, cap, bytes;
	ent		  **e;
};

struct tides_iter
{
	size_t		pos;
	ent		   *cur;
};

const char *
tides_status_name(tides_status s)
{
	static const char *const names[] = {"OK", "NOT_FOUND", "BUSY", "INVALID", "IO_ERROR",
	"NO_SPACE", "CORRUPTION", "NO_MEMORY", "UNAVAILABLE"};

	return (unsigned) s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

tides_vfs  *
tides_vfs_posix(void)
{
	return NULL;
}

void
tides_options_default(tides_options *o)
{
	memset(o, 0, sizeof(*o));
	o->memtable_size = 64 << 20;
	o->memtable_count = 4;
	o->block_cache_size = 128 << 20;
	o->meta_size = 16 << 20;
	o->max_open_tags = 4096;
	o->block_size = 4096;
	o->restart_interval = 16;
	o->bloom_bits_per_key = 10;
	o->compression = TIDES_COMPRESS_LZ4;
	o->compression_level = 3;
	o->target_file_size = 64 << 20;
	o->level0_compaction_trigger = 4;
	o->level0_slowdown_trigger = 12;
	o->level0_stop_trigger = 20;
	o->level_base_size = 256 << 20;
	o->level_size_ratio = 10;
	o->slowdown_delay_us = 1000;
	o->log_segment_size = 64 << 20;
	o->sync_mode = TIDES_SYNC_FULL;
	o->sync_interval_ms = 200;
	o->max_open_files = 256;
	o->paranoid_checks = true;
}

size_t
tides_region_size(const tides_options *o)
{
	(void) o;
	return 1 << 20;
}

tides_status
tides_region_init(void *region, size_t size, const tides_options *o)
{
	(void) o;
	memset(region, 0, size < 4096 ? size : 4096);
	return TIDES_OK;
}

static ent *
ent_new(const void *k, size_t kl, const void *v, size_t vl)
{
	ent		   *e = malloc(sizeof(ent) + kl + vl);

	e->klen = kl;
	e->vlen = vl;
	memcpy(e->data, k, kl);
	memcpy(e->data + kl, v, vl);
	return e;
}

static int
cmp_key(const void *a, size_t al, const void *b, size_t bl)
{
	int			c = memcmp(a, b, al < bl ? al : bl);

	return c ? c : (al > bl) - (al < bl);
}

/* first index with key >= k */
static size_t
lower_bound(const void *k, size_t kl)
{
	size_t		lo = 0,
				hi = M.n;

	while (lo < hi)
	{
		size_t		mid = (lo + hi) / 2;

		if (cmp_key(M.e[mid]->data, M.e[mid]->klen, k, kl) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
insert(ent *e)
{
	size_t		i = lower_bound(e->data, e->klen);

	if (i < M.n && cmp_key(M.e[i]->data, M.e[i]->klen, e->data, e->klen) == 0)
	{
		free(M.e[i]);
		M.e[i] = e;
		return;
	}
	if (M.n == M.cap)
	{
		M.cap = M.cap ? M.cap * 2 : 1024;
		M.e = realloc(M.e, M.cap * sizeof(ent *));
	}
	memmove(M.e + i + 1, M.e + i, (M.n - i) * sizeof(ent *));
	M.e[i] = e;
	M.n++;
}

tides_status
tides_open(void *region, const char *dir, const tides_options *o, tides_vfs *vfs,
		   bool recover, tides_recovery_info *info, tides_db **out)
{
	(void) region;
	(void) vfs;
	tides_db   *db = calloc(1, sizeof(*db));

	db->opts = *o;
	*out = db;
	if (!recover)
		return TIDES_OK;
	if (info)
		memset(info, 0, sizeof(*info));
	snprintf(M.dir, sizeof(M.dir), "%s", dir);
	mkdir(dir, 0755);

	char		path[4200];

	snprintf(path, sizeof(path), "%s/mock.dat", dir);
	FILE	   *f = fopen(path, "rb");

	if (f)
	{
		size_t		kv[2];

		while (fread(kv, sizeof(kv), 1, f) == 1)
		{
			ent		   *e = malloc(sizeof(ent) + kv[0] + kv[1]);

			e->klen = kv[0];
			e->vlen = kv[1];
			if (fread(e->data, 1, kv[0] + kv[1], f) != kv[0] + kv[1])
			{
				free(e);
				fclose(f);
				return TIDES_CORRUPTION;
			}
			insert(e);
		}
		fclose(f);
	}
	return TIDES_OK;
}

void
tides_close(tides_db *db)
{
	free(db);
}

tides_status
tides_shutdown(tides_db *db)
{
	char		path[4200];

	(void) db;
	snprintf(path, sizeof(path), "%s/mock.dat", M.dir);
	FILE	   *f = fopen(path, "wb");

	if (!f)
		return TIDES_IO_ERROR;
	pthread_mutex_lock(&M.mu);
	for (size_t i = 0; i < M.n; i++)
	{
		size_t		kv[2] = {M.e[i]->klen, M.e[i]->vlen};

		fwrite(kv, sizeof(kv), 1, f);
		fwrite(M.e[i]->data, 1, kv[0] + kv[1], f);
	}
	pthread_mutex_unlock(&M.mu);
	fclose(f);
	return TIDES_OK;
}

const char *
tides_errmsg(tides_db *db)
{
	return db ? db->err : "";
}

tides_batch *
tides_batch_new(void)
{
	return calloc(1, sizeof(tides_batch));
}

void
tides_batch_clear(tides_batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->e[i]);
	b->n = 0;
	b->bytes = 0;
}

void
tides_batch_free(tides_batch *b)
{
	tides_batch_clear(b);
	free(b->e);
	free(b);
}

tides_status
tides_batch_put(tides_batch *b, const void *k, size_t kl, const void *v, size_t vl)
{
	if (b->n == b->cap)
	{
		b->cap = b->cap ? b->cap * 2 : 16;
		b->e = realloc(b->e, b->cap * sizeof(ent *));
	}
	b->e[b->n++] = ent_new(k, kl, v, vl);
	b->bytes += kl + vl;
	return TIDES_OK;
}

uint32_t
tides_batch_count(const tides_batch *b)
{
	return (uint32_t) b->n;
}

size_t
tides_batch_bytes(const tides_batch *b)
{
	return b->bytes;
}

static void
wake(tides_db *db, int kind)
{
	if (db->opts.wakeup)
		db->opts.wakeup(db->opts.wakeup_arg, kind);
}

tides_status
tides_write(tides_db *db, tides_batch *b, uint64_t *lsn)
{
	pthread_mutex_lock(&M.mu);
	if (M.active_bytes >= db->opts.memtable_size)
	{
		if (M.sealed + 1 >= db->opts.memtable_count || M.l0 >= db->opts.level0_stop_trigger)
		{
			M.st.stall_count++;
			pthread_mutex_unlock(&M.mu);
			wake(db, TIDES_WORK_FLUSH | TIDES_WORK_COMPACT);
			return TIDES_BUSY;
		}
		M.sealed++;
		M.active_bytes = 0;
		pthread_mutex_unlock(&M.mu);
		wake(db, TIDES_WORK_FLUSH);
		pthread_mutex_lock(&M.mu);
	}
	for (size_t i = 0; i < b->n; i++)
	{
		M.active_bytes += b->e[i]->klen + b->e[i]->vlen + 16;
		insert(b->e[i]);
	}
	b->n = 0;
	b->bytes = 0;
	*lsn = ++M.seq;
	pthread_mutex_unlock(&M.mu);
	return TIDES_OK;
}

tides_status
tides_sync(tides_db *db, uint64_t lsn, bool force)
{
	(void) db;
	(void) lsn;
	(void) force;
	return TIDES_OK;
}

tides_status
tides_get_into(tides_db *db, const tides_snapshot *snap, const void *key, size_t klen,
			   void *buf, size_t cap, size_t *vlen)
{
	(void) db;
	(void) snap;
	tides_status st = TIDES_NOT_FOUND;

	pthread_mutex_lock(&M.mu);
	size_t		i = lower_bound(key, klen);

	if (i < M.n && cmp_key(M.e[i]->data, M.e[i]->klen, key, klen) == 0)
	{
		*vlen = M.e[i]->vlen;
		if (*vlen > cap)
			st = TIDES_INVALID;
		else
		{
			memcpy(buf, M.e[i]->data + M.e[i]->klen, *vlen);
			st = TIDES_OK;
		}
	}
	pthread_mutex_unlock(&M.mu);
	return st;
}

tides_iter *
tides_iter_new(tides_db *db, const tides_iter_options *o)
{
	(void) db;
	(void) o;
	return calloc(1, sizeof(tides_iter));
}

void
tides_iter_free(tides_iter *it)
{
	free(it->cur);
	free(it);
}

static void
iter_load(tides_iter *it)
{
	free(it->cur);
	it->cur = NULL;
	if (it->pos < M.n)
	{
		ent		   *e = M.e[it->pos];

		it->cur = ent_new(e->data, e->klen, e->data + e->klen, e->vlen);
	}
}

void
tides_iter_seek(tides_iter *it, const void *key, size_t klen)
{
	pthread_mutex_lock(&M.mu);
	it->pos = lower_bound(key, klen);
	iter_load(it);
	pthread_mutex_unlock(&M.mu);
}

void
tides_iter_next(tides_iter *it)
{
	pthread_mutex_lock(&M.mu);
	/* re-find the position: the array may have shifted */
	if (it->cur)
	{
		it->pos = lower_bound(it->cur->data, it->cur->klen);
		if (it->pos < M.n &&
			cmp_key(M.e[it->pos]->data, M.e[it->pos]->klen, it->cur->data, it->cur->klen) == 0)
			it->pos++;
	}
	iter_load(it);
	pthread_mutex_unlock(&M.mu);
}

bool
tides_iter_valid(const tides_iter *it)
{
	return it->cur != NULL;
}

const void *
tides_iter_key(const tides_iter *it, size_t *klen)
{
	*klen = it->cur->klen;
	return it->cur->data;
}

const void *
tides_iter_value(const tides_iter *it, size_t *vlen)
{
	*vlen = it->cur->vlen;
	return it->cur->data + it->cur->klen;
}

tides_status
tides_iter_status(const tides_iter *it)
{
	(void) it;
	return TIDES_OK;
}

tides_status
tides_flush_work(tides_db *db, bool *did)
{
	*did = false;
	pthread_mutex_lock(&M.mu);
	bool		have = M.sealed > 0;

	pthread_mutex_unlock(&M.mu);
	if (!have)
		return TIDES_OK;
	usleep(3000);				/* "write an SSTable" */
	pthread_mutex_lock(&M.mu);
	M.sealed--;
	M.l0++;
	M.st.flushes++;
	bool		compact = M.l0 >= db->opts.level0_compaction_trigger;

	pthread_mutex_unlock(&M.mu);
	if (compact)
		wake(db, TIDES_WORK_COMPACT);
	*did = true;
	return TIDES_OK;
}

tides_status
tides_compact_work(tides_db *db, bool *did)
{
	*did = false;
	pthread_mutex_lock(&M.mu);
	bool		have = M.l0 >= db->opts.level0_compaction_trigger;

	pthread_mutex_unlock(&M.mu);
	if (!have)
		return TIDES_OK;
	usleep(10000);
	pthread_mutex_lock(&M.mu);
	M.l0 = 0;
	M.st.compactions++;
	pthread_mutex_unlock(&M.mu);
	*did = true;
	return TIDES_OK;
}

tides_status
tides_sync_work(tides_db *db, bool *did)
{
	(void) db;
	*did = false;
	return TIDES_OK;
}

tides_status
tides_maint_work(tides_db *db, bool *did)
{
	(void) db;
	*did = false;
	return TIDES_OK;
}

int
tides_work_pending(tides_db *db)
{
	int			p = 0;

	pthread_mutex_lock(&M.mu);
	if (M.sealed)
		p |= TIDES_WORK_FLUSH;
	if (M.l0 >= db->opts.level0_compaction_trigger)
		p |= TIDES_WORK_COMPACT;
	pthread_mutex_unlock(&M.mu);
	return p;
}

tides_status
tides_seal_memtable(tides_db *db)
{
	pthread_mutex_lock(&M.mu);
	if (M.active_bytes == 0)
	{
		pthread_mutex_unlock(&M.mu);
		return TIDES_OK;
	}
	if (M.sealed + 1 >= db->opts.memtable_count)
	{
		pthread_mutex_unlock(&M.mu);
		return TIDES_BUSY;
	}
	M.sealed++;
	M.active_bytes = 0;
	pthread_mutex_unlock(&M.mu);
	wake(db, TIDES_WORK_FLUSH);
	return TIDES_OK;
}

void
tides_get_stats(tides_db *db, tides_stats *st)
{
	(void) db;
	pthread_mutex_lock(&M.mu);
	*st = M.st;
	pthread_mutex_unlock(&M.mu);
}
