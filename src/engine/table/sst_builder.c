/*
 * sst_builder.c -- writing an SSTable in one pass.
 *
 * Data blocks are written as they fill, and so are index and filter
 * partitions: each goes into the file right after the last data block it
 * indexes.  Only the top index's entries (a separator and two handles per
 * partition) are kept until the end.  So a builder's memory does not grow
 * with its file: a compaction writes outputs of any size (a level-0 merge
 * writes one file of hundreds of megabytes) in a few megabytes.  Keeping
 * the partitions for the end (filters are 10 bits per key) made such a
 * merge hold tens of megabytes, and with two of them at once a server
 * under a 256 MB memory cap met the OOM killer.  The reader finds every
 * partition through the top index's handles, wherever it lies; a scan
 * steps over the few small metadata blocks between data blocks.
 *
 * Block cut rule: before adding an entry to a non-empty data block, the
 * block is cut if it already reached block_size, or if the entry would take
 * it past block_size and the block is at least 7/8 full.  So blocks end
 * within 1/8 of the target unless one entry alone is large; a big value then
 * makes one big block rather than a run of tiny half-empty ones (the same
 * trade RocksDB's block_size_deviation makes).  Cutting *before* an add
 * means the next key is known, which the index separator needs.
 *
 * Index separators: for a block ending with key A followed by key B, the
 * separator is the shortest user key S with A <= S < B (when one shorter
 * than B's user key exists), tagged with the largest trailer so that S sorts
 * before every real version of S; otherwise A itself.  Short separators keep
 * index partitions small, hence more blocks per partition and fewer
 * partitions per lookup.
 *
 * Index partitions are cut when the data blocks handed to the encoder
 * since the last cut would give the partition about meta_target bytes (an
 * estimate per entry: its separator plus a bound on handle and entry
 * overhead), decided when a block is handed over: then the partition's
 * filter is finished too, holding exactly the keys of its blocks.
 *
 * Data blocks are encoded through a block pipe (block_pipe.h): at once, or,
 * for a builder given a helper (tides_sst_builder_set_helper: a load that
 * is its process's only work), by a helper thread while the builder goes
 * on with the next block.  A block's index entry needs its file offset and
 * stored size, so everything after the encoding -- its bytes in the write
 * buffer, its index entry, the partition it ends -- happens when the
 * builder takes it back, in order; what depends only on keys (separator,
 * filter, partition cut) was settled when it was handed over.
 *
 * Output is gathered in a write buffer and written with large pwrites;
 * nothing is fsynced here.
 */
#include "table/sst.h"

#include <stdlib.h>
#include <string.h>

#include "util/dbformat.h"
#include "table/block_builder.h"
#include "table/block_pipe.h"
#include "table/compress.h"
#include "table/filter.h"
#include "table/format.h"
#include "util/assert.h"

#define WRITE_CHUNK (1u << 20)
#define MAX_ENTRY_LEN ((size_t) 1 << 30)
/* an index entry's bytes besides its separator: handle, three varints, restart */
#define PART_ENTRY_EST (TIDES_HANDLE_MAX / 2 + 3 + 4)

/* a data block in the pipe: what its index entry needs once it is encoded */
typedef struct pending_block
{
	tides_buf	sep;			/* its index separator */
	bool		ends_part;		/* the last block of an index partition */
	tides_buf	filter;			/* then: that partition's filter block, with trailer */
} pending_block;

struct tides_sst_builder
{
	tides_table_env env;
	int			fd;
	char	   *fname;
	uint32_t	meta_target;	/* index partition size target */

	tides_buf	wbuf;			/* output not yet written */
	uint64_t	wbuf_off;		/* file offset of wbuf.data[0] */

	tides_block_builder data;
	tides_block_builder part;	/* current index partition */
	tides_filter_builder filter;
	bool		use_filter;
	tides_compressor comp;		/* index partitions' */
	tides_buf	cbuf;			/* compression output */
	tides_block_pipe *pipe;		/* data blocks being encoded */
	pending_block pend[TIDES_BLOCK_PIPE_DEPTH]; /* by block number % the pipe's depth */
	uint64_t	blocks_indexed;
	uint64_t	part_est;		/* estimated bytes of the partition being cut */

	tides_buf	last_key;
	tides_buf	first_key;
	tides_buf	sep;			/* the last separator handed over */
	tides_buf	handle;
	tides_buf	part_sep;		/* the last separator indexed */

	/* key ranges of runs (README "Key ranges"): the finished runs' first and
	 * last user keys (two slices each), and the current run's first key */
	tides_buf	ranges;
	uint32_t	nranges;
	tides_buf	run_first;

	/* per finished partition: sep slice, then the file offset and size of
	 * its index block and of its filter block (4 varints) */
	tides_buf	meta;
	uint32_t	nparts;

	tides_sst_props props;
	bool		ingest;			/* tides_sst_builder_set_ingest */
	bool		have_key;
	bool		finished;
	tides_status status;
	tides_error err;
};

tides_sst_builder *
tides_sst_builder_new(const tides_table_env *env, int fd, const char *fname)
{
	tides_sst_builder *b = calloc(1, sizeof(*b));

	if (b == NULL)
		return NULL;
	b->env = *env;
	if (b->env.block_size < 64)
		b->env.block_size = 64;
	b->fd = fd;
	b->fname = strdup(fname ? fname : "");
	b->meta_target = b->env.block_size;
	tides_buf_init(&b->wbuf);
	tides_block_builder_init(&b->data, env->restart_interval ? env->restart_interval : 16);
	tides_block_builder_init(&b->part, 1);
	b->use_filter = env->bloom_bits_per_key > 0;
	tides_filter_builder_init(&b->filter, env->bloom_bits_per_key, env->prefix_len,
							  env->stem_suffix);
	tides_compressor_init(&b->comp, env->compression, env->compression_level);
	tides_buf_init(&b->cbuf);
	tides_buf_init(&b->last_key);
	tides_buf_init(&b->first_key);
	tides_buf_init(&b->sep);
	tides_buf_init(&b->handle);
	tides_buf_init(&b->part_sep);
	tides_buf_init(&b->meta);
	tides_buf_init(&b->ranges);
	tides_buf_init(&b->run_first);
	for (int i = 0; i < TIDES_BLOCK_PIPE_DEPTH; i++)
	{
		tides_buf_init(&b->pend[i].sep);
		tides_buf_init(&b->pend[i].filter);
	}
	b->pipe = tides_block_pipe_new(env->compression, env->compression_level, false);
	b->props.min_seq = UINT64_MAX;
	tides_error_clear(&b->err);
	b->status = b->fname && b->pipe ? TIDES_OK :
		tides_fail(&b->err, TIDES_NO_MEMORY, "out of memory");
	return b;
}

bool
tides_sst_builder_set_helper(tides_sst_builder *b)
{
	tides_block_pipe *p;

	TIDES_ASSERT(b->props.num_data_blocks == 0);
	if (b->status != TIDES_OK)
		return false;
	p = tides_block_pipe_new(b->env.compression, b->env.compression_level, true);
	if (p == NULL)
		return false;
	tides_block_pipe_free(b->pipe);
	b->pipe = p;
	return tides_block_pipe_threaded(p);
}

void
tides_sst_builder_set_ingest(tides_sst_builder *b)
{
	b->ingest = true;
}

void
tides_sst_builder_free(tides_sst_builder *b)
{
	if (b == NULL)
		return;
	tides_block_pipe_free(b->pipe);	/* first: stops the helper */
	for (int i = 0; i < TIDES_BLOCK_PIPE_DEPTH; i++)
	{
		tides_buf_free(&b->pend[i].sep);
		tides_buf_free(&b->pend[i].filter);
	}
	tides_buf_free(&b->wbuf);
	tides_block_builder_free(&b->data);
	tides_block_builder_free(&b->part);
	tides_filter_builder_free(&b->filter);
	tides_compressor_free(&b->comp);
	tides_buf_free(&b->cbuf);
	tides_buf_free(&b->last_key);
	tides_buf_free(&b->first_key);
	tides_buf_free(&b->sep);
	tides_buf_free(&b->handle);
	tides_buf_free(&b->part_sep);
	tides_buf_free(&b->meta);
	tides_buf_free(&b->ranges);
	tides_buf_free(&b->run_first);
	free(b->fname);
	free(b);
}

static tides_status
fail_oom(tides_sst_builder *b)
{
	b->status = tides_fail(&b->err, TIDES_NO_MEMORY, "out of memory building %s", b->fname);
	return b->status;
}

static tides_status
flush_wbuf(tides_sst_builder *b)
{
	int64_t		r;

	if (b->wbuf.len == 0)
		return TIDES_OK;
	r = b->env.vfs->pwrite(b->env.vfs, b->fd, b->wbuf.data, b->wbuf.len, b->wbuf_off);
	if (r < 0)
		return b->status = tides_fail_io(&b->err, (int) r, "write", b->fname);
	b->wbuf_off += b->wbuf.len;
	tides_buf_reset(&b->wbuf);
	return TIDES_OK;
}

/* append raw (compressed if asked and worthwhile) and its trailer to dest */
static void
encode_block(tides_sst_builder *b, const uint8_t *raw, size_t n, bool compress,
			 tides_buf *dest, uint64_t *rel, uint64_t *size)
{
	tides_block_encode(&b->comp, &b->cbuf, raw, n, compress, dest, rel, size);
}

/* separator between internal keys a < b (b NULL: a successor of a) */
static void
make_separator(tides_buf *out, const uint8_t *a, size_t alen, const uint8_t *bk, size_t blen)
{
	size_t		ua = alen - TIDES_TRAILER;
	size_t		i = 0;
	uint8_t		trailer[TIDES_TRAILER];

	tides_buf_reset(out);
	tides_put64(trailer, tides_pack_trailer(TIDES_MAX_SEQ, TIDES_KT_SEEK));
	if (bk != NULL)
	{
		size_t		ub = blen - TIDES_TRAILER;
		size_t		n = ua < ub ? ua : ub;

		while (i < n && a[i] == bk[i])
			i++;
		if (i < n && a[i] < 0xff && a[i] + 1 < bk[i])
		{
			uint8_t		c = a[i] + 1;

			tides_buf_append(out, a, i);
			tides_buf_append(out, &c, 1);
			tides_buf_append(out, trailer, TIDES_TRAILER);
			return;
		}
	}
	else
	{
		/* shortest user key above a's: bump the first byte that can be */
		for (i = 0; i < ua; i++)
		{
			if (a[i] != 0xff)
			{
				uint8_t		c = a[i] + 1;

				tides_buf_append(out, a, i);
				tides_buf_append(out, &c, 1);
				tides_buf_append(out, trailer, TIDES_TRAILER);
				return;
			}
		}
	}
	tides_buf_append(out, a, alen);
}

/* the filter of the keys added since the last one, with its trailer, to dest */
static void
append_filter(tides_sst_builder *b, tides_buf *dest)
{
	uint8_t		trailer[TIDES_BLOCK_TRAILER];
	size_t		frel = dest->len;

	tides_filter_builder_finish(&b->filter, dest);
	if (!dest->oom)
		tides_block_trailer(trailer, dest->data + frel, dest->len - frel, TIDES_COMPRESS_NONE);
	tides_buf_append(dest, trailer, sizeof(trailer));
}

/*
 * Write out the current index partition and its filter, after its data:
 * filter is the one finished when its last block was handed over, or NULL
 * to finish it now (the file's last partition).
 */
static void
finish_partition(tides_sst_builder *b, const tides_buf *filter)
{
	const uint8_t *raw;
	size_t		n;
	uint64_t	prel,
				psize,
				foff = 0,
				fsize = 0;

	raw = tides_block_builder_finish(&b->part, &n);
	encode_block(b, raw, n, true, &b->wbuf, &prel, &psize);
	tides_block_builder_reset(&b->part);
	if (b->use_filter)
	{
		size_t		frel = b->wbuf.len;

		if (filter != NULL)
			tides_buf_append(&b->wbuf, filter->data, filter->len);
		else
			append_filter(b, &b->wbuf);
		fsize = b->wbuf.len - frel - TIDES_BLOCK_TRAILER;
		foff = b->wbuf_off + frel;
	}
	tides_buf_put_slice(&b->meta, b->part_sep.data, b->part_sep.len);
	tides_buf_put_varint(&b->meta, b->wbuf_off + prel);
	tides_buf_put_varint(&b->meta, psize);
	tides_buf_put_varint(&b->meta, foff);
	tides_buf_put_varint(&b->meta, fsize);
	b->nparts++;
}

/*
 * Did any of the builder's buffers fail to grow?  Their out-of-memory flags
 * are sticky and appends after a failure are dropped, so one check before
 * anything derived from them is written is enough -- but it must come before
 * that, and before a buffer is freed or reset for reuse.
 */
static bool
builder_oom(const tides_sst_builder *b)
{
	return b->wbuf.oom || b->sep.oom || b->meta.oom ||
		b->cbuf.oom || b->part_sep.oom || b->handle.oom || b->last_key.oom ||
		b->first_key.oom || b->filter.hashes.oom || tides_block_builder_oom(&b->part) ||
		tides_block_builder_oom(&b->data);
}

/* take the oldest block back from the pipe: write it and index it */
static tides_status
index_block(tides_sst_builder *b)
{
	pending_block *pb = &b->pend[b->blocks_indexed % tides_block_pipe_depth(b->pipe)];
	const uint8_t *data;
	size_t		len;
	uint64_t	size;
	tides_block_handle h;

	if (!tides_block_pipe_take(b->pipe, &data, &len, &size))
		return fail_oom(b);
	h.offset = b->wbuf_off + b->wbuf.len;
	h.size = size;
	tides_buf_append(&b->wbuf, data, len);
	tides_block_pipe_release(b->pipe);
	b->blocks_indexed++;
	b->props.data_bytes += size + TIDES_BLOCK_TRAILER;

	tides_buf_reset(&b->handle);
	tides_handle_encode(&b->handle, h);
	tides_block_builder_add(&b->part, pb->sep.data, pb->sep.len, b->handle.data, b->handle.len);
	tides_buf_reset(&b->part_sep);
	tides_buf_append(&b->part_sep, pb->sep.data, pb->sep.len);
	if (pb->ends_part)
		finish_partition(b, &pb->filter);

	if (builder_oom(b))
		return fail_oom(b);
	if (b->wbuf.len >= WRITE_CHUNK)
		return flush_wbuf(b);
	return TIDES_OK;
}

/* hand the current data block to the pipe; next is the key that follows */
static tides_status
submit_block(tides_sst_builder *b, const uint8_t *next, size_t nlen)
{
	pending_block *pb;
	const uint8_t *raw;
	size_t		n;

	if (tides_block_builder_oom(&b->data))
		return fail_oom(b);
	if (!tides_block_pipe_room(b->pipe) && index_block(b) != TIDES_OK)
		return b->status;
	pb = &b->pend[b->props.num_data_blocks % tides_block_pipe_depth(b->pipe)];
	make_separator(&pb->sep, b->last_key.data, b->last_key.len, next, nlen);
	/*
	 * The index's contract (table/README.md): last <= S < next, and each
	 * separator above the one before it (sep: the previous block's), so
	 * the partitions and the top index are sorted too.
	 */
	TIDES_ASSERT(pb->sep.oom || builder_oom(b) ||
				 tides_ikey_cmp(b->last_key.data, b->last_key.len, pb->sep.data, pb->sep.len) <= 0);
	TIDES_ASSERT(pb->sep.oom || builder_oom(b) || next == NULL ||
				 tides_ikey_cmp(pb->sep.data, pb->sep.len, next, nlen) < 0);
	TIDES_ASSERT(pb->sep.oom || builder_oom(b) || b->props.num_data_blocks == 0 ||
				 tides_ikey_cmp(b->sep.data, b->sep.len, pb->sep.data, pb->sep.len) < 0);
	raw = tides_block_builder_finish(&b->data, &n);
	tides_block_pipe_submit(b->pipe, raw, n);
	tides_block_builder_reset(&b->data);
	b->props.num_data_blocks++;
	tides_buf_reset(&b->sep);
	tides_buf_append(&b->sep, pb->sep.data, pb->sep.len);

	b->part_est += pb->sep.len + PART_ENTRY_EST;
	pb->ends_part = b->part_est >= b->meta_target;
	if (pb->ends_part)
	{
		b->part_est = 0;
		tides_buf_reset(&pb->filter);
		if (b->use_filter)
			append_filter(b, &pb->filter);
	}
	if (pb->sep.oom || pb->filter.oom || builder_oom(b))
		return fail_oom(b);
	/* encoded at once: index it now, as if there were no pipe */
	if (!tides_block_pipe_threaded(b->pipe))
		return index_block(b);
	return TIDES_OK;
}

/* ---------------------------------------------------------- key ranges */

/* do two user keys start the same run (the same first range_prefix_len bytes)? */
static bool
same_run(const tides_sst_builder *b, const uint8_t *a, size_t alen, const uint8_t *k, size_t klen)
{
	size_t		g = b->env.range_prefix_len;
	size_t		ga = alen < g ? alen : g;
	size_t		gk = klen < g ? klen : g;

	return ga == gk && memcmp(a, k, ga) == 0;
}

/* the current run ends at the last key added: record its range */
static void
close_run(tides_sst_builder *b)
{
	TIDES_ASSERT(b->have_key);
	tides_buf_put_slice(&b->ranges, b->run_first.data, b->run_first.len);
	tides_buf_put_slice(&b->ranges, b->last_key.data, b->last_key.len - TIDES_TRAILER);
	b->nranges++;
}

/*
 * Before ukey is added (last_key is still the previous key): a key of
 * another run closes the current one, unless the list is full -- then the
 * last run goes on to the end of the file, which only makes it wider.
 */
static void
track_runs(tides_sst_builder *b, const uint8_t *ukey, size_t ulen)
{
	if (b->have_key)
	{
		if (b->nranges + 1 >= TIDES_SST_MAX_RANGES ||
			same_run(b, b->last_key.data, b->last_key.len - TIDES_TRAILER, ukey, ulen))
			return;
		close_run(b);
	}
	tides_buf_reset(&b->run_first);
	tides_buf_append(&b->run_first, ukey, ulen);
}

tides_status
tides_sst_builder_add(tides_sst_builder *b, const uint8_t *ikey, size_t iklen,
					  const uint8_t *val, size_t vlen, tides_error *err)
{
	uint64_t	seq;

	if (b->status != TIDES_OK)
		goto fail;
	if (b->finished || !tides_ikey_valid(ikey, iklen) || iklen > MAX_ENTRY_LEN ||
		vlen > MAX_ENTRY_LEN)
		return tides_fail(err, TIDES_INVALID, "invalid entry added to %s", b->fname);
	if (b->have_key && tides_ikey_cmp(b->last_key.data, b->last_key.len, ikey, iklen) >= 0)
		return tides_fail(err, TIDES_INVALID, "keys added out of order to %s", b->fname);

	if (!tides_block_builder_empty(&b->data))
	{
		size_t		cur = tides_block_builder_estimate(&b->data);
		size_t		bs = b->env.block_size;
		size_t		entry = iklen + vlen + 3 * TIDES_VARINT32_MAX;

		if (cur >= bs || (cur + entry > bs && cur >= bs - bs / 8))
		{
			if (submit_block(b, ikey, iklen) != TIDES_OK)
				goto fail;
		}
	}

	if (b->use_filter)
		tides_filter_builder_add(&b->filter, ikey, iklen - TIDES_TRAILER);
	tides_block_builder_add(&b->data, ikey, iklen, val, vlen);
	if (b->env.range_prefix_len > 0)
		track_runs(b, ikey, iklen - TIDES_TRAILER);

	if (!b->have_key)
	{
		tides_buf_append(&b->first_key, ikey, iklen);
		b->have_key = true;
	}
	tides_buf_reset(&b->last_key);
	tides_buf_append(&b->last_key, ikey, iklen);
	if (b->last_key.oom || b->first_key.oom || b->filter.hashes.oom ||
		b->ranges.oom || b->run_first.oom)
	{
		fail_oom(b);
		goto fail;
	}

	seq = tides_ikey_seq(ikey, iklen);
	b->props.num_entries++;
	if (tides_ikey_type(ikey, iklen) == TIDES_KT_DELETE)
		b->props.num_deletions++;
	b->props.raw_key_bytes += iklen;
	b->props.raw_value_bytes += vlen;
	if (seq < b->props.min_seq)
		b->props.min_seq = seq;
	if (seq > b->props.max_seq)
		b->props.max_seq = seq;
	return TIDES_OK;

fail:
	if (err != NULL)
		*err = b->err;
	return b->status;
}

uint64_t
tides_sst_builder_size(const tides_sst_builder *b)
{
	return b->wbuf_off + b->wbuf.len + tides_block_pipe_raw_bytes(b->pipe) +
		tides_block_builder_estimate(&b->data) +
		tides_block_builder_estimate(&b->part) +
		tides_filter_builder_count(&b->filter) * b->env.bloom_bits_per_key / 8 +
		TIDES_FOOTER_SIZE;
}

uint64_t
tides_sst_builder_entries(const tides_sst_builder *b)
{
	return b->props.num_entries;
}

static uint8_t *
dup_bytes(const uint8_t *p, size_t n)
{
	uint8_t    *d = malloc(n ? n : 1);

	if (d != NULL && n)
		memcpy(d, p, n);
	return d;
}

/*
 * The top index, after the last partition: per partition its last
 * separator -> (index partition handle, filter partition handle), from the
 * entries finish_partition recorded in b->meta.  Sets *handle; on failure
 * (memory) the builder's status says so.
 */
static tides_status
write_top_index(tides_sst_builder *b, tides_block_handle *handle)
{
	tides_block_builder top;
	const uint8_t *p = b->meta.data;
	const uint8_t *limit = b->meta.data + b->meta.len;
	const uint8_t *raw;
	size_t		n;
	uint64_t	rel;
	bool		oom;

	tides_block_builder_init(&top, 1);
	for (uint32_t i = 0; i < b->nparts; i++)
	{
		uint64_t	slen = 0,
					v[4] = {0};
		const uint8_t *sep;
		tides_block_handle ph,
					fh;

		/* our own encoding: cannot fail unless memory ran out earlier */
		p = tides_decode_varint64(p, limit, &slen);
		if (p == NULL || slen > (uint64_t) (limit - p))
			break;
		sep = p;
		p += slen;
		for (int j = 0; j < 4 && p != NULL; j++)
			p = tides_decode_varint64(p, limit, &v[j]);
		if (p == NULL)
			break;
		ph.offset = v[0];
		ph.size = v[1];
		fh.offset = v[2];
		fh.size = v[3];
		TIDES_ASSERT(ph.offset + ph.size <= b->wbuf_off + b->wbuf.len);
		TIDES_ASSERT(b->use_filter || (fh.offset == 0 && fh.size == 0));
		tides_buf_reset(&b->handle);
		tides_handle_encode(&b->handle, ph);
		tides_handle_encode(&b->handle, fh);
		tides_block_builder_add(&top, sep, slen, b->handle.data, b->handle.len);
	}
	if (b->meta.oom)
	{
		tides_block_builder_free(&top);
		return fail_oom(b);
	}
	raw = tides_block_builder_finish(&top, &n);
	encode_block(b, raw, n, false, &b->wbuf, &rel, &handle->size);
	handle->offset = b->wbuf_off + rel;
	oom = tides_block_builder_oom(&top);
	tides_block_builder_free(&top);
	return oom ? fail_oom(b) : TIDES_OK;
}

/*
 * The properties block, after the top index.  Properties are fixed-width,
 * so the file size they state is known before encoding them: encode once to
 * learn the size, then again with file_size set.  Sets *handle.
 */
static tides_status
write_properties(tides_sst_builder *b, uint64_t footer_and_trailer, tides_block_handle *handle)
{
	tides_props_ext x;
	tides_buf	pbuf,
				runs;
	uint64_t	rel,
				size;

	if (b->props.num_entries == 0)
		b->props.min_seq = 0;
	b->props.smallest = b->first_key.data;
	b->props.smallest_len = b->first_key.len;
	b->props.largest = b->last_key.data;
	b->props.largest_len = b->last_key.len;
	b->props.prefix_len = b->use_filter ? b->env.prefix_len : 0;
	b->props.num_partitions = b->nparts;
	x.num_partitions = b->nparts;
	x.prefix_len = b->props.prefix_len;
	b->props.stem_suffix = b->use_filter ? b->env.stem_suffix : 0;
	x.stem_suffix = b->props.stem_suffix;
	x.bloom_bits_per_key = b->use_filter ? b->env.bloom_bits_per_key : 0;
	x.compression = (uint32_t) b->env.compression;
	x.has_global_seq = b->ingest;
	x.global_seq = 0;			/* assigned when the file is installed */
	x.ranges = NULL;
	x.ranges_len = 0;
	tides_buf_init(&runs);
	if (b->env.range_prefix_len > 0 && b->have_key)
	{
		/* the payload: the number of runs, then their ranges */
		close_run(b);
		tides_buf_put_varint(&runs, b->nranges);
		tides_buf_append(&runs, b->ranges.data, b->ranges.len);
		if (b->ranges.oom || runs.oom)
		{
			tides_buf_free(&runs);
			return fail_oom(b);
		}
		x.ranges = runs.data;
		x.ranges_len = runs.len;
	}
	tides_buf_init(&pbuf);
	tides_props_encode(&pbuf, &b->props, &x);
	handle->offset = b->wbuf_off + b->wbuf.len;
	handle->size = pbuf.len;
	b->props.file_size = handle->offset + pbuf.len + footer_and_trailer;
	tides_buf_reset(&pbuf);
	tides_props_encode(&pbuf, &b->props, &x);
	/* the keys stay the builder's; props holds them only while encoding */
	b->props.smallest = b->props.largest = NULL;
	tides_buf_free(&runs);
	/*
	 * Check the properties buffer before using or freeing it: a failed
	 * encode leaves it short (or without data), and tides_buf_free()
	 * resets the sticky oom flag along with everything else.
	 */
	if (pbuf.oom)
	{
		tides_buf_free(&pbuf);
		return fail_oom(b);
	}
	encode_block(b, pbuf.data, pbuf.len, false, &b->wbuf, &rel, &size);	/* never compressed */
	tides_buf_free(&pbuf);
	return TIDES_OK;
}

/*
 * Finish: the last data block and partition; the top index; the
 * properties; the footer.  Then write out what is buffered and hand the
 * properties to the caller.
 */
tides_status
tides_sst_builder_finish(tides_sst_builder *b, tides_sst_props *props, tides_error *err)
{
	tides_footer footer;

	if (b->status != TIDES_OK || b->finished)
		goto fail;
	b->finished = true;

	if (!tides_block_builder_empty(&b->data) && submit_block(b, NULL, 0) != TIDES_OK)
		goto fail;
	while (tides_block_pipe_pending(b->pipe) > 0)
	{
		if (index_block(b) != TIDES_OK)
			goto fail;
	}
	if (!tides_block_builder_empty(&b->part))
		finish_partition(b, NULL);
	if (builder_oom(b))
	{
		fail_oom(b);
		goto fail;
	}

	if (write_top_index(b, &footer.top_index) != TIDES_OK ||
		write_properties(b, TIDES_BLOCK_TRAILER + TIDES_FOOTER_SIZE, &footer.props) != TIDES_OK)
		goto fail;

	footer.version = TIDES_SST_FORMAT_VERSION;
	if (tides_buf_reserve(&b->wbuf, TIDES_FOOTER_SIZE))
	{
		tides_footer_encode(b->wbuf.data + b->wbuf.len, &footer);
		b->wbuf.len += TIDES_FOOTER_SIZE;
	}
	if (b->wbuf.oom)
	{
		fail_oom(b);
		goto fail;
	}
	if (flush_wbuf(b) != TIDES_OK)
		goto fail;

	if (props != NULL)
	{
		*props = b->props;
		props->smallest = dup_bytes(b->first_key.data, b->first_key.len);
		props->largest = dup_bytes(b->last_key.data, b->last_key.len);
		props->smallest_len = b->first_key.len;
		props->largest_len = b->last_key.len;
		if (props->smallest == NULL || props->largest == NULL)
		{
			tides_sst_props_free(props);
			fail_oom(b);
			goto fail;
		}
	}
	return TIDES_OK;

fail:
	if (b->status == TIDES_OK)
		b->status = tides_fail(&b->err, TIDES_INVALID, "builder of %s already finished",
							   b->fname);
	if (err != NULL)
		*err = b->err;
	return b->status;
}
