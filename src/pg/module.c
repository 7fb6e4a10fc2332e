/*
 * module.c -- _PG_init: settings, shared memory, hooks, workers.
 *
 * tidesam must be in shared_preload_libraries: the engine's memtables,
 * block cache and log state live in the main shared memory segment, its
 * recovery runs in the postmaster before any backend can read a row, and
 * its flush and compaction run in background workers registered here.
 */
#include "postgres.h"

#include <sys/stat.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/guc.h"

#include "tides_pg.h"
#include "vfs_keep.h"			/* TEMPORARY: test/vfs, see the Makefile */

PG_MODULE_MAGIC;

void		_PG_init(void);

int			tides_memtable_size_mb = 64;
int			tides_memtable_count = 4;
int			tides_block_cache_mb = 128;
int			tides_meta_size_mb = 16;
int			tides_guc_sync_mode = TIDES_SYNC_FULL;
int			tides_sync_interval_ms = 200;
int			tides_guc_compression = TIDES_COMPRESS_LZ4;
int			tides_compression_level = 3;
int			tides_compaction_workers = 1;
int			tides_l0_slowdown = 12;
int			tides_l0_stop = 20;
int			tides_max_relations = 16384;
int			tides_row_lock_stripes = 4096;
bool		tides_keep_unsynced = false;

TidesShared *tides_shared = NULL;

/*
 * tides.test_keep_unsynced: the engine's unsynced log writes are kept in this
 * separate shared memory area (test/vfs/vfs_keep.h), so that a kill of every
 * server process loses them as an OS crash would.  Test only; see
 * docs/durability.md.
 */
#define TIDES_KEEP_BYTES ((Size) 64 << 20)
static void *keep_mem = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static const struct config_enum_entry sync_mode_options[] = {
	{"none", TIDES_SYNC_NONE, false},
	{"interval", TIDES_SYNC_INTERVAL, false},
	{"full", TIDES_SYNC_FULL, false},
	{NULL, 0, false}
};

static const struct config_enum_entry compression_options[] = {
	{"none", TIDES_COMPRESS_NONE, false},
	{"lz4", TIDES_COMPRESS_LZ4, false},
	{"zstd", TIDES_COMPRESS_ZSTD, false},
	{NULL, 0, false}
};

extern Size tides_trees_shmem_size(void);
extern void tides_trees_shmem_init(void);
extern void tides_hooks_init(void);

static void
assign_sync_mode(int newval, void *extra)
{
	tides_guc_sync_mode = newval;
	tides_sync_mode_changed();
}

static void
define_gucs(void)
{
	DefineCustomIntVariable("tides.memtable_size",
							"Size of each engine memtable.",
							"Writes collect in a memtable in shared memory until it is flushed to an SSTable.",
							&tides_memtable_size_mb, 64, 1, 4095,
							PGC_POSTMASTER, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.memtable_count",
							"Number of memtables (one active, the rest waiting for flush).",
							NULL, &tides_memtable_count, 4, 2, 16,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.block_cache_size",
							"Size of the shared block cache for SSTable blocks.",
							NULL, &tides_block_cache_mb, 128, 1, INT_MAX / 2,
							PGC_POSTMASTER, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.metadata_size",
							"Shared memory for engine metadata (file lists, versions).",
							NULL, &tides_meta_size_mb, 16, 1, 4096,
							PGC_POSTMASTER, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomEnumVariable("tides.sync_mode",
							 "When the tides log is flushed to disk.",
							 "none: written to the kernel at commit; interval: fsynced every tides.sync_interval; full: fsynced before commit returns.",
							 &tides_guc_sync_mode, TIDES_SYNC_FULL, sync_mode_options,
							 PGC_SIGHUP, 0, NULL, assign_sync_mode, NULL);
	DefineCustomIntVariable("tides.sync_interval",
							"Time between log fsyncs in interval mode.",
							NULL, &tides_sync_interval_ms, 200, 1, 60000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomEnumVariable("tides.compression",
							 "Compression of SSTable blocks written from now on.",
							 NULL, &tides_guc_compression, TIDES_COMPRESS_LZ4, compression_options,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.compression_level",
							"zstd compression level.",
							NULL, &tides_compression_level, 3, 1, 19,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.compaction_workers",
							"Number of background compaction workers.",
							NULL, &tides_compaction_workers, 1, 1, TIDES_MAX_COMPACTION_WORKERS,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.l0_slowdown_files",
							"Level-0 files at which writers are slowed down.",
							NULL, &tides_l0_slowdown, 12, 2, 1000,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.l0_stop_files",
							"Level-0 files at which writers wait for compaction.",
							NULL, &tides_l0_stop, 20, 2, 1000,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.max_relations",
							"Relations with tides storage that can be in use at once.",
							NULL, &tides_max_relations, 16384, 128, 1 << 24,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("tides.test_keep_unsynced",
							 "Test only: keep unsynced engine writes in memory so a server kill loses them.",
							 "Simulates an operating system crash for the engine's files while PostgreSQL's WAL stays intact.",
							 &tides_keep_unsynced, false,
							 PGC_POSTMASTER, GUC_SUPERUSER_ONLY, NULL, NULL, NULL);
	MarkGUCPrefixReserved("tides");
}

static Size
engine_region_size(void)
{
	tides_options o;

	tides_fill_options(&o);
	return tides_region_size(&o);
}

static void
tides_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(add_size(sizeof(TidesShared), engine_region_size()));
	RequestAddinShmemSpace(mul_size(tides_row_lock_stripes, sizeof(LWLockPadded)));
	RequestAddinShmemSpace(tides_trees_shmem_size());
	RequestNamedLWLockTranche("tides", 4);
	RequestNamedLWLockTranche("tides_row", tides_row_lock_stripes);
	if (tides_keep_unsynced)
		RequestAddinShmemSpace(tides_vfs_keep_shared_size(TIDES_KEEP_BYTES));
}

/* the vfs every process opens the engine with: NULL (POSIX) unless testing */
tides_vfs *
tides_engine_vfs(void)
{
	return keep_mem != NULL ? tides_vfs_keep_attach(keep_mem, NULL) : NULL;
}

/*
 * Postmaster, before its shared memory goes away (shutdown, or the restart
 * after a backend crash): the machine is still up, so the kept writes reach
 * their files.  Only a kill of the postmaster itself loses them.
 */
static void
keep_write_back(int code, Datum arg)
{
	int64		n;

	if (keep_mem == NULL)
		return;
	n = tides_vfs_keep_apply_all(keep_mem);
	if (n != 0)
		ereport(LOG, (errmsg("tides: wrote back %lld bytes of unsynced log writes kept in memory (tides.test_keep_unsynced)",
							 (long long) n)));
	keep_mem = NULL;
}

/* recover the engine (postmaster, before any backend exists) */
static void
recover_engine(void)
{
	tides_options o;
	tides_recovery_info info;
	tides_db   *db = NULL;
	tides_status s;
	char		dir[MAXPGPATH];

	tides_fill_options(&o);
	snprintf(dir, sizeof(dir), "%s/pg_tides", DataDir);
	s = tides_region_init(tides_shared->region, engine_region_size(), &o);
	if (s == TIDES_OK)
		s = tides_open(tides_shared->region, dir, &o, tides_engine_vfs(), true, &info, &db);
	if (s != TIDES_OK)
	{
		snprintf(tides_shared->engine_error, sizeof(tides_shared->engine_error), "%s",
				 db ? tides_errmsg(db) : tides_status_name(s));
		ereport(LOG,
				(errmsg("tides: engine recovery failed: %s", tides_shared->engine_error),
				 errhint("Tables using the tides access method are unavailable until this is fixed.")));
		if (db)
			tides_close(db);
		return;
	}
	tides_shared->engine_ok = true;
	tides_shared->recovery_seconds = info.seconds;
	tides_shared->recovery_batches = info.batches_replayed;
	tides_shared->clean_start = !info.log_tail_damaged;
	if (info.n_unsealed_tags > 0)
	{
		tides_shared->unsealed = ShmemAlloc(sizeof(uint64) * info.n_unsealed_tags);
		memcpy(tides_shared->unsealed, info.unsealed_tags, sizeof(uint64) * info.n_unsealed_tags);
		tides_shared->n_unsealed = info.n_unsealed_tags;
	}
	ereport(LOG,
			(errmsg("tides: engine recovered in %.3f s: %llu log bytes, %llu batches replayed%s, %u unfinished transactions",
					info.seconds, (unsigned long long) info.log_bytes_replayed,
					(unsigned long long) info.batches_replayed,
					info.log_tail_damaged ? " (log tail damaged, replay stopped there)" : "",
					info.n_unsealed_tags)));
	tides_close(db);
}

static void
tides_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	tides_shared = ShmemInitStruct("tides shared state",
								   add_size(sizeof(TidesShared), engine_region_size() + 64),
								   &found);
	if (!found)
	{
		LWLockPadded *locks;

		memset(tides_shared, 0, sizeof(TidesShared));
		tides_shared->region = (void *) TYPEALIGN(64, (char *) tides_shared + sizeof(TidesShared));
		locks = GetNamedLWLockTranche("tides");
		tides_shared->init_lock = &locks[0].lock;
		tides_shared->reserve_lock = &locks[1].lock;
		tides_shared->row_locks = GetNamedLWLockTranche("tides_row");
		tides_shared->n_row_locks = tides_row_lock_stripes;
		SpinLockInit(&tides_shared->tree_lock);
		pg_atomic_init_u32(&tides_shared->compact_rr, 0);
		pg_atomic_init_u64(&tides_shared->durable_horizon, 0);
	}
	tides_trees_shmem_init();
	if (tides_keep_unsynced)
	{
		Size		ksize = tides_vfs_keep_shared_size(TIDES_KEEP_BYTES);
		bool		kfound;

		keep_mem = ShmemInitStruct("tides keep unsynced", ksize, &kfound);
		if (!kfound)
			tides_vfs_keep_init(keep_mem, ksize);
	}
	LWLockRelease(AddinShmemInitLock);

	if (!found && !IsUnderPostmaster)
	{
		if (keep_mem != NULL)
		{
			on_shmem_exit(keep_write_back, 0);
			ereport(LOG,
					(errmsg("tides: tides.test_keep_unsynced is on: unsynced engine log writes are kept in shared memory and lost if the postmaster is killed (test only)")));
		}
		tides_capture_control_file();
		recover_engine();
		tides_reset_after_crash();
	}
}

void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("tidesam must be loaded via shared_preload_libraries"),
				 errhint("Add tidesam to shared_preload_libraries in postgresql.conf and restart the server, then run CREATE EXTENSION tidesam.")));

	tides_utility_init();
	define_gucs();
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = tides_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = tides_shmem_startup;
	tides_register_rmgr();
	tides_register_workers();
	tides_xact_init();
	tides_hooks_init();
	tides_index_init();
	tides_iterators_init();
}
