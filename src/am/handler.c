/*
 * handler.c -- the TableAmRoutine of "tides" and its SQL handler function.
 */
#include "postgres.h"

#include "access/tableam.h"
#include "executor/tuptable.h"
#include "fmgr.h"

#include "am/tam.h"

PG_FUNCTION_INFO_V1(tides_tableam_handler);

static const TupleTableSlotOps *
tides_slot_callbacks(Relation rel)
{
	return &TTSOpsHeapTuple;
}

static void
tides_finish_bulk_insert(Relation rel, int options)
{
}

static void
tides_relation_fetch_toast_slice(Relation toastrel, Oid valueid, int32 attrsize,
								 int32 sliceoffset, int32 slicelength, struct varlena *result)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("tides tables cannot serve as TOAST tables")));
}

static const TableAmRoutine tides_methods = {
	.type = T_TableAmRoutine,

	.slot_callbacks = tides_slot_callbacks,

	.scan_begin = tides_scan_begin,
	.scan_end = tides_scan_end,
	.scan_rescan = tides_scan_rescan,
	.scan_getnextslot = tides_scan_getnextslot,

	.scan_set_tidrange = tides_scan_set_tidrange,
	.scan_getnextslot_tidrange = tides_scan_getnextslot_tidrange,

	.parallelscan_estimate = tides_parallelscan_estimate,
	.parallelscan_initialize = tides_parallelscan_initialize,
	.parallelscan_reinitialize = tides_parallelscan_reinitialize,

	.index_fetch_begin = tides_index_fetch_begin,
	.index_fetch_reset = tides_index_fetch_reset,
	.index_fetch_end = tides_index_fetch_end,
	.index_fetch_tuple = tides_index_fetch_tuple,

	.tuple_insert = tides_tuple_insert,
	.tuple_insert_speculative = tides_tuple_insert_speculative,
	.tuple_complete_speculative = tides_tuple_complete_speculative,
	.multi_insert = tides_multi_insert,
	.tuple_delete = tides_tuple_delete,
	.tuple_update = tides_tuple_update,
	.tuple_lock = tides_tuple_lock,
	.finish_bulk_insert = tides_finish_bulk_insert,

	.tuple_fetch_row_version = tides_tuple_fetch_row_version,
	.tuple_get_latest_tid = tides_tuple_get_latest_tid,
	.tuple_tid_valid = tides_tuple_tid_valid,
	.tuple_satisfies_snapshot = tides_tuple_satisfies_snapshot,
	.index_delete_tuples = tides_index_delete_tuples,

	.relation_set_new_filenode = tides_relation_set_new_filenode,
	.relation_nontransactional_truncate = tides_relation_nontransactional_truncate,
	.relation_copy_data = tides_relation_copy_data,
	.relation_copy_for_cluster = tides_relation_copy_for_cluster,
	.relation_vacuum = tides_relation_vacuum,
	.scan_analyze_next_block = tides_scan_analyze_next_block,
	.scan_analyze_next_tuple = tides_scan_analyze_next_tuple,
	.index_build_range_scan = tides_index_build_range_scan,
	.index_validate_scan = tides_index_validate_scan,

	.relation_size = tides_relation_size,
	.relation_needs_toast_table = tides_relation_needs_toast_table,
	.relation_toast_am = tides_relation_toast_am,
	.relation_fetch_toast_slice = tides_relation_fetch_toast_slice,

	.relation_estimate_size = tides_relation_estimate_size,

	.scan_bitmap_next_block = tides_scan_bitmap_next_block,
	.scan_bitmap_next_tuple = tides_scan_bitmap_next_tuple,
	.scan_sample_next_block = tides_scan_sample_next_block,
	.scan_sample_next_tuple = tides_scan_sample_next_tuple
};

Datum
tides_tableam_handler(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(&tides_methods);
}

/*
 * The TableAmRoutine, for src/module/module.c to register with the runtime
 * (trt_register_access_methods), which answers "is this a tides relation?".
 */
const TableAmRoutine *
tam_routine(void)
{
	return &tides_methods;
}
