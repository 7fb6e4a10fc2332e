/*
 * compress.h -- per-block compression of SSTable blocks (none, lz4, zstd).
 *
 * A compressed block is stored as
 *
 *     varint32 uncompressed length | compressor payload
 *
 * The length prefix lets the reader size its output buffer exactly and
 * reject absurd sizes before allocating (lz4 cannot expand more than ~255x,
 * and zstd frames carry their own content size, which must agree).  A block
 * is stored uncompressed whenever compression would save less than 1/8 of
 * its size: decompressing costs CPU on every cache miss, and a small saving
 * is not worth that.
 *
 * Compression contexts are expensive to create (zstd's are ~100 KiB), so
 * the builder owns one (tides_compressor) and decompression uses one zstd
 * context per thread, created on first use and freed at thread exit.  The
 * builder's zstd blocks go through a dictionary of no content made once at
 * its level (a ZSTD_CDict; above level 3, the level set on the context
 * once): the frames are the same kind -- no dictionary id, the content
 * size, read by the plain decompressor -- but the context is not set up
 * again for every 4 KiB block (see compress.c).
 */
#ifndef TIDES_TABLE_COMPRESS_H
#define TIDES_TABLE_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tides_engine.h"
#include "util/buf.h"
#include "util/status.h"

typedef struct tides_compressor
{
	tides_compression type;
	int			level;
	void	   *zctx;			/* ZSTD_CCtx, created lazily */
	void	   *zcdict;			/* ZSTD_CDict of no content at level, created lazily */
	bool		zlevel_set;		/* no dictionary: zctx has level as a parameter */
} tides_compressor;

/* a compression the engine knows, at a level it takes (only zstd uses it; tides_engine.h) */
static inline bool
tides_compression_valid(tides_compression c, int level)
{
	return (c == TIDES_COMPRESS_NONE || c == TIDES_COMPRESS_LZ4 || c == TIDES_COMPRESS_ZSTD) &&
		level >= TIDES_ZSTD_FASTEST && level <= 22 && level != 0;
}

void		tides_compressor_init(tides_compressor *c, tides_compression type, int level);
void		tides_compressor_free(tides_compressor *c);

/*
 * Compress src into out (replacing its contents).  Returns the type actually
 * used: c->type if the result is worth keeping, TIDES_COMPRESS_NONE when the
 * caller should store src as it is (out is then unspecified).
 */
tides_compression tides_compress(tides_compressor *c, const uint8_t *src, size_t n,
								 tides_buf *out);

/*
 * Decompress a stored block of the given type into out (replacing its
 * contents).  Any inconsistency is TIDES_CORRUPTION with a message naming
 * the block ("... in block at offset 4096 of 000012.sst": offset, fname).
 */
tides_status tides_decompress(tides_compression type, const uint8_t *src, size_t n,
							  tides_buf *out, const char *fname, uint64_t offset,
							  tides_error *err);

#endif
