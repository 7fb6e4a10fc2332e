/*
 * ddl.c -- storage life cycle: new storage, truncation, copies for SET
 * TABLESPACE, CLUSTER and VACUUM FULL; sizes and estimates; TOAST policy.
 *
 * Each relfilenode has its own tree (src/runtime/trees.c).  PostgreSQL still gets
 * an empty main fork file for every tides relation, so its own bookkeeping
 * (pending deletes, tablespace directories, pg_relation_filepath) works as
 * for heap; the rows never touch it.
 *
 * Wide rows are TOASTed into a heap TOAST table, exactly as for heap tables:
 * heap_toast_insert_or_update() needs only the relation, and a value that
 * arrives as a TOAST pointer into another table is fetched and stored anew.
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/heaptoast.h"
#include "access/multixact.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/catalog.h"
#include "catalog/heap.h"
#include "catalog/index.h"
#include "catalog/pg_am_d.h"
#include "catalog/storage.h"
#include "catalog/storage_xlog.h"
#include "commands/progress.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "optimizer/plancat.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "storage/smgr.h"
#include "utils/lsyscache.h"
#include "utils/builtins.h"
#include "utils/typcache.h"
#include "utils/tuplesort.h"

#include "am/tam.h"

/* an empty main fork (and init fork for unlogged tables), as heap creates */
static void
create_storage(const RelFileNode *rnode, char persistence)
{
	SMgrRelation srel = RelationCreateStorage(*rnode, persistence, true);

	if (persistence == RELPERSISTENCE_UNLOGGED)
	{
		smgrcreate(srel, INIT_FORKNUM, false);
		log_smgrcreate(rnode, INIT_FORKNUM);
		smgrimmedsync(srel, INIT_FORKNUM);
	}
	smgrclose(srel);
}

void
tam_relation_set_new_filenode(Relation rel, const RelFileNode *newrnode, char persistence,
								TransactionId *freezeXid, MultiXactId *minmulti)
{
	bool		replacing = !RelFileNodeEquals(*newrnode, rel->rd_node) &&
		OidIsValid(rel->rd_rel->relfilenode);

	trt_check_tablespace(newrnode->spcNode, rel);
	*freezeXid = RecentXmin;
	*minmulti = GetOldestMultiXactId();
	create_storage(newrnode, persistence);
	if (replacing)
	{
		/*
		 * TRUNCATE: the old tree goes when the truncation commits.  Rows of
		 * a bulk load still waiting go into it first: a savepoint may yet
		 * undo the truncation.
		 */
		tam_bulk_before_read(trt_rel_tree(rel), 0, UINT64_MAX);
		trt_drop_tree_at_end(trt_rel_tree(rel), true);
	}
	trt_create_tree(rel, newrnode, persistence);
}

void
tam_relation_nontransactional_truncate(Relation rel)
{
	/* not transactional: rows of a bulk load still waiting go with the old tree */
	tam_bulk_drop_tree(trt_rel_tree(rel));
	trt_replace_tree(rel);
	/* the main fork is empty anyway; this drops the visibility map */
	RelationTruncate(rel, 0);
}

void
tam_relation_copy_data(Relation rel, const RelFileNode *newrnode)
{
	uint64		old_tree = trt_rel_tree(rel);
	uint64		new_tree;
	char		persistence = rel->rd_rel->relpersistence;

	trt_check_tablespace(newrnode->spcNode, rel);
	trt_xact_note_write();
	/* the copy reads the engine: rows of a bulk load still waiting go there first */
	tam_bulk_before_read(old_tree, 0, UINT64_MAX);
	create_storage(newrnode, persistence);
	new_tree = trt_create_tree(rel, newrnode, persistence);
	trt_copy_vid_counter(old_tree, new_tree);
	trt_copy_tree(old_tree, new_tree);
	trt_drop_tree_at_end(old_tree, true);
	/* as heap does: the old files (the visibility map) go at commit */
	RelationDropStorage(rel);
}

/* ---- CLUSTER and VACUUM FULL */

typedef struct ChainFix
{
	uint64		new_vid;
	uint64		old_successor;
} ChainFix;

typedef struct VidMap
{
	uint64		old_vid;
	uint64		new_vid;
} VidMap;

static int
cmp_vidmap(const void *a, const void *b)
{
	uint64		x = ((const VidMap *) a)->old_vid,
				y = ((const VidMap *) b)->old_vid;

	return x < y ? -1 : (x > y);
}

typedef struct ClusterState
{
	Relation	old_rel;
	Relation	new_rel;
	uint64		new_tree;
	int64		written;		/* versions written (pg_stat_progress_cluster) */
	TransactionId xid_cutoff;
	MultiXactId multi_cutoff;
	tides_batch *b;
	VidMap	   *map;
	int64		nmap;
	int64		mapcap;
	ChainFix   *fix;
	int64		nfix;
	int64		fixcap;
} ClusterState;

/* freeze what the new relfilenode's relfrozenxid/relminmxid will promise */
static void
freeze_for_rewrite(ClusterState *cs, HeapTupleHeader h, TamVersionMeta *meta)
{
	TransactionId xmin = HeapTupleHeaderGetXmin(h);

	if (TransactionIdIsNormal(xmin) && TransactionIdPrecedes(xmin, cs->xid_cutoff) &&
		!HeapTupleHeaderXminFrozen(h))
	{
		h->t_infomask |= HEAP_XMIN_FROZEN;
		meta->xmin_inc = 0;
	}
	if (!(h->t_infomask & HEAP_XMAX_INVALID))
	{
		TransactionId xmax = HeapTupleHeaderGetRawXmax(h);
		bool		stale;

		if ((h->t_infomask & HEAP_XMAX_IS_MULTI) && MultiXactIdPrecedes(xmax, cs->multi_cutoff) &&
			!HEAP_XMAX_IS_LOCKED_ONLY(h->t_infomask))
		{
			/*
			 * The new relminmxid promises no older multixact: one that
			 * carries an update gives way to its updater (FreezeMultiXactId),
			 * whose fate is settled and durable (tam_sync_before_freezing).
			 */
			TransactionId upd = HeapTupleGetUpdateXid(h);

			h->t_infomask &= ~(HEAP_XMAX_BITS | HEAP_XMAX_COMMITTED | HEAP_XMAX_INVALID);
			if (TransactionIdIsValid(upd) && TransactionIdDidCommit(upd))
			{
				HeapTupleHeaderSetXmax(h, upd);
				h->t_infomask |= HEAP_XMAX_COMMITTED;
			}
			else
			{
				HeapTupleHeaderSetXmax(h, InvalidTransactionId);
				h->t_infomask |= HEAP_XMAX_INVALID;
				h->t_infomask2 &= ~HEAP_KEYS_UPDATED;
			}
			meta->xmax_inc = 0;
			stale = false;
		}
		else if (h->t_infomask & HEAP_XMAX_IS_MULTI)
			stale = MultiXactIdPrecedes(xmax, cs->multi_cutoff) &&
				HEAP_XMAX_IS_LOCKED_ONLY(h->t_infomask) && !MultiXactIdIsRunning(xmax, true);
		else
			stale = HEAP_XMAX_IS_LOCKED_ONLY(h->t_infomask) &&
				TransactionIdIsNormal(xmax) && TransactionIdPrecedes(xmax, cs->xid_cutoff) &&
				!TransactionIdIsInProgress(xmax);
		if (stale)
		{
			h->t_infomask &= ~(HEAP_XMAX_BITS | HEAP_XMAX_COMMITTED);
			h->t_infomask |= HEAP_XMAX_INVALID;
			h->t_infomask2 &= ~HEAP_KEYS_UPDATED;
			HeapTupleHeaderSetXmax(h, InvalidTransactionId);
			meta->xmax_inc = 0;
		}
	}
}

/* copy one kept version into the new relation under the next vid */
static void
rewrite_one(ClusterState *cs, HeapTuple tup, const TamVersionMeta *oldmeta, uint64 old_vid)
{
	TupleDesc	desc = RelationGetDescr(cs->old_rel);
	Datum	   *values = palloc(desc->natts * sizeof(Datum));
	bool	   *isnull = palloc(desc->natts * sizeof(bool));
	HeapTuple	copy;
	uint64		new_vid = trt_alloc_vids(cs->new_tree, 1);
	TamVersionMeta meta = *oldmeta;
	ItemPointerData old_succ = tup->t_data->t_ctid;
	uint64		succ_vid;

	/* reform: dropped columns become nulls, as heap's rewrite does */
	heap_deform_tuple(tup, desc, values, isnull);
	for (int i = 0; i < desc->natts; i++)
		if (TupleDescAttr(desc, i)->attisdropped)
			isnull[i] = true;
	copy = heap_form_tuple(RelationGetDescr(cs->new_rel), values, isnull);
	memcpy(&copy->t_data->t_choice, &tup->t_data->t_choice, sizeof(copy->t_data->t_choice));
	copy->t_data->t_infomask &= ~HEAP_XACT_MASK;
	copy->t_data->t_infomask |= tup->t_data->t_infomask & HEAP_XACT_MASK;
	/* every version of the new relation is its own root: no HOT bits */
	copy->t_data->t_infomask2 &= ~HEAP2_XACT_MASK;
	meta.flags = TAM_VF_NONE;
	meta.hot_depth = 0;
	meta.link = 0;
	freeze_for_rewrite(cs, copy->t_data, &meta);
	copy->t_tableOid = RelationGetRelid(cs->new_rel);
	if (HeapTupleHasExternal(copy) || copy->t_len > TOAST_TUPLE_THRESHOLD)
	{
		/* values move to the new relation's TOAST table, as heap's rewrite does */
		HeapTuple	toasted = heap_toast_insert_or_update(cs->new_rel, copy, NULL,
														  HEAP_INSERT_SKIP_FSM | HEAP_INSERT_NO_LOGICAL);

		if (toasted != copy)
		{
			heap_freetuple(copy);
			copy = toasted;
		}
	}
	trt_vid_to_tid(new_vid, &copy->t_self);
	copy->t_data->t_ctid = copy->t_self;

	/* remember the successor to repoint once it has its new vid */
	if (!ItemPointerEquals(&old_succ, &tup->t_self) && trt_tid_to_vid(&old_succ, &succ_vid) &&
		!(copy->t_data->t_infomask & HEAP_XMAX_INVALID) &&
		!HEAP_XMAX_IS_LOCKED_ONLY(copy->t_data->t_infomask))
	{
		if (cs->nfix == cs->fixcap)
		{
			cs->fixcap = cs->fixcap ? cs->fixcap * 2 : 64;
			cs->fix = cs->fix ? repalloc_huge(cs->fix, cs->fixcap * sizeof(ChainFix))
				: palloc(cs->fixcap * sizeof(ChainFix));
		}
		cs->fix[cs->nfix].new_vid = new_vid;
		cs->fix[cs->nfix].old_successor = succ_vid;
		cs->nfix++;
	}
	if (cs->nmap == cs->mapcap)
	{
		cs->mapcap = cs->mapcap ? cs->mapcap * 2 : 1024;
		cs->map = cs->map ? repalloc_huge(cs->map, cs->mapcap * sizeof(VidMap))
			: palloc_extended(cs->mapcap * sizeof(VidMap), MCXT_ALLOC_HUGE);
	}
	cs->map[cs->nmap].old_vid = old_vid;
	cs->map[cs->nmap].new_vid = new_vid;
	cs->nmap++;

	tam_batch_add_version(cs->b, cs->new_tree, new_vid, &meta, copy->t_data, copy->t_len);
	pgstat_progress_update_param(PROGRESS_CLUSTER_HEAP_TUPLES_WRITTEN, ++cs->written);
	if (tides_batch_bytes(cs->b) >= trt_batch_limit())
	{
		trt_write_batch(cs->b);
		cs->b = trt_local_batch();
		trt_xact_tag_batch(cs->b);
	}
	heap_freetuple(copy);
	pfree(values);
	pfree(isnull);
}

/* is the version kept, and how is it counted (heap's rules)? */
static bool
keep_version(Relation rel, TamTuple *t, TransactionId OldestXmin, double *num_tuples,
			 double *tups_vacuumed, double *tups_recently_dead)
{
	TransactionId dead_after;

	switch (tam_satisfies_vacuum(t, OldestXmin, &dead_after))
	{
		case HEAPTUPLE_DEAD:
			*tups_vacuumed += 1;
			return false;
		case HEAPTUPLE_RECENTLY_DEAD:
			*tups_recently_dead += 1;
			break;
		case HEAPTUPLE_LIVE:
			break;
		case HEAPTUPLE_INSERT_IN_PROGRESS:
			if (!TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetXmin(t->htup.t_data)))
				elog(WARNING, "concurrent insert in progress within table \"%s\"",
					 RelationGetRelationName(rel));
			break;
		case HEAPTUPLE_DELETE_IN_PROGRESS:
			if (!TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetUpdateXid(t->htup.t_data)))
				elog(WARNING, "concurrent delete in progress within table \"%s\"",
					 RelationGetRelationName(rel));
			*tups_recently_dead += 1;
			break;
	}
	*num_tuples += 1;
	return true;
}

void
tam_relation_copy_for_cluster(Relation OldTable, Relation NewTable, Relation OldIndex,
								bool use_sort, TransactionId OldestXmin,
								TransactionId *xid_cutoff, MultiXactId *multi_cutoff,
								double *num_tuples, double *tups_vacuumed,
								double *tups_recently_dead)
{
	ClusterState cs;
	uint64		old_tree = trt_rel_tree(OldTable);
	Tuplesortstate *sort = NULL;
	TupleTableSlot *slot = NULL;
	IndexScanDesc iscan = NULL;
	TamTupleBuf buf;
	int64		scanned = 0;
	BlockNumber block = InvalidBlockNumber;

	trt_xact_note_write();
	/* the rewrite freezes and keeps hint bits: as VACUUM, commits first */
	tam_sync_before_freezing();
	tam_tuple_buf_init(&buf, CurrentMemoryContext);
	memset(&cs, 0, sizeof(cs));
	cs.old_rel = OldTable;
	cs.new_rel = NewTable;
	cs.new_tree = trt_rel_tree(NewTable);
	cs.xid_cutoff = *xid_cutoff;
	cs.multi_cutoff = *multi_cutoff;
	cs.b = trt_local_batch();
	trt_xact_tag_batch(cs.b);
	*num_tuples = *tups_vacuumed = *tups_recently_dead = 0;

	if (OldIndex != NULL && use_sort)
		sort = tuplesort_begin_cluster(RelationGetDescr(OldTable), OldIndex, maintenance_work_mem,
									   NULL, TUPLESORT_NONE);

	/*
	 * pg_stat_progress_cluster as heap reports it: the phase, the virtual
	 * blocks of the row id space for a sequential pass, versions scanned and
	 * written (cluster.c reports the later phases).
	 */
	if (OldIndex != NULL && !use_sort)
		pgstat_progress_update_param(PROGRESS_CLUSTER_PHASE, PROGRESS_CLUSTER_PHASE_INDEX_SCAN_HEAP);
	else
	{
		const int	prog[] = {PROGRESS_CLUSTER_PHASE, PROGRESS_CLUSTER_TOTAL_HEAP_BLKS};
		const int64 val[] = {PROGRESS_CLUSTER_PHASE_SEQ_SCAN_HEAP,
			(int64) ((trt_vid_high_water(old_tree) + TRT_ROWS_PER_BLOCK - 1) / TRT_ROWS_PER_BLOCK)};

		pgstat_progress_update_multi_param(2, prog, val);
	}

	if (OldIndex != NULL && !use_sort)
	{
		/* CLUSTER by index order: walk the index with SnapshotAny */
		slot = table_slot_create(OldTable, NULL);
		iscan = index_beginscan(OldTable, OldIndex, SnapshotAny, 0, 0);
		index_rescan(iscan, NULL, 0, NULL, 0);
		while (index_getnext_slot(iscan, ForwardScanDirection, slot))
		{
			uint64		vid;
			TamTuple *t;

			CHECK_FOR_INTERRUPTS();
			if (!trt_tid_to_vid(&slot->tts_tid, &vid))
				continue;
			t = tam_fetch_version(old_tree, vid, RelationGetRelid(OldTable), &buf);
			if (t == NULL)
				continue;
			pgstat_progress_update_param(PROGRESS_CLUSTER_HEAP_TUPLES_SCANNED, ++scanned);
			if (!keep_version(OldTable, t, OldestXmin, num_tuples, tups_vacuumed,
							  tups_recently_dead))
				continue;
			rewrite_one(&cs, &t->htup, &t->meta, vid);
		}
		index_endscan(iscan);
		ExecDropSingleTupleTableSlot(slot);
	}
	else
	{
		TamCursor *c = tam_cursor_open(old_tree, RelationGetRelid(OldTable), 0, TRT_VID_MAX + 1,
									   trt_bulk_read_bytes(trt_tree_bytes(old_tree, true)));
		TamTuple *t;

		while ((t = tam_cursor_next(c, ForwardScanDirection)) != NULL)
		{
			CHECK_FOR_INTERRUPTS();
			if (t->vid / TRT_ROWS_PER_BLOCK != block)
			{
				block = t->vid / TRT_ROWS_PER_BLOCK;
				pgstat_progress_update_param(PROGRESS_CLUSTER_HEAP_BLKS_SCANNED, block + 1);
			}
			pgstat_progress_update_param(PROGRESS_CLUSTER_HEAP_TUPLES_SCANNED, ++scanned);
			if (!keep_version(OldTable, t, OldestXmin, num_tuples, tups_vacuumed, tups_recently_dead))
				continue;
			if (sort != NULL)
			{
				/* the meta part rides along in t_self's place: re-read it after sorting */
				tuplesort_putheaptuple(sort, &t->htup);
			}
			else
				rewrite_one(&cs, &t->htup, &t->meta, t->vid);
		}
		tam_cursor_close(c);
		/* every virtual block passed, empty ones included */
		pgstat_progress_update_param(PROGRESS_CLUSTER_HEAP_BLKS_SCANNED,
									 (int64) ((trt_vid_high_water(old_tree) + TRT_ROWS_PER_BLOCK - 1) /
											  TRT_ROWS_PER_BLOCK));
	}

	if (sort != NULL)
	{
		HeapTuple	tup;

		pgstat_progress_update_param(PROGRESS_CLUSTER_PHASE, PROGRESS_CLUSTER_PHASE_SORT_TUPLES);
		tuplesort_performsort(sort);
		pgstat_progress_update_param(PROGRESS_CLUSTER_PHASE, PROGRESS_CLUSTER_PHASE_WRITE_NEW_HEAP);
		while ((tup = tuplesort_getheaptuple(sort, true)) != NULL)
		{
			uint64		vid;
			TamTuple *t;

			CHECK_FOR_INTERRUPTS();
			if (!trt_tid_to_vid(&tup->t_self, &vid))
				continue;
			/* the sorted copy lacks the meta part; take it from the stored version */
			t = tam_fetch_version(old_tree, vid, RelationGetRelid(OldTable), &buf);
			if (t == NULL)
				continue;
			rewrite_one(&cs, &t->htup, &t->meta, vid);
		}
		tuplesort_end(sort);
	}
	if (tides_batch_count(cs.b) > 0)
		trt_write_batch(cs.b);

	/* repoint update chains at the successors' new vids */
	if (cs.nfix > 0)
	{
		qsort(cs.map, cs.nmap, sizeof(VidMap), cmp_vidmap);
		for (int64 i = 0; i < cs.nfix; i++)
		{
			VidMap		key = {cs.fix[i].old_successor, 0};
			VidMap	   *m = bsearch(&key, cs.map, cs.nmap, sizeof(VidMap), cmp_vidmap);
			TamTuple *t = tam_fetch_version(cs.new_tree, cs.fix[i].new_vid,
												RelationGetRelid(NewTable), &buf);
			tides_batch *b;

			if (t == NULL)
				continue;
			if (m != NULL)
				trt_vid_to_tid(m->new_vid, &t->htup.t_data->t_ctid);
			else
				t->htup.t_data->t_ctid = t->htup.t_self;	/* successor was dead: chain ends */
			b = trt_local_batch();
			trt_xact_tag_batch(b);
			tam_batch_add_version(b, cs.new_tree, t->vid, &t->meta, t->htup.t_data, t->htup.t_len);
			trt_write_batch(b);
		}
	}
	if (cs.map)
		pfree(cs.map);
	if (cs.fix)
		pfree(cs.fix);
	tam_tuple_buf_free(&buf);
}

/* ---- sizes */

/*
 * The main fork's size is its virtual blocks: what ANALYZE, TABLESAMPLE and
 * parallel scans iterate over.  The other forks (the visibility map) are
 * real files.
 */
uint64
tam_relation_size(Relation rel, ForkNumber forkNumber)
{
	uint64		size = 0;

	if (forkNumber == MAIN_FORKNUM || forkNumber == InvalidForkNumber)
		size = (trt_vid_high_water(trt_rel_tree(rel)) + TRT_ROWS_PER_BLOCK - 1) /
			TRT_ROWS_PER_BLOCK * BLCKSZ;
	for (ForkNumber f = MAIN_FORKNUM + 1; f <= MAX_FORKNUM; f++)
	{
		if (forkNumber != f && forkNumber != InvalidForkNumber)
			continue;
		if (smgrexists(RelationGetSmgr(rel), f))
			size += (uint64) smgrnblocks(RelationGetSmgr(rel), f) * BLCKSZ;
	}
	return size;
}

/* what a row costs a heap page: header, alignment, line pointer */
#define TAM_OVERHEAD_BYTES_PER_TUPLE (MAXALIGN(SizeofHeapTupleHeader) + sizeof(ItemIdData))
#define TAM_USABLE_BYTES_PER_PAGE (BLCKSZ - SizeOfPageHeaderData)
#define TAM_PHYSICAL_BYTES_PER_PAGE (8.0 * BLCKSZ)

/*
 * The planner's size estimate.  Row counts follow heap's rules (density
 * measured by the last VACUUM or ANALYZE, per virtual block; ten pages for
 * a table never vacuumed).  Pages, though, are not virtual blocks, which
 * hold up to 291 rows whatever their width: the planner prices pages as
 * the bytes a scan must read, so we report the pages these rows would fill
 * -- about the bytes a tides scan reads too (key and version header take
 * about what heap's line pointer and free space do).  That keeps plan
 * choices, parallel worker counts included, where heap's would be.
 *
 * But a scan also reads what the rows no longer need: dead versions, and
 * the deletions VACUUM and pruning wrote, until compaction has merged them
 * away -- heap's pages hold dead tuples likewise, and heap's estimate counts
 * the pages they take.  So the bytes the tree actually occupies
 * (trt_rel_bytes_estimate: O(log n), at most a second old) set a floor: an eighth of them
 * in pages, since a narrow version in a memtable takes about three times
 * what its heap tuple does (key, sequence, version header, skiplist links),
 * and a fresh table must keep heap's plans (PostgreSQL's regression suite
 * checks them) -- the floor only matters once garbage outweighs the rows
 * several times over.
 * Without that floor a small table updated a thousand times a second
 * (pgbench_branches) kept its one-page estimate, and every sequential scan
 * the planner chose for it waded through hundreds of thousands of entries.
 * A cached plan (a prepared statement's) is made again once the floor has
 * grown well past what it was planned with (tam_scan_begin).
 */
void
tam_relation_estimate_size(Relation rel, int32 *attr_widths, BlockNumber *pages,
							 double *tuples, double *allvisfrac)
{
	uint64		vids = trt_vid_high_water(trt_rel_tree(rel));
	double		vblocks = ceil((double) vids / TRT_ROWS_PER_BLOCK);
	BlockNumber relpages = rel->rd_rel->relpages;
	double		reltuples = rel->rd_rel->reltuples;
	BlockNumber relallvisible = rel->rd_rel->relallvisible;
	double		row_bytes = get_rel_data_width(rel, attr_widths) + TAM_OVERHEAD_BYTES_PER_TUPLE;
	double		rows_per_page = Max(1.0, floor(TAM_USABLE_BYTES_PER_PAGE / row_bytes));
	double		curpages;

	if (reltuples >= 0 && relpages > 0)
	{
		*tuples = rint(reltuples / relpages * vblocks);
		curpages = ceil(*tuples / rows_per_page);
	}
	else
	{
		/* no density measured: every row id handed out may hold a live row */
		curpages = ceil(vids / rows_per_page);
		if (curpages < 10 && reltuples < 0 && !rel->rd_rel->relhassubclass)
			curpages = 10;
		*tuples = rint(rows_per_page * curpages);
	}
	curpages = Max(curpages, floor((double) trt_rel_plan_bytes(rel) /
								   TAM_PHYSICAL_BYTES_PER_PAGE));
	if (curpages == 0)
	{
		*pages = 0;
		*tuples = 0;
		*allvisfrac = 0;
		return;
	}
	*pages = (BlockNumber) Min(curpages, (double) MaxBlockNumber);
	if (relallvisible == 0 || relpages == 0)
		*allvisfrac = 0;
	else
		*allvisfrac = Min(1.0, (double) relallvisible / Max(relpages, vblocks));
}

bool
tam_relation_needs_toast_table(Relation rel)
{
	TupleDesc	desc = rel->rd_att;
	int32		data_length = 0;
	bool		maxlength_unknown = false;
	bool		has_toastable_attrs = false;
	int32		tuple_length;

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped)
			continue;
		data_length = att_align_nominal(data_length, att->attalign);
		if (att->attlen > 0)
			data_length += att->attlen;
		else
		{
			int32		maxlen = type_maximum_size(att->atttypid, att->atttypmod);

			if (maxlen < 0)
				maxlength_unknown = true;
			else
				data_length += maxlen;
			if (att->attstorage != TYPSTORAGE_PLAIN)
				has_toastable_attrs = true;
		}
	}
	if (!has_toastable_attrs)
		return false;
	if (maxlength_unknown)
		return true;
	tuple_length = MAXALIGN(SizeofHeapTupleHeader + BITMAPLEN(desc->natts)) + MAXALIGN(data_length);
	return tuple_length > TOAST_TUPLE_THRESHOLD;
}

Oid
tam_relation_toast_am(Relation rel)
{
	return HEAP_TABLE_AM_OID;
}
