/*
 * format.h -- the byte-level pieces of an SSTable shared by the builder and
 * the reader: block handles, block trailers, the footer, the properties
 * block, and reading a block (cache first, else file + checksum +
 * decompression).  The full file layout is described in table/README.md.
 *
 *   block handle   varint64 offset | varint64 size  (size excludes the trailer)
 *   block trailer  1 byte compression type | uint32 masked crc32c of the
 *                  stored block bytes followed by the type byte
 *   footer         48 bytes at the end of the file:
 *                    0  uint64 top index offset     8  uint64 top index size
 *                   16  uint64 properties offset   24  uint64 properties size
 *                   32  uint32 format version      36  uint32 masked crc32c of [0, 36)
 *                   40  uint64 magic
 *
 * The footer uses fixed-width fields so that it can be found from the file
 * size alone, and carries its own checksum so that a flipped bit in a handle
 * is caught before the handle is used.
 */
#ifndef TIDES_TABLE_FORMAT_H
#define TIDES_TABLE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "table/sst.h"
#include "util/buf.h"
#include "util/status.h"

#define TIDES_SST_MAGIC			0x3174737365646974ull	/* "tidesst1" little-endian */
#define TIDES_SST_FORMAT_VERSION 1
#define TIDES_BLOCK_TRAILER		5
#define TIDES_FOOTER_SIZE		48
#define TIDES_HANDLE_MAX		(2 * TIDES_VARINT64_MAX)

typedef struct tides_block_handle
{
	uint64_t	offset;
	uint64_t	size;			/* stored bytes, without the trailer */
} tides_block_handle;

static inline void
tides_handle_encode(tides_buf *b, tides_block_handle h)
{
	tides_buf_put_varint(b, h.offset);
	tides_buf_put_varint(b, h.size);
}

/* NULL if malformed */
static inline const uint8_t *
tides_handle_decode(const uint8_t *p, const uint8_t *limit, tides_block_handle *h)
{
	if ((p = tides_decode_varint64(p, limit, &h->offset)) == NULL)
		return NULL;
	return tides_decode_varint64(p, limit, &h->size);
}

/* the 5 trailer bytes for stored bytes data[0..n) of the given type */
void		tides_block_trailer(uint8_t out[TIDES_BLOCK_TRAILER], const uint8_t *data,
								size_t n, uint8_t type);

typedef struct tides_footer
{
	tides_block_handle top_index;
	tides_block_handle props;
	uint32_t	version;
} tides_footer;

void		tides_footer_encode(uint8_t out[TIDES_FOOTER_SIZE], const tides_footer *f);
tides_status tides_footer_decode(const uint8_t in[TIDES_FOOTER_SIZE], tides_footer *f,
								 const char *fname, tides_error *err);

/*
 * Properties block: a version byte, then fixed uint64 fields (fixed width so
 * that its size, and hence the file size it records, is known before it is
 * encoded), then two length-prefixed keys.  Decoders ignore trailing bytes,
 * so later versions can append fields.
 */
typedef struct tides_props_ext
{
	uint32_t	num_partitions;
	uint32_t	prefix_len;		/* prefix filter length at build time */
	uint32_t	stem_suffix;	/* stem filter's suffix length (appended field; 0: none) */
	uint32_t	bloom_bits_per_key; /* 0: no filters */
	uint32_t	compression;
	/*
	 * An ingested table (db/ingest.c): every entry is stored with sequence
	 * number 0 and read as if it had global_seq, which the ingestion
	 * assigns when it installs the file (tides_sst_set_global_seq) -- 0
	 * until then.  Encoded after the keys as a tagged item (PROPS_ITEM_GSEQ,
	 * u64), which older readers ignore as trailing bytes.
	 */
	bool		has_global_seq;
	uint64_t	global_seq;
	uint32_t	global_seq_off;	/* decode: offset of the item in the block */

	/*
	 * The key ranges of the table's runs (README "Key ranges"): an encoded
	 * list, the payload of item PROPS_ITEM_RANGES (absent when
	 * ranges_len is 0).  Decode points into the decoded block.
	 */
	const uint8_t *ranges;
	size_t		ranges_len;
} tides_props_ext;

/*
 * Tagged items after the keys: a tag byte and 8 bytes each; the 8 bytes of
 * a RANGES item are the length of the payload that follows them.
 */
#define TIDES_PROPS_ITEM_SIZE 9
#define TIDES_PROPS_ITEM_GSEQ 1		/* global_seq */
#define TIDES_PROPS_ITEM_STEM 2		/* stem_suffix, when not 0 */
#define TIDES_PROPS_ITEM_RANGES 3	/* key ranges of runs, when any */

void		tides_props_encode(tides_buf *b, const tides_sst_props *p, const tides_props_ext *x);
tides_status tides_props_decode(const uint8_t *data, size_t len, tides_sst_props *p,
								tides_props_ext *x, const char *fname, tides_error *err);

/* where blocks of one open file come from */
typedef struct tides_block_source
{
	tides_vfs  *vfs;
	int			fd;
	uint64_t	file_number;
	const char *fname;
	tides_block_cache *cache;	/* may be NULL */
	tides_counters *counters;	/* may be NULL */
	uint64_t	limit;			/* blocks end before this offset (the footer) */
} tides_block_source;

typedef enum tides_read_mode
{
	TIDES_READ_FILL_CACHE,		/* look in the cache, insert on a miss */
	TIDES_READ_NO_FILL,			/* look in the cache, don't insert (scans) */
	TIDES_READ_BYPASS			/* always the file (verification) */
} tides_read_mode;

/*
 * A window of a file read ahead, for a pass over its data blocks in file
 * order (compaction's inputs): one pread of TIDES_READAHEAD_BYTES serves
 * the next few dozen blocks, where a block at a time was a system call and
 * a block cache probe each (reads of compaction inputs were half of a
 * compaction's CPU).  Zero it (tides_readahead_init) to start; the window is
 * refilled when a block lies outside it.
 */
#define TIDES_READAHEAD_BYTES (256u << 10)

typedef struct tides_readahead
{
	tides_buf	buf;			/* the window's bytes */
	uint64_t	off;			/* file offset of buf.data[0] */
} tides_readahead;

static inline void
tides_readahead_init(tides_readahead *ra)
{
	tides_buf_init(&ra->buf);
	ra->off = 0;
}

static inline void
tides_readahead_free(tides_readahead *ra)
{
	tides_buf_free(&ra->buf);
	tides_readahead_init(ra);
}

/*
 * Read a block's contents into out (its previous contents are lost);
 * data and len receive the block, inside out.  tmp is scratch for compressed bytes; both
 * buffers are kept by the caller and reused, so steady-state reads do not
 * allocate.  Blocks from the file are checksummed before anything else looks
 * at them.
 */
tides_status tides_read_block(const tides_block_source *src, tides_block_handle h,
							  tides_read_mode mode, tides_buf *out, tides_buf *tmp,
							  const uint8_t **data, size_t *len, tides_error *err);

/*
 * The same through a readahead window instead of the block cache (which
 * is neither looked in nor filled): the block's bytes come from ra's
 * window, refilled from the block's offset on when it lies outside.  The
 * bytes read go to the counters, or with nread to *nread alone (a helper
 * thread's reads, counted by its reader: tides_count_reads).
 */
tides_status tides_read_block_ahead(const tides_block_source *src, tides_block_handle h,
									tides_readahead *ra, tides_buf *out,
									const uint8_t **data, size_t *len, tides_error *err,
									uint64_t *nread);

/* count bytes read from src's file and blocks read, in this process and src's counters */
void		tides_count_reads(const tides_block_source *src, uint64_t bytes, uint64_t blocks);

#endif
