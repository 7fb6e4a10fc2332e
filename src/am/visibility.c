/*
 * visibility.c -- which row versions a snapshot sees, judged as heap does.
 *
 * The rules are heap's (src/backend/access/heap/heapam_visibility.c): a
 * version's inserter and deleter are each looked at as "our own
 * transaction", "in progress", "committed" or "aborted", with the snapshot
 * deciding for MVCC snapshots which committed transactions count.  Two
 * differences in representation, none in outcome:
 *
 *   - cmin and cmax are stored separately (t_cid is cmin, meta.cmax is
 *     cmax), so there are no combo command ids;
 *   - hint bits are set on the in-memory copy only.  Persisting them would
 *     mean writing the version again; compaction does that in bulk, under
 *     the conditions of D5 (docs/durability.md).
 *
 * Writers PostgreSQL forgot in a crash were already marked invalid when the
 * version was loaded (tuple.c), so they need no case here.
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/subtrans.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "storage/predicate.h"
#include "storage/procarray.h"
#include "utils/snapmgr.h"

#include "am/tam.h"

#define INFOMASK(t) ((t)->htup.t_data->t_infomask)

static inline void
hint(TamTuple *t, uint16 bits)
{
	INFOMASK(t) |= bits;
}

static inline TransactionId
raw_xmin(TamTuple *t)
{
	return HeapTupleHeaderGetRawXmin(t->htup.t_data);
}

static inline TransactionId
raw_xmax(TamTuple *t)
{
	return HeapTupleHeaderGetRawXmax(t->htup.t_data);
}

/* the xid that deleted or updated the version, or Invalid for lockers only */
static TransactionId
updater_of(TamTuple *t)
{
	uint16		m = INFOMASK(t);

	if (m & HEAP_XMAX_INVALID)
		return InvalidTransactionId;
	if (HEAP_XMAX_IS_LOCKED_ONLY(m))
		return InvalidTransactionId;
	if (m & HEAP_XMAX_IS_MULTI)
		return HeapTupleGetUpdateXid(t->htup.t_data);
	return raw_xmax(t);
}

bool
tam_deletion(TamTuple *t, TransactionId *updater, CommandId *cid, bool *committed)
{
	TransactionId upd = updater_of(t);
	uint16		m = INFOMASK(t);

	if (!TransactionIdIsValid(upd))
		return false;
	*updater = upd;
	*cid = InvalidCommandId;
	*committed = false;
	if (TransactionIdIsCurrentTransactionId(upd))
		*cid = t->meta.cmax;
	else
		*committed = ((m & HEAP_XMAX_COMMITTED) && !(m & HEAP_XMAX_IS_MULTI)) ||
			TransactionIdDidCommit(upd);
	return true;
}

bool
tam_is_only_locked(TamTuple *t)
{
	return HeapTupleHeaderIsOnlyLocked(t->htup.t_data);
}

/* ---------------------------------------------------------------- MVCC */

static bool
visible_mvcc(TamTuple *t, Snapshot snap)
{
	HeapTupleHeader h = t->htup.t_data;
	TransactionId upd;

	/* the inserter */
	if (!HeapTupleHeaderXminCommitted(h))
	{
		TransactionId xmin = raw_xmin(t);

		if (HeapTupleHeaderXminInvalid(h))
			return false;
		if (TransactionIdIsCurrentTransactionId(xmin))
		{
			if (tam_cmin(t) >= snap->curcid)
				return false;	/* inserted after the scan started */
		}
		else if (XidInMVCCSnapshot(xmin, snap))
			return false;
		else if (TransactionIdDidCommit(xmin))
			hint(t, HEAP_XMIN_COMMITTED);
		else
		{
			hint(t, HEAP_XMIN_INVALID);
			return false;
		}
	}
	else if (!HeapTupleHeaderXminFrozen(h) && XidInMVCCSnapshot(raw_xmin(t), snap))
		return false;

	/* the deleter, if any */
	upd = updater_of(t);
	if (!TransactionIdIsValid(upd))
		return true;
	if ((INFOMASK(t) & HEAP_XMAX_COMMITTED) && !(INFOMASK(t) & HEAP_XMAX_IS_MULTI))
		return XidInMVCCSnapshot(upd, snap);
	if (TransactionIdIsCurrentTransactionId(upd))
		return t->meta.cmax >= snap->curcid;	/* deleted after the scan started */
	if (XidInMVCCSnapshot(upd, snap))
		return true;
	if (TransactionIdDidCommit(upd))
	{
		if (!(INFOMASK(t) & HEAP_XMAX_IS_MULTI))
			hint(t, HEAP_XMAX_COMMITTED);
		return false;
	}
	if (!(INFOMASK(t) & HEAP_XMAX_IS_MULTI))
		hint(t, HEAP_XMAX_INVALID);
	return true;
}

/*
 * t was read from a block that the visibility map showed all-visible at a
 * look taken after the MVCC snapshot snap and before the read began
 * (tam_vm_all_visible in hot.c; seqread.c's copy).  If snap does not
 * count t's inserter as running, and it is not ours, the inserter had
 * ended before snap was taken, and with it its write of t and its clear
 * of the block's bit (the clear follows the write, or for a row held back
 * with its entries comes just before it: vm.c).  So the bit seen set was
 * set again after that
 * clear, by a VACUUM that saw t in the block, live, from a committed
 * inserter -- an aborted one's version makes VACUUM leave the bit alone,
 * and a version VACUUM removed before setting it cannot be read after.
 * The inserter committed: hint it, and the judgement that follows needs no
 * commit log lookup, as heap's hint bits spare heap.
 */
void
tam_hint_all_visible(TamTuple *t, Snapshot snap)
{
	HeapTupleHeader h = t->htup.t_data;
	TransactionId xmin;

	Assert(snap->snapshot_type == SNAPSHOT_MVCC);
	if (HeapTupleHeaderXminCommitted(h) || HeapTupleHeaderXminInvalid(h))
		return;
	xmin = raw_xmin(t);
	if (!TransactionIdIsNormal(xmin) || TransactionIdIsCurrentTransactionId(xmin) ||
		XidInMVCCSnapshot(xmin, snap))
		return;
	Assert(TransactionIdDidCommit(xmin));
	hint(t, HEAP_XMIN_COMMITTED);
}

/* ------------------------------------------------- SELF and DIRTY */

/*
 * SnapshotSelf sees committed work and everything of the current
 * transaction including its current command; SnapshotDirty also sees work
 * in progress, reporting the in-progress inserter/deleter (and a
 * speculative insertion's token) in the snapshot for the caller to wait on.
 */
static bool
visible_self_or_dirty(TamTuple *t, Snapshot snap, bool dirty)
{
	HeapTupleHeader h = t->htup.t_data;
	TransactionId upd;

	if (dirty)
	{
		snap->xmin = snap->xmax = InvalidTransactionId;
		snap->speculativeToken = 0;
	}
	if (!HeapTupleHeaderXminCommitted(h))
	{
		TransactionId xmin = raw_xmin(t);

		if (HeapTupleHeaderXminInvalid(h))
			return false;
		if (TransactionIdIsCurrentTransactionId(xmin))
		{
			upd = updater_of(t);
			if (!TransactionIdIsValid(upd))
				return true;
			return !TransactionIdIsCurrentTransactionId(upd);	/* deleter subxact aborted */
		}
		if (TransactionIdIsInProgress(xmin))
		{
			if (!dirty)
				return false;
			if (HeapTupleHeaderIsSpeculative(h))
				snap->speculativeToken = HeapTupleHeaderGetSpeculativeToken(h);
			snap->xmin = xmin;
			return true;
		}
		if (TransactionIdDidCommit(xmin))
			hint(t, HEAP_XMIN_COMMITTED);
		else
		{
			hint(t, HEAP_XMIN_INVALID);
			return false;
		}
	}

	upd = updater_of(t);
	if (!TransactionIdIsValid(upd))
		return true;
	if ((INFOMASK(t) & HEAP_XMAX_COMMITTED) && !(INFOMASK(t) & HEAP_XMAX_IS_MULTI))
		return false;
	if (TransactionIdIsCurrentTransactionId(upd))
		return false;
	if (TransactionIdIsInProgress(upd))
	{
		if (!dirty)
			return true;
		snap->xmax = upd;
		return true;
	}
	if (TransactionIdDidCommit(upd))
	{
		if (!(INFOMASK(t) & HEAP_XMAX_IS_MULTI))
			hint(t, HEAP_XMAX_COMMITTED);
		return false;
	}
	if (!(INFOMASK(t) & HEAP_XMAX_IS_MULTI))
		hint(t, HEAP_XMAX_INVALID);
	return true;
}

/* -------------------------------------------------------------- VACUUM */

HTSV_Result
tam_satisfies_vacuum(TamTuple *t, TransactionId oldest_xmin, TransactionId *dead_after)
{
	HeapTupleHeader h = t->htup.t_data;
	uint16		m;
	TransactionId upd;

	*dead_after = InvalidTransactionId;
	if (!HeapTupleHeaderXminCommitted(h))
	{
		TransactionId xmin = raw_xmin(t);

		if (HeapTupleHeaderXminInvalid(h))
			return HEAPTUPLE_DEAD;
		if (TransactionIdIsCurrentTransactionId(xmin))
		{
			upd = updater_of(t);
			if (TransactionIdIsValid(upd) && TransactionIdIsCurrentTransactionId(upd))
				return HEAPTUPLE_DELETE_IN_PROGRESS;
			return HEAPTUPLE_INSERT_IN_PROGRESS;
		}
		if (TransactionIdIsInProgress(xmin))
			return HEAPTUPLE_INSERT_IN_PROGRESS;
		if (TransactionIdDidCommit(xmin))
			hint(t, HEAP_XMIN_COMMITTED);
		else
		{
			hint(t, HEAP_XMIN_INVALID);
			return HEAPTUPLE_DEAD;
		}
	}

	m = INFOMASK(t);
	if (m & HEAP_XMAX_INVALID)
		return HEAPTUPLE_LIVE;
	if (HEAP_XMAX_IS_LOCKED_ONLY(m))
		return HEAPTUPLE_LIVE;	/* lockers do not make a version dead */
	upd = updater_of(t);
	if (!TransactionIdIsValid(upd))
		return HEAPTUPLE_LIVE;	/* a multi whose updater aborted: lockers only */
	if (!(m & HEAP_XMAX_COMMITTED) || (m & HEAP_XMAX_IS_MULTI))
	{
		if (TransactionIdIsCurrentTransactionId(upd) || TransactionIdIsInProgress(upd))
			return HEAPTUPLE_DELETE_IN_PROGRESS;
		if (!TransactionIdDidCommit(upd))
		{
			if (!(m & HEAP_XMAX_IS_MULTI))
				hint(t, HEAP_XMAX_INVALID);
			return HEAPTUPLE_LIVE;
		}
		if (!(m & HEAP_XMAX_IS_MULTI))
			hint(t, HEAP_XMAX_COMMITTED);
	}
	*dead_after = upd;
	if (TransactionIdIsValid(oldest_xmin) && TransactionIdPrecedes(upd, oldest_xmin))
		return HEAPTUPLE_DEAD;
	return HEAPTUPLE_RECENTLY_DEAD;
}

static bool
visible_nonvacuumable(TamTuple *t, Snapshot snap)
{
	return !tam_surely_dead(t, snap->vistest, TAM_DEAD_DURABLE);
}

/*
 * Dead to everyone, for good: what lets an index forget its entry
 * (HeapTupleIsSurelyDead).  A crash must not bring the version back after
 * the forgetting survived it, and the deletion is only as durable as two
 * records: the deleter's commit record in the WAL and its tides records.
 *
 *   - The commit record must be flushed (heap's SetHintBits rule: an
 *     asynchronous commit is lost whole in an OS crash, and the deleter then
 *     reads as aborted).  With tides.wal the tides records are WAL records
 *     before it, so that is all.
 *   - TAM_DEAD_LOGGED: the forgetting is itself a write to the tides log,
 *     after the deletion (tides_btree's kill), so a crash that keeps it keeps
 *     the deletion's tides records too (the log is recovered as a prefix).
 *     With tides.wal the forgetting is a WAL record after the commit record.
 *   - TAM_DEAD_DURABLE: the forgetting may reach the disk before the tides
 *     log (nbtree's LP_DEAD hint): the tides records must be durable
 *     (trt_xid_durable).
 *   - TAM_DEAD_NOW: temporary and unlogged relations do not outlive a crash.
 *
 * An aborted insertion is dead whatever happens.
 */
bool
tam_surely_dead(TamTuple *t, GlobalVisState *vistest, TamDeadRule rule)
{
	TransactionId dead_after;
	HTSV_Result r = tam_satisfies_vacuum(t, InvalidTransactionId, &dead_after);

	return tam_dead_settled(r, dead_after, vistest, rule);
}

/* the same, from tam_satisfies_vacuum's answer (r, dead_after) */
bool
tam_dead_settled(HTSV_Result r, TransactionId dead_after, GlobalVisState *vistest, TamDeadRule rule)
{
	if (r == HEAPTUPLE_DEAD)
		return true;
	if (r != HEAPTUPLE_RECENTLY_DEAD || !GlobalVisTestIsRemovableXid(vistest, dead_after))
		return false;
	if (rule == TAM_DEAD_NOW || (rule == TAM_DEAD_LOGGED && trt_wal))
		return true;
	if (XLogNeedsFlush(TransactionIdGetCommitLSN(dead_after)))
		return false;
	return rule == TAM_DEAD_LOGGED || trt_xid_durable(dead_after);
}

/* the rule for a relation's deletions; logged: the consequence is a tides log write */
TamDeadRule
tam_dead_rule(Relation rel, bool logged)
{
	if (rel->rd_rel->relpersistence != RELPERSISTENCE_PERMANENT)
		return TAM_DEAD_NOW;
	return logged ? TAM_DEAD_LOGGED : TAM_DEAD_DURABLE;
}

/* -------------------------------------------------------------- UPDATE */

/*
 * Can the current command update, delete or lock this version?  The answers
 * and the cases are heap's HeapTupleSatisfiesUpdate's.
 */
TM_Result
tam_satisfies_update(TamTuple *t, CommandId curcid)
{
	HeapTupleHeader h = t->htup.t_data;
	uint16		m;
	TransactionId xmax;

	if (!HeapTupleHeaderXminCommitted(h))
	{
		TransactionId xmin = raw_xmin(t);

		if (HeapTupleHeaderXminInvalid(h))
			return TM_Invisible;
		if (TransactionIdIsCurrentTransactionId(xmin))
		{
			if (tam_cmin(t) >= curcid)
				return TM_Invisible;	/* inserted after the scan started */
			m = INFOMASK(t);
			if (m & HEAP_XMAX_INVALID)
				return TM_Ok;
			if (HEAP_XMAX_IS_LOCKED_ONLY(m))
			{
				/* our own version may be key-share locked by others */
				if (m & HEAP_XMAX_IS_MULTI)
					return MultiXactIdIsRunning(raw_xmax(t), true) ? TM_BeingModified : TM_Ok;
				return TransactionIdIsInProgress(raw_xmax(t)) ? TM_BeingModified : TM_Ok;
			}
			xmax = updater_of(t);
			if (!TransactionIdIsCurrentTransactionId(xmax))
			{
				/* the deleting subtransaction aborted */
				if (m & HEAP_XMAX_IS_MULTI)
					return MultiXactIdIsRunning(raw_xmax(t), false) ? TM_BeingModified : TM_Ok;
				hint(t, HEAP_XMAX_INVALID);
				return TM_Ok;
			}
			return t->meta.cmax >= curcid ? TM_SelfModified : TM_Invisible;
		}
		if (TransactionIdIsInProgress(xmin))
			return TM_Invisible;
		if (TransactionIdDidCommit(xmin))
			hint(t, HEAP_XMIN_COMMITTED);
		else
		{
			hint(t, HEAP_XMIN_INVALID);
			return TM_Invisible;
		}
	}

	m = INFOMASK(t);
	if (m & HEAP_XMAX_INVALID)
		return TM_Ok;
	if (m & HEAP_XMAX_COMMITTED)
	{
		if (HEAP_XMAX_IS_LOCKED_ONLY(m))
			return TM_Ok;
		return ItemPointerEquals(&t->htup.t_self, &h->t_ctid) ? TM_Deleted : TM_Updated;
	}
	if (m & HEAP_XMAX_IS_MULTI)
	{
		if (HEAP_LOCKED_UPGRADED(m))
			return TM_Ok;
		if (HEAP_XMAX_IS_LOCKED_ONLY(m))
		{
			if (MultiXactIdIsRunning(raw_xmax(t), true))
				return TM_BeingModified;
			hint(t, HEAP_XMAX_INVALID);
			return TM_Ok;
		}
		xmax = HeapTupleGetUpdateXid(h);
		if (!TransactionIdIsValid(xmax))
			return MultiXactIdIsRunning(raw_xmax(t), false) ? TM_BeingModified : TM_Ok;
		if (TransactionIdIsCurrentTransactionId(xmax))
			return t->meta.cmax >= curcid ? TM_SelfModified : TM_Invisible;
		if (MultiXactIdIsRunning(raw_xmax(t), false))
			return TM_BeingModified;
		if (TransactionIdDidCommit(xmax))
			return ItemPointerEquals(&t->htup.t_self, &h->t_ctid) ? TM_Deleted : TM_Updated;
		/* the updater aborted; lockers may remain */
		if (!MultiXactIdIsRunning(raw_xmax(t), false))
		{
			hint(t, HEAP_XMAX_INVALID);
			return TM_Ok;
		}
		return TM_BeingModified;
	}

	xmax = raw_xmax(t);
	if (TransactionIdIsCurrentTransactionId(xmax))
	{
		if (HEAP_XMAX_IS_LOCKED_ONLY(m))
			return TM_BeingModified;
		return t->meta.cmax >= curcid ? TM_SelfModified : TM_Invisible;
	}
	if (TransactionIdIsInProgress(xmax))
		return TM_BeingModified;
	if (!TransactionIdDidCommit(xmax))
	{
		hint(t, HEAP_XMAX_INVALID);
		return TM_Ok;
	}
	if (HEAP_XMAX_IS_LOCKED_ONLY(m))
	{
		hint(t, HEAP_XMAX_INVALID);
		return TM_Ok;
	}
	hint(t, HEAP_XMAX_COMMITTED);
	return ItemPointerEquals(&t->htup.t_self, &h->t_ctid) ? TM_Deleted : TM_Updated;
}

/* ---------------------------------------------------------------- dispatch */

bool
tam_visible(TamTuple *t, Snapshot snapshot)
{
	switch (snapshot->snapshot_type)
	{
		case SNAPSHOT_MVCC:
			return visible_mvcc(t, snapshot);
		case SNAPSHOT_SELF:
			return visible_self_or_dirty(t, snapshot, false);
		case SNAPSHOT_ANY:
			return true;
		case SNAPSHOT_DIRTY:
			return visible_self_or_dirty(t, snapshot, true);
		case SNAPSHOT_NON_VACUUMABLE:
			return visible_nonvacuumable(t, snapshot);
		case SNAPSHOT_TOAST:
			/* TOAST data lives in heap tables; a tides row is never read this way */
			return true;
		case SNAPSHOT_HISTORIC_MVCC:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("logical decoding of tides tables is not supported")));
	}
	return false;
}

/*
 * Serializable transactions: report a read-write conflict with the
 * transaction that wrote (or removed) a version we just looked at, as
 * heap's HeapCheckForSerializableConflictOut does.
 */
void
tam_ssi_conflict_out(bool visible, Relation rel, TamTuple *t, Snapshot snapshot)
{
	TransactionId xid;
	TransactionId dead_after;

	if (!CheckForSerializableConflictOutNeeded(rel, snapshot))
		return;
	switch (tam_satisfies_vacuum(t, TransactionXmin, &dead_after))
	{
		case HEAPTUPLE_LIVE:
			if (visible)
				return;
			xid = HeapTupleHeaderGetXmin(t->htup.t_data);
			break;
		case HEAPTUPLE_RECENTLY_DEAD:
		case HEAPTUPLE_DELETE_IN_PROGRESS:
			xid = visible ? HeapTupleHeaderGetUpdateXid(t->htup.t_data)
				: HeapTupleHeaderGetXmin(t->htup.t_data);
			if (TransactionIdPrecedes(xid, TransactionXmin))
				return;
			break;
		case HEAPTUPLE_INSERT_IN_PROGRESS:
			xid = HeapTupleHeaderGetXmin(t->htup.t_data);
			break;
		default:
			return;				/* dead: nobody's snapshot sees it */
	}
	if (!TransactionIdIsValid(xid) || TransactionIdEquals(xid, GetTopTransactionIdIfAny()))
		return;
	xid = SubTransGetTopmostTransaction(xid);
	if (TransactionIdPrecedes(xid, TransactionXmin))
		return;
	CheckForSerializableConflictOut(rel, xid, snapshot);
}
