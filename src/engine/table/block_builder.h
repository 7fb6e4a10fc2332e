/*
 * block_builder.h -- building data and index blocks.
 *
 * A block is a run of entries followed by its restart array:
 *
 *     entry*  restart[0..n-1] (uint32 LE each)  n (uint32 LE)
 *     entry = varint32 shared | varint32 unshared | varint32 value_len |
 *             key bytes [shared, shared+unshared) | value bytes
 *
 * Each key stores only what differs from the previous key (shared-prefix
 * compression), except every restart_interval-th key, which is stored whole
 * and whose offset goes into the restart array: a reader binary-searches the
 * restart keys and then scans at most restart_interval entries.  A larger
 * interval saves space, a smaller one makes seeks cheaper; index blocks use
 * an interval of 1 so that every separator is a restart point and the index
 * is a plain sorted array.  An empty block is the 8 bytes "0, 1" (one
 * restart at offset 0, no entries).
 *
 * The builder does not decide where blocks end: the SSTable builder does
 * (see sst_builder.c), using tides_block_builder_estimate().
 */
#ifndef TIDES_TABLE_BLOCK_BUILDER_H
#define TIDES_TABLE_BLOCK_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

typedef struct tides_block_builder
{
	tides_buf	buf;			/* entries, then the restart array at finish */
	tides_buf	restarts;		/* uint32 LE offsets */
	tides_buf	last_key;
	uint32_t	interval;
	uint32_t	counter;		/* entries since the last restart */
	uint32_t	nentries;
	bool		finished;
} tides_block_builder;

void		tides_block_builder_init(tides_block_builder *b, uint32_t restart_interval);
void		tides_block_builder_free(tides_block_builder *b);

/* forget everything (keeps the memory for the next block) */
void		tides_block_builder_reset(tides_block_builder *b);

/* keys must arrive in increasing order (the caller checks) */
void		tides_block_builder_add(tides_block_builder *b, const uint8_t *key, size_t klen,
									const uint8_t *val, size_t vlen);

/* size of the block if finished now */
static inline size_t
tides_block_builder_estimate(const tides_block_builder *b)
{
	return b->buf.len + b->restarts.len + 4;
}

static inline bool
tides_block_builder_empty(const tides_block_builder *b)
{
	return b->nentries == 0;
}

/* true if an allocation failed since the last reset */
static inline bool
tides_block_builder_oom(const tides_block_builder *b)
{
	return b->buf.oom || b->restarts.oom || b->last_key.oom;
}

/* append the restart array; the result stays valid until the next reset */
const uint8_t *tides_block_builder_finish(tides_block_builder *b, size_t *len);

#endif
