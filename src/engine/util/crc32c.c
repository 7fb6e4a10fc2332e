/*
 * crc32c.c -- CRC-32C of long buffers in three interleaved streams.
 *
 * The SSE4.2 crc32 instruction takes 3 cycles to give its result and can
 * start a new one every cycle, so one chain of them (PostgreSQL's
 * pg_comp_crc32c) runs at a third of the unit's rate.  For a buffer of at
 * least three blocks, crc_3way() runs three independent chains, one per
 * block, and joins them: the CRC register is linear in its start value, so
 * the CRC of A || B from start c is shift_|B|(crc(c, A)) ^ crc(0, B), where
 * shift_n(x) = crc(x, n zero bytes) is a linear map of 32 bits, applied by
 * four lookups in tables built once (make_shift).  Short buffers, machines
 * without SSE4.2 and the tails go to pg_comp_crc32c, which also defines
 * the answer: test_util compares the two on random buffers.
 */
#include "util/crc32c.h"

#include <stdbool.h>
#include <string.h>

#include "util/assert.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TIDES_CRC_3WAY 1
#include <nmmintrin.h>
#endif

#ifdef TIDES_CRC_3WAY

#define LONG_BLOCK 8192
#define SHORT_BLOCK 256

/* shift_n for n = LONG_BLOCK and SHORT_BLOCK: table[k][b] = shift_n(b << 8k) */
static uint32_t shift_long[4][256];
static uint32_t shift_short[4][256];
static bool have_3way;

static inline uint32_t
apply_shift(const uint32_t t[4][256], uint32_t c)
{
	return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
}

static void
make_shift(uint32_t t[4][256], size_t n)
{
	static const uint8_t zeros[LONG_BLOCK];
	uint32_t	bit[32];

	TIDES_ASSERT(n <= sizeof(zeros));
	/* the images of the 32 unit vectors, then every byte's as their sum */
	for (int i = 0; i < 32; i++)
		bit[i] = pg_comp_crc32c(UINT32_C(1) << i, zeros, n);
	for (int k = 0; k < 4; k++)
		for (int b = 0; b < 256; b++)
		{
			uint32_t	v = 0;

			for (int i = 0; i < 8; i++)
				if (b & (1 << i))
					v ^= bit[8 * k + i];
			t[k][b] = v;
		}
}

/*
 * Built when the library is loaded (before any process can fork from it);
 * pg_comp_crc32c picks its own implementation on its first call, which this
 * is.
 */
__attribute__((constructor))
static void
crc_init(void)
{
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("sse4.2"))
		return;
	make_shift(shift_long, LONG_BLOCK);
	make_shift(shift_short, SHORT_BLOCK);
	have_3way = true;
}

static inline uint64_t
load64(const uint8_t *p)
{
	uint64_t	v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* whole triples of `block`-byte blocks from *p; the rest is left to the caller */
__attribute__((target("sse4.2")))
static uint32_t
crc_blocks(uint32_t crc, const uint8_t **p, size_t *n, size_t block, const uint32_t t[4][256])
{
	while (*n >= 3 * block)
	{
		const uint8_t *a = *p;
		const uint8_t *end = a + block;
		uint64_t	c0 = crc,
					c1 = 0,
					c2 = 0;

		for (; a < end; a += 8)
		{
			c0 = _mm_crc32_u64(c0, load64(a));
			c1 = _mm_crc32_u64(c1, load64(a + block));
			c2 = _mm_crc32_u64(c2, load64(a + 2 * block));
		}
		crc = apply_shift(t, (uint32_t) c0) ^ (uint32_t) c1;
		crc = apply_shift(t, crc) ^ (uint32_t) c2;
		*p += 3 * block;
		*n -= 3 * block;
	}
	return crc;
}

uint32_t
tides_crc32c_raw(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;

	if (!have_3way || len < 3 * SHORT_BLOCK)
		return pg_comp_crc32c(crc, data, len);
	crc = crc_blocks(crc, &p, &len, LONG_BLOCK, shift_long);
	crc = crc_blocks(crc, &p, &len, SHORT_BLOCK, shift_short);
	return len > 0 ? pg_comp_crc32c(crc, p, len) : crc;
}

#else							/* !TIDES_CRC_3WAY */

uint32_t
tides_crc32c_raw(uint32_t crc, const void *data, size_t len)
{
	return pg_comp_crc32c(crc, data, len);
}

#endif
