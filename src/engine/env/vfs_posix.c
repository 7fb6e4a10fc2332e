/*
 * vfs_posix.c -- the production vfs: thin wrappers over POSIX calls that
 * retry EINTR and short transfers, and report errors as negative errno.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tides_engine.h"

static int
px_open(tides_vfs *v, const char *path, int flags, int mode)
{
	int			fd;

	(void) v;
	do
		fd = open(path, flags | O_CLOEXEC, mode);
	while (fd < 0 && errno == EINTR);
	return fd < 0 ? -errno : fd;
}

static int
px_close(tides_vfs *v, int fd)
{
	(void) v;
	return close(fd) < 0 ? -errno : 0;
}

static int64_t
px_pread(tides_vfs *v, int fd, void *buf, size_t n, uint64_t off)
{
	size_t		done = 0;

	(void) v;
	while (done < n)
	{
		ssize_t		r = pread(fd, (char *) buf + done, n - done, (off_t) (off + done));

		if (r < 0)
		{
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;				/* end of file: short read */
		done += (size_t) r;
	}
	return (int64_t) done;
}

static int64_t
px_pwrite(tides_vfs *v, int fd, const void *buf, size_t n, uint64_t off)
{
	size_t		done = 0;

	(void) v;
	while (done < n)
	{
		ssize_t		r = pwrite(fd, (const char *) buf + done, n - done, (off_t) (off + done));

		if (r < 0)
		{
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		done += (size_t) r;
	}
	return (int64_t) done;
}

static int
px_fsync(tides_vfs *v, int fd)
{
	(void) v;
	return fdatasync(fd) < 0 ? -errno : 0;
}

static int
px_allocate(tides_vfs *v, int fd, uint64_t off, uint64_t len)
{
	int			r;

	(void) v;
	r = posix_fallocate(fd, (off_t) off, (off_t) len);
	return -r;
}

static int
px_truncate(tides_vfs *v, int fd, uint64_t len)
{
	(void) v;
	return ftruncate(fd, (off_t) len) < 0 ? -errno : 0;
}

static int64_t
px_file_size(tides_vfs *v, int fd)
{
	struct stat st;

	(void) v;
	if (fstat(fd, &st) < 0)
		return -errno;
	return (int64_t) st.st_size;
}

static int
px_unlink(tides_vfs *v, const char *path)
{
	(void) v;
	return unlink(path) < 0 ? -errno : 0;
}

static int
px_rename(tides_vfs *v, const char *from, const char *to)
{
	(void) v;
	return rename(from, to) < 0 ? -errno : 0;
}

static int
px_mkdir(tides_vfs *v, const char *path)
{
	(void) v;
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int
px_sync_dir(tides_vfs *v, const char *path)
{
	int			fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int			r = 0;

	(void) v;
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		r = -errno;
	close(fd);
	return r;
}

static int
px_list_dir(tides_vfs *v, const char *path, void (*fn) (const char *, void *), void *arg)
{
	DIR		   *d = opendir(path);
	struct dirent *e;

	(void) v;
	if (d == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL)
	{
		if (e->d_name[0] == '.')
			continue;
		fn(e->d_name, arg);
	}
	closedir(d);
	return 0;
}

static void *
px_map(tides_vfs *v, int fd, uint64_t len)
{
	void	   *p;

	(void) v;
	p = mmap(NULL, (size_t) len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void
px_unmap(tides_vfs *v, void *addr, uint64_t len)
{
	(void) v;
	munmap(addr, (size_t) len);
}

static void
px_will_need(tides_vfs *v, int fd, uint64_t off, uint64_t len)
{
	(void) v;
	(void) posix_fadvise(fd, (off_t) off, (off_t) len, POSIX_FADV_WILLNEED);
}

static tides_vfs posix_vfs = {
	NULL, px_open, px_close, px_pread, px_pwrite, px_fsync, px_allocate,
	px_truncate, px_file_size, px_unlink, px_rename, px_mkdir, px_sync_dir,
	px_list_dir, px_map, px_unmap, px_will_need
};

tides_vfs *
tides_vfs_posix(void)
{
	return &posix_vfs;
}
