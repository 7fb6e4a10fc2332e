/*
 * vacuum.c -- VACUUM for tides tables.
 *
 * One pass over the tree's newest versions:
 *   - a version dead to every snapshot (HEAPTUPLE_DEAD against OldestXmin)
 *     is deleted from the engine, and its TID collected for the indexes;
 *   - a live version whose inserter is older than the freeze limit is
 *     rewritten frozen, and expired lockers are cleared;
 *   - the oldest xid and multixact still stored are tracked, so that the
 *     relfrozenxid/relminmxid reported are true (DESIGN.md D7).
 * Then every index drops entries for the collected TIDs (ambulkdelete),
 * statistics go to pg_class and to the cumulative stats system.
 *
 * TIDs are never reused, so a version can be deleted before its index
 * entries are: an index entry whose version is gone just reads as dead.
 *
 * Freezing persists "committed" (D5).  Before it may, the inserter's commit
 * record and its tides records must be durable: VACUUM first flushes WAL and
 * syncs the tides log, and freezes only xids older than OldestXmin, all of
 * whose transactions had ended by then.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/multixact.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "commands/dbcommands.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/procarray.h"
#include "utils/lsyscache.h"

#include "tides_am.h"

typedef struct VacState
{
	Relation	rel;
	uint64		tree;
	TransactionId OldestXmin;
	MultiXactId OldestMxact;
	TransactionId FreezeLimit;
	MultiXactId MultiXactCutoff;
	TransactionId new_frozen_xid;
	MultiXactId new_min_multi;
	VacDeadItems *dead;
	double		live;
	double		recently_dead;
	double		removed;
	double		frozen;
	tides_batch *b;
	/* visibility map: the block being scanned and whether all of it is visible */
	BlockNumber cur_block;
	bool		cur_all_visible;
	BlockNumber hw_blocks;		/* blocks wholly below the vid high-water mark */
	BlockNumber all_visible_blocks;
} VacState;

static void
track_xid(VacState *vs, TransactionId xid)
{
	if (TransactionIdIsNormal(xid) && TransactionIdPrecedes(xid, vs->new_frozen_xid))
		vs->new_frozen_xid = xid;
}

static void
track_multi(VacState *vs, MultiXactId multi)
{
	if (MultiXactIdIsValid(multi) && MultiXactIdPrecedes(multi, vs->new_min_multi))
		vs->new_min_multi = multi;
}

static void
flush_batch(VacState *vs)
{
	if (tides_batch_count(vs->b) > 0)
		tides_write_batch(vs->b);
	vs->b = tides_local_batch();
}

static void
add_dead(VacState *vs, ItemPointer tid)
{
	if (vs->dead->num_items == vs->dead->max_items)
	{
		int			max = vs->dead->max_items * 2;
		VacDeadItems *bigger = palloc_extended(vac_max_items_to_alloc_size(max), MCXT_ALLOC_HUGE);

		memcpy(bigger->items, vs->dead->items, sizeof(ItemPointerData) * vs->dead->num_items);
		bigger->max_items = max;
		bigger->num_items = vs->dead->num_items;
		pfree(vs->dead);
		vs->dead = bigger;
	}
	vs->dead->items[vs->dead->num_items++] = *tid;
}

/* freeze what is old enough in a live version; true if it changed */
static bool
freeze_version(VacState *vs, TidesTuple *t)
{
	HeapTupleHeader h = t->htup.t_data;
	bool		changed = false;
	TransactionId xmin = HeapTupleHeaderGetXmin(h);

	if (TransactionIdIsNormal(xmin) && !HeapTupleHeaderXminFrozen(h) &&
		TransactionIdPrecedes(xmin, vs->FreezeLimit) &&
		TransactionIdPrecedes(xmin, vs->OldestXmin))
	{
		h->t_infomask |= HEAP_XMIN_FROZEN;
		t->meta.xmin_inc = 0;
		changed = true;
	}
	if (!(h->t_infomask & HEAP_XMAX_INVALID) && HEAP_XMAX_IS_LOCKED_ONLY(h->t_infomask))
	{
		TransactionId xmax = HeapTupleHeaderGetRawXmax(h);
		bool		expired;

		if (h->t_infomask & HEAP_XMAX_IS_MULTI)
			expired = MultiXactIdPrecedes(xmax, vs->MultiXactCutoff) && !MultiXactIdIsRunning(xmax, true);
		else
			expired = TransactionIdPrecedes(xmax, vs->FreezeLimit) && !TransactionIdIsInProgress(xmax);
		if (expired)
		{
			h->t_infomask &= ~(HEAP_XMAX_BITS | HEAP_XMAX_COMMITTED);
			h->t_infomask |= HEAP_XMAX_INVALID;
			h->t_infomask2 &= ~HEAP_KEYS_UPDATED;
			HeapTupleHeaderSetXmax(h, InvalidTransactionId);
			t->meta.xmax_inc = 0;
			changed = true;
		}
	}
	return changed;
}

/* what the version still stores, for relfrozenxid / relminmxid */
static void
track_version(VacState *vs, TidesTuple *t)
{
	HeapTupleHeader h = t->htup.t_data;

	if (!HeapTupleHeaderXminFrozen(h))
		track_xid(vs, HeapTupleHeaderGetXmin(h));
	if (!(h->t_infomask & HEAP_XMAX_INVALID))
	{
		if (h->t_infomask & HEAP_XMAX_IS_MULTI)
		{
			MultiXactMember *members;
			int			n;

			track_multi(vs, HeapTupleHeaderGetRawXmax(h));
			n = GetMultiXactIdMembers(HeapTupleHeaderGetRawXmax(h), &members, false, false);
			for (int i = 0; i < n; i++)
				track_xid(vs, members[i].xid);
			if (n > 0)
				pfree(members);
		}
		else
			track_xid(vs, HeapTupleHeaderGetRawXmax(h));
	}
}

/* finish blocks before `upto`: mark the all-visible ones (empty ones are) */
static void
close_blocks(VacState *vs, BlockNumber upto)
{
	for (; vs->cur_block < upto && vs->cur_block < vs->hw_blocks; vs->cur_block++)
	{
		if (vs->cur_all_visible &&
			tides_vm_mark_block(vs->rel, vs->tree, vs->cur_block, vs->OldestXmin))
			vs->all_visible_blocks++;
		vs->cur_all_visible = true;
	}
	if (vs->cur_block < upto)
		vs->cur_block = upto;
	vs->cur_all_visible = true;
}

static void
scan_tree(VacState *vs)
{
	TidesCursor *c = tides_cursor_open(vs->tree, RelationGetRelid(vs->rel), 0, TIDES_VID_MAX + 1);
	TidesTuple *t;

	while ((t = tides_cursor_next(c, ForwardScanDirection)) != NULL)
	{
		TransactionId dead_after;
		uint8		key[TIDES_ROW_KEY_LEN];

		vacuum_delay_point();
		if (t->vid / TIDES_ROWS_PER_BLOCK != vs->cur_block)
			close_blocks(vs, (BlockNumber) (t->vid / TIDES_ROWS_PER_BLOCK));
		if (!tides_vm_block_visible_to_all(t, vs->OldestXmin))
			vs->cur_all_visible = false;
		switch (tides_satisfies_vacuum(t, vs->OldestXmin, &dead_after))
		{
			case HEAPTUPLE_DEAD:
				tides_row_key(key, vs->tree, t->vid);
				tides_batch_delete(vs->b, key, sizeof(key));
				add_dead(vs, &t->htup.t_self);
				vs->removed += 1;
				break;
			case HEAPTUPLE_LIVE:
				vs->live += 1;
				if (freeze_version(vs, t))
				{
					LWLock	   *stripe = tides_row_lock(vs->tree, t->vid);
					TidesTupleBuf cur;
					TidesTuple *now;

					/* freeze the newest state, under the row lock */
					tides_tuple_buf_init(&cur, CurrentMemoryContext);
					LWLockAcquire(stripe, LW_EXCLUSIVE);
					now = tides_fetch_version(vs->tree, t->vid, RelationGetRelid(vs->rel), &cur);
					if (now != NULL && freeze_version(vs, now))
					{
						tides_batch_add_version(vs->b, vs->tree, now->vid, &now->meta,
												now->htup.t_data, now->htup.t_len);
						flush_batch(vs);
						vs->frozen += 1;
					}
					LWLockRelease(stripe);
					if (now != NULL)
						track_version(vs, now);
					tides_tuple_buf_free(&cur);
					break;
				}
				track_version(vs, t);
				break;
			case HEAPTUPLE_RECENTLY_DEAD:
				vs->recently_dead += 1;
				track_version(vs, t);
				break;
			case HEAPTUPLE_INSERT_IN_PROGRESS:
				track_version(vs, t);
				break;
			case HEAPTUPLE_DELETE_IN_PROGRESS:
				vs->live += 1;
				track_version(vs, t);
				break;
		}
		if (tides_batch_bytes(vs->b) >= (1 << 20))
			flush_batch(vs);
	}
	flush_batch(vs);
	tides_cursor_close(c);
	close_blocks(vs, vs->hw_blocks);
}

void
tides_relation_vacuum(Relation rel, struct VacuumParams *params, BufferAccessStrategy bstrategy)
{
	VacState	vs;
	int			nindexes = 0;
	Relation   *indrels = NULL;
	bool		frozenxid_updated,
				minmulti_updated;
	BlockNumber nblocks;
	bool		do_indexes;

	if (params->nworkers > 0 && RelationUsesLocalBuffers(rel))
		ereport(WARNING,
				(errmsg("disabling parallel option of vacuum on \"%s\" --- cannot vacuum temporary tables in parallel",
						RelationGetRelationName(rel))));
	memset(&vs, 0, sizeof(vs));
	vs.rel = rel;
	vs.tree = tides_rel_tree(rel);
	vacuum_set_xid_limits(rel, params->freeze_min_age, params->freeze_table_age,
						  params->multixact_freeze_min_age, params->multixact_freeze_table_age,
						  &vs.OldestXmin, &vs.OldestMxact, &vs.FreezeLimit, &vs.MultiXactCutoff);
	vs.new_frozen_xid = vs.OldestXmin;
	vs.new_min_multi = vs.OldestMxact;
	vs.dead = palloc(vac_max_items_to_alloc_size(1024));
	vs.dead->max_items = 1024;
	vs.dead->num_items = 0;

	/* commits below OldestXmin become durable before anything is frozen */
	XLogFlush(GetXLogInsertRecPtr());
	{
		tides_status s = tides_sync(tides_engine(), 0, true);

		if (s != TIDES_OK)
			tides_engine_error(s, "sync the log before freezing");
	}
	vs.b = tides_local_batch();
	vs.cur_block = 0;
	vs.cur_all_visible = true;
	/*
	 * The last block may be partly handed out; its bit can be set like any
	 * other, since a later insert clears it after writing (see vm.c).
	 */
	vs.hw_blocks = (BlockNumber) ((tides_vid_high_water(vs.tree) + TIDES_ROWS_PER_BLOCK - 1) /
								  TIDES_ROWS_PER_BLOCK);

	pgstat_progress_start_command(PROGRESS_COMMAND_VACUUM, RelationGetRelid(rel));
	pgstat_progress_update_param(PROGRESS_VACUUM_PHASE, PROGRESS_VACUUM_PHASE_SCAN_HEAP);
	scan_tree(&vs);

	vac_open_indexes(rel, RowExclusiveLock, &nindexes, &indrels);
	do_indexes = params->index_cleanup != VACOPTVALUE_DISABLED;
	if (nindexes > 0 && do_indexes)
	{
		pgstat_progress_update_param(PROGRESS_VACUUM_PHASE, PROGRESS_VACUUM_PHASE_VACUUM_INDEX);
		for (int i = 0; i < nindexes; i++)
		{
			IndexVacuumInfo ivinfo;
			IndexBulkDeleteResult *stats = NULL;

			ivinfo.index = indrels[i];
			ivinfo.analyze_only = false;
			ivinfo.report_progress = false;
			ivinfo.estimated_count = false;
			ivinfo.message_level = (params->options & VACOPT_VERBOSE) ? INFO : DEBUG2;
			ivinfo.num_heap_tuples = vs.live;
			ivinfo.strategy = bstrategy;
			if (vs.dead->num_items > 0)
				stats = vac_bulkdel_one_index(&ivinfo, stats, vs.dead);
			stats = vac_cleanup_one_index(&ivinfo, stats);
			if (stats != NULL && !stats->estimated_count)
				vac_update_relstats(indrels[i], stats->num_pages, stats->num_index_tuples, 0, false,
									InvalidTransactionId, InvalidMultiXactId, NULL, NULL, false);
			if (stats)
				pfree(stats);
		}
	}
	vac_close_indexes(nindexes, indrels, NoLock);

	nblocks = (BlockNumber) ((tides_vid_high_water(vs.tree) + TIDES_ROWS_PER_BLOCK - 1) /
							 TIDES_ROWS_PER_BLOCK);
	vac_update_relstats(rel, nblocks, vs.live, Min(vs.all_visible_blocks, nblocks), nindexes > 0,
						vs.new_frozen_xid, vs.new_min_multi,
						&frozenxid_updated, &minmulti_updated, false);
	pgstat_report_vacuum(RelationGetRelid(rel), rel->rd_rel->relisshared,
						 vs.live, vs.recently_dead);
	pgstat_progress_end_command();
	if (params->options & VACOPT_VERBOSE)
		ereport(INFO,
				(errmsg("vacuuming \"%s.%s.%s\"",
						get_database_name(MyDatabaseId),
						get_namespace_name(RelationGetNamespace(rel)),
						RelationGetRelationName(rel)),
				 errdetail("tuples: %.0f removed, %.0f remain, %.0f are dead but not yet removable, %.0f frozen",
						   vs.removed, vs.live, vs.recently_dead, vs.frozen)));
	pfree(vs.dead);
}
