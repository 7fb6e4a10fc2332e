/*
 * drops.c -- trees dropped when a transaction ends.
 *
 * PostgreSQL gives a table AM no drop callback, and relation storage is
 * created and dropped transactionally.  So the transaction that drops or
 * creates a relation writes a drop marker ('D', meta.h) naming the tree,
 * its xid and whether the tree goes when that xid commits (DROP, TRUNCATE's
 * old storage) or aborts (new storage).  The maintenance worker resolves
 * markers once their transaction has ended, drops the tree's keys
 * (tombstones for small trees, tides_drop_prefix for large ones), and
 * removes the marker, the mapping and the row-id counter.
 * src/runtime/README.md, section 5.
 */
#include "postgres.h"

#include "access/xact.h"
#include "storage/procarray.h"

#include "runtime/trt.h"
#include "runtime/meta.h"

/*
 * A drop marker lists conditions; the tree goes as soon as one holds.  Each
 * condition names a (sub)transaction and whether its commit or its abort
 * drops the tree.  CREATE adds "abort of the creator", DROP and the old side
 * of TRUNCATE add "commit of the dropper"; a table created and dropped in one
 * transaction carries both and goes either way.
 */
typedef struct DropCondition
{
	TransactionId xid;
	TransactionId top;
	uint32		inc;
	uint32		at_commit;
} DropCondition;

#define MAX_DROP_CONDITIONS 64

static LWLock *
markers_lock(void)
{
	return &(GetNamedLWLockTranche("tides"))[3].lock;
}

void
trt_drop_tree_at_end(uint64 tree, bool at_commit)
{
	tides_batch *b;
	uint8		key[TRT_META_TREE_KEY_LEN];
	size_t		klen = trt_meta_tree_key(key, TRT_META_DROP, tree);
	DropCondition conds[MAX_DROP_CONDITIONS];
	int			n = 0;
	char	   *val;
	size_t		vlen;

	trt_xact_note_write();
	LWLockAcquire(markers_lock(), LW_EXCLUSIVE);
	if (trt_read(key, klen, &val, &vlen))
	{
		n = Min(vlen / sizeof(DropCondition), MAX_DROP_CONDITIONS - 1);
		memcpy(conds, val, n * sizeof(DropCondition));
		pfree(val);
	}
	memset(&conds[n], 0, sizeof(conds[n]));
	conds[n].xid = GetCurrentTransactionId();
	conds[n].top = GetTopTransactionId();
	conds[n].inc = trt_shared->incarnation;
	conds[n].at_commit = at_commit;
	n++;
	b = trt_local_batch();
	if (tides_batch_put(b, key, klen, conds, n * sizeof(DropCondition)) != TIDES_OK)
	{
		LWLockRelease(markers_lock());
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	}
	trt_xact_tag_batch(b);
	trt_write_batch(b);
	LWLockRelease(markers_lock());
}

void
trt_schedule_relation_drop(Relation rel)
{
	trt_drop_tree_at_end(trt_rel_tree(rel), true);
}

/*
 * An index's tree, if it has one: trt_rel_tree would start a missing tree
 * empty (and warn), which for an index being dropped is pointless.
 */
void
trt_schedule_index_drop(Relation index)
{
	uint64		tree;

	if (trt_lookup_tree(&index->rd_node, index->rd_backend, &tree))
		trt_drop_tree_at_end(tree, true);
}

#define SMALL_TREE_KEYS 4096

/*
 * Delete every key of a small tree with tombstones; false (nothing written)
 * if the tree holds more than SMALL_TREE_KEYS keys.  Small trees are most
 * trees (temporary work tables, tests); a dropped-prefix entry for each
 * would cost every read a check until compaction frees its files.
 */
static bool
delete_small_tree(tides_db *db, uint64 tree)
{
	uint8		lower[8],
				upper[8];
	tides_iter *it;
	tides_batch *b = tides_batch_new();
	int			n = 0;
	bool		small = true;
	tides_status s;

	if (b == NULL)
		return false;
	trt_key_put_tree(lower, tree);
	trt_key_put_tree(upper, tree + 1);
	it = trt_open_range_iter(db, lower, sizeof(lower), upper, sizeof(upper), false);
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
	{
		size_t		klen;
		const void *k = tides_iter_key(it, &klen);

		if (++n > SMALL_TREE_KEYS)
		{
			small = false;
			break;
		}
		tides_batch_delete(b, k, klen);
	}
	small = small && tides_iter_status(it) == TIDES_OK;
	trt_close_iter(it);
	if (small && n > 0)
	{
		for (int attempt = 0;; attempt++)
		{
			s = trt_engine_write(db, b, true, NULL);
			if (s != TIDES_BUSY || attempt > 1000)
				break;
			pg_usleep(1000L);
		}
		small = s == TIDES_OK;
	}
	tides_batch_free(b);
	return small;
}

/*
 * Remove a tree's data, counter, mappings and marker.  False if the engine
 * is too busy now (the marker stays; the next round retries).
 */
static bool
drop_tree(uint64 tree)
{
	tides_db   *db = trt_engine();
	uint8		prefix[8];
	uint8		key[TRT_META_RELMAP_KEY_LEN],
				rkey[TRT_META_TREE_KEY_LEN],
				dkey[TRT_META_TREE_KEY_LEN],
				vkey[TRT_META_TREE_KEY_LEN],
				lkey[TRT_META_TREE_KEY_LEN];
	size_t		rklen = trt_meta_tree_key(rkey, TRT_META_TREEMAP, tree);
	size_t		dklen = trt_meta_tree_key(dkey, TRT_META_DROP, tree);
	size_t		vklen = trt_meta_tree_key(vkey, TRT_META_VID_RESERVED, tree);
	char	   *val;
	size_t		vlen;
	tides_batch *b;

	if (!delete_small_tree(db, tree))
	{
		tides_status s;

		trt_key_put_tree(prefix, tree);
		s = trt_drop_prefix(db, prefix, sizeof(prefix), true);
		if (s == TIDES_BUSY)
			return false;
		if (s != TIDES_OK)
			trt_engine_error(s, "drop a tree");
	}

	b = trt_local_batch();
	if (trt_read(rkey, rklen, &val, &vlen))
	{
		TrtTreeOwnerValue ov;
		RelFileNode rnode;
		uint64		mapped;

		if (trt_meta_owner_value(val, vlen, &ov))
		{
			rnode.dbNode = ov.db;
			rnode.spcNode = ov.spc;
			rnode.relNode = ov.rel;
			/* the relfilenode may map to a newer tree by now: only remove our own mapping */
			if (trt_lookup_tree(&rnode, ov.backend, &mapped) && mapped == tree)
				tides_batch_delete(b, key, trt_meta_relmap_key(key, &rnode, ov.backend));
		}
		pfree(val);
	}
	tides_batch_delete(b, rkey, rklen);
	tides_batch_delete(b, vkey, vklen);
	tides_batch_delete(b, dkey, dklen);
	tides_batch_delete(b, lkey, trt_meta_tree_key(lkey, TRT_META_LOW_MARK, tree));
	trt_write_batch(b);
	trt_forget_vid_counter(tree);
	trt_forget_low_mark(tree);
	trt_vacant_forget(tree);
	return true;
}

/* what a marker's conditions say: drop now, keep for good, or wait */
typedef enum
{
	MARKER_WAIT, MARKER_DROP, MARKER_KEEP
} MarkerVerdict;

static MarkerVerdict
judge_marker(const DropCondition *conds, int n)
{
	bool		all_ended = true;

	for (int i = 0; i < n; i++)
	{
		const DropCondition *c = &conds[i];
		bool		committed;

		if (trt_writer_lost(c->inc, c->top, c->xid))
			committed = false;	/* PostgreSQL never saw it commit */
		else if (TransactionIdIsInProgress(c->xid))
		{
			all_ended = false;
			continue;
		}
		else
			committed = TransactionIdDidCommit(c->xid);
		if (committed == (bool) c->at_commit)
			return MARKER_DROP;
	}
	return all_ended ? MARKER_KEEP : MARKER_WAIT;
}

/*
 * Resolve drop markers whose transactions have ended.  Runs in the
 * maintenance worker (no transaction needed: only the commit log is read).
 */
void
trt_process_drops(void)
{
	tides_db   *db = trt_engine();
	uint8		lower[TRT_META_HEAD_LEN],
				upper[TRT_META_HEAD_LEN];
	tides_iter *it;
	uint64	   *todo = NULL;
	bool	   *drop = NULL;
	int			ntodo = 0,
				cap = 0;

	trt_meta_kind_range(lower, upper, TRT_META_DROP);
	LWLockAcquire(markers_lock(), LW_EXCLUSIVE);
	it = trt_open_range_iter(db, lower, sizeof(lower), upper, sizeof(upper), false);
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
	{
		size_t		klen,
					vlen;
		const uint8 *k = tides_iter_key(it, &klen);
		const char *v = tides_iter_value(it, &vlen);
		DropCondition conds[MAX_DROP_CONDITIONS];
		int			n = Min(vlen / sizeof(DropCondition), MAX_DROP_CONDITIONS);
		MarkerVerdict verdict;
		uint64		tree;

		if (!trt_meta_parse_tree_key(k, klen, TRT_META_DROP, &tree))
			continue;
		memcpy(conds, v, n * sizeof(DropCondition));
		verdict = judge_marker(conds, n);
		if (verdict == MARKER_WAIT)
			continue;
		if (ntodo == cap)
		{
			cap = cap ? cap * 2 : 16;
			todo = todo ? repalloc(todo, cap * sizeof(uint64)) : palloc(cap * sizeof(uint64));
			drop = drop ? repalloc(drop, cap * sizeof(bool)) : palloc(cap * sizeof(bool));
		}
		todo[ntodo] = tree;
		drop[ntodo] = verdict == MARKER_DROP;
		ntodo++;
	}
	trt_close_iter(it);
	LWLockRelease(markers_lock());

	/*
	 * Act without the markers lock: dropping waits for the engine, and
	 * transactions adding conditions must not wait for that.  A marker that
	 * gained a condition meanwhile belongs to a tree someone still uses, and
	 * its verdict is looked at again first.
	 */
	for (int i = 0; i < ntodo; i++)
	{
		uint8		dkey[TRT_META_TREE_KEY_LEN];
		size_t		dklen = trt_meta_tree_key(dkey, TRT_META_DROP, todo[i]);
		char	   *val;
		size_t		vlen;
		bool		still;

		LWLockAcquire(markers_lock(), LW_EXCLUSIVE);
		still = trt_read(dkey, dklen, &val, &vlen);
		if (still)
		{
			MarkerVerdict v = judge_marker((const DropCondition *) val,
										   Min(vlen / sizeof(DropCondition), MAX_DROP_CONDITIONS));

			still = (v == MARKER_DROP) == drop[i] && v != MARKER_WAIT;
			pfree(val);
		}
		LWLockRelease(markers_lock());
		if (!still)
			continue;
		if (drop[i])
			drop_tree(todo[i]);
		else
		{
			tides_batch *b = trt_local_batch();

			tides_batch_delete(b, dkey, dklen);
			trt_write_batch(b);
		}
	}
	if (todo)
	{
		pfree(todo);
		pfree(drop);
	}
}

/* DROP DATABASE: every tree of the database goes when the drop commits */
void
trt_schedule_database_drop(Oid dboid)
{
	int			n;
	TrtRelmapEntry *maps;

	/* DROP DATABASE forces a synchronous commit, which xact.c cannot see */
	trt_xact_note_write();
	trt_xact_force_durable();
	maps = trt_meta_relmaps_of_db(dboid, &n);
	for (int i = 0; i < n; i++)
		trt_drop_tree_at_end(maps[i].map.tree, true);
	if (maps)
		pfree(maps);
}
