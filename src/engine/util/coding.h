/*
 * coding.h -- fixed-width and varint encodings used by every on-disk format.
 *
 * On-disk integers are little-endian unless a comment says otherwise; keys
 * handed to the engine by its callers are opaque bytes (big-endian numbers
 * inside keys are the callers' business, so that memcmp orders them).
 * Decoders never read past the limit they are given: a truncated or
 * malformed varint yields NULL, which callers report as corruption.
 */
#ifndef TIDES_UTIL_CODING_H
#define TIDES_UTIL_CODING_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void
tides_put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);			/* all supported hosts are little-endian */
}

static inline void
tides_put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static inline uint32_t
tides_get32(const uint8_t *p)
{
	uint32_t	v;

	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t
tides_get64(const uint8_t *p)
{
	uint64_t	v;

	memcpy(&v, p, 8);
	return v;
}

/* big-endian, for building keys that sort numerically under memcmp */
static inline void
tides_put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--)
	{
		p[i] = (uint8_t) v;
		v >>= 8;
	}
}

static inline uint64_t
tides_get_be64(const uint8_t *p)
{
	uint64_t	v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

#define TIDES_VARINT32_MAX 5
#define TIDES_VARINT64_MAX 10

/* write a varint at p, return the byte after it */
static inline uint8_t *
tides_encode_varint64(uint8_t *p, uint64_t v)
{
	while (v >= 0x80)
	{
		*p++ = (uint8_t) (v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t) v;
	return p;
}

static inline int
tides_varint_length(uint64_t v)
{
	int			n = 1;

	while (v >= 0x80)
	{
		v >>= 7;
		n++;
	}
	return n;
}

/* decode a varint from [p, limit); NULL when truncated or too long */
static inline const uint8_t *
tides_decode_varint64(const uint8_t *p, const uint8_t *limit, uint64_t *v)
{
	uint64_t	result = 0;

	for (int shift = 0; shift <= 63 && p < limit; shift += 7)
	{
		uint64_t	byte = *p++;

		result |= (byte & 0x7f) << shift;
		if ((byte & 0x80) == 0)
		{
			*v = result;
			return p;
		}
	}
	return NULL;
}

static inline const uint8_t *
tides_decode_varint32(const uint8_t *p, const uint8_t *limit, uint32_t *v)
{
	uint64_t	v64;

	p = tides_decode_varint64(p, limit, &v64);
	if (p == NULL || v64 > UINT32_MAX)
		return NULL;
	*v = (uint32_t) v64;
	return p;
}

#endif
