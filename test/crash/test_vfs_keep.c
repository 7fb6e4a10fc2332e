/*
 * test_vfs_keep.c -- unit test of the keep-unsynced vfs (test/vfs/vfs_keep.c).
 *
 * Checks, on real files in a temporary directory:
 *   - a write to a .log file is invisible in the file until fsync, visible
 *     through the vfs at once (also from another process);
 *   - fsync by another process (its own descriptor) writes it back;
 *   - non-log files and freshly created log files (until their first fsync)
 *     are written through;
 *   - rename keeps pending writes with the file; unlink drops them;
 *   - a full buffer writes back the oldest writes ("synced early");
 *   - apply_all writes back everything (the postmaster's exit path);
 *   - a read racing with another process's write-back never sees the bytes
 *     a pending write replaced.
 * Prints "vfs_keep: P passed, F failed".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vfs_keep.h"

static int	passed,
			failed;

#define CHECK(cond, what) do { \
	if (cond) passed++; \
	else { failed++; fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, what); } \
} while (0)

static char dir[256];

static void
path_of(char *buf, const char *name)
{
	snprintf(buf, 512, "%s/%s", dir, name);
}

/* bytes of the real file at off (raw read, bypassing the vfs) */
static int
raw_byte(const char *name, off_t off)
{
	char		p[512];
	unsigned char c;
	int			fd;
	ssize_t		r;

	path_of(p, name);
	fd = open(p, O_RDONLY);
	if (fd < 0)
		return -1;
	r = pread(fd, &c, 1, off);
	close(fd);
	return r == 1 ? c : -1;
}

static void
make_file(const char *name, size_t size)
{
	char		p[512];
	int			fd;

	path_of(p, name);
	fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t) size) != 0)
	{
		perror(p);
		exit(2);
	}
	close(fd);
}

int
main(void)
{
	size_t		cap = 256 * 1024;
	size_t		sz = tides_vfs_keep_shared_size(cap);
	void	   *mem = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	tides_vfs  *v;
	char		p[512],
				q[512];
	char		buf[4096];
	int			fd;
	tides_keep_stats st;

	snprintf(dir, sizeof(dir), "/tmp/vfs_keep_test.%d", (int) getpid());
	if (mkdir(dir, 0700) != 0 || mem == MAP_FAILED)
	{
		perror("setup");
		return 2;
	}
	CHECK(tides_vfs_keep_init(mem, sz) == 0, "init");
	v = tides_vfs_keep_attach(mem, NULL);

	/* 1. pending write: invisible in the file, visible through the vfs */
	make_file("000001.log", 65536);
	path_of(p, "000001.log");
	fd = v->open(v, p, O_RDWR, 0600);
	CHECK(fd >= 0, "open log");
	memset(buf, 'A', 100);
	CHECK(v->pwrite(v, fd, buf, 100, 1000) == 100, "pwrite");
	CHECK(raw_byte("000001.log", 1000) == 0, "file untouched before fsync");
	memset(buf, 0, sizeof(buf));
	CHECK(v->pread(v, fd, buf, 200, 950) == 200 && buf[49] == 0 && buf[50] == 'A' && buf[149] == 'A' && buf[150] == 0,
		  "read sees pending bytes");

	/* 2. another process reads it, and fsyncs it with its own descriptor */
	if (fork() == 0)
	{
		tides_vfs  *cv = tides_vfs_keep_attach(mem, NULL);
		int			cfd = cv->open(cv, p, O_RDWR, 0600);
		char		cb[16];

		if (cfd < 0 || cv->pread(cv, cfd, cb, 1, 1050) != 1 || cb[0] != 'A')
			_exit(3);
		memset(cb, 'B', sizeof(cb));
		if (cv->pwrite(cv, cfd, cb, 16, 2000) != 16)
			_exit(4);
		if (cv->fsync(cv, cfd) != 0)
			_exit(5);
		cv->close(cv, cfd);
		_exit(0);
	}
	{
		int			status;

		wait(&status);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child read, wrote and fsynced");
	}
	CHECK(raw_byte("000001.log", 1000) == 'A' && raw_byte("000001.log", 2015) == 'B',
		  "fsync by another process wrote back both writes");
	tides_vfs_keep_stats(mem, &st);
	CHECK(st.pending_bytes == 0 && st.synced_bytes == 116, "counters after fsync");

	/* 3. non-log files and fresh log files pass through */
	path_of(q, "000002.sst");
	fd = v->open(v, q, O_RDWR | O_CREAT, 0600);
	CHECK(v->pwrite(v, fd, "x", 1, 0) == 1 && raw_byte("000002.sst", 0) == 'x', "sst written through");
	v->close(v, fd);
	path_of(q, "000009.log");
	fd = v->open(v, q, O_RDWR | O_CREAT, 0600);
	CHECK(v->pwrite(v, fd, "z", 1, 0) == 1 && raw_byte("000009.log", 0) == 'z', "fresh log written through");
	CHECK(v->fsync(v, fd) == 0, "fsync fresh");
	CHECK(v->pwrite(v, fd, "y", 1, 1) == 1 && raw_byte("000009.log", 1) != 'y', "after its fsync it is kept");
	v->close(v, fd);

	/* 4. rename keeps pending writes with the file; apply_all writes them */
	path_of(p, "000009.log");
	path_of(q, "000010.log");
	CHECK(v->rename(v, p, q) == 0, "rename");
	CHECK(raw_byte("000010.log", 1) != 'y', "still pending after rename");
	CHECK(tides_vfs_keep_apply_all(mem) == 1 && raw_byte("000010.log", 1) == 'y', "apply_all writes it under the new name");

	/* 5. unlink drops pending writes */
	make_file("000011.log", 4096);
	path_of(p, "000011.log");
	fd = v->open(v, p, O_RDWR, 0600);
	CHECK(v->pwrite(v, fd, buf, 10, 0) == 10, "write before unlink");
	v->close(v, fd);
	CHECK(v->unlink(v, p) == 0, "unlink");
	tides_vfs_keep_stats(mem, &st);
	CHECK(st.pending_bytes == 0 && st.dropped_bytes == 10, "unlink dropped pending bytes");

	/* 6. a full buffer writes back the oldest writes first */
	make_file("000012.log", 1 << 20);
	path_of(p, "000012.log");
	fd = v->open(v, p, O_RDWR, 0600);
	for (int i = 0; i < 256; i++)
	{
		memset(buf, 1 + i % 200, 4000);
		if (v->pwrite(v, fd, buf, 4000, (uint64_t) i * 4000) != 4000)
			break;
	}
	CHECK(raw_byte("000012.log", 0) == 1, "oldest write went to the file early");
	CHECK(raw_byte("000012.log", 255 * 4000) == 0, "newest write still pending");
	CHECK(v->pread(v, fd, buf, 4000, 255 * 4000) == 4000 && (unsigned char) buf[0] == 1 + 255 % 200,
		  "newest readable through the vfs");
	tides_vfs_keep_stats(mem, &st);
	CHECK(st.early_bytes > 0 && st.pending_bytes > 0 && st.pending_bytes <= cap, "early write-back counted");
	CHECK(v->fsync(v, fd) == 0 && raw_byte("000012.log", 255 * 4000) == 1 + 255 % 200, "fsync wrote the rest");
	v->close(v, fd);

	/*
	 * 7. a read racing with another process's write-back sees the newest
	 * bytes: the child writes round r, says so, then fsyncs it; a read begun
	 * after the child said r must return round r or later, never the file's
	 * older bytes of an entry applied between the read and its overlay.
	 */
	make_file("000014.log", 4096);
	path_of(p, "000014.log");
	{
		_Atomic int *said = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		int			stale = 0,
					reads = 0,
					status;
		pid_t		pid;

		*said = 0;
		pid = fork();
		if (pid == 0)
		{
			tides_vfs  *cv = tides_vfs_keep_attach(mem, NULL);
			int			cfd = cv->open(cv, p, O_RDWR, 0600);

			for (int r = 1; r <= 5000 && cfd >= 0; r++)
			{
				if (cv->pwrite(cv, cfd, &r, sizeof(r), 512) != sizeof(r))
					_exit(3);
				atomic_store(said, r);
				if (cv->fsync(cv, cfd) != 0)
					_exit(4);
			}
			_exit(cfd >= 0 ? 0 : 5);
		}
		fd = v->open(v, p, O_RDWR, 0600);
		while (fd >= 0 && atomic_load(said) < 5000)
		{
			int			before = atomic_load(said),
						got = 0;

			if (v->pread(v, fd, &got, sizeof(got), 512) != sizeof(got) || got < before)
				stale++;
			reads++;
		}
		v->close(v, fd);
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child wrote and fsynced 5000 rounds");
		CHECK(reads > 0 && stale == 0, "no read during write-back saw older bytes");
		if (stale)
			fprintf(stderr, "  %d of %d reads were stale\n", stale, reads);
	}

	/* 8. a kill of every process loses what was pending (simulated: drop the buffer) */
	make_file("000013.log", 4096);
	path_of(p, "000013.log");
	fd = v->open(v, p, O_RDWR, 0600);
	CHECK(v->pwrite(v, fd, "lost", 4, 0) == 4, "write to be lost");
	v->close(v, fd);
	CHECK(tides_vfs_keep_init(mem, sz) == 0 && raw_byte("000013.log", 0) == 0, "unsynced write lost");

	{
		char		cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
	printf("vfs_keep: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
