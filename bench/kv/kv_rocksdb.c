/*
 * kv_rocksdb.c -- RocksDB (C API, Debian librocksdb-dev 7.8) adapter.
 *
 * Settings mirror the tides defaults; see README.md for the table.
 */
#include "kv_adapter.h"

#include <rocksdb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kv_db
{
	char	   *dir;
	rocksdb_t  *db;
	rocksdb_options_t *opts;
	rocksdb_block_based_table_options_t *topts;
	rocksdb_cache_t *cache;
	rocksdb_filterpolicy_t *filter;		/* owned by topts once set */
	rocksdb_writeoptions_t *wopts;
	rocksdb_readoptions_t *ropts;
};

struct kv_handle
{
	kv_db	   *d;
	rocksdb_writebatch_t *wb;
	char		err[512];
};

struct kv_iter
{
	kv_handle  *h;
	rocksdb_iterator_t *it;
};

static void
take_err(char *dst, size_t len, char *e)
{
	if (dst && len)
		snprintf(dst, len, "%s", e ? e : "unknown error");
	rocksdb_free(e);
}

static kv_db *
rdb_open(const kv_config *cfg, char *err, size_t errlen)
{
	kv_db	   *d = calloc(1, sizeof(*d));
	char	   *e = NULL;

	d->dir = strdup(cfg->dir);
	d->opts = rocksdb_options_create();
	rocksdb_options_set_create_if_missing(d->opts, 1);

	/* memtables: 64 MiB each, up to 4 (active + sealed) like tides */
	rocksdb_options_set_write_buffer_size(d->opts, cfg->memtable_bytes);
	rocksdb_options_set_max_write_buffer_number(d->opts, (int) cfg->memtable_count);

	/* level-style compaction with dynamic level bytes */
	rocksdb_options_set_compaction_style(d->opts, rocksdb_level_compaction);
	rocksdb_options_set_level_compaction_dynamic_level_bytes(d->opts, 1);
	rocksdb_options_set_max_bytes_for_level_base(d->opts, cfg->level_base_bytes);
	rocksdb_options_set_max_bytes_for_level_multiplier(d->opts, 10.0);
	rocksdb_options_set_num_levels(d->opts, 7);
	rocksdb_options_set_target_file_size_base(d->opts, cfg->target_file_bytes);
	rocksdb_options_set_target_file_size_multiplier(d->opts, 1);
	rocksdb_options_set_level0_file_num_compaction_trigger(d->opts, (int) cfg->l0_compact);
	rocksdb_options_set_level0_slowdown_writes_trigger(d->opts, (int) cfg->l0_slowdown);
	rocksdb_options_set_level0_stop_writes_trigger(d->opts, (int) cfg->l0_stop);

	/* 2 background jobs = 1 flush thread + 1 compaction thread */
	rocksdb_options_set_max_background_jobs(d->opts, cfg->bg_threads);
	rocksdb_options_set_max_subcompactions(d->opts, 1);
	rocksdb_options_set_max_open_files(d->opts, 256);

	rocksdb_options_set_compression(d->opts, cfg->compression == KV_COMP_LZ4 ?
									rocksdb_lz4_compression : rocksdb_no_compression);
	rocksdb_options_set_bottommost_compression(d->opts, cfg->compression == KV_COMP_LZ4 ?
											   rocksdb_lz4_compression : rocksdb_no_compression);
	/* keep the LOG file small; it is counted in size on disk */
	rocksdb_options_set_info_log_level(d->opts, 2);	/* WARN */
	rocksdb_options_set_stats_dump_period_sec(d->opts, 0);

	/* 4 KiB blocks, full bloom filter 10 bits/key, shared LRU block cache */
	d->topts = rocksdb_block_based_options_create();
	rocksdb_block_based_options_set_block_size(d->topts, cfg->block_size);
	rocksdb_block_based_options_set_block_restart_interval(d->topts, 16);
	d->cache = rocksdb_cache_create_lru(cfg->block_cache_bytes);
	rocksdb_block_based_options_set_block_cache(d->topts, d->cache);
	if (cfg->bloom_bits)
	{
		d->filter = rocksdb_filterpolicy_create_bloom_full((double) cfg->bloom_bits);
		rocksdb_block_based_options_set_filter_policy(d->topts, d->filter);
	}
	rocksdb_block_based_options_set_format_version(d->topts, 5);
	rocksdb_options_set_block_based_table_factory(d->opts, d->topts);

	/* sync off: WAL written to the kernel, no fsync per write */
	d->wopts = rocksdb_writeoptions_create();
	rocksdb_writeoptions_set_sync(d->wopts, 0);
	rocksdb_writeoptions_disable_WAL(d->wopts, 0);

	d->ropts = rocksdb_readoptions_create();
	rocksdb_readoptions_set_verify_checksums(d->ropts, 1);
	rocksdb_readoptions_set_fill_cache(d->ropts, 1);

	d->db = rocksdb_open(d->opts, cfg->dir, &e);
	if (e)
	{
		take_err(err, errlen, e);
		rocksdb_readoptions_destroy(d->ropts);
		rocksdb_writeoptions_destroy(d->wopts);
		rocksdb_block_based_options_destroy(d->topts);
		rocksdb_cache_destroy(d->cache);
		rocksdb_options_destroy(d->opts);
		free(d->dir);
		free(d);
		return NULL;
	}
	return d;
}

static int
rdb_close(kv_db *d, char *err, size_t errlen)
{
	(void) err;
	(void) errlen;
	rocksdb_close(d->db);
	rocksdb_readoptions_destroy(d->ropts);
	rocksdb_writeoptions_destroy(d->wopts);
	rocksdb_block_based_options_destroy(d->topts);
	rocksdb_cache_destroy(d->cache);
	rocksdb_options_destroy(d->opts);
	free(d->dir);
	free(d);
	return 0;
}

static kv_handle *
rdb_attach(kv_db *d, char *err, size_t errlen)
{
	(void) err;
	(void) errlen;
	kv_handle  *h = calloc(1, sizeof(*h));

	h->d = d;
	h->wb = rocksdb_writebatch_create();
	return h;
}

static void
rdb_detach(kv_handle *h)
{
	rocksdb_writebatch_destroy(h->wb);
	free(h);
}

static int
rdb_put_batch(kv_handle *h, const kv_pair *kv, int n)
{
	char	   *e = NULL;

	rocksdb_writebatch_clear(h->wb);
	for (int i = 0; i < n; i++)
		rocksdb_writebatch_put(h->wb, kv[i].key, kv[i].klen, kv[i].val, kv[i].vlen);
	rocksdb_write(h->d->db, h->d->wopts, h->wb, &e);
	if (e)
	{
		take_err(h->err, sizeof(h->err), e);
		return -1;
	}
	return 0;
}

static int
rdb_get(kv_handle *h, const void *key, size_t klen, void *buf, size_t cap, size_t *vlen)
{
	char	   *e = NULL;
	rocksdb_pinnableslice_t *ps = rocksdb_get_pinned(h->d->db, h->d->ropts, key, klen, &e);

	if (e)
	{
		take_err(h->err, sizeof(h->err), e);
		return -1;
	}
	if (!ps)
		return KV_NOTFOUND;

	size_t		len;
	const char *v = rocksdb_pinnableslice_value(ps, &len);

	*vlen = len;
	if (len > cap)
	{
		rocksdb_pinnableslice_destroy(ps);
		snprintf(h->err, sizeof(h->err), "value of %zu bytes exceeds buffer", len);
		return -1;
	}
	memcpy(buf, v, len);
	rocksdb_pinnableslice_destroy(ps);
	return 0;
}

static kv_iter *
rdb_iter_new(kv_handle *h)
{
	kv_iter    *it = malloc(sizeof(*it));

	it->h = h;
	it->it = rocksdb_create_iterator(h->d->db, h->d->ropts);
	return it;
}

static void
rdb_iter_seek(kv_iter *it, const void *key, size_t klen)
{
	rocksdb_iter_seek(it->it, key, klen);
}

static void
rdb_iter_next(kv_iter *it)
{
	rocksdb_iter_next(it->it);
}

static bool
rdb_iter_valid(kv_iter *it)
{
	return rocksdb_iter_valid(it->it) != 0;
}

static const void *
rdb_iter_key(kv_iter *it, size_t *len)
{
	return rocksdb_iter_key(it->it, len);
}

static const void *
rdb_iter_value(kv_iter *it, size_t *len)
{
	return rocksdb_iter_value(it->it, len);
}

static int
rdb_iter_free(kv_iter *it)
{
	char	   *e = NULL;
	int			rc = 0;

	rocksdb_iter_get_error(it->it, &e);
	if (e)
	{
		take_err(it->h->err, sizeof(it->h->err), e);
		rc = -1;
	}
	rocksdb_iter_destroy(it->it);
	free(it);
	return rc;
}

static uint64_t
prop(kv_db *d, const char *name)
{
	uint64_t	v = 0;

	if (rocksdb_property_int(d->db, name, &v) != 0)
		return 0;
	return v;
}

static int
rdb_flush_wait_idle(kv_db *d, char *err, size_t errlen)
{
	char	   *e = NULL;
	rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();

	rocksdb_flushoptions_set_wait(fo, 1);
	rocksdb_flush(d->db, fo, &e);
	rocksdb_flushoptions_destroy(fo);
	if (e)
	{
		take_err(err, errlen, e);
		return -1;
	}

	/* RocksDB 7.8's C API has no WaitForCompact: poll the properties */
	int			quiet = 0;
	uint64_t	deadline = kv_now_ns() + kv_idle_timeout_s() * 1000000000ull;

	while (quiet < 3)
	{
		if (prop(d, "rocksdb.num-running-flushes") == 0 &&
			prop(d, "rocksdb.num-running-compactions") == 0 &&
			prop(d, "rocksdb.mem-table-flush-pending") == 0 &&
			prop(d, "rocksdb.compaction-pending") == 0)
			quiet++;
		else
			quiet = 0;
		if (kv_now_ns() > deadline)
		{
			snprintf(err, errlen, "background work did not become idle");
			return -1;
		}
		kv_sleep_us(5000);
	}
	return 0;
}

static uint64_t
rdb_size_on_disk(kv_db *d, uint64_t *allocated, uint64_t *table_bytes)
{
	return kv_dir_size(d->dir, allocated, table_bytes);
}

static void
rdb_counters(kv_db *d, kv_counters *c)
{
	memset(c, 0, sizeof(*c));
	/* cumulative stall time is only in the text stats; count stops instead */
	c->stalls = prop(d, "rocksdb.is-write-stopped");
}

static const char *
rdb_errmsg(kv_handle *h)
{
	return h->err;
}

const kv_engine kv_engine_rocksdb = {
	.name = "rocksdb",
	.open = rdb_open,
	.close = rdb_close,
	.attach = rdb_attach,
	.detach = rdb_detach,
	.put_batch = rdb_put_batch,
	.get = rdb_get,
	.iter_new = rdb_iter_new,
	.iter_seek = rdb_iter_seek,
	.iter_next = rdb_iter_next,
	.iter_valid = rdb_iter_valid,
	.iter_key = rdb_iter_key,
	.iter_value = rdb_iter_value,
	.iter_free = rdb_iter_free,
	.flush_wait_idle = rdb_flush_wait_idle,
	.size_on_disk = rdb_size_on_disk,
	.counters = rdb_counters,
	.errmsg = rdb_errmsg,
};
