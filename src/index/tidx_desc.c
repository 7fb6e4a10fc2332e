/*
 * tidx_desc.c -- what the access method needs to know about an index: its
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
	/* INCLUDE columns are not in the key: their values need the stored tuple */
	d->key_only = d->natts == d->nkeys;
	for (int i = 0; i < d->nkeys && d->key_only; i++)
		d->key_only = tidx_col_decodable(&d->cols[i]);
	d->tree = for_build ? 0 : tidx_index_tree(index);
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

		if (!trt_lookup_tree(&index->rd_node, index->rd_backend, &tree))
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
