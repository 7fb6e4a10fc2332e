/*
 * index_build.c -- feeding index builds: CREATE INDEX (all versions that any
 * snapshot may still need), CREATE INDEX CONCURRENTLY's validation pass,
 * and BRIN's block-range summaries.
 *
 * The rules are heap's heapam_index_build_range_scan: dead versions are
 * skipped; recently dead ones are indexed as not alive; versions being
 * inserted or deleted by other transactions are indexed, after waiting for
 * the other transaction when uniqueness is being checked.
 *
 * Index entries point at HOT chain roots (hot.c): a member is indexed under
 * its root's TID.  As in heap, a recently dead member that was HOT-updated
 * is not indexed (only the chain's newest state is), which makes the chain
 * "broken" for snapshots that still see the old state: ii_BrokenHotChain
 * tells PostgreSQL to hide the index from them (indcheckxmin).
 *
 * Two ways through the table.  Each member names its root (meta.link), and
 * whether a member is indexed depends on that member alone, so a build that
 * takes its entries in any order reads every version once, in vid order,
 * and indexes each under tam_root_vid (index_by_versions): one sequential
 * pass however many rows were updated.  An access method that summarizes
 * block ranges as the entries come (BRIN: a range is done once the scan
 * passes it) must get each chain's members with its root, so for it -- and
 * for any method this file does not know -- the scan goes root by root and
 * walks each chain (index_by_chains), one point read per member, wherever
 * it lives: a bitmap page is read the same way.  Heap-only members live
 * wherever their update put them, usually far from their roots: a table
 * whose every row was HOT-updated once took three times as long to index
 * by chains.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/catalog.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "commands/progress.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/snapmgr.h"
#include "utils/tuplesort.h"

#include "am/tam.h"

/* how one chain member is to be indexed */
typedef struct BuildState
{
	Relation	heap;
	uint64		tree;
	struct IndexInfo *index_info;
	bool		anyvisible;
	bool		checking_uniqueness;
	bool		is_system_catalog;
	TransactionId OldestXmin;
	double		reltuples;
	TamTupleBuf rbuf;
	/* the caller's: how an entry is made and handed on */
	Relation	index;
	EState	   *estate;
	ExprState  *predicate;
	TupleTableSlot *slot;
	IndexBuildCallback callback;
	void	   *callback_state;
	bool		progress;
} BuildState;

/*
 * Judge one member against OldestXmin (SnapshotAny builds): whether to index
 * it and whether it is alive.  May wait for a concurrent writer and judge
 * the member again; *tp then points at its fresh state (NULL: it is gone).
 */
static bool
judge_member(BuildState *bs, TamTuple **tp, bool *alive)
{
	TamTuple *t = *tp;
	TransactionId dead_after;
	TransactionId xwait;

recheck:
	switch (tam_satisfies_vacuum(t, bs->OldestXmin, &dead_after))
	{
		case HEAPTUPLE_DEAD:
			return false;
		case HEAPTUPLE_LIVE:
			*alive = true;
			bs->reltuples += 1;
			return true;
		case HEAPTUPLE_RECENTLY_DEAD:
			*alive = false;
			if (HeapTupleHeaderIsHotUpdated(t->htup.t_data))
			{
				/* only the chain's newest state is indexed */
				bs->index_info->ii_BrokenHotChain = true;
				return false;
			}
			return true;
		case HEAPTUPLE_INSERT_IN_PROGRESS:
			*alive = true;
			if (bs->anyvisible)
			{
				bs->reltuples += 1;
				return true;
			}
			xwait = HeapTupleHeaderGetXmin(t->htup.t_data);
			if (TransactionIdIsCurrentTransactionId(xwait))
			{
				bs->reltuples += 1;
				return true;
			}
			if (!bs->is_system_catalog)
				elog(WARNING, "concurrent insert in progress within table \"%s\"",
					 RelationGetRelationName(bs->heap));
			if (bs->checking_uniqueness)
			{
				/* the outcome decides whether the entry may conflict */
				XactLockTableWait(xwait, bs->heap, &t->htup.t_self, XLTW_InsertIndexUnique);
				CHECK_FOR_INTERRUPTS();
				t = *tp = tam_fetch_version(bs->tree, t->vid, RelationGetRelid(bs->heap), &bs->rbuf);
				if (t == NULL)
					return false;
				goto recheck;
			}
			return true;
		case HEAPTUPLE_DELETE_IN_PROGRESS:
			*alive = false;
			if (bs->anyvisible)
			{
				bs->reltuples += 1;
				return true;
			}
			xwait = HeapTupleHeaderGetUpdateXid(t->htup.t_data);
			if (TransactionIdIsCurrentTransactionId(xwait))
			{
				if (HeapTupleHeaderIsHotUpdated(t->htup.t_data))
				{
					bs->index_info->ii_BrokenHotChain = true;
					return false;
				}
				return true;
			}
			if (!bs->is_system_catalog)
				elog(WARNING, "concurrent delete in progress within table \"%s\"",
					 RelationGetRelationName(bs->heap));
			if (bs->checking_uniqueness || HeapTupleHeaderIsHotUpdated(t->htup.t_data))
			{
				XactLockTableWait(xwait, bs->heap, &t->htup.t_self, XLTW_InsertIndexUnique);
				CHECK_FOR_INTERRUPTS();
				t = *tp = tam_fetch_version(bs->tree, t->vid, RelationGetRelid(bs->heap), &bs->rbuf);
				if (t == NULL)
					return false;
				goto recheck;
			}
			bs->reltuples += 1;
			return true;
	}
	return false;
}

/* index t (not a stub) under root_tid, if it passes the index's predicate */
static void
index_member(BuildState *bs, TamTuple *t, ItemPointer root_tid, bool alive)
{
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	ExprContext *econtext = GetPerTupleExprContext(bs->estate);

	MemoryContextReset(econtext->ecxt_per_tuple_memory);
	tam_store_in_slot(t, bs->slot);
	if (bs->predicate != NULL && !ExecQual(bs->predicate, econtext))
		return;
	FormIndexDatum(bs->index_info, bs->slot, bs->estate, values, isnull);
	bs->callback(bs->index, root_tid, values, isnull, alive, bs->callback_state);
}

/* may the index take its entries in any order (see the file comment)? */
static bool
takes_any_order(Relation index)
{
	switch (index->rd_rel->relam)
	{
		case BTREE_AM_OID:		/* sorts (key, TID) */
		case HASH_AM_OID:		/* sorts by hash, or inserts */
		case GIST_AM_OID:		/* sorts, or inserts */
		case SPGIST_AM_OID:		/* inserts */
		case GIN_AM_OID:		/* accumulates per key, sorting TIDs out of order */
			return true;
		default:
			return trt_is_tides_index(index);	/* sorts its entries */
	}
}

/* every version once, in vid order, each under its root's TID */
static void
index_by_versions(BuildState *bs, TableScanDesc scan, Snapshot snapshot)
{
	TamTuple *t;

	while ((t = tam_scan_next_version(scan)) != NULL)
	{
		ItemPointerData root_tid;
		bool		alive = true;

		CHECK_FOR_INTERRUPTS();
		if (bs->progress)
			pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_DONE,
										 ItemPointerGetBlockNumber(&t->htup.t_self));
		if (TAM_IS_STUB(t))
			continue;			/* a pruned root: its members come on their own */
		trt_vid_to_tid(tam_root_vid(t), &root_tid);
		if (snapshot != SnapshotAny)
		{
			/* an MVCC build: the one member of each chain its snapshot sees */
			if (!tam_visible(t, snapshot))
				continue;
			bs->reltuples += 1;
		}
		else if (!judge_member(bs, &t, &alive) || t == NULL)
			continue;
		index_member(bs, t, &root_tid, alive);
	}
}

/* root by root, each chain walked from its root */
static void
index_by_chains(BuildState *bs, TableScanDesc scan, Snapshot snapshot)
{
	Oid			relid = RelationGetRelid(bs->heap);
	TamTupleBuf walkbuf;
	TamTuple *root;

	tam_tuple_buf_init(&walkbuf, CurrentMemoryContext);
	while ((root = tam_scan_next_root(scan)) != NULL)
	{
		ItemPointerData root_tid = root->htup.t_self;
		TamTuple *t;
		TransactionId prev_xmax = InvalidTransactionId;

		CHECK_FOR_INTERRUPTS();
		if (bs->progress)
			pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_DONE,
										 ItemPointerGetBlockNumber(&root_tid));
		if (snapshot != SnapshotAny)
		{
			/* an MVCC build indexes the one member its snapshot sees */
			ItemPointerData tid = root_tid;

			t = tam_hot_search(bs->heap, bs->tree, &tid, snapshot, &walkbuf, NULL, NULL, true, false, NULL, NULL);
			if (t == NULL)
				continue;
			bs->reltuples += 1;
			index_member(bs, t, &root_tid, true);
			continue;
		}

		/* SnapshotAny: every member that some snapshot may still need */
		t = TAM_IS_STUB(root) ? tam_fetch_version(bs->tree, root->meta.link, relid, &walkbuf) : root;
		while (t != NULL)
		{
			bool		alive = true;
			uint64		next;
			bool		more;

			if (TransactionIdIsValid(prev_xmax) &&
				!TransactionIdEquals(prev_xmax, HeapTupleHeaderGetXmin(t->htup.t_data)))
				break;
			if (judge_member(bs, &t, &alive))
				index_member(bs, t, &root_tid, alive);
			if (t == NULL)
				break;
			/* (a member pointing at itself ends the chain: hot.c) */
			more = HeapTupleHeaderIsHotUpdated(t->htup.t_data) &&
				trt_tid_to_vid(&t->htup.t_data->t_ctid, &next) && next != t->vid;
			if (!more)
				break;
			prev_xmax = HeapTupleHeaderGetUpdateXid(t->htup.t_data);
			t = tam_fetch_version(bs->tree, next, relid, &walkbuf);
			if (t != NULL && !HeapTupleHeaderIsHeapOnly(t->htup.t_data))
				break;
		}
	}
	tam_tuple_buf_free(&walkbuf);
}

double
tam_index_build_range_scan(Relation heapRelation, Relation indexRelation,
							 struct IndexInfo *indexInfo, bool allow_sync, bool anyvisible,
							 bool progress, BlockNumber start_blockno, BlockNumber numblocks,
							 IndexBuildCallback callback, void *callback_state,
							 TableScanDesc scan)
{
	EState	   *estate = CreateExecutorState();
	TupleTableSlot *slot = table_slot_create(heapRelation, NULL);
	Snapshot	snapshot;
	bool		need_unregister_snapshot = false;
	bool		own_scan = scan == NULL;
	BuildState	bs;

	memset(&bs, 0, sizeof(bs));
	bs.heap = heapRelation;
	bs.tree = trt_rel_tree(heapRelation);
	bs.index_info = indexInfo;
	bs.anyvisible = anyvisible;
	bs.checking_uniqueness = indexInfo->ii_Unique || indexInfo->ii_ExclusionOps != NULL;
	bs.is_system_catalog = IsSystemRelation(heapRelation);
	bs.OldestXmin = InvalidTransactionId;
	bs.index = indexRelation;
	bs.estate = estate;
	bs.slot = slot;
	bs.callback = callback;
	bs.callback_state = callback_state;
	bs.progress = progress;
	tam_tuple_buf_init(&bs.rbuf, CurrentMemoryContext);
	GetPerTupleExprContext(estate)->ecxt_scantuple = slot;
	bs.predicate = ExecPrepareQual(indexInfo->ii_Predicate, estate);
	if (!IsBootstrapProcessingMode() && !indexInfo->ii_Concurrent)
		bs.OldestXmin = GetOldestNonRemovableTransactionId(heapRelation);
	if (own_scan)
	{
		if (!TransactionIdIsValid(bs.OldestXmin))
		{
			snapshot = RegisterSnapshot(GetTransactionSnapshot());
			need_unregister_snapshot = true;
		}
		else
			snapshot = SnapshotAny;
		scan = table_beginscan_strat(heapRelation, snapshot, 0, NULL, true, allow_sync);
		if (!allow_sync)
			tam_scan_set_block_range(scan, start_blockno, numblocks);
	}
	else
		snapshot = scan->rs_snapshot;
	if (progress)
		pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_TOTAL,
									 (trt_vid_high_water(bs.tree) + TRT_ROWS_PER_BLOCK - 1) / TRT_ROWS_PER_BLOCK);

	if (takes_any_order(indexRelation))
		index_by_versions(&bs, scan, snapshot);
	else
		index_by_chains(&bs, scan, snapshot);

	tam_tuple_buf_free(&bs.rbuf);
	/* as heap does, the scan ends here even when the caller began it */
	table_endscan(scan);
	if (need_unregister_snapshot)
		UnregisterSnapshot(snapshot);
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	indexInfo->ii_ExpressionsState = NIL;
	indexInfo->ii_PredicateState = NULL;
	return bs.reltuples;
}

/*
 * CREATE INDEX CONCURRENTLY's validation: insert what the reference
 * snapshot sees but the index lacks.  Roots come in TID order and so do the
 * index's TIDs (a sorted datum stream): merge them, and for each root the
 * index lacks, index the chain member the snapshot sees under the root's
 * TID.
 */
void
tam_index_validate_scan(Relation heapRelation, Relation indexRelation,
						  struct IndexInfo *indexInfo, Snapshot snapshot,
						  struct ValidateIndexState *state)
{
	TableScanDesc scan;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	EState	   *estate = CreateExecutorState();
	ExprContext *econtext = GetPerTupleExprContext(estate);
	TupleTableSlot *slot = MakeSingleTupleTableSlot(RelationGetDescr(heapRelation), &TTSOpsHeapTuple);
	ExprState  *predicate;
	ItemPointerData indexcursor;
	bool		tuplesort_empty = false;
	TamTuple *root;
	TamTupleBuf walkbuf;
	uint64		tree = trt_rel_tree(heapRelation);

	econtext->ecxt_scantuple = slot;
	predicate = ExecPrepareQual(indexInfo->ii_Predicate, estate);
	tam_tuple_buf_init(&walkbuf, CurrentMemoryContext);
	scan = table_beginscan_strat(heapRelation, snapshot, 0, NULL, true, false);
	ItemPointerSetInvalid(&indexcursor);

	while ((root = tam_scan_next_root(scan)) != NULL)
	{
		ItemPointerData root_tid = root->htup.t_self;
		ItemPointerData tid = root_tid;
		TamTuple *t;

		CHECK_FOR_INTERRUPTS();
		state->htups += 1;
		while (!tuplesort_empty &&
			   (!ItemPointerIsValid(&indexcursor) || ItemPointerCompare(&indexcursor, &root_tid) < 0))
		{
			Datum		ts_val;
			bool		ts_isnull;

			tuplesort_empty = !tuplesort_getdatum(state->tuplesort, true, &ts_val, &ts_isnull, NULL);
			if (!tuplesort_empty)
				itemptr_decode(&indexcursor, DatumGetInt64(ts_val));
		}
		if (!tuplesort_empty && ItemPointerEquals(&indexcursor, &root_tid))
			continue;			/* already in the index */
		t = tam_hot_search(heapRelation, tree, &tid, snapshot, &walkbuf, NULL, NULL, true, false, NULL, NULL);
		if (t == NULL)
			continue;
		MemoryContextReset(econtext->ecxt_per_tuple_memory);
		tam_store_in_slot(t, slot);
		if (predicate != NULL && !ExecQual(predicate, econtext))
			continue;
		FormIndexDatum(indexInfo, slot, estate, values, isnull);
		index_insert(indexRelation, values, isnull, &root_tid, heapRelation,
					 indexInfo->ii_Unique ? UNIQUE_CHECK_YES : UNIQUE_CHECK_NO,
					 false, indexInfo);
		state->tups_inserted += 1;
	}
	table_endscan(scan);
	tam_tuple_buf_free(&walkbuf);
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	indexInfo->ii_ExpressionsState = NIL;
	indexInfo->ii_PredicateState = NULL;
}
