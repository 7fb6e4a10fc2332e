/*
 * tidx_hint.c -- where a scan from the start of a unique index may begin.
 *
 * A table that is inserted at one end and deleted at the other (a queue,
 * the Insert Benchmark's "delete the lowest keys") leaves, at the low end of
 * its primary key, a run of deleted entries: tombstones in the memtables
 * and upper levels, over the entries they delete further down, until
 * compaction drops both.  Every `min(pk)` or `ORDER BY pk LIMIT n` walks
 * that whole run before its first live entry -- the run grows as fast as
 * rows are deleted, and the walk was most of the CPU of such a workload.
 *
 * A hint records, per index tree, an interval [lo, hi) of encoded keys in
 * which the engine holds no key at all (the last scan from lo found hi as
 * its first key).  A later forward scan whose start lies in [lo, hi) seeks
 * to hi instead.  Entries are only ever *added* to an index by its
 * inserters, and a hint is kept only for unique indexes, whose entries are
 * written at once by tidx_insert (never deferred) -- so the inserters are
 * the only writers that can make a hint false, and they say so.  Hints live
 * in slots (a hash of the tree); each slot has a generation and a count of
 * inserts in flight, shared by the trees that hash there:
 *
 *   - an inserter of key k calls tidx_hint_write_begin before its write and
 *     tidx_hint_write_end after it (also when it fails): each bumps the
 *     generation, the first raises and the second lowers the count, and
 *     both drop the slot's hint if it is the tree's and k lies below hi;
 *   - a scan reads the generation before it opens its iterator (rescan),
 *     and sets a hint only if, when it does, the generation is unchanged and
 *     no insert is in flight: so every insert in the slot either ended
 *     before the generation was read (published before the scan's read
 *     point: the scan saw it) or begins after the hint is set (and drops it
 *     if it lands inside);
 *   - a scan uses a hint it reads after its iterator was opened: an insert
 *     published before that read point began before it, and so either had
 *     dropped the hint or preceded the scan that set it (which saw it).
 *
 * Deletions (kills, VACUUM) only remove keys and never make a hint false.
 *
 * Dead runs.  A deleted row's entry stays in the engine until the deletion
 * is dead to every snapshot (then a scan kills it, or VACUUM deletes it);
 * while anything holds the oldest snapshot back -- an autovacuum ANALYZE
 * holds one for its whole sampling -- every `min(pk)` walked every entry
 * deleted since, fetching each row to find it dead: in the Insert
 * Benchmark, a fifth of the server's CPU.  So a hint may also cover entries
 * whose rows a scan found deleted, with a horizon: the newest deleter + 1
 * (as a full xid): a slot holds, beside [lo, hi), a run [lo, run_hi).
 * Every version behind an entry of the run was deleted by a committed
 * transaction below the horizon; a snapshot whose xmin is at or above it saw
 * all those deleters end, so it sees none of those versions, and no other
 * writer than the inserters can add a version it sees behind an existing
 * entry (a HOT update needs a live version to update).  Only MVCC snapshots
 * with xmin >= horizon pass over the run; others use [lo, hi) alone.  And
 * only while the run's newest deleter is not yet removable: from then on a
 * scan walks the run again and kills its entries, as before runs existed --
 * a run passed over forever would keep its entries from ever being killed,
 * and every scan too old for it (or after an insert below it) would walk
 * all of them (an l.i1-like run was a third slower so).  Inserts below
 * run_hi drop the run, below hi the whole hint.
 *
 * Unique checks read without hints.  During recovery (a hot standby, whose
 * index entries arrive by WAL replay, not through inserters) hints are
 * neither set nor used; shared memory starts empty at every server start.
 * A backend that dies (FATAL) inside an insert leaves its slot's count
 * raised: that slot sets no hint until the server restarts, which only
 * costs the optimisation.
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xlog.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/snapmgr.h"

#include "index/tidx.h"

#define TIDX_HINT_SLOTS		1024

typedef struct TidxHintSlot
{
	slock_t		lock;
	uint64		gen;			/* bumped by every insert's begin and end */
	uint32		inflight;		/* inserts between begin and end */
	bool		valid;
	uint64		tree;			/* whose hint it is */
	uint8		lolen;
	uint8		hilen;
	uint8		runlen;			/* 0: no dead run */
	uint8		lo[TIDX_HINT_KEY_MAX];
	uint8		hi[TIDX_HINT_KEY_MAX];	/* [lo, hi): no key at all */
	uint8		run_hi[TIDX_HINT_KEY_MAX];	/* [lo, run_hi): keys of deleted versions only */
	TransactionId run_xid;		/* their newest deleter */
	uint64		run_horizon;	/* full xid of run_xid + 1 */
} TidxHintSlot;

static TidxHintSlot *slots = NULL;

static Size
hint_shmem_size(void)
{
	return mul_size(TIDX_HINT_SLOTS, sizeof(TidxHintSlot));
}

void
tidx_hint_shmem_request(void)
{
	RequestAddinShmemSpace(hint_shmem_size());
}

static TidxHintSlot *
slot_of(uint64 tree)
{
	if (slots == NULL)
	{
		bool		found;
		TidxHintSlot *s;

		LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
		s = ShmemInitStruct("tides_btree scan hints", hint_shmem_size(), &found);
		if (!found)
		{
			memset(s, 0, hint_shmem_size());
			for (int i = 0; i < TIDX_HINT_SLOTS; i++)
				SpinLockInit(&s[i].lock);
		}
		LWLockRelease(AddinShmemInitLock);
		slots = s;
	}
	return &slots[(tree * UINT64CONST(0x9E3779B97F4A7C15)) >> 54];
}

static int
cmp_key(const uint8 *a, int alen, const uint8 *b, int blen)
{
	int			r = memcmp(a, b, Min(alen, blen));

	return r != 0 ? r : (alen > blen) - (alen < blen);
}

static void
note_write(uint64 tree, const uint8 *k, int klen, int delta)
{
	TidxHintSlot *s = slot_of(tree);

	SpinLockAcquire(&s->lock);
	s->gen++;
	s->inflight += delta;
	if (s->valid && s->tree == tree)
	{
		if (cmp_key(k, klen, s->hi, s->hilen) < 0)
			s->valid = false;
		else if (s->runlen > 0 && cmp_key(k, klen, s->run_hi, s->runlen) < 0)
			s->runlen = 0;
	}
	SpinLockRelease(&s->lock);
}

/* an inserter of key k into a unique index's tree, before its write */
void
tidx_hint_write_begin(uint64 tree, const uint8 *k, int klen)
{
	note_write(tree, k, klen, 1);
}

/* ... and after it, whether it succeeded or not */
void
tidx_hint_write_end(uint64 tree, const uint8 *k, int klen)
{
	note_write(tree, k, klen, -1);
}

/* a scan, before it opens its iterator: the generation to set a hint with */
uint64
tidx_hint_generation(uint64 tree)
{
	TidxHintSlot *s = slot_of(tree);
	uint64		gen;

	SpinLockAcquire(&s->lock);
	gen = s->gen;
	SpinLockRelease(&s->lock);
	return gen;
}

/* what a scan with this snapshot passes as snap_xmin: 0 when it may use no dead run */
uint64
tidx_hint_snapshot_xmin(Snapshot snapshot)
{
	if (snapshot == NULL || snapshot->snapshot_type != SNAPSHOT_MVCC ||
		!TransactionIdIsNormal(snapshot->xmin))
		return 0;
	return trt_full_xid(snapshot->xmin);
}

/*
 * A scan about to seek to `start`, with snapshot xmin snap_xmin
 * (tidx_hint_snapshot_xmin): if a hint covers it, the key to seek to
 * instead (copied into *to, which has TIDX_HINT_KEY_MAX bytes), else false.
 * A dead run is passed over only while its newest deleter is not yet
 * removable by vistest's horizon (NULL: never): once it is, the scan walks
 * the run and kills its entries, so that they do not outlive the hold on
 * the horizon (a scan too old for the run would walk them all again).
 * Call only after the scan's iterator was opened.
 */
bool
tidx_hint_lookup(uint64 tree, const uint8 *start, int slen, uint64 snap_xmin,
				 GlobalVisState *vistest, uint8 *to, int *tolen)
{
	TidxHintSlot *s;
	bool		in_empty = false;
	bool		in_run = false;
	TransactionId run_xid = InvalidTransactionId;
	uint8		run_hi[TIDX_HINT_KEY_MAX];
	int			runlen = 0;

	if (RecoveryInProgress())
		return false;
	s = slot_of(tree);
	SpinLockAcquire(&s->lock);
	if (s->tree == tree && s->valid && cmp_key(start, slen, s->lo, s->lolen) >= 0)
	{
		in_empty = cmp_key(start, slen, s->hi, s->hilen) < 0;
		if (in_empty)
		{
			memcpy(to, s->hi, s->hilen);
			*tolen = s->hilen;
		}
		in_run = s->runlen > 0 && vistest != NULL && snap_xmin != 0 && s->run_horizon <= snap_xmin &&
			cmp_key(start, slen, s->run_hi, s->runlen) < 0;
		if (in_run)
		{
			run_xid = s->run_xid;
			runlen = s->runlen;
			memcpy(run_hi, s->run_hi, runlen);
		}
	}
	SpinLockRelease(&s->lock);
	/* (outside the spin lock: the test may compute the horizons) */
	if (in_run && !GlobalVisTestIsRemovableXid(vistest, run_xid))
	{
		memcpy(to, run_hi, runlen);
		*tolen = runlen;
		return true;
	}
	return in_empty;
}

/*
 * A scan that sought to `start` found `first` as the first entry there that
 * it cannot pass over (or the end of the tree: first = NULL): [start, first)
 * holds no key (deleted_by = InvalidTransactionId or FrozenTransactionId), or
 * only entries of versions deleted by committed transactions, the newest of
 * them deleted_by (a dead run).  gen is what tidx_hint_generation returned
 * before the scan's iterator was opened.  An interval that starts inside
 * the tree's hint extends it (a dead run: under the later of the two
 * horizons); one that starts elsewhere replaces it.
 */
void
tidx_hint_set(uint64 tree, uint64 gen, const uint8 *start, int slen, const uint8 *first, int flen,
			  TransactionId deleted_by)
{
	TidxHintSlot *s;
	bool		run = TransactionIdIsNormal(deleted_by);
	uint64		horizon = run ? trt_full_xid(deleted_by) + 1 : 0;

	if (RecoveryInProgress() || first == NULL || slen > TIDX_HINT_KEY_MAX || flen > TIDX_HINT_KEY_MAX ||
		cmp_key(start, slen, first, flen) >= 0)
		return;
	s = slot_of(tree);
	SpinLockAcquire(&s->lock);
	if (s->gen == gen && s->inflight == 0)
	{
		bool		inside = s->valid && s->tree == tree && cmp_key(start, slen, s->lo, s->lolen) >= 0 &&
			(cmp_key(start, slen, s->hi, s->hilen) <= 0 ||
			 (s->runlen > 0 && cmp_key(start, slen, s->run_hi, s->runlen) <= 0));

		if (!inside)
		{
			memcpy(s->lo, start, slen);
			s->lolen = (uint8) slen;
			memcpy(s->hi, start, slen);		/* [start, start): empty until below */
			s->hilen = (uint8) slen;
			s->runlen = 0;
			s->tree = tree;
			s->valid = true;
		}
		if (!run)
		{
			/* no key in [start, first): only if start is not past hi */
			if (cmp_key(start, slen, s->hi, s->hilen) <= 0 && cmp_key(first, flen, s->hi, s->hilen) > 0)
			{
				memcpy(s->hi, first, flen);
				s->hilen = (uint8) flen;
				if (s->runlen > 0 && cmp_key(first, flen, s->run_hi, s->runlen) >= 0)
					s->runlen = 0;	/* the run is gone from the engine */
			}
		}
		else if (s->runlen == 0 || cmp_key(first, flen, s->run_hi, s->runlen) > 0)
		{
			memcpy(s->run_hi, first, flen);
			s->run_xid = s->runlen > 0 && TransactionIdFollows(s->run_xid, deleted_by) ?
				s->run_xid : deleted_by;
			s->run_horizon = s->runlen > 0 ? Max(s->run_horizon, horizon) : horizon;
			s->runlen = (uint8) flen;
		}
	}
	SpinLockRelease(&s->lock);
}
