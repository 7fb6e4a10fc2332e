/*
 * open.c -- attaching a process, close, settings, shutdown, statistics.
 * Recovery, run by the first process at open, is in recovery.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/db_impl.h"
#include "db/write_batch.h"
#include "table/compress.h"

static tides_db *
db_new(tides_shared *sh, const char *dir, const tides_options *opts, tides_vfs *vfs)
{
	tides_db   *db = calloc(1, sizeof(*db));

	if (db == NULL)
		return NULL;
	db->sh = sh;
	db->dir = strdup(dir);
	db->opts = *opts;
	/* region options are fixed by the region */
	db->opts.memtable_size = sh->ropts.memtable_size;
	db->opts.memtable_count = sh->ropts.memtable_count;
	db->opts.block_cache_size = sh->ropts.block_cache_size;
	db->opts.meta_size = sh->ropts.meta_size;
	db->opts.max_open_tags = sh->ropts.max_open_tags;
	db->vfs = vfs ? vfs : tides_vfs_posix();
	db->manifest_fd = -1;
	db->tenv.vfs = db->vfs;
	db->tenv.cache = sh->cache;
	db->tenv.counters = &sh->counters;
	db->tenv.block_size = db->opts.block_size;
	db->tenv.restart_interval = db->opts.restart_interval;
	db->tenv.bloom_bits_per_key = db->opts.bloom_bits_per_key;
	db->tenv.prefix_len = db->opts.prefix_len;
	db->tenv.stem_suffix = db->opts.filter_stem_suffix;
	db->tenv.range_prefix_len = db->opts.range_prefix_len;
	db->tenv.compression = db->opts.compression;
	db->tenv.compression_level = db->opts.compression_level;
	db->tenv.bottommost_compression = db->opts.bottommost_compression;
	db->tenv.bottommost_compression_level = db->opts.bottommost_compression_level;
	tides_rand_seed(&db->rnd, (uint64_t) getpid() * 0x9E3779B97F4A7C15ull ^ tides_now_us());
	tides_error_clear(&db->err);
	if (db->dir == NULL ||
		(db->tcache = tides_table_cache_new(&db->tenv, dir, db->opts.max_open_files)) == NULL)
	{
		free(db->dir);
		free(db);
		return NULL;
	}
	tides_log_attach(&db->log, &sh->log, db->vfs, &sh->counters, db->dir);
	db->log.zero_fill = db->opts.sync_mode == TIDES_SYNC_FULL;
	return db;
}

void
tides_close(tides_db *db)
{
	if (db == NULL)
		return;
	tides_log_detach(&db->log);
	if (db->manifest_fd >= 0)
		db->vfs->close(db->vfs, db->manifest_fd);
	tides_table_cache_free(db->tcache);
	free(db->unsealed_tags);
	free(db->dir);
	free(db);
}

const char *
tides_errmsg(tides_db *db)
{
	return db->err.code == TIDES_OK ? "" : db->err.msg;
}

void
tides_set_sync_mode(tides_db *db, tides_sync_mode mode)
{
	db->opts.sync_mode = mode;
	db->log.zero_fill = mode == TIDES_SYNC_FULL;
}

tides_status
tides_set_compression(tides_db *db, tides_compression c, int level)
{
	if (!tides_compression_valid(c, level))
		return tides_fail(&db->err, TIDES_INVALID, "invalid compression %d, level %d", (int) c,
						  level);
	/* table writers read the table environment when they start a file */
	db->opts.compression = db->tenv.compression = c;
	db->opts.compression_level = db->tenv.compression_level = level;
	return TIDES_OK;
}

void
tides_set_memtable_discard_ms(tides_db *db, uint32_t ms)
{
	db->opts.memtable_discard_ms = ms;
}

tides_status
tides_set_bottommost_compression(tides_db *db, tides_compression c, int level)
{
	if (!tides_compression_valid(c, level))
		return tides_fail(&db->err, TIDES_INVALID, "invalid compression %d, level %d", (int) c,
						  level);
	db->opts.bottommost_compression = db->tenv.bottommost_compression = c;
	db->opts.bottommost_compression_level = db->tenv.bottommost_compression_level = level;
	return TIDES_OK;
}

void
tides_set_filter(tides_db *db, tides_filter_fn fn, void *arg)
{
	db->filter = fn;
	db->filter_arg = arg;
}

void
tides_set_log_sync(tides_db *db, tides_log_sync_fn sync, void *arg)
{
	db->log_sync = sync;
	db->log_sync_arg = arg;
}

void
tides_set_partitioner(tides_db *db, tides_partition_fn fn, void *arg)
{
	db->partition = fn;
	db->partition_arg = arg;
}

tides_status
tides_open(void *region, const char *dir, const tides_options *opts, tides_vfs *vfs,
		   bool recover_now, tides_recovery_info *info, tides_db **out)
{
	tides_shared *sh = region;
	tides_db   *db;
	tides_error err;
	tides_status s;

	*out = NULL;
	if (info != NULL)
		memset(info, 0, sizeof(*info));
	if (sh == NULL || sh->magic != TIDES_REGION_MAGIC)
		return TIDES_INVALID;
	db = db_new(sh, dir, opts, vfs);
	if (db == NULL)
		return TIDES_NO_MEMORY;
	tides_error_clear(&err);
	if (recover_now)
	{
		if (atomic_load(&sh->state) != TIDES_STATE_INIT)
		{
			tides_close(db);
			return TIDES_INVALID;
		}
		s = tides_recover(db, info, &err);
		if (s != TIDES_OK)
		{
			sh->fatal = err;
			atomic_store(&sh->state, TIDES_STATE_FAILED);
			db->err = err;
			*out = db;			/* so the caller can read tides_errmsg */
			return s;
		}
	}
	else if (atomic_load(&sh->state) != TIDES_STATE_OPEN)
	{
		db->err = sh->fatal;
		if (db->err.code == TIDES_OK)
			tides_fail(&db->err, TIDES_UNAVAILABLE, "the engine has not been recovered");
		*out = db;
		return TIDES_UNAVAILABLE;
	}
	*out = db;
	return TIDES_OK;
}

tides_status
tides_settle_tags(tides_db *db, const uint64_t *tags, uint32_t n)
{
	uint64_t	lsn = atomic_load(&db->sh->published_lsn);

	for (uint32_t i = 0; i < n; i++)
	{
		tides_status s = tides_tags_note(db, tags[i], lsn, true, UINT64_MAX);

		if (s != TIDES_OK)
			return s;
	}
	return TIDES_OK;
}

tides_status
tides_shutdown(tides_db *db)
{
	tides_shared *sh = db->sh;
	tides_error err;
	tides_status s;

	tides_error_clear(&err);
	/* after a failed fsync a retried one proves nothing: see write.c */
	if (atomic_load(&sh->sync_poisoned_lsn) > sh->replay_lsn)
		return tides_fail(&db->err, TIDES_IO_ERROR,
						  "an earlier log fsync failed; flush the memtables before shutting down");
	s = TIDES_OK;
	if (sh->ropts.log_mode == TIDES_LOG_OWN)
		s = tides_log_sync(&db->log, atomic_load(&sh->log.written_lsn), &err);
	if (s == TIDES_OK)
	{
		tides_lock_version(sh);
		s = tides_manifest_rewrite(db, &err);
		tides_mutex_unlock(&sh->version_mutex);
	}
	return s == TIDES_OK ? TIDES_OK : tides_db_fail(db, &err);
}

/* ---- statistics */

void
tides_get_stats(tides_db *db, tides_stats *st)
{
	tides_shared *sh = db->sh;
	tides_counters *c = &sh->counters;
	tides_superversion *sv;

	memset(st, 0, sizeof(*st));
#define COPY(f) st->f = tides_counter_sum(c, f)
	COPY(log_bytes_written);
	COPY(log_syncs);
	COPY(flush_bytes_written);
	COPY(flushes);
	COPY(compaction_bytes_read);
	COPY(compaction_bytes_written);
	COPY(compactions);
	COPY(trivial_moves);
	COPY(bytes_read);
	COPY(cache_hits);
	COPY(cache_misses);
	COPY(bloom_useful);
	COPY(stall_count);
	COPY(slowdown_count);
	COPY(slowdown_us);
	COPY(keys_written);
	COPY(user_bytes_written);
	COPY(ingested_files);
	COPY(ingested_bytes);
	COPY(bloom_checked);
	COPY(stall_us);
	COPY(flush_entries_written);
	COPY(compaction_entries_read);
	COPY(compaction_entries_written);
	COPY(reads_unchanged);
	COPY(stem_probes_absent);
	COPY(stem_probes_maybe);
	COPY(reads_changed);
	COPY(ranges_unchanged);
	COPY(ranges_changed);
	COPY(flush_placed_files);
	COPY(flush_placed_bytes);
	COPY(publish_waits);
	COPY(publish_wait_us);
	COPY(log_sync_requests);
	COPY(blocks_fetched);
	COPY(blocks_prefetched);
	COPY(writes);
	COPY(memtable_discards);
	COPY(filtered_dropped);
#undef COPY
	st->memtable_count = sh->ropts.memtable_count;
	for (int i = 0; i < TIDES_MAX_COMPACTIONS; i++)
		if (*(volatile bool *) &sh->running[i].used)
			st->compactions_running++;
	st->memtable_size = sh->ropts.memtable_size;
	for (uint32_t i = 0; i < sh->nmemtables; i++)
		if (atomic_load(&sh->memtables[i].pages) == TIDES_PAGES_DISCARDED)
			st->memtables_discarded++;
	st->last_seq = atomic_load(&sh->published_seq);
	st->written_lsn = atomic_load(&sh->log.written_lsn);
	st->durable_lsn = atomic_load(&sh->log.durable_lsn);
	if (atomic_load(&sh->state) != TIDES_STATE_OPEN)
		return;
	sv = tides_sv_acquire(db);
	for (uint32_t i = 0; i < sv->nmem; i++)
	{
		uint64_t	used = atomic_load(&sv->mems[i]->used);

		st->memtable_bytes += used;
		st->memtable_entries += atomic_load(&sv->mems[i]->entries);
		if (atomic_load(&sv->mems[i]->state) == TIDES_MEM_SEALED)
			st->memtables_sealed++;
		else if (atomic_load(&sv->mems[i]->state) == TIDES_MEM_ACTIVE)
			st->memtable_active_bytes = used;
	}
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
	{
		st->level_files[l] = sv->version->nfiles[l];
		st->level_bytes[l] = tides_version_level_bytes(sv->version, l);
	}
	tides_sv_release(db, sv);
}
