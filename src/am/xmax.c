/*
 * xmax.c -- row locks: what a version's xmax says about who holds it, and
 * what it must say after one more transaction locks or updates it.
 *
 * Row locks work exactly as heap's (README.tuplock in PostgreSQL): four
 * strengths (KEY SHARE, SHARE, NO KEY UPDATE, UPDATE) whose conflicts are
 * those of the heavyweight lock modes they map to; a single locker or
 * updater is a plain xid in xmax with infomask bits for the strength; two or
 * more become a MultiXactId whose members carry their own strengths.  Foreign
 * key checks take KEY SHARE, which a non-key update does not conflict with.
 *
 * Waiting happens outside the row's stripe lock: the heavyweight tuple lock
 * (LockTuple) queues waiters fairly, then XactLockTableWait waits for the
 * holder's transaction, which gives deadlock detection, NOWAIT, SKIP LOCKED
 * and lock_timeout for free.
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/xact.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/procarray.h"

#include "am/tam.h"

/* per strength: the heavyweight lock that stands for it, and multixact statuses */
static const struct
{
	LOCKMODE	hwlock;
	MultiXactStatus lock_status;
	int			update_status;	/* -1: this strength cannot update */
}			strength[MaxLockTupleMode + 1] =
{
	[LockTupleKeyShare] = {AccessShareLock, MultiXactStatusForKeyShare, -1},
	[LockTupleShare] = {RowShareLock, MultiXactStatusForShare, -1},
	[LockTupleNoKeyExclusive] = {ExclusiveLock, MultiXactStatusForNoKeyUpdate, MultiXactStatusNoKeyUpdate},
	[LockTupleExclusive] = {AccessExclusiveLock, MultiXactStatusForUpdate, MultiXactStatusUpdate}
};

/* the tuple lock mode a multixact member's status (or a plain xmax's) stands for */
LockTupleMode
tam_mode_of_status(MultiXactStatus st)
{
	switch (st)
	{
		case MultiXactStatusForKeyShare:
			return LockTupleKeyShare;
		case MultiXactStatusForShare:
			return LockTupleShare;
		case MultiXactStatusForNoKeyUpdate:
		case MultiXactStatusNoKeyUpdate:
			return LockTupleNoKeyExclusive;
		case MultiXactStatusForUpdate:
		case MultiXactStatusUpdate:
			return LockTupleExclusive;
	}
	return LockTupleExclusive;
}

/* the heavyweight lock that stands for a tuple lock mode */
LOCKMODE
tam_hwlock_of_mode(LockTupleMode mode)
{
	return strength[mode].hwlock;
}

static inline LOCKMODE
hwlock_of_status(MultiXactStatus st)
{
	return tam_hwlock_of_mode(tam_mode_of_status(st));
}

static MultiXactStatus
status_for(LockTupleMode mode, bool is_update)
{
	if (is_update)
	{
		if (strength[mode].update_status < 0)
			elog(ERROR, "tides: lock mode %d cannot update", mode);
		return (MultiXactStatus) strength[mode].update_status;
	}
	return strength[mode].lock_status;
}

/* the status a plain (non-multi) xmax stands for */
MultiXactStatus
tam_status_of_plain_xmax(uint16 infomask, uint16 infomask2)
{
	if (!HEAP_XMAX_IS_LOCKED_ONLY(infomask))
		return (infomask2 & HEAP_KEYS_UPDATED) ? MultiXactStatusUpdate : MultiXactStatusNoKeyUpdate;
	if (HEAP_XMAX_IS_KEYSHR_LOCKED(infomask))
		return MultiXactStatusForKeyShare;
	if (HEAP_XMAX_IS_SHR_LOCKED(infomask))
		return MultiXactStatusForShare;
	return (infomask2 & HEAP_KEYS_UPDATED) ? MultiXactStatusForUpdate : MultiXactStatusForNoKeyUpdate;
}

LockTupleMode
tam_lock_mode_of_xmax(TamTuple *t, bool *is_update)
{
	MultiXactStatus st = tam_status_of_plain_xmax(t->htup.t_data->t_infomask, t->htup.t_data->t_infomask2);

	*is_update = !HEAP_XMAX_IS_LOCKED_ONLY(t->htup.t_data->t_infomask);
	return tam_mode_of_status(st);
}

/* the updating member of a multixact, if any */
static TransactionId
multi_update_xid(MultiXactId multi)
{
	MultiXactMember *members;
	int			n = GetMultiXactIdMembers(multi, &members, false, false);
	TransactionId upd = InvalidTransactionId;

	for (int i = 0; i < n; i++)
		if (ISUPDATE_from_mxstatus(members[i].status))
			upd = members[i].xid;
	if (n > 0)
		pfree(members);
	return upd;
}

/* infomask bits that describe a multixact's members */
static void
multi_bits(MultiXactId multi, uint16 *infomask, uint16 *infomask2)
{
	MultiXactMember *members;
	int			n = GetMultiXactIdMembers(multi, &members, false, false);
	LockTupleMode strongest = LockTupleKeyShare;
	bool		has_update = false;
	uint16		bits = HEAP_XMAX_IS_MULTI;
	uint16		bits2 = 0;

	for (int i = 0; i < n; i++)
	{
		LockTupleMode m = tam_mode_of_status(members[i].status);

		strongest = Max(strongest, m);
		if (members[i].status == MultiXactStatusForUpdate ||
			members[i].status == MultiXactStatusUpdate)
			bits2 |= HEAP_KEYS_UPDATED;
		if (members[i].status == MultiXactStatusUpdate ||
			members[i].status == MultiXactStatusNoKeyUpdate)
			has_update = true;
	}
	if (strongest >= LockTupleNoKeyExclusive)
		bits |= HEAP_XMAX_EXCL_LOCK;
	else if (strongest == LockTupleShare)
		bits |= HEAP_XMAX_SHR_LOCK;
	else
		bits |= HEAP_XMAX_KEYSHR_LOCK;
	if (!has_update)
		bits |= HEAP_XMAX_LOCK_ONLY;
	if (n > 0)
		pfree(members);
	*infomask = bits;
	*infomask2 = bits2;
}

/* the xmax and infomask bits a plain lock or update by one xid leaves */
static void
plain_bits(LockTupleMode mode, bool is_update, uint16 *infomask, uint16 *infomask2)
{
	*infomask = 0;
	*infomask2 = 0;
	if (is_update)
	{
		if (mode == LockTupleExclusive)
			*infomask2 |= HEAP_KEYS_UPDATED;
		return;
	}
	*infomask |= HEAP_XMAX_LOCK_ONLY;
	switch (mode)
	{
		case LockTupleKeyShare:
			*infomask |= HEAP_XMAX_KEYSHR_LOCK;
			break;
		case LockTupleShare:
			*infomask |= HEAP_XMAX_SHR_LOCK;
			break;
		case LockTupleNoKeyExclusive:
			*infomask |= HEAP_XMAX_EXCL_LOCK;
			break;
		case LockTupleExclusive:
			*infomask |= HEAP_XMAX_EXCL_LOCK;
			*infomask2 |= HEAP_KEYS_UPDATED;
			break;
	}
}

/*
 * The new xmax after add_to_xmax (the current transaction) locks or updates
 * a version whose xmax and infomask are given.  Lockers and an updater that
 * are still relevant are kept, in a multixact if there are several; ones
 * that are gone are dropped.
 */
void
tam_compute_new_xmax(TransactionId xmax, uint16 old_infomask, uint16 old_infomask2,
					   TransactionId add_to_xmax, LockTupleMode mode, bool is_update,
					   TransactionId *result_xmax, uint16 *result_infomask,
					   uint16 *result_infomask2)
{
	for (;;)
	{
		MultiXactStatus old_status;

		if (old_infomask & HEAP_XMAX_INVALID)
		{
			/* nobody else: a plain xid */
			*result_xmax = add_to_xmax;
			plain_bits(mode, is_update, result_infomask, result_infomask2);
			return;
		}
		if (old_infomask & HEAP_XMAX_IS_MULTI)
		{
			if (HEAP_LOCKED_UPGRADED(old_infomask) ||
				(!MultiXactIdIsRunning(xmax, HEAP_XMAX_IS_LOCKED_ONLY(old_infomask)) &&
				 (HEAP_XMAX_IS_LOCKED_ONLY(old_infomask) ||
				  !TransactionIdDidCommit(multi_update_xid(xmax)))))
			{
				/* no member matters any more */
				old_infomask = (old_infomask & ~HEAP_XMAX_IS_MULTI) | HEAP_XMAX_INVALID;
				continue;
			}
			*result_xmax = MultiXactIdExpand((MultiXactId) xmax, add_to_xmax,
											 status_for(mode, is_update));
			multi_bits(*result_xmax, result_infomask, result_infomask2);
			return;
		}
		old_status = tam_status_of_plain_xmax(old_infomask, old_infomask2);
		if (old_infomask & HEAP_XMAX_COMMITTED)
		{
			/* a committed updater stays, next to us (we can only be a locker) */
			*result_xmax = MultiXactIdCreate(xmax, old_status, add_to_xmax,
											 status_for(mode, is_update));
			multi_bits(*result_xmax, result_infomask, result_infomask2);
			return;
		}
		if (TransactionIdIsInProgress(xmax))
		{
			if (xmax == add_to_xmax)
			{
				/* our own earlier lock: keep the stronger of the two */
				LockTupleMode old_mode = tam_mode_of_status(old_status);

				if (mode < old_mode)
					mode = old_mode;
				old_infomask |= HEAP_XMAX_INVALID;
				continue;
			}
			*result_xmax = MultiXactIdCreate(xmax, old_status, add_to_xmax,
											 status_for(mode, is_update));
			multi_bits(*result_xmax, result_infomask, result_infomask2);
			return;
		}
		if (!HEAP_XMAX_IS_LOCKED_ONLY(old_infomask) && TransactionIdDidCommit(xmax))
		{
			*result_xmax = MultiXactIdCreate(xmax, old_status, add_to_xmax,
											 status_for(mode, is_update));
			multi_bits(*result_xmax, result_infomask, result_infomask2);
			return;
		}
		/* a locker or aborted updater that is gone */
		old_infomask |= HEAP_XMAX_INVALID;
	}
}

/*
 * Does a multixact xmax conflict with the wanted strength?  Our own
 * membership is reported, not counted as a conflict.
 */
static bool
multi_conflicts(MultiXactId multi, uint16 infomask, LockTupleMode mode, bool *current_is_member)
{
	MultiXactMember *members;
	int			n;
	bool		conflict = false;
	LOCKMODE	wanted = strength[mode].hwlock;

	*current_is_member = false;
	if (HEAP_LOCKED_UPGRADED(infomask))
		return false;
	n = GetMultiXactIdMembers(multi, &members, false, HEAP_XMAX_IS_LOCKED_ONLY(infomask));
	for (int i = 0; i < n; i++)
	{
		TransactionId x = members[i].xid;

		if (TransactionIdIsCurrentTransactionId(x))
		{
			*current_is_member = true;
			continue;
		}
		if (!DoLockModesConflict(hwlock_of_status(members[i].status), wanted))
			continue;
		if (ISUPDATE_from_mxstatus(members[i].status) ? TransactionIdDidAbort(x)
			: !TransactionIdIsInProgress(x))
			continue;
		conflict = true;
	}
	if (n > 0)
		pfree(members);
	return conflict;
}

bool
tam_xmax_conflicts(TamTuple *t, LockTupleMode mode, bool *current_is_member)
{
	return multi_conflicts(HeapTupleHeaderGetRawXmax(t->htup.t_data), t->htup.t_data->t_infomask,
						   mode, current_is_member);
}

/*
 * Wait for every member of a multixact xmax whose lock conflicts with
 * `mode`.  *remain (if given) counts members still running that do not
 * conflict.  With LockWaitSkip / LockWaitError, returns false instead of
 * waiting when a member is still running.
 */
static bool
wait_multi(MultiXactId multi, uint16 infomask, LockTupleMode mode,
		   LockWaitPolicy policy, Relation rel, ItemPointer tid, XLTW_Oper oper, int *remain)
{
	MultiXactMember *members;
	int			n;
	int			left = 0;
	bool		ok = true;
	LOCKMODE	wanted = strength[mode].hwlock;

	n = HEAP_LOCKED_UPGRADED(infomask) ? -1 :
		GetMultiXactIdMembers(multi, &members, false, HEAP_XMAX_IS_LOCKED_ONLY(infomask));
	for (int i = 0; i < n && ok; i++)
	{
		TransactionId x = members[i].xid;

		if (TransactionIdIsCurrentTransactionId(x))
		{
			left++;
			continue;
		}
		if (!DoLockModesConflict(hwlock_of_status(members[i].status), wanted))
		{
			if (remain && TransactionIdIsInProgress(x))
				left++;
			continue;
		}
		if (policy == LockWaitBlock)
			XactLockTableWait(x, rel, tid, oper);
		else
			ok = ConditionalXactLockTableWait(x);
	}
	if (n > 0)
		pfree(members);
	if (remain)
		*remain = left;
	return ok;
}

/*
 * Wait until the transaction(s) in the version's xmax no longer conflict with
 * `mode`.  Returns false (without waiting) if the policy forbids waiting and
 * a conflicting holder is running.
 */
bool
tam_wait_for_xmax(Relation rel, TamTuple *t, LockTupleMode mode, LockWaitPolicy policy,
					XLTW_Oper oper, int *remain)
{
	HeapTupleHeader h = t->htup.t_data;
	TransactionId xwait = HeapTupleHeaderGetRawXmax(h);

	if (h->t_infomask & HEAP_XMAX_IS_MULTI)
		return wait_multi((MultiXactId) xwait, h->t_infomask, mode,
						  policy, rel, &t->htup.t_self, oper, remain);
	if (remain)
		*remain = 0;
	if (policy == LockWaitBlock)
	{
		XactLockTableWait(xwait, rel, &t->htup.t_self, oper);
		return true;
	}
	return ConditionalXactLockTableWait(xwait);
}

/* acquire/release the heavyweight tuple lock that orders waiters */
bool
tam_acquire_tuplock(Relation rel, ItemPointer tid, LockTupleMode mode, LockWaitPolicy policy,
					  bool *have)
{
	if (*have)
		return true;
	switch (policy)
	{
		case LockWaitBlock:
			LockTuple(rel, tid, strength[mode].hwlock);
			break;
		case LockWaitSkip:
			if (!ConditionalLockTuple(rel, tid, strength[mode].hwlock))
				return false;
			break;
		case LockWaitError:
			if (!ConditionalLockTuple(rel, tid, strength[mode].hwlock))
				ereport(ERROR,
						(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
						 errmsg("could not obtain lock on row in relation \"%s\"",
								RelationGetRelationName(rel))));
			break;
	}
	*have = true;
	return true;
}

void
tam_release_tuplock(Relation rel, ItemPointer tid, LockTupleMode mode, bool *have)
{
	if (*have)
		UnlockTuple(rel, tid, strength[mode].hwlock);
	*have = false;
}

/* xmax bits a new version inherits from key-share lockers of the old one */
void
tam_inherited_xmax_bits(TransactionId xmax, uint16 old_infomask, uint16 *infomask, uint16 *infomask2)
{
	if (old_infomask & HEAP_XMAX_IS_MULTI)
		multi_bits(xmax, infomask, infomask2);
	else
	{
		*infomask = HEAP_XMAX_KEYSHR_LOCK | HEAP_XMAX_LOCK_ONLY;
		*infomask2 = 0;
	}
}
