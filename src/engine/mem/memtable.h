/*
 * memtable.h -- one memtable: an arena in the shared region holding a
 * skiplist of internal keys, plus the bookkeeping that ties it to the log.
 *
 * States (field `state`).  The contract: these four transitions, each made
 * by one function that asserts it (TIDES_ASSERTS), and no other.
 *
 *   FREE -> ACTIVE      tides_memtable_activate: the write path takes a free
 *                       slot with no references for new writes (write lock;
 *                       recovery activates the first one alone)
 *   ACTIVE -> SEALED    tides_memtable_seal: full (or sealed on request); no
 *                       new reservations; end_lsn and last_seq fixed (write
 *                       lock)
 *   SEALED -> FLUSHED   tides_memtable_mark_flushed: flush wrote it to an
 *                       SSTable and installs the file; no writer is still
 *                       linking (version mutex, db/manifest.c)
 *   FLUSHED -> FREE     tides_memtable_release: refs reached zero, so no
 *                       reader can see it any more (whoever drops the last
 *                       reference, db/superversion.c)
 *
 * Entries are added (tides_memtable_add) only while ACTIVE, or SEALED by
 * writers that reserved their bytes before the seal, and only inside the
 * bytes reserved ([base bytes, used) of the arena).  refs never goes below
 * zero, and reaches zero only once FLUSHED: every superversion holds each
 * ACTIVE or SEALED memtable.
 *
 * `writers` counts writes that reserved space here and have not finished
 * linking their nodes; flush waits (returns busy) until it is zero, so a
 * sealed memtable is complete before it is written out.  `refs` counts the
 * state snapshots (superversions) that include the memtable; the arena is
 * reused only after the last one is gone.
 *
 * A memtable covers the contiguous log range [first_lsn, end_lsn): the write
 * path assigns log positions and memtable space in the same critical
 * section, so log order and memtable order agree.
 *
 * Point index.  A point read would otherwise seek the skiplist, some fifty
 * nodes scattered over the arena, in every memtable it asks -- most of the
 * cost of a read of a row updated since the last flush, and all of it for
 * one that was not.  So the arena also holds a hash table by user key:
 * buckets of entry offsets after the head node, and before each skiplist
 * node an 8-byte header (hnext: the next entry of the bucket; newest: for
 * the first version of a user key that was indexed, the entry of its
 * version with the highest seq).  A bucket is one 64-bit word: the chain's
 * first entry, and a 32-bit filter with two bits set per user key in the
 * chain, changed together by one CAS.  Each user key is in its bucket once:
 * an insert whose key's bits are all set scans the chain and may find the
 * key and advance its `newest` (CAS, by seq); otherwise it pushes its own
 * entry and sets its bits with a CAS on the word, looking again if the word
 * moved.  A read takes `newest` and steps forward on level 0 past versions
 * above its seq (a few steps, else it seeks as before); a key whose bits
 * are not all set, or that is missing from the chain, is not in the
 * memtable.  Both hold because an entry is indexed after it is linked into
 * the skiplist and before its write is published.  The filter is what
 * keeps inserts of new keys cheap: without it each walked its whole chain,
 * a cache miss per entry (11% of a COPY's samples, 5% with it).  A slot's
 * buckets are cleared when it is freed, not when a writer activates it.
 *
 * Stem filter.  A unique check asks whether the store holds any key
 * stem || exactly stem_suffix bytes (tides_stem_absent); a file answers from
 * its stem filter, a memtable from a seek of its skiplist -- about as many
 * cache misses as an insert, in every memtable not yet flushed, for each row
 * inserted under a unique index (9% of the samples of a load in key order
 * with sixteen memtables).  So the arena also holds a bloom filter of the
 * stems of its keys: as many 64-bit words as buckets, two bits per stem in
 * one word, set with an atomic OR when the entry is indexed (so before its
 * write is published) and cleared with the point index.  A stem whose bits
 * are not all set has no key in the memtable (tides_memtable_may_hold_stem);
 * keys no longer than stem_suffix have no stem and set nothing.
 */
#ifndef TIDES_MEM_MEMTABLE_H
#define TIDES_MEM_MEMTABLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mem/skiplist.h"
#include "util/iterator.h"
#include "util/thread.h"

typedef enum tides_mem_state
{
	TIDES_MEM_FREE = 0,
	TIDES_MEM_ACTIVE,
	TIDES_MEM_SEALED,
	TIDES_MEM_FLUSHED
} tides_mem_state;

/*
 * Where a slot's arena pages are.  A FREE slot's arena holds nothing anyone
 * reads (activation writes a fresh skiplist head, and the point index was
 * cleared when the slot was freed), so once the slot has stayed free a while
 * its pages may go back to the operating system (db/maint.c, "Idle
 * memtables"), and whoever activates it next faults in zeroed ones.  The
 * point index was cleared at release, so whether a page was freed (zeroed)
 * or kept (huge pages only partly in the arena) it is still clear.
 *
 * KEPT -> DISCARDING is taken under the write lock, only for a FREE slot
 * with no references and while no memtable switch is under way
 * (writers_paused: a switch picks its slot under the lock and activates it
 * under the lock taken again); the write path never picks a DISCARDING
 * slot.  DISCARDING -> DISCARDED (or back to KEPT if the memory could not be
 * given back) follows the discard; activation makes a DISCARDED slot KEPT.
 */
typedef enum tides_mem_pages
{
	TIDES_PAGES_KEPT = 0,
	TIDES_PAGES_DISCARDING,
	TIDES_PAGES_DISCARDED
} tides_mem_pages;

typedef struct tides_memtable
{
	/* read by every reader and writer, written when the memtable changes state */
	uint8_t    *arena;
	uint64_t	arena_size;
	tides_skiplist list;
	_Atomic int32_t refs;
	_Atomic int state;			/* tides_mem_state */
	_Atomic int pages;			/* tides_mem_pages */
	_Atomic uint64_t freed_us;	/* when it last became FREE (tides_memtable_release) */
	uint64_t	id;				/* increasing: order of activation */
	uint64_t	first_lsn;
	uint64_t	end_lsn;		/* set when sealed */
	uint64_t	first_seq;		/* last_seq + 1 at activation; not a lower bound of
								 * its entries' seqs after recovery (db/maint.c) */
	uint64_t	last_seq;		/* set when sealed */
	_Atomic uint64_t *buckets;	/* point index: chain head and key filter */
	_Atomic uint64_t *stems;	/* stem filter: bucket_mask + 1 words */
	uint32_t	bucket_mask;
	uint32_t	stem_suffix;	/* 0: keys have no stems, the filter is unused */
	/* written by every write: on a line of their own, away from the readers' */
	_Alignas(TIDES_LINE) _Atomic uint64_t used;	/* bytes reserved (under the write lock) */
	_Atomic uint64_t placed;	/* of those, bytes given to batches: used less
								 * the unfilled rest of writers' pieces */
	_Atomic int32_t writers;
	_Atomic uint64_t ext_max;	/* EXTERNAL log: largest position past a logged batch */
	_Atomic uint64_t entries;
	_Atomic uint64_t deletions;
} tides_memtable;

/* header of every entry, before its skiplist node (see "Point index") */
typedef struct tides_mem_entry
{
	_Atomic uint32_t hnext;
	_Atomic uint32_t newest;
} tides_mem_entry;

/*
 * prepare a slot over its arena (once, at region init); stem_suffix is the
 * engine's filter_stem_suffix (0: no stem filter)
 */
void		tides_memtable_setup(tides_memtable *m, uint8_t *arena, uint64_t size, uint32_t stem_suffix);

/*
 * a FLUSHED slot nobody sees any more becomes FREE (clears its point index);
 * now_us (tides_now_us) is remembered for the idle-memory discard
 */
void		tides_memtable_release(tides_memtable *m, uint64_t now_us);

/* reset a FREE slot (setup or release emptied its point index) to an empty ACTIVE memtable */
void		tides_memtable_activate(tides_memtable *m, uint64_t id, uint64_t first_lsn,
									uint64_t first_seq);

/* ACTIVE -> SEALED: it covers the log up to end_lsn and seqs up to last_seq */
void		tides_memtable_seal(tides_memtable *m, uint64_t end_lsn, uint64_t last_seq);

/* SEALED -> FLUSHED: its entries are in an installed file */
void		tides_memtable_mark_flushed(tides_memtable *m);

/* bytes of arena an entry needs, given its skiplist height */
static inline uint64_t
tides_memtable_entry_size(uint32_t height, size_t ukey_len, size_t vlen)
{
	return sizeof(tides_mem_entry) + tides_skip_node_size(height, ukey_len + 8, vlen);
}

/* arena bytes an empty memtable of arena_size uses (head node, buckets, stem filter) */
uint64_t	tides_memtable_base_bytes(uint64_t arena_size);

/*
 * add one entry at a previously reserved arena offset; sp is the inserter's
 * splice for this memtable (see skiplist.h), kept across a batch
 */
void		tides_memtable_add(tides_memtable *m, tides_skip_splice *sp, uint64_t off,
							   uint32_t height, uint64_t seq, int type,
							   const uint8_t *ukey, size_t ukey_len,
							   const uint8_t *val, size_t vlen);

/*
 * tides_memtable_add of n entries (n <= TIDES_SKIP_GROUP), linked in order.
 * Those whose splice does not hold their key (tides_skip_splice_holds,
 * judged before any is linked) are searched together
 * (tides_skip_find_group) instead of one after the other, and each leaves
 * its found splice in its *sp; the others go through *sp as
 * tides_memtable_add would.  Puts may share a splice.
 */
typedef struct tides_mem_put
{
	uint64_t	off;			/* the entry's reserved arena offset */
	uint32_t	height;
	uint64_t	seq;
	int			type;
	const uint8_t *ukey;
	size_t		ukey_len;
	const uint8_t *val;
	size_t		vlen;
	tides_skip_splice *sp;		/* the inserter's splice for this key */
} tides_mem_put;

void		tides_memtable_add_group(tides_memtable *m, tides_mem_put *puts, int n);

/*
 * Entries on their way to tides_memtable_add_group, for a caller that has
 * them one at a time (a batch being decoded): tides_mem_group_put links the
 * group whenever it fills, tides_mem_group_finish links the rest.  What a
 * put points at must stay valid until it is linked.
 */
typedef struct tides_mem_group
{
	tides_memtable *m;
	int			n;
	tides_mem_put puts[TIDES_SKIP_GROUP];
} tides_mem_group;

static inline void
tides_mem_group_init(tides_mem_group *g, tides_memtable *m)
{
	g->m = m;
	g->n = 0;
}

static inline void
tides_mem_group_finish(tides_mem_group *g)
{
	tides_memtable_add_group(g->m, g->puts, g->n);
	g->n = 0;
}

static inline void
tides_mem_group_put(tides_mem_group *g, const tides_mem_put *p)
{
	g->puts[g->n++] = *p;
	if (g->n == TIDES_SKIP_GROUP)
		tides_mem_group_finish(g);
}

/*
 * Newest entry for ukey with seq <= max_seq.  Returns false if the memtable
 * has none; otherwise sets *type (TIDES_KT_VALUE or _DELETE), *seq and the
 * value (which points into the arena).
 */
bool		tides_memtable_get(const tides_memtable *m, const uint8_t *ukey, size_t ukey_len,
							   uint64_t max_seq, int *type, uint64_t *seq,
							   const uint8_t **val, size_t *vlen);

/*
 * Does any entry linked so far, of any seq, have a key starting with prefix?
 * (true also when there is no memory for the search: "maybe")
 */
bool		tides_memtable_has_prefix(const tides_memtable *m, const uint8_t *prefix, size_t len);

/*
 * Does an entry linked so far with a user key in [lower, upper) have a seq
 * above since?  true also after max_steps entries of the range (all at or
 * below since) and when there is no memory for the search: "maybe".
 */
bool		tides_memtable_newer_in_range(const tides_memtable *m, const uint8_t *lower, size_t llen,
										  const uint8_t *upper, size_t ulen, uint64_t since,
										  int max_steps);

/*
 * Does the memtable hold any key stem || exactly suffix bytes, of any seq?
 * false is certain; true is checked with has_prefix when the filter lets
 * the stem through (or the memtable's stem suffix is not suffix, or 0).
 * h is tides_memtable_stem_hash(stem, len).
 */
bool		tides_memtable_may_hold_stem(const tides_memtable *m, const uint8_t *stem, size_t len,
										uint32_t suffix, uint64_t h);
uint64_t	tides_memtable_stem_hash(const uint8_t *stem, size_t len);

/*
 * start loading the filter word of hash h: a probe asks every memtable, and
 * each word is a likely cache miss; prefetched together, the misses overlap
 */
static inline void
tides_memtable_prefetch_stem(const tides_memtable *m, uint64_t h)
{
	__builtin_prefetch((const void *) &m->stems[h & m->bucket_mask]);
}

/* iterator over internal keys (caller keeps a reference on m meanwhile) */
tides_iiter *tides_memtable_iter_new(tides_memtable *m);

#endif
