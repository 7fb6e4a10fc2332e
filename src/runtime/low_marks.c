/*
 * low_marks.c -- retired row ids: the mark of a tree below which no row
 * version, and no entry of its table's tides_btree indexes, is ever seen
 * again.
 *
 * A table deleted at its low end -- a queue, a retention window, the Insert
 * Benchmark's "delete the oldest rows" -- hands VACUUM a run of dead versions
 * at its lowest row ids on every pass.  Removing them one by one costs an
 * engine write per version and one per index entry (computed by key, see
 * src/index/tidx_vacuum.c), and each of those deletions is then inserted
 * into a memtable, flushed and compacted like data.  When VACUUM finds that
 * every row id below V is dead to every snapshot or was never written
 * (src/am/vacuum.c), it writes one key instead: the tree's low mark, for the
 * table and for each of its tides_btree indexes.  From then on
 *
 *   - flush and compaction drop every row of the table's tree below V, and
 *     every index entry whose TID (its last 6 bytes) is below V: the engine's
 *     compaction filter (tides_set_filter), installed in every process that
 *     opens the engine (engine.c);
 *   - index scans step over entries below V without fetching their rows
 *     (src/index/tidx_scan.c), and VACUUM starts at V.
 *
 * Why dropping them is right whenever it happens: a version dead to every
 * snapshot stays dead (its deleter's commit was durable before VACUUM judged
 * it, tam_sync_before_freezing), nothing writes a live version at a vid
 * below V (vids are never reused, and V is at most trt_vids_settled_below),
 * and an entry of a dead version is one no scan may return.  So a mark lost
 * in a crash only means less is dropped; it need not be durable before the
 * filter acts on it.  What must not happen is an index-only scan trusting a
 * visibility-map bit for an entry whose row has gone: VACUUM never marks a
 * block with a row id below a mark all-visible (src/am/vacuum.c).
 *
 * The marks are kept as metadata keys ('L', meta.h), which follow the data
 * into base backups, standbys (a replayed batch that writes one publishes
 * it, trt_low_marks_redo) and copies of trees, and in a shared hash that the
 * filter reads (tides.max_relations * 2 entries; when it is full, VACUUM
 * removes versions one by one as before).  The postmaster loads it after the
 * engine's recovery.  Each process caches what it looked up until the
 * hash's generation moves (lookup), so neither the filter nor a scan takes
 * the lock for a tree it asked about before.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"

#include "runtime/trt.h"
#include "runtime/meta.h"

typedef struct LowMark
{
	uint64		tree;			/* hash key */
	uint64		mark;			/* row ids below are retired (0: none yet) */
	bool		index;			/* the tree is a tides_btree index's */
} LowMark;

/* the value of an 'L' key */
typedef struct LowMarkValue
{
	uint64		mark;
	uint8		index;
} LowMarkValue;

#define LOW_MARK_VALUE_LEN 9

typedef struct LowMarksShared
{
	pg_atomic_uint64 generation;	/* moves with every change of the hash */
} LowMarksShared;

static HTAB *low_marks = NULL;
static LowMarksShared *low_shared = NULL;
static LWLock *low_lock = NULL;

static int
capacity(void)
{
	return trt_max_relations * 2;
}

Size
trt_low_marks_shmem_size(void)
{
	return add_size(hash_estimate_size(capacity(), sizeof(LowMark)), sizeof(LowMarksShared));
}

void
trt_low_marks_shmem_init(void)
{
	HASHCTL		ctl;
	bool		found;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(uint64);
	ctl.entrysize = sizeof(LowMark);
	low_marks = ShmemInitHash("tides low marks", capacity(), capacity(), &ctl,
							  HASH_ELEM | HASH_BLOBS);
	low_shared = ShmemInitStruct("tides low marks generation", sizeof(LowMarksShared), &found);
	if (!found)
		pg_atomic_init_u64(&low_shared->generation, 1);
}

static LWLock *
get_lock(void)
{
	if (low_lock == NULL)
		low_lock = &(GetNamedLWLockTranche("tides"))[5].lock;
	return low_lock;
}

/* enter or raise a mark; false if the hash is full.  Caller holds the lock (or is alone). */
static bool
publish_locked(uint64 tree, uint64 mark, bool index)
{
	bool		found;
	LowMark    *m = hash_search(low_marks, &tree, HASH_ENTER_NULL, &found);

	if (m == NULL)
		return false;
	if (!found)
	{
		m->mark = 0;
		m->index = index;
	}
	Assert(m->index == index);
	if (mark > m->mark)
		m->mark = mark;
	pg_atomic_fetch_add_u64(&low_shared->generation, 1);
	return true;
}

static bool
parse_value(const void *val, size_t vlen, LowMarkValue *v)
{
	if (vlen != LOW_MARK_VALUE_LEN)
		return false;
	memcpy(&v->mark, val, 8);
	v->index = ((const uint8 *) val)[8];
	return v->index <= 1;
}

/*
 * The postmaster, after the engine's recovery, before any other process
 * runs: every stored mark.  A mark that does not fit is only not acted on.
 */
void
trt_low_marks_load(tides_db *db)
{
	uint8		lower[TRT_META_HEAD_LEN],
				upper[TRT_META_HEAD_LEN];
	tides_iter *it;
	int			n = 0,
				skipped = 0;
	tides_status s;

	it = trt_meta_kind_iter_raw(db, TRT_META_LOW_MARK, lower, upper);
	if (it == NULL)
	{
		ereport(LOG, (errmsg("tides: could not load the low marks of tables: out of engine memory")));
		return;
	}
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
	{
		size_t		klen,
					vlen;
		const uint8 *k = tides_iter_key(it, &klen);
		const void *v = tides_iter_value(it, &vlen);
		uint64		tree;
		LowMarkValue lv;

		if (!trt_meta_parse_tree_key(k, klen, TRT_META_LOW_MARK, &tree) ||
			!parse_value(v, vlen, &lv))
			continue;
		if (publish_locked(tree, lv.mark, lv.index != 0))
			n++;
		else
			skipped++;
	}
	s = tides_iter_status(it);
	tides_iter_free(it);
	if (s != TIDES_OK)
		ereport(LOG, (errmsg("tides: could not load the low marks of tables: %s", tides_status_name(s))));
	if (skipped > 0)
		ereport(LOG,
				(errmsg("tides: %d of %d low marks of tables were not loaded: the shared table is full",
						skipped, n + skipped),
				 errhint("Increase tides.max_relations.")));
}

/*
 * This process's cache of marks, good while the hash's generation stays:
 * the filter looks a tree up for every key a flush or compaction meets, a
 * scan at every rescan, so the lock is taken only for a tree not cached
 * since the generation last moved.  A mark read just before it moves is
 * lower than the new one, which is safe for every caller: it retires less.
 */
#define CACHE_SLOTS 16

typedef struct CachedMark
{
	uint64		tree;			/* 0: empty (tree 0 has no mark) */
	uint64		mark;
	bool		index;
} CachedMark;

static CachedMark cache[CACHE_SLOTS];
static uint64 cache_gen = 0;

static const CachedMark *
lookup(uint64 tree)
{
	uint64		gen = pg_atomic_read_u64(&low_shared->generation);
	CachedMark *c = &cache[(tree * UINT64CONST(0x9E3779B97F4A7C15)) >> 60];

	StaticAssertStmt(CACHE_SLOTS == 16, "the slot is the hash's top 4 bits");
	if (gen != cache_gen)
	{
		memset(cache, 0, sizeof(cache));
		cache_gen = gen;
	}
	if (c->tree != tree)
	{
		LowMark    *m;

		LWLockAcquire(get_lock(), LW_SHARED);
		m = hash_search(low_marks, &tree, HASH_FIND, NULL);
		c->mark = m ? m->mark : 0;
		c->index = m ? m->index : false;
		LWLockRelease(get_lock());
		c->tree = tree;
	}
	return c;
}

uint64
trt_tree_low_mark(uint64 tree)
{
	return lookup(tree)->mark;
}

/*
 * Make room for the marks of a table and its indexes before VACUUM relies
 * on them: false if the hash has no room for all.  (An entry at 0 that
 * stays behind retires nothing.)
 */
bool
trt_low_marks_reserve(uint64 table_tree, const uint64 *index_trees, int n)
{
	bool		ok;

	LWLockAcquire(get_lock(), LW_EXCLUSIVE);
	ok = publish_locked(table_tree, 0, false);
	for (int i = 0; ok && i < n; i++)
		ok = publish_locked(index_trees[i], 0, true);
	LWLockRelease(get_lock());
	return ok;
}

/*
 * Ask compaction to rewrite the files of a tree whose keys are all retired
 * (tides_mark_retired): where the row ids ascend with the keys -- the
 * table's own tree, an index on an increasing key -- the files at the low
 * end sit at the bottom, and nothing written later would make compaction
 * read them again.  A row's key ends in its row id, an entry's in its TID:
 * both big-endian, in the same order.
 */
static void
reclaim(uint64 tree, bool index, uint64 mark)
{
	uint8		lo[TRT_TREE_KEY_LEN],
				hi[TRT_TREE_KEY_LEN];
	uint64		below = mark;

	if (index)
	{
		ItemPointerData tid;

		trt_vid_to_tid(mark, &tid);
		below = ((uint64) ItemPointerGetBlockNumberNoCheck(&tid) << 16) |
			ItemPointerGetOffsetNumberNoCheck(&tid);
	}
	trt_key_put_tree(lo, tree);
	trt_key_put_tree(hi, tree + 1);
	(void) tides_mark_retired(trt_engine(), lo, sizeof(lo), hi, sizeof(hi), below);
}

/*
 * Retire the row ids below mark in a table's tree and in its tides_btree
 * indexes' trees (reserved with trt_low_marks_reserve): when mark is above
 * the table's, the 'L' keys in one batch, which carries the caller's
 * conflict horizon to hot standbys (trt_wal_set_conflict), then the shared
 * marks.  Not synced: see the file comment.  Then the trees' files that
 * hold retired keys only are handed to compaction.
 */
void
trt_set_low_marks(uint64 table_tree, const uint64 *index_trees, int n, uint64 mark)
{
	tides_batch *b;
	uint8		key[TRT_META_TREE_KEY_LEN];
	uint8		val[LOW_MARK_VALUE_LEN];

	Assert(mark <= TRT_VID_MAX + 1);
	if (mark == 0)
		return;
	if (mark <= trt_tree_low_mark(table_tree))
	{
		for (int i = -1; i < n; i++)
			reclaim(i < 0 ? table_tree : index_trees[i], i >= 0, mark);
		return;
	}
	b = trt_local_batch();
	memcpy(val, &mark, 8);
	for (int i = -1; i < n; i++)
	{
		uint64		tree = i < 0 ? table_tree : index_trees[i];

		val[8] = i < 0 ? 0 : 1;
		if (tides_batch_put(b, key, trt_meta_tree_key(key, TRT_META_LOW_MARK, tree),
							val, sizeof(val)) != TIDES_OK)
			ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory building a tides batch")));
	}
	trt_write_batch(b);
	LWLockAcquire(get_lock(), LW_EXCLUSIVE);
	for (int i = -1; i < n; i++)
	{
		bool		ok = publish_locked(i < 0 ? table_tree : index_trees[i], mark, i >= 0);

		Assert(ok);				/* reserved */
		(void) ok;
	}
	LWLockRelease(get_lock());
	for (int i = -1; i < n; i++)
		reclaim(i < 0 ? table_tree : index_trees[i], i >= 0, mark);
}

/* a dropped tree's mark (drops.c deletes its key) */
void
trt_forget_low_mark(uint64 tree)
{
	LWLockAcquire(get_lock(), LW_EXCLUSIVE);
	if (hash_search(low_marks, &tree, HASH_REMOVE, NULL) != NULL)
		pg_atomic_fetch_add_u64(&low_shared->generation, 1);
	LWLockRelease(get_lock());
}

/* the 'L' key of a copied tree (copies.c), into b; false if from has none */
bool
trt_copy_low_mark(uint64 from, uint64 to, tides_batch *b)
{
	uint8		key[TRT_META_TREE_KEY_LEN];
	char	   *val;
	size_t		vlen;
	LowMarkValue lv;
	bool		ok;

	if (!trt_read(key, trt_meta_tree_key(key, TRT_META_LOW_MARK, from), &val, &vlen))
		return false;
	ok = parse_value(val, vlen, &lv);
	if (ok && tides_batch_put(b, key, trt_meta_tree_key(key, TRT_META_LOW_MARK, to),
							  val, vlen) != TIDES_OK)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory building a tides batch")));
	pfree(val);
	if (ok)
	{
		LWLockAcquire(get_lock(), LW_EXCLUSIVE);
		(void) publish_locked(to, lv.mark, lv.index != 0);
		LWLockRelease(get_lock());
	}
	return ok;
}

/* ---- replay: a batch that writes or deletes 'L' keys (the startup process) */

static void
redo_entry(void *arg, bool is_delete, const void *key, size_t klen, const void *val, size_t vlen)
{
	uint64		tree;
	LowMarkValue lv;

	if (klen != TRT_META_TREE_KEY_LEN ||
		!trt_meta_parse_tree_key(key, klen, TRT_META_LOW_MARK, &tree))
		return;
	LWLockAcquire(get_lock(), LW_EXCLUSIVE);
	if (is_delete)
	{
		if (hash_search(low_marks, &tree, HASH_REMOVE, NULL) != NULL)
			pg_atomic_fetch_add_u64(&low_shared->generation, 1);
	}
	else if (parse_value(val, vlen, &lv))
		(void) publish_locked(tree, lv.mark, lv.index != 0);
	LWLockRelease(get_lock());
}

void
trt_low_marks_redo(tides_batch *b)
{
	tides_batch_foreach(b, redo_entry, NULL);
}

/* ---- the compaction filter */

/* the row id an index entry's TID (its last TRT_STEM_SUFFIX_LEN bytes) stands for */
static inline bool
entry_vid(const uint8 *key, size_t klen, uint64 *vid)
{
	const uint8 *p = key + klen - TRT_STEM_SUFFIX_LEN;
	ItemPointerData tid;

	Assert(klen >= TRT_TREE_KEY_LEN + TRT_STEM_SUFFIX_LEN);
	ItemPointerSet(&tid, ((uint32) p[0] << 24) | ((uint32) p[1] << 16) | ((uint32) p[2] << 8) | p[3],
				   (OffsetNumber) ((p[4] << 8) | p[5]));
	return trt_tid_to_vid(&tid, vid);
}

static tides_filter_decision
low_mark_filter(void *arg, const void *key, size_t klen, const void *val, size_t vlen,
				const void **new_val, size_t *new_vlen)
{
	const uint8 *k = key;
	uint64		tree;
	const CachedMark *c;
	uint64		vid;

	/* the postmaster compacts while it resets after a crash: no lock there, no marks */
	if (klen < TRT_TREE_KEY_LEN + TRT_STEM_SUFFIX_LEN || MyProc == NULL)
		return TIDES_FILTER_KEEP;
	tree = trt_key_get_tree(k);
	if (tree < TRT_TREE_FIRST)
		return TIDES_FILTER_KEEP;
	c = lookup(tree);
	if (c->mark == 0)
		return TIDES_FILTER_KEEP;
	if (c->index)
	{
		if (!entry_vid(k, klen, &vid))
			return TIDES_FILTER_KEEP;
	}
	else
	{
		if (klen != TRT_ROW_KEY_LEN)
			return TIDES_FILTER_KEEP;
		vid = trt_row_key_vid(k);
	}
	return vid < c->mark ? TIDES_FILTER_DROP : TIDES_FILTER_KEEP;
}

void
trt_low_marks_attach(tides_db *db)
{
	tides_set_filter(db, low_mark_filter, NULL);
}

/* is an index entry's row id below mark?  For scans that step over retired entries */
bool
trt_entry_retired(const uint8 *key, size_t klen, uint64 mark)
{
	uint64		vid;

	if (mark == 0 || klen < TRT_TREE_KEY_LEN + TRT_STEM_SUFFIX_LEN)
		return false;
	return entry_vid(key, klen, &vid) && vid < mark;
}
