/*
 * write_batch.c -- building and decoding write batches.
 */
#include "db/write_batch.h"

#include <stdlib.h>
#include <string.h>

#include "util/dbformat.h"
#include "mem/memtable.h"

static void
batch_reset(tides_batch *b)
{
	b->rep.len = 0;
	tides_buf_reserve(&b->rep, TIDES_REC_HEADER + TIDES_BATCH_HEADER);
	if (!b->rep.oom)
	{
		memset(b->rep.data, 0, TIDES_REC_HEADER + TIDES_BATCH_HEADER);
		b->rep.len = TIDES_REC_HEADER + TIDES_BATCH_HEADER;
	}
	b->count = 0;
	b->arena_bytes = 0;
	b->max_key_len = 0;
	b->defer_sync = false;
	b->unpaced = false;
	b->no_wait = false;
}

tides_batch *
tides_batch_new(void)
{
	tides_batch *b = malloc(sizeof(*b));

	if (b == NULL)
		return NULL;
	tides_buf_init(&b->rep);
	batch_reset(b);
	return b;
}

void
tides_batch_free(tides_batch *b)
{
	if (b == NULL)
		return;
	tides_buf_free(&b->rep);
	free(b);
}

void
tides_batch_clear(tides_batch *b)
{
	batch_reset(b);
}

static tides_status
batch_add(tides_batch *b, int type, const void *key, size_t klen, const void *val, size_t vlen)
{
	if (klen == 0 || klen > TIDES_MAX_KEY_LEN || vlen > UINT32_MAX / 2)
		return TIDES_INVALID;
	if (b->rep.oom)
		return TIDES_NO_MEMORY;
	if (!tides_buf_reserve(&b->rep, 1))
		return TIDES_NO_MEMORY;
	b->rep.data[b->rep.len++] = (uint8_t) type;
	tides_buf_put_slice(&b->rep, key, klen);
	if (type == TIDES_KT_VALUE)
		tides_buf_put_slice(&b->rep, val, vlen);
	if (b->rep.oom)
		return TIDES_NO_MEMORY;
	b->count++;
	b->arena_bytes += tides_memtable_entry_size(1, klen, vlen);
	if (klen > b->max_key_len)
		b->max_key_len = (uint32_t) klen;
	tides_put32(b->rep.data + TIDES_REC_HEADER + TIDES_BATCH_OFF_COUNT, b->count);
	return TIDES_OK;
}

tides_status
tides_batch_put(tides_batch *b, const void *key, size_t klen, const void *val, size_t vlen)
{
	return batch_add(b, TIDES_KT_VALUE, key, klen, val, vlen);
}

tides_status
tides_batch_delete(tides_batch *b, const void *key, size_t klen)
{
	return batch_add(b, TIDES_KT_DELETE, key, klen, NULL, 0);
}

uint32_t
tides_batch_count(const tides_batch *b)
{
	return b->count;
}

size_t
tides_batch_bytes(const tides_batch *b)
{
	return b->rep.len;
}

void
tides_batch_set_tag(tides_batch *b, uint64_t tag, bool seal)
{
	uint8_t    *h = b->rep.data + TIDES_REC_HEADER;

	if (b->rep.oom)
		return;
	tides_put64(h + TIDES_BATCH_OFF_TAG, tag);
	h[TIDES_BATCH_OFF_FLAGS] = seal ? TIDES_BATCH_FLAG_SEAL : 0;
}

void
tides_batch_defer_sync(tides_batch *b)
{
	b->defer_sync = true;
}

void
tides_batch_unpaced(tides_batch *b)
{
	b->unpaced = true;
}

void
tides_batch_no_wait(tides_batch *b)
{
	b->no_wait = true;
}

bool
tides_batch_get_tag(const tides_batch *b, uint64_t *tag, bool *seal, bool *defer_sync)
{
	if (b->rep.oom)
		return false;
	*tag = tides_batch_tag_of(b);
	*seal = tides_batch_seals(b);
	*defer_sync = b->defer_sync;
	return true;
}

typedef struct foreach_ctx
{
	void		(*fn) (void *arg, bool is_delete, const void *key, size_t klen,
					   const void *val, size_t vlen);
	void	   *arg;
} foreach_ctx;

static tides_status
foreach_entry(void *arg, uint64_t seq, int type, const uint8_t *key, size_t klen,
			  const uint8_t *val, size_t vlen)
{
	foreach_ctx *c = arg;

	c->fn(c->arg, type == TIDES_KT_DELETE, key, klen, val, vlen);
	return TIDES_OK;
}

void
tides_batch_foreach(const tides_batch *b,
					void (*fn) (void *arg, bool is_delete, const void *key, size_t klen,
								const void *val, size_t vlen),
					void *arg)
{
	foreach_ctx c = {fn, arg};
	tides_batch_header hdr;
	tides_error err;
	size_t		len;
	const uint8_t *payload;

	if (b->rep.oom)
		return;
	payload = tides_batch_payload(b, &len);
	tides_error_clear(&err);
	/* a batch built by tides_batch_put/delete always decodes */
	(void) tides_batch_decode(payload, len, &hdr, foreach_entry, &c, &err);
}

/* tides_batch_load's tally of a record's entries */
static tides_status
tally_entry(void *arg, uint64_t seq, int type, const uint8_t *key, size_t klen,
			const uint8_t *val, size_t vlen)
{
	tides_batch *b = arg;

	b->count++;
	b->arena_bytes += tides_memtable_entry_size(1, klen, vlen);
	if (klen > b->max_key_len)
		b->max_key_len = (uint32_t) klen;
	return TIDES_OK;
}

tides_status
tides_batch_load(tides_batch *b, const void *rec, size_t len)
{
	tides_batch_header hdr;
	tides_error err;
	tides_status s;

	batch_reset(b);
	if (b->rep.oom)
		return TIDES_NO_MEMORY;
	tides_error_clear(&err);
	s = tides_batch_decode(rec, len, &hdr, tally_entry, b, &err);
	if (s == TIDES_OK && (hdr.count != b->count || hdr.tag != 0 || hdr.seal))
		s = TIDES_CORRUPTION;	/* a count that lies, or a tag: never appended */
	if (s != TIDES_OK)
	{
		batch_reset(b);
		return s;
	}
	/* the record replaces the empty batch header batch_reset wrote */
	b->rep.len = TIDES_REC_HEADER;
	tides_buf_append(&b->rep, rec, len);
	return b->rep.oom ? TIDES_NO_MEMORY : TIDES_OK;
}

tides_status
tides_batch_decode(const uint8_t *payload, size_t len, tides_batch_header *hdr,
				   tides_batch_entry_fn fn, void *arg, tides_error *err)
{
	const uint8_t *p = payload + TIDES_BATCH_HEADER;
	const uint8_t *end = payload + len;
	uint32_t	n = 0;

	if (len < TIDES_BATCH_HEADER)
		return tides_fail(err, TIDES_CORRUPTION, "batch of %zu bytes is shorter than its header", len);
	tides_batch_read_header(payload, hdr);
	if (hdr->flags & ~TIDES_BATCH_FLAG_SEAL)
		return tides_fail(err, TIDES_CORRUPTION, "batch has unknown flags 0x%x", hdr->flags);
	if (hdr->seq > TIDES_MAX_SEQ || hdr->count > TIDES_MAX_SEQ - hdr->seq)
		return tides_fail(err, TIDES_CORRUPTION, "batch sequence number out of range");

	while (p < end)
	{
		int			type = *p++;
		uint64_t	klen,
					vlen = 0;
		const uint8_t *key,
				   *val = NULL;

		if (type != TIDES_KT_VALUE && type != TIDES_KT_DELETE)
			return tides_fail(err, TIDES_CORRUPTION, "batch entry %u has bad type %d", n, type);
		p = tides_decode_varint64(p, end, &klen);
		if (p == NULL || klen == 0 || klen > TIDES_MAX_KEY_LEN || klen > (uint64_t) (end - p))
			return tides_fail(err, TIDES_CORRUPTION, "batch entry %u has a bad key length", n);
		key = p;
		p += klen;
		if (type == TIDES_KT_VALUE)
		{
			p = tides_decode_varint64(p, end, &vlen);
			if (p == NULL || vlen > (uint64_t) (end - p))
				return tides_fail(err, TIDES_CORRUPTION, "batch entry %u has a bad value length", n);
			val = p;
			p += vlen;
		}
		if (n >= hdr->count)
			return tides_fail(err, TIDES_CORRUPTION, "batch holds more entries than its count %u",
							  hdr->count);
		if (fn != NULL)
		{
			tides_status s = fn(arg, hdr->seq + n, type, key, klen, val, vlen);

			if (s != TIDES_OK)
				return s;
		}
		n++;
	}
	if (n != hdr->count)
		return tides_fail(err, TIDES_CORRUPTION, "batch count %u but %u entries", hdr->count, n);
	return TIDES_OK;
}
