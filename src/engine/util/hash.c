/*
 * hash.c -- tides_hash64: 8 bytes at a time, multiply-xorshift mixing, and a
 * final avalanche.  Good enough for bloom filters (tested for distribution in
 * test/engine/test_util.c), and stable across platforms of one endianness.
 */
#include "util/hash.h"

#include <string.h>

#define M1 0xA0761D6478BD642Full
#define M2 0xE7037ED1A0B428DBull
#define M3 0x8EBC6AF09C88C6E3ull

static inline uint64_t
mix(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t) a * b;

	return (uint64_t) r ^ (uint64_t) (r >> 64);
}

uint64_t
tides_hash64(const void *data, size_t len, uint64_t seed)
{
	const uint8_t *p = data;
	uint64_t	h = seed ^ mix(seed ^ M1, len ^ M2);
	uint64_t	w;

	while (len >= 8)
	{
		memcpy(&w, p, 8);
		h = mix(h ^ w, M3) ^ (h >> 29);
		p += 8;
		len -= 8;
	}
	w = 0;
	memcpy(&w, p, len);
	h = mix(h ^ w ^ ((uint64_t) len << 56), M1);
	return mix(h ^ M2, h ^ M3);
}
