/*
 * skiplist.c -- concurrent insertion by CAS, searches from the top level.
 *
 * Insertion links a node bottom-up.  At each level it finds the neighbours
 * (prev < key < next), points the node at next, then CASes prev.next from
 * next to the node; a failed CAS means another inserter got between them,
 * so the neighbours are searched again from prev (which stays < key).  A
 * node is reachable from level 0 as soon as its level-0 CAS succeeds; upper
 * levels only speed up searches, so readers tolerate half-linked towers.
 */
#include "mem/skiplist.h"

#include <string.h>

#include "util/dbformat.h"
#include "util/assert.h"

size_t
tides_skip_head_size(void)
{
	return tides_skip_node_size(TIDES_SKIP_MAX_HEIGHT, 0, 0);
}

void
tides_skip_init(tides_skiplist *sl, uint8_t *arena)
{
	tides_skip_node *head = (tides_skip_node *) arena;

	sl->arena = arena;
	head->key_len = 0;
	head->val_len = 0;
	head->height = TIDES_SKIP_MAX_HEIGHT;
	for (int i = 0; i < TIDES_SKIP_MAX_HEIGHT; i++)
		atomic_init(&head->next[i], 0);
	atomic_init(&sl->max_height, 1);
}

uint32_t
tides_skip_random_height(uint64_t rnd)
{
	uint32_t	h = 1;

	while (h < TIDES_SKIP_MAX_HEIGHT && (rnd & 3) == 0)
	{
		h++;
		rnd >>= 2;
	}
	TIDES_ASSERT(h >= 1 && h <= TIDES_SKIP_MAX_HEIGHT);
	return h;
}

static inline int
node_cmp(const tides_skiplist *sl, uint32_t off, const uint8_t *key, size_t klen)
{
	const tides_skip_node *n = tides_skip_node_at(sl, off);

	return tides_ikey_cmp(tides_skip_node_key(n), n->key_len, key, klen);
}

static inline uint32_t
load_next(const tides_skiplist *sl, uint32_t off, int level)
{
	return atomic_load_explicit(&tides_skip_node_at(sl, off)->next[level], memory_order_acquire);
}

/*
 * A search at node x of `level` compares x's successor there next; if that
 * is not below the key, it goes down and compares x's successor one level
 * lower.  Both are known at x, so start loading the lower one's node now:
 * its cache miss then overlaps the comparison above, instead of following
 * it (in a memtable much larger than the CPU cache, nearly every node a
 * search touches is a miss).
 */
static inline void
prefetch_below(const tides_skiplist *sl, uint32_t x, int level, uint32_t next)
{
	if (level > 0)
	{
		uint32_t	down = atomic_load_explicit(&tides_skip_node_at(sl, x)->next[level - 1],
												memory_order_relaxed);

		if (down != 0 && down != next)
			__builtin_prefetch(tides_skip_node_at(sl, down));
	}
}

/*
 * Walk level `level` from `before` (which is < key) to the pair
 * before < key <= after.
 */
static void
find_splice_at(const tides_skiplist *sl, const uint8_t *key, size_t klen, int level,
			   uint32_t before, uint32_t *out_prev, uint32_t *out_next)
{
	TIDES_ASSERT(before == 0 || node_cmp(sl, before, key, klen) < 0);
	for (;;)
	{
		uint32_t	next = load_next(sl, before, level);

		prefetch_below(sl, before, level, next);
		if (next == 0 || node_cmp(sl, next, key, klen) >= 0)
		{
			*out_prev = before;
			*out_next = next;
			return;
		}
		before = next;
	}
}

/* does the pair at `level` of the splice still surround key (prev < key < next)? */
static inline bool
splice_brackets(const tides_skiplist *sl, const tides_skip_splice *sp, int level, const uint8_t *key, size_t klen)
{
	uint32_t	prev = sp->prev[level],
				next = sp->next[level];

	return (prev == 0 || node_cmp(sl, prev, key, klen) < 0) && (next == 0 || node_cmp(sl, next, key, klen) > 0);
}

/*
 * Pairs below this level count as near: a search from one walks a level
 * or two of nodes linked since.  Level 1 as well as 0, because writers of
 * adjacent keys link out of order: one links its key k after another has
 * linked k + 1, so its level-0 pair names k + 1 as next, which its own next
 * key k + 2 has passed -- while its level-1 pair, wider, still surrounds
 * k + 2.  With level 0 alone, such a writer found its splice cold and
 * searched from the head on most inserts (two threads putting keys in order
 * spent three times one thread's CPU per key).
 */
#define NEAR_LEVELS 2

bool
tides_skip_splice_holds(const tides_skiplist *sl, const tides_skip_splice *sp, const uint8_t *key, size_t klen)
{
	uint32_t	maxh = atomic_load_explicit(&sl->max_height, memory_order_relaxed);

	if (sp->height == 0 || sp->height < maxh)
		return false;
	for (uint32_t level = 0; level < NEAR_LEVELS && level < maxh; level++)
		if (splice_brackets(sl, sp, (int) level, key, klen))
			return true;
	return false;
}

void
tides_skip_insert(tides_skiplist *sl, uint32_t off, tides_skip_splice *sp)
{
	tides_skip_node *n = tides_skip_node_at(sl, off);
	const uint8_t *key = tides_skip_node_key(n);
	size_t		klen = n->key_len;
	uint32_t	height = n->height;
	uint32_t	maxh = atomic_load_explicit(&sl->max_height, memory_order_relaxed);
	uint32_t	before;
	int			level;

	TIDES_ASSERT(height >= 1 && height <= TIDES_SKIP_MAX_HEIGHT);
	TIDES_ASSERT(off >= tides_skip_head_size());	/* never the head */
	while (height > maxh)
	{
		if (atomic_compare_exchange_weak(&sl->max_height, &maxh, height))
		{
			maxh = height;
			break;
		}
	}
	/*
	 * The lowest level whose pair surrounded key when it was stored.  Pairs
	 * nest (each level's pair lies within the one above), so every level
	 * above it surrounds key too.  Others may have linked nodes into the
	 * pair since, so search from its prev at that level and every level
	 * below, top-down; from the head at the top when the splice has not
	 * seen every level (a fresh one), no level surrounds key, or a quick
	 * probe's level-0 pair does not (its upper pairs went cold: write.c).
	 */
	level = 0;
	if (sp->height < maxh || (sp->quick && !splice_brackets(sl, sp, 0, key, klen)))
		level = (int) maxh;
	sp->quick = false;
	while (level < (int) maxh && !splice_brackets(sl, sp, level, key, klen))
		level++;
	sp->near = level < NEAR_LEVELS;
	before = level < (int) maxh ? sp->prev[level] : 0;
	if (level == (int) maxh)
		level--;
	for (; level >= 0; level--)
	{
		find_splice_at(sl, key, klen, level, before, &sp->prev[level], &sp->next[level]);
		before = sp->prev[level];
	}
	sp->height = maxh;
	/* internal keys are unique (the sequence number differs) */
	TIDES_ASSERT(sp->next[0] == 0 || node_cmp(sl, sp->next[0], key, klen) > 0);

	/* bottom-up linking */
	for (uint32_t i = 0; i < height; i++)
	{
		for (;;)
		{
			uint32_t	expected = sp->next[i];

			/* the pair surrounds the node at this level */
			TIDES_ASSERT(sp->prev[i] == 0 || node_cmp(sl, sp->prev[i], key, klen) < 0);
			TIDES_ASSERT(sp->next[i] == 0 || node_cmp(sl, sp->next[i], key, klen) > 0);
			atomic_store_explicit(&n->next[i], sp->next[i], memory_order_relaxed);
			if (atomic_compare_exchange_strong_explicit(&tides_skip_node_at(sl, sp->prev[i])->next[i],
														&expected, off,
														memory_order_release,
														memory_order_relaxed))
				break;
			/* someone linked between prev and next: search again from prev */
			find_splice_at(sl, key, klen, (int) i, sp->prev[i], &sp->prev[i], &sp->next[i]);
		}
		sp->prev[i] = off;		/* the next key of an ascending run goes right after this one */
	}
}

/* start loading a node: its header and the key after its links */
static inline void
prefetch_node(const tides_skiplist *sl, uint32_t off)
{
	if (off != 0)
	{
		const uint8_t *p = (const uint8_t *) tides_skip_node_at(sl, off);

		__builtin_prefetch(p);
		__builtin_prefetch(p + 64);
	}
}

void
tides_skip_find_group(const tides_skiplist *sl, int n, const uint8_t *const *keys, const size_t *klens,
					  tides_skip_splice *sp)
{
	uint32_t	maxh = atomic_load_explicit(&sl->max_height, memory_order_relaxed);
	int			level[TIDES_SKIP_GROUP];
	uint32_t	x[TIDES_SKIP_GROUP];	/* the last node < key on level[i] (0: the head) */
	uint32_t	next[TIDES_SKIP_GROUP]; /* x's successor there, being loaded */
	int			walking = n;

	TIDES_ASSERT(n >= 0 && n <= TIDES_SKIP_GROUP);
	for (int i = 0; i < n; i++)
	{
		level[i] = (int) maxh - 1;
		x[i] = 0;
		next[i] = load_next(sl, 0, level[i]);
		prefetch_node(sl, next[i]);
		sp[i].height = maxh;
		sp[i].near = false;
		sp[i].quick = false;
	}
	while (walking > 0)
		for (int i = 0; i < n; i++)
		{
			if (level[i] < 0)
				continue;
			if (next[i] != 0 && node_cmp(sl, next[i], keys[i], klens[i]) < 0)
				x[i] = next[i];
			else
			{
				sp[i].prev[level[i]] = x[i];
				sp[i].next[level[i]] = next[i];
				if (--level[i] < 0)
				{
					walking--;
					continue;
				}
			}
			/* x is in cache (just compared, or the head): its link is cheap, the node it names is not */
			next[i] = load_next(sl, x[i], level[i]);
			prefetch_node(sl, next[i]);
		}
#ifdef TIDES_ASSERTS
	for (int i = 0; i < n; i++)
		TIDES_ASSERT(sp[i].prev[0] == 0 || node_cmp(sl, sp[i].prev[0], keys[i], klens[i]) < 0);
#endif
}

uint32_t
tides_skip_seek(const tides_skiplist *sl, const uint8_t *key, size_t klen)
{
	uint32_t	x = 0;
	int			level = (int) atomic_load_explicit(&sl->max_height, memory_order_relaxed) - 1;

	for (;;)
	{
		uint32_t	next = load_next(sl, x, level);

		prefetch_below(sl, x, level, next);
		if (next != 0 && node_cmp(sl, next, key, klen) < 0)
			x = next;
		else if (level == 0)
			return next;
		else
			level--;
	}
}

uint32_t
tides_skip_seek_lt(const tides_skiplist *sl, const uint8_t *key, size_t klen)
{
	uint32_t	x = 0;
	int			level = (int) atomic_load_explicit(&sl->max_height, memory_order_relaxed) - 1;

	for (;;)
	{
		uint32_t	next = load_next(sl, x, level);

		if (next != 0 && node_cmp(sl, next, key, klen) < 0)
			x = next;
		else if (level == 0)
			return x;			/* 0 (the head) when nothing is < key */
		else
			level--;
	}
}

uint64_t
tides_skip_estimate_range(const tides_skiplist *sl, const uint8_t *lo, size_t lolen,
						  const uint8_t *hi, size_t hilen)
{
	uint32_t	x = 0;			/* the last node < lo on this level (0: the head) */
	int			level = (int) atomic_load_explicit(&sl->max_height, memory_order_relaxed) - 1;

	for (;; level--)
	{
		uint32_t	next;
		uint64_t	count = 0;

		while ((next = load_next(sl, x, level)) != 0 && lo != NULL &&
			   node_cmp(sl, next, lo, lolen) < 0)
			x = next;
		/* count this level's nodes in the range, up to what is enough */
		for (; next != 0 && (hi == NULL || node_cmp(sl, next, hi, hilen) < 0);
			 next = load_next(sl, next, level))
			if (++count >= TIDES_SKIP_ESTIMATE_NODES && level > 0)
				break;
		if (count >= TIDES_SKIP_ESTIMATE_NODES || level == 0)
		{
			/* counting stopped early above: finish this level's count */
			while (next != 0 && (next = load_next(sl, next, level)) != 0 &&
				   (hi == NULL || node_cmp(sl, next, hi, hilen) < 0))
				count++;
			return count << (2 * level);
		}
	}
}

uint32_t
tides_skip_first(const tides_skiplist *sl)
{
	return load_next(sl, 0, 0);
}

uint32_t
tides_skip_last(const tides_skiplist *sl)
{
	uint32_t	x = 0;
	int			level = (int) atomic_load_explicit(&sl->max_height, memory_order_relaxed) - 1;

	for (;;)
	{
		uint32_t	next = load_next(sl, x, level);

		if (next != 0)
			x = next;
		else if (level == 0)
			return x;
		else
			level--;
	}
}
