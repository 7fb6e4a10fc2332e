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

	Assert(r->locked);			/* read-decide-write under the stripe lock */
	MultiXactIdSetOldestMember();
	tam_compute_new_xmax(HeapTupleHeaderGetRawXmax(t->htup.t_data), t->htup.t_data->t_infomask,
						   t->htup.t_data->t_infomask2, GetCurrentTransactionId(), mode, false,
						   &new_xmax, &im, &im2);
	t->htup.t_data->t_infomask &= ~HEAP_XMAX_BITS;
	t->htup.t_data->t_infomask2 &= ~HEAP_KEYS_UPDATED;
	t->htup.t_data->t_infomask |= im;
	t->htup.t_data->t_infomask2 |= im2;
	/* a lock in place of an aborted update's xmax: no chain goes on (tam_tuple_delete) */
	if (HEAP_XMAX_IS_LOCKED_ONLY(im))
		HeapTupleHeaderClearHotUpdated(t->htup.t_data);
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
 * Locking one version (lock_version) goes through phases, each a function
 * below working on a LockState; a phase may decide the outcome (STEP_FAIL,
 * with result set and the version loaded under the stripe lock), ask to
 * look at the version again from the start (STEP_RETRY: it changed while
 * the stripe lock was not held; the stripe lock is released), or hand on
 * (STEP_GO_ON).
 */
typedef enum LockStep
{
	STEP_GO_ON,
	STEP_RETRY,
	STEP_FAIL
} LockStep;

typedef struct LockState
{
	Relation	rel;
	ItemPointer tid;
	LockTupleMode mode;
	LockWaitPolicy policy;
	bool		follow_updates;
	RowRef		r;
	TamTuple   *t;				/* the version, as last loaded */
	TM_Result	result;
	bool		have_tuple_lock;	/* the heavyweight tuple lock (tam_acquire_tuplock) */
	bool		skip_tuple_lock;	/* we hold a weaker lock: don't queue behind others */
	bool		require_sleep;	/* the holders conflict: wait for them */
	/* the xmax seen, decided on without the stripe lock */
	TransactionId xwait;
	uint16		infomask;
	uint16		infomask2;
	ItemPointerData t_ctid;
} LockState;

/* load the version again; false (stripe lock released) if it is gone */
static bool
reload(LockState *s)
{
	s->t = tam_row_lock_and_load(&s->r);
	if (s->t != NULL)
		return true;
	tam_row_unlock(&s->r);
	return false;
}

/* the outcome is res, decided on the version as it is now */
static LockStep
fail_with(LockState *s, TM_Result res)
{
	s->result = res;
	return reload(s) ? STEP_FAIL : STEP_RETRY;
}

/* did xmax change while the stripe lock was not held?  (then unlocked) */
static bool
xmax_moved(LockState *s)
{
	s->t = tam_row_lock_and_load(&s->r);
	if (!tam_xmax_changed(s->t, s->xwait, s->infomask))
		return false;
	tam_row_unlock(&s->r);
	return true;
}

/*
 * Phase 1: note the xmax the version has now and release the stripe lock
 * (every phase that waits must not hold it).  True if the lock asked for is
 * NO KEY UPDATE and every holder is a key-share locker.
 */
static bool
observe_xmax(LockState *s)
{
	bool		nokey_compatible = false;

	Assert(s->r.locked);
	s->xwait = HeapTupleHeaderGetRawXmax(s->t->htup.t_data);
	s->infomask = s->t->htup.t_data->t_infomask;
	s->infomask2 = s->t->htup.t_data->t_infomask2;
	s->t_ctid = s->t->htup.t_data->t_ctid;
	if (s->mode == LockTupleNoKeyExclusive)
	{
		bool		member;

		nokey_compatible = (s->infomask & HEAP_XMAX_IS_MULTI) ?
			!tam_xmax_conflicts(s->t, s->mode, &member) : HEAP_XMAX_IS_KEYSHR_LOCKED(s->infomask);
	}
	tam_row_unlock(&s->r);
	return nokey_compatible;
}

/*
 * Phase 3: lock modes that coexist with the holders need no sleep (KEY
 * SHARE with a non-key update, which then also locks the newer versions
 * when following updates; SHARE with shared lockers; NO KEY UPDATE with
 * key-share lockers).  Clears require_sleep when one applies.
 */
static LockStep
take_compatible(LockState *s, bool nokey_compatible)
{
	if (s->mode == LockTupleKeyShare && !(s->infomask2 & HEAP_KEYS_UPDATED))
	{
		bool		updated = !HEAP_XMAX_IS_LOCKED_ONLY(s->infomask);

		if (s->follow_updates && updated && !ItemPointerEquals(s->tid, &s->t_ctid))
		{
			TM_Result	res = lock_chain_from(s->rel, s->xwait, s->infomask, s->t_ctid, s->mode);

			if (res != TM_Ok)
				return fail_with(s, res);
		}
		if (!reload(s))
			return STEP_RETRY;
		if (!HeapTupleHeaderIsOnlyLocked(s->t->htup.t_data) &&
			((s->t->htup.t_data->t_infomask2 & HEAP_KEYS_UPDATED) || !updated))
		{
			tam_row_unlock(&s->r);
			return STEP_RETRY;
		}
		s->require_sleep = false;
	}
	else if (s->mode == LockTupleShare && HEAP_XMAX_IS_LOCKED_ONLY(s->infomask) &&
			 !HEAP_XMAX_IS_EXCL_LOCKED(s->infomask))
	{
		if (!reload(s))
			return STEP_RETRY;
		if (!HEAP_XMAX_IS_LOCKED_ONLY(s->t->htup.t_data->t_infomask) ||
			HEAP_XMAX_IS_EXCL_LOCKED(s->t->htup.t_data->t_infomask))
		{
			tam_row_unlock(&s->r);
			return STEP_RETRY;
		}
		s->require_sleep = false;
	}
	else if (s->mode == LockTupleNoKeyExclusive && nokey_compatible)
	{
		if (xmax_moved(s))
			return STEP_RETRY;
		s->require_sleep = false;
	}
	return STEP_GO_ON;
}

/* Phase 4: our own weaker (plain) lock is upgraded in place */
static LockStep
upgrade_own(LockState *s)
{
	if (!(s->infomask & HEAP_XMAX_IS_MULTI) && TransactionIdIsCurrentTransactionId(s->xwait))
	{
		if (xmax_moved(s))
			return STEP_RETRY;
		s->require_sleep = false;
	}
	return STEP_GO_ON;
}

/*
 * Phase 5: a conflicting holder.  An update or delete that committed ends
 * it (TM_Updated / TM_Deleted); otherwise queue on the heavyweight tuple
 * lock, wait for the holders per the wait policy, lock the newer versions
 * when following updates, and look again: the xmax must be the one waited
 * for.
 */
static LockStep
wait_for_holders(LockState *s)
{
	if (s->result == TM_Updated || s->result == TM_Deleted)
		return fail_with(s, s->result);
	if (!s->skip_tuple_lock &&
		!tam_acquire_tuplock(s->rel, s->tid, s->mode, s->policy, &s->have_tuple_lock))
		return fail_with(s, TM_WouldBlock);
	/* wait on the xmax we saw (t still describes it) */
	if (!wait_per_policy(s->rel, s->t, s->mode, s->policy))
		return fail_with(s, TM_WouldBlock);
	if (s->follow_updates && !HEAP_XMAX_IS_LOCKED_ONLY(s->infomask) &&
		!ItemPointerEquals(s->tid, &s->t_ctid))
	{
		TM_Result	res = lock_chain_from(s->rel, s->xwait, s->infomask, s->t_ctid, s->mode);

		if (res != TM_Ok)
			return fail_with(s, res);
	}
	if (xmax_moved(s))
		return STEP_RETRY;
	if (!(s->infomask & HEAP_XMAX_IS_MULTI))
		tam_update_xmax_hints(s->t, s->xwait);
	return STEP_GO_ON;
}

/* Phase 6: after the phases above, the version as loaded may be locked */
static TM_Result
lockable(LockState *s)
{
	HeapTupleHeader h = s->t->htup.t_data;

	if (!s->require_sleep || (h->t_infomask & HEAP_XMAX_INVALID) ||
		HEAP_XMAX_IS_LOCKED_ONLY(h->t_infomask) || HeapTupleHeaderIsOnlyLocked(h))
		return TM_Ok;
	if (!ItemPointerEquals(&s->t->htup.t_self, &h->t_ctid))
		return TM_Updated;
	return TM_Deleted;
}

/* the version is gone: deleted (and pruned) since the caller saw its TID */
static TM_Result
version_gone(LockState *s, TM_FailureData *tmfd)
{
	tam_row_close(&s->r);
	tam_release_tuplock(s->rel, s->tid, s->mode, &s->have_tuple_lock);
	ItemPointerCopy(s->tid, &tmfd->ctid);
	tmfd->xmax = InvalidTransactionId;
	tmfd->cmax = InvalidCommandId;
	return TM_Deleted;
}

/*
 * Lock one version.  On return *locked holds a palloc'd copy of the version
 * as it was decided on (NULL if it no longer exists).
 */
static TM_Result
lock_version(Relation rel, ItemPointer tid, CommandId cid, LockTupleMode mode,
			 LockWaitPolicy policy, bool follow_updates, TM_FailureData *tmfd, HeapTuple *locked)
{
	LockState	s;
	bool		first_time = true;

	memset(&s, 0, sizeof(s));
	s.rel = rel;
	s.tid = tid;
	s.mode = mode;
	s.policy = policy;
	s.follow_updates = follow_updates;
	*locked = NULL;
	tam_row_open(&s.r, rel, tid);
	for (;;)
	{
		LockStep	step;
		bool		nokey_compatible;

		s.t = tam_row_lock_and_load(&s.r);
		if (s.t == NULL)
			return version_gone(&s, tmfd);
		s.result = tam_satisfies_update(s.t, cid);
		if (s.result != TM_BeingModified && s.result != TM_Updated && s.result != TM_Deleted)
			break;				/* TM_Ok, TM_Invisible, TM_SelfModified: decided */

		nokey_compatible = observe_xmax(&s);
		if (first_time)
		{
			first_time = false;
			if (already_locked(s.xwait, s.infomask, s.infomask2, mode, &s.skip_tuple_lock))
			{
				/* nothing to change; hand back the version as it is */
				s.t = tam_row_lock_and_load(&s.r);
				if (s.t != NULL)
					*locked = tam_tuple_copy_heap(s.t);
				tam_row_close(&s.r);
				tam_release_tuplock(rel, tid, mode, &s.have_tuple_lock);
				return TM_Ok;
			}
		}
		s.require_sleep = true;
		step = take_compatible(&s, nokey_compatible);
		if (step == STEP_GO_ON && s.require_sleep)
			step = upgrade_own(&s);
		if (step == STEP_GO_ON && s.require_sleep)
			step = wait_for_holders(&s);
		if (step == STEP_RETRY)
			continue;
		if (step == STEP_GO_ON)
			s.result = lockable(&s);
		break;
	}

	/* the stripe lock is held and s.t is the version decided on */
	Assert(s.r.locked && s.t != NULL);
	if (s.result != TM_Ok)
	{
		if (s.result != TM_Invisible)
			tam_fill_failure(tmfd, s.t, s.result);
		*locked = tam_tuple_copy_heap(s.t);
		tam_row_close(&s.r);
		tam_release_tuplock(rel, tid, mode, &s.have_tuple_lock);
		return s.result;
	}
	apply_lock(&s.r, s.t, mode);
	*locked = tam_tuple_copy_heap(s.t);
	tam_row_close(&s.r);
	tam_release_tuplock(rel, tid, mode, &s.have_tuple_lock);
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
