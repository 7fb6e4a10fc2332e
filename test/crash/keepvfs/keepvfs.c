/*
 * keepvfs.c -- tidesam_keepvfs, a test module: the engine's unsynced log
 * writes are kept in shared memory, so that killing every server process
 * loses them as an operating system crash would (test/vfs/vfs_keep.h),
 * while PostgreSQL's WAL stays intact.  See README.md here and
 * docs/durability.md.
 *
 *     shared_preload_libraries = 'tidesam,tidesam_keepvfs'
 *
 * It is a module of its own so that no test file system is linked into
 * tidesam.so.  It plugs into tidesam through the runtime's vfs provider
 * (trt_set_vfs_provider, src/runtime/trt.h): tidesam calls keep_startup in
 * its own shmem startup, before engine recovery opens the engine over this
 * vfs, and keep_vfs whenever a process opens the engine.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"

#include "runtime/trt.h"
#include "vfs_keep.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* unsynced log bytes kept at most (older ones are written early, as a kernel may) */
#define KEEP_BYTES ((Size) 64 << 20)

static void *keep_mem = NULL;
static shmem_request_hook_type prev_shmem_request = NULL;

static void
keep_shmem_request(void)
{
	if (prev_shmem_request)
		prev_shmem_request();
	RequestAddinShmemSpace(tides_vfs_keep_shared_size(KEEP_BYTES));
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
		ereport(LOG, (errmsg("tidesam_keepvfs: wrote back %lld bytes of unsynced log writes kept in memory",
							 (long long) n)));
	keep_mem = NULL;
}

/* tidesam's shmem startup calls this, under AddinShmemInitLock, before recovery */
static void
keep_startup(void)
{
	Size		size = tides_vfs_keep_shared_size(KEEP_BYTES);
	bool		found;

	keep_mem = ShmemInitStruct("tides keep unsynced", size, &found);
	if (found)
		return;
	if (tides_vfs_keep_init(keep_mem, size) != 0)
		ereport(FATAL, (errmsg("tidesam_keepvfs: could not set up the keep buffer")));
	if (!IsUnderPostmaster)
	{
		on_shmem_exit(keep_write_back, 0);
		ereport(LOG,
				(errmsg("tidesam_keepvfs: unsynced engine log writes are kept in shared memory and lost if the postmaster is killed (test only)")));
	}
}

static tides_vfs *
keep_vfs(void)
{
	Assert(keep_mem != NULL);
	return tides_vfs_keep_attach(keep_mem, NULL);
}

static const TrtVfsProvider keep_provider = {
	.name = "tidesam_keepvfs",
	.shmem_startup = keep_startup,
	.vfs = keep_vfs,
};

void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("tidesam_keepvfs must be loaded via shared_preload_libraries, after tidesam")));
	trt_set_vfs_provider(&keep_provider);
	prev_shmem_request = shmem_request_hook;
	shmem_request_hook = keep_shmem_request;
}
