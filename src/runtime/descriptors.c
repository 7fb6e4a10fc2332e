/*
 * descriptors.c -- the engine's file descriptors in PostgreSQL's count.
 *
 * A backend may hold max_safe_fds descriptors (fd.c, from
 * max_files_per_process and what the kernel allows).  fd.c keeps its own
 * files (md.c's relation segments, temporary files) under that limit by
 * closing the least recently used ones, but only if it knows of every
 * other descriptor the process holds: "external" ones are reported with
 * ReserveExternalFD and given back with ReleaseExternalFD.  The engine opens
 * its table files (up to max_open_files per process, table/table_cache.c),
 * its log segments and its manifest through a vfs; every process's engine
 * uses the vfs below, which forwards each call to the real one (POSIX, or a
 * test provider's) and reports each descriptor the engine holds, for as long
 * as it holds it.  A directory sync or listing holds one for the call.
 *
 * ReserveExternalFD never fails (it closes fd.c's own least recently used
 * files to make room) and raises no ERROR, so it is safe under the engine's
 * locks.  The engine's share is bounded by its options: the table cache's
 * max_open_files (trt_table_files_budget) plus a handful of log and
 * manifest files.
 */
#include "postgres.h"

#include "storage/fd.h"

#include "runtime/trt.h"

/* the vfs the engine's calls go to: a test provider's or POSIX */
static tides_vfs *base_vfs = NULL;
static tides_vfs counted_vfs;

#define BASE(v) ((tides_vfs *) (v)->ctx)

static int
counted_open(tides_vfs *v, const char *path, int flags, int mode)
{
	int			fd;

	ReserveExternalFD();
	fd = BASE(v)->open(BASE(v), path, flags, mode);
	if (fd < 0)
		ReleaseExternalFD();
	return fd;
}

static int
counted_close(tides_vfs *v, int fd)
{
	int			r = BASE(v)->close(BASE(v), fd);

	/* the descriptor is gone whatever close() reported */
	ReleaseExternalFD();
	return r;
}

static int64_t
counted_pread(tides_vfs *v, int fd, void *buf, size_t n, uint64_t off)
{
	return BASE(v)->pread(BASE(v), fd, buf, n, off);
}

static int64_t
counted_pwrite(tides_vfs *v, int fd, const void *buf, size_t n, uint64_t off)
{
	return BASE(v)->pwrite(BASE(v), fd, buf, n, off);
}

static int
counted_fsync(tides_vfs *v, int fd)
{
	return BASE(v)->fsync(BASE(v), fd);
}

static int
counted_allocate(tides_vfs *v, int fd, uint64_t off, uint64_t len)
{
	return BASE(v)->allocate(BASE(v), fd, off, len);
}

static int
counted_truncate(tides_vfs *v, int fd, uint64_t len)
{
	return BASE(v)->truncate(BASE(v), fd, len);
}

static int64_t
counted_file_size(tides_vfs *v, int fd)
{
	return BASE(v)->file_size(BASE(v), fd);
}

static int
counted_unlink(tides_vfs *v, const char *path)
{
	return BASE(v)->unlink(BASE(v), path);
}

static int
counted_rename(tides_vfs *v, const char *from, const char *to)
{
	return BASE(v)->rename(BASE(v), from, to);
}

static int
counted_mkdir(tides_vfs *v, const char *path)
{
	return BASE(v)->mkdir(BASE(v), path);
}

static int
counted_sync_dir(tides_vfs *v, const char *path)
{
	int			r;

	ReserveExternalFD();
	r = BASE(v)->sync_dir(BASE(v), path);
	ReleaseExternalFD();
	return r;
}

static int
counted_list_dir(tides_vfs *v, const char *path, void (*fn) (const char *name, void *arg), void *arg)
{
	int			r;

	ReserveExternalFD();
	r = BASE(v)->list_dir(BASE(v), path, fn, arg);
	ReleaseExternalFD();
	return r;
}

/* a mapping holds no descriptor of its own: straight through */
static void *
counted_map(tides_vfs *v, int fd, uint64_t len)
{
	return BASE(v)->map(BASE(v), fd, len);
}

static void
counted_unmap(tides_vfs *v, void *addr, uint64_t len)
{
	BASE(v)->unmap(BASE(v), addr, len);
}

static void
counted_will_need(tides_vfs *v, int fd, uint64_t off, uint64_t len)
{
	BASE(v)->will_need(BASE(v), fd, off, len);
}

/* the vfs this process's engine uses over `base` (NULL: POSIX) */
tides_vfs *
trt_counted_vfs(tides_vfs *base)
{
	if (base == NULL)
		base = tides_vfs_posix();
	if (base_vfs != base)
	{
		base_vfs = base;
		counted_vfs = (tides_vfs)
		{
			.ctx = base,
				.open = counted_open,
				.close = counted_close,
				.pread = counted_pread,
				.pwrite = counted_pwrite,
				.fsync = counted_fsync,
				.allocate = counted_allocate,
				.truncate = counted_truncate,
				.file_size = counted_file_size,
				.unlink = counted_unlink,
				.rename = counted_rename,
				.mkdir = counted_mkdir,
				.sync_dir = counted_sync_dir,
				.list_dir = counted_list_dir,
				.map = base->map != NULL ? counted_map : NULL,
				.unmap = base->map != NULL ? counted_unmap : NULL,
				.will_need = base->will_need != NULL ? counted_will_need : NULL
		};
	}
	return &counted_vfs;
}

/*
 * Table files a process's engine may keep open: a third of what the process
 * may hold (the share fd.c's AcquireExternalFD allows all external users
 * together; about 330 with the default max_files_per_process), at least 16.
 * In the postmaster max_safe_fds is still fd.c's start-up default when the
 * engine is recovered (set_max_safe_fds runs after shared memory is set
 * up), so recovery gets 16; the table cache goes over its limit rather than
 * fail a read when every reader is pinned.
 */
uint32
trt_table_files_budget(void)
{
	return (uint32) Max(16, max_safe_fds / 3);
}
