/*
 * random.h -- small deterministic PRNG (xorshift64*) for skiplist heights
 * and tests.  Not for anything security related.
 */
#ifndef TIDES_UTIL_RANDOM_H
#define TIDES_UTIL_RANDOM_H

#include <stdint.h>

typedef struct tides_rand
{
	uint64_t	s;
} tides_rand;

static inline void
tides_rand_seed(tides_rand *r, uint64_t seed)
{
	r->s = seed ? seed : 0x2545F4914F6CDD1Dull;
}

static inline uint64_t
tides_rand_next(tides_rand *r)
{
	uint64_t	x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* uniform in [0, n) */
static inline uint64_t
tides_rand_uniform(tides_rand *r, uint64_t n)
{
	return n ? tides_rand_next(r) % n : 0;
}

#endif
