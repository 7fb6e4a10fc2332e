/*
 * tidx_vacuum.c -- VACUUM for tides_btree: drop the entries whose TIDs the
 * table's VACUUM reports dead.
 *
 * One pass over the index tree (its iterator replaced now and then, see
 * TrtIter in src/runtime/iterators.c); entries are deleted in batches that are not
 * tied to the vacuuming transaction (they are garbage whatever happens).
 * Entries inserted meanwhile, which a replaced iterator may see, are never
 * for dead TIDs: a dead TID is not reused before the index has been
 * vacuumed (tides never reuses one).
 */
#include "postgres.h"

#include "access/genam.h"
#include "storage/procarray.h"
#include "access/htup_details.h"
#include "commands/vacuum.h"
#include "utils/relcache.h"
#include "miscadmin.h"

#include "index/tidx.h"

static BlockNumber
estimated_pages(uint64 tree)
{
	uint8		lo[8],
				hi[8];
	uint64		bytes;

	trt_key_put_tree(lo, tree);
	trt_key_put_tree(hi, tree + 1);
	bytes = tides_approximate_size(trt_engine(), lo, 8, hi, 8);
	return (BlockNumber) Min((bytes + BLCKSZ - 1) / BLCKSZ + 1, (uint64) MaxBlockNumber);
}

/* the entries VACUUM removes are of rows dead before its horizon: a hot standby's conflict */
static void
set_conflict(Relation index)
{
	TransactionId horizon = GetOldestNonRemovableTransactionId(index);

	TransactionIdRetreat(horizon);
	trt_wal_set_conflict(horizon, index->rd_node.dbNode);
}

IndexBulkDeleteResult *
tidx_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
				IndexBulkDeleteCallback callback, void *callback_state)
{
	Relation	index = info->index;
	uint64		tree = tidx_index_tree(index);
	uint8		lo[8],
				hi[8];
	TrtIter   *w;
	tides_batch *b = tides_batch_new();
	double		remaining = 0;

	if (b == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	if (stats == NULL)
		stats = palloc0(sizeof(IndexBulkDeleteResult));
	trt_key_put_tree(lo, tree);
	trt_key_put_tree(hi, tree + 1);
	w = trt_iter_open(lo, 8, hi, 8, "read an index");
	PG_TRY();
	{
		for (tides_iter_first(w->it); tides_iter_valid(w->it); trt_iter_next(w))
		{
			size_t		klen;
			const uint8 *k = tides_iter_key(w->it, &klen);
			ItemPointerData tid;

			vacuum_delay_point();
			if (klen < 8 + TIDX_TID_LEN)
				continue;
			tidx_decode_tid(k, klen, &tid);
			if (callback(&tid, callback_state))
			{
				tides_batch_delete(b, k, klen);
				stats->tuples_removed += 1;
				if (tides_batch_bytes(b) >= trt_batch_limit())
				{
					set_conflict(info->index);
					trt_write_batch(b);
					tides_batch_clear(b);
				}
			}
			else
				remaining += 1;
		}
		trt_iter_check(w);
		if (tides_batch_count(b) > 0)
		{
			set_conflict(info->index);
			trt_write_batch(b);
		}
	}
	PG_FINALLY();
	{
		tides_batch_free(b);
		trt_iter_close(w);
	}
	PG_END_TRY();
	stats->num_index_tuples = remaining;
	stats->estimated_count = false;
	stats->num_pages = estimated_pages(tree);
	return stats;
}

/*
 * Deleting the entries of one row version by key (trt_register_index_keys):
 * the table AM's VACUUM hands us a version dead to every snapshot and the
 * TID the index knows it by, and we compute the keys the version's entries
 * have -- the same encoding aminsert and ambuild used on the same values --
 * and delete them blindly, reading nothing.  Only for indexes whose keys are
 * plain columns stored as the table stores them, whose encoding cannot have
 * changed since the entry was written (not enums: their sort orders may be
 * renumbered).  A version whose key column is stored out of line is refused
 * (its TOAST rows may be gone by now): the caller keeps the dead stub, and
 * ambulkdelete finds the entry.
 */
typedef struct TidxKeyDeleter
{
	TidxDesc	d;
	AttrNumber	heapatt[INDEX_MAX_KEYS];
	Oid			typid[INDEX_MAX_KEYS];
	int16		typlen[INDEX_MAX_KEYS];
	StringInfoData key;
} TidxKeyDeleter;

void *
tidx_keys_begin(Relation index)
{
	TidxKeyDeleter *kd;
	TupleDesc	itupdesc = RelationGetDescr(index);
	int			nkeys = IndexRelationGetNumberOfKeyAttributes(index);

	if (RelationGetIndexExpressions(index) != NIL)
		return NULL;
	for (int i = 0; i < nkeys; i++)
		if (index->rd_index->indkey.values[i] == 0)
			return NULL;
	kd = palloc0(sizeof(TidxKeyDeleter));
	tidx_desc_init(&kd->d, index, false);
	for (int i = 0; i < nkeys; i++)
	{
		Form_pg_attribute att = TupleDescAttr(itupdesc, i);

		if (kd->d.cols[i].kind == TK_ENUM || kd->d.cols[i].kind == TK_INVALID)
		{
			pfree(kd);
			return NULL;
		}
		kd->heapatt[i] = index->rd_index->indkey.values[i];
		kd->typid[i] = att->atttypid;
		kd->typlen[i] = att->attlen;
	}
	initStringInfo(&kd->key);
	return kd;
}

bool
tidx_keys_delete(void *state, HeapTuple tuple, TupleDesc tupdesc, ItemPointer tid, tides_batch *b)
{
	TidxKeyDeleter *kd = state;
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];

	for (int i = 0; i < kd->d.nkeys; i++)
	{
		AttrNumber	a = kd->heapatt[i];

		if (a > tupdesc->natts || TupleDescAttr(tupdesc, a - 1)->atttypid != kd->typid[i] ||
			TupleDescAttr(tupdesc, a - 1)->attisdropped)
			return false;
		values[i] = heap_getattr(tuple, a, tupdesc, &isnull[i]);
		if (!isnull[i] && kd->typlen[i] == -1 &&
			VARATT_IS_EXTERNAL(DatumGetPointer(values[i])))
			return false;
	}
	resetStringInfo(&kd->key);
	tidx_encode_prefix(&kd->key, &kd->d, values, isnull);
	tidx_append_tid(&kd->key, tid);
	if (kd->key.len > TIDX_MAX_KEY_LEN)
		return false;			/* never written */
	if (tides_batch_delete(b, kd->key.data, kd->key.len) != TIDES_OK)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory building a tides batch")));
	return true;
}

IndexBulkDeleteResult *
tidx_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	if (info->analyze_only || stats == NULL)
		return stats;
	stats->num_pages = estimated_pages(tidx_index_tree(info->index));
	return stats;
}
