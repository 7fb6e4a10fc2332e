/*
 * testlib.h -- the tiny harness shared by the engine test programs.
 *
 * CHECK(cond) records a failure with file and line and goes on; a test
 * program's exit status is nonzero if any check failed.  Tests are
 * deterministic: randomness comes from tides_rand seeded by TEST_SEED
 * (environment) or a fixed default, printed on failure for replay.
 */
#ifndef TIDES_TESTLIB_H
#define TIDES_TESTLIB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tides_engine.h"

extern int	test_failures;
extern uint64_t test_seed;

#define CHECK(cond) \
	do { \
		if (!(cond)) { \
			test_failures++; \
			fprintf(stderr, "%s:%d: CHECK failed: %s (seed %llu)\n", __FILE__, __LINE__, \
					#cond, (unsigned long long) test_seed); \
		} \
	} while (0)

#define CHECK_OK(expr) \
	do { \
		tides_status _s = (expr); \
		if (_s != TIDES_OK) { \
			test_failures++; \
			fprintf(stderr, "%s:%d: %s returned %s (seed %llu)\n", __FILE__, __LINE__, \
					#expr, tides_status_name(_s), (unsigned long long) test_seed); \
		} \
	} while (0)

/* initialise seed from TEST_SEED; returns it */
uint64_t	test_init(int argc, char **argv);

/* exit code for main(): prints a summary line */
int			test_finish(const char *name);

/* a fresh empty directory under $TMPDIR (removed by test_rmdir) */
char	   *test_tmpdir(const char *tag);
void		test_rmdir(const char *path);

/* anonymous MAP_SHARED memory, survives fork at the same address */
void	   *test_shared_alloc(size_t size);
void		test_shared_free(void *p, size_t size);

/* a big-endian 32-bit key part (the engine's coding.h has only 64 bits) */
static inline void
test_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) (v >> 24);
	p[1] = (uint8_t) (v >> 16);
	p[2] = (uint8_t) (v >> 8);
	p[3] = (uint8_t) v;
}

#endif
