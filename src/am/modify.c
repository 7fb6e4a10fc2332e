/*
 * modify.c -- insert, delete, update and row locking for tides tables.
 *
 * Inserts write a new version under a fresh vid.  Delete, update and lock
 * rewrite the existing version with a new xmax; update also writes the new
 * version (fresh vid, as heap's non-HOT update gets a new TID), in the same
 * engine batch, so both appear atomically.  The newest state of a version is
 * read and its next state written while holding the row's stripe lock (an
 * LWLock chosen by hashing (tree, vid)), which plays the role of heap's
 * buffer content lock: whoever holds it decides alone.  Waiting for other
 * transactions always happens with the stripe lock released, then the
 * decision starts over from a fresh read, as heap's "goto l1/l2/l3" do.
 *
 * The decisions themselves (which results, which waits, which xmax) follow
 * heapam.c's heap_delete, heap_update and heap_lock_tuple.
 */
#include "postgres.h"

#include "access/heaptoast.h"
#include "access/multixact.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/catalog.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "utils/combocid.h"
#include "utils/datum.h"
#include "utils/relcache.h"

#include "am/tam.h"

#include "am/row.h"

static void
check_row_size(Relation rel, HeapTuple tup)
{
	if (tup->t_len > MaxHeapTupleSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("row is too big: size %zu, maximum size %zu",
						(Size) tup->t_len, (Size) MaxHeapTupleSize)));
}


/*
 * Record the deleting command.  meta.cmax is what visibility uses; t_cid gets
 * what heap puts there (a combo id when the inserter is the current
 * transaction), so the cmin/cmax system columns read as they do for heap.
 */
static void
set_cmax(TamTuple *t, CommandId cid)
{
	CommandId	c = cid;
	bool		iscombo;

	HeapTupleHeaderAdjustCmax(t->htup.t_data, &c, &iscombo);
	HeapTupleHeaderSetCmax(t->htup.t_data, c, iscombo);
	t->meta.cmax = cid;
}

/* ------------------------------------------------------------- insert */

/* stamp a tuple as inserted by this command, and toast it if needed */
static HeapTuple
prepare_insert(Relation rel, HeapTuple tup, TransactionId xid, CommandId cid, int options)
{
	tup->t_data->t_infomask &= ~(HEAP_XACT_MASK);
	tup->t_data->t_infomask2 &= ~(HEAP2_XACT_MASK);
	tup->t_data->t_infomask |= HEAP_XMAX_INVALID;
	HeapTupleHeaderSetXmin(tup->t_data, xid);
	if (options & HEAP_INSERT_FROZEN)
		HeapTupleHeaderSetXminFrozen(tup->t_data);
	HeapTupleHeaderSetCmin(tup->t_data, cid);
	HeapTupleHeaderSetXmax(tup->t_data, 0);
	tup->t_tableOid = RelationGetRelid(rel);
	if ((rel->rd_rel->relkind == RELKIND_RELATION || rel->rd_rel->relkind == RELKIND_MATVIEW) &&
		(HeapTupleHasExternal(tup) || tup->t_len > TOAST_TUPLE_THRESHOLD))
		tup = heap_toast_insert_or_update(rel, tup, NULL, options);
	check_row_size(rel, tup);
	return tup;
}

/*
 * May a new row of rel wait with the transaction's deferred entries
 * (src/runtime/xact.c) until its first index entry is written?  Only when
 * nobody can find it before an entry written with it or after it: every
 * index is a tides_btree one.  Not under SSI, for bulk.c's reason.
 */
static bool
row_may_wait(Relation rel)
{
	return !IsolationIsSerializable() && !IsInParallelMode() && trt_rel_only_tides_indexes(rel);
}

static void
insert_one(Relation rel, TupleTableSlot *slot, CommandId cid, int options, uint32 spec_token)
{
	bool		should_free;
	HeapTuple	tup = ExecFetchSlotHeapTuple(slot, true, &should_free);
	TransactionId xid = GetCurrentTransactionId();
	HeapTuple	heaptup;
	uint64		tree = trt_rel_tree(rel);
	uint64		vid;
	TamVersionMeta meta;
	tides_batch *b;
	TamBulk    *bk;

	trt_xact_note_write();
	heaptup = prepare_insert(rel, tup, xid, cid, options);
	/* a speculative insertion is judged at once: never staged (bulk.c) */
	bk = spec_token == 0 ? tam_bulk_get(rel) : NULL;
	vid = bk != NULL ? tam_bulk_vids(bk, rel, 1) : trt_alloc_vids(tree, 1);
	trt_vid_to_tid(vid, &heaptup->t_self);
	if (spec_token != 0)
		HeapTupleHeaderSetSpeculativeToken(heaptup->t_data, spec_token);
	else
		heaptup->t_data->t_ctid = heaptup->t_self;

	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);
	tam_meta_init_insert(&meta);
	if (bk != NULL)
		tam_bulk_add(bk, rel, vid, &meta, heaptup->t_data, heaptup->t_len);
	else
	{
		b = trt_local_batch();
		tam_batch_add_version(b, tree, vid, &meta, heaptup->t_data, heaptup->t_len);
		if (spec_token != 0 || !row_may_wait(rel) || !trt_xact_defer_row(b, tree, vid))
		{
			trt_xact_tag_batch(b);
			trt_write_batch(b);
		}
		/* after the write; a waiting row's before it, as VACUUM sets no bit over it (vm.c) */
		tam_vm_clear(rel, vid);
	}
	pgstat_count_heap_insert(rel, 1);

	if (heaptup != tup)
	{
		tup->t_self = heaptup->t_self;
		heap_freetuple(heaptup);
	}
	slot->tts_tableOid = RelationGetRelid(rel);
	ItemPointerCopy(&tup->t_self, &slot->tts_tid);
	if (should_free)
		pfree(tup);
}

void
tam_tuple_insert(Relation rel, TupleTableSlot *slot, CommandId cid, int options,
				   BulkInsertState bistate)
{
	insert_one(rel, slot, cid, options, 0);
}

void
tam_tuple_insert_speculative(Relation rel, TupleTableSlot *slot, CommandId cid, int options,
							   BulkInsertState bistate, uint32 specToken)
{
	insert_one(rel, slot, cid, options, specToken);
}

void
tam_tuple_complete_speculative(Relation rel, TupleTableSlot *slot, uint32 specToken,
								 bool succeeded)
{
	RowRef		r;
	TamTuple *t;

	tam_row_open(&r, rel, &slot->tts_tid);
	t = tam_row_lock_and_load(&r);
	if (t == NULL || !HeapTupleHeaderIsSpeculative(t->htup.t_data))
	{
		tam_row_close(&r);
		elog(ERROR, "tides: speculatively inserted row (%u,%u) not found",
			 ItemPointerGetBlockNumber(&slot->tts_tid), ItemPointerGetOffsetNumber(&slot->tts_tid));
	}
	if (succeeded)
	{
		t->htup.t_data->t_ctid = t->htup.t_self;
		tam_row_write(&r, t, 0, NULL, NULL);
		tam_row_close(&r);
		tam_vm_clear(rel, r.vid);
		return;
	}

	/*
	 * The insertion lost: the version vanishes for everybody.  Its index
	 * entries exist, so it leaves a dead stub for VACUUM to collect (heap
	 * makes the tuple dead; an index-only scan must not trust the block).
	 */
	{
		tides_batch *b = trt_local_batch();
		HeapTuple	copy = HeapTupleHasExternal(&t->htup) ? tam_tuple_copy_heap(t) : NULL;

		tam_batch_add_stub(b, r.tree, r.vid, TAM_VF_DEAD, 0, 0);
		trt_xact_tag_batch(b);
		trt_write_batch(b);
		tam_row_close(&r);
		tam_vm_clear(rel, r.vid);
		if (copy != NULL)
		{
			heap_toast_delete(rel, copy, true);
			heap_freetuple(copy);
		}
	}
}

/* multi_insert of a load that may become table files (bulk.c): rows go to its stage */
static void
bulk_multi_insert(TamBulk *bk, Relation rel, TupleTableSlot **slots, int nslots, CommandId cid,
				  int options)
{
	TransactionId xid = GetCurrentTransactionId();
	uint64		vid = tam_bulk_vids(bk, rel, nslots);
	TamVersionMeta meta;

	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);
	tam_meta_init_insert(&meta);
	for (int i = 0; i < nslots; i++)
	{
		bool		should_free;
		HeapTuple	tup = ExecFetchSlotHeapTuple(slots[i], true, &should_free);
		HeapTuple	heaptup = prepare_insert(rel, tup, xid, cid, options);

		trt_vid_to_tid(vid + i, &heaptup->t_self);
		heaptup->t_data->t_ctid = heaptup->t_self;
		tam_bulk_add(bk, rel, vid + i, &meta, heaptup->t_data, heaptup->t_len);
		slots[i]->tts_tableOid = RelationGetRelid(rel);
		slots[i]->tts_tid = heaptup->t_self;
		if (heaptup != tup)
			heap_freetuple(heaptup);
		if (should_free)
			pfree(tup);
	}
	pgstat_count_heap_insert(rel, nslots);
}

void
tam_multi_insert(Relation rel, TupleTableSlot **slots, int nslots, CommandId cid, int options,
				   BulkInsertState bistate)
{
	TransactionId xid = GetCurrentTransactionId();
	uint64		tree = trt_rel_tree(rel);
	uint64		vid;
	TamVersionMeta meta;
	tides_batch *b;
	size_t		batch_limit = trt_batch_limit();
	TamBulk    *bk;

	if (nslots <= 0)
		return;
	trt_xact_note_write();
	if ((bk = tam_bulk_get(rel)) != NULL)
	{
		bulk_multi_insert(bk, rel, slots, nslots, cid, options);
		return;
	}
	vid = trt_alloc_vids(tree, nslots);
	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);
	tam_meta_init_insert(&meta);
	b = trt_local_batch();
	trt_xact_tag_batch(b);
	for (int i = 0; i < nslots; i++)
	{
		bool		should_free;
		HeapTuple	tup = ExecFetchSlotHeapTuple(slots[i], true, &should_free);
		HeapTuple	heaptup = prepare_insert(rel, tup, xid, cid, options);

		trt_vid_to_tid(vid + i, &heaptup->t_self);
		heaptup->t_data->t_ctid = heaptup->t_self;
		tam_batch_add_version(b, tree, vid + i, &meta, heaptup->t_data, heaptup->t_len);
		slots[i]->tts_tableOid = RelationGetRelid(rel);
		slots[i]->tts_tid = heaptup->t_self;
		if (heaptup != tup)
			heap_freetuple(heaptup);
		if (should_free)
			pfree(tup);
		if (tides_batch_bytes(b) >= batch_limit)
		{
			trt_write_batch(b);
			b = trt_local_batch();
			trt_xact_tag_batch(b);
		}
	}
	if (tides_batch_count(b) > 0)
		trt_write_batch(b);
	tam_vm_clear_range(rel, vid, nslots);
	pgstat_count_heap_insert(rel, nslots);
}

/* ------------------------------------------------- delete and update */

/*
 * Bring the row to a state where the current transaction may delete or
 * update it with the given strength: wait for conflicting lockers and
 * updaters (unless told not to), and report why not if it cannot.  On TM_Ok
 * returns with the stripe lock held; *checked_lockers / *locker_remains say
 * whether a surviving locker must be kept in xmax (update only).
 */
static TM_Result
prepare_change(RowRef *r, CommandId cid, LockTupleMode mode, bool key_intact, Snapshot crosscheck,
			   bool wait, TM_FailureData *tmfd, XLTW_Oper oper, bool *have_tuple_lock,
			   bool *checked_lockers, bool *locker_remains)
{
	TM_Result	result;
	TamTuple *t;

	*checked_lockers = false;
	*locker_remains = false;
	for (;;)
	{
		TransactionId xwait;
		uint16		infomask;
		bool		can_continue = false;

		t = tam_row_lock_and_load(r);
		if (t == NULL)
		{
			/* removed as dead to everybody (or a failed speculative insert) */
			tam_row_unlock(r);
			ItemPointerCopy(&r->tid, &tmfd->ctid);
			tmfd->xmax = InvalidTransactionId;
			tmfd->cmax = InvalidCommandId;
			return TM_Deleted;
		}
		result = tam_satisfies_update(t, cid);
		if (result == TM_Invisible)
		{
			tam_row_unlock(r);
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("attempted to %s invisible tuple", oper == XLTW_Delete ? "delete" : "update")));
		}
		if (result != TM_BeingModified || !wait)
			break;

		xwait = HeapTupleHeaderGetRawXmax(t->htup.t_data);
		infomask = t->htup.t_data->t_infomask;
		if (infomask & HEAP_XMAX_IS_MULTI)
		{
			bool		current_is_member = false;
			TransactionId update_xact;

			if (tam_xmax_conflicts(t, mode, &current_is_member))
			{
				int			remain = 0;

				tam_row_unlock(r);
				if (!current_is_member)
					tam_acquire_tuplock(r->rel, &r->tid, mode, LockWaitBlock, have_tuple_lock);
				tam_wait_for_xmax(r->rel, t, mode, LockWaitBlock, oper, &remain);
				*checked_lockers = true;
				*locker_remains = remain != 0;
				t = tam_row_lock_and_load(r);
				if (tam_xmax_changed(t, xwait, infomask))
				{
					tam_row_unlock(r);
					continue;
				}
			}
			update_xact = HEAP_XMAX_IS_LOCKED_ONLY(t->htup.t_data->t_infomask) ?
				InvalidTransactionId : HeapTupleGetUpdateXid(t->htup.t_data);
			if (!TransactionIdIsValid(update_xact) || TransactionIdDidAbort(update_xact))
				can_continue = true;
		}
		else if (TransactionIdIsCurrentTransactionId(xwait))
		{
			/* our own lock */
			*checked_lockers = true;
			*locker_remains = true;
			can_continue = true;
		}
		else if (HEAP_XMAX_IS_KEYSHR_LOCKED(infomask) && key_intact)
		{
			/* a key-share lock does not stop a non-key update */
			*checked_lockers = true;
			*locker_remains = true;
			can_continue = true;
		}
		else
		{
			tam_row_unlock(r);
			tam_acquire_tuplock(r->rel, &r->tid, mode, LockWaitBlock, have_tuple_lock);
			XactLockTableWait(xwait, r->rel, &r->tid, oper);
			*checked_lockers = true;
			t = tam_row_lock_and_load(r);
			if (tam_xmax_changed(t, xwait, infomask))
			{
				tam_row_unlock(r);
				continue;
			}
			tam_update_xmax_hints(t, xwait);
			if (t->htup.t_data->t_infomask & HEAP_XMAX_INVALID)
				can_continue = true;
		}
		if (can_continue)
			result = TM_Ok;
		else if (!ItemPointerEquals(&t->htup.t_self, &t->htup.t_data->t_ctid))
			result = TM_Updated;
		else
			result = TM_Deleted;
		break;
	}

	if (result == TM_Ok && crosscheck != InvalidSnapshot && !tam_visible(t, crosscheck))
		result = TM_Updated;
	if (result != TM_Ok)
	{
		tam_fill_failure(tmfd, t, result);
		tam_row_unlock(r);
	}
	return result;
}

TM_Result
tam_tuple_delete(Relation rel, ItemPointer tid, CommandId cid, Snapshot snapshot,
				   Snapshot crosscheck, bool wait, TM_FailureData *tmfd, bool changingPart)
{
	RowRef		r;
	TM_Result	result;
	bool		have_tuple_lock = false;
	bool		checked,
				remains;
	TamTuple *t;
	uint64		root_vid;
	TransactionId xid = GetCurrentTransactionId();
	TransactionId new_xmax;
	uint16		new_infomask,
				new_infomask2;
	HeapTuple	toast_copy = NULL;

	if (IsInParallelMode())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TRANSACTION_STATE),
				 errmsg("cannot delete tuples during a parallel operation")));
	trt_xact_note_write();
	tam_row_open(&r, rel, tid);
	result = prepare_change(&r, cid, LockTupleExclusive, false, crosscheck, wait, tmfd,
							XLTW_Delete, &have_tuple_lock, &checked, &remains);
	if (result != TM_Ok)
	{
		tam_release_tuplock(rel, tid, LockTupleExclusive, &have_tuple_lock);
		tam_row_close(&r);
		return result;
	}
	t = r.t;
	CheckForSerializableConflictIn(rel, tid, ItemPointerGetBlockNumber(tid));
	MultiXactIdSetOldestMember();
	tam_compute_new_xmax(HeapTupleHeaderGetRawXmax(t->htup.t_data), t->htup.t_data->t_infomask,
						   t->htup.t_data->t_infomask2, xid, LockTupleExclusive, true,
						   &new_xmax, &new_infomask, &new_infomask2);
	t->htup.t_data->t_infomask &= ~(HEAP_XMAX_BITS | HEAP_MOVED);
	t->htup.t_data->t_infomask2 &= ~HEAP_KEYS_UPDATED;
	t->htup.t_data->t_infomask |= new_infomask;
	t->htup.t_data->t_infomask2 |= new_infomask2;
	/*
	 * An update that aborted left HEAP_HOT_UPDATED set; with our xmax in
	 * place of its aborted one, the version would read as HOT-updated by us,
	 * its t_ctid (itself, below) as the next member: a chain walk would
	 * loop on it.  heap_delete clears the bit the same way.
	 */
	HeapTupleHeaderClearHotUpdated(t->htup.t_data);
	HeapTupleHeaderSetXmax(t->htup.t_data, new_xmax);
	set_cmax(t, cid);
	tam_meta_set_xmax_writer(&t->meta, true);
	t->htup.t_data->t_ctid = t->htup.t_self;
	if (changingPart)
		HeapTupleHeaderSetMovedPartitions(t->htup.t_data);
	if (HeapTupleHasExternal(&t->htup) &&
		(rel->rd_rel->relkind == RELKIND_RELATION || rel->rd_rel->relkind == RELKIND_MATVIEW))
		toast_copy = tam_tuple_copy_heap(t);
	root_vid = tam_root_vid(t);
	tam_row_write(&r, t, 0, NULL, NULL);
	tam_row_close(&r);
	tam_vm_clear_chain(rel, r.vid, root_vid);
	tam_release_tuplock(rel, tid, LockTupleExclusive, &have_tuple_lock);
	if (toast_copy != NULL)
	{
		heap_toast_delete(rel, toast_copy, false);
		heap_freetuple(toast_copy);
	}
	pgstat_count_heap_delete(rel);
	return TM_Ok;
}

/* did the update change a column that a unique index usable by a foreign key covers? */
static bool
key_columns_changed(Relation rel, Bitmapset *keys, HeapTuple oldtup, HeapTuple newtup)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			x = -1;
	bool		changed = false;

	while (!changed && (x = bms_next_member(keys, x)) >= 0)
	{
		AttrNumber attno = x + FirstLowInvalidHeapAttributeNumber;
		bool		isnull1,
					isnull2;
		Datum		v1,
					v2;
		Form_pg_attribute att;

		if (attno <= 0)
		{
			changed = attno == 0;	/* a whole-row reference */
			continue;
		}
		att = TupleDescAttr(desc, attno - 1);
		v1 = heap_getattr(oldtup, attno, desc, &isnull1);
		v2 = heap_getattr(newtup, attno, desc, &isnull2);
		if (isnull1 != isnull2)
			changed = true;
		else if (!isnull1 && !datumIsEqual(v1, v2, att->attbyval, att->attlen))
			changed = true;
	}
	return changed;
}

/* the xmax an update leaves on the old version and starts the new one with */
typedef struct UpdateXmax
{
	TransactionId old_xmax;		/* us, next to the lockers it keeps */
	uint16		old_infomask;
	uint16		old_infomask2;
	TransactionId new_xmax;		/* key-share lockers still there, or invalid */
	uint16		new_infomask;
	uint16		new_infomask2;
} UpdateXmax;

static void
update_xmaxes(TamTuple *t, TransactionId xid, LockTupleMode mode, bool checked_lockers,
			  bool locker_remains, UpdateXmax *x)
{
	HeapTupleHeader h = t->htup.t_data;

	/* the old version keeps its lockers next to us */
	tam_compute_new_xmax(HeapTupleHeaderGetRawXmax(h), h->t_infomask, h->t_infomask2, xid, mode,
						 true, &x->old_xmax, &x->old_infomask, &x->old_infomask2);
	/* and the new version inherits key-share lockers that are still there */
	if ((h->t_infomask & HEAP_XMAX_INVALID) || HEAP_LOCKED_UPGRADED(h->t_infomask) ||
		(checked_lockers && !locker_remains))
		x->new_xmax = InvalidTransactionId;
	else
		x->new_xmax = HeapTupleHeaderGetRawXmax(h);
	if (!TransactionIdIsValid(x->new_xmax))
	{
		x->new_infomask = HEAP_XMAX_INVALID;
		x->new_infomask2 = 0;
	}
	else
		tam_inherited_xmax_bits(x->new_xmax, h->t_infomask, &x->new_infomask, &x->new_infomask2);
}

/*
 * Build the new version of an update from newtup: header bits, toasting,
 * a new vid, and its meta (a HOT update also marks the old version t, held
 * in r, HOT-updated).  Returns the tuple to store (newtup, or a toasted
 * copy).
 */
static HeapTuple
build_new_version(Relation rel, RowRef *r, HeapTuple newtup, CommandId cid, TransactionId xid,
				  const UpdateXmax *x, bool hot, HeapTuple oldcopy, uint64 *new_vid,
				  TamVersionMeta *newmeta)
{
	TamTuple   *t = r->t;
	HeapTuple	heaptup;

	Assert(r->locked);
	newtup->t_data->t_infomask &= ~(HEAP_XACT_MASK);
	newtup->t_data->t_infomask2 &= ~(HEAP2_XACT_MASK);
	HeapTupleHeaderSetXmin(newtup->t_data, xid);
	HeapTupleHeaderSetCmin(newtup->t_data, cid);
	newtup->t_data->t_infomask |= HEAP_UPDATED | x->new_infomask;
	newtup->t_data->t_infomask2 |= x->new_infomask2;
	HeapTupleHeaderSetXmax(newtup->t_data, x->new_xmax);
	newtup->t_tableOid = RelationGetRelid(rel);
	if ((rel->rd_rel->relkind == RELKIND_RELATION || rel->rd_rel->relkind == RELKIND_MATVIEW) &&
		(HeapTupleHasExternal(oldcopy) || HeapTupleHasExternal(newtup) ||
		 newtup->t_len > TOAST_TUPLE_THRESHOLD))
	{
		/* toasting may wait on nothing of ours, but keep the stripe short anyway */
		heaptup = heap_toast_insert_or_update(rel, newtup, oldcopy, 0);
	}
	else
		heaptup = newtup;
	check_row_size(rel, heaptup);
	*new_vid = trt_alloc_vids(r->tree, 1);
	trt_vid_to_tid(*new_vid, &heaptup->t_self);
	heaptup->t_data->t_ctid = heaptup->t_self;
	tam_meta_init_insert(newmeta);
	if (hot)
	{
		/* the new version joins the old one's chain: no index entries */
		HeapTupleHeaderSetHotUpdated(t->htup.t_data);
		HeapTupleHeaderSetHeapOnly(heaptup->t_data);
		newmeta->link = tam_root_vid(t);
		newmeta->hot_depth = t->meta.hot_depth + 1;
	}
	else
		HeapTupleHeaderClearHotUpdated(t->htup.t_data);
	if (TransactionIdIsValid(x->new_xmax))
	{
		/* the inherited lockers were written by other transactions */
		newmeta->xmax_inc = t->meta.xmax_inc;
		newmeta->xmax_top = t->meta.xmax_top;
	}
	return heaptup;
}

/* the old version of an update: deleted by us, pointing at the new one */
static void
mark_old_version(TamTuple *t, CommandId cid, const UpdateXmax *x, ItemPointer new_tid)
{
	t->htup.t_data->t_infomask &= ~(HEAP_XMAX_BITS | HEAP_MOVED);
	t->htup.t_data->t_infomask2 &= ~HEAP_KEYS_UPDATED;
	t->htup.t_data->t_infomask |= x->old_infomask;
	t->htup.t_data->t_infomask2 |= x->old_infomask2;
	HeapTupleHeaderSetXmax(t->htup.t_data, x->old_xmax);
	set_cmax(t, cid);
	tam_meta_set_xmax_writer(&t->meta, true);
	t->htup.t_data->t_ctid = *new_tid;
}

TM_Result
tam_tuple_update(Relation rel, ItemPointer otid, TupleTableSlot *slot, CommandId cid,
				   Snapshot snapshot, Snapshot crosscheck, bool wait, TM_FailureData *tmfd,
				   LockTupleMode *lockmode, bool *update_indexes)
{
	RowRef		r;
	TM_Result	result;
	bool		have_tuple_lock = false;
	bool		checked_lockers,
				locker_remains;
	TamTuple   *t;
	TransactionId xid = GetCurrentTransactionId();
	bool		should_free;
	HeapTuple	newtup = ExecFetchSlotHeapTuple(slot, true, &should_free);
	HeapTuple	heaptup;
	HeapTuple	oldcopy;
	bool		key_intact;
	UpdateXmax	x;
	uint64		new_vid;
	TamVersionMeta newmeta;
	bool		hot;
	uint64		root_vid;
	Bitmapset  *key_attrs;
	Bitmapset  *hot_attrs;

	if (IsInParallelMode())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TRANSACTION_STATE),
				 errmsg("cannot update tuples during a parallel operation")));
	trt_xact_note_write();
	/* the relcache's index column sets, read before any stripe lock is held */
	key_attrs = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_KEY);
	hot_attrs = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_ALL);
	tam_row_open(&r, rel, otid);

	/* the lock strength depends on whether key columns change */
	t = tam_row_lock_and_load(&r);
	if (t == NULL)
	{
		tam_row_close(&r);
		ItemPointerCopy(otid, &tmfd->ctid);
		tmfd->xmax = InvalidTransactionId;
		tmfd->cmax = InvalidCommandId;
		bms_free(key_attrs);
		bms_free(hot_attrs);
		return TM_Deleted;
	}
	key_intact = !key_columns_changed(rel, key_attrs, &t->htup, newtup);
	tam_row_unlock(&r);
	*lockmode = key_intact ? LockTupleNoKeyExclusive : LockTupleExclusive;

	result = prepare_change(&r, cid, *lockmode, key_intact, crosscheck, wait, tmfd, XLTW_Update,
							&have_tuple_lock, &checked_lockers, &locker_remains);
	if (result != TM_Ok)
	{
		tam_release_tuplock(rel, otid, *lockmode, &have_tuple_lock);
		tam_row_close(&r);
		if (should_free)
			heap_freetuple(newtup);
		*update_indexes = false;
		bms_free(key_attrs);
		bms_free(hot_attrs);
		return result;
	}
	t = r.t;
	CheckForSerializableConflictIn(rel, otid, ItemPointerGetBlockNumber(otid));
	MultiXactIdSetOldestMember();
	hot = tam_hot_update_allowed(rel, hot_attrs, t, newtup);

	update_xmaxes(t, xid, *lockmode, checked_lockers, locker_remains, &x);
	oldcopy = tam_tuple_copy_heap(t);
	heaptup = build_new_version(rel, &r, newtup, cid, xid, &x, hot, oldcopy, &new_vid, &newmeta);
	mark_old_version(t, cid, &x, &heaptup->t_self);

	root_vid = tam_root_vid(t);
	tam_row_write(&r, t, new_vid, heaptup, &newmeta);
	tam_row_close(&r);
	/* the root's bit covers the whole chain, the new version included */
	tam_vm_clear_chain(rel, r.vid, root_vid);
	tam_vm_clear(rel, new_vid);
	tam_release_tuplock(rel, otid, *lockmode, &have_tuple_lock);
	pgstat_count_heap_update(rel, hot);

	slot->tts_tableOid = RelationGetRelid(rel);
	slot->tts_tid = heaptup->t_self;
	newtup->t_self = heaptup->t_self;
	if (heaptup != newtup)
		heap_freetuple(heaptup);
	heap_freetuple(oldcopy);
	if (should_free)
		heap_freetuple(newtup);
	*update_indexes = !hot;
	bms_free(key_attrs);
	bms_free(hot_attrs);
	return TM_Ok;
}
