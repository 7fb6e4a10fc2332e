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
 * map fork (src/am/vm.c).  The suspect mark ('S') is the row id below which
 * a crash may have lost rows whose index entries survived (src/am/vacuum.c).
 */
#include "postgres.h"

#include "access/xlog.h"
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
} VidCounter;

static HTAB *vid_counters = NULL;
static LWLock *counters_lock = NULL;

#define FIRST_CHUNK 1024
#define MAX_CHUNK (1u << 20)

/* ---- the shared hash of counters */

Size
trt_trees_shmem_size(void)
{
	return hash_estimate_size(trt_max_relations, sizeof(VidCounter));
}

void
trt_trees_shmem_init(void)
{
	HASHCTL		info;

	info.keysize = sizeof(uint64);
	info.entrysize = sizeof(VidCounter);
	vid_counters = ShmemInitHash("tides vid counters", trt_max_relations, trt_max_relations,
								 &info, HASH_ELEM | HASH_BLOBS);
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
