/*
 * crc32c.h -- CRC-32C (Castagnoli) for every checksum the engine stores.
 *
 * The answer is PostgreSQL's (pg_comp_crc32c from libpgport, which picks
 * SSE4.2 at run time); buffers of 768 bytes and more are summed three
 * streams at a time (crc32c.c), about three times as fast on x86-64.
 * Inside the server the symbol comes from the postgres binary; standalone
 * engine programs link libpgport_shlib.a.  We declare the one function
 * pointer ourselves so that no PostgreSQL header is needed here.
 *
 * Stored checksums are "masked" (rotated and offset, as LevelDB does) so that
 * a checksum computed over data that itself contains checksums stays strong.
 */
#ifndef TIDES_UTIL_CRC32C_H
#define TIDES_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

extern uint32_t (*pg_comp_crc32c) (uint32_t crc, const void *data, size_t len);

/* the CRC register after data, from crc (no inversions): pg_comp_crc32c's contract */
uint32_t	tides_crc32c_raw(uint32_t crc, const void *data, size_t len);

/* continue a crc over more data; start with crc = 0 */
static inline uint32_t
tides_crc32c_extend(uint32_t crc, const void *data, size_t len)
{
	return tides_crc32c_raw(crc ^ 0xFFFFFFFFu, data, len) ^ 0xFFFFFFFFu;
}

static inline uint32_t
tides_crc32c(const void *data, size_t len)
{
	return tides_crc32c_extend(0, data, len);
}

#define TIDES_CRC_MASK_DELTA 0xa282ead8u

static inline uint32_t
tides_crc_mask(uint32_t crc)
{
	return ((crc >> 15) | (crc << 17)) + TIDES_CRC_MASK_DELTA;
}

static inline uint32_t
tides_crc_unmask(uint32_t masked)
{
	uint32_t	rot = masked - TIDES_CRC_MASK_DELTA;

	return (rot >> 17) | (rot << 15);
}

#endif
