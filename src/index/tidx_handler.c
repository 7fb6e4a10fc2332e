/*
 * tidx_handler.c -- the IndexAmRoutine of tides_btree, its options, operator
 * class validation and cost estimates.
 *
 * The callbacks that read entries are wrapped (io_*): after each, the
 * engine blocks it read or found in the block cache count as the index's
 * buffer reads and hits (trt_io_account: EXPLAIN BUFFERS,
 * pg_stat_statements, pg_statio_*_indexes), as nbtree's pages do.  ambuild
 * is not wrapped: the runtime recognises tides_btree by it.
 */
#include "postgres.h"

#include <math.h>

#include "access/amapi.h"
#include "access/nbtree.h"
#include "access/reloptions.h"
#include "commands/vacuum.h"
#include "fmgr.h"
#include "nodes/pathnodes.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "access/table.h"
#include "optimizer/pathnode.h"
#include "utils/index_selfuncs.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"

#include "index/tidx.h"

PG_FUNCTION_INFO_V1(tides_btree_handler);

static bool
io_insert(Relation index, Datum *values, bool *isnull, ItemPointer heap_tid, Relation heap,
		  IndexUniqueCheck checkUnique, bool indexUnchanged, IndexInfo *indexInfo)
{
	bool		r = tidx_insert(index, values, isnull, heap_tid, heap, checkUnique,
								indexUnchanged, indexInfo);

	trt_io_account(index);
	return r;
}

static IndexBulkDeleteResult *
io_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			  IndexBulkDeleteCallback callback, void *callback_state)
{
	IndexBulkDeleteResult *r = tidx_bulkdelete(info, stats, callback, callback_state);

	trt_io_account(info->index);
	return r;
}

static IndexBulkDeleteResult *
io_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	IndexBulkDeleteResult *r = tidx_vacuumcleanup(info, stats);

	trt_io_account(info->index);
	return r;
}

static bool
io_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	bool		r = tidx_gettuple(scan, dir);

	trt_io_account(scan->indexRelation);
	return r;
}

static int64
io_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	int64		r = tidx_getbitmap(scan, tbm);

	trt_io_account(scan->indexRelation);
	return r;
}

static bool
tidx_canreturn(Relation index, int attno)
{
	/* every entry carries its IndexTuple */
	return true;
}

/*
 * How many entries the index has, roughly: for tides tables the number of
 * row versions the table has handed out (vacuumed ones included, as a b-tree
 * keeps entries of dead rows until VACUUM), capped at three times the
 * planner's row estimate; otherwise the planner's estimate.
 */
static double
estimated_entries(PlannerInfo *root, IndexOptInfo *index)
{
	RelOptInfo *rel = index->rel;
	RangeTblEntry *rte = planner_rt_fetch(rel->relid, root);
	double		entries = rel->tuples;

	if (rte->rtekind == RTE_RELATION)
	{
		Relation	heap = table_open(rte->relid, NoLock);

		if (trt_is_tides_relation(heap))
		{
			double		hw = (double) trt_vid_high_water(trt_rel_tree(heap));

			entries = rel->tuples > 0 ? Min(hw, rel->tuples * 3) : hw;
		}
		table_close(heap, NoLock);
	}
	return entries;
}

/*
 * Costs as for a b-tree of the same contents: PostgreSQL sees an empty
 * relation file (the entries live in the engine), so estimate the pages a
 * b-tree would have and let btcostestimate do the rest.
 */
static void
tidx_costestimate(PlannerInfo *root, IndexPath *path, double loop_count,
				  Cost *indexStartupCost, Cost *indexTotalCost,
				  Selectivity *indexSelectivity, double *indexCorrelation,
				  double *indexPages)
{
	IndexOptInfo *index = path->indexinfo;
	RelOptInfo *rel = index->rel;
	double		width = 0;
	double		entries = estimated_entries(root, index);
	BlockNumber saved_pages = index->pages;
	double		saved_tuples = index->tuples;
	int			saved_height = index->tree_height;
	double		leaves;
	double		fanout;

	if (index->indpred != NIL)
	{
		/* partial index: PostgreSQL's estimate reads the (empty) file */
		Selectivity s = clauselist_selectivity(root, index->indpred, rel->relid,
											   JOIN_INNER, NULL);

		entries *= s;
		index->tuples = clamp_row_est(rel->tuples * s);
	}
	for (int i = 0; i < index->ncolumns; i++)
	{
		int			attno = index->indexkeys[i];
		int32		w = 0;

		if (attno > 0 && rel->attr_widths && attno >= rel->min_attr && attno <= rel->max_attr)
			w = rel->attr_widths[attno - rel->min_attr];
		if (w <= 0)
			w = get_typavgwidth(i < index->nkeycolumns ? index->opcintype[i] : INT4OID, -1);
		width += w;
	}
	/* IndexTupleData + data, line pointer, 90% full leaf pages, a metapage */
	width = MAXALIGN(sizeof(IndexTupleData) + (Size) width) + sizeof(ItemIdData);
	leaves = ceil(entries * width / (BLCKSZ * 0.9));
	index->pages = (BlockNumber) Min(leaves + 1, (double) MaxBlockNumber);
	/* the height such a b-tree would have: btcostestimate charges its descent */
	fanout = Max((BLCKSZ * 0.9) / width, 2.0);
	index->tree_height = leaves <= 1 ? 0 : (int) ceil(log(leaves) / log(fanout));
	btcostestimate(root, path, loop_count, indexStartupCost, indexTotalCost,
				   indexSelectivity, indexCorrelation, indexPages);
	index->pages = saved_pages;
	index->tuples = saved_tuples;
	index->tree_height = saved_height;
}

/* fillfactor, deduplicate_items ... are accepted (and validated) as for btree */
static bytea *
tidx_options(Datum reloptions, bool validate)
{
	return btoptions(reloptions, validate);
}

static bool
tidx_validate(Oid opclassoid)
{
	/* the operator families mirror the b-tree ones: the same rules hold */
	return btvalidate(opclassoid);
}

Datum
tides_btree_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *am = makeNode(IndexAmRoutine);

	am->amstrategies = BTMaxStrategyNumber;
	am->amsupport = BTNProcs;
	am->amoptsprocnum = 0;
	am->amcanorder = true;
	am->amcanorderbyop = false;
	am->amcanbackward = true;
	am->amcanunique = true;
	am->amcanmulticol = true;
	am->amoptionalkey = true;
	am->amsearcharray = true;
	am->amsearchnulls = true;
	am->amstorage = true;		/* only so that name_ops can store cstring, as btree's does */
	am->amclusterable = true;
	am->ampredlocks = false;	/* relation-level SIREAD locks */
	am->amcanparallel = true;
	am->amcaninclude = true;
	am->amusemaintenanceworkmem = false;
	am->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	am->amkeytype = InvalidOid;

	am->ambuild = tidx_build;
	am->ambuildempty = tidx_buildempty;
	am->aminsert = io_insert;
	am->ambulkdelete = io_bulkdelete;
	am->amvacuumcleanup = io_vacuumcleanup;
	am->amcanreturn = tidx_canreturn;
	am->amcostestimate = tidx_costestimate;
	am->amoptions = tidx_options;
	am->amproperty = btproperty;
	am->ambuildphasename = NULL;
	am->amvalidate = tidx_validate;
	am->amadjustmembers = btadjustmembers;
	am->ambeginscan = tidx_beginscan;
	am->amrescan = tidx_rescan;
	am->amgettuple = io_gettuple;
	am->amgetbitmap = io_getbitmap;
	am->amendscan = tidx_endscan;
	am->ammarkpos = tidx_markpos;
	am->amrestrpos = tidx_restrpos;
	am->amestimateparallelscan = tidx_estimateparallelscan;
	am->aminitparallelscan = tidx_initparallelscan;
	am->amparallelrescan = tidx_parallelrescan;

	PG_RETURN_POINTER(am);
}
