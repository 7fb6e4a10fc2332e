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
 * counts as a miss).  The same check lets a visitor read a block in place
 * (tides_block_cache_visit), which point lookups use to avoid copying whole
 * blocks.  Replacement is CLOCK (second chance) over entries.
 */
#ifndef TIDES_CACHE_BLOCK_CACHE_H
#define TIDES_CACHE_BLOCK_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct tides_block_cache tides_block_cache;

/* shared bytes needed for a cache holding about capacity bytes of blocks */
size_t		tides_block_cache_shmem_size(uint64_t capacity);

/* lay out a cache in mem (64-byte aligned, tides_block_cache_shmem_size bytes) */
tides_block_cache *tides_block_cache_init(void *mem, uint64_t capacity);

/* largest block the cache will hold; bigger ones are simply not cached */
size_t		tides_block_cache_max_block(const tides_block_cache *c);

/*
 * Copy the block into buf (cap bytes) and return true with *len set; false
 * on a miss (or if cap is too small: *len then holds the size needed).
 */
bool		tides_block_cache_lookup(tides_block_cache *c, uint64_t file, uint64_t offset,
									 void *buf, size_t cap, size_t *len);

/*
 * A cached block seen in place: its bytes are the concatenation of the
 * pieces (each 1 << piece_shift bytes, the last one partial).  The bytes may
 * change while a visitor reads them, so a visitor must bound every read by
 * len, keep no pointer into the pieces, and treat what it reads as
 * untrusted; the visit is discarded if the block changed meanwhile.
 */
typedef struct tides_block_view
{
	const uint8_t *const *pieces;
	uint32_t	npieces;
	uint32_t	piece_shift;
	size_t		len;
} tides_block_view;

typedef void (*tides_block_visit_fn) (void *arg, const tides_block_view *v);

/* copy [pos, pos + n) of a view into dst; false if outside the block */
static inline bool
tides_block_view_read(const tides_block_view *v, size_t pos, void *dst, size_t n)
{
	uint8_t    *d = dst;
	size_t		mask = ((size_t) 1 << v->piece_shift) - 1;

	if (pos > v->len || n > v->len - pos)
		return false;
	while (n > 0)
	{
		size_t		off = pos & mask;
		size_t		chunk = mask + 1 - off;

		if (chunk > n)
			chunk = n;
		memcpy(d, v->pieces[pos >> v->piece_shift] + off, chunk);
		d += chunk;
		pos += chunk;
		n -= chunk;
	}
	return true;
}

/*
 * [pos, pos + n) of a view as contiguous bytes: a pointer into the piece
 * when the range lies within one (no copy), else a copy in scratch (n
 * bytes); NULL if outside the block.  Valid only during the visit.
 */
static inline const uint8_t *
tides_block_view_span(const tides_block_view *v, size_t pos, size_t n, uint8_t *scratch)
{
	size_t		mask = ((size_t) 1 << v->piece_shift) - 1;

	if (pos > v->len || n > v->len - pos)
		return NULL;
	if ((pos & mask) + n <= mask + 1)
		return v->pieces[pos >> v->piece_shift] + (pos & mask);
	return tides_block_view_read(v, pos, scratch, n) ? scratch : NULL;
}

/* byte pos of a view (pos < len) */
static inline uint8_t
tides_block_view_byte(const tides_block_view *v, size_t pos)
{
	return v->pieces[pos >> v->piece_shift][pos & (((size_t) 1 << v->piece_shift) - 1)];
}

/*
 * Run fn over a cached block in place, without copying it out: a point
 * lookup reads a few cache lines of a block instead of all of it.  Returns
 * true if the block was present and unchanged while fn ran (fn's results
 * are valid); false on a miss or a concurrent change (fn may have run on
 * torn data: discard its results).
 */
bool		tides_block_cache_visit(tides_block_cache *c, uint64_t file, uint64_t offset,
									tides_block_visit_fn fn, void *arg);

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
