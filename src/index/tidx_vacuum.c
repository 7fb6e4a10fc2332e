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
#include "commands/vacuum.h"
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
				if (tides_batch_bytes(b) >= (1 << 20))
				{
					trt_write_batch(b);
					tides_batch_clear(b);
				}
			}
			else
				remaining += 1;
		}
		trt_iter_check(w);
		if (tides_batch_count(b) > 0)
			trt_write_batch(b);
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

IndexBulkDeleteResult *
tidx_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	if (info->analyze_only || stats == NULL)
		return stats;
	stats->num_pages = estimated_pages(tidx_index_tree(info->index));
	return stats;
}
