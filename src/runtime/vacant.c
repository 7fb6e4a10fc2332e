/*
 * vacant.c -- ranges of row ids where no snapshot can find a version.
 *
 * Every new version gets a new vid and vids are never reused (vids.c), so a
 * table whose few rows are updated over and over -- pgbench_branches, a
 * counter, a queue -- spreads its history over an ever-growing vid range.
 * Heap's page pruning keeps such a table on a page or two; here the dead
 * versions, their xmax rewrites and the deletions pruning and VACUUM
 * leave stay in the engine until compaction reaches them, and a
 * sequential scan steps over every one of them (the engine iterator skips
 * deletions and shadowed versions internally, which is where such a scan
 * spent its time: bench/results/2026-12-03-1930-publication.md).
 *
 * A vacant range [lo, hi) of a tree says: no version there is visible to a
 * snapshot taken from now on, nor ever will be.  A sequential scan under an
 * MVCC snapshot (src/am/cursor.c) records one when it has stepped from lo
 * to hi finding only versions dead to all (GlobalVisTestFor's horizon),
 * stubs and absent vids, with hi at most trt_vids_settled_below(tree) read
 * before its engine view was taken; later scans seek past the range
 * instead of stepping through it.  Why that holds for good:
 *
 *  - a version dead to all stays dead: nobody updates, deletes or locks
 *    one into anything a snapshot sees (src/am/README.md, section 3); VACUUM
 *    and pruning only turn such versions into stubs or deletions;
 *  - a stub never becomes a version again;
 *  - a vid below the settled mark that the view did not show was never
 *    written and never will be (its backend ended without writing it);
 *  - vids are never reused, and a new relfilenode is a new tree.
 *
 * The ranges live in shared memory only.  A crash restart begins without
 * any, which is what makes "dead to all" enough even where the deletion is
 * not durable yet: the only thing that could bring such a version back is
 * that restart.  A hot standby neither records nor uses them (its scans
 * cannot know which vids the primary's backends hold).
 *
 * TRT_VACANT_SLOTS trees have ranges at a time (replaced least recently used
 * first), each up to TRT_VACANT_RANGES disjoint ranges in vid order (the
 * smallest goes when a new one does not fit).  Each slot has a spinlock; a
 * scan copies its tree's ranges once when it opens a cursor.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "storage/shmem.h"
#include "storage/spin.h"

#include "runtime/trt.h"

#define TRT_VACANT_SLOTS 64

typedef struct VacantSlot
{
	slock_t		mutex;
	uint64		tree;			/* 0: free (tree ids start at TRT_TREE_FIRST) */
	uint64		used;			/* the clock at its last load or change */
	int			n;
	TrtVidRange r[TRT_VACANT_RANGES];	/* disjoint, not adjacent, in vid order */
} VacantSlot;

typedef struct VacantShared
{
	slock_t		claim;			/* taken to give a slot to another tree */
	pg_atomic_uint64 clock;
	VacantSlot	slots[TRT_VACANT_SLOTS];
} VacantShared;

static VacantShared *vacant = NULL;

Size
trt_vacant_shmem_size(void)
{
	return sizeof(VacantShared);
}

void
trt_vacant_shmem_init(void)
{
	bool		found;

	vacant = ShmemInitStruct("tides vacant ranges", sizeof(VacantShared), &found);
	if (found)
		return;
	SpinLockInit(&vacant->claim);
	pg_atomic_init_u64(&vacant->clock, 0);
	for (int i = 0; i < TRT_VACANT_SLOTS; i++)
	{
		SpinLockInit(&vacant->slots[i].mutex);
		vacant->slots[i].tree = 0;
		vacant->slots[i].n = 0;
		vacant->slots[i].used = 0;
	}
}

/* tree's slot, locked; NULL when it has none */
static VacantSlot *
lock_slot_of(uint64 tree)
{
	for (int i = 0; i < TRT_VACANT_SLOTS; i++)
	{
		VacantSlot *s = &vacant->slots[i];

		/* an unlocked look first: most slots are other trees' */
		if (((volatile VacantSlot *) s)->tree != tree)
			continue;
		SpinLockAcquire(&s->mutex);
		if (s->tree == tree)
			return s;
		SpinLockRelease(&s->mutex);
	}
	return NULL;
}

int
trt_vacant_load(uint64 tree, TrtVidRange *out)
{
	VacantSlot *s;
	int			n;

	if (vacant == NULL || RecoveryInProgress())
		return 0;
	if ((s = lock_slot_of(tree)) == NULL)
		return 0;
	n = s->n;
	memcpy(out, s->r, n * sizeof(TrtVidRange));
	/* only changes move the clock: loads by many scans share no counter */
	s->used = pg_atomic_read_u64(&vacant->clock);
	SpinLockRelease(&s->mutex);
	return n;
}

/* a slot for tree, locked: its own, a free one or the least recently used */
static VacantSlot *
claim_slot(uint64 tree)
{
	VacantSlot *s;
	VacantSlot *victim = NULL;

	SpinLockAcquire(&vacant->claim);
	/* another backend may have claimed one meanwhile */
	if ((s = lock_slot_of(tree)) != NULL)
	{
		SpinLockRelease(&vacant->claim);
		return s;
	}
	for (int i = 0; i < TRT_VACANT_SLOTS; i++)
	{
		s = &vacant->slots[i];
		if (s->tree == 0)
		{
			victim = s;
			break;
		}
		if (victim == NULL || s->used < victim->used)
			victim = s;
	}
	SpinLockAcquire(&victim->mutex);
	victim->tree = tree;
	victim->n = 0;
	SpinLockRelease(&vacant->claim);
	return victim;
}

/*
 * Merge [lo, hi) into the slot's ranges: every range it overlaps or
 * touches joins it; the smallest range goes if there is no room.
 */
static void
merge_range(VacantSlot *s, uint64 lo, uint64 hi)
{
	TrtVidRange out[TRT_VACANT_RANGES + 1];
	int			n = 0;
	bool		placed = false;

	for (int i = 0; i < s->n; i++)
	{
		TrtVidRange r = s->r[i];

		if (r.hi < lo)
			out[n++] = r;
		else if (r.lo > hi)
		{
			if (!placed)
			{
				out[n].lo = lo;
				out[n++].hi = hi;
				placed = true;
			}
			out[n++] = r;
		}
		else
		{
			lo = Min(lo, r.lo);
			hi = Max(hi, r.hi);
		}
	}
	if (!placed)
	{
		out[n].lo = lo;
		out[n++].hi = hi;
	}
	if (n > TRT_VACANT_RANGES)
	{
		int			smallest = 0;

		for (int i = 1; i < n; i++)
			if (out[i].hi - out[i].lo < out[smallest].hi - out[smallest].lo)
				smallest = i;
		memmove(&out[smallest], &out[smallest + 1], (n - smallest - 1) * sizeof(TrtVidRange));
		n--;
	}
	for (int i = 1; i < n; i++)
		Assert(out[i - 1].hi < out[i].lo);
	memcpy(s->r, out, n * sizeof(TrtVidRange));
	s->n = n;
}

void
trt_vacant_add(uint64 tree, uint64 lo, uint64 hi)
{
	VacantSlot *s;

	Assert(lo < hi && hi <= TRT_VID_MAX + 1);
	if (vacant == NULL || RecoveryInProgress())
		return;
	if ((s = lock_slot_of(tree)) == NULL)
		s = claim_slot(tree);
	merge_range(s, lo, hi);
	s->used = pg_atomic_fetch_add_u64(&vacant->clock, 1);
	SpinLockRelease(&s->mutex);
	pg_atomic_fetch_add_u64(&trt_shared->vacant_ranges, 1);
}

/* the tree is dropped (drops.c) */
void
trt_vacant_forget(uint64 tree)
{
	VacantSlot *s;

	if (vacant == NULL)
		return;
	while ((s = lock_slot_of(tree)) != NULL)
	{
		s->tree = 0;
		s->n = 0;
		SpinLockRelease(&s->mutex);
	}
}

/* a cursor's jumps, added once when it closes */
void
trt_vacant_count_jumps(uint64 n)
{
	pg_atomic_fetch_add_u64(&trt_shared->vacant_jumps, n);
}
