/*
 * block_cache.c -- the shared block cache: fixed frames, an entry table with
 * hash buckets, seqlocked copy-out lookups, CLOCK replacement.
 *
 * Layout of the memory handed to tides_block_cache_init (all offsets
 * relative to its start, so nothing depends on where it is mapped):
 *
 *   header (struct tides_block_cache)
 *   buckets[nbuckets]        spinlock + head entry index
 *   entries[nentries]        one cached block each
 *   frame_next[nframes]      next frame of the same block, or NONE
 *   frames[nframes]          FRAME_SIZE bytes each
 *
 * An entry is FREE (on the free-entry list), BUSY (owned by one process
 * that is filling or tearing it down; invisible to lookups) or VALID (linked
 * into its bucket's chain).  Transitions (asserted): FREE -> BUSY
 * (entry_alloc), BUSY -> VALID (insert, bucket lock), VALID -> BUSY
 * (unlink_locked, bucket lock), BUSY -> FREE (entry_free); frames belong to
 * a BUSY or VALID entry or to the free list, never two of them.  Its frames form a singly linked chain through
 * frame_next, and the entry names the first INLINE_FRAMES of them too (a
 * lookup follows the chain only past those); free frames form one list
 * through the same array.
 *
 * Concurrency rules
 *  - Lookups take no lock.  They walk a bucket chain with atomic loads and,
 *    for a candidate, read version (even = stable), the key and the frame
 *    chain, copy the bytes out, and re-read version.  Any change in between
 *    makes the lookup a miss.  A racing walk may stray into another chain
 *    (an entry moved meanwhile) or see a torn key; both merely cause a miss,
 *    and the walk is bounded.  Frame indexes read racily are range-checked
 *    before use, so a stale chain can never lead outside the frames array.
 *  - Every change to a VALID entry's fields, and its transition out of VALID,
 *    happens under its bucket's spinlock inside an odd-version window.
 *    Frames are only rewritten after the entry that owned them has left
 *    VALID (its version moved on), so a reader still copying them fails its
 *    version check.
 *  - free_lock protects the free-frame and free-entry lists; it is never
 *    held together with a bucket lock.  Eviction takes bucket locks with
 *    trylock only, so no lock order exists and no deadlock is possible.
 *  - The CLOCK hand is one atomic counter: concurrent evictors take
 *    successive slots.  A hit sets the entry's reference bit (only if clear,
 *    to keep hot entries' cache lines from bouncing between CPUs); the hand
 *    clears it on its first pass and evicts on the second.  Inserts start
 *    with the bit clear, so a block read once by a scan goes first.
 *
 * The copy out of frames is a plain memcpy racing with possible writers: that
 * is the seqlock pattern (the version check discards torn copies); formally
 * a data race in C11, benign on every platform we support.
 */
#include "cache/block_cache.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <string.h>

#include "util/hash.h"
#include "util/lock.h"

#define BC_MAGIC		0x3143426564697474ull
#define FRAME_SIZE		1024u
#define FRAME_SHIFT		10
#define MAX_BLOCK		(256u * 1024)
#define NONE			UINT32_MAX
#define MAX_CHAIN_WALK	64

enum
{
	E_FREE = 0,
	E_BUSY = 1,
	E_VALID = 2
};

/*
 * A block's first INLINE_FRAMES frames are named in its entry, the rest by
 * the chain through frame_next from the last of those: a lookup of a 4 KB
 * block reads the entry's one line and its frames, where following the
 * chain from the first frame cost a dependent load of a cold line of
 * frame_next per frame.  An entry is one cache line (64 bytes, and the
 * entries array starts on a line): at 48 bytes every other entry straddled
 * two.
 */
#define INLINE_FRAMES	4

typedef struct bc_entry
{
	atomic_uint version;		/* odd while being changed */
	atomic_uint state;
	atomic_uint ref;			/* CLOCK reference bit */
	atomic_uint next;			/* bucket chain */
	atomic_uint bucket;
	atomic_uint len;
	uint32_t	free_next;		/* free-entry list, under free_lock */
	atomic_uint frames[INLINE_FRAMES];	/* the first frames (NONE past the last) */
	atomic_uint_least64_t file;
	atomic_uint_least64_t offset;
} bc_entry;

_Static_assert(sizeof(bc_entry) == 64, "a cache entry is one cache line");

typedef struct bc_bucket
{
	tides_spinlock lock;
	atomic_uint head;
} bc_bucket;

struct tides_block_cache
{
	uint64_t	magic;
	uint64_t	capacity;
	uint32_t	nframes;
	uint32_t	nentries;
	uint32_t	nbuckets;		/* power of two */
	uint32_t	max_block;
	uint64_t	off_buckets;
	uint64_t	off_entries;
	uint64_t	off_frame_next;
	uint64_t	off_frames;

	alignas(64) tides_spinlock free_lock;
	uint32_t	free_frame_head;
	uint32_t	free_frames;
	uint32_t	free_entry_head;
	uint32_t	free_entries;

	alignas(64) atomic_uint_fast64_t clock_hand;

	alignas(64) atomic_uint_fast64_t used_frames;
	atomic_uint_fast64_t valid_entries;
};

#define ALIGN64(x) (((x) + 63) & ~(uint64_t) 63)

static inline bc_bucket *
buckets(tides_block_cache *c)
{
	return (bc_bucket *) ((char *) c + c->off_buckets);
}

static inline bc_entry *
entries(tides_block_cache *c)
{
	return (bc_entry *) ((char *) c + c->off_entries);
}

static inline atomic_uint *
frame_next(tides_block_cache *c)
{
	return (atomic_uint *) ((char *) c + c->off_frame_next);
}

static inline uint8_t *
frame(tides_block_cache *c, uint32_t f)
{
	return (uint8_t *) c + c->off_frames + ((uint64_t) f << FRAME_SHIFT);
}

static inline uint32_t
nframes_for(size_t len)
{
	return (uint32_t) ((len + FRAME_SIZE - 1) >> FRAME_SHIFT);
}

/* sizes derived from the capacity, shared by shmem_size and init */
static void
geometry(uint64_t capacity, uint32_t *nframes, uint32_t *nentries, uint32_t *nbuckets)
{
	uint64_t	nf = capacity / FRAME_SIZE;
	uint32_t	nb = 16;

	if (nf < 16)
		nf = 16;
	if (nf > UINT32_MAX / 2)
		nf = UINT32_MAX / 2;
	*nframes = (uint32_t) nf;
	/* typical blocks span >= 2 frames; entries beyond that would idle */
	*nentries = (uint32_t) (nf / 2 + 8);
	while (nb < *nentries)
		nb <<= 1;
	*nbuckets = nb;
}

size_t
tides_block_cache_shmem_size(uint64_t capacity)
{
	uint32_t	nf,
				ne,
				nb;

	geometry(capacity, &nf, &ne, &nb);
	return ALIGN64(sizeof(tides_block_cache)) +
		ALIGN64((uint64_t) nb * sizeof(bc_bucket)) +
		ALIGN64((uint64_t) ne * sizeof(bc_entry)) +
		ALIGN64((uint64_t) nf * sizeof(atomic_uint)) +
		(uint64_t) nf * FRAME_SIZE;
}

tides_block_cache *
tides_block_cache_init(void *mem, uint64_t capacity)
{
	tides_block_cache *c = mem;
	uint32_t	nf,
				ne,
				nb;
	uint64_t	off;

	geometry(capacity, &nf, &ne, &nb);
	memset(c, 0, sizeof(*c));
	c->magic = BC_MAGIC;
	c->nframes = nf;
	c->nentries = ne;
	c->nbuckets = nb;
	c->capacity = (uint64_t) nf * FRAME_SIZE;
	/* one block must not be able to flush a small cache on its own */
	c->max_block = MAX_BLOCK;
	if (c->max_block > c->capacity / 8)
		c->max_block = (uint32_t) (c->capacity / 8);

	off = ALIGN64(sizeof(tides_block_cache));
	c->off_buckets = off;
	off += ALIGN64((uint64_t) nb * sizeof(bc_bucket));
	c->off_entries = off;
	off += ALIGN64((uint64_t) ne * sizeof(bc_entry));
	c->off_frame_next = off;
	off += ALIGN64((uint64_t) nf * sizeof(atomic_uint));
	c->off_frames = off;

	for (uint32_t i = 0; i < nb; i++)
	{
		tides_spin_init(&buckets(c)[i].lock);
		atomic_init(&buckets(c)[i].head, NONE);
	}
	for (uint32_t i = 0; i < ne; i++)
	{
		bc_entry   *e = &entries(c)[i];

		atomic_init(&e->version, 0);
		atomic_init(&e->state, E_FREE);
		atomic_init(&e->ref, 0);
		atomic_init(&e->next, NONE);
		atomic_init(&e->bucket, 0);
		for (int j = 0; j < INLINE_FRAMES; j++)
			atomic_init(&e->frames[j], NONE);
		atomic_init(&e->len, 0);
		atomic_init(&e->file, 0);
		atomic_init(&e->offset, 0);
		e->free_next = i + 1 < ne ? i + 1 : NONE;
	}
	for (uint32_t i = 0; i < nf; i++)
		atomic_init(&frame_next(c)[i], i + 1 < nf ? i + 1 : NONE);

	tides_spin_init(&c->free_lock);
	c->free_frame_head = 0;
	c->free_frames = nf;
	c->free_entry_head = 0;
	c->free_entries = ne;
	atomic_init(&c->clock_hand, 0);
	atomic_init(&c->used_frames, 0);
	atomic_init(&c->valid_entries, 0);
	return c;
}

size_t
tides_block_cache_max_block(const tides_block_cache *c)
{
	return c->max_block;
}

static inline uint32_t
bucket_of(const tides_block_cache *c, uint64_t file, uint64_t offset)
{
	return (uint32_t) (tides_hash_mix(file, offset) & (c->nbuckets - 1));
}

/* ---- seqlock writer side (caller holds the bucket lock or owns the entry) */

static inline void
write_begin(bc_entry *e)
{
	unsigned	v = atomic_fetch_add_explicit(&e->version, 1, memory_order_relaxed);

	TIDES_ASSERT((v & 1) == 0);	/* windows do not nest */
	(void) v;
	atomic_thread_fence(memory_order_release);
}

static inline void
write_end(bc_entry *e)
{
	unsigned	v = atomic_fetch_add_explicit(&e->version, 1, memory_order_release);

	TIDES_ASSERT((v & 1) == 1);
	(void) v;
}

/* ---- free lists */

/* take a chain of n free frames, already linked; NONE if too few */
static uint32_t
frames_alloc(tides_block_cache *c, uint32_t n)
{
	atomic_uint *fn = frame_next(c);
	uint32_t	first,
				last;

	TIDES_ASSERT(n >= 1 && n <= MAX_BLOCK / FRAME_SIZE);
	tides_spin_lock(&c->free_lock);
	if (c->free_frames < n)
	{
		tides_spin_unlock(&c->free_lock);
		return NONE;
	}
	first = last = c->free_frame_head;
	for (uint32_t i = 1; i < n; i++)
		last = atomic_load_explicit(&fn[last], memory_order_relaxed);
	TIDES_ASSERT(first < c->nframes && last < c->nframes);	/* the count was right */
	c->free_frame_head = atomic_load_explicit(&fn[last], memory_order_relaxed);
	c->free_frames -= n;
	tides_spin_unlock(&c->free_lock);
	atomic_store_explicit(&fn[last], NONE, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->used_frames, n, memory_order_relaxed);
	return first;
}

/* return a chain of n frames starting at first */
static void
frames_free(tides_block_cache *c, uint32_t first, uint32_t n)
{
	atomic_uint *fn = frame_next(c);
	uint32_t	last = first;

	if (n == 0 || first == NONE)
		return;
	for (uint32_t i = 1; i < n; i++)
		last = atomic_load_explicit(&fn[last], memory_order_relaxed);
	TIDES_ASSERT(first < c->nframes && last < c->nframes);
	tides_spin_lock(&c->free_lock);
	atomic_store_explicit(&fn[last], c->free_frame_head, memory_order_relaxed);
	c->free_frame_head = first;
	c->free_frames += n;
	TIDES_ASSERT(c->free_frames <= c->nframes);	/* no frame freed twice */
	tides_spin_unlock(&c->free_lock);
	atomic_fetch_sub_explicit(&c->used_frames, n, memory_order_relaxed);
}

static uint32_t
entry_alloc(tides_block_cache *c)
{
	uint32_t	idx;

	tides_spin_lock(&c->free_lock);
	idx = c->free_entry_head;
	if (idx != NONE)
	{
		TIDES_ASSERT(idx < c->nentries && c->free_entries > 0);
		TIDES_ASSERT(atomic_load_explicit(&entries(c)[idx].state, memory_order_relaxed) == E_FREE);
		c->free_entry_head = entries(c)[idx].free_next;
		c->free_entries--;
		atomic_store_explicit(&entries(c)[idx].state, E_BUSY, memory_order_relaxed);
	}
	tides_spin_unlock(&c->free_lock);
	return idx;
}

static void
entry_free(tides_block_cache *c, uint32_t idx)
{
	bc_entry   *e = &entries(c)[idx];

	/* only its owner frees an entry: never one a lookup can find */
	TIDES_ASSERT(atomic_load_explicit(&e->state, memory_order_relaxed) == E_BUSY);
	tides_spin_lock(&c->free_lock);
	atomic_store_explicit(&e->state, E_FREE, memory_order_relaxed);
	e->free_next = c->free_entry_head;
	c->free_entry_head = idx;
	c->free_entries++;
	TIDES_ASSERT(c->free_entries <= c->nentries);
	tides_spin_unlock(&c->free_lock);
}

/*
 * Unlink VALID entry idx from bucket b (lock held) and make it BUSY: from
 * here on it and its frames belong to the caller.
 */
static void
unlink_locked(tides_block_cache *c, bc_bucket *b, uint32_t idx)
{
	bc_entry   *ents = entries(c);
	bc_entry   *e = &ents[idx];
	uint32_t	nxt = atomic_load_explicit(&e->next, memory_order_relaxed);
	uint32_t	p = atomic_load_explicit(&b->head, memory_order_relaxed);

	TIDES_ASSERT(tides_spin_held(&b->lock));
	TIDES_ASSERT(atomic_load_explicit(&e->state, memory_order_relaxed) == E_VALID);
	TIDES_ASSERT(&buckets(c)[atomic_load_explicit(&e->bucket, memory_order_relaxed)] == b);
	if (p == idx)
		atomic_store_explicit(&b->head, nxt, memory_order_release);
	else
	{
		while (p != NONE)
		{
			uint32_t	pn = atomic_load_explicit(&ents[p].next, memory_order_relaxed);

			if (pn == idx)
			{
				atomic_store_explicit(&ents[p].next, nxt, memory_order_release);
				break;
			}
			p = pn;
		}
	}
	/* e->next stays as it was: a lookup standing on e walks on correctly */
	write_begin(e);
	atomic_store_explicit(&e->state, E_BUSY, memory_order_relaxed);
	write_end(e);
	atomic_fetch_sub_explicit(&c->valid_entries, 1, memory_order_relaxed);
}

/* release what an unlinked (BUSY) entry held */
static void
entry_release(tides_block_cache *c, uint32_t idx, bool keep_entry)
{
	bc_entry   *e = &entries(c)[idx];
	uint32_t	len = atomic_load_explicit(&e->len, memory_order_relaxed);

	TIDES_ASSERT(atomic_load_explicit(&e->state, memory_order_relaxed) == E_BUSY);
	frames_free(c, atomic_load_explicit(&e->frames[0], memory_order_relaxed),
				nframes_for(len));
	if (!keep_entry)
		entry_free(c, idx);
}

/*
 * Advance the CLOCK hand until one entry is evicted; returns it (BUSY, its
 * frames freed) or NONE if two full sweeps found nothing evictable.
 */
static uint32_t
evict_one(tides_block_cache *c)
{
	bc_entry   *ents = entries(c);
	uint64_t	limit = (uint64_t) c->nentries * 2 + 16;

	for (uint64_t step = 0; step < limit; step++)
	{
		uint32_t	idx = (uint32_t) (atomic_fetch_add_explicit(&c->clock_hand, 1,
																  memory_order_relaxed) % c->nentries);
		bc_entry   *e = &ents[idx];
		uint32_t	bk;
		bc_bucket  *b;

		if (atomic_load_explicit(&e->state, memory_order_relaxed) != E_VALID)
			continue;
		if (atomic_load_explicit(&e->ref, memory_order_relaxed))
		{
			atomic_store_explicit(&e->ref, 0, memory_order_relaxed);
			continue;
		}
		bk = atomic_load_explicit(&e->bucket, memory_order_relaxed);
		if (bk >= c->nbuckets)
			continue;
		b = &buckets(c)[bk];
		if (!tides_spin_trylock(&b->lock))
			continue;
		if (atomic_load_explicit(&e->state, memory_order_relaxed) != E_VALID ||
			atomic_load_explicit(&e->bucket, memory_order_relaxed) != bk)
		{
			tides_spin_unlock(&b->lock);
			continue;
		}
		unlink_locked(c, b, idx);
		tides_spin_unlock(&b->lock);
		entry_release(c, idx, true);
		return idx;
	}
	return NONE;
}

/*
 * Find a VALID entry for (file, offset) with an even version; returns it
 * with *v1 set, or NULL.  Racy by design: the caller validates v1 later.
 */
static inline bc_entry *
find_entry(tides_block_cache *c, uint64_t file, uint64_t offset, unsigned *v1)
{
	bc_entry   *ents = entries(c);
	bc_bucket  *b = &buckets(c)[bucket_of(c, file, offset)];
	uint32_t	idx = atomic_load_explicit(&b->head, memory_order_acquire);

	for (int steps = 0; idx < c->nentries && steps < MAX_CHAIN_WALK; steps++)
	{
		bc_entry   *e = &ents[idx];
		unsigned	v = atomic_load_explicit(&e->version, memory_order_acquire);

		if ((v & 1) == 0 &&
			atomic_load_explicit(&e->state, memory_order_relaxed) == E_VALID &&
			atomic_load_explicit(&e->file, memory_order_relaxed) == file &&
			atomic_load_explicit(&e->offset, memory_order_relaxed) == offset)
		{
			*v1 = v;
			return e;
		}
		idx = atomic_load_explicit(&e->next, memory_order_relaxed);
	}
	return NULL;
}

static inline bool
entry_unchanged(bc_entry *e, unsigned v1)
{
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&e->version, memory_order_relaxed) == v1;
}

static inline void
touch(bc_entry *e)
{
	if (!atomic_load_explicit(&e->ref, memory_order_relaxed))
		atomic_store_explicit(&e->ref, 1, memory_order_relaxed);
}

/* frame i of e's block, whose frame i - 1 is prev (read racily: range-check it) */
static inline uint32_t
entry_frame(tides_block_cache *c, bc_entry *e, uint32_t i, uint32_t prev)
{
	if (i < INLINE_FRAMES)
		return atomic_load_explicit(&e->frames[i], memory_order_relaxed);
	return atomic_load_explicit(&frame_next(c)[prev], memory_order_relaxed);
}

bool
tides_block_cache_visit(tides_block_cache *c, uint64_t file, uint64_t offset,
						tides_block_visit_fn fn, void *arg)
{
	const uint8_t *pieces[MAX_BLOCK / FRAME_SIZE];
	tides_block_view view;
	unsigned	v1;
	bc_entry   *e = find_entry(c, file, offset, &v1);
	uint32_t	n,
				f = NONE,
				np;

	if (e == NULL)
		return false;
	n = atomic_load_explicit(&e->len, memory_order_relaxed);
	np = nframes_for(n);
	if (n == 0 || np > MAX_BLOCK / FRAME_SIZE)
		return false;			/* torn: the entry is changing */
	for (uint32_t i = 0; i < np; i++)
	{
		f = entry_frame(c, e, i, f);
		if (f >= c->nframes)
			return false;
		pieces[i] = frame(c, f);
	}
	view.pieces = pieces;
	view.npieces = np;
	view.piece_shift = FRAME_SHIFT;
	view.len = n;
	fn(arg, &view);
	if (!entry_unchanged(e, v1))
		return false;
	touch(e);
	return true;
}

bool
tides_block_cache_lookup(tides_block_cache *c, uint64_t file, uint64_t offset,
						 void *buf, size_t cap, size_t *len)
{
	unsigned	v1;
	bc_entry   *e = find_entry(c, file, offset, &v1);
	uint32_t	n,
				f = NONE;
	uint8_t    *dst = buf;
	size_t		left;

	*len = 0;
	if (e == NULL)
		return false;
	n = atomic_load_explicit(&e->len, memory_order_relaxed);
	if (n > cap)
	{
		if (entry_unchanged(e, v1))
			*len = n;
		return false;
	}
	left = n;
	for (uint32_t i = 0; left > 0; i++)
	{
		size_t		chunk = left < FRAME_SIZE ? left : FRAME_SIZE;

		f = entry_frame(c, e, i, f);
		if (f >= c->nframes)
			return false;		/* torn chain: the entry is changing */
		memcpy(dst, frame(c, f), chunk);
		dst += chunk;
		left -= chunk;
	}
	if (!entry_unchanged(e, v1))
		return false;
	touch(e);
	*len = n;
	return true;
}

void
tides_block_cache_insert(tides_block_cache *c, uint64_t file, uint64_t offset,
						 const void *data, size_t len)
{
	uint32_t	nf;
	uint32_t	idx = NONE,
				first = NONE,
				old = NONE;
	uint32_t	bk;
	bc_bucket  *b;
	bc_entry   *e;
	const uint8_t *src = data;
	uint32_t	inline_frames[INLINE_FRAMES];

	if (len == 0 || len > c->max_block)
		return;
	nf = nframes_for(len);
	for (int i = 0; i < INLINE_FRAMES; i++)
		inline_frames[i] = NONE;

	/* find an entry slot and enough frames, evicting as needed */
	for (int tries = 0; tries < 4 * (int) (MAX_BLOCK / FRAME_SIZE) + 16; tries++)
	{
		uint32_t	victim;

		if (idx == NONE)
			idx = entry_alloc(c);
		if (first == NONE)
			first = frames_alloc(c, nf);
		if (idx != NONE && first != NONE)
			break;
		victim = evict_one(c);
		if (victim == NONE)
			break;
		if (idx == NONE)
			idx = victim;
		else
			entry_free(c, victim);
	}
	if (idx == NONE || first == NONE)
	{
		if (idx != NONE)
			entry_free(c, idx);
		if (first != NONE)
			frames_free(c, first, nf);
		return;
	}

	/* fill the frames: private to us until the entry is linked */
	{
		atomic_uint *fn = frame_next(c);
		uint32_t	f = first;
		size_t		left = len;

		for (uint32_t i = 0; left > 0; i++)
		{
			size_t		chunk = left < FRAME_SIZE ? left : FRAME_SIZE;

			if (i < INLINE_FRAMES)
				inline_frames[i] = f;
			memcpy(frame(c, f), src, chunk);
			src += chunk;
			left -= chunk;
			f = atomic_load_explicit(&fn[f], memory_order_relaxed);
		}
		TIDES_ASSERT(f == NONE);	/* frames_alloc ended the chain after nf */
	}

	bk = bucket_of(c, file, offset);
	b = &buckets(c)[bk];
	e = &entries(c)[idx];

	TIDES_ASSERT(atomic_load_explicit(&e->state, memory_order_relaxed) == E_BUSY);
	tides_spin_lock(&b->lock);
	/* replace an existing copy of the same block */
	{
		bc_entry   *ents = entries(c);
		uint32_t	p = atomic_load_explicit(&b->head, memory_order_relaxed);

		while (p != NONE)
		{
			bc_entry   *pe = &ents[p];

			if (atomic_load_explicit(&pe->file, memory_order_relaxed) == file &&
				atomic_load_explicit(&pe->offset, memory_order_relaxed) == offset)
			{
				old = p;
				break;
			}
			p = atomic_load_explicit(&pe->next, memory_order_relaxed);
		}
		if (old != NONE)
			unlink_locked(c, b, old);
	}
	TIDES_ASSERT(old != idx);	/* ours was BUSY, so never in a chain */
	write_begin(e);
	atomic_store_explicit(&e->file, file, memory_order_relaxed);
	atomic_store_explicit(&e->offset, offset, memory_order_relaxed);
	atomic_store_explicit(&e->len, (uint32_t) len, memory_order_relaxed);
	for (int i = 0; i < INLINE_FRAMES; i++)
		atomic_store_explicit(&e->frames[i], inline_frames[i], memory_order_relaxed);
	atomic_store_explicit(&e->bucket, bk, memory_order_relaxed);
	atomic_store_explicit(&e->ref, 0, memory_order_relaxed);
	atomic_store_explicit(&e->next, atomic_load_explicit(&b->head, memory_order_relaxed),
						  memory_order_relaxed);
	atomic_store_explicit(&e->state, E_VALID, memory_order_relaxed);
	write_end(e);
	/* release: a lookup that sees the new head sees the whole entry */
	atomic_store_explicit(&b->head, idx, memory_order_release);
	atomic_fetch_add_explicit(&c->valid_entries, 1, memory_order_relaxed);
	tides_spin_unlock(&b->lock);

	if (old != NONE)
		entry_release(c, old, false);
}

void
tides_block_cache_erase_file(tides_block_cache *c, uint64_t file)
{
	bc_entry   *ents = entries(c);

	for (uint32_t idx = 0; idx < c->nentries; idx++)
	{
		bc_entry   *e = &ents[idx];
		uint32_t	bk;
		bc_bucket  *b;
		bool		hit;

		if (atomic_load_explicit(&e->state, memory_order_relaxed) != E_VALID ||
			atomic_load_explicit(&e->file, memory_order_relaxed) != file)
			continue;
		bk = atomic_load_explicit(&e->bucket, memory_order_relaxed);
		if (bk >= c->nbuckets)
			continue;
		b = &buckets(c)[bk];
		tides_spin_lock(&b->lock);
		hit = atomic_load_explicit(&e->state, memory_order_relaxed) == E_VALID &&
			atomic_load_explicit(&e->file, memory_order_relaxed) == file &&
			atomic_load_explicit(&e->bucket, memory_order_relaxed) == bk;
		if (hit)
			unlink_locked(c, b, idx);
		tides_spin_unlock(&b->lock);
		if (hit)
			entry_release(c, idx, false);
	}
}

void
tides_block_cache_get_stats(tides_block_cache *c, tides_block_cache_stats *st)
{
	st->capacity = c->capacity;
	st->used = atomic_load_explicit(&c->used_frames, memory_order_relaxed) * FRAME_SIZE;
	st->entries = atomic_load_explicit(&c->valid_entries, memory_order_relaxed);
}
