/*
 * faultshim.c -- LD_PRELOAD library that fails file operations on the
 * engine's files (under "/pg_tides/") while a control file says so.
 *
 * A test tool, not a mock: the server and the engine run unchanged, and
 * the failures reach them the way a full disk or a failing device would,
 * as errno values from the C library calls the POSIX vfs makes.
 *
 * Control file: $TIDES_FAULT_CTL (re-read whenever it changes; absent or
 * empty means no faults).  One rule per line:
 *
 *     OP SUBSTRING ERRNO [pid=PID]
 *
 *   OP         write (pwrite, write), sync (fsync, fdatasync), alloc
 *              (posix_fallocate, fallocate), read (pread, read), open
 *              (open of a file that does not exist yet, i.e. a creation)
 *   SUBSTRING  the file's path must contain it (".log", ".sst", "MANIFEST")
 *   ERRNO      ENOSPC, EIO, EDQUOT
 *   pid=PID    only in that process (e.g. the compaction worker)
 *
 * Every failure injected is counted in $TIDES_FAULT_CTL.hits (one line per
 * hit: "pid op path errno"), so a test can tell the fault was reached.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_FD 65536
#define MAX_RULES 16

enum
{
	OP_WRITE = 1, OP_SYNC = 2, OP_ALLOC = 4, OP_READ = 8, OP_OPEN = 16
};

typedef struct rule
{
	int			ops;
	char		pattern[128];
	int			err;
	int			pid;
} rule;

static char *fd_path[MAX_FD];
static rule rules[MAX_RULES];
static int	nrules;
static struct timespec ctl_mtime;
static off_t ctl_size = -1;
static ino_t ctl_ino;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static int	(*real_open) (const char *, int,...);
static int	(*real_open64) (const char *, int,...);
static int	(*real_openat) (int, const char *, int,...);
static int	(*real_close) (int);
static ssize_t (*real_pwrite) (int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64) (int, const void *, size_t, off_t);
static ssize_t (*real_write) (int, const void *, size_t);
static ssize_t (*real_pread) (int, void *, size_t, off_t);
static ssize_t (*real_pread64) (int, void *, size_t, off_t);
static int	(*real_fsync) (int);
static int	(*real_fdatasync) (int);
static int	(*real_posix_fallocate) (int, off_t, off_t);
static int	(*real_posix_fallocate64) (int, off_t, off_t);
static int	(*real_fallocate) (int, int, off_t, off_t);

#define RESOLVE(name) do { if (!real_##name) real_##name = dlsym(RTLD_NEXT, #name); } while (0)

static int
parse_errno(const char *s)
{
	if (strcmp(s, "ENOSPC") == 0)
		return ENOSPC;
	if (strcmp(s, "EIO") == 0)
		return EIO;
	if (strcmp(s, "EDQUOT") == 0)
		return EDQUOT;
	return atoi(s);
}

static void
load_rules(void)
{
	const char *ctl = getenv("TIDES_FAULT_CTL");
	struct stat st;
	FILE	   *f;
	char		line[512];

	if (ctl == NULL)
		return;
	if (stat(ctl, &st) != 0)
	{
		nrules = 0;
		ctl_size = -1;
		return;
	}
	if (st.st_size == ctl_size && st.st_ino == ctl_ino &&
		st.st_mtim.tv_sec == ctl_mtime.tv_sec && st.st_mtim.tv_nsec == ctl_mtime.tv_nsec)
		return;
	ctl_size = st.st_size;
	ctl_ino = st.st_ino;
	ctl_mtime = st.st_mtim;
	nrules = 0;
	f = fopen(ctl, "r");
	if (f == NULL)
		return;
	while (nrules < MAX_RULES && fgets(line, sizeof(line), f))
	{
		char		op[32],
					pat[128],
					err[32],
					extra[64] = "";
		rule	   *r = &rules[nrules];
		int			n = sscanf(line, "%31s %127s %31s %63s", op, pat, err, extra);

		if (n < 3 || op[0] == '#')
			continue;
		memset(r, 0, sizeof(*r));
		if (strcmp(op, "write") == 0)
			r->ops = OP_WRITE;
		else if (strcmp(op, "sync") == 0)
			r->ops = OP_SYNC;
		else if (strcmp(op, "alloc") == 0)
			r->ops = OP_ALLOC;
		else if (strcmp(op, "read") == 0)
			r->ops = OP_READ;
		else if (strcmp(op, "open") == 0)
			r->ops = OP_OPEN;
		else
			continue;
		snprintf(r->pattern, sizeof(r->pattern), "%s", pat);
		r->err = parse_errno(err);
		if (n == 4 && strncmp(extra, "pid=", 4) == 0)
			r->pid = atoi(extra + 4);
		nrules++;
	}
	fclose(f);
}

static void
note_hit(int op, const char *path, int err)
{
	const char *ctl = getenv("TIDES_FAULT_CTL");
	char		hits[1024];
	char		line[1200];
	int			fd,
				n;

	snprintf(hits, sizeof(hits), "%s.hits", ctl);
	RESOLVE(open);
	RESOLVE(write);
	RESOLVE(close);
	fd = real_open(hits, O_WRONLY | O_CREAT | O_APPEND, 0666);
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%d %d %s %d\n", (int) getpid(), op, path, err);
	if (real_write(fd, line, n) < 0)
	{
		/* nothing to do */
	}
	real_close(fd);
}

/* errno to fail with, or 0 */
static int
fault_for(int op, const char *path)
{
	int			err = 0;

	if (path == NULL || getenv("TIDES_FAULT_CTL") == NULL)
		return 0;
	pthread_mutex_lock(&mu);
	load_rules();
	for (int i = 0; i < nrules; i++)
		if ((rules[i].ops & op) && strstr(path, rules[i].pattern) &&
			(rules[i].pid == 0 || rules[i].pid == (int) getpid()))
		{
			err = rules[i].err;
			break;
		}
	pthread_mutex_unlock(&mu);
	if (err)
		note_hit(op, path, err);
	return err;
}

static const char *
tracked(int fd)
{
	return fd >= 0 && fd < MAX_FD ? fd_path[fd] : NULL;
}

static void
track(int fd, const char *path)
{
	if (fd < 0 || fd >= MAX_FD)
		return;
	free(fd_path[fd]);
	fd_path[fd] = NULL;
	if (path && strstr(path, "/pg_tides/"))
		fd_path[fd] = strdup(path);
}

static int
open_common(int (*fn) (const char *, int,...), const char *path, int flags, mode_t mode)
{
	int			fd;

	if ((flags & O_CREAT) && path && strstr(path, "/pg_tides/") && access(path, F_OK) != 0)
	{
		int			e = fault_for(OP_OPEN, path);

		if (e)
		{
			errno = e;
			return -1;
		}
	}
	fd = fn(path, flags, mode);
	if (fd >= 0)
		track(fd, path);
	return fd;
}

int
open(const char *path, int flags,...)
{
	mode_t		mode = 0;

	RESOLVE(open);
	if (flags & (O_CREAT | O_TMPFILE))
	{
		va_list		ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return open_common(real_open, path, flags, mode);
}

int
open64(const char *path, int flags,...)
{
	mode_t		mode = 0;

	RESOLVE(open64);
	if (flags & (O_CREAT | O_TMPFILE))
	{
		va_list		ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return open_common(real_open64, path, flags, mode);
}

int
openat(int dirfd, const char *path, int flags,...)
{
	mode_t		mode = 0;
	int			fd;

	RESOLVE(openat);
	if (flags & (O_CREAT | O_TMPFILE))
	{
		va_list		ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	fd = real_openat(dirfd, path, flags, mode);
	if (fd >= 0 && path && path[0] == '/')
		track(fd, path);
	return fd;
}

int
close(int fd)
{
	RESOLVE(close);
	if (fd >= 0 && fd < MAX_FD && fd_path[fd])
	{
		free(fd_path[fd]);
		fd_path[fd] = NULL;
	}
	return real_close(fd);
}

#define FAIL_IF(op, fd) do { \
	const char *p_ = tracked(fd); \
	int e_ = p_ ? fault_for(op, p_) : 0; \
	if (e_) { errno = e_; return -1; } \
} while (0)

ssize_t
pwrite(int fd, const void *buf, size_t n, off_t off)
{
	RESOLVE(pwrite);
	FAIL_IF(OP_WRITE, fd);
	return real_pwrite(fd, buf, n, off);
}

ssize_t
pwrite64(int fd, const void *buf, size_t n, off_t off)
{
	RESOLVE(pwrite64);
	FAIL_IF(OP_WRITE, fd);
	return real_pwrite64(fd, buf, n, off);
}

ssize_t
write(int fd, const void *buf, size_t n)
{
	RESOLVE(write);
	FAIL_IF(OP_WRITE, fd);
	return real_write(fd, buf, n);
}

ssize_t
pread(int fd, void *buf, size_t n, off_t off)
{
	RESOLVE(pread);
	FAIL_IF(OP_READ, fd);
	return real_pread(fd, buf, n, off);
}

ssize_t
pread64(int fd, void *buf, size_t n, off_t off)
{
	RESOLVE(pread64);
	FAIL_IF(OP_READ, fd);
	return real_pread64(fd, buf, n, off);
}

int
fsync(int fd)
{
	RESOLVE(fsync);
	FAIL_IF(OP_SYNC, fd);
	return real_fsync(fd);
}

int
fdatasync(int fd)
{
	RESOLVE(fdatasync);
	FAIL_IF(OP_SYNC, fd);
	return real_fdatasync(fd);
}

int
posix_fallocate(int fd, off_t off, off_t len)
{
	const char *p;
	int			e;

	RESOLVE(posix_fallocate);
	p = tracked(fd);
	e = p ? fault_for(OP_ALLOC, p) : 0;
	if (e)
		return e;				/* posix_fallocate returns the error */
	return real_posix_fallocate(fd, off, len);
}

int
posix_fallocate64(int fd, off_t off, off_t len)
{
	const char *p;
	int			e;

	RESOLVE(posix_fallocate64);
	p = tracked(fd);
	e = p ? fault_for(OP_ALLOC, p) : 0;
	if (e)
		return e;
	return real_posix_fallocate64(fd, off, len);
}

int
fallocate(int fd, int mode, off_t off, off_t len)
{
	RESOLVE(fallocate);
	FAIL_IF(OP_ALLOC, fd);
	return real_fallocate(fd, mode, off, len);
}
