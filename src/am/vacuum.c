/*
 * vacuum.c -- VACUUM for tides tables.
 *
 * One pass over the tree in vid order (heap's lazy_scan_heap), then index
 * passes (lazy_vacuum):
 *   - a version dead to every snapshot (HEAPTUPLE_DEAD against OldestXmin)
 *     that indexes point at becomes a dead stub (heap's LP_DEAD) and its TID
 *     is collected; after every index has dropped the collected TIDs
 *     (ambulkdelete) the stubs go and their blocks may be marked all-visible.
 *     A table without indexes loses its dead versions at once.  With
 *     INDEX_CLEANUP off the stubs stay, and keep their blocks out of the
 *     visibility map, until a later VACUUM removes their index entries.
 *   - a HOT chain (see hot.c) is pruned from its root: members dead to all
 *     go, and a dead root becomes a redirect to the first member that
 *     remains, or a dead stub if none does (heap_prune_chain).
 *   - a live version whose inserter is older than the freeze limit is
 *     rewritten frozen, and expired lockers are cleared;
 *   - the oldest xid and multixact still stored are tracked, so that the
 *     relfrozenxid/relminmxid reported are true (docs/durability.md, D7).
 * When the collected TIDs fill maintenance_work_mem, an index pass runs
 * before the scan goes on.  A run of dead versions at the tree's low end is
 * retired instead of removed (retire; src/runtime/low_marks.c): nothing is
 * written for them, the tree's low mark moves past them, and the scan of
 * the next VACUUM starts there.  Statistics go to pg_class and to the
 * cumulative stats system.
 *
 * Freezing persists "committed" (D5).  Before it may, the inserter's commit
 * record and its tides records must be durable: VACUUM first flushes WAL and
 * syncs the tides log, and freezes only xids older than OldestXmin, all of
 * whose transactions had ended by then.  VACUUM's own writes are not synced
 * one by one; one sync makes them durable before relfrozenxid moves.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/visibilitymap.h"
#include "access/multixact.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "catalog/index.h"
#include "commands/dbcommands.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/autovacuum.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_rusage.h"
#include "utils/timestamp.h"

#include "am/tam.h"

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
	VacDeadItems *dead;			/* TIDs of dead stubs, for the indexes */
	int			max_dead;
	Relation   *indrels;
	int			nindexes;
	bool		do_indexes;
	/* per index: deletes entries by key (trt_index_keys_begin), or NULL */
	void	  **keyed;
	int			nkeyed;
	/* some collected TID still has entries in a keyed index */
	bool		dead_in_keyed;
	double		keyed_removed;	/* versions whose entries went by key */
	BufferAccessStrategy bstrategy;
	int			elevel;
	int			index_passes;
	double		live;
	double		recently_dead;
	double		removed;
	double		frozen;
	double		entries_written;	/* engine entries VACUUM wrote, and their bytes */
	double		bytes_written;
	tides_batch *b;
	bool		b_removes;		/* b deletes row keys (held_views.c wants to know) */
	/* visibility map: the block being scanned and whether all of it is visible */
	BlockNumber cur_block;
	bool		cur_all_visible;
	/*
	 * The read point of the view the scan entered cur_block in, or 0 (it
	 * skipped the block, or met a redirect, whose target it does not judge):
	 * tam_vm_mark_block skips its re-read when nothing was written to the
	 * block since.  A refresh of the cursor inside the block only moves its
	 * view forward, and anything written after this point fails that proof.
	 */
	uint64		cur_judged_at;
	bool		stepped;		/* the cursor reached its entry by stepping, not a seek */
	BlockNumber hw_blocks;		/* blocks wholly below the vid high-water mark */
	BlockNumber all_visible_blocks;
	/* blocks already all-visible are skipped unless the VACUUM is aggressive */
	bool		aggressive;
	BlockNumber scanned_blocks;
	BlockNumber skipped_blocks;
	BlockNumber vacuumed_blocks;	/* blocks of dead items handed to the visibility map */
	bool		entered;		/* cur_block has been entered by the scan */
	/* dead stubs among the collected TIDs, which go once the indexes forgot them */
	uint64	   *stubs;
	int			nstubs;
	int			stubcap;
	/* after a crash: row ids below this may have lost rows (check_gap) */
	uint64		suspect_below;
	uint64		next_vid;		/* the scan has seen every row id below this */
	Buffer		vmbuffer;
	/*
	 * Retiring the low end (src/runtime/low_marks.c): the scan starts at the
	 * tree's low mark; while every row id it has passed is dead to all or
	 * was never written (retiring), nothing is written for them, and at the
	 * end retire_below becomes the new mark.  No block with a row id below
	 * max(scan_from, retire_below) is marked all-visible: the entries of its
	 * retired rows may outlive the rows until compaction drops them.
	 */
	uint64		scan_from;
	bool		retiring;
	uint64		retire_below;
	uint64		settled;		/* trt_vids_settled_below before the scan's view */
	uint64	   *index_trees;	/* the tides_btree indexes' trees, to retire with the table */
	double		retired;		/* versions retired */
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

/* VACUUM's batch: not synced write by write (see the file comment) */
static tides_batch *
vac_batch(VacState *vs)
{
	if (vs->b == NULL)
	{
		vs->b = trt_local_batch();
		tides_batch_defer_sync(vs->b);
	}
	return vs->b;
}

/* write what is pending; anything that may use the local batch comes after */
static void
flush_batch(VacState *vs)
{
	if (vs->b != NULL && tides_batch_count(vs->b) > 0)
	{
		TransactionId horizon = vs->OldestXmin;

		/* what it removes or freezes, no snapshot older than the cutoff may still see */
		TransactionIdRetreat(horizon);
		trt_wal_set_conflict(horizon, vs->rel->rd_node.dbNode);
		vs->entries_written += tides_batch_count(vs->b);
		vs->bytes_written += tides_batch_bytes(vs->b);
		trt_write_batch(vs->b);
		/* index views older than this may show entries of the rows removed */
		if (vs->b_removes)
			trt_tree_note_removal(vs->tree, tides_read_point(trt_engine()));
	}
	vs->b = NULL;
	vs->b_removes = false;
}

static void
delete_key(VacState *vs, uint64 vid)
{
	uint8		key[TRT_ROW_KEY_LEN];

	trt_row_key(key, vs->tree, vid);
	if (tides_batch_delete(vac_batch(vs), key, sizeof(key)) != TIDES_OK)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory building a tides batch")));
	vs->b_removes = true;
	if (tides_batch_bytes(vs->b) >= trt_batch_limit())
		flush_batch(vs);
}

static void vacuum_indexes(VacState *vs);

/*
 * Collect a TID for the indexes to forget: a dead stub's (which goes once
 * they have), or a gap's -- a row id below the tree's suspect mark with no
 * key at all (see check_gap).
 */
static void
add_dead_for(VacState *vs, ItemPointer tid, bool is_stub, bool keyed_done)
{
	if (vs->dead->num_items == vs->max_dead)
		vacuum_indexes(vs);
	if (!keyed_done)
		vs->dead_in_keyed = true;
	if (is_stub)
	{
		if (vs->nstubs == vs->stubcap)
		{
			vs->stubcap = vs->stubcap ? vs->stubcap * 2 : 1024;
			vs->stubs = vs->stubs ? repalloc_huge(vs->stubs, vs->stubcap * sizeof(uint64))
				: palloc(vs->stubcap * sizeof(uint64));
		}
		trt_tid_to_vid(tid, &vs->stubs[vs->nstubs++]);
	}
	if (vs->dead->num_items == vs->dead->max_items)
	{
		int			max = Min(vs->dead->max_items * 2, vs->max_dead);
		VacDeadItems *bigger = palloc_extended(vac_max_items_to_alloc_size(max), MCXT_ALLOC_HUGE);

		memcpy(bigger->items, vs->dead->items, sizeof(ItemPointerData) * vs->dead->num_items);
		bigger->max_items = max;
		bigger->num_items = vs->dead->num_items;
		pfree(vs->dead);
		vs->dead = bigger;
	}
	vs->dead->items[vs->dead->num_items++] = *tid;
}

static void
add_dead(VacState *vs, ItemPointer tid, bool is_stub)
{
	add_dead_for(vs, tid, is_stub, false);
}

/* freeze what is old enough in a live version; true if it changed */
static bool
freeze_version(VacState *vs, TamTuple *t)
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
track_version(VacState *vs, TamTuple *t)
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

/*
 * Finish blocks before `upto`: mark the all-visible ones (empty ones are).
 * gap_judged_at: the read point of a view that held nothing between
 * cur_block and upto (the view of the entry the scan stepped to), or 0.
 */
static void
close_blocks(VacState *vs, BlockNumber upto, uint64 gap_judged_at)
{
	uint64		judged_at = vs->cur_judged_at;

	if (vs->cur_block < upto)
		flush_batch(vs);		/* mark_block judges the tree as it now is */
	for (; vs->cur_block < upto && vs->cur_block < vs->hw_blocks; vs->cur_block++)
	{
		/* a suspect block waits for its gaps' index entries to go (check_gap) */
		if ((uint64) vs->cur_block * TRT_ROWS_PER_BLOCK < vs->suspect_below)
			vs->cur_all_visible = false;
		/* nor may a block with retired row ids be marked (VacState) */
		if ((uint64) vs->cur_block * TRT_ROWS_PER_BLOCK < Max(vs->scan_from, vs->retire_below))
			vs->cur_all_visible = false;
		if (vs->cur_all_visible &&
			tam_vm_mark_block(vs->rel, vs->tree, vs->cur_block, vs->OldestXmin, judged_at))
			vs->all_visible_blocks++;
		vs->cur_all_visible = true;
		judged_at = gap_judged_at;
	}
	vs->cur_judged_at = 0;
	if (vs->cur_block < upto)
		vs->cur_block = upto;
	vs->cur_all_visible = true;
}

/*
 * A version (or chain root) dead to all: with indexes it becomes a dead stub
 * until they have forgotten it; without, it goes now.  True if the caller
 * must collect its TID (add_dead, which may run an index pass, so never
 * under a stripe lock).
 */
static bool
remove_root(VacState *vs, uint64 vid)
{
	if (vs->nindexes == 0)
	{
		delete_key(vs, vid);
		return false;
	}
	tam_batch_add_stub(vac_batch(vs), vs->tree, vid, TAM_VF_DEAD, 0, 0);
	vs->cur_all_visible = false;
	return vs->do_indexes;
}

static void
collect_dead(VacState *vs, uint64 vid)
{
	ItemPointerData tid;

	trt_vid_to_tid(vid, &tid);
	add_dead(vs, &tid, true);
}

/*
 * A dead root that is not HOT-updated, with indexes: the entries it has in
 * the indexes that can delete by key (tides_btree) go in the same batch as
 * the version, computed from it, without reading those indexes.  When every
 * index could, the version goes at once, like in a table without indexes:
 * nothing refers to its TID any more, so no stub and no index pass.
 * Otherwise it becomes a dead stub as in remove_root, and its TID waits for
 * the index pass of the other indexes (of all of them, if some key could
 * not be computed).  Returns what collect_dead would need: the caller
 * collects the TID (with keyed_done telling whether the keyed indexes are
 * done with it).
 */
static bool
remove_dead_version(VacState *vs, TamTuple *t, bool *keyed_done)
{
	bool		all = true;

	*keyed_done = false;
	if (vs->nkeyed == 0 || !vs->do_indexes)
		return remove_root(vs, t->vid);
	for (int i = 0; i < vs->nindexes; i++)
		if (vs->keyed[i] != NULL &&
			!trt_index_keys_delete(vs->keyed[i], &t->htup, RelationGetDescr(vs->rel),
								   &t->htup.t_self, vac_batch(vs)))
			all = false;
	if (all)
		vs->keyed_removed += 1;
	*keyed_done = all;
	if (all && vs->nkeyed == vs->nindexes)
	{
		delete_key(vs, t->vid);
		return false;
	}
	/* delete_key may have written the batch: remove_root starts another */
	if (tides_batch_bytes(vac_batch(vs)) >= trt_batch_limit())
		flush_batch(vs);
	return remove_root(vs, t->vid);
}

/*
 * After a crash, rows may be gone whose index entries survived (an index
 * insertion is WAL-logged, the row's tides records may not have been
 * durable).  Such a row id has no key at all, and nothing else would ever
 * remove its entries, which an index-only scan would then trust once the
 * block is all-visible.  So after a crash each tree carries a suspect mark
 * (trt_tree_suspect_below, set in the postmaster by trt_reset_after_crash):
 * row ids below it that have no key are collected for the indexes like dead
 * stubs, and their blocks stay out of the visibility map until the indexes
 * have forgotten them.  A complete VACUUM with index cleanup lifts the mark.
 */
static void
check_gap(VacState *vs, uint64 upto)
{
	uint64		end = Min(upto, vs->suspect_below);

	for (uint64 v = vs->next_vid; v < end; v++)
	{
		ItemPointerData tid;

		trt_vid_to_tid(v, &tid);
		if (vs->do_indexes)
			add_dead(vs, &tid, false);
	}
	vs->next_vid = Max(vs->next_vid, upto);
}

typedef enum RootFate
{
	ROOT_KEPT,					/* the root version stays as it is */
	ROOT_REDIRECTED,			/* the root is (now) a redirect */
	ROOT_REMOVED				/* the whole chain was dead */
} RootFate;

/* VACUUM's test: dead against its OldestXmin */
static TamMemberFate
judge_for_vacuum(TamTuple *t, void *arg)
{
	VacState   *vs = (VacState *) arg;
	TransactionId dead_after;

	switch (tam_satisfies_vacuum(t, vs->OldestXmin, &dead_after))
	{
		case HEAPTUPLE_DEAD:
			return TAM_MEMBER_DEAD;
		case HEAPTUPLE_RECENTLY_DEAD:
			return TAM_MEMBER_RECENTLY_DEAD;
		default:
			return TAM_MEMBER_STAYS;
	}
}

/*
 * Prune the HOT chain at root_vid (a version with HEAP_HOT_UPDATED, or a
 * redirect), as heap_prune_chain does (tam_hot_prune_plan): all members up
 * to the last dead one go; the root becomes a redirect to the member after
 * it, or, if the chain ends there, is removed with it.  An aborted tail
 * beyond a live member is not reached here: the scan removes such versions
 * on its own.  All of it is one batch (readers see the chain before or
 * after, never between; tam_hot_search restarts when a member it was
 * heading for vanished), written under the root's stripe lock.
 */
static RootFate
prune_chain(VacState *vs, uint64 root_vid)
{
	LWLock	   *stripe = trt_row_lock(vs->tree, root_vid);
	TamTupleBuf buf;
	TamHotPrune p;
	RootFate	fate;
	bool		need_collect = false;

	flush_batch(vs);
	tam_tuple_buf_init(&buf, CurrentMemoryContext);
	LWLockAcquire(stripe, LW_EXCLUSIVE);
	trt_row_lock_acquired(stripe);
	if (!tam_hot_prune_plan(vs->rel, vs->tree, root_vid, &buf, judge_for_vacuum, vs, &p))
	{
		LWLockRelease(stripe);
		tam_tuple_buf_free(&buf);
		return ROOT_REMOVED;
	}
	if (p.latestdead < 0)
		fate = p.root_is_stub ? ROOT_REDIRECTED : ROOT_KEPT;
	else
	{
		if (p.latestdead + 1 < p.n)
			fate = ROOT_REDIRECTED;
		else
		{
			need_collect = remove_root(vs, root_vid);
			fate = ROOT_REMOVED;
		}
		tam_hot_prune_members(vac_batch(vs), vs->tree, root_vid, &p);
		vs->removed += p.latestdead + 1;
	}
	flush_batch(vs);
	LWLockRelease(stripe);
	if (need_collect)
		collect_dead(vs, root_vid);
	tam_hot_prune_free(&p);
	tam_tuple_buf_free(&buf);
	return fate;
}

/* freeze a live version, its newest state, under its stripe lock */
static void
freeze_live(VacState *vs, TamTuple *t)
{
	LWLock	   *stripe = trt_row_lock(vs->tree, t->vid);
	TamTupleBuf cur;
	TamTuple *now;

	flush_batch(vs);
	tam_tuple_buf_init(&cur, CurrentMemoryContext);
	LWLockAcquire(stripe, LW_EXCLUSIVE);
	trt_row_lock_acquired(stripe);
	now = tam_fetch_version(vs->tree, t->vid, RelationGetRelid(vs->rel), &cur);
	if (now != NULL && freeze_version(vs, now))
	{
		tam_batch_add_version(vac_batch(vs), vs->tree, now->vid, &now->meta,
								now->htup.t_data, now->htup.t_len);
		flush_batch(vs);
		vs->frozen += 1;
	}
	LWLockRelease(stripe);
	if (now != NULL)
		track_version(vs, now);
	tam_tuple_buf_free(&cur);
}

/*
 * The low end, while every row id passed is dead to all or was never
 * written: true if t is one more such version, which is then retired
 * instead of removed; otherwise the run ends before t (or at the settled
 * mark, beyond which a row may still be written).
 */
static bool
retire(VacState *vs, TamTuple *t)
{
	TransactionId dead_after;

	Assert(vs->retiring && t->vid >= vs->retire_below && vs->retire_below <= vs->settled);
	if (t->vid < vs->settled && !TAM_IS_REDIRECT(t) && !TAM_IS_STUB(t) &&
		!HeapTupleHeaderIsHeapOnly(t->htup.t_data) &&
		!HeapTupleHeaderIsHotUpdated(t->htup.t_data) &&
		tam_satisfies_vacuum(t, vs->OldestXmin, &dead_after) == HEAPTUPLE_DEAD)
	{
		vs->retire_below = t->vid + 1;
		vs->cur_all_visible = false;
		vs->removed += 1;
		vs->retired += 1;
		return true;
	}
	vs->retire_below = Min(t->vid, vs->settled);
	vs->retiring = false;
	return false;
}

/*
 * Whether this VACUUM may retire the table's low end: every index is a
 * tides_btree one (whose entries the mark retires; another index's entries
 * must go through its ambulkdelete), index cleanup is on, no suspect mark
 * asks for the gaps' TIDs, and the shared table has room for the marks.
 * The scan starts at the tree's mark in any case.
 */
static void
setup_retiring(VacState *vs)
{
	vs->scan_from = trt_tree_low_mark(vs->tree);
	vs->retire_below = vs->scan_from;
	if (vs->suspect_below > 0 || (vs->nindexes > 0 && !vs->do_indexes))
		return;
	vs->index_trees = palloc(Max(vs->nindexes, 1) * sizeof(uint64));
	for (int i = 0; i < vs->nindexes; i++)
		if (!trt_is_tides_index(vs->indrels[i]) ||
			!trt_lookup_tree(&vs->indrels[i]->rd_node, vs->indrels[i]->rd_backend,
							 &vs->index_trees[i]))
		{
			pfree(vs->index_trees);
			vs->index_trees = NULL;
			return;
		}
	if (!trt_low_marks_reserve(vs->tree, vs->index_trees, vs->nindexes))
	{
		pfree(vs->index_trees);
		vs->index_trees = NULL;
		return;
	}
	vs->retiring = true;
}

static void
scan_tree(VacState *vs)
{
	TamCursor *c;
	TamTuple *t;

	/* read before the cursor's view: a row id below it that the view lacks is never written */
	if (vs->retiring)
		vs->settled = trt_vids_settled_below(vs->tree);
	c = tam_cursor_open(vs->tree, RelationGetRelid(vs->rel), vs->scan_from, TRT_VID_MAX + 1,
						trt_bulk_read_bytes(trt_tree_bytes(vs->tree, true)));
	tam_cursor_include_stubs(c);
	while ((t = tam_cursor_next(c, ForwardScanDirection)) != NULL)
	{
		TransactionId dead_after;
		bool		heap_only;

		vacuum_delay_point();
		check_gap(vs, t->vid);
		vs->next_vid = t->vid + 1;
		if (t->vid / TRT_ROWS_PER_BLOCK != vs->cur_block || !vs->entered)
		{
			BlockNumber blk = (BlockNumber) (t->vid / TRT_ROWS_PER_BLOCK);
			const int	prog[] = {PROGRESS_VACUUM_HEAP_BLKS_SCANNED, PROGRESS_VACUUM_NUM_DEAD_TUPLES};
			const int64 val[] = {blk, vs->dead->num_items};

			uint64		read_point = tam_cursor_read_point(c);

			/* the view t came from held nothing between the last entry and t */
			close_blocks(vs, blk, vs->stepped ? read_point : 0);
			vs->entered = true;
			/*
			 * pg_stat_progress_vacuum counts the virtual blocks passed
			 * (skipped ones too, as heap's), and the engine blocks read so
			 * far count for the relation -- and for the cost-based delay,
			 * which vacuum_delay_point() applies.
			 */
			pgstat_progress_update_multi_param(2, prog, val);
			trt_io_account(vs->rel);
			/*
			 * As heap: a block the map says is all-visible holds nothing to
			 * remove (any change clears the bit); only freezing needs it,
			 * and only an aggressive VACUUM freezes everything.
			 */
			if (!vs->aggressive && VM_ALL_VISIBLE(vs->rel, blk, &vs->vmbuffer))
			{
				BlockNumber next = blk + 1;

				if (vs->retiring)
				{
					/* its rows are visible to all: the low end stops here */
					vs->retire_below = Min(t->vid, vs->settled);
					vs->retiring = false;
				}

				while (next < vs->hw_blocks && VM_ALL_VISIBLE(vs->rel, next, &vs->vmbuffer))
					next++;
				vs->skipped_blocks += next - blk;
				vs->next_vid = (uint64) next * TRT_ROWS_PER_BLOCK;
				tam_cursor_seek(c, vs->next_vid, ForwardScanDirection);
				vs->stepped = false;
				continue;
			}
			vs->scanned_blocks++;
			vs->cur_judged_at = read_point;
			vs->stepped = true;
		}
		if (vs->retiring && retire(vs, t))
			continue;

		if (TAM_IS_REDIRECT(t))
		{
			if (prune_chain(vs, t->vid) == ROOT_REMOVED)
				vs->cur_all_visible = false;
			vs->cur_judged_at = 0;
			continue;
		}
		if (TAM_IS_STUB(t))
		{
			/* a dead item left by an earlier VACUUM */
			if (vs->nindexes == 0)
				delete_key(vs, t->vid);
			else
			{
				vs->cur_all_visible = false;
				if (vs->do_indexes)
					add_dead(vs, &t->htup.t_self, true);
			}
			continue;
		}

		heap_only = HeapTupleHeaderIsHeapOnly(t->htup.t_data);
		if (!heap_only && HeapTupleHeaderIsHotUpdated(t->htup.t_data))
		{
			RootFate	fate = prune_chain(vs, t->vid);

			/* a redirect's block is judged by its target (tam_vm_mark_block) */
			if (fate == ROOT_REMOVED)
				vs->cur_all_visible = false;
			if (fate != ROOT_KEPT)
			{
				vs->cur_judged_at = 0;
				continue;
			}
		}
		if (!tam_vm_block_visible_to_all(t, vs->OldestXmin))
			vs->cur_all_visible = false;
		switch (tam_satisfies_vacuum(t, vs->OldestXmin, &dead_after))
		{
			case HEAPTUPLE_DEAD:
				if (!heap_only)
				{
					bool		keyed_done;

					if (remove_dead_version(vs, t, &keyed_done))
					{
						ItemPointerData tid;

						trt_vid_to_tid(t->vid, &tid);
						add_dead_for(vs, &tid, true, keyed_done);
					}
					vs->removed += 1;
				}
				else if (!TransactionIdDidCommit(HeapTupleHeaderGetXmin(t->htup.t_data)))
				{
					/*
					 * An aborted heap-only version: nothing can reach it past
					 * its aborted inserter, so it may go on its own.  Others
					 * go with their chain, pruned from the root.
					 */
					delete_key(vs, t->vid);
					vs->removed += 1;
				}
				break;
			case HEAPTUPLE_LIVE:
				vs->live += 1;
				if (freeze_version(vs, t))
					freeze_live(vs, t);
				else
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
	}
	tam_cursor_close(c);
	/* every row id up to the settled mark was dead or never written */
	if (vs->retiring)
		vs->retire_below = Max(vs->retire_below, vs->settled);
	vs->retiring = false;
	check_gap(vs, vs->suspect_below);
	close_blocks(vs, vs->hw_blocks, 0);
	pgstat_progress_update_param(PROGRESS_VACUUM_HEAP_BLKS_SCANNED, vs->hw_blocks);
	trt_io_account(vs->rel);
}

/*
 * Make every index forget the collected TIDs, then remove their dead stubs
 * and offer their blocks to the visibility map (lazy_vacuum_all_indexes and
 * lazy_vacuum_heap_rel).
 */
static void
vacuum_indexes(VacState *vs)
{
	VacDeadItems *d = vs->dead;
	BlockNumber last = InvalidBlockNumber;

	flush_batch(vs);
	if (d->num_items == 0)
		return;
	pgstat_progress_update_param(PROGRESS_VACUUM_PHASE, PROGRESS_VACUUM_PHASE_VACUUM_INDEX);
	for (int i = 0; i < vs->nindexes; i++)
	{
		IndexVacuumInfo ivinfo;
		IndexBulkDeleteResult *stats;

		/* an index that deleted by key has nothing to forget unless told */
		if (vs->keyed[i] != NULL && !vs->dead_in_keyed)
			continue;
		ivinfo.index = vs->indrels[i];
		ivinfo.analyze_only = false;
		ivinfo.report_progress = false;
		ivinfo.estimated_count = true;
		ivinfo.message_level = vs->elevel;
		ivinfo.num_heap_tuples = vs->rel->rd_rel->reltuples;
		ivinfo.strategy = vs->bstrategy;
		stats = vac_bulkdel_one_index(&ivinfo, NULL, d);
		if (stats)
			pfree(stats);
	}
	vs->index_passes++;
	pgstat_progress_update_param(PROGRESS_VACUUM_NUM_INDEX_VACUUMS, vs->index_passes);
	vs->dead_in_keyed = false;

	pgstat_progress_update_param(PROGRESS_VACUUM_PHASE, PROGRESS_VACUUM_PHASE_VACUUM_HEAP);
	for (int i = 0; i < vs->nstubs; i++)
		delete_key(vs, vs->stubs[i]);
	vs->nstubs = 0;
	flush_batch(vs);
	/* the items are in vid order: each closed block once */
	for (int i = 0; i < d->num_items; i++)
	{
		BlockNumber blk = ItemPointerGetBlockNumber(&d->items[i]);

		if (blk == last || blk >= vs->cur_block ||
			(uint64) blk * TRT_ROWS_PER_BLOCK < Max(vs->scan_from, vs->retire_below))
			continue;
		last = blk;
		if (tam_vm_mark_block(vs->rel, vs->tree, blk, vs->OldestXmin, 0))
			vs->all_visible_blocks++;
		pgstat_progress_update_param(PROGRESS_VACUUM_HEAP_BLKS_VACUUMED, ++vs->vacuumed_blocks);
	}
	d->num_items = 0;
	pgstat_progress_update_param(PROGRESS_VACUUM_NUM_DEAD_TUPLES, 0);
	pgstat_progress_update_param(PROGRESS_VACUUM_PHASE, PROGRESS_VACUUM_PHASE_SCAN_HEAP);
}

/*
 * Freezing (and any persisted "committed" hint) is safe only for commits
 * that are durable, in WAL and in the tides log (D5): everything below
 * OldestXmin has ended, so flushing both now covers it.
 */
void
tam_sync_before_freezing(void)
{
	XLogRecPtr	upto = GetXLogInsertRecPtr();

	/*
	 * Just past a page header, nothing was inserted on the page yet, and
	 * XLogFlush would wait for a record that does not exist: everything
	 * inserted ends at the page start.
	 */
	if (upto % XLOG_BLCKSZ == SizeOfXLogShortPHD ||
		(upto % wal_segment_size) == SizeOfXLogLongPHD)
		upto -= upto % XLOG_BLCKSZ;
	XLogFlush(upto);
	trt_sync_everything("sync the log before freezing");
}

/*
 * What a VACUUM did: VERBOSE's INFO (one line, whose wording the regression
 * tests expect), and an autovacuum's LOG once it took at least
 * log_autovacuum_min_duration, as heap's autovacuum reports itself
 * (vacuumlazy.c) -- without it a DBA watching the server log could not tell
 * whether autovacuum visits a tides table at all, nor what it costs: tuples,
 * blocks, the removable cutoff, the new relfrozenxid and relminmxid, the
 * entries VACUUM wrote into the engine (deletions of versions and of index
 * entries, stubs, frozen versions) and the resources it used.
 */
static void
report_vacuum(const VacState *vs, const struct VacuumParams *params, TimestampTz start,
			  const PGRUsage *ru0, bool frozenxid_updated, bool minmulti_updated)
{
	const char *relname = RelationGetRelationName(vs->rel);
	char	   *nspname = get_namespace_name(RelationGetNamespace(vs->rel));
	char	   *dbname = get_database_name(MyDatabaseId);
	StringInfoData buf;
	char	   *tuples = psprintf("tuples: %.0f removed (%.0f retired below row id " UINT64_FORMAT ", %.0f with their entries deleted by key in %d of %d indexes), %.0f remain, %.0f are dead but not yet removable, %.0f frozen",
								  vs->removed, vs->retired, Max(vs->scan_from, vs->retire_below),
								  vs->keyed_removed, vs->nkeyed, vs->nindexes,
								  vs->live, vs->recently_dead, vs->frozen);

	if (params->options & VACOPT_VERBOSE)
		ereport(INFO,
				(errmsg("vacuuming \"%s.%s.%s\"", dbname, nspname, relname),
				 errdetail("%s; %d index passes; blocks: %u scanned, %u skipped as all-visible",
						   tuples, vs->index_passes, vs->scanned_blocks, vs->skipped_blocks)));
	if (!IsAutoVacuumWorkerProcess() || params->log_min_duration < 0 ||
		!TimestampDifferenceExceeds(start, GetCurrentTimestamp(), params->log_min_duration))
		return;
	initStringInfo(&buf);
	appendStringInfo(&buf, "automatic %svacuum %sof table \"%s.%s.%s\": index passes: %d\n",
					 vs->aggressive ? "aggressive " : "",
					 params->is_wraparound ? "to prevent wraparound " : "",
					 dbname, nspname, relname, vs->index_passes);
	appendStringInfo(&buf, "blocks: %u scanned, %u skipped as all-visible, %u all-visible after\n",
					 vs->scanned_blocks, vs->skipped_blocks, vs->all_visible_blocks);
	appendStringInfo(&buf, "%s\n", tuples);
	appendStringInfo(&buf, "removable cutoff: %u, which was %d XIDs old when operation ended\n",
					 vs->OldestXmin, (int32) (ReadNextTransactionId() - vs->OldestXmin));
	if (frozenxid_updated)
		appendStringInfo(&buf, "new relfrozenxid: %u\n", vs->new_frozen_xid);
	if (minmulti_updated)
		appendStringInfo(&buf, "new relminmxid: %u\n", vs->new_min_multi);
	appendStringInfo(&buf, "engine writes: %.0f entries, %.1f kB\n",
					 vs->entries_written, vs->bytes_written / 1024.0);
	appendStringInfo(&buf, "system usage: %s", pg_rusage_show(ru0));
	ereport(LOG, (errmsg_internal("%s", buf.data)));
	pfree(buf.data);
}

void
tam_relation_vacuum(Relation rel, struct VacuumParams *params, BufferAccessStrategy bstrategy)
{
	VacState	vs;
	bool		frozenxid_updated,
				minmulti_updated;
	BlockNumber nblocks;
	int			work_mem_kb;
	TimestampTz start = GetCurrentTimestamp();
	PGRUsage	ru0;

	pg_rusage_init(&ru0);
	if (params->nworkers > 0 && RelationUsesLocalBuffers(rel))
		ereport(WARNING,
				(errmsg("disabling parallel option of vacuum on \"%s\" --- cannot vacuum temporary tables in parallel",
						RelationGetRelationName(rel))));
	memset(&vs, 0, sizeof(vs));
	vs.rel = rel;
	vs.tree = trt_rel_tree(rel);
	vs.bstrategy = bstrategy;
	vs.elevel = (params->options & VACOPT_VERBOSE) ? INFO : DEBUG2;
	vs.aggressive = vacuum_set_xid_limits(rel, params->freeze_min_age, params->freeze_table_age,
										  params->multixact_freeze_min_age,
										  params->multixact_freeze_table_age,
										  &vs.OldestXmin, &vs.OldestMxact,
										  &vs.FreezeLimit, &vs.MultiXactCutoff) ||
		(params->options & VACOPT_DISABLE_PAGE_SKIPPING) != 0;
	vs.vmbuffer = InvalidBuffer;
	vs.new_frozen_xid = vs.OldestXmin;
	vs.new_min_multi = vs.OldestMxact;
	vac_open_indexes(rel, RowExclusiveLock, &vs.nindexes, &vs.indrels);
	vs.do_indexes = vs.nindexes > 0 && params->index_cleanup != VACOPTVALUE_DISABLED;
	vs.keyed = palloc0(Max(vs.nindexes, 1) * sizeof(void *));
	for (int i = 0; vs.do_indexes && i < vs.nindexes; i++)
		if ((vs.keyed[i] = trt_index_keys_begin(vs.indrels[i])) != NULL)
			vs.nkeyed++;

	/* as heap: the dead TIDs an index pass takes at once fill the work memory */
	work_mem_kb = IsAutoVacuumWorkerProcess() && autovacuum_work_mem != -1 ?
		autovacuum_work_mem : maintenance_work_mem;
	vs.max_dead = (int) Min((Size) work_mem_kb * 1024 / sizeof(ItemPointerData),
							(MaxAllocHugeSize - offsetof(VacDeadItems, items)) / sizeof(ItemPointerData));
	vs.max_dead = Min(vs.max_dead, INT_MAX / 2);
	vs.max_dead = Max(vs.max_dead, MaxHeapTuplesPerPage);
	vs.dead = palloc(vac_max_items_to_alloc_size(1024));
	vs.dead->max_items = 1024;
	vs.dead->num_items = 0;

	tam_sync_before_freezing();
	vs.suspect_below = trt_tree_suspect_below(vs.tree);
	if (vs.suspect_below > 0 && vs.nindexes == 0)
	{
		/* no index entry can outlive a lost row */
		trt_tree_clear_suspect(vs.tree);
		vs.suspect_below = 0;
	}
	setup_retiring(&vs);
	vs.cur_block = (BlockNumber) (vs.scan_from / TRT_ROWS_PER_BLOCK);
	vs.next_vid = vs.scan_from;
	vs.cur_all_visible = true;
	vs.stepped = true;			/* the scan starts at the tree's first entry */
	/*
	 * The last block may be partly handed out; its bit can be set like any
	 * other, since a later insert clears it after writing (see vm.c).
	 */
	vs.hw_blocks = (BlockNumber) ((trt_vid_high_water(vs.tree) + TRT_ROWS_PER_BLOCK - 1) /
								  TRT_ROWS_PER_BLOCK);

	pgstat_progress_start_command(PROGRESS_COMMAND_VACUUM, RelationGetRelid(rel));
	{
		/* the virtual blocks of the row id space, as heap reports its pages */
		const int	prog[] = {PROGRESS_VACUUM_PHASE, PROGRESS_VACUUM_TOTAL_HEAP_BLKS,
		PROGRESS_VACUUM_MAX_DEAD_TUPLES};
		const int64 val[] = {PROGRESS_VACUUM_PHASE_SCAN_HEAP, vs.hw_blocks, vs.max_dead};

		pgstat_progress_update_multi_param(3, prog, val);
	}
	scan_tree(&vs);
	vacuum_indexes(&vs);

	if (vs.do_indexes)
	{
		pgstat_progress_update_param(PROGRESS_VACUUM_PHASE, PROGRESS_VACUUM_PHASE_INDEX_CLEANUP);
		for (int i = 0; i < vs.nindexes; i++)
		{
			IndexVacuumInfo ivinfo;
			IndexBulkDeleteResult *stats;

			ivinfo.index = vs.indrels[i];
			ivinfo.analyze_only = false;
			ivinfo.report_progress = false;
			ivinfo.estimated_count = false;
			ivinfo.message_level = vs.elevel;
			ivinfo.num_heap_tuples = vs.live;
			ivinfo.strategy = bstrategy;
			stats = vac_cleanup_one_index(&ivinfo, NULL);
			if (stats != NULL && !stats->estimated_count)
				vac_update_relstats(vs.indrels[i], stats->num_pages, stats->num_index_tuples, 0, false,
									InvalidTransactionId, InvalidMultiXactId, NULL, NULL, false);
			if (stats)
				pfree(stats);
		}
	}
	vac_close_indexes(vs.nindexes, vs.indrels, NoLock);
	if (vs.index_trees != NULL)
	{
		if (vs.retire_below > vs.scan_from)
		{
			TransactionId horizon = vs.OldestXmin;

			/* a hot standby's queries that could still see the versions go first */
			TransactionIdRetreat(horizon);
			trt_wal_set_conflict(horizon, rel->rd_node.dbNode);
			trt_vacant_add(vs.tree, 0, vs.retire_below);
		}
		/* with the mark unchanged, this only hands retired files to compaction */
		trt_set_low_marks(vs.tree, vs.index_trees, vs.nindexes,
						  Max(vs.scan_from, vs.retire_below));
	}
	/* every gap below the mark was shown to the indexes: lift it */
	if (vs.suspect_below > 0 && vs.do_indexes && vs.skipped_blocks == 0)
		trt_tree_clear_suspect(vs.tree);

	/* what VACUUM wrote is durable before relfrozenxid says it is done */
	pgstat_progress_update_param(PROGRESS_VACUUM_PHASE, PROGRESS_VACUUM_PHASE_FINAL_CLEANUP);
	trt_sync_everything("sync what VACUUM wrote");
	if (BufferIsValid(vs.vmbuffer))
		ReleaseBuffer(vs.vmbuffer);
	nblocks = (BlockNumber) ((trt_vid_high_water(vs.tree) + TRT_ROWS_PER_BLOCK - 1) /
							 TRT_ROWS_PER_BLOCK);
	/* skipped blocks: their rows are estimated, and their xids unknown */
	if (vs.skipped_blocks > 0)
	{
		vs.live = vac_estimate_reltuples(rel, nblocks, vs.scanned_blocks, vs.live);
		vs.new_frozen_xid = InvalidTransactionId;
		vs.new_min_multi = InvalidMultiXactId;
	}
	vac_update_relstats(rel, nblocks, vs.live, Min(vs.all_visible_blocks, nblocks), vs.nindexes > 0,
						vs.new_frozen_xid, vs.new_min_multi,
						&frozenxid_updated, &minmulti_updated, false);
	pgstat_report_vacuum(RelationGetRelid(rel), rel->rd_rel->relisshared,
						 vs.live, vs.recently_dead);
	pgstat_progress_end_command();
	report_vacuum(&vs, params, start, &ru0, frozenxid_updated, minmulti_updated);
	pfree(vs.dead);
	if (vs.stubs)
		pfree(vs.stubs);
	if (vs.index_trees)
		pfree(vs.index_trees);
}
