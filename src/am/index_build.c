/*
 * index_build.c -- feeding index builds: CREATE INDEX (all versions that any
 * snapshot may still need), CREATE INDEX CONCURRENTLY's validation pass,
 * and BRIN's block-range summaries.
 *
 * The rules are heap's heapam_index_build_range_scan: dead versions are
 * skipped; recently dead ones are indexed as not alive; versions being
 * inserted or deleted by other transactions are indexed, after waiting for
 * the other transaction when uniqueness is being checked.  With no HOT
 * chains, every version is its own root.
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

#include "tides_am.h"

double
tides_index_build_range_scan(Relation heapRelation, Relation indexRelation,
							 struct IndexInfo *indexInfo, bool allow_sync, bool anyvisible,
							 bool progress, BlockNumber start_blockno, BlockNumber numblocks,
							 IndexBuildCallback callback, void *callback_state,
							 TableScanDesc scan)
{
	bool		checking_uniqueness = indexInfo->ii_Unique || indexInfo->ii_ExclusionOps != NULL;
	bool		is_system_catalog = IsSystemRelation(heapRelation);
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	double		reltuples = 0;
	EState	   *estate = CreateExecutorState();
	ExprContext *econtext = GetPerTupleExprContext(estate);
	TupleTableSlot *slot = table_slot_create(heapRelation, NULL);
	ExprState  *predicate;
	Snapshot	snapshot;
	bool		need_unregister_snapshot = false;
	bool		own_scan = scan == NULL;
	TransactionId OldestXmin = InvalidTransactionId;
	TidesTuple *t;
	bool		visible;
	uint64		tree = tides_rel_tree(heapRelation);
	TidesTupleBuf rbuf;

	econtext->ecxt_scantuple = slot;
	tides_tuple_buf_init(&rbuf, CurrentMemoryContext);
	predicate = ExecPrepareQual(indexInfo->ii_Predicate, estate);
	if (!IsBootstrapProcessingMode() && !indexInfo->ii_Concurrent)
		OldestXmin = GetOldestNonRemovableTransactionId(heapRelation);
	if (own_scan)
	{
		if (!TransactionIdIsValid(OldestXmin))
		{
			snapshot = RegisterSnapshot(GetTransactionSnapshot());
			need_unregister_snapshot = true;
		}
		else
			snapshot = SnapshotAny;
		scan = table_beginscan_strat(heapRelation, snapshot, 0, NULL, true, allow_sync);
		if (!allow_sync)
			tides_scan_set_block_range(scan, start_blockno, numblocks);
	}
	else
		snapshot = scan->rs_snapshot;
	if (progress)
		pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_TOTAL,
									 (tides_vid_high_water(tree) + TIDES_ROWS_PER_BLOCK - 1) / TIDES_ROWS_PER_BLOCK);

	while ((t = tides_scan_next_version(scan, &visible)) != NULL)
	{
		bool		alive = true;

		CHECK_FOR_INTERRUPTS();
		if (progress)
			pgstat_progress_update_param(PROGRESS_SCAN_BLOCKS_DONE,
										 ItemPointerGetBlockNumber(&t->htup.t_self));
		if (snapshot == SnapshotAny)
		{
			bool		index_it = false;
			TransactionId dead_after;
			TransactionId xwait;

	recheck:
			switch (tides_satisfies_vacuum(t, OldestXmin, &dead_after))
			{
				case HEAPTUPLE_DEAD:
					index_it = false;
					break;
				case HEAPTUPLE_LIVE:
					index_it = true;
					alive = true;
					break;
				case HEAPTUPLE_RECENTLY_DEAD:
					index_it = true;
					alive = false;
					break;
				case HEAPTUPLE_INSERT_IN_PROGRESS:
					xwait = HeapTupleHeaderGetXmin(t->htup.t_data);
					if (anyvisible || TransactionIdIsCurrentTransactionId(xwait))
					{
						index_it = true;
						alive = true;
						break;
					}
					if (!is_system_catalog)
						elog(WARNING, "concurrent insert in progress within table \"%s\"",
							 RelationGetRelationName(heapRelation));
					if (checking_uniqueness)
					{
						/* the outcome decides whether the entry may conflict */
						XactLockTableWait(xwait, heapRelation, &t->htup.t_self, XLTW_InsertIndexUnique);
						CHECK_FOR_INTERRUPTS();
						t = tides_fetch_version(tree, t->vid, RelationGetRelid(heapRelation), &rbuf);
						if (t == NULL)
							break;		/* removed meanwhile: nothing to index */
						goto recheck;
					}
					index_it = true;
					alive = true;
					break;
				case HEAPTUPLE_DELETE_IN_PROGRESS:
					xwait = HeapTupleHeaderGetUpdateXid(t->htup.t_data);
					if (anyvisible)
					{
						index_it = true;
						alive = true;
						break;
					}
					if (TransactionIdIsCurrentTransactionId(xwait))
					{
						index_it = true;
						alive = false;
						break;
					}
					if (!is_system_catalog)
						elog(WARNING, "concurrent delete in progress within table \"%s\"",
							 RelationGetRelationName(heapRelation));
					if (checking_uniqueness)
					{
						XactLockTableWait(xwait, heapRelation, &t->htup.t_self, XLTW_InsertIndexUnique);
						CHECK_FOR_INTERRUPTS();
						t = tides_fetch_version(tree, t->vid, RelationGetRelid(heapRelation), &rbuf);
						if (t == NULL)
							break;
						goto recheck;
					}
					index_it = true;
					alive = true;
					break;
			}
			if (!index_it || t == NULL)
				continue;
		}
		else if (!visible)
			continue;

		reltuples += 1;
		MemoryContextReset(econtext->ecxt_per_tuple_memory);
		tides_store_in_slot(t, slot);
		if (predicate != NULL && !ExecQual(predicate, econtext))
			continue;
		FormIndexDatum(indexInfo, slot, estate, values, isnull);
		callback(indexRelation, &t->htup.t_self, values, isnull, alive, callback_state);
	}

	tides_tuple_buf_free(&rbuf);
	/* as heap does, the scan ends here even when the caller began it */
	table_endscan(scan);
	if (need_unregister_snapshot)
		UnregisterSnapshot(snapshot);
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	indexInfo->ii_ExpressionsState = NIL;
	indexInfo->ii_PredicateState = NULL;
	return reltuples;
}

void
tides_index_validate_scan(Relation heapRelation, Relation indexRelation,
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
	TidesTuple *t;
	bool		visible;

	econtext->ecxt_scantuple = slot;
	predicate = ExecPrepareQual(indexInfo->ii_Predicate, estate);
	scan = table_beginscan_strat(heapRelation, snapshot, 0, NULL, true, false);
	ItemPointerSetInvalid(&indexcursor);

	/* versions come in TID order, and so do the index's TIDs: merge them */
	while ((t = tides_scan_next_version(scan, &visible)) != NULL)
	{
		ItemPointer tid = &t->htup.t_self;

		CHECK_FOR_INTERRUPTS();
		state->htups += 1;
		while (!tuplesort_empty &&
			   (!ItemPointerIsValid(&indexcursor) || ItemPointerCompare(&indexcursor, tid) < 0))
		{
			Datum		ts_val;
			bool		ts_isnull;

			tuplesort_empty = !tuplesort_getdatum(state->tuplesort, true, &ts_val, &ts_isnull, NULL);
			if (!tuplesort_empty)
				itemptr_decode(&indexcursor, DatumGetInt64(ts_val));
		}
		if (!visible)
			continue;
		if (!tuplesort_empty && ItemPointerEquals(&indexcursor, tid))
			continue;			/* already in the index */
		MemoryContextReset(econtext->ecxt_per_tuple_memory);
		tides_store_in_slot(t, slot);
		if (predicate != NULL && !ExecQual(predicate, econtext))
			continue;
		FormIndexDatum(indexInfo, slot, estate, values, isnull);
		index_insert(indexRelation, values, isnull, tid, heapRelation,
					 indexInfo->ii_Unique ? UNIQUE_CHECK_YES : UNIQUE_CHECK_NO,
					 false, indexInfo);
		state->tups_inserted += 1;
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	FreeExecutorState(estate);
	indexInfo->ii_ExpressionsState = NIL;
	indexInfo->ii_PredicateState = NULL;
}
