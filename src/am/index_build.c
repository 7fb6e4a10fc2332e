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
 * Index entries point at HOT chain roots (hot.c), so the scan goes root by
 * root and walks each chain, indexing a member under its root's TID.  As in
 * heap, a recently dead member that was HOT-updated is not indexed (only the
 * chain's newest state is), which makes the chain "broken" for snapshots
 * that still see the old state: ii_BrokenHotChain tells PostgreSQL to hide
 * the index from them (indcheckxmin).  A block range (BRIN) is summarized
 * from the chains rooted in it, wherever their members live: a bitmap page
 * is read the same way, root by root.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/catalog.h"
#include "catalog/index.h"
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

double
tam_index_build_range_scan(Relation heapRelation, Relation indexRelation,
							 struct IndexInfo *indexInfo, bool allow_sync, bool anyvisible,
							 bool progress, BlockNumber start_blockno, BlockNumber numblocks,
							 IndexBuildCallback callback, void *callback_state,
							 TableScanDesc scan)
{
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	EState	   *estate = CreateExecutorState();
	ExprContext *econtext = GetPerTupleExprContext(estate);
	TupleTableSlot *slot = table_slot_create(heapRelation, NULL);
	ExprState  *predicate;
	Snapshot	snapshot;
	bool		need_unregister_snapshot = false;
	bool		own_scan = scan == NULL;
	TamTuple *root;
	BuildState	bs;
	TamTupleBuf walkbuf;
	Oid			relid = RelationGetRelid(heapRelation);

	memset(&bs, 0, sizeof(bs));
	bs.heap = heapRelation;
	bs.tree = trt_rel_tree(heapRelation);
	bs.index_info = indexInfo;
	bs.anyvisible = anyvisible;
	bs.checking_uniqueness = indexInfo->ii_Unique || indexInfo->ii_ExclusionOps != NULL;
	bs.is_system_catalog = IsSystemRelation(heapRelation);
	bs.OldestXmin = InvalidTransactionId;
	tam_tuple_buf_init(&bs.rbuf, CurrentMemoryContext);
	tam_tuple_buf_init(&walkbuf, CurrentMemoryContext);
	econtext->ecxt_scantuple = slot;
	predicate = ExecPrepareQual(indexInfo->ii_Predicate, estate);
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

	while ((root = tam_scan_next_root(scan)) != NULL)
	{
		ItemPointerData root_tid = root->htup.t_self;
		TamTuple *t;
		TransactionId prev_xmax = InvalidTransactionId;

		CHECK_FOR_INTERRUPTS();
		if (progress)
			pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_DONE,
										 ItemPointerGetBlockNumber(&root_tid));
		if (snapshot != SnapshotAny)
		{
			/* an MVCC build indexes the one member its snapshot sees */
			ItemPointerData tid = root_tid;

			t = tam_hot_search(heapRelation, bs.tree, &tid, snapshot, &walkbuf, NULL, true, false, NULL);
			if (t == NULL)
				continue;
			bs.reltuples += 1;
			MemoryContextReset(econtext->ecxt_per_tuple_memory);
			tam_store_in_slot(t, slot);
			if (predicate != NULL && !ExecQual(predicate, econtext))
				continue;
			FormIndexDatum(indexInfo, slot, estate, values, isnull);
			callback(indexRelation, &root_tid, values, isnull, true, callback_state);
			continue;
		}

		/* SnapshotAny: every member that some snapshot may still need */
		t = TAM_IS_STUB(root) ? tam_fetch_version(bs.tree, root->meta.link, relid, &walkbuf) : root;
		while (t != NULL)
		{
			bool		alive = true;
			uint64		next;
			bool		more;

			if (TransactionIdIsValid(prev_xmax) &&
				!TransactionIdEquals(prev_xmax, HeapTupleHeaderGetXmin(t->htup.t_data)))
				break;
			if (judge_member(&bs, &t, &alive))
			{
				MemoryContextReset(econtext->ecxt_per_tuple_memory);
				tam_store_in_slot(t, slot);
				if (predicate == NULL || ExecQual(predicate, econtext))
				{
					FormIndexDatum(indexInfo, slot, estate, values, isnull);
					callback(indexRelation, &root_tid, values, isnull, alive, callback_state);
				}
			}
			if (t == NULL)
				break;
			more = HeapTupleHeaderIsHotUpdated(t->htup.t_data) &&
				trt_tid_to_vid(&t->htup.t_data->t_ctid, &next);
			if (!more)
				break;
			prev_xmax = HeapTupleHeaderGetUpdateXid(t->htup.t_data);
			t = tam_fetch_version(bs.tree, next, relid, &walkbuf);
			if (t != NULL && !HeapTupleHeaderIsHeapOnly(t->htup.t_data))
				break;
		}
	}

	tam_tuple_buf_free(&bs.rbuf);
	tam_tuple_buf_free(&walkbuf);
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
		t = tam_hot_search(heapRelation, tree, &tid, snapshot, &walkbuf, NULL, true, false, NULL);
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
