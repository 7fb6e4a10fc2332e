/*
 * block_fetch.h -- one SSTable's data blocks read and decoded ahead of a
 * forward reader, by a helper thread.
 *
 * A pass over a large part of a tree (a bulk read: a table scan that an
 * index build, a rewrite or VACUUM makes) spends a sixth of its CPU
 * decompressing blocks and more reading them, one block after another, in
 * the thread that also does everything with the rows.  A fetch moves both
 * to a helper: it walks the table's index from the block the reader is on,
 * reads the file in windows (tides_read_block_ahead) and leaves each
 * following data block decoded in a ring; the reader takes them in order.
 * The mirror of block_pipe.h, which encodes a builder's blocks ahead.
 *
 * Contract:
 *   - one reader thread, moving forward: tides_block_fetch_take asks for
 *     the data block the reader needs next; it is answered from the ring
 *     only if that is the block the helper fetched next (false otherwise:
 *     the reader moved elsewhere, or the helper stopped at the table's end
 *     or at any failure -- read the block yourself, which reports a real
 *     failure properly, and free the fetch);
 *   - the helper reads only the file and the table's top index, which is
 *     immutable while the table is open: no block cache, no engine state,
 *     no counters (the reader adds what it read: tides_block_fetch_account),
 *     no signals (all blocked in it), malloc only;
 *   - the table's reader (src, top) must outlive the fetch;
 *     tides_block_fetch_free stops the helper wherever it is.
 */
#ifndef TIDES_TABLE_BLOCK_FETCH_H
#define TIDES_TABLE_BLOCK_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "table/format.h"
#include "util/buf.h"

/*
 * Blocks fetched ahead at most, and the free slots that wake a helper
 * waiting for room (a wakeup costs both sides a futex call and, on a VM,
 * an interprocessor interrupt: block_pipe.h).  64 blocks of 4 KiB: a
 * quarter megabyte decoded, a window's worth of stored blocks.
 */
#define TIDES_BLOCK_FETCH_DEPTH 64
#define TIDES_BLOCK_FETCH_BATCH 32

typedef struct tides_block_fetch tides_block_fetch;

/*
 * Start fetching the data blocks that follow the one the reader is on: the
 * top index entry top_key (of the top index block top) points at its index
 * partition, whose entry part_key points at it.  NULL if out of memory or
 * if no thread could be started (read on without).
 */
tides_block_fetch *tides_block_fetch_new(const tides_block_source *src, const uint8_t *top,
										 size_t top_len, const uint8_t *top_key, size_t top_klen,
										 const uint8_t *part_key, size_t part_klen);
void		tides_block_fetch_free(tides_block_fetch *f);

/*
 * The next fetched block, if it is the one at h: its contents are swapped
 * into *into (whose old buffer the fetch keeps for a later block).  Waits
 * for the helper if it has not got there yet.
 */
bool		tides_block_fetch_take(tides_block_fetch *f, tides_block_handle h, tides_buf *into);

/* add the bytes and blocks read since the last call to src's counters */
void		tides_block_fetch_account(tides_block_fetch *f);

#endif
