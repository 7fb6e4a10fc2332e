/*
 * vids.c -- row ids (vids) within a tree, and what is kept per tree next to
 * their counter.
 *
 * Row ids are per tree, increasing, never reused, even across a crash that
 * loses rows: b-tree indexes are WAL-logged and may outlive rows lost in a
 * relaxed-durability crash, and a reused TID would make such a stale entry
 * point at a different row (docs/durability.md, D6).  So vids are reserved
 * in chunks, and a reservation ('V', meta.h) is made durable before any vid
 * of it is used; after a restart a tree continues above its last
 * reservation.  Chunks grow with use (1k .. 1M vids), so the fsync this
 * costs is rare.
 *
 * Each tree in use has a VidCounter in a shared hash (tides.max_relations
 * entries), which also holds the page count of the relation's visibility
 * map fork (src/am/vm.c) and the point of its last removal of versions
 * (held_views.c).  The suspect mark ('S') is the row id below which
 * a crash may have lost rows whose index entries survived (src/am/vacuum.c).
 *
 * Held row ids.  A vid is handed out before its row reaches the engine, and
 * the row may wait long after (deferred rows, bulk loads, an update's new
 * version written with its old one).  A scan that finds no row at a vid
 * may call it vacant for good (src/runtime/vacant.c) only if no backend can
 * still write it, so each backend publishes, in a slot of its own, the
 * trees it took vids of in its transaction and the first vid it took of
 * each -- inside the counter's lock, before the vid exists -- and withdraws
 * them when the transaction ends, when every row it wrote has been
 * written or dropped.  trt_vids_settled_below answers with a vid below
 * which every row id ever to be written has been written.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"

#include "runtime/trt.h"
#include "runtime/meta.h"

typedef struct VidCounter
{
	uint64		tree;			/* hash key */
	slock_t		mutex;
	uint64		next;
	uint64		reserved;
	uint32		chunk;
	pg_atomic_uint32 vm_pages;	/* see trt_tree_vm_pages */
	pg_atomic_uint64 removed_at;	/* see trt_tree_note_removal */
} VidCounter;

static HTAB *vid_counters = NULL;
static LWLock *counters_lock = NULL;

#define FIRST_CHUNK 1024
#define MAX_CHUNK (1u << 20)

/*
 * One backend's held row ids (above), written only by that backend: `lo`
 * before `tree`, so a reader that finds its tree reads that hold's lo or a
 * later one's (the earlier hold is withdrawn then).  A backend holding vids
 * of more trees than it has entries holds every tree from vid 0.
 */
#define HELD_TREES 8
#define HELD_ANY UINT64_MAX		/* the entry stands for every tree */

typedef struct VidHolds
{
	pg_atomic_uint64 tree[HELD_TREES];	/* 0: unused */
	pg_atomic_uint64 lo[HELD_TREES];
} VidHolds;

static VidCounter *counter_for(uint64 tree);

static VidHolds *vid_holds = NULL;
static int	n_vid_holds = 0;
static uint64 my_held[HELD_TREES];	/* what this backend's entries say */
static int	my_nheld = 0;
static bool my_holds_fresh = false; /* entries a dead predecessor left are cleared */

/* ---- the shared hash of counters */

Size
trt_trees_shmem_size(void)
{
	return add_size(hash_estimate_size(trt_max_relations, sizeof(VidCounter)),
					mul_size(trt_proc_slots(), sizeof(VidHolds)));
}

void
trt_trees_shmem_init(void)
{
	HASHCTL		info;
	bool		found;

	info.keysize = sizeof(uint64);
	info.entrysize = sizeof(VidCounter);
	vid_counters = ShmemInitHash("tides vid counters", trt_max_relations, trt_max_relations,
								 &info, HASH_ELEM | HASH_BLOBS);
	n_vid_holds = trt_proc_slots();
	vid_holds = ShmemInitStruct("tides held row ids", mul_size(n_vid_holds, sizeof(VidHolds)), &found);
	if (!found)
		for (int i = 0; i < n_vid_holds; i++)
			for (int j = 0; j < HELD_TREES; j++)
			{
				pg_atomic_init_u64(&vid_holds[i].tree[j], 0);
				pg_atomic_init_u64(&vid_holds[i].lo[j], 0);
			}
}

/* ---- held row ids (above) */

static VidHolds *
my_holds(void)
{
	Assert(MyProc != NULL && MyProc->pgprocno < n_vid_holds);
	return &vid_holds[MyProc->pgprocno];
}

/*
 * Before vid `next` of tree is handed out, with the counter's lock held:
 * publish the hold unless this backend holds the tree (from a lower vid:
 * the counter only grows) or every tree already.
 */
static void
hold_vids(uint64 tree, uint64 next)
{
	VidHolds   *h = my_holds();
	int			i;

	if (!my_holds_fresh)
	{
		for (i = 0; i < HELD_TREES; i++)
			pg_atomic_write_u64(&h->tree[i], 0);
		my_holds_fresh = true;
	}
	for (i = 0; i < my_nheld; i++)
		if (my_held[i] == tree || my_held[i] == HELD_ANY)
			return;
	if (my_nheld == HELD_TREES)
	{
		/* out of entries: the first one stands for every tree, from 0 */
		pg_atomic_write_u64(&h->lo[0], 0);
		pg_write_barrier();
		pg_atomic_write_u64(&h->tree[0], HELD_ANY);
		my_held[0] = HELD_ANY;
		return;
	}
	pg_atomic_write_u64(&h->lo[i], next);
	pg_write_barrier();
	pg_atomic_write_u64(&h->tree[i], tree);
	my_held[i] = tree;
	my_nheld++;
}

/* the transaction's rows are all written or dropped (xact.c), or the backend exits */
void
trt_vids_release(void)
{
	VidHolds   *h;

	if (my_nheld == 0)
		return;
	h = my_holds();
	/* after the writes: a reader that finds the entry gone sees them */
	pg_memory_barrier();
	for (int i = 0; i < my_nheld; i++)
		pg_atomic_write_u64(&h->tree[i], 0);
	my_nheld = 0;
}

/*
 * A vid of tree below which every row id that will ever be written has
 * been written: rows at lower vids that an engine view taken after this
 * call does not show will never exist.  Not in recovery (the primary's
 * backends hold the vids replay will write).
 */
uint64
trt_vids_settled_below(uint64 tree)
{
	VidCounter *c = counter_for(tree);
	uint64		settled;

	/* every vid handed out before this read had its hold published */
	SpinLockAcquire(&c->mutex);
	settled = c->next;
	SpinLockRelease(&c->mutex);
	pg_memory_barrier();
	for (int i = 0; i < n_vid_holds; i++)
		for (int j = 0; j < HELD_TREES; j++)
		{
			uint64		t = pg_atomic_read_u64(&vid_holds[i].tree[j]);

			if (t != tree && t != HELD_ANY)
				continue;
			pg_read_barrier();
			settled = Min(settled, pg_atomic_read_u64(&vid_holds[i].lo[j]));
		}
	/* a withdrawn hold's rows are published: the caller's view comes after */
	pg_read_barrier();
	return settled;
}

static LWLock *
get_counters_lock(void)
{
	if (counters_lock == NULL)
		counters_lock = &(GetNamedLWLockTranche("tides"))[2].lock;
	return counters_lock;
}

static VidCounter *
counter_for(uint64 tree)
{
	VidCounter *c;
	bool		found;
	uint8		key[TRT_META_TREE_KEY_LEN];
	size_t		klen;
	uint64		reserved;

	Assert(!RecoveryInProgress());	/* see trt_vid_high_water */

	LWLockAcquire(get_counters_lock(), LW_SHARED);
	c = hash_search(vid_counters, &tree, HASH_FIND, NULL);
	LWLockRelease(get_counters_lock());
	if (c != NULL)
		return c;

	klen = trt_meta_tree_key(key, TRT_META_VID_RESERVED, tree);
	reserved = trt_meta_read_u64(key, klen, 0);
	LWLockAcquire(get_counters_lock(), LW_EXCLUSIVE);
	c = hash_search(vid_counters, &tree, HASH_ENTER_NULL, &found);
	if (c == NULL)
	{
		LWLockRelease(get_counters_lock());
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many relations with tides storage in use"),
				 errhint("Increase tides.max_relations.")));
	}
	if (!found)
	{
		SpinLockInit(&c->mutex);
		c->next = reserved;
		c->reserved = reserved;
		c->chunk = FIRST_CHUNK;
		pg_atomic_init_u32(&c->vm_pages, TRT_VM_PAGES_UNKNOWN);
		pg_atomic_init_u64(&c->removed_at, 0);
	}
	LWLockRelease(get_counters_lock());
	return c;
}

/* a dropped tree's counter goes (drops.c) */
void
trt_forget_vid_counter(uint64 tree)
{
	LWLockAcquire(get_counters_lock(), LW_EXCLUSIVE);
	hash_search(vid_counters, &tree, HASH_REMOVE, NULL);
	LWLockRelease(get_counters_lock());
}

uint64
trt_alloc_vids(uint64 tree, uint32 n)
{
	VidCounter *c = counter_for(tree);
	uint64		v;
	uint64		new_reserved;
	uint8		key[TRT_META_TREE_KEY_LEN];
	size_t		klen;

	SpinLockAcquire(&c->mutex);
	if (c->next + n <= c->reserved)
	{
		hold_vids(tree, c->next);
		v = c->next;
		c->next += n;
		SpinLockRelease(&c->mutex);
		return v;
	}
	SpinLockRelease(&c->mutex);

	LWLockAcquire(trt_shared->reserve_lock, LW_EXCLUSIVE);
	SpinLockAcquire(&c->mutex);
	if (c->next + n > c->reserved)
	{
		new_reserved = c->next + Max(c->chunk, n);
		if (c->chunk < MAX_CHUNK)
			c->chunk *= 2;
		SpinLockRelease(&c->mutex);
		if (new_reserved > TRT_VID_MAX)
		{
			LWLockRelease(trt_shared->reserve_lock);
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("tides relation has used all row ids"),
					 errhint("Rewrite the table with VACUUM FULL or CLUSTER to renumber its rows.")));
		}
		klen = trt_meta_tree_key(key, TRT_META_VID_RESERVED, tree);
		trt_meta_write_durable(key, klen, &new_reserved, sizeof(new_reserved));
		SpinLockAcquire(&c->mutex);
		c->reserved = new_reserved;
	}
	/* D6: every vid handed out is below a durable reservation */
	Assert(c->next + n <= c->reserved);
	hold_vids(tree, c->next);
	v = c->next;
	c->next += n;
	SpinLockRelease(&c->mutex);
	LWLockRelease(trt_shared->reserve_lock);
	return v;
}

/* a copied tree continues numbering where the original stands */
void
trt_copy_vid_counter(uint64 from_tree, uint64 to_tree)
{
	uint64		high = trt_vid_high_water(from_tree);
	VidCounter *c = counter_for(to_tree);
	uint8		key[TRT_META_TREE_KEY_LEN];
	size_t		klen = trt_meta_tree_key(key, TRT_META_VID_RESERVED, to_tree);

	LWLockAcquire(trt_shared->reserve_lock, LW_EXCLUSIVE);
	trt_meta_write_durable(key, klen, &high, sizeof(high));
	SpinLockAcquire(&c->mutex);
	c->next = c->reserved = high;
	SpinLockRelease(&c->mutex);
	LWLockRelease(trt_shared->reserve_lock);
}
/* ---- suspect marks: set after a crash (incarnation.c), lifted by VACUUM */

uint64
trt_tree_suspect_below(uint64 tree)
{
	uint8		key[TRT_META_TREE_KEY_LEN];
	size_t		klen = trt_meta_tree_key(key, TRT_META_SUSPECT, tree);

	return trt_meta_read_u64(key, klen, 0);
}

/* lift the mark; durable with VACUUM's final sync (or it is checked again) */
void
trt_tree_clear_suspect(uint64 tree)
{
	uint8		key[TRT_META_TREE_KEY_LEN];
	size_t		klen = trt_meta_tree_key(key, TRT_META_SUSPECT, tree);
	tides_batch *b = trt_local_batch();

	if (tides_batch_delete(b, key, klen) != TIDES_OK)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	trt_write_batch(b);
}

/*
 * How many pages the tree's relation has in its visibility map fork, shared
 * by all backends so that changing a row need not ask the kernel whether a
 * map page exists (src/am/vm.c keeps it, under the relation extension lock).
 */
pg_atomic_uint32 *
trt_tree_vm_pages(uint64 tree)
{
	return &counter_for(tree)->vm_pages;
}

void
trt_tree_note_removal(uint64 tree, uint64 point)
{
	pg_atomic_uint64 *at = &counter_for(tree)->removed_at;
	uint64		cur = pg_atomic_read_u64(at);

	while (cur < point && !pg_atomic_compare_exchange_u64(at, &cur, point))
		;
}

uint64
trt_tree_removed_at(uint64 tree)
{
	return pg_atomic_read_u64(&counter_for(tree)->removed_at);
}

uint64
trt_vid_high_water(uint64 tree)
{
	VidCounter *c;
	uint64		v;

	/*
	 * A hot standby's counters would go stale while WAL replay moves the
	 * reservations on, and one cached here would be handed out after a
	 * promotion: in recovery, read the reservation (at least every vid
	 * used) and cache nothing.
	 */
	if (RecoveryInProgress())
	{
		uint8		key[TRT_META_TREE_KEY_LEN];
		size_t		klen = trt_meta_tree_key(key, TRT_META_VID_RESERVED, tree);

		return trt_meta_read_u64(key, klen, 0);
	}
	c = counter_for(tree);

	SpinLockAcquire(&c->mutex);
	v = c->next;
	SpinLockRelease(&c->mutex);
	return v;
}
