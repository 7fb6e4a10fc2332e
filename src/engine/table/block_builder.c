/*
 * block_builder.c -- shared-prefix compression with restart points.
 */
#include "table/block_builder.h"

#include "util/assert.h"

void
tides_block_builder_init(tides_block_builder *b, uint32_t restart_interval)
{
	tides_buf_init(&b->buf);
	tides_buf_init(&b->restarts);
	tides_buf_init(&b->last_key);
	b->interval = restart_interval ? restart_interval : 1;
	tides_block_builder_reset(b);
}

void
tides_block_builder_free(tides_block_builder *b)
{
	tides_buf_free(&b->buf);
	tides_buf_free(&b->restarts);
	tides_buf_free(&b->last_key);
}

void
tides_block_builder_reset(tides_block_builder *b)
{
	tides_buf_reset(&b->buf);
	tides_buf_reset(&b->restarts);
	tides_buf_reset(&b->last_key);
	tides_buf_put32(&b->restarts, 0);
	b->counter = 0;
	b->nentries = 0;
	b->finished = false;
}

void
tides_block_builder_add(tides_block_builder *b, const uint8_t *key, size_t klen,
						const uint8_t *val, size_t vlen)
{
	size_t		shared = 0;

	/* a finished block is complete until reset */
	TIDES_ASSERT(!b->finished);
	TIDES_ASSERT(b->counter <= b->interval);
	if (b->counter < b->interval)
	{
		size_t		n = b->last_key.len < klen ? b->last_key.len : klen;

		while (shared < n && b->last_key.data[shared] == key[shared])
			shared++;
	}
	else
	{
		/* restart points go forward (unless memory ran out: then nothing is written) */
		TIDES_ASSERT(tides_block_builder_oom(b) ||
					 tides_get32(b->restarts.data + b->restarts.len - 4) < b->buf.len);
		tides_buf_put32(&b->restarts, (uint32_t) b->buf.len);
		b->counter = 0;
	}

	if (tides_buf_reserve(&b->buf, 3 * TIDES_VARINT32_MAX))
	{
		uint8_t    *p = b->buf.data + b->buf.len;

		p = tides_encode_varint64(p, shared);
		p = tides_encode_varint64(p, klen - shared);
		p = tides_encode_varint64(p, vlen);
		b->buf.len = p - b->buf.data;
	}
	tides_buf_append(&b->buf, key + shared, klen - shared);
	tides_buf_append(&b->buf, val, vlen);

	/* keep only the new suffix: the shared prefix is already in last_key */
	b->last_key.len = shared;
	tides_buf_append(&b->last_key, key + shared, klen - shared);
	b->counter++;
	b->nentries++;
}

const uint8_t *
tides_block_builder_finish(tides_block_builder *b, size_t *len)
{
	if (!b->finished)
	{
		/* at least the restart at offset 0 (reset put it there) */
		TIDES_ASSERT(tides_block_builder_oom(b) || b->restarts.len >= 4);
		tides_buf_append(&b->buf, b->restarts.data, b->restarts.len);
		tides_buf_put32(&b->buf, (uint32_t) (b->restarts.len / 4));
		b->finished = true;
	}
	*len = b->buf.len;
	return b->buf.data;
}
