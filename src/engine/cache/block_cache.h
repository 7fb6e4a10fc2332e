/*
 * block_cache.h -- the shared block cache.
 *
 * Decompressed, checksum-verified blocks of SSTables (data, index and filter
 * blocks), keyed by (file number, block offset), live in one cache in the
 * shared region, so a block read by one backend serves all of them.
 *
 * Design: memory is cut into small fixed frames; a cached block occupies as
 * many frames as it needs (they need not be contiguous), so blocks of any
 * size up to a limit are cached with little waste.  Lookups copy the block
 * out into the caller's buffer: nothing in the cache is ever pinned by a
 * reader, so eviction never waits and a dead process can hold nothing.  A
 * per-entry version counter (seqlock) lets the copy run without locks and
 * detects an entry that was evicted or replaced mid-copy (the lookup then
 * counts as a miss).  Replacement is CLOCK (second chance) over entries.
 */
#ifndef TIDES_CACHE_BLOCK_CACHE_H
#define TIDES_CACHE_BLOCK_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tides_block_cache tides_block_cache;

/* shared bytes needed for a cache holding about capacity bytes of blocks */
size_t		tides_block_cache_shmem_size(uint64_t capacity);

/* lay out a cache in mem (of tides_block_cache_shmem_size bytes) */
tides_block_cache *tides_block_cache_init(void *mem, uint64_t capacity);

/* largest block the cache will hold; bigger ones are simply not cached */
size_t		tides_block_cache_max_block(const tides_block_cache *c);

/*
 * Copy the block into buf (cap bytes) and return true with *len set; false
 * on a miss (or if cap is too small: *len then holds the size needed).
 */
bool		tides_block_cache_lookup(tides_block_cache *c, uint64_t file, uint64_t offset,
									 void *buf, size_t cap, size_t *len);

/* add (or replace) a block; silently does nothing if it cannot */
void		tides_block_cache_insert(tides_block_cache *c, uint64_t file, uint64_t offset,
									 const void *data, size_t len);

/* drop every block of a file (called when the file is deleted) */
void		tides_block_cache_erase_file(tides_block_cache *c, uint64_t file);

typedef struct tides_block_cache_stats
{
	uint64_t	capacity;
	uint64_t	used;
	uint64_t	entries;
} tides_block_cache_stats;

void		tides_block_cache_get_stats(tides_block_cache *c, tides_block_cache_stats *st);

#endif
