/*
 * skiplist.h -- a lock-free skiplist living in one shared arena.
 *
 * The memtable's index.  Nodes are allocated by the caller from the arena
 * (the write path reserves a batch's bytes in one step under the write lock,
 * then fills them without locks) and linked with compare-and-swap, so any
 * number of processes insert concurrently while others read.  Links are
 * 32-bit offsets from the arena base, which keeps nodes small; the arena's
 * base address itself is stored as a pointer (tides_skiplist.arena), so the
 * region must still be mapped at the same address everywhere.
 *
 * Rules:
 *   - keys are internal keys, unique (the sequence number in the trailer
 *     makes every entry distinct), compared with tides_ikey_cmp;
 *   - nodes are never removed; the whole arena is discarded at once when its
 *     memtable is freed (no reader can then hold a reference);
 *   - a node becomes visible at level 0 by a release-CAS after its contents
 *     are written, so a reader that reaches it sees a complete node.
 */
#ifndef TIDES_MEM_SKIPLIST_H
#define TIDES_MEM_SKIPLIST_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TIDES_SKIP_MAX_HEIGHT 16

typedef struct tides_skip_node
{
	uint32_t	key_len;		/* internal key length */
	uint32_t	val_len;
	uint32_t	height;
	_Atomic uint32_t next[];	/* [height] offsets; 0 = end */
	/* followed by key bytes, then value bytes */
} tides_skip_node;

typedef struct tides_skiplist
{
	uint8_t    *arena;			/* base for offsets; the head node is at offset 0 */
	_Atomic uint32_t max_height;
} tides_skiplist;

/* bytes a node of this height and these sizes needs (8-byte aligned) */
static inline size_t
tides_skip_node_size(uint32_t height, size_t klen, size_t vlen)
{
	size_t		n = sizeof(tides_skip_node) + height * sizeof(uint32_t) + klen + vlen;

	return (n + 7) & ~(size_t) 7;
}

/* bytes at the start of the arena taken by the head node */
size_t		tides_skip_head_size(void);

/* lay out an empty list at the start of arena (arena must hold the head) */
void		tides_skip_init(tides_skiplist *sl, uint8_t *arena);

/* random height with branching 4, from a caller-provided random word */
uint32_t	tides_skip_random_height(uint64_t rnd);

/*
 * Where the last insert of one inserter went: at each level the node before
 * it and the node after it at the time (RocksDB's "splice").  A later insert
 * through the same splice searches from the lowest level whose pair still
 * brackets its key, so a run of ascending keys (a COPY's rows, an index
 * build) costs a compare or two per key instead of a search from the top.
 * Only a hint: nodes are never unlinked, so a stale pair is still a valid
 * place to search forward from, and linking rechecks it by CAS.  Private to
 * one inserter and one list; zero it (tides_skip_splice_init) to start.
 */
typedef struct tides_skip_splice
{
	uint32_t	height;			/* levels below it hold a pair; above: head and end */
	bool		near;			/* the last insert found a low pair (level 0 or 1) around its key */
	bool		quick;			/* next insert: the level-0 pair, else the head (then cleared) */
	uint32_t	prev[TIDES_SKIP_MAX_HEIGHT];
	uint32_t	next[TIDES_SKIP_MAX_HEIGHT];
} tides_skip_splice;

static inline void
tides_skip_splice_init(tides_skip_splice *sp)
{
	sp->height = 0;
	sp->near = false;
	sp->quick = false;
}

/* link a node the caller wrote at arena offset off, searching from the splice */
void		tides_skip_insert(tides_skiplist *sl, uint32_t off, tides_skip_splice *sp);

/*
 * Would tides_skip_insert of key through sp start at a low pair (level 0 or
 * 1): has the splice seen every level, and does one of those pairs still
 * surround key?  Such an insert walks only the nodes linked into the pair
 * since, which the last inserts through it left in cache.
 */
bool		tides_skip_splice_holds(const tides_skiplist *sl, const tides_skip_splice *sp,
									const uint8_t *key, size_t klen);

/*
 * Search the places of n keys at once (n <= TIDES_SKIP_GROUP): the n walks
 * from the head take turns, each turn comparing the node whose load the
 * walk started on its previous turn, so that up to n cache misses are in
 * flight where one walk has one.  In a list much larger than the CPU cache
 * nearly every node a random key's search touches below the top levels is
 * a miss, so interleaved searches overlap most of their waits -- not all:
 * with 4 kB pages a node is a TLB miss too, and a core runs only a few page
 * walks at once (16 keys a batch: 1.5x the puts per second of bench/kv,
 * src/engine/README.md).
 * sp[i] becomes a splice for keys[i] that has seen every level (its pairs
 * as they were during the walk), so tides_skip_insert through it searches
 * from its level-0 pair -- after others' inserts meanwhile, or another key
 * of the same group linked into that pair first, from the lowest level
 * whose pair still surrounds the key.
 */
#define TIDES_SKIP_GROUP 16

void		tides_skip_find_group(const tides_skiplist *sl, int n, const uint8_t *const *keys,
								  const size_t *klens, tides_skip_splice *sp);

static inline const uint8_t *
tides_skip_node_key(const tides_skip_node *n)
{
	return (const uint8_t *) &n->next[n->height];
}

static inline const uint8_t *
tides_skip_node_value(const tides_skip_node *n)
{
	return tides_skip_node_key(n) + n->key_len;
}

/* ---- reading (positions are node offsets; 0 means "not on a node") */

uint32_t	tides_skip_seek(const tides_skiplist *sl, const uint8_t *key, size_t klen); /* first >= key */
uint32_t	tides_skip_seek_lt(const tides_skiplist *sl, const uint8_t *key, size_t klen);	/* last < key */
uint32_t	tides_skip_first(const tides_skiplist *sl);
/*
 * About how many nodes have keys in [lo, hi) (NULL: unbounded): the nodes of
 * the range counted on the highest level that holds at least
 * TIDES_SKIP_ESTIMATE_NODES of them, times 4^level (heights are drawn with
 * branching 4).  O(log n) steps; exact when the range is that small at
 * level 0; otherwise off by about 1/sqrt(TIDES_SKIP_ESTIMATE_NODES), since
 * the count on a level is binomial.
 */
#define TIDES_SKIP_ESTIMATE_NODES 64
uint64_t	tides_skip_estimate_range(const tides_skiplist *sl, const uint8_t *lo, size_t lolen,
									  const uint8_t *hi, size_t hilen);
uint32_t	tides_skip_last(const tides_skiplist *sl);

static inline tides_skip_node *
tides_skip_node_at(const tides_skiplist *sl, uint32_t off)
{
	return (tides_skip_node *) (sl->arena + off);
}

static inline uint32_t
tides_skip_next(const tides_skiplist *sl, uint32_t off)
{
	return atomic_load_explicit(&tides_skip_node_at(sl, off)->next[0], memory_order_acquire);
}

/*
 * Start loading the node after `off` (its header, key and the start of its
 * value): a walk in key order (a flush, a scan) then takes that node's
 * cache miss while it handles this one, instead of after it.  A hint only:
 * the successor may change before the walk gets there.
 */
static inline void
tides_skip_prefetch_next(const tides_skiplist *sl, uint32_t off)
{
	uint32_t	next = atomic_load_explicit(&tides_skip_node_at(sl, off)->next[0], memory_order_relaxed);

	if (next != 0)
	{
		const uint8_t *p = (const uint8_t *) tides_skip_node_at(sl, next);

		__builtin_prefetch(p);
		__builtin_prefetch(p + 64);
	}
}

#endif
