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
tam_slot_callbacks(Relation rel)
{
	return &TTSOpsHeapTuple;
}

static void
tam_finish_bulk_insert(Relation rel, int options)
{
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
	.scan_getnextslot = tam_scan_getnextslot,

	.scan_set_tidrange = tam_scan_set_tidrange,
	.scan_getnextslot_tidrange = tam_scan_getnextslot_tidrange,

	.parallelscan_estimate = tam_parallelscan_estimate,
	.parallelscan_initialize = tam_parallelscan_initialize,
	.parallelscan_reinitialize = tam_parallelscan_reinitialize,

	.index_fetch_begin = tam_index_fetch_begin,
	.index_fetch_reset = tam_index_fetch_reset,
	.index_fetch_end = tam_index_fetch_end,
	.index_fetch_tuple = tam_index_fetch_tuple,

	.tuple_insert = tam_tuple_insert,
	.tuple_insert_speculative = tam_tuple_insert_speculative,
	.tuple_complete_speculative = tam_tuple_complete_speculative,
	.multi_insert = tam_multi_insert,
	.tuple_delete = tam_tuple_delete,
	.tuple_update = tam_tuple_update,
	.tuple_lock = tam_tuple_lock,
	.finish_bulk_insert = tam_finish_bulk_insert,

	.tuple_fetch_row_version = tam_tuple_fetch_row_version,
	.tuple_get_latest_tid = tam_tuple_get_latest_tid,
	.tuple_tid_valid = tam_tuple_tid_valid,
	.tuple_satisfies_snapshot = tam_tuple_satisfies_snapshot,
	.index_delete_tuples = tam_index_delete_tuples,

	.relation_set_new_filenode = tam_relation_set_new_filenode,
	.relation_nontransactional_truncate = tam_relation_nontransactional_truncate,
	.relation_copy_data = tam_relation_copy_data,
	.relation_copy_for_cluster = tam_relation_copy_for_cluster,
	.relation_vacuum = tam_relation_vacuum,
	.scan_analyze_next_block = tam_scan_analyze_next_block,
	.scan_analyze_next_tuple = tam_scan_analyze_next_tuple,
	.index_build_range_scan = tam_index_build_range_scan,
	.index_validate_scan = tam_index_validate_scan,

	.relation_size = tam_relation_size,
	.relation_needs_toast_table = tam_relation_needs_toast_table,
	.relation_toast_am = tam_relation_toast_am,
	.relation_fetch_toast_slice = tam_relation_fetch_toast_slice,

	.relation_estimate_size = tam_relation_estimate_size,

	.scan_bitmap_next_block = tam_scan_bitmap_next_block,
	.scan_bitmap_next_tuple = tam_scan_bitmap_next_tuple,
	.scan_sample_next_block = tam_scan_sample_next_block,
	.scan_sample_next_tuple = tam_scan_sample_next_tuple
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
