/*
 * held_views.c -- index views that scans still act on, for VACUUM's
 * visibility-map marks.
 *
 * An index-only scan returns an entry without reading its row when the
 * row's block is all-visible, and a bitmap heap scan that needs no column
 * counts a block's TIDs the same way.  Both read the map bit after reading
 * the entry, from an engine view that may be older than the bit: if VACUUM
 * removed the row (after deleting its entries, which the old view still
 * shows) and then marked the block, the scan would count a row that is
 * gone.  nbtree prevents this with buffer pins (an index-only scan keeps
 * its leaf page pinned, and VACUUM waits for a cleanup lock on it); a
 * tides_btree scan has no page to pin, so it publishes its view instead:
 *
 *   - before opening its engine iterator, such a scan (src/index/
 *     tidx_scan.c) publishes the read point R it takes now, in a slot of
 *     its backend (the oldest of the backend's held views), and withdraws
 *     it when it ends or the transaction does.  Its view is at least R: a
 *     refresh only moves it forward.
 *   - VACUUM, after it removes versions whose entries it deleted, notes the
 *     read point D that covers those deletions for the tree
 *     (trt_tree_note_removal; they are published by then).  Before it sets
 *     a bit it asks whether any slot holds a view older than the tree's D,
 *     waits a little for such views to go, and sets nothing while one is
 *     held (src/am/vm.c).  A scan whose slot VACUUM did not see opens its
 *     view after D was published (below), so an answer "none" stays true.
 *
 * Both sides store, then fence, then load: the scan stores its slot before
 * it reads the published sequence number for its view; VACUUM's deletions
 * are published before it reads the slots.  If the scan's view misses a
 * deletion (its load came before the deletion was published), VACUUM's load
 * of the slots comes after the slot was stored, and sees it.
 */
#include "postgres.h"

#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/memutils.h"

#include "runtime/trt.h"

typedef struct HeldView
{
	pg_atomic_uint64 oldest;	/* the oldest view the backend holds; 0: none */
} HeldView;

static HeldView *held_views = NULL;
static int	n_held_views = 0;

/* this backend's held views (a multiset of read points), oldest published */
static uint64 *my_views = NULL;
static int	my_nviews = 0;
static int	my_cap = 0;

Size
trt_held_views_shmem_size(void)
{
	return mul_size(trt_proc_slots(), sizeof(HeldView));
}

void
trt_held_views_shmem_init(void)
{
	bool		found;

	n_held_views = trt_proc_slots();
	held_views = ShmemInitStruct("tides held views", trt_held_views_shmem_size(), &found);
	if (!found)
		for (int i = 0; i < n_held_views; i++)
			pg_atomic_init_u64(&held_views[i].oldest, 0);
}

static void
publish_oldest(void)
{
	uint64		oldest = 0;

	Assert(MyProc != NULL && MyProc->pgprocno < n_held_views);
	for (int i = 0; i < my_nviews; i++)
		if (oldest == 0 || my_views[i] < oldest)
			oldest = my_views[i];
	pg_atomic_write_u64(&held_views[MyProc->pgprocno].oldest, oldest);
	pg_memory_barrier();
}

uint64
trt_held_view_enter(void)
{
	uint64		point;

	if (my_nviews == my_cap)
	{
		int			cap = Max(8, my_cap * 2);

		my_views = my_views == NULL ?
			MemoryContextAlloc(TopMemoryContext, cap * sizeof(uint64)) :
			repalloc(my_views, cap * sizeof(uint64));
		my_cap = cap;
	}
	/* the caller's view, opened after the fence in publish_oldest, is at least this */
	point = Max(tides_read_point(trt_engine()), 1);
	my_views[my_nviews++] = point;
	publish_oldest();
	return point;
}

void
trt_held_view_leave(uint64 point)
{
	for (int i = 0; i < my_nviews; i++)
		if (my_views[i] == point)
		{
			my_views[i] = my_views[--my_nviews];
			publish_oldest();
			return;
		}
	Assert(my_nviews == 0);		/* withdrawn at a transaction end already */
}

void
trt_held_views_reset(void)
{
	if (my_nviews == 0)
		return;
	my_nviews = 0;
	publish_oldest();
}

uint64
trt_held_views_oldest(void)
{
	uint64		oldest = 0;

	pg_memory_barrier();
	for (int i = 0; i < n_held_views; i++)
	{
		uint64		v = pg_atomic_read_u64(&held_views[i].oldest);

		if (v != 0 && (oldest == 0 || v < oldest))
			oldest = v;
	}
	return oldest;
}
