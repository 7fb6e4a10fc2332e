/*
 * shmem.c -- the runtime's shared memory: its size (requested in the
 * postmaster's shmem_request hook), its initialisation, and what the
 * postmaster does right after (shmem_startup hook): engine recovery and the
 * reset after a crash, before any backend exists.  src/module/module.c
 * installs the hooks and calls trt_shmem_request and trt_shmem_startup.
 *
 * tidesam must be in shared_preload_libraries: the engine's memtables,
 * block cache and log state live in the main shared memory segment, whose
 * address is the same in every process (the engine's raw pointers need
 * that), and its recovery runs in the postmaster.
 */
#include "postgres.h"

#include <sys/mman.h>

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"

#include "runtime/trt.h"

TrtShared *trt_shared = NULL;

/* a test module's file system (trt_set_vfs_provider), or NULL */
static const TrtVfsProvider *vfs_provider = NULL;

static Size
engine_region_size(void)
{
	tides_options o;

	trt_fill_options(&o);
	return tides_region_size(&o);
}

void
trt_shmem_request(void)
{
	RequestAddinShmemSpace(add_size(sizeof(TrtShared), engine_region_size()));
	RequestAddinShmemSpace(mul_size(trt_row_lock_stripes, sizeof(LWLockPadded)));
	RequestAddinShmemSpace(mul_size(trt_row_lock_stripes, sizeof(pg_atomic_uint64)));
	RequestAddinShmemSpace(trt_trees_shmem_size());
	RequestAddinShmemSpace(trt_waiting_rows_shmem_size());
	RequestAddinShmemSpace(trt_held_views_shmem_size());
	RequestAddinShmemSpace(trt_vacant_shmem_size());
	RequestAddinShmemSpace(trt_low_marks_shmem_size());
	RequestNamedLWLockTranche("tides", 6);
	RequestNamedLWLockTranche("tides_row", trt_row_lock_stripes);
}

void
trt_set_vfs_provider(const TrtVfsProvider *provider)
{
	if (!process_shared_preload_libraries_in_progress || trt_shared != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("a tides vfs provider can only be set while shared_preload_libraries are loaded")));
	if (vfs_provider != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("tides vfs provider \"%s\" is already set", vfs_provider->name)));
	vfs_provider = provider;
}

/*
 * the vfs every process opens the engine with: POSIX unless testing, its
 * descriptors counted by fd.c (descriptors.c)
 */
tides_vfs *
trt_engine_vfs(void)
{
	return trt_counted_vfs(vfs_provider != NULL ? vfs_provider->vfs() : NULL);
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

	trt_fill_options(&o);
	snprintf(dir, sizeof(dir), "%s/pg_tides", DataDir);
	if (!trt_restore_backup(dir, trt_engine_vfs(), trt_shared->engine_error,
							sizeof(trt_shared->engine_error)))
	{
		ereport(LOG,
				(errmsg("tides: tides storage is unavailable: %s", trt_shared->engine_error),
				 errhint("Tables using the tides access method cannot be used in this cluster; see docs/operations.md.")));
		return;
	}
	s = tides_region_init(trt_shared->region, engine_region_size(), &o);
	if (s == TIDES_OK)
		s = tides_open(trt_shared->region, dir, &o, trt_engine_vfs(), true, &info, &db);
	if (s != TIDES_OK)
	{
		snprintf(trt_shared->engine_error, sizeof(trt_shared->engine_error), "%s",
				 db ? tides_errmsg(db) : tides_status_name(s));
		ereport(LOG,
				(errmsg("tides: engine recovery failed: %s", trt_shared->engine_error),
				 errhint("Tables using the tides access method are unavailable until this is fixed.")));
		if (db)
			tides_close(db);
		return;
	}
	if (!IsBinaryUpgrade && trt_binary_upgrade_marked(db))
	{
		snprintf(trt_shared->engine_error, sizeof(trt_shared->engine_error),
				 "this cluster was made by pg_upgrade, and its pg_tides holds only the empty storage created during the upgrade, not the old cluster's tides data: replace it with the old cluster's pg_tides (docs/operations.md, \"Upgrading with pg_upgrade\")");
		ereport(LOG,
				(errmsg("tides: tides storage is unavailable: %s", trt_shared->engine_error),
				 errhint("Stop the server, replace %s/pg_tides with the old cluster's pg_tides, and start it again.",
						 DataDir)));
		tides_close(db);
		return;
	}
	trt_shared->engine_ok = true;
	trt_shared->recovery_seconds = info.seconds;
	trt_shared->recovery_batches = info.batches_replayed;
	trt_shared->clean_start = !info.log_tail_damaged;
	if (info.n_unsealed_tags > 0)
	{
		trt_shared->unsealed = ShmemAlloc(sizeof(uint64) * info.n_unsealed_tags);
		memcpy(trt_shared->unsealed, info.unsealed_tags, sizeof(uint64) * info.n_unsealed_tags);
		trt_shared->n_unsealed = info.n_unsealed_tags;
	}
	ereport(LOG,
			(errmsg("tides: engine recovered in %.3f s: %llu log bytes, %llu batches replayed%s, %u unfinished transactions",
					info.seconds, (unsigned long long) info.log_bytes_replayed,
					(unsigned long long) info.batches_replayed,
					info.log_tail_damaged ? " (log tail damaged, replay stopped there)" : "",
					info.n_unsealed_tags)));
	trt_low_marks_load(db);
	tides_close(db);
}

/*
 * Ask for transparent huge pages over the engine's region (memtables, block
 * cache, metadata), tides.transparent_huge_pages.  Done in the postmaster
 * when the region is created, so every process forked from it inherits the
 * advice with the mapping.  With 4 kB pages a point read touches a dozen
 * distinct pages of a region of hundreds of MB, each a TLB miss, and every
 * process pays a page fault the first time it touches each page (on this
 * project's VMs 12 us: a new backend writing 64 MB of memtable faults
 * 16,384 times).  The kernel honours the advice only where
 * /sys/kernel/mm/transparent_hugepage/shmem_enabled says advise (or always);
 * under never it changes nothing, nor where PostgreSQL's huge_pages put the
 * whole segment in hugetlb pages already (the call succeeds there too).
 */
#define HUGE_PAGE_SIZE ((uintptr_t) 2 * 1024 * 1024)	/* x86-64's and ARMv8's (4 kB granule) */

static void
advise_huge_pages(void *region, Size size)
{
	char	   *lo = (char *) TYPEALIGN(HUGE_PAGE_SIZE, region);
	char	   *hi = (char *) TYPEALIGN_DOWN(HUGE_PAGE_SIZE, (char *) region + size);

	if (!trt_transparent_huge_pages || hi <= lo)
		return;
#ifdef MADV_HUGEPAGE
	if (madvise(lo, hi - lo, MADV_HUGEPAGE) != 0)
		elog(DEBUG1, "tides: madvise(MADV_HUGEPAGE) of the engine's shared memory failed: %m");
#endif
}

void
trt_shmem_startup(void)
{
	bool		found;
	Size		region_size = engine_region_size();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	trt_shared = ShmemInitStruct("tides shared state",
								   add_size(sizeof(TrtShared), region_size + 64),
								   &found);
	if (!found)
	{
		LWLockPadded *locks;

		memset(trt_shared, 0, sizeof(TrtShared));
		trt_shared->region = (void *) TYPEALIGN(64, (char *) trt_shared + sizeof(TrtShared));
		advise_huge_pages(trt_shared->region, region_size);
		locks = GetNamedLWLockTranche("tides");
		trt_shared->init_lock = &locks[0].lock;
		trt_shared->reserve_lock = &locks[1].lock;
		trt_shared->ckpt_lock = &locks[4].lock;
		SpinLockInit(&trt_shared->guard_lock);
		pg_atomic_init_u32(&trt_shared->lowlevel_backups, 0);
		trt_shared->row_locks = GetNamedLWLockTranche("tides_row");
		trt_shared->n_row_locks = trt_row_lock_stripes;
		trt_shared->row_lock_points = ShmemAlloc(mul_size(trt_row_lock_stripes, sizeof(pg_atomic_uint64)));
		for (int i = 0; i < trt_row_lock_stripes; i++)
			pg_atomic_init_u64(&trt_shared->row_lock_points[i], 0);
		SpinLockInit(&trt_shared->tree_lock);
		pg_atomic_init_u32(&trt_shared->compact_rr, 0);
		pg_atomic_init_u64(&trt_shared->durable_horizon, 0);
		pg_atomic_init_u64(&trt_shared->wal_bytes, 0);
		SpinLockInit(&trt_shared->stats_lock);
		trt_shared->stats_reset = GetCurrentTimestamp();
		pg_atomic_init_u64(&trt_shared->write_stalls, 0);
		pg_atomic_init_u64(&trt_shared->write_stall_us, 0);
		pg_atomic_init_u64(&trt_shared->vacant_ranges, 0);
		pg_atomic_init_u64(&trt_shared->vacant_jumps, 0);
	}
	trt_trees_shmem_init();
	trt_waiting_rows_shmem_init();
	trt_held_views_shmem_init();
	trt_vacant_shmem_init();
	trt_low_marks_shmem_init();
	/* a test file system's shared state, before recovery opens the engine over it */
	if (vfs_provider != NULL)
		vfs_provider->shmem_startup();
	LWLockRelease(AddinShmemInitLock);

	if (!found && !IsUnderPostmaster)
	{
		if (vfs_provider != NULL)
			ereport(LOG,
					(errmsg("tides: the engine opens its files through the test file system \"%s\"",
							vfs_provider->name)));
		trt_capture_control_file();
		recover_engine();
		trt_reset_after_crash();
	}
}
