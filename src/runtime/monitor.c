/*
 * monitor.c -- what the monitoring views and size functions need from the
 * runtime: engine block I/O counted as PostgreSQL counts buffer I/O, the
 * counters since the last reset, the bytes of a database's trees, and the
 * files of the engine's directory.
 *
 * Block I/O.  The engine keeps this process's block-cache hits and block
 * reads (tides_get_process_io).  trt_io_account(rel) adds what happened
 * since its last call to pgBufferUsage (shared_blks_hit / shared_blks_read:
 * EXPLAIN (ANALYZE, BUFFERS), pg_stat_statements, auto_explain), to the
 * relation's pgstat counts (blocks fetched / hit: pg_statio_*_tables and
 * _indexes, pg_stat_database blks_read / blks_hit), and to VACUUM's page
 * counts and cost balance (VacuumPageHit / VacuumPageMiss at
 * vacuum_cost_page_hit / _miss: the cost-based delay throttles a VACUUM of
 * a tides table by the engine blocks it reads).  The access methods
 * call it at the end of every callback that reads (src/am/handler.c,
 * src/index/tidx_handler.c), so a plan node's counts are its own; reads
 * outside those callbacks (catalog lookups of tree mappings, tides_verify)
 * are added to the next callback's, or, in the SQL functions, to nobody's
 * relation (trt_io_account(NULL)).
 *
 * The log.  With tides.wal = on the engine keeps no log of its own (its
 * log counters stay 0): tides changes are WAL records, and the bytes of
 * those this server inserted (wal.c) are reported as log_bytes_written, so
 * that write amplification counts the log's copy in either mode.
 *
 * Reset.  The engine's counters run from the server start (a crash restart
 * included: shared memory is made anew).  tides_stats_reset() keeps a copy
 * of them and the time; the views subtract it.
 */
#include "postgres.h"

#include <dirent.h>
#include <sys/stat.h>

#include "executor/instrument.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/fd.h"

#include "runtime/trt.h"
#include "runtime/meta.h"

static tides_io_stats io_seen;

void
trt_io_account(Relation rel)
{
	tides_io_stats io;
	uint64		hits,
				reads;

	tides_get_process_io(&io);
	hits = io.cache_hits - io_seen.cache_hits;
	reads = io.blocks_read - io_seen.blocks_read;
	if (hits == 0 && reads == 0)
		return;
	io_seen = io;
	pgBufferUsage.shared_blks_hit += hits;
	pgBufferUsage.shared_blks_read += reads;
	/* VACUUM's cost-based delay and its buffer report count engine blocks too */
	VacuumPageHit += hits;
	VacuumPageMiss += reads;
	if (VacuumCostActive)
		VacuumCostBalance += hits * VacuumCostPageHit + reads * VacuumCostPageMiss;
	if (rel != NULL && pgstat_should_count_relation(rel))
	{
		rel->pgstat_info->t_counts.t_blocks_fetched += hits + reads;
		rel->pgstat_info->t_counts.t_blocks_hit += hits;
	}
}

/* ---- counters since the last reset */

/* the cumulative counters of tides_stats (the rest are states) */
#define TRT_CUMULATIVE_STATS(X) \
	X(log_bytes_written) X(log_syncs) X(flush_bytes_written) X(flushes) \
	X(compaction_bytes_read) X(compaction_bytes_written) X(compactions) X(trivial_moves) \
	X(bytes_read) X(cache_hits) X(cache_misses) X(bloom_useful) X(stall_count) \
	X(slowdown_count) X(slowdown_us) X(keys_written) X(user_bytes_written) \
	X(bloom_checked) X(stall_us) X(flush_entries_written) X(compaction_entries_read) \
	X(compaction_entries_written) X(reads_unchanged) X(reads_changed) \
	X(ranges_unchanged) X(ranges_changed) \
	X(flush_placed_files) X(flush_placed_bytes) X(stem_probes_absent) X(stem_probes_maybe) \
	X(publish_waits) X(publish_wait_us) X(log_sync_requests) X(blocks_fetched) X(blocks_prefetched) \
	X(memtable_discards) X(writes)

void
trt_get_stats(tides_stats *st)
{
	tides_get_stats(trt_engine(), st);
	if (trt_wal)
		st->log_bytes_written += pg_atomic_read_u64(&trt_shared->wal_bytes);
}

void
trt_stats_since_reset(tides_stats *st, TimestampTz *reset_at)
{
	tides_stats base;

	trt_get_stats(st);
	SpinLockAcquire(&trt_shared->stats_lock);
	base = trt_shared->stats_base;
	*reset_at = trt_shared->stats_reset;
	SpinLockRelease(&trt_shared->stats_lock);
#define SUBTRACT(f) st->f = st->f >= base.f ? st->f - base.f : 0;
	TRT_CUMULATIVE_STATS(SUBTRACT)
#undef SUBTRACT
}

void
trt_stats_reset(void)
{
	tides_stats now;

	trt_get_stats(&now);
	SpinLockAcquire(&trt_shared->stats_lock);
	trt_shared->stats_base = now;
	trt_shared->stats_reset = GetCurrentTimestamp();
	SpinLockRelease(&trt_shared->stats_lock);
}

/* ---- sizes */

/*
 * Bytes of every tree database db maps (its tables' and tides_btree
 * indexes' storage, including storage whose drop has committed but whose
 * tree the maintenance worker has not dropped yet): SSTable bytes to a
 * block plus memtable bytes estimated (trt_tree_bytes(estimate)).
 */
uint64
trt_database_bytes(Oid db)
{
	int			n;
	TrtRelmapEntry *maps = trt_meta_relmaps_of_db(db, &n);
	uint64		total = 0;

	for (int i = 0; i < n; i++)
	{
		bool		seen = false;

		/* a tree is mapped once, but be safe against counting one twice */
		for (int j = 0; j < i && !seen; j++)
			seen = maps[j].map.tree == maps[i].map.tree;
		if (!seen)
			total += trt_tree_bytes(maps[i].map.tree, true);
		CHECK_FOR_INTERRUPTS();
	}
	if (maps)
		pfree(maps);
	return total;
}

/* bytes of the files in $PGDATA/pg_tides, by kind */
void
trt_engine_files(TrtEngineFiles *f)
{
	char		dir[MAXPGPATH];
	DIR		   *d;
	struct dirent *de;

	memset(f, 0, sizeof(*f));
	snprintf(dir, sizeof(dir), "%s/pg_tides", DataDir);
	d = AllocateDir(dir);
	while ((de = ReadDir(d, dir)) != NULL)
	{
		char		path[MAXPGPATH * 2];
		struct stat sb;
		size_t		len = strlen(de->d_name);

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
			continue;			/* deleted meanwhile (compaction), or not a file */
		if (len > 4 && strcmp(de->d_name + len - 4, ".sst") == 0)
		{
			f->sst_files++;
			f->sst_bytes += sb.st_size;
		}
		else if (len > 4 && strcmp(de->d_name + len - 4, ".log") == 0)
		{
			f->log_files++;
			f->log_bytes += sb.st_size;
		}
		else
		{
			f->other_files++;
			f->other_bytes += sb.st_size;
		}
	}
	FreeDir(d);
}
