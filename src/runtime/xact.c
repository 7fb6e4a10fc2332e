/*
 * xact.c -- tying engine writes to PostgreSQL transactions.
 *
 * Every batch a transaction writes carries its tag, (incarnation, top-level
 * xid).  Before PostgreSQL writes the commit (or prepare) record, an empty
 * batch seals the tag: after a crash the engine reports every tag whose seal
 * did not survive, and such a transaction's rows are invisible even if its
 * commit record survived (docs/durability.md, D1).
 *
 * The seal is written with write(), so it reaches the kernel before the
 * commit record exists (D3).  Then, by sync mode:
 *   full      fsync the log up to the seal (group commit) and make
 *             PostgreSQL flush its commit record too (ForceSyncCommit);
 *   interval,
 *   none      nothing more, unless the transaction also wrote WAL and
 *             PostgreSQL is about to flush its commit record synchronously:
 *             then the tides records are made durable first, so an OS crash
 *             cannot keep the commit and lose the rows (D3b).
 * PostgreSQL itself flushes the commit record synchronously also when the
 * transaction drops or replaces relation files (TRUNCATE, DROP, CLUSTER) and
 * after ForceSyncCommit (CREATE DATABASE and friends, which tell us through
 * trt_xact_force_durable): then too the tides records go first.
 *
 * ON COMMIT DELETE ROWS truncates temporary tables after the PRE_COMMIT
 * callbacks, that is after the seal.  A tagged write then would reopen the
 * tag and make recovery judge the whole transaction lost; those writes go
 * untagged (temporary relations do not survive a crash anyway) and without
 * a sync of their own.
 *
 * An aborted transaction seals its tag too, so the engine can forget it.
 *
 * Deferred entries.  Some writes need not reach the engine when they are
 * made: the entries of a non-unique tides_btree index without an exclusion
 * constraint (tidx_insert), which no other backend looks for before the
 * transaction commits -- unique and exclusion checks read only their own
 * indexes' entries, and other snapshots cannot see the rows.  They collect
 * in a backend-local batch with the transaction's tag, which goes to the
 * engine before this backend's next write or read (trt_write_batch,
 * trt_read, trt_open_iter; not a unique check's look, trt_iter_open_stem,
 * which wants none of them), before a parallel plan starts its workers,
 * or as the sealing batch itself.  A write of the same tag takes them along
 * in one engine write (trt_xact_write_with_deferred).  A one-row INSERT
 * into a table with a primary key and three other indexes then writes three
 * batches (the row, the key's entry, the other entries with the seal)
 * instead of six; a multi-row INSERT two per row (the row with the previous
 * row's other entries, the key's entry).  D1
 * holds as before: every entry is in the log, with the tag, no later than
 * the seal, so before the commit record.  An aborted transaction's deferred
 * entries are dropped: no snapshot will see its rows.  A failed write keeps
 * them, so an error caught by a subtransaction loses nothing.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "access/transam.h"
#include "catalog/storage.h"
#include "executor/executor.h"
#include "storage/procarray.h"
#include "miscadmin.h"

#include "runtime/trt.h"

static bool xact_wrote = false;
static bool xact_sealed = false;
static bool xact_force_durable = false;
static uint64 xact_tag = 0;

/* deferred entries (above); flushed at this size, far below a log segment's half */
#define TRT_DEFERRED_MAX_BYTES (1024 * 1024)
int			trt_deferred_entries = 0;
static tides_batch *deferred = NULL;

void
trt_xact_note_write(void)
{
	if (!xact_wrote)
	{
		(void) trt_engine();	/* finalises the incarnation if needed */
		/*
		 * After the seal, writes go untagged (and no xid may be assigned).
		 * With tides.wal the WAL orders commits: no tags, but an xid, so
		 * that the transaction writes a commit record.
		 */
		if (trt_wal && !xact_sealed)
			(void) GetTopTransactionId();
		else if (!xact_sealed)
			xact_tag = trt_make_tag(trt_shared->incarnation, GetTopTransactionId());
		xact_wrote = true;
	}
}

uint64
trt_xact_tag(void)
{
	Assert(xact_wrote);
	return xact_sealed || trt_wal ? 0 : xact_tag;
}

void
trt_xact_tag_batch(tides_batch *b)
{
	Assert(xact_wrote);
	if (xact_sealed)
	{
		tides_batch_set_tag(b, 0, false);
		tides_batch_defer_sync(b);
	}
	else
		tides_batch_set_tag(b, xact_tag, false);
}

void
trt_xact_defer_put(const void *key, size_t klen, const void *val, size_t vlen)
{
	tides_batch *b;

	trt_xact_note_write();
	if (xact_sealed)
	{
		/* after the seal (ON COMMIT DELETE ROWS): at once, and untagged */
		b = trt_local_batch();
		trt_xact_tag_batch(b);
	}
	else
	{
		if (deferred == NULL && (deferred = tides_batch_new()) == NULL)
			ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
		b = deferred;
		if (trt_deferred_entries == 0)
			tides_batch_set_tag(b, xact_tag, false);
	}
	if (tides_batch_put(b, key, klen, val, vlen) != TIDES_OK)
	{
		/*
		 * Out of memory: the batch is unusable now.  Counted as waiting, so
		 * that a commit writes it and fails; an abort drops it.
		 */
		if (b == deferred)
			trt_deferred_entries++;
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("tides: could not add an entry of %zu bytes to a write batch", klen + vlen)));
	}
	if (b != deferred)
		trt_write_batch(b);
	else
	{
		trt_deferred_entries++;
		if (tides_batch_bytes(b) >= TRT_DEFERRED_MAX_BYTES)
			trt_xact_flush_deferred();
	}
}

/* add every entry of a batch to another (tides_batch_foreach callback) */
static void
copy_entry(void *arg, bool is_delete, const void *key, size_t klen, const void *val, size_t vlen)
{
	tides_batch *to = arg;

	if (is_delete)
		(void) tides_batch_delete(to, key, klen);
	else
		(void) tides_batch_put(to, key, klen, val, vlen);
}

/* is b just like the deferred batch (tag, no seal, sync mark), so that both may go as one? */
static bool
same_kind_as_deferred(const tides_batch *b)
{
	uint64_t	t1,
				t2;
	bool		s1,
				s2,
				d1,
				d2;

	return tides_batch_get_tag(b, &t1, &s1, &d1) &&
		tides_batch_get_tag(deferred, &t2, &s2, &d2) &&
		t1 == t2 && !s1 && !s2 && d1 == d2;
}

/*
 * Write the deferred entries and then b as one batch, when b carries what
 * they carry (the same tag, no seal, the same sync mark) and both are small:
 * the same as writing them one after the other, in one engine write instead
 * of two (a row after the previous row's index entries).  The deferred
 * entries are dropped only once the write succeeded; a failed write leaves
 * them waiting and b unwritten, as two writes would.  False (nothing
 * written) when they cannot go together.
 */
bool
trt_xact_write_with_deferred(tides_batch *b, uint64 *lsn)
{
	static tides_batch *merged = NULL;

	if (trt_deferred_entries == 0 || xact_sealed || tides_batch_count(b) == 0 ||
		tides_batch_bytes(b) + tides_batch_bytes(deferred) > TRT_DEFERRED_MAX_BYTES ||
		!same_kind_as_deferred(b))
		return false;
	if (merged == NULL && (merged = tides_batch_new()) == NULL)
		return false;
	tides_batch_clear(merged);
	tides_batch_set_tag(merged, xact_tag, false);
	tides_batch_foreach(deferred, copy_entry, merged);
	tides_batch_foreach(b, copy_entry, merged);
	/* out of memory on the way (the counts tell): the usual two writes */
	if (tides_batch_count(merged) != tides_batch_count(deferred) + tides_batch_count(b) ||
		!same_kind_as_deferred(merged))
		return false;
	*lsn = trt_write_batch_now(merged);
	tides_batch_clear(merged);
	tides_batch_clear(deferred);
	trt_deferred_entries = 0;
	return true;
}

void
trt_xact_flush_deferred(void)
{
	if (trt_deferred_entries == 0)
		return;
	/* deferred entries are never left behind a seal: they go with it */
	Assert(!xact_sealed && xact_wrote);
	(void) trt_write_batch_now(deferred);
	tides_batch_clear(deferred);
	trt_deferred_entries = 0;
}

/* at abort; a new batch next time, as this one may have run out of memory */
static void
discard_deferred(void)
{
	if (trt_deferred_entries > 0)
	{
		tides_batch_free(deferred);
		deferred = NULL;
	}
	trt_deferred_entries = 0;
}

void
trt_xact_force_durable(void)
{
	xact_force_durable = true;
}

/* will PostgreSQL flush this transaction's commit record before returning? */
static bool
commit_will_be_flushed(void)
{
	RelFileNode *rels;
	int			nrels;

	if (xact_force_durable)
		return true;
	if (XactLastRecEnd != 0 && synchronous_commit > SYNCHRONOUS_COMMIT_OFF)
		return true;
	nrels = smgrGetPendingDeletes(true, &rels);
	if (rels)
		pfree(rels);
	return nrels > 0;
}

/* write the sealing batch, with the deferred entries; returns its log position */
static uint64
seal(void)
{
	tides_batch *b = trt_deferred_entries > 0 ? deferred : trt_local_batch();
	uint64		lsn;

	/* a tag is sealed once, by the transaction that wrote under it */
	Assert(xact_wrote && !xact_sealed && xact_tag != 0);
	tides_batch_set_tag(b, xact_tag, true);
	lsn = trt_write_batch_now(b);
	if (b == deferred)
	{
		tides_batch_clear(deferred);
		trt_deferred_entries = 0;
	}
	return lsn;
}

static void
seal_and_sync(bool force_durable)
{
	uint64		lsn;
	tides_status s = TIDES_OK;

	if (trt_wal)
	{
		/* the commit record is the seal, and PostgreSQL flushes it as it decides */
		trt_xact_flush_deferred();
		return;
	}
	lsn = seal();

	if (trt_guc_sync_mode == TIDES_SYNC_FULL)
	{
		/* tides_write of a sealing batch has synced in full mode */
		ForceSyncCommit();
	}
	else if (force_durable)
		s = tides_sync(trt_engine(), lsn, true);
	if (s != TIDES_OK)
		trt_engine_error(s, "make the transaction's rows durable");
}

static void
seal_quietly(void)
{
	tides_batch *b;
	tides_status s = TIDES_BUSY;

	/* during abort: no ERROR may escape, and no long waits */
	b = tides_batch_new();
	if (b == NULL)
		return;
	tides_batch_set_tag(b, xact_tag, true);
	for (int attempt = 0; attempt < 1000 && s == TIDES_BUSY; attempt++)
	{
		s = tides_write(trt_engine(), b, NULL);
		if (s == TIDES_BUSY)
			pg_usleep(1000L);
	}
	tides_batch_free(b);
	Assert(trt_deferred_entries == 0);	/* discarded before */
	if (s != TIDES_OK)
		elog(WARNING, "tides: could not close an aborted transaction's records: %s",
			 tides_status_name(s));
}

/*
 * Which committed deletions may an index forget?  nbtree drops an index
 * entry (bottom-up or LP_DEAD deletion, WAL-logged) or marks it killed (a
 * hint that reaches disk) once the table AM says every version it leads to
 * is dead to all.  But a deleter's tides records may be lost in an OS crash
 * in the relaxed sync modes (and, briefly, in any mode until its seal's
 * fsync is done), bringing the old version back without its index entry.
 * So a deletion counts only once the deleter's records are durable: true of
 * every transaction older than the oldest one running when the last sync of
 * the whole log began.  The sync worker advances that horizon every
 * tides.sync_interval (every 10 s in mode none); VACUUM advances it too.
 */
static FullTransactionId
oldest_running_full(void)
{
	FullTransactionId next = ReadNextFullTransactionId();
	TransactionId oldest = GetOldestActiveTransactionId();

	/* oldest is at most 2^31 behind next: place it in next's epoch (or the one before) */
	return FullTransactionIdFromU64(U64FromFullTransactionId(next) -
									(uint32) (XidFromFullTransactionId(next) - oldest));
}

void
trt_sync_everything(const char *why)
{
	FullTransactionId horizon;
	tides_status s;
	uint64		cur;

	/* with tides.wal a deleter's commit record precedes everything that relies on it */
	if (trt_wal)
		return;
	horizon = oldest_running_full();
	s = tides_sync(trt_engine(), 0, true);

	if (s != TIDES_OK)
		trt_engine_error(s, why);
	cur = pg_atomic_read_u64(&trt_shared->durable_horizon);
	while (cur < U64FromFullTransactionId(horizon) &&
		   !pg_atomic_compare_exchange_u64(&trt_shared->durable_horizon, &cur,
										   U64FromFullTransactionId(horizon)))
		;
}

bool
trt_xid_durable(TransactionId xid)
{
	FullTransactionId next;
	uint64		full;

	/*
	 * With tides.wal whatever relies on the deletion -- an index entry's
	 * removal, a frozen xid -- is WAL-logged after the deleter's commit
	 * record, and no engine file holds a change the WAL may lose: if the
	 * consequence survives a crash, so does the commit.
	 */
	if (trt_wal)
		return true;
	next = ReadNextFullTransactionId();
	full = U64FromFullTransactionId(next) - (uint32) (XidFromFullTransactionId(next) - xid);

	return full < pg_atomic_read_u64(&trt_shared->durable_horizon);
}

/* the transaction callback (src/module/module.c registers it) */
void
trt_xact_callback(XactEvent event)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
			if (xact_wrote)
				seal_and_sync(commit_will_be_flushed());
			/* even when nothing was written yet: a first write now must go untagged */
			xact_sealed = true;
			break;
		case XACT_EVENT_PRE_PREPARE:
			/* PREPARE always flushes its WAL record: the rows go first */
			if (xact_wrote)
				seal_and_sync(true);
			xact_sealed = true;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			discard_deferred();
			if (xact_wrote && !xact_sealed && !trt_wal)
				seal_quietly();
			xact_wrote = xact_sealed = xact_force_durable = false;
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			Assert(trt_deferred_entries == 0);
			xact_wrote = xact_sealed = xact_force_durable = false;
			break;
		default:
			break;
	}
}

/*
 * ExecutorRun hook, before the plan runs: parallel workers read the engine,
 * not this backend's deferred entries.
 */
void
trt_executor_run_begin(QueryDesc *qd)
{
	if (trt_deferred_entries > 0 && qd->plannedstmt->parallelModeNeeded)
		trt_xact_flush_deferred();
}
