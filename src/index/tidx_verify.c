/*
 * tidx_verify.c -- tides_verify_index(regclass): does the index agree with its
 * table?
 *
 * Under one fresh MVCC snapshot:
 *   1. every row of the table that the snapshot sees (and that satisfies
 *      the index predicate) must have the entry its current values encode
 *      to;
 *   2. every entry whose row the snapshot sees must carry the key that the
 *      row encodes to, its stored IndexTuple must encode to that key too,
 *      and in a unique index no two such entries may have equal keys.
 * Entries of rows the snapshot does not see (dead, aborted, not yet
 * committed) are not checked: they are allowed to exist.  Each problem is
 * one result row.
 *
 * tides_index_entries(regclass) counts the entries of the index's tree.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "executor/executor.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "index/tidx.h"

PG_FUNCTION_INFO_V1(tides_verify_index);

typedef struct VerifyState
{
	ReturnSetInfo *rsinfo;
	int64		nproblems;
	Relation	index;
	Relation	heap;
	IndexInfo  *ii;
	TidxDesc   *d;
	Snapshot	snap;
	MemoryContext rowcxt;		/* reset after each row or entry */
	/* phase 2: fetching and evaluating the row behind an entry */
	EState	   *estate;
	ExprContext *econtext;
	TupleTableSlot *slot;
	ExprState  *pred;
	IndexFetchTableData *fetch;
	StringInfoData key;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	char	   *prev;			/* key prefix of the last visible row (unique indexes) */
	int			prevlen;
} VerifyState;

static void
report(VerifyState *vs, const char *fmt,...) pg_attribute_printf(2, 3);

static void
report(VerifyState *vs, const char *fmt,...)
{
	StringInfoData buf;
	Datum		values[1];
	bool		nulls[1] = {false};

	initStringInfo(&buf);
	for (;;)
	{
		va_list		args;
		int			needed;

		va_start(args, fmt);
		needed = appendStringInfoVA(&buf, fmt, args);
		va_end(args);
		if (needed == 0)
			break;
		enlargeStringInfo(&buf, needed);
	}
	values[0] = CStringGetTextDatum(buf.data);
	tuplestore_putvalues(vs->rsinfo->setResult, vs->rsinfo->setDesc, values, nulls);
	vs->nproblems++;
	pfree(buf.data);
}

static char *
hex(const char *p, int len)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "\\x");
	for (int i = 0; i < len; i++)
		appendStringInfo(&buf, "%02x", (uint8) p[i]);
	return buf.data;
}

static char *
describe(Relation index, Datum *values, bool *isnull, StringInfo key)
{
	char	   *d = BuildIndexValueDescription(index, values, isnull);

	return d ? d : hex(key->data, key->len);
}

static void
verify_row(Relation index, ItemPointer tid, Datum *values, bool *isnull, bool alive, void *arg)
{
	VerifyState *vs = arg;
	MemoryContext old = MemoryContextSwitchTo(vs->rowcxt);
	StringInfoData key;
	char	   *val;
	size_t		vlen;

	CHECK_FOR_INTERRUPTS();
	initStringInfo(&key);
	tidx_encode_prefix(&key, vs->d, values, isnull);
	tidx_append_tid(&key, tid);
	if (!trt_read((uint8 *) key.data, key.len, &val, &vlen))
		report(vs, "row (%u,%u) has no index entry for key %s",
			   ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
			   describe(index, values, isnull, &key));
	MemoryContextSwitchTo(old);
	MemoryContextReset(vs->rowcxt);
}

/*
 * phase 2, one entry: its IndexTuple (stored, or formed from a key-only
 * entry's key) must encode to the entry's key and carry its TID
 */
static void
verify_stored_value(VerifyState *vs, const uint8 *k, int plen, ItemPointer tid,
					const char *v, size_t vlen)
{
	IndexTuple	itup = tidx_entry_tuple(vs->d, k, plen + TIDX_TID_LEN, v, vlen);

	if (itup == NULL)
	{
		report(vs, "entry for row (%u,%u) has a malformed value of %zu bytes",
			   ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid), vlen);
		return;
	}
	index_deform_tuple(itup, RelationGetDescr(vs->index), vs->values, vs->isnull);
	resetStringInfo(&vs->key);
	tidx_encode_prefix(&vs->key, vs->d, vs->values, vs->isnull);
	if (vs->key.len != plen || memcmp(vs->key.data, k, plen) != 0)
		report(vs, "entry for row (%u,%u) has key %s but its stored values %s encode to %s",
			   ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
			   hex((const char *) k, plen), describe(vs->index, vs->values, vs->isnull, &vs->key),
			   hex(vs->key.data, vs->key.len));
	if (!ItemPointerEquals(&itup->t_tid, tid))
		report(vs, "entry for row (%u,%u) stores TID (%u,%u)",
			   ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
			   ItemPointerGetBlockNumber(&itup->t_tid), ItemPointerGetOffsetNumber(&itup->t_tid));
}

/*
 * phase 2, one entry: the row (the chain member) the snapshot sees, if any,
 * must satisfy the predicate and have the entry's key, and in a unique index
 * no two visible rows have one key (entries come in key order).
 */
static void
verify_visible_row(VerifyState *vs, const uint8 *k, int plen, ItemPointer tid)
{
	ItemPointerData htid = *tid;
	bool		call_again = false;
	bool		all_dead = false;
	bool		has_null = false;

	if (!table_index_fetch_tuple(vs->fetch, &htid, vs->snap, vs->slot, &call_again, &all_dead))
		return;
	ResetExprContext(vs->econtext);
	if (vs->pred && !ExecQual(vs->pred, vs->econtext))
	{
		report(vs, "entry for row (%u,%u), which does not satisfy the index predicate",
			   ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid));
		return;
	}
	FormIndexDatum(vs->ii, vs->slot, vs->estate, vs->values, vs->isnull);
	resetStringInfo(&vs->key);
	tidx_encode_prefix(&vs->key, vs->d, vs->values, vs->isnull);
	if (vs->key.len != plen || memcmp(vs->key.data, k, plen) != 0)
		report(vs, "entry for row (%u,%u) has key %s, the row has %s (%s)",
			   ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
			   hex((const char *) k, plen), hex(vs->key.data, vs->key.len),
			   describe(vs->index, vs->values, vs->isnull, &vs->key));
	for (int i = 0; i < vs->d->nkeys; i++)
		has_null |= vs->isnull[i];
	if (vs->d->unique && (!has_null || vs->d->nulls_not_distinct))
	{
		MemoryContext old;

		if (vs->prev != NULL && vs->prevlen == plen && memcmp(vs->prev, k, plen) == 0)
			report(vs, "unique index has two visible rows with key %s (second: row (%u,%u))",
				   describe(vs->index, vs->values, vs->isnull, &vs->key),
				   ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid));
		/* outlives the row context */
		old = MemoryContextSwitchTo(GetMemoryChunkContext(vs));
		if (vs->prev)
			pfree(vs->prev);
		vs->prev = palloc(plen);
		memcpy(vs->prev, k, plen);
		vs->prevlen = plen;
		MemoryContextSwitchTo(old);
	}
}

/* phase 2: every entry of a visible row has the row's key */
static void
verify_entries(VerifyState *vs)
{
	uint8		lo[8],
				hi[8];
	TrtIter    *w;

	trt_key_put_tree(lo, vs->d->tree);
	trt_key_put_tree(hi, vs->d->tree + 1);
	vs->fetch = table_index_fetch_begin(vs->heap);
	w = trt_iter_open(lo, 8, hi, 8, "read an index");
	for (tides_iter_first(w->it); tides_iter_valid(w->it); trt_iter_next(w))
	{
		size_t		klen,
					vlen;
		const uint8 *k = tides_iter_key(w->it, &klen);
		const char *v = tides_iter_value(w->it, &vlen);
		ItemPointerData tid;
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		if (klen < 8 + TIDX_TID_LEN)
		{
			report(vs, "malformed index key %s", hex((const char *) k, klen));
			continue;
		}
		tidx_decode_tid(k, klen, &tid);
		old = MemoryContextSwitchTo(vs->rowcxt);
		verify_stored_value(vs, k, (int) klen - TIDX_TID_LEN, &tid, v, vlen);
		verify_visible_row(vs, k, (int) klen - TIDX_TID_LEN, &tid);
		MemoryContextSwitchTo(old);
		MemoryContextReset(vs->rowcxt);
	}
	trt_iter_check(w);
	trt_iter_close(w);
	table_index_fetch_end(vs->fetch);
}

Datum
tides_verify_index(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	VerifyState *vs = palloc0(sizeof(VerifyState));
	TableScanDesc scan;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	vs->rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	vs->index = index_open(indexoid, AccessShareLock);
	if (!trt_is_tides_index(vs->index))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a tides_btree index", RelationGetRelationName(vs->index))));
	vs->heap = table_open(vs->index->rd_index->indrelid, AccessShareLock);
	vs->ii = BuildIndexInfo(vs->index);
	vs->d = palloc(sizeof(TidxDesc));
	tidx_desc_init(vs->d, vs->index, false);
	vs->snap = RegisterSnapshot(GetLatestSnapshot());
	vs->estate = CreateExecutorState();
	vs->econtext = GetPerTupleExprContext(vs->estate);
	vs->slot = table_slot_create(vs->heap, NULL);
	vs->econtext->ecxt_scantuple = vs->slot;
	vs->pred = ExecPrepareQual(vs->ii->ii_Predicate, vs->estate);
	vs->rowcxt = AllocSetContextCreate(CurrentMemoryContext, "tides_verify_index", ALLOCSET_DEFAULT_SIZES);
	initStringInfo(&vs->key);

	/*
	 * 1. every visible row has its entry: the table AM's index-build scan
	 * with our snapshot hands out what a build would index (HOT chains under
	 * their root's TID, the predicate applied).
	 */
	scan = table_beginscan_strat(vs->heap, vs->snap, 0, NULL, true, false);
	/* an MVCC scan (as CREATE INDEX CONCURRENTLY's): no OldestXmin */
	vs->ii->ii_Concurrent = true;
	(void) table_index_build_range_scan(vs->heap, vs->index, vs->ii, true, false, false, 0,
										InvalidBlockNumber, verify_row, vs, scan);

	/* 2. every entry of a visible row has the row's key */
	verify_entries(vs);

	ExecDropSingleTupleTableSlot(vs->slot);
	FreeExecutorState(vs->estate);
	UnregisterSnapshot(vs->snap);
	table_close(vs->heap, AccessShareLock);
	index_close(vs->index, AccessShareLock);
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(tides_index_entries);

/*
 * tides_index_entries(regclass) -> bigint: the entries the index's tree
 * holds now, whatever their rows' state (dead ones included), so tests can
 * tell that VACUUM and kills remove entries -- but not those of retired
 * rows (runtime/low_marks.c), which scans step over and compaction drops
 * when it reaches them.
 */
Datum
tides_index_entries(PG_FUNCTION_ARGS)
{
	Relation	index = index_open(PG_GETARG_OID(0), AccessShareLock);
	uint64		tree;
	uint8		lo[8],
				hi[8];
	TrtIter   *w;
	int64		n = 0;
	uint64		retired_below;

	if (!trt_is_tides_index(index))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a tides_btree index", RelationGetRelationName(index))));
	tree = tidx_index_tree(index);
	trt_key_put_tree(lo, tree);
	trt_key_put_tree(hi, tree + 1);
	retired_below = trt_tree_low_mark(tree);
	w = trt_iter_open(lo, 8, hi, 8, "read an index");
	for (tides_iter_first(w->it); tides_iter_valid(w->it); trt_iter_next(w))
	{
		size_t		klen;
		const uint8 *k = tides_iter_key(w->it, &klen);

		CHECK_FOR_INTERRUPTS();
		if (!trt_entry_retired(k, klen, retired_below))
			n++;
	}
	trt_iter_check(w);
	trt_iter_close(w);
	index_close(index, AccessShareLock);
	PG_RETURN_INT64(n);
}
