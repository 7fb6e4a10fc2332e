/*
 * format.c -- trailers, footer, properties and the block read path.
 */
#include "table/format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/block_cache.h"
#include "table/compress.h"
#include "util/assert.h"
#include "util/dbformat.h"
#include "util/crc32c.h"

void
tides_block_trailer(uint8_t out[TIDES_BLOCK_TRAILER], const uint8_t *data, size_t n,
					uint8_t type)
{
	uint32_t	crc = tides_crc32c(data, n);

	crc = tides_crc32c_extend(crc, &type, 1);
	out[0] = type;
	tides_put32(out + 1, tides_crc_mask(crc));
}

void
tides_footer_encode(uint8_t out[TIDES_FOOTER_SIZE], const tides_footer *f)
{
	tides_put64(out + 0, f->top_index.offset);
	tides_put64(out + 8, f->top_index.size);
	tides_put64(out + 16, f->props.offset);
	tides_put64(out + 24, f->props.size);
	tides_put32(out + 32, f->version);
	tides_put32(out + 36, tides_crc_mask(tides_crc32c(out, 36)));
	tides_put64(out + 40, TIDES_SST_MAGIC);
}

tides_status
tides_footer_decode(const uint8_t in[TIDES_FOOTER_SIZE], tides_footer *f,
					const char *fname, tides_error *err)
{
	if (tides_get64(in + 40) != TIDES_SST_MAGIC)
		return tides_fail(err, TIDES_CORRUPTION, "bad magic number in footer of %s", fname);
	if (tides_crc_unmask(tides_get32(in + 36)) != tides_crc32c(in, 36))
		return tides_fail(err, TIDES_CORRUPTION, "footer checksum mismatch in %s", fname);
	f->top_index.offset = tides_get64(in + 0);
	f->top_index.size = tides_get64(in + 8);
	f->props.offset = tides_get64(in + 16);
	f->props.size = tides_get64(in + 24);
	f->version = tides_get32(in + 32);
	if (f->version != TIDES_SST_FORMAT_VERSION)
		return tides_fail(err, TIDES_CORRUPTION, "unsupported format version %u in %s",
						  f->version, fname);
	return TIDES_OK;
}

#define PROPS_VERSION 1
#define PROPS_FIXED 13			/* uint64 fields */

void
tides_props_encode(tides_buf *b, const tides_sst_props *p, const tides_props_ext *x)
{
	uint8_t		v = PROPS_VERSION;

	tides_buf_append(b, &v, 1);
	tides_buf_put64(b, p->num_entries);
	tides_buf_put64(b, p->num_deletions);
	tides_buf_put64(b, p->num_data_blocks);
	tides_buf_put64(b, p->raw_key_bytes);
	tides_buf_put64(b, p->raw_value_bytes);
	tides_buf_put64(b, p->data_bytes);
	tides_buf_put64(b, p->file_size);
	tides_buf_put64(b, p->min_seq);
	tides_buf_put64(b, p->max_seq);
	tides_buf_put64(b, x->num_partitions);
	tides_buf_put64(b, x->prefix_len);
	tides_buf_put64(b, x->bloom_bits_per_key);
	tides_buf_put64(b, x->compression);
	tides_buf_put_slice(b, p->smallest, p->smallest_len);
	tides_buf_put_slice(b, p->largest, p->largest_len);
	if (x->has_global_seq)
	{
		uint8_t		tag = TIDES_PROPS_ITEM_GSEQ;

		tides_buf_append(b, &tag, 1);
		tides_buf_put64(b, x->global_seq);
	}
	if (x->stem_suffix != 0)
	{
		uint8_t		tag = TIDES_PROPS_ITEM_STEM;

		tides_buf_append(b, &tag, 1);
		tides_buf_put64(b, x->stem_suffix);
	}
	/* last: an older reader stops at its unknown tag and loses nothing else */
	if (x->ranges_len != 0)
	{
		uint8_t		tag = TIDES_PROPS_ITEM_RANGES;

		tides_buf_append(b, &tag, 1);
		tides_buf_put64(b, x->ranges_len);
		tides_buf_append(b, x->ranges, x->ranges_len);
	}
}

/* NULL on a malformed slice, or (*oom set) when its copy cannot be allocated */
static const uint8_t *
get_slice(const uint8_t *p, const uint8_t *limit, uint8_t **out, size_t *len, bool *oom)
{
	uint64_t	n;

	if ((p = tides_decode_varint64(p, limit, &n)) == NULL || n > (uint64_t) (limit - p))
		return NULL;
	*out = malloc(n ? n : 1);
	if (*out == NULL)
	{
		*oom = true;			/* not damage: do not report corruption */
		return NULL;
	}
	memcpy(*out, p, n);
	*len = n;
	return p + n;
}

tides_status
tides_props_decode(const uint8_t *data, size_t len, tides_sst_props *p,
				   tides_props_ext *x, const char *fname, tides_error *err)
{
	const uint8_t *q = data + 1;
	const uint8_t *limit = data + len;
	uint64_t	v[PROPS_FIXED];
	bool		oom = false;

	memset(p, 0, sizeof(*p));
	memset(x, 0, sizeof(*x));
	if (len < 1 + PROPS_FIXED * 8 || data[0] != PROPS_VERSION)
		return tides_fail(err, TIDES_CORRUPTION, "malformed properties block in %s", fname);
	for (int i = 0; i < PROPS_FIXED; i++, q += 8)
		v[i] = tides_get64(q);
	p->num_entries = v[0];
	p->num_deletions = v[1];
	p->num_data_blocks = v[2];
	p->raw_key_bytes = v[3];
	p->raw_value_bytes = v[4];
	p->data_bytes = v[5];
	p->file_size = v[6];
	p->min_seq = v[7];
	p->max_seq = v[8];
	if (v[9] > UINT32_MAX || v[10] > UINT32_MAX || v[11] > UINT32_MAX || v[12] > 2)
		return tides_fail(err, TIDES_CORRUPTION, "malformed properties block in %s", fname);
	x->num_partitions = (uint32_t) v[9];
	x->prefix_len = (uint32_t) v[10];
	x->bloom_bits_per_key = (uint32_t) v[11];
	x->compression = (uint32_t) v[12];
	p->prefix_len = x->prefix_len;
	p->num_partitions = x->num_partitions;
	if ((q = get_slice(q, limit, &p->smallest, &p->smallest_len, &oom)) == NULL ||
		(q = get_slice(q, limit, &p->largest, &p->largest_len, &oom)) == NULL)
	{
		tides_sst_props_free(p);
		if (oom)
			return tides_fail(err, TIDES_NO_MEMORY, "out of memory reading properties of %s",
							  fname);
		return tides_fail(err, TIDES_CORRUPTION, "malformed key range in properties of %s",
						  fname);
	}
	/*
	 * Tagged items after the keys, each a tag byte and 8 bytes; an unknown
	 * tag ends the list (a later version's item).  Absent items: zero.
	 */
	while (limit - q >= TIDES_PROPS_ITEM_SIZE)
	{
		if (q[0] == TIDES_PROPS_ITEM_GSEQ)
		{
			x->has_global_seq = true;
			x->global_seq = tides_get64(q + 1);
			x->global_seq_off = (uint32_t) (q - data);
			if (x->global_seq > TIDES_MAX_SEQ || p->min_seq != 0 || p->max_seq != 0)
			{
				tides_sst_props_free(p);
				return tides_fail(err, TIDES_CORRUPTION,
								  "malformed global sequence number in properties of %s", fname);
			}
		}
		else if (q[0] == TIDES_PROPS_ITEM_STEM)
		{
			uint64_t	stem = tides_get64(q + 1);

			if (stem == 0 || stem > TIDES_MAX_STEM_SUFFIX)
			{
				tides_sst_props_free(p);
				return tides_fail(err, TIDES_CORRUPTION,
								  "malformed stem filter length in properties of %s", fname);
			}
			x->stem_suffix = (uint32_t) stem;
			p->stem_suffix = x->stem_suffix;
		}
		else if (q[0] == TIDES_PROPS_ITEM_RANGES)
		{
			uint64_t	n = tides_get64(q + 1);

			/* its payload is checked by its reader (sst_reader.c, load_ranges) */
			if (n == 0 || n > (uint64_t) (limit - q - TIDES_PROPS_ITEM_SIZE))
			{
				tides_sst_props_free(p);
				return tides_fail(err, TIDES_CORRUPTION,
								  "malformed key ranges in properties of %s", fname);
			}
			x->ranges = q + TIDES_PROPS_ITEM_SIZE;
			x->ranges_len = (size_t) n;
			q += n;
		}
		else
			break;
		q += TIDES_PROPS_ITEM_SIZE;
	}
	return TIDES_OK;
}

void
tides_sst_props_free(tides_sst_props *p)
{
	free(p->smallest);
	free(p->largest);
	p->smallest = p->largest = NULL;
	p->smallest_len = p->largest_len = 0;
}

/* swap two buffers: hands a decompressed block to out without a copy */
static inline void
buf_swap(tides_buf *a, tides_buf *b)
{
	tides_buf	t = *a;

	*a = *b;
	*b = t;
}

static tides_status
check_handle(const tides_block_source *src, tides_block_handle h, tides_error *err)
{
	if (h.offset > src->limit || h.size > src->limit - h.offset ||
		src->limit - h.offset - h.size < TIDES_BLOCK_TRAILER)
		return tides_fail(err, TIDES_CORRUPTION,
						  "block handle (offset %llu, size %llu) out of range in %s",
						  (unsigned long long) h.offset, (unsigned long long) h.size,
						  src->fname);
	return TIDES_OK;
}

/*
 * raw holds the block at h as stored (h.size bytes and the trailer), as read
 * from the file: check its checksum, then leave its contents in into --
 * decompressed, or copied (copy false: raw is into's own data already).
 */
static tides_status
decode_block(const tides_block_source *src, tides_block_handle h, const uint8_t *raw, bool copy,
			 tides_buf *into, tides_error *err)
{
	const uint8_t *trailer = raw + h.size;
	uint8_t		type = trailer[0];
	uint32_t	crc = tides_crc32c(raw, h.size);

	crc = tides_crc32c_extend(crc, &type, 1);
	if (tides_crc_unmask(tides_get32(trailer + 1)) != crc)
		return tides_fail(err, TIDES_CORRUPTION, "checksum mismatch in block at offset %llu of %s",
						  (unsigned long long) h.offset, src->fname);
	if (type == TIDES_COMPRESS_NONE)
	{
		if (copy)
		{
			tides_buf_reset(into);
			if (!tides_buf_reserve(into, h.size))
				return tides_fail(err, TIDES_NO_MEMORY, "out of memory reading block at offset %llu of %s",
								  (unsigned long long) h.offset, src->fname);
			memcpy(into->data, raw, h.size);
		}
		into->len = (size_t) h.size;
		return TIDES_OK;
	}
	else
		return tides_decompress((tides_compression) type, raw, (size_t) h.size, into, src->fname,
								h.offset, err);
}

static inline void
count_file_read(const tides_block_source *src, size_t n)
{
	if (src->counters)
		tides_count(src->counters, bytes_read, n);
	tides_process_io.bytes_read += n;
}

void
tides_count_reads(const tides_block_source *src, uint64_t bytes, uint64_t blocks)
{
	count_file_read(src, (size_t) bytes);
	tides_process_io.blocks_read += blocks;
}

tides_status
tides_read_block(const tides_block_source *src, tides_block_handle h,
				 tides_read_mode mode, tides_buf *out, tides_buf *tmp,
				 const uint8_t **data, size_t *len, tides_error *err)
{
	size_t		n;
	int64_t		r;
	tides_status s;

	if ((s = check_handle(src, h, err)) != TIDES_OK)
		return s;
	tides_buf_reset(out);
	if (src->cache != NULL && mode != TIDES_READ_BYPASS)
	{
		size_t		got = 0;

		/* a miss because our buffer is too small reports the size needed */
		if (tides_block_cache_lookup(src->cache, src->file_number, h.offset,
									 out->data, out->cap, &got) ||
			(got > out->cap && tides_buf_reserve(out, got) &&
			 tides_block_cache_lookup(src->cache, src->file_number, h.offset,
									  out->data, out->cap, &got)))
		{
			if (src->counters)
				tides_count(src->counters, cache_hits, 1);
			tides_process_io.cache_hits++;
			out->len = got;
			*data = out->data;
			*len = got;
			return TIDES_OK;
		}
		if (src->counters)
			tides_count(src->counters, cache_misses, 1);
	}

	n = (size_t) h.size + TIDES_BLOCK_TRAILER;
	if (!tides_buf_reserve(out, n))
		return tides_fail(err, TIDES_NO_MEMORY, "out of memory reading block at offset %llu of %s",
						  (unsigned long long) h.offset, src->fname);
	r = src->vfs->pread(src->vfs, src->fd, out->data, n, h.offset);
	if (r < 0)
		return tides_fail_io(err, (int) r, "read", src->fname);
	if ((size_t) r != n)
		return tides_fail(err, TIDES_CORRUPTION, "short read of block at offset %llu of %s",
						  (unsigned long long) h.offset, src->fname);
	count_file_read(src, n);
	tides_process_io.blocks_read++;

	if (out->data[h.size] == TIDES_COMPRESS_NONE)
		s = decode_block(src, h, out->data, false, out, err);
	else if ((s = decode_block(src, h, out->data, false, tmp, err)) == TIDES_OK)
		buf_swap(out, tmp);
	if (s != TIDES_OK)
		return s;

	if (src->cache != NULL && mode == TIDES_READ_FILL_CACHE)
		tides_block_cache_insert(src->cache, src->file_number, h.offset, out->data, out->len);
	*data = out->data;
	*len = out->len;
	return TIDES_OK;
}

tides_status
tides_read_block_ahead(const tides_block_source *src, tides_block_handle h, tides_readahead *ra,
					   tides_buf *out, const uint8_t **data, size_t *len, tides_error *err,
					   uint64_t *nread)
{
	size_t		n = (size_t) h.size + TIDES_BLOCK_TRAILER;
	tides_status s;

	if ((s = check_handle(src, h, err)) != TIDES_OK)
		return s;
	if (ra->buf.data == NULL || h.offset < ra->off || h.offset - ra->off > ra->buf.len ||
		n > ra->buf.len - (h.offset - ra->off))
	{
		/* the window from this block on, as far as the blocks go (check_handle: n fits) */
		size_t		want = TIDES_READAHEAD_BYTES > n ? TIDES_READAHEAD_BYTES : n;
		int64_t		r;

		if (want > src->limit - h.offset)
			want = (size_t) (src->limit - h.offset);
		TIDES_ASSERT(want >= n);
		tides_buf_reset(&ra->buf);
		if (!tides_buf_reserve(&ra->buf, want))
			return tides_fail(err, TIDES_NO_MEMORY, "out of memory reading ahead at offset %llu of %s",
							  (unsigned long long) h.offset, src->fname);
		ra->off = h.offset;
		r = src->vfs->pread(src->vfs, src->fd, ra->buf.data, want, h.offset);
		if (r < 0)
			return tides_fail_io(err, (int) r, "read", src->fname);
		if ((size_t) r < n)
			return tides_fail(err, TIDES_CORRUPTION, "short read of block at offset %llu of %s",
							  (unsigned long long) h.offset, src->fname);
		ra->buf.len = (size_t) r;
		if (nread != NULL)
			*nread += (uint64_t) r;
		else
			count_file_read(src, (size_t) r);
	}
	if (nread == NULL)
		tides_process_io.blocks_read++;
	s = decode_block(src, h, ra->buf.data + (h.offset - ra->off), true, out, err);
	if (s != TIDES_OK)
		return s;
	*data = out->data;
	*len = out->len;
	return TIDES_OK;
}
