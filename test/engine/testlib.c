/*
 * testlib.c -- helpers for the engine test programs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "testlib.h"

#include <ftw.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int			test_failures = 0;
uint64_t	test_seed = 42;

uint64_t
test_init(int argc, char **argv)
{
	const char *s = getenv("TEST_SEED");

	(void) argc;
	(void) argv;
	if (s != NULL && *s)
		test_seed = strtoull(s, NULL, 10);
	return test_seed;
}

int
test_finish(const char *name)
{
	if (test_failures)
		fprintf(stderr, "%s: %d check(s) failed (seed %llu)\n", name, test_failures,
				(unsigned long long) test_seed);
	return test_failures ? 1 : 0;
}

char *
test_tmpdir(const char *tag)
{
	const char *base = getenv("TMPDIR");
	char	   *path;

	if (base == NULL || !*base)
		base = "/tmp";
	if (asprintf(&path, "%s/tides-%s-XXXXXX", base, tag) < 0)
		abort();
	if (mkdtemp(path) == NULL)
	{
		perror("mkdtemp");
		abort();
	}
	return path;
}

static int
rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void) st;
	(void) flag;
	(void) ftw;
	return remove(p);
}

void
test_rmdir(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

void *
test_shared_alloc(size_t size)
{
	void	   *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
	{
		perror("mmap");
		abort();
	}
	return p;
}

void
test_shared_free(void *p, size_t size)
{
	munmap(p, size);
}
