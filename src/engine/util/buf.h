/*
 * buf.h -- a growable process-local byte buffer.
 *
 * Used for building blocks, log records and batches.  Allocation failure is
 * sticky: once a reserve fails, buf->oom stays set and later appends are
 * ignored, so a builder can append freely and check once at the end.
 */
#ifndef TIDES_UTIL_BUF_H
#define TIDES_UTIL_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/coding.h"

typedef struct tides_buf
{
	uint8_t    *data;
	size_t		len;
	size_t		cap;
	bool		oom;
} tides_buf;

void		tides_buf_init(tides_buf *b);
void		tides_buf_free(tides_buf *b);

/* tides_buf_reserve's slow path: grow to hold extra more bytes (false: out of memory) */
bool		tides_buf_grow(tides_buf *b, size_t extra);

/*
 * Room for extra more bytes; false once out of memory.  Inline: builders
 * reserve before every append, a few bytes at a time (2% of an index
 * build's CPU was the call).
 */
static inline bool
tides_buf_reserve(tides_buf *b, size_t extra)
{
	if (!b->oom && b->len + extra <= b->cap)
		return true;
	return tides_buf_grow(b, extra);
}

static inline void
tides_buf_reset(tides_buf *b)
{
	b->len = 0;
}

static inline void
tides_buf_append(tides_buf *b, const void *p, size_t n)
{
	if (n == 0 || !tides_buf_reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static inline void
tides_buf_put_varint(tides_buf *b, uint64_t v)
{
	if (!tides_buf_reserve(b, TIDES_VARINT64_MAX))
		return;
	b->len = tides_encode_varint64(b->data + b->len, v) - b->data;
}

static inline void
tides_buf_put32(tides_buf *b, uint32_t v)
{
	if (!tides_buf_reserve(b, 4))
		return;
	tides_put32(b->data + b->len, v);
	b->len += 4;
}

static inline void
tides_buf_put64(tides_buf *b, uint64_t v)
{
	if (!tides_buf_reserve(b, 8))
		return;
	tides_put64(b->data + b->len, v);
	b->len += 8;
}

/* varint length followed by the bytes */
static inline void
tides_buf_put_slice(tides_buf *b, const void *p, size_t n)
{
	tides_buf_put_varint(b, n);
	tides_buf_append(b, p, n);
}

#endif
