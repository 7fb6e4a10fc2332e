/*
 * handler.c -- the TableAmRoutine of "tides" and its SQL handler function.
 *
 * The callbacks that read rows are wrapped here (io_*): after each, the
 * engine blocks it read or found in the block cache are counted as buffer
 * reads and hits of the relation (trt_io_account: EXPLAIN BUFFERS,
 * pg_stat_statements, pg_statio_*), as heap's ReadBuffer counts its pages.
 * Rows read from memtables count nothing, as no block was involved.
 */
#include "postgres.h"

#include "access/tableam.h"
#include "executor/tuptable.h"
#include "fmgr.h"

#include "am/tam.h"

PG_FUNCTION_INFO_V1(tides_tableam_handler);

static const TupleTableSlotOps *
tam_slot_callbacks(Relation rel)
{
	return &TTSOpsHeapTuple;
}

static void
tam_finish_bulk_insert(Relation rel, int options)
{
	tam_bulk_finish(rel);
}

/* ---- block I/O accounting around the reading callbacks */

static bool
io_scan_getnextslot(TableScanDesc scan, ScanDirection dir, TupleTableSlot *slot)
{
	bool		r = tam_scan_getnextslot(scan, dir, slot);

	trt_io_account(scan->rs_rd);
	return r;
}

static bool
io_scan_getnextslot_tidrange(TableScanDesc scan, ScanDirection dir, TupleTableSlot *slot)
{
	bool		r = tam_scan_getnextslot_tidrange(scan, dir, slot);

	trt_io_account(scan->rs_rd);
	return r;
}

static bool
io_index_fetch_tuple(IndexFetchTableData *scan, ItemPointer tid, Snapshot snapshot,
					 TupleTableSlot *slot, bool *call_again, bool *all_dead)
{
	bool		r = tam_index_fetch_tuple(scan, tid, snapshot, slot, call_again, all_dead);

	trt_io_account(scan->rel);
	return r;
}

static TM_Result
io_tuple_delete(Relation rel, ItemPointer tid, CommandId cid, Snapshot snapshot,
				Snapshot crosscheck, bool wait, TM_FailureData *tmfd, bool changingPart)
{
	TM_Result	r = tam_tuple_delete(rel, tid, cid, snapshot, crosscheck, wait, tmfd, changingPart);

	trt_io_account(rel);
	return r;
}

static TM_Result
io_tuple_update(Relation rel, ItemPointer otid, TupleTableSlot *slot, CommandId cid,
				Snapshot snapshot, Snapshot crosscheck, bool wait, TM_FailureData *tmfd,
				LockTupleMode *lockmode, bool *update_indexes)
{
	TM_Result	r = tam_tuple_update(rel, otid, slot, cid, snapshot, crosscheck, wait, tmfd,
									 lockmode, update_indexes);

	trt_io_account(rel);
	return r;
}

static TM_Result
io_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot, TupleTableSlot *slot,
			  CommandId cid, LockTupleMode mode, LockWaitPolicy wait_policy, uint8 flags,
			  TM_FailureData *tmfd)
{
	TM_Result	r = tam_tuple_lock(rel, tid, snapshot, slot, cid, mode, wait_policy, flags, tmfd);

	trt_io_account(rel);
	return r;
}

static bool
io_tuple_fetch_row_version(Relation rel, ItemPointer tid, Snapshot snapshot,
						   TupleTableSlot *slot)
{
	bool		r = tam_tuple_fetch_row_version(rel, tid, snapshot, slot);

	trt_io_account(rel);
	return r;
}

static void
io_tuple_get_latest_tid(TableScanDesc scan, ItemPointer tid)
{
	tam_tuple_get_latest_tid(scan, tid);
	trt_io_account(scan->rs_rd);
}

static TransactionId
io_index_delete_tuples(Relation rel, TM_IndexDeleteOp *delstate)
{
	TransactionId r = tam_index_delete_tuples(rel, delstate);

	trt_io_account(rel);
	return r;
}

static void
io_relation_copy_for_cluster(Relation OldTable, Relation NewTable, Relation OldIndex,
							 bool use_sort, TransactionId OldestXmin, TransactionId *xid_cutoff,
							 MultiXactId *multi_cutoff, double *num_tuples,
							 double *tups_vacuumed, double *tups_recently_dead)
{
	tam_relation_copy_for_cluster(OldTable, NewTable, OldIndex, use_sort, OldestXmin, xid_cutoff,
								  multi_cutoff, num_tuples, tups_vacuumed, tups_recently_dead);
	trt_io_account(OldTable);
}

static void
io_relation_vacuum(Relation rel, struct VacuumParams *params, BufferAccessStrategy bstrategy)
{
	tam_relation_vacuum(rel, params, bstrategy);
	trt_io_account(rel);
}

static bool
io_scan_analyze_next_tuple(TableScanDesc scan, TransactionId OldestXmin, double *liverows,
						   double *deadrows, TupleTableSlot *slot)
{
	bool		r = tam_scan_analyze_next_tuple(scan, OldestXmin, liverows, deadrows, slot);

	trt_io_account(scan->rs_rd);
	return r;
}

static double
io_index_build_range_scan(Relation table_rel, Relation index_rel, struct IndexInfo *index_info,
						  bool allow_sync, bool anyvisible, bool progress,
						  BlockNumber start_blockno, BlockNumber numblocks,
						  IndexBuildCallback callback, void *callback_state, TableScanDesc scan)
{
	double		r = tam_index_build_range_scan(table_rel, index_rel, index_info, allow_sync,
											   anyvisible, progress, start_blockno, numblocks,
											   callback, callback_state, scan);

	trt_io_account(table_rel);
	return r;
}

static void
io_index_validate_scan(Relation table_rel, Relation index_rel, struct IndexInfo *index_info,
					   Snapshot snapshot, struct ValidateIndexState *state)
{
	tam_index_validate_scan(table_rel, index_rel, index_info, snapshot, state);
	trt_io_account(table_rel);
}

static bool
io_scan_bitmap_next_block(TableScanDesc scan, struct TBMIterateResult *tbmres)
{
	bool		r = tam_scan_bitmap_next_block(scan, tbmres);

	trt_io_account(scan->rs_rd);
	return r;
}

static bool
io_scan_bitmap_next_tuple(TableScanDesc scan, struct TBMIterateResult *tbmres,
						  TupleTableSlot *slot)
{
	bool		r = tam_scan_bitmap_next_tuple(scan, tbmres, slot);

	trt_io_account(scan->rs_rd);
	return r;
}

static bool
io_scan_sample_next_tuple(TableScanDesc scan, struct SampleScanState *scanstate,
						  TupleTableSlot *slot)
{
	bool		r = tam_scan_sample_next_tuple(scan, scanstate, slot);

	trt_io_account(scan->rs_rd);
	return r;
}

/*
 * The planner's size estimate reads index blocks of the tree's files: they
 * count as the statement's planning buffers, for no relation, so that a
 * relation's pg_statio counts are what its scans read.
 */
static void
io_relation_estimate_size(Relation rel, int32 *attr_widths, BlockNumber *pages, double *tuples,
						  double *allvisfrac)
{
	tam_relation_estimate_size(rel, attr_widths, pages, tuples, allvisfrac);
	trt_io_account(NULL);
}

static void
tam_relation_fetch_toast_slice(Relation toastrel, Oid valueid, int32 attrsize,
								 int32 sliceoffset, int32 slicelength, struct varlena *result)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("tides tables cannot serve as TOAST tables")));
}

static const TableAmRoutine tam_methods = {
	.type = T_TableAmRoutine,

	.slot_callbacks = tam_slot_callbacks,

	.scan_begin = tam_scan_begin,
	.scan_end = tam_scan_end,
	.scan_rescan = tam_scan_rescan,
	.scan_getnextslot = io_scan_getnextslot,

	.scan_set_tidrange = tam_scan_set_tidrange,
	.scan_getnextslot_tidrange = io_scan_getnextslot_tidrange,

	.parallelscan_estimate = tam_parallelscan_estimate,
	.parallelscan_initialize = tam_parallelscan_initialize,
	.parallelscan_reinitialize = tam_parallelscan_reinitialize,

	.index_fetch_begin = tam_index_fetch_begin,
	.index_fetch_reset = tam_index_fetch_reset,
	.index_fetch_end = tam_index_fetch_end,
	.index_fetch_tuple = io_index_fetch_tuple,

	.tuple_insert = tam_tuple_insert,
	.tuple_insert_speculative = tam_tuple_insert_speculative,
	.tuple_complete_speculative = tam_tuple_complete_speculative,
	.multi_insert = tam_multi_insert,
	.tuple_delete = io_tuple_delete,
	.tuple_update = io_tuple_update,
	.tuple_lock = io_tuple_lock,
	.finish_bulk_insert = tam_finish_bulk_insert,

	.tuple_fetch_row_version = io_tuple_fetch_row_version,
	.tuple_get_latest_tid = io_tuple_get_latest_tid,
	.tuple_tid_valid = tam_tuple_tid_valid,
	.tuple_satisfies_snapshot = tam_tuple_satisfies_snapshot,
	.index_delete_tuples = io_index_delete_tuples,

	.relation_set_new_filenode = tam_relation_set_new_filenode,
	.relation_nontransactional_truncate = tam_relation_nontransactional_truncate,
	.relation_copy_data = tam_relation_copy_data,
	.relation_copy_for_cluster = io_relation_copy_for_cluster,
	.relation_vacuum = io_relation_vacuum,
	.scan_analyze_next_block = tam_scan_analyze_next_block,
	.scan_analyze_next_tuple = io_scan_analyze_next_tuple,
	.index_build_range_scan = io_index_build_range_scan,
	.index_validate_scan = io_index_validate_scan,

	.relation_size = tam_relation_size,
	.relation_needs_toast_table = tam_relation_needs_toast_table,
	.relation_toast_am = tam_relation_toast_am,
	.relation_fetch_toast_slice = tam_relation_fetch_toast_slice,

	.relation_estimate_size = io_relation_estimate_size,

	.scan_bitmap_next_block = io_scan_bitmap_next_block,
	.scan_bitmap_next_tuple = io_scan_bitmap_next_tuple,
	.scan_sample_next_block = tam_scan_sample_next_block,
	.scan_sample_next_tuple = io_scan_sample_next_tuple
};

Datum
tides_tableam_handler(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(&tam_methods);
}

/*
 * The TableAmRoutine, for src/module/module.c to register with the runtime
 * (trt_register_access_methods), which answers "is this a tides relation?".
 */
const TableAmRoutine *
tam_routine(void)
{
	return &tam_methods;
}
