/*
 * tuple_lock.c -- table_tuple_lock: SELECT ... FOR UPDATE / NO KEY UPDATE / SHARE /
 * KEY SHARE, foreign-key checks, and the version-chain walk EvalPlanQual
 * needs (TUPLE_LOCK_FLAG_FIND_LAST_VERSION).
 *
 * The cases are heap_lock_tuple's and heapam_tuple_lock's: a lock we already
 * hold strongly enough is a no-op; KEY SHARE coexists with non-key updates
 * (and then also locks every newer version of the chain, so the foreign key
 * stays protected while the update is in progress); SHARE coexists with
 * other shared lockers; NO KEY UPDATE coexists with KEY SHARE; everything
 * else waits according to the wait policy (block, SKIP LOCKED, NOWAIT).
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/xact.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/procarray.h"
#include "utils/snapmgr.h"

#include "am/row.h"

/* does the current transaction already hold a lock at least this strong? */
static bool
already_locked(TransactionId xwait, uint16 infomask, uint16 infomask2, LockTupleMode mode,
			   bool *skip_tuple_lock)
{
	if (infomask & HEAP_XMAX_IS_MULTI)
	{
		MultiXactMember *members;
		int			n = GetMultiXactIdMembers(xwait, &members, false, HEAP_XMAX_IS_LOCKED_ONLY(infomask));
		bool		held = false;

		for (int i = 0; i < n; i++)
		{
			if (!TransactionIdIsCurrentTransactionId(members[i].xid))
				continue;
			if (tam_mode_of_status(members[i].status) >= mode)
				held = true;
			else
				*skip_tuple_lock = true;	/* we hold a weaker one: don't queue behind others */
		}
		if (n > 0)
			pfree(members);
		return held;
	}
	if (!TransactionIdIsCurrentTransactionId(xwait))
		return false;
	switch (mode)
	{
		case LockTupleKeyShare:
			return true;
		case LockTupleShare:
			return HEAP_XMAX_IS_SHR_LOCKED(infomask) || HEAP_XMAX_IS_EXCL_LOCKED(infomask);
		case LockTupleNoKeyExclusive:
			return HEAP_XMAX_IS_EXCL_LOCKED(infomask);
		case LockTupleExclusive:
			return HEAP_XMAX_IS_EXCL_LOCKED(infomask) && (infomask2 & HEAP_KEYS_UPDATED);
	}
	return false;
}

/*
 * One holder of a newer version in an update chain we are locking: may we
 * proceed, must we wait, or is the chain cut by a conflicting committed
 * update?
 */
static TM_Result
holder_conflict(TransactionId xid, MultiXactStatus status, LockTupleMode mode, TamTuple *t,
				bool *needwait)
{
	bool		conflict = DoLockModesConflict(tam_hwlock_of_mode(tam_mode_of_status(status)), tam_hwlock_of_mode(mode));

	*needwait = false;
	if (TransactionIdIsCurrentTransactionId(xid))
		return TM_SelfModified;	/* we locked or updated this one already */
	if (TransactionIdIsInProgress(xid))
	{
		*needwait = conflict;
		return TM_Ok;
	}
	if (TransactionIdDidAbort(xid))
		return TM_Ok;
	if (TransactionIdDidCommit(xid) && ISUPDATE_from_mxstatus(status) && conflict)
		return ItemPointerEquals(&t->htup.t_self, &t->htup.t_data->t_ctid) ? TM_Deleted : TM_Updated;
	return TM_Ok;				/* committed locker, or crashed */
}

/* set xmax for a lock taken by the current transaction and write it */
static void
apply_lock(RowRef *r, TamTuple *t, LockTupleMode mode)
{
	TransactionId new_xmax;
	uint16		im,
				im2;

	MultiXactIdSetOldestMember();
	tam_compute_new_xmax(HeapTupleHeaderGetRawXmax(t->htup.t_data), t->htup.t_data->t_infomask,
						   t->htup.t_data->t_infomask2, GetCurrentTransactionId(), mode, false,
						   &new_xmax, &im, &im2);
	t->htup.t_data->t_infomask &= ~HEAP_XMAX_BITS;
	t->htup.t_data->t_infomask2 &= ~HEAP_KEYS_UPDATED;
	t->htup.t_data->t_infomask |= im;
	t->htup.t_data->t_infomask2 |= im2;
	HeapTupleHeaderSetXmax(t->htup.t_data, new_xmax);
	if (HEAP_XMAX_IS_LOCKED_ONLY(im))
		t->htup.t_data->t_ctid = t->htup.t_self;
	tam_meta_set_xmax_writer(&t->meta, false);
	tam_row_write(r, t, 0, NULL, NULL);
	tam_vm_clear_chain(r->rel, r->vid, tam_root_vid(t));
}

/*
 * Lock every newer version of an update chain starting at ctid (whose
 * inserter should be prior_xmax) with `mode`, waiting for conflicting
 * holders that are still running.
 */
static TM_Result
lock_update_chain(Relation rel, TransactionId prior_xmax, ItemPointerData ctid, LockTupleMode mode)
{
	for (;;)
	{
		RowRef		r;
		TamTuple *t;
		TM_Result	res = TM_Ok;
		TransactionId wait_for = InvalidTransactionId;
		bool		self = false;

		CHECK_FOR_INTERRUPTS();
		/* a row moved to another partition continues nowhere we can lock */
		if (ItemPointerIndicatesMovedPartitions(&ctid))
			return TM_Ok;
		tam_row_open(&r, rel, &ctid);
		t = tam_row_lock_and_load(&r);
		if (t == NULL ||
			(TransactionIdIsValid(prior_xmax) &&
			 !TransactionIdEquals(HeapTupleHeaderGetXmin(t->htup.t_data), prior_xmax)) ||
			TransactionIdDidAbort(HeapTupleHeaderGetXmin(t->htup.t_data)))
		{
			tam_row_close(&r);
			return TM_Ok;		/* the chain ends (or was never continued) */
		}
		if (!(t->htup.t_data->t_infomask & HEAP_XMAX_INVALID))
		{
			TransactionId rawxmax = HeapTupleHeaderGetRawXmax(t->htup.t_data);
			bool		needwait;

			if (t->htup.t_data->t_infomask & HEAP_XMAX_IS_MULTI)
			{
				MultiXactMember *members;
				int			n = GetMultiXactIdMembers(rawxmax, &members, false,
													  HEAP_XMAX_IS_LOCKED_ONLY(t->htup.t_data->t_infomask));

				for (int i = 0; i < n && res == TM_Ok && !self; i++)
				{
					res = holder_conflict(members[i].xid, members[i].status, mode, t, &needwait);
					if (res == TM_SelfModified)
					{
						self = true;
						res = TM_Ok;
					}
					else if (needwait)
					{
						wait_for = members[i].xid;
						break;
					}
				}
				if (n > 0)
					pfree(members);
			}
			else
			{
				res = holder_conflict(rawxmax, tam_status_of_plain_xmax(t->htup.t_data->t_infomask,
															   t->htup.t_data->t_infomask2),
									  mode, t, &needwait);
				if (res == TM_SelfModified)
				{
					self = true;
					res = TM_Ok;
				}
				else if (needwait)
					wait_for = rawxmax;
			}
		}
		if (TransactionIdIsValid(wait_for))
		{
			tam_row_close(&r);
			XactLockTableWait(wait_for, rel, &ctid, XLTW_LockUpdated);
			continue;			/* look at the same version again */
		}
		if (res != TM_Ok)
		{
			tam_row_close(&r);
			return res;
		}
		if (!self)
			apply_lock(&r, t, mode);

		/* on to the next version, if this one was updated */
		if ((t->htup.t_data->t_infomask & HEAP_XMAX_INVALID) ||
			HEAP_XMAX_IS_LOCKED_ONLY(t->htup.t_data->t_infomask) ||
			ItemPointerEquals(&t->htup.t_self, &t->htup.t_data->t_ctid) ||
			HeapTupleHeaderIsOnlyLocked(t->htup.t_data))
		{
			tam_row_close(&r);
			return TM_Ok;
		}
		prior_xmax = HeapTupleHeaderGetUpdateXid(t->htup.t_data);
		ctid = t->htup.t_data->t_ctid;
		tam_row_close(&r);
	}
}

static TM_Result
lock_chain_from(Relation rel, TransactionId xwait, uint16 infomask, ItemPointerData ctid,
				LockTupleMode mode)
{
	TransactionId updater;

	MultiXactIdSetOldestMember();
	if (infomask & HEAP_XMAX_IS_MULTI)
	{
		MultiXactMember *members;
		int			n = GetMultiXactIdMembers(xwait, &members, false, false);

		updater = InvalidTransactionId;
		for (int i = 0; i < n; i++)
			if (ISUPDATE_from_mxstatus(members[i].status))
				updater = members[i].xid;
		if (n > 0)
			pfree(members);
	}
	else
		updater = xwait;
	return lock_update_chain(rel, updater, ctid, mode);
}

/* wait for the holders of xmax per the policy; false: would block */
static bool
wait_per_policy(Relation rel, TamTuple *t, LockTupleMode mode, LockWaitPolicy policy)
{
	if (tam_wait_for_xmax(rel, t, mode, policy, XLTW_Lock, NULL))
		return true;
	if (policy == LockWaitError)
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("could not obtain lock on row in relation \"%s\"",
						RelationGetRelationName(rel))));
	return false;
}

/*
 * Lock one version.  On return *locked holds a palloc'd copy of the version
 * as it was decided on (NULL if it no longer exists).
 */
static TM_Result
lock_version(Relation rel, ItemPointer tid, CommandId cid, LockTupleMode mode,
			 LockWaitPolicy policy, bool follow_updates, TM_FailureData *tmfd, HeapTuple *locked)
{
	RowRef		r;
	TamTuple *t;
	TM_Result	result;
	bool		have_tuple_lock = false;
	bool		first_time = true;
	bool		skip_tuple_lock = false;

	*locked = NULL;
	tam_row_open(&r, rel, tid);
	for (;;)
	{
		TransactionId xwait;
		uint16		infomask,
					infomask2;
		ItemPointerData t_ctid;
		bool		require_sleep = true;
		bool		nokey_compatible;

		t = tam_row_lock_and_load(&r);
		if (t == NULL)
		{
			tam_row_close(&r);
			tam_release_tuplock(rel, tid, mode, &have_tuple_lock);
			ItemPointerCopy(tid, &tmfd->ctid);
			tmfd->xmax = InvalidTransactionId;
			tmfd->cmax = InvalidCommandId;
			return TM_Deleted;
		}
		result = tam_satisfies_update(t, cid);
		if (result == TM_Invisible)
			break;
		if (result != TM_BeingModified && result != TM_Updated && result != TM_Deleted)
			break;

		xwait = HeapTupleHeaderGetRawXmax(t->htup.t_data);
		infomask = t->htup.t_data->t_infomask;
		infomask2 = t->htup.t_data->t_infomask2;
		t_ctid = t->htup.t_data->t_ctid;
		/* NO KEY UPDATE coexists with key-share lockers */
		nokey_compatible = false;
		if (mode == LockTupleNoKeyExclusive)
		{
			bool		member;

			nokey_compatible = (infomask & HEAP_XMAX_IS_MULTI) ?
				!tam_xmax_conflicts(t, mode, &member) : HEAP_XMAX_IS_KEYSHR_LOCKED(infomask);
		}
		tam_row_unlock(&r);

		if (first_time)
		{
			first_time = false;
			if (already_locked(xwait, infomask, infomask2, mode, &skip_tuple_lock))
			{
				/* nothing to change; hand back the version as it is */
				t = tam_row_lock_and_load(&r);
				result = TM_Ok;
				if (t != NULL)
					*locked = tam_tuple_copy_heap(t);
				tam_row_close(&r);
				tam_release_tuplock(rel, tid, mode, &have_tuple_lock);
				return result;
			}
		}

		if (mode == LockTupleKeyShare && !(infomask2 & HEAP_KEYS_UPDATED))
		{
			bool		updated = !HEAP_XMAX_IS_LOCKED_ONLY(infomask);

			if (follow_updates && updated && !ItemPointerEquals(tid, &t_ctid))
			{
				TM_Result	res = lock_chain_from(rel, xwait, infomask, t_ctid, mode);

				if (res != TM_Ok)
				{
					result = res;
					t = tam_row_lock_and_load(&r);
					if (t == NULL)
						continue;
					goto failed;
				}
			}
			t = tam_row_lock_and_load(&r);
			if (t == NULL)
				continue;
			if (!HeapTupleHeaderIsOnlyLocked(t->htup.t_data) &&
				((t->htup.t_data->t_infomask2 & HEAP_KEYS_UPDATED) || !updated))
			{
				tam_row_unlock(&r);
				continue;
			}
			require_sleep = false;
		}
		else if (mode == LockTupleShare && HEAP_XMAX_IS_LOCKED_ONLY(infomask) &&
				 !HEAP_XMAX_IS_EXCL_LOCKED(infomask))
		{
			t = tam_row_lock_and_load(&r);
			if (t == NULL)
				continue;
			if (!HEAP_XMAX_IS_LOCKED_ONLY(t->htup.t_data->t_infomask) ||
				HEAP_XMAX_IS_EXCL_LOCKED(t->htup.t_data->t_infomask))
			{
				tam_row_unlock(&r);
				continue;
			}
			require_sleep = false;
		}
		else if (mode == LockTupleNoKeyExclusive && nokey_compatible)
		{
			t = tam_row_lock_and_load(&r);
			if (tam_xmax_changed(t, xwait, infomask))
			{
				tam_row_unlock(&r);
				continue;
			}
			require_sleep = false;
		}

		if (require_sleep && !(infomask & HEAP_XMAX_IS_MULTI) &&
			TransactionIdIsCurrentTransactionId(xwait))
		{
			/* our own weaker lock: upgrade it in place */
			t = tam_row_lock_and_load(&r);
			if (tam_xmax_changed(t, xwait, infomask))
			{
				tam_row_unlock(&r);
				continue;
			}
			require_sleep = false;
		}

		if (require_sleep && (result == TM_Updated || result == TM_Deleted))
		{
			t = tam_row_lock_and_load(&r);
			if (t == NULL)
				continue;
			goto failed;
		}
		else if (require_sleep)
		{
			if (!skip_tuple_lock &&
				!tam_acquire_tuplock(rel, tid, mode, policy, &have_tuple_lock))
			{
				result = TM_WouldBlock;
				t = tam_row_lock_and_load(&r);
				if (t == NULL)
					continue;
				goto failed;
			}
			/* wait on the xmax we saw (t still describes it) */
			if (!wait_per_policy(rel, t, mode, policy))
			{
				result = TM_WouldBlock;
				t = tam_row_lock_and_load(&r);
				if (t == NULL)
					continue;
				goto failed;
			}
			if (follow_updates && !HEAP_XMAX_IS_LOCKED_ONLY(infomask) &&
				!ItemPointerEquals(tid, &t_ctid))
			{
				TM_Result	res = lock_chain_from(rel, xwait, infomask, t_ctid, mode);

				if (res != TM_Ok)
				{
					result = res;
					t = tam_row_lock_and_load(&r);
					if (t == NULL)
						continue;
					goto failed;
				}
			}
			t = tam_row_lock_and_load(&r);
			if (tam_xmax_changed(t, xwait, infomask))
			{
				tam_row_unlock(&r);
				continue;
			}
			if (!(infomask & HEAP_XMAX_IS_MULTI))
				tam_update_xmax_hints(t, xwait);
		}

		if (!require_sleep ||
			(t->htup.t_data->t_infomask & HEAP_XMAX_INVALID) ||
			HEAP_XMAX_IS_LOCKED_ONLY(t->htup.t_data->t_infomask) ||
			HeapTupleHeaderIsOnlyLocked(t->htup.t_data))
			result = TM_Ok;
		else if (!ItemPointerEquals(&t->htup.t_self, &t->htup.t_data->t_ctid))
			result = TM_Updated;
		else
			result = TM_Deleted;
		break;
	}

failed:
	if (result != TM_Ok)
	{
		if (result != TM_Invisible)
			tam_fill_failure(tmfd, t, result);
		*locked = tam_tuple_copy_heap(t);
		tam_row_close(&r);
		tam_release_tuplock(rel, tid, mode, &have_tuple_lock);
		return result;
	}
	apply_lock(&r, t, mode);
	*locked = tam_tuple_copy_heap(t);
	tam_row_close(&r);
	tam_release_tuplock(rel, tid, mode, &have_tuple_lock);
	return TM_Ok;
}

TM_Result
tam_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot, TupleTableSlot *slot,
				 CommandId cid, LockTupleMode mode, LockWaitPolicy wait_policy, uint8 flags,
				 TM_FailureData *tmfd)
{
	bool		follow_updates = (flags & TUPLE_LOCK_FLAG_LOCK_UPDATE_IN_PROGRESS) != 0;
	HeapTuple	locked;
	TM_Result	result;
	uint64		tree = trt_rel_tree(rel);

	trt_xact_note_write();
	tmfd->traversed = false;
	for (;;)
	{
		/* TM_Invisible goes back to the executor, which explains it (ON CONFLICT) */
		result = lock_version(rel, tid, cid, mode, wait_policy, follow_updates, tmfd, &locked);
		if (result != TM_Updated || !(flags & TUPLE_LOCK_FLAG_FIND_LAST_VERSION))
			break;
		if (locked)
			heap_freetuple(locked);
		locked = NULL;
		if (ItemPointerEquals(&tmfd->ctid, tid))
			return TM_Deleted;

		/* follow the update chain to its newest version, then lock that */
		{
			SnapshotData dirty;
			TransactionId prior_xmax = tmfd->xmax;
			TamTupleBuf buf;
			bool		retry = false;

			tmfd->traversed = true;
			tam_tuple_buf_init(&buf, CurrentMemoryContext);
			*tid = tmfd->ctid;
			InitDirtySnapshot(dirty);
			while (!retry)
			{
				TamTuple *t;
				uint64		vid;

				if (ItemPointerIndicatesMovedPartitions(tid))
					ereport(ERROR,
							(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
							 errmsg("tuple to be locked was already moved to another partition due to concurrent update")));
				if (!trt_tid_to_vid(tid, &vid))
					return TM_Deleted;
				t = tam_fetch_version(tree, vid, RelationGetRelid(rel), &buf);
				if (t == NULL)
					return TM_Deleted;
				if (tam_visible(t, &dirty))
				{
					if (!TransactionIdEquals(HeapTupleHeaderGetXmin(t->htup.t_data), prior_xmax))
						return TM_Deleted;
					if (TransactionIdIsValid(dirty.xmin))
						ereport(ERROR,
								(errcode(ERRCODE_DATA_CORRUPTED),
								 errmsg_internal("t_xmin %u is uncommitted in tuple (%u,%u) to be updated in table \"%s\"",
												 dirty.xmin, ItemPointerGetBlockNumber(tid),
												 ItemPointerGetOffsetNumber(tid),
												 RelationGetRelationName(rel))));
					if (TransactionIdIsValid(dirty.xmax))
					{
						switch (wait_policy)
						{
							case LockWaitBlock:
								XactLockTableWait(dirty.xmax, rel, tid, XLTW_FetchUpdated);
								break;
							case LockWaitSkip:
								if (!ConditionalXactLockTableWait(dirty.xmax))
									return TM_WouldBlock;
								break;
							case LockWaitError:
								if (!ConditionalXactLockTableWait(dirty.xmax))
									ereport(ERROR,
											(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
											 errmsg("could not obtain lock on row in relation \"%s\"",
													RelationGetRelationName(rel))));
								break;
						}
						continue;
					}
					if (TransactionIdIsCurrentTransactionId(prior_xmax) &&
						tam_cmin(t) >= cid)
					{
						tmfd->xmax = prior_xmax;
						tmfd->cmax = tam_cmin(t);
						return TM_SelfModified;
					}
					retry = true;	/* lock this version */
					continue;
				}
				if (!TransactionIdEquals(HeapTupleHeaderGetXmin(t->htup.t_data), prior_xmax))
					return TM_Deleted;
				if (ItemPointerEquals(&t->htup.t_self, &t->htup.t_data->t_ctid))
					return TM_Deleted;
				prior_xmax = HeapTupleHeaderGetUpdateXid(t->htup.t_data);
				*tid = t->htup.t_data->t_ctid;
			}
			tam_tuple_buf_free(&buf);
		}
	}
	if (locked != NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(slot->tts_mcxt);
		HeapTuple	copy = heap_copytuple(locked);

		MemoryContextSwitchTo(old);
		heap_freetuple(locked);
		ExecStoreHeapTuple(copy, slot, true);
		slot->tts_tableOid = RelationGetRelid(rel);
	}
	return result;
}
