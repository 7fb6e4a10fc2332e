/*
 * block_pipe.h -- data blocks encoded (compressed, checksummed) in order,
 * either at once by the caller or ahead of it by a helper thread.
 *
 * An SSTable builder that is the only CPU-heavy thing its process does --
 * a backend loading rows as table files (db/ingest.c) -- spends most of its
 * time in the codec.  With a helper, the caller hands each finished data
 * block over and goes on building the next while the helper encodes; the
 * caller takes the encoded blocks back in the order it submitted them, when
 * it needs the room or at the end.  Without one, submit encodes at once.
 * Either way the bytes are the same: tides_block_encode, one codec at one
 * level.
 *
 * Contract:
 *   - one caller thread; submit needs room (tides_block_pipe_room), which a
 *     take of the oldest block makes;
 *   - tides_block_pipe_take waits for the oldest block and returns it
 *     (stored bytes followed by the block trailer, and the stored size
 *     without the trailer); it stays valid until tides_block_pipe_release;
 *   - the helper runs only the codec and the checksum, on memory the pipe
 *     owns: no engine state, no signals (all are blocked in it), no
 *     allocation but malloc's; a failure to allocate is reported by take;
 *   - tides_block_pipe_free waits for the helper to stop, wherever the
 *     caller is (a load abandoned after an error frees a full pipe).
 */
#ifndef TIDES_TABLE_BLOCK_PIPE_H
#define TIDES_TABLE_BLOCK_PIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "table/compress.h"
#include "util/buf.h"

/*
 * Blocks a pipe holds at most (submitted and not yet released), and the
 * blocks that wait before an idle helper is woken (or that a waiting caller
 * waits for).  Wakeups cost a futex call on each side and, on a VM, an
 * interprocessor interrupt: woken per block, the helper made a 10M-row COPY
 * no faster (thousands of switches a second, the caller waiting a quarter
 * of the time); per 16 of 32 blocks still no faster; per 128 of 256 (about
 * 1.5 MB of raw and encoded blocks at 4 KiB) it took 17 s instead of 23
 * -- when the second CPU was free; with it busy (the benchmark's loop
 * devices' kernel workers) the work only moves between busy CPUs.
 */
#define TIDES_BLOCK_PIPE_DEPTH 256
#define TIDES_BLOCK_PIPE_BATCH 128

typedef struct tides_block_pipe tides_block_pipe;

/*
 * A pipe for blocks compressed with type at level; helper: encode in a
 * helper thread (if it cannot be started, the pipe encodes in the caller:
 * tides_block_pipe_threaded says which).  NULL if out of memory.
 */
tides_block_pipe *tides_block_pipe_new(tides_compression type, int level, bool helper);
void		tides_block_pipe_free(tides_block_pipe *p);
bool		tides_block_pipe_threaded(const tides_block_pipe *p);

/*
 * Blocks the pipe holds at most: TIDES_BLOCK_PIPE_DEPTH with a helper; 1
 * without (each block is taken right after it is submitted, and a builder
 * that flushes or compacts keeps one block's buffers, not DEPTH's)
 */
uint32_t	tides_block_pipe_depth(const tides_block_pipe *p);

/* blocks submitted and not yet released */
uint32_t	tides_block_pipe_pending(const tides_block_pipe *p);
static inline bool
tides_block_pipe_room(const tides_block_pipe *p)
{
	return tides_block_pipe_pending(p) < tides_block_pipe_depth(p);
}

/* raw bytes of the blocks submitted and not yet taken (for size estimates) */
uint64_t	tides_block_pipe_raw_bytes(const tides_block_pipe *p);

/* hand over a raw block (copied when a helper encodes it); needs room */
void		tides_block_pipe_submit(tides_block_pipe *p, const uint8_t *raw, size_t n);

/*
 * The oldest block, encoded: *data and *len give its stored bytes and trailer,
 * *stored_size the stored bytes alone.  False if encoding it ran out of
 * memory.  The pipe must hold a block.
 */
bool		tides_block_pipe_take(tides_block_pipe *p, const uint8_t **data, size_t *len,
								  uint64_t *stored_size);
void		tides_block_pipe_release(tides_block_pipe *p);

/*
 * Append raw -- compressed with c if compress and worthwhile (scratch holds
 * the codec's output) -- and its trailer to dest; *rel and *size receive
 * the block's position in dest and its stored size.  Out of memory shows
 * in dest's or scratch's sticky flag.
 */
void		tides_block_encode(tides_compressor *c, tides_buf *scratch, const uint8_t *raw,
							   size_t n, bool compress, tides_buf *dest, uint64_t *rel,
							   uint64_t *size);

#endif
