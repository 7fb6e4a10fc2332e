/*
 * access_methods.c -- "is this relation stored by tides?", for every layer.
 *
 * The answer is a comparison with the access methods' own routines: a
 * relation is a tides one if its relcache entry holds the TableAmRoutine of
 * "tides", an index a tides_btree one if its IndexAmRoutine builds with
 * tides_btree's ambuild.  Those routines belong to src/am and src/index,
 * above this layer; src/module/module.c hands them down once, in _PG_init,
 * so that the runtime, the two access methods and the module ask here.
 */
#include "postgres.h"

#include "catalog/pg_class.h"

#include "runtime/trt.h"

static const TableAmRoutine *trt_table_am = NULL;
static ambuild_function trt_index_build = NULL;

void
trt_register_access_methods(const TableAmRoutine *table_am, ambuild_function index_build)
{
	Assert(table_am != NULL && index_build != NULL);
	trt_table_am = table_am;
	trt_index_build = index_build;
}

bool
trt_is_tides_relation(Relation rel)
{
	Assert(trt_table_am != NULL);
	return rel->rd_tableam == trt_table_am;
}

bool
trt_is_tides_index(Relation rel)
{
	Assert(trt_index_build != NULL);
	return rel->rd_rel->relkind == RELKIND_INDEX && rel->rd_indam != NULL &&
		rel->rd_indam->ambuild == trt_index_build;
}

/* ---- index entries by key (trt.h) */

static trt_index_keys_begin_fn keys_begin = NULL;
static trt_index_keys_delete_fn keys_delete = NULL;

void
trt_register_index_keys(trt_index_keys_begin_fn begin, trt_index_keys_delete_fn delete)
{
	keys_begin = begin;
	keys_delete = delete;
}

void *
trt_index_keys_begin(Relation index)
{
	if (keys_begin == NULL || keys_delete == NULL || !trt_is_tides_index(index))
		return NULL;
	return keys_begin(index);
}

bool
trt_index_keys_delete(void *state, HeapTuple tuple, TupleDesc tupdesc, ItemPointer tid,
					  tides_batch *b)
{
	Assert(state != NULL && keys_delete != NULL);
	return keys_delete(state, tuple, tupdesc, tid, b);
}
