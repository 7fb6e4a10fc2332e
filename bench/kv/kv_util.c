/*
 * kv_util.c -- small helpers shared by the driver and the adapters.
 */
#define _GNU_SOURCE
#include "kv_adapter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static __thread uint64_t walk_size;
static __thread uint64_t walk_alloc;
static __thread uint64_t walk_sst;

static int
size_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void) path;
	(void) ftw;
	if (type == FTW_F)
	{
		walk_size += (uint64_t) st->st_size;
		walk_alloc += (uint64_t) st->st_blocks * 512;

		size_t		len = strlen(path);

		if (len > 4 && strcmp(path + len - 4, ".sst") == 0)
			walk_sst += (uint64_t) st->st_size;
	}
	return 0;
}

/*
 * apparent size (sum of st_size) of every regular file below dir; both
 * engines name their table files *.sst
 */
uint64_t
kv_dir_size(const char *dir, uint64_t *allocated, uint64_t *table_bytes)
{
	walk_size = walk_alloc = walk_sst = 0;
	nftw(dir, size_cb, 32, FTW_PHYS);
	if (allocated)
		*allocated = walk_alloc;
	if (table_bytes)
		*table_bytes = walk_sst;
	return walk_size;
}

static int
rm_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void) st;
	(void) ftw;
	if (type == FTW_DP)
		return rmdir(path) == 0 || errno == ENOENT ? 0 : -1;
	return unlink(path) == 0 || errno == ENOENT ? 0 : -1;
}

int
kv_rmtree(const char *dir)
{
	struct stat st;

	if (lstat(dir, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	return nftw(dir, rm_cb, 32, FTW_DEPTH | FTW_PHYS);
}

uint64_t
kv_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

void
kv_sleep_us(unsigned us)
{
	struct timespec ts = {us / 1000000, (long) (us % 1000000) * 1000};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

uint64_t
kv_idle_timeout_s(void)
{
	const char *s = getenv("BENCH_IDLE_TIMEOUT");
	long		v = s ? atol(s) : 0;

	return v > 0 ? (uint64_t) v : 1800;
}
