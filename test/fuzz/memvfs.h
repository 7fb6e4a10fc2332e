/*
 * memvfs.h -- a tiny in-memory vfs for the fuzz targets: files live in
 * process memory (no disk, no cleanup between inputs), one flat namespace
 * keyed by the full path.  Files are capped at MEMVFS_MAX_FILE bytes
 * (beyond: ENOSPC), so a fuzzed size cannot exhaust memory.
 */
#ifndef TIDES_FUZZ_MEMVFS_H
#define TIDES_FUZZ_MEMVFS_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tides_engine.h"

#define MEMVFS_MAX_FILES 64
#define MEMVFS_MAX_FDS 64
#define MEMVFS_MAX_FILE (8u << 20)

typedef struct memfile
{
	char		name[256];
	uint8_t    *data;
	uint64_t	size;
	bool		used;
} memfile;

typedef struct memvfs
{
	tides_vfs	vfs;
	memfile		files[MEMVFS_MAX_FILES];
	int			fds[MEMVFS_MAX_FDS];	/* file index + 1, 0 = closed */
} memvfs;

#define MV(v) ((memvfs *) (v)->ctx)

static memfile *
mv_find(memvfs *m, const char *path)
{
	for (int i = 0; i < MEMVFS_MAX_FILES; i++)
		if (m->files[i].used && strcmp(m->files[i].name, path) == 0)
			return &m->files[i];
	return NULL;
}

static memfile *
mv_fd(memvfs *m, int fd)
{
	if (fd < 0 || fd >= MEMVFS_MAX_FDS || m->fds[fd] == 0)
		return NULL;
	return &m->files[m->fds[fd] - 1];
}

static int
mv_resize(memfile *f, uint64_t size)
{
	uint8_t    *p;

	if (size > MEMVFS_MAX_FILE)
		return -ENOSPC;
	if (size > f->size)
	{
		p = realloc(f->data, size ? size : 1);
		if (p == NULL)
			return -ENOMEM;
		memset(p + f->size, 0, size - f->size);
		f->data = p;
	}
	f->size = size;
	return 0;
}

static int
mv_open(tides_vfs *v, const char *path, int flags, int mode)
{
	memvfs	   *m = MV(v);
	memfile    *f = mv_find(m, path);

	(void) mode;
	if (f == NULL)
	{
		if (!(flags & O_CREAT))
			return -ENOENT;
		for (int i = 0; i < MEMVFS_MAX_FILES && f == NULL; i++)
			if (!m->files[i].used)
				f = &m->files[i];
		if (f == NULL || strlen(path) >= sizeof(f->name))
			return -ENOSPC;
		memset(f, 0, sizeof(*f));
		f->used = true;
		strcpy(f->name, path);
	}
	else if ((flags & O_TRUNC) && (flags & O_ACCMODE) != O_RDONLY)
		f->size = 0;
	for (int fd = 3; fd < MEMVFS_MAX_FDS; fd++)
		if (m->fds[fd] == 0)
		{
			m->fds[fd] = (int) (f - m->files) + 1;
			return fd;
		}
	return -EMFILE;
}

static int
mv_close(tides_vfs *v, int fd)
{
	memvfs	   *m = MV(v);

	if (mv_fd(m, fd) == NULL)
		return -EBADF;
	m->fds[fd] = 0;
	return 0;
}

static int64_t
mv_pread(tides_vfs *v, int fd, void *buf, size_t n, uint64_t off)
{
	memfile    *f = mv_fd(MV(v), fd);

	if (f == NULL)
		return -EBADF;
	if (off >= f->size)
		return 0;
	if (n > f->size - off)
		n = (size_t) (f->size - off);
	memcpy(buf, f->data + off, n);
	return (int64_t) n;
}

static int64_t
mv_pwrite(tides_vfs *v, int fd, const void *buf, size_t n, uint64_t off)
{
	memfile    *f = mv_fd(MV(v), fd);
	int			r;

	if (f == NULL)
		return -EBADF;
	if (off + n > f->size && (r = mv_resize(f, off + n)) != 0)
		return r;
	memcpy(f->data + off, buf, n);
	return (int64_t) n;
}

static int
mv_fsync(tides_vfs *v, int fd)
{
	return mv_fd(MV(v), fd) ? 0 : -EBADF;
}

static int
mv_allocate(tides_vfs *v, int fd, uint64_t off, uint64_t len)
{
	memfile    *f = mv_fd(MV(v), fd);

	if (f == NULL)
		return -EBADF;
	if (off + len < off)
		return -EFBIG;
	return off + len > f->size ? mv_resize(f, off + len) : 0;
}

static int
mv_truncate(tides_vfs *v, int fd, uint64_t len)
{
	memfile    *f = mv_fd(MV(v), fd);

	if (f == NULL)
		return -EBADF;
	return mv_resize(f, len);
}

static int64_t
mv_file_size(tides_vfs *v, int fd)
{
	memfile    *f = mv_fd(MV(v), fd);

	return f ? (int64_t) f->size : -EBADF;
}

static int
mv_unlink(tides_vfs *v, const char *path)
{
	memvfs	   *m = MV(v);
	memfile    *f = mv_find(m, path);

	if (f == NULL)
		return -ENOENT;
	/* an open descriptor keeps the data: only forget the name */
	for (int fd = 0; fd < MEMVFS_MAX_FDS; fd++)
		if (m->fds[fd] == (int) (f - m->files) + 1)
		{
			f->name[0] = '\0';
			return 0;
		}
	free(f->data);
	memset(f, 0, sizeof(*f));
	return 0;
}

static int
mv_rename(tides_vfs *v, const char *from, const char *to)
{
	memvfs	   *m = MV(v);
	memfile    *f = mv_find(m, from),
			   *t = mv_find(m, to);

	if (f == NULL)
		return -ENOENT;
	if (t != NULL && t != f)
		mv_unlink(v, to);
	strcpy(f->name, to);
	return 0;
}

static int
mv_mkdir(tides_vfs *v, const char *path)
{
	(void) v;
	(void) path;
	return 0;
}

static int
mv_sync_dir(tides_vfs *v, const char *path)
{
	(void) v;
	(void) path;
	return 0;
}

static int
mv_list_dir(tides_vfs *v, const char *path, void (*fn) (const char *, void *), void *arg)
{
	memvfs	   *m = MV(v);
	size_t		pl = strlen(path);

	for (int i = 0; i < MEMVFS_MAX_FILES; i++)
		if (m->files[i].used && m->files[i].name[0] && strncmp(m->files[i].name, path, pl) == 0 &&
			m->files[i].name[pl] == '/')
			fn(m->files[i].name + pl + 1, arg);
	return 0;
}

/* reset to an empty file system */
static void
memvfs_reset(memvfs *m)
{
	for (int i = 0; i < MEMVFS_MAX_FILES; i++)
		free(m->files[i].data);
	memset(m, 0, sizeof(*m));
	m->vfs.ctx = m;
	m->vfs.open = mv_open;
	m->vfs.close = mv_close;
	m->vfs.pread = mv_pread;
	m->vfs.pwrite = mv_pwrite;
	m->vfs.fsync = mv_fsync;
	m->vfs.allocate = mv_allocate;
	m->vfs.truncate = mv_truncate;
	m->vfs.file_size = mv_file_size;
	m->vfs.unlink = mv_unlink;
	m->vfs.rename = mv_rename;
	m->vfs.mkdir = mv_mkdir;
	m->vfs.sync_dir = mv_sync_dir;
	m->vfs.list_dir = mv_list_dir;
}

/* create a file with the given contents */
static void
memvfs_put(memvfs *m, const char *path, const void *data, size_t n)
{
	int			fd = mv_open(&m->vfs, path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		return;
	if (n > 0)
		mv_pwrite(&m->vfs, fd, data, n, 0);
	mv_close(&m->vfs, fd);
}

#endif
