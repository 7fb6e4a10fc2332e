/*
 * desc.c -- what the access method needs to know about an index: its
 * engine tree and how each key column is encoded; engine iterators.
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "catalog/index.h"
#include "commands/defrem.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "index/tidx.h"

void
tidx_desc_init(TidxDesc *d, Relation index, bool for_build)
{
	TupleDesc	tupdesc = RelationGetDescr(index);

	memset(d, 0, offsetof(TidxDesc, cols));
	d->index = index;
	d->nkeys = IndexRelationGetNumberOfKeyAttributes(index);
	d->natts = IndexRelationGetNumberOfAttributes(index);
	d->unique = index->rd_index->indisunique;
	d->nulls_not_distinct = index->rd_index->indnullsnotdistinct;
	for (int i = 0; i < d->nkeys; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);
		int16		opt = index->rd_indoption[i];

		tidx_col_init(&d->cols[i], index_getprocid(index, i + 1, BTORDER_PROC),
					  att->atttypid, index->rd_indcollation[i],
					  (opt & INDOPTION_DESC) != 0, (opt & INDOPTION_NULLS_FIRST) != 0,
					  /* an index that exists was accepted when it was built */
					  for_build ? TIDX_COL_ERROR : (TIDX_COL_ERROR | TIDX_COL_ANY_LIBC),
					  NameStr(att->attname));
	}
	d->tree = for_build ? 0 : tidx_index_tree(index);
}

/*
 * The relfilenode -> tree mapping, read without creating one.  This mirrors
 * the TRT_META_RELMAP key of src/runtime/trees.c (relmap_key: tree 0, 'R', db, spc,
 * relnode, backend, each 4 bytes big-endian; value starts with the tree).
 */
bool
tidx_lookup_tree(const RelFileNode *rnode, BackendId backend, uint64 *tree)
{
	uint8		key[25];
	char	   *val;
	size_t		vlen;
	uint32		parts[4];

	trt_key_put_tree(key, TRT_TREE_META);
	key[8] = TRT_META_RELMAP;
	parts[0] = rnode->dbNode;
	parts[1] = rnode->spcNode;
	parts[2] = rnode->relNode;
	parts[3] = (uint32) backend;
	for (int i = 0; i < 4; i++)
	{
		key[9 + i * 4] = parts[i] >> 24;
		key[10 + i * 4] = parts[i] >> 16;
		key[11 + i * 4] = parts[i] >> 8;
		key[12 + i * 4] = parts[i];
	}
	if (!trt_read(key, sizeof(key), &val, &vlen))
		return false;
	if (vlen < sizeof(uint64))
	{
		pfree(val);
		return false;
	}
	memcpy(tree, val, sizeof(uint64));
	pfree(val);
	return true;
}

uint64
tidx_index_tree(Relation index)
{
	/*
	 * trees.c caches the tree in rd_amcache.  When it is not cached yet,
	 * check that the storage exists first: trt_rel_tree() would start a
	 * missing tree empty, which for an index means silently wrong answers.
	 */
	if (index->rd_amcache == NULL)
	{
		uint64		tree;

		if (!tidx_lookup_tree(&index->rd_node, index->rd_backend, &tree))
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("index \"%s\" has no storage in the tides engine",
							RelationGetRelationName(index)),
					 errdetail("relfilenode %u/%u/%u", index->rd_node.spcNode,
							   index->rd_node.dbNode, index->rd_node.relNode),
					 errhint("REINDEX the index.")));
	}
	return trt_rel_tree(index);
}

Oid
tidx_am_oid(void)
{
	return get_index_am_oid("tides_btree", true);
}

bool
tidx_heap_is_tides(Relation heap)
{
	return heap != NULL && trt_is_tides_relation(heap);
}

/* ---------------------------------------------------------------- iterators */

/* steps between looks at the clock */
#define TIDX_ITER_CLOCK_EVERY 256

static void
open_engine_iter(TidxIter *w)
{
	/* registered with the current resource owner (src/runtime/iterators.c) */
	w->it = trt_open_range_iter(trt_engine(), w->lower, w->llen, w->upper, w->ulen, true);
	w->opened_at = GetCurrentTimestamp();
	w->steps = 0;
}

TidxIter *
tidx_iter_open(const uint8 *lower, size_t llen, const uint8 *upper, size_t ulen)
{
	TidxIter   *w = palloc0(sizeof(TidxIter));

	w->lower = palloc(Max(llen, 1));
	memcpy(w->lower, lower, llen);
	w->llen = llen;
	w->upper = palloc(Max(ulen, 1));
	memcpy(w->upper, upper, ulen);
	w->ulen = ulen;
	open_engine_iter(w);
	return w;
}

void
tidx_iter_close(TidxIter *w)
{
	if (w && w->it)
	{
		trt_close_iter(w->it);
		w->it = NULL;
	}
}

void
tidx_iter_check(TidxIter *w)
{
	tides_status s = tides_iter_status(w->it);

	if (s != TIDES_OK)
		trt_engine_error(s, "read an index");
}

bool
tidx_iter_refresh_due(TidxIter *w)
{
	return ++w->steps % TIDX_ITER_CLOCK_EVERY == 0 &&
		TimestampDifferenceExceeds(w->opened_at, GetCurrentTimestamp(), TIDX_ITER_REFRESH_MS);
}

void
tidx_iter_reopen(TidxIter *w)
{
	trt_close_iter(w->it);
	w->it = NULL;
	open_engine_iter(w);
}

void
tidx_iter_next(TidxIter *w)
{
	size_t		klen;
	const uint8 *k;
	uint8	   *key;

	if (!tides_iter_valid(w->it) || !tidx_iter_refresh_due(w))
	{
		tides_iter_next(w->it);
		return;
	}
	/* a fresh iterator on the entry after the current one */
	k = tides_iter_key(w->it, &klen);
	key = palloc(klen);
	memcpy(key, k, klen);
	tidx_iter_reopen(w);
	tides_iter_seek(w->it, key, klen);
	if (tides_iter_valid(w->it))
	{
		size_t		nlen;
		const uint8 *n = tides_iter_key(w->it, &nlen);

		/* still there: step past it; gone (deleted meanwhile): already past it */
		if (nlen == klen && memcmp(n, key, klen) == 0)
			tides_iter_next(w->it);
	}
	pfree(key);
}
