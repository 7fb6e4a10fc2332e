/*
 * assert.c -- what a failed TIDES_ASSERT does (util/assert.h).
 */
#include "util/assert.h"

#ifdef TIDES_ASSERTS

#include <stdio.h>
#include <stdlib.h>

void
tides_assert_fail(const char *expr, const char *file, int line, const char *func)
{
	fprintf(stderr, "tides assertion failed: %s:%d: %s: %s\n", file, line, func, expr);
	fflush(stderr);
	abort();
}

#endif
