/*
 * compress.c -- lz4 and zstd block compression with a length prefix.
 *
 * The reader never trusts the stored uncompressed length beyond what the
 * codec could have produced from the stored bytes: a flipped byte that got
 * past the checksum (or a fuzzer calling us directly) must not make us
 * allocate gigabytes or write past the buffer.
 */
#include "table/compress.h"

#include <pthread.h>
#include <stdlib.h>

#include <lz4.h>
#include <zstd.h>

#define MAX_BLOCK_RAW ((size_t) 1 << 31)	/* restart offsets are 32-bit */

void
tides_compressor_init(tides_compressor *c, tides_compression type, int level)
{
	c->type = type;
	c->level = level;
	c->zctx = NULL;
	c->zcdict = NULL;
	c->zlevel_set = false;
}

void
tides_compressor_free(tides_compressor *c)
{
	if (c->zctx != NULL)
		ZSTD_freeCCtx(c->zctx);
	if (c->zcdict != NULL)
		ZSTD_freeCDict(c->zcdict);
	c->zctx = NULL;
	c->zcdict = NULL;
	c->zlevel_set = false;
}

/*
 * One zstd frame of src.  ZSTD_compressCCtx derives the parameters from the
 * level and the size and prepares the context for them on every call, a
 * large part of the work on a 4 KiB block.  Up to level
 * ZSTD_CDICT_MAX_LEVEL, a dictionary of no content carries the parameters
 * (those of a large input: 113 KB at level 1, 0.8 MB at 3, but 17 MB at 9
 * and 671 MB at 22, hence the bound), and a context compressing with it
 * keeps its tables between blocks; above it, the level is set on the
 * context once (ZSTD_compress2, sized for each block).  zstd 1.5.4, 4 KiB
 * blocks of sorted index keys and of table rows, MB/s of input: level 1
 * 210 -> 262 and 288 -> 360 with the dictionary (ratio the same or 1%
 * better), 235 and 334 with the level set once; level 3 146 -> 226 and 240
 * -> 301 (ratio 0.4-1.4% lower); bench/results/2026-12-07-1830-zstd-cdict.md.
 * Without memory for the dictionary, the level set once.
 */
#define ZSTD_CDICT_MAX_LEVEL 3

static size_t
zstd_frame(tides_compressor *c, uint8_t *dst, size_t cap, const uint8_t *src, size_t n)
{
	if (c->level <= ZSTD_CDICT_MAX_LEVEL && c->zcdict == NULL && !c->zlevel_set)
		c->zcdict = ZSTD_createCDict(NULL, 0, c->level);
	if (c->zcdict != NULL)
		return ZSTD_compress_usingCDict(c->zctx, dst, cap, src, n, c->zcdict);
	if (!c->zlevel_set)
	{
		size_t		r = ZSTD_CCtx_setParameter(c->zctx, ZSTD_c_compressionLevel, c->level);

		if (ZSTD_isError(r))
			return r;
		c->zlevel_set = true;
	}
	return ZSTD_compress2(c->zctx, dst, cap, src, n);
}

tides_compression
tides_compress(tides_compressor *c, const uint8_t *src, size_t n, tides_buf *out)
{
	size_t		bound;
	size_t		hdr;
	size_t		clen;

	if (c->type == TIDES_COMPRESS_NONE || n < 64 || n >= MAX_BLOCK_RAW)
		return TIDES_COMPRESS_NONE;

	if (c->type == TIDES_COMPRESS_LZ4)
		bound = (size_t) LZ4_compressBound((int) n);
	else if (c->type == TIDES_COMPRESS_ZSTD)
		bound = ZSTD_compressBound(n);
	else
		return TIDES_COMPRESS_NONE;

	tides_buf_reset(out);
	tides_buf_put_varint(out, n);
	hdr = out->len;
	if (!tides_buf_reserve(out, bound))
		return TIDES_COMPRESS_NONE;

	if (c->type == TIDES_COMPRESS_LZ4)
	{
		int			r = LZ4_compress_default((const char *) src, (char *) out->data + hdr,
											 (int) n, (int) bound);

		if (r <= 0)
			return TIDES_COMPRESS_NONE;
		clen = (size_t) r;
	}
	else
	{
		if (c->zctx == NULL && (c->zctx = ZSTD_createCCtx()) == NULL)
			return TIDES_COMPRESS_NONE;
		clen = zstd_frame(c, out->data + hdr, bound, src, n);
		if (ZSTD_isError(clen))
			return TIDES_COMPRESS_NONE;
	}
	out->len = hdr + clen;

	/* not worth a decompression on every cache miss */
	if (out->len > n - n / 8)
		return TIDES_COMPRESS_NONE;
	return c->type;
}

/* one zstd decompression context per thread, freed when the thread exits */
static pthread_key_t dctx_key;
static pthread_once_t dctx_once = PTHREAD_ONCE_INIT;

static void
dctx_free(void *p)
{
	ZSTD_freeDCtx(p);
}

static void
dctx_key_init(void)
{
	pthread_key_create(&dctx_key, dctx_free);
}

static ZSTD_DCtx *
thread_dctx(void)
{
	ZSTD_DCtx  *d;

	pthread_once(&dctx_once, dctx_key_init);
	d = pthread_getspecific(dctx_key);
	if (d == NULL)
	{
		d = ZSTD_createDCtx();
		if (d != NULL)
			pthread_setspecific(dctx_key, d);
	}
	return d;
}

/* where a failed block is: formatted only on failure (every block read calls here) */
#define AT " in block at offset %llu of %s"
#define AT_ARGS (unsigned long long) offset, fname

tides_status
tides_decompress(tides_compression type, const uint8_t *src, size_t n,
				 tides_buf *out, const char *fname, uint64_t offset, tides_error *err)
{
	const uint8_t *limit = src + n;
	const uint8_t *p;
	uint64_t	raw;
	size_t		plen;

	p = tides_decode_varint64(src, limit, &raw);
	if (p == NULL)
		return tides_fail(err, TIDES_CORRUPTION, "bad compressed length" AT, AT_ARGS);
	plen = (size_t) (limit - p);
	if (raw >= MAX_BLOCK_RAW)
		return tides_fail(err, TIDES_CORRUPTION, "impossible block length %llu" AT,
						  (unsigned long long) raw, AT_ARGS);

	if (type == TIDES_COMPRESS_LZ4)
	{
		int			r;

		/* lz4's maximum expansion is 255x plus a little */
		if (raw > (uint64_t) plen * 255 + 16)
			return tides_fail(err, TIDES_CORRUPTION, "impossible lz4 length %llu" AT,
							  (unsigned long long) raw, AT_ARGS);
		tides_buf_reset(out);
		if (!tides_buf_reserve(out, raw + 1))
			return tides_fail(err, TIDES_NO_MEMORY, "out of memory decompressing" AT, AT_ARGS);
		r = LZ4_decompress_safe((const char *) p, (char *) out->data, (int) plen, (int) raw);
		if (r < 0 || (uint64_t) r != raw)
			return tides_fail(err, TIDES_CORRUPTION, "lz4 data corrupt" AT, AT_ARGS);
	}
	else if (type == TIDES_COMPRESS_ZSTD)
	{
		unsigned long long fsz = ZSTD_getFrameContentSize(p, plen);
		ZSTD_DCtx  *d;
		size_t		r;

		if (fsz != raw)
			return tides_fail(err, TIDES_CORRUPTION, "zstd frame size mismatch" AT, AT_ARGS);
		d = thread_dctx();
		if (d == NULL)
			return tides_fail(err, TIDES_NO_MEMORY, "out of memory decompressing" AT, AT_ARGS);
		tides_buf_reset(out);
		if (!tides_buf_reserve(out, raw + 1))
			return tides_fail(err, TIDES_NO_MEMORY, "out of memory decompressing" AT, AT_ARGS);
		r = ZSTD_decompressDCtx(d, out->data, raw, p, plen);
		if (ZSTD_isError(r) || r != raw)
			return tides_fail(err, TIDES_CORRUPTION, "zstd data corrupt" AT, AT_ARGS);
	}
	else
		return tides_fail(err, TIDES_CORRUPTION, "unknown compression type %d" AT,
						  (int) type, AT_ARGS);
	out->len = raw;
	return TIDES_OK;
}
