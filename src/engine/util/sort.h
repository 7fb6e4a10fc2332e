/*
 * sort.h -- qsort comparators shared by the engine.
 */
#ifndef TIDES_UTIL_SORT_H
#define TIDES_UTIL_SORT_H

#include <stdint.h>

/* ascending uint64_t */
static inline int
tides_cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a,
				y = *(const uint64_t *) b;

	return x < y ? -1 : (x > y);
}

#endif
