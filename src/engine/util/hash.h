/*
 * hash.h -- a fast 64-bit non-cryptographic hash for bloom filters, the
 * block cache and lock striping.  The bloom filter format depends on it:
 * changing it changes the on-disk format version.
 */
#ifndef TIDES_UTIL_HASH_H
#define TIDES_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t	tides_hash64(const void *data, size_t len, uint64_t seed);

/* mix two integers into a well-distributed 64-bit value */
static inline uint64_t
tides_hash_mix(uint64_t a, uint64_t b)
{
	uint64_t	h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull);

	h ^= h >> 32;
	h *= 0xD6E8FEB86659FD93ull;
	h ^= h >> 32;
	return h;
}

#endif
