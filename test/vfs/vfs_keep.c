/*
 * vfs_keep.c -- the keep-unsynced test vfs of vfs_keep.h.
 *
 * Shared layout: a header (mutex, ring positions, counters, a small table of
 * files that have pending writes) followed by a ring of entries.  An entry
 * is a header {file, state, offset, length} and the written bytes, padded to
 * 8 bytes; it never wraps (a SKIP entry, or fewer than a header's bytes
 * left, fills the end of the ring).  head and tail are byte counts that only
 * grow; the ring position is the count modulo the capacity.
 *
 * The base vfs must hand out real descriptors (tides_vfs_posix): entries
 * are written back with the caller's descriptor at fsync, and otherwise by
 * opening the file's current name (kept up to date across renames) and
 * checking its inode.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "vfs_keep.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/lock.h"

#define KEEP_MAGIC	0x4b454550u
#define KEEP_FILES	64
#define KEEP_PATH	512
#define KEEP_SUFFIX	".log"

enum
{
	E_PENDING = 1, E_DONE = 2, E_SKIP = 3
};

typedef struct keep_file
{
	uint32_t	used;
	uint32_t	pad;
	uint64_t	dev;
	uint64_t	ino;
	uint64_t	pending;		/* pending entries */
	char		path[KEEP_PATH];	/* current name */
} keep_file;

typedef struct keep_entry
{
	uint32_t	magic;
	uint16_t	file;
	uint8_t		state;
	uint8_t		pad;
	uint32_t	len;			/* data bytes */
	uint32_t	size;			/* whole entry, 8-aligned */
	uint64_t	off;			/* file offset */
} keep_entry;

#define HDR ((uint64_t) sizeof(keep_entry))

typedef struct keep_shared
{
	uint32_t	magic;
	uint32_t	pad;
	uint64_t	capacity;
	tides_mutex mu;
	uint64_t	head;
	uint64_t	tail;
	uint64_t	kept_writes;
	uint64_t	kept_bytes;
	uint64_t	synced_bytes;
	uint64_t	early_bytes;
	uint64_t	dropped_bytes;
	uint64_t	pending_bytes;
	keep_file	files[KEEP_FILES];
	uint64_t	data[];
} keep_shared;

typedef struct fd_info
{
	bool		tracked;
	bool		fresh;			/* created by us, not yet fsynced: write through */
	uint64_t	dev;
	uint64_t	ino;
	char	   *path;
} fd_info;

typedef struct keep_proc
{
	tides_vfs	vfs;
	tides_vfs  *base;
	keep_shared *k;
	fd_info    *fds;
	int			nfds;
} keep_proc;

static keep_proc proc;

static uint64_t
align8(uint64_t n)
{
	return (n + 7) & ~(uint64_t) 7;
}

static bool
is_log_path(const char *path)
{
	size_t		n = strlen(path),
				s = strlen(KEEP_SUFFIX);

	return n >= s && strcmp(path + n - s, KEEP_SUFFIX) == 0;
}

/* ---- ring walking */

/* the entry at pos (NULL for an implicit pad), and its size */
static keep_entry *
entry_at(keep_shared *k, uint64_t pos, uint64_t *size)
{
	uint64_t	p = pos % k->capacity;

	if (k->capacity - p < HDR)
	{
		*size = k->capacity - p;
		return NULL;
	}
	{
		keep_entry *e = (keep_entry *) ((uint8_t *) k->data + p);

		*size = e->size;
		return e;
	}
}

static uint8_t *
entry_data(keep_entry *e)
{
	return (uint8_t *) e + HDR;
}

static void
trim(keep_shared *k)
{
	while (k->tail < k->head)
	{
		uint64_t	sz;
		keep_entry *e = entry_at(k, k->tail, &sz);

		if (e != NULL && e->state == E_PENDING)
			break;
		k->tail += sz;
	}
	if (k->tail == k->head)
		k->tail = k->head = 0;
}

static int
find_file(keep_shared *k, uint64_t dev, uint64_t ino)
{
	for (int i = 0; i < KEEP_FILES; i++)
		if (k->files[i].used && k->files[i].dev == dev && k->files[i].ino == ino)
			return i;
	return -1;
}

static void
entry_finished(keep_shared *k, keep_entry *e, uint64_t *counter)
{
	keep_file  *f = &k->files[e->file];

	e->state = E_DONE;
	*counter += e->len;
	k->pending_bytes -= e->len;
	if (--f->pending == 0)
		f->used = 0;
}

/* drop (without writing) every pending entry of file i */
static void
drop_file(keep_shared *k, int i)
{
	for (uint64_t pos = k->tail, sz; pos < k->head; pos += sz)
	{
		keep_entry *e = entry_at(k, pos, &sz);

		if (e != NULL && e->state == E_PENDING && e->file == i)
			entry_finished(k, e, &k->dropped_bytes);
	}
	k->files[i].used = 0;
	trim(k);
}

/* open file i by its current name, checking it is still the same inode */
static int
open_file(keep_shared *k, int i)
{
	struct stat st;
	int			fd = open(k->files[i].path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || (uint64_t) st.st_dev != k->files[i].dev ||
		(uint64_t) st.st_ino != k->files[i].ino)
	{
		close(fd);
		return -ENOENT;
	}
	return fd;
}

static int64_t
write_entry(int fd, keep_entry *e)
{
	size_t		done = 0;

	while (done < e->len)
	{
		ssize_t		r = pwrite(fd, entry_data(e) + done, e->len - done, (off_t) (e->off + done));

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

/*
 * Write every pending entry of file i, in order, through fd (or a
 * descriptor opened by name when fd < 0).
 */
static int
apply_file(keep_shared *k, int i, int fd, uint64_t *counter)
{
	int			own = -1;

	if (!k->files[i].used)
		return 0;
	if (fd < 0)
	{
		own = open_file(k, i);
		if (own == -ENOENT)
		{
			drop_file(k, i);	/* gone behind our back: nothing to write to */
			return 0;
		}
		if (own < 0)
			return own;
		fd = own;
	}
	for (uint64_t pos = k->tail, sz; pos < k->head && k->files[i].used; pos += sz)
	{
		keep_entry *e = entry_at(k, pos, &sz);
		int64_t		w;

		if (e == NULL || e->state != E_PENDING || e->file != i)
			continue;
		w = write_entry(fd, e);
		if (w < 0)
		{
			if (own >= 0)
				close(own);
			return (int) w;
		}
		entry_finished(k, e, counter);
	}
	if (own >= 0)
		close(own);
	trim(k);
	return 0;
}

/* make room for an entry of `need` bytes at head (writing the oldest entries) */
static int
make_room(keep_shared *k, uint64_t need)
{
	uint64_t	cap = k->capacity;
	int			cached_file = -1,
				cached_fd = -1;
	int			r = 0;

	for (;;)
	{
		uint64_t	end_room = cap - k->head % cap;
		uint64_t	want = end_room < need ? end_room + need : need;
		uint64_t	sz;
		keep_entry *e;

		if (cap - (k->head - k->tail) >= want)
			break;
		e = entry_at(k, k->tail, &sz);
		if (e != NULL && e->state == E_PENDING)
		{
			int64_t		w;

			if (e->file != cached_file)
			{
				if (cached_fd >= 0)
					close(cached_fd);
				cached_file = e->file;
				cached_fd = open_file(k, e->file);
			}
			if (cached_fd == -ENOENT)
				entry_finished(k, e, &k->dropped_bytes);
			else if (cached_fd < 0)
			{
				r = cached_fd;
				cached_fd = -1;
				break;
			}
			else if ((w = write_entry(cached_fd, e)) < 0)
			{
				r = (int) w;
				break;
			}
			else
				entry_finished(k, e, &k->early_bytes);
		}
		k->tail += sz;
		if (k->tail == k->head)
			k->tail = k->head = 0;
	}
	if (cached_fd >= 0)
		close(cached_fd);
	if (r == 0)
	{
		uint64_t	end_room = cap - k->head % cap;

		if (end_room < need)
		{
			if (end_room >= HDR)
			{
				keep_entry *e = (keep_entry *) ((uint8_t *) k->data + k->head % cap);

				memset(e, 0, HDR);
				e->magic = KEEP_MAGIC;
				e->state = E_SKIP;
				e->size = (uint32_t) end_room;
			}
			k->head += end_room;
		}
	}
	return r;
}

/* the slot of (dev, ino), created if needed; negative errno on failure */
static int
file_slot(keep_shared *k, const fd_info *fi)
{
	int			i = find_file(k, fi->dev, fi->ino);

	if (i >= 0)
		return i;
	for (;;)
	{
		for (i = 0; i < KEEP_FILES; i++)
			if (!k->files[i].used)
			{
				keep_file  *f = &k->files[i];

				f->used = 1;
				f->dev = fi->dev;
				f->ino = fi->ino;
				f->pending = 0;
				strncpy(f->path, fi->path, KEEP_PATH - 1);
				f->path[KEEP_PATH - 1] = '\0';
				return i;
			}
		/* every slot busy: write back the file of the oldest pending entry */
		for (uint64_t pos = k->tail, sz; pos < k->head; pos += sz)
		{
			keep_entry *e = entry_at(k, pos, &sz);

			if (e != NULL && e->state == E_PENDING)
			{
				int			r = apply_file(k, e->file, -1, &k->early_bytes);

				if (r < 0)
					return r;
				break;
			}
		}
	}
}

/* ---- per-process descriptor table */

static fd_info *
fd_get(int fd)
{
	if (fd < 0 || fd >= proc.nfds || !proc.fds[fd].tracked)
		return NULL;
	return &proc.fds[fd];
}

static int
fd_set_tracked(int fd, const char *path, bool fresh)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return -errno;
	if (fd >= proc.nfds)
	{
		int			n = proc.nfds ? proc.nfds : 64;
		fd_info    *nf;

		while (n <= fd)
			n *= 2;
		nf = realloc(proc.fds, (size_t) n * sizeof(fd_info));
		if (nf == NULL)
			return -ENOMEM;
		memset(nf + proc.nfds, 0, (size_t) (n - proc.nfds) * sizeof(fd_info));
		proc.fds = nf;
		proc.nfds = n;
	}
	free(proc.fds[fd].path);
	proc.fds[fd].path = strdup(path);
	if (proc.fds[fd].path == NULL)
		return -ENOMEM;
	proc.fds[fd].tracked = true;
	proc.fds[fd].fresh = fresh;
	proc.fds[fd].dev = (uint64_t) st.st_dev;
	proc.fds[fd].ino = (uint64_t) st.st_ino;
	return 0;
}

static void
fd_forget(int fd)
{
	if (fd >= 0 && fd < proc.nfds)
	{
		free(proc.fds[fd].path);
		memset(&proc.fds[fd], 0, sizeof(fd_info));
	}
}

/* ---- the vfs */

static int
kp_open(tides_vfs *v, const char *path, int flags, int mode)
{
	bool		tracked = is_log_path(path);
	bool		fresh = false;
	int			fd;
	int			r;

	if (tracked && (flags & O_CREAT))
	{
		struct stat st;

		fresh = stat(path, &st) != 0 && errno == ENOENT;
	}
	fd = proc.base->open(proc.base, path, flags, mode);
	fd_forget(fd);
	if (fd < 0 || !tracked)
		return fd;
	r = fd_set_tracked(fd, path, fresh);
	if (r != 0)
	{
		proc.base->close(proc.base, fd);
		return r;
	}
	if (flags & O_TRUNC)
	{
		int			i;

		tides_mutex_lock(&proc.k->mu);
		i = find_file(proc.k, proc.fds[fd].dev, proc.fds[fd].ino);
		if (i >= 0)
			drop_file(proc.k, i);
		tides_mutex_unlock(&proc.k->mu);
	}
	return fd;
}

static int
kp_close(tides_vfs *v, int fd)
{
	fd_forget(fd);
	return proc.base->close(proc.base, fd);
}

static int64_t
kp_pread(tides_vfs *v, int fd, void *buf, size_t n, uint64_t off)
{
	fd_info    *fi = fd_get(fd);
	keep_shared *k = proc.k;
	int64_t		r;
	int			i;

	if (fi == NULL || n == 0)
		return proc.base->pread(proc.base, fd, buf, n, off);

	/*
	 * Read the file under the mutex too: a pending entry applied (written,
	 * then marked done) between an unlocked read and the overlay below would
	 * be in neither, and the reader would see the bytes it replaced.
	 */
	tides_mutex_lock(&k->mu);
	r = proc.base->pread(proc.base, fd, buf, n, off);
	i = r < 0 ? -1 : find_file(k, fi->dev, fi->ino);
	if (i >= 0)
	{
		for (uint64_t pos = k->tail, sz; pos < k->head; pos += sz)
		{
			keep_entry *e = entry_at(k, pos, &sz);
			uint64_t	lo,
						hi;

			if (e == NULL || e->state != E_PENDING || e->file != i)
				continue;
			lo = e->off > off ? e->off : off;
			hi = e->off + e->len < off + n ? e->off + e->len : off + n;
			if (lo >= hi)
				continue;
			if ((uint64_t) r < lo - off)
				memset((uint8_t *) buf + r, 0, lo - off - (uint64_t) r);	/* a hole */
			memcpy((uint8_t *) buf + (lo - off), entry_data(e) + (lo - e->off), hi - lo);
			if ((uint64_t) r < hi - off)
				r = (int64_t) (hi - off);
		}
	}
	tides_mutex_unlock(&k->mu);
	return r;
}

static int64_t
kp_pwrite(tides_vfs *v, int fd, const void *buf, size_t n, uint64_t off)
{
	fd_info    *fi = fd_get(fd);
	keep_shared *k = proc.k;
	uint64_t	size = align8(HDR + n);
	keep_entry *e;
	int			i = -1;
	int			r;

	if (fi == NULL || fi->fresh || n == 0)
		return proc.base->pwrite(proc.base, fd, buf, n, off);
	tides_mutex_lock(&k->mu);
	if (size > k->capacity / 4 || n > UINT32_MAX / 2)
	{
		/* too big to keep: write it (after this file's pending writes) */
		int64_t		w;

		i = find_file(k, fi->dev, fi->ino);
		r = i >= 0 ? apply_file(k, i, fd, &k->early_bytes) : 0;
		w = r < 0 ? r : proc.base->pwrite(proc.base, fd, buf, n, off);
		if (w > 0)
			k->early_bytes += (uint64_t) w;
		tides_mutex_unlock(&k->mu);
		return w;
	}
	r = make_room(k, size);
	if (r == 0)
	{
		i = file_slot(k, fi);
		r = i < 0 ? i : 0;
	}
	if (r < 0)
	{
		tides_mutex_unlock(&k->mu);
		return r;
	}
	e = (keep_entry *) ((uint8_t *) k->data + k->head % k->capacity);
	e->magic = KEEP_MAGIC;
	e->file = (uint16_t) i;
	e->state = E_PENDING;
	e->pad = 0;
	e->len = (uint32_t) n;
	e->size = (uint32_t) size;
	e->off = off;
	memcpy(entry_data(e), buf, n);
	k->head += size;			/* published */
	k->files[i].pending++;
	k->kept_writes++;
	k->kept_bytes += n;
	k->pending_bytes += n;
	tides_mutex_unlock(&k->mu);
	return (int64_t) n;
}

static int
kp_fsync(tides_vfs *v, int fd)
{
	fd_info    *fi = fd_get(fd);

	if (fi != NULL)
	{
		keep_shared *k = proc.k;
		int			i;
		int			r = 0;

		tides_mutex_lock(&k->mu);
		i = find_file(k, fi->dev, fi->ino);
		if (i >= 0)
			r = apply_file(k, i, fd, &k->synced_bytes);
		tides_mutex_unlock(&k->mu);
		if (r < 0)
			return r;
		fi->fresh = false;
	}
	return proc.base->fsync(proc.base, fd);
}

static int
kp_allocate(tides_vfs *v, int fd, uint64_t off, uint64_t len)
{
	/* allocation does not change contents: pending writes stay pending */
	return proc.base->allocate(proc.base, fd, off, len);
}

static int
kp_truncate(tides_vfs *v, int fd, uint64_t len)
{
	fd_info    *fi = fd_get(fd);

	if (fi != NULL)
	{
		keep_shared *k = proc.k;
		int			i;
		int			r = 0;

		tides_mutex_lock(&k->mu);
		i = find_file(k, fi->dev, fi->ino);
		if (i >= 0)
			r = len == 0 ? (drop_file(k, i), 0) : apply_file(k, i, fd, &k->early_bytes);
		tides_mutex_unlock(&k->mu);
		if (r < 0)
			return r;
	}
	return proc.base->truncate(proc.base, fd, len);
}

static int64_t
kp_file_size(tides_vfs *v, int fd)
{
	fd_info    *fi = fd_get(fd);
	keep_shared *k = proc.k;
	int64_t		s;
	int			i;

	if (fi == NULL)
		return proc.base->file_size(proc.base, fd);
	tides_mutex_lock(&k->mu);	/* as in kp_pread: no entry applied unseen */
	s = proc.base->file_size(proc.base, fd);
	i = s < 0 ? -1 : find_file(k, fi->dev, fi->ino);
	if (i >= 0)
		for (uint64_t pos = k->tail, sz; pos < k->head; pos += sz)
		{
			keep_entry *e = entry_at(k, pos, &sz);

			if (e != NULL && e->state == E_PENDING && e->file == i &&
				(int64_t) (e->off + e->len) > s)
				s = (int64_t) (e->off + e->len);
		}
	tides_mutex_unlock(&k->mu);
	return s;
}

static int
kp_unlink(tides_vfs *v, const char *path)
{
	struct stat st;
	keep_shared *k = proc.k;

	if (stat(path, &st) == 0)
	{
		int			i;

		tides_mutex_lock(&k->mu);
		i = find_file(k, (uint64_t) st.st_dev, (uint64_t) st.st_ino);
		if (i >= 0)
			drop_file(k, i);
		tides_mutex_unlock(&k->mu);
	}
	return proc.base->unlink(proc.base, path);
}

static int
kp_rename(tides_vfs *v, const char *from, const char *to)
{
	struct stat sf,
				st;
	bool		have_from = stat(from, &sf) == 0;
	bool		have_to = stat(to, &st) == 0;
	keep_shared *k = proc.k;
	int			r;

	/* under the lock: write-back opens files by name */
	tides_mutex_lock(&k->mu);
	if (have_to && !(have_from && sf.st_ino == st.st_ino && sf.st_dev == st.st_dev))
	{
		int			i = find_file(k, (uint64_t) st.st_dev, (uint64_t) st.st_ino);

		if (i >= 0)
			drop_file(k, i);	/* the replaced file is gone */
	}
	r = proc.base->rename(proc.base, from, to);
	if (r == 0 && have_from)
	{
		int			i = find_file(k, (uint64_t) sf.st_dev, (uint64_t) sf.st_ino);

		if (i >= 0)
		{
			strncpy(k->files[i].path, to, KEEP_PATH - 1);
			k->files[i].path[KEEP_PATH - 1] = '\0';
		}
	}
	tides_mutex_unlock(&k->mu);
	return r;
}

static int
kp_mkdir(tides_vfs *v, const char *path)
{
	return proc.base->mkdir(proc.base, path);
}

static int
kp_sync_dir(tides_vfs *v, const char *path)
{
	return proc.base->sync_dir(proc.base, path);
}

static int
kp_list_dir(tides_vfs *v, const char *path, void (*fn) (const char *, void *), void *arg)
{
	return proc.base->list_dir(proc.base, path, fn, arg);
}

/* ---- public */

size_t
tides_vfs_keep_shared_size(size_t data_bytes)
{
	return sizeof(keep_shared) + align8(data_bytes);
}

int
tides_vfs_keep_init(void *mem, size_t size)
{
	keep_shared *k = mem;

	if (size < sizeof(keep_shared) + 64 * 1024)
		return -EINVAL;
	memset(k, 0, sizeof(keep_shared));
	k->magic = KEEP_MAGIC;
	k->capacity = (size - sizeof(keep_shared)) & ~(uint64_t) 7;
	tides_mutex_init(&k->mu);
	return 0;
}

tides_vfs *
tides_vfs_keep_attach(void *mem, tides_vfs *base)
{
	proc.k = mem;
	proc.base = base ? base : tides_vfs_posix();
	if (proc.vfs.open == NULL)
	{
		proc.vfs.ctx = &proc;
		proc.vfs.open = kp_open;
		proc.vfs.close = kp_close;
		proc.vfs.pread = kp_pread;
		proc.vfs.pwrite = kp_pwrite;
		proc.vfs.fsync = kp_fsync;
		proc.vfs.allocate = kp_allocate;
		proc.vfs.truncate = kp_truncate;
		proc.vfs.file_size = kp_file_size;
		proc.vfs.unlink = kp_unlink;
		proc.vfs.rename = kp_rename;
		proc.vfs.mkdir = kp_mkdir;
		proc.vfs.sync_dir = kp_sync_dir;
		proc.vfs.list_dir = kp_list_dir;
	}
	return &proc.vfs;
}

int64_t
tides_vfs_keep_apply_all(void *mem)
{
	keep_shared *k = mem;
	int			fds[KEEP_FILES];
	int64_t		total = 0;
	int			err = 0;

	if (k == NULL || k->magic != KEEP_MAGIC)
		return -EINVAL;
	for (int i = 0; i < KEEP_FILES; i++)
		fds[i] = -2;			/* not opened yet */
	for (uint64_t pos = k->tail, sz; pos < k->head; pos += sz)
	{
		keep_entry *e = entry_at(k, pos, &sz);
		int64_t		w;

		if (sz == 0)
			break;				/* never published: cannot happen, but do not loop */
		if (e == NULL || e->state != E_PENDING || e->file >= KEEP_FILES)
			continue;
		if (fds[e->file] == -2)
			fds[e->file] = open_file(k, e->file);
		if (fds[e->file] < 0)
			continue;
		w = write_entry(fds[e->file], e);
		if (w < 0)
		{
			err = (int) w;
			continue;
		}
		total += w;
		entry_finished(k, e, &k->early_bytes);
	}
	for (int i = 0; i < KEEP_FILES; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	trim(k);
	return err ? err : total;
}

void
tides_vfs_keep_stats(void *mem, tides_keep_stats *st)
{
	keep_shared *k = mem;

	memset(st, 0, sizeof(*st));
	if (k == NULL)
		return;
	tides_mutex_lock(&k->mu);
	st->kept_writes = k->kept_writes;
	st->kept_bytes = k->kept_bytes;
	st->synced_bytes = k->synced_bytes;
	st->early_bytes = k->early_bytes;
	st->dropped_bytes = k->dropped_bytes;
	st->pending_bytes = k->pending_bytes;
	for (int i = 0; i < KEEP_FILES; i++)
		if (k->files[i].used)
			st->pending_files++;
	tides_mutex_unlock(&k->mu);
}
