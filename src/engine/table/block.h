/*
 * block.h -- reading blocks built by block_builder.h.
 *
 * A tides_block_iter walks one block in memory it does not own (a buffer of
 * the SSTable reader or iterator).  It is designed to be reused: reset() points
 * it at another block without allocating, and the only memory it owns is the
 * buffer in which it reassembles prefix-compressed keys (keys stored whole,
 * e.g. every key of an index block, are returned in place, never copied).
 *
 * Decoding trusts nothing: every varint, length, shared-prefix length and
 * restart offset is checked against the block bounds, so a corrupt block
 * (or a fuzzer) can never make it read outside [data, data + len).  On a
 * malformed entry the iterator becomes invalid and records TIDES_CORRUPTION
 * in *err with a message naming the file and block offset.  The checks
 * guarantee safety, not detection: a well-formed but wrong block (which the
 * block checksum makes vanishingly unlikely) yields wrong entries, never a
 * crash, and every positioning loop terminates because each entry occupies
 * at least three bytes.
 *
 * Keys compare as internal keys (tides_ikey_cmp; keys shorter than the
 * 8-byte trailer are corruption) or, for blocks of raw byte strings, with
 * plain memcmp.
 */
#ifndef TIDES_TABLE_BLOCK_H
#define TIDES_TABLE_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/block_cache.h"
#include "util/buf.h"
#include "util/status.h"

typedef struct tides_block_iter
{
	const uint8_t *data;
	uint32_t	restarts;		/* offset of the restart array = end of entries */
	uint32_t	num_restarts;
	uint32_t	cur;			/* offset of the current entry */
	uint32_t	next;			/* offset just past the current entry */
	uint32_t	restart_idx;	/* restart region holding cur */
	bool		valid;
	bool		ikey;			/* internal keys (else bytewise) */
	const uint8_t *key;			/* into data or keybuf */
	size_t		klen;
	const uint8_t *val;
	size_t		vlen;
	tides_buf	keybuf;
	tides_error *err;			/* where corruption is reported */
	const char *fname;			/* for messages */
	uint64_t	block_off;
} tides_block_iter;

/* once per iterator; err receives corruption reports (never NULL) */
void		tides_block_iter_init(tides_block_iter *it, bool ikey, tides_error *err);
void		tides_block_iter_free(tides_block_iter *it);

/*
 * Point the iterator at a block (positioned nowhere).  Returns false and
 * reports corruption if the restart array is malformed; the iterator is then
 * empty.  fname and block_off only label error messages.
 */
bool		tides_block_iter_reset(tides_block_iter *it, const uint8_t *data, size_t len,
								   const char *fname, uint64_t block_off);

/* position on the first key >= target */
void		tides_block_iter_seek(tides_block_iter *it, const uint8_t *target, size_t tlen);
void		tides_block_iter_first(tides_block_iter *it);
void		tides_block_iter_last(tides_block_iter *it);
void		tides_block_iter_next(tides_block_iter *it);
void		tides_block_iter_prev(tides_block_iter *it);

static inline bool
tides_block_iter_valid(const tides_block_iter *it)
{
	return it->valid;
}

/* number of entries cannot be known without a scan; this is just a hint */
static inline bool
tides_block_iter_empty(const tides_block_iter *it)
{
	return it->restarts == 0;
}

/*
 * Point-lookup seek over a block in place in the block cache: finds the
 * first key >= target as tides_block_iter_seek does, but reads only the
 * restart points and entries it needs, and copies out just the entry found
 * (into key and val, which are reused across calls).  The view's bytes are
 * untrusted and may be torn; any inconsistency returns TIDES_VIEW_BAD and
 * the caller falls back to reading a private copy of the block, which
 * reports corruption properly.
 */
typedef enum tides_view_result
{
	TIDES_VIEW_FOUND,			/* key/val hold the entry */
	TIDES_VIEW_END,				/* every key in the block is < target */
	TIDES_VIEW_BAD				/* malformed (or torn): use the slow path */
} tides_view_result;

tides_view_result tides_block_view_seek(const tides_block_view *v, bool ikey,
										const uint8_t *target, size_t tlen,
										tides_buf *key, tides_buf *val);

#endif
