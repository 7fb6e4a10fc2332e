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
 * row's other entries, the key's entry) -- or two and one when the rows
 * wait too (below).  D1
 * holds as before: every entry is in the log, with the tag, no later than
 * the seal, so before the commit record.  An aborted transaction's deferred
 * entries are dropped: no snapshot will see its rows.  A failed write keeps
 * them, so an error caught by a subtransaction loses nothing.
 *
 * Deferred rows.  A new row of a table whose indexes are all tides_btree
 * ones waits with them too (trt_xact_defer_row): nobody learns its row id
 * but from an index entry, and every entry leading to it is written with
 * it or after it -- a unique entry's write takes the waiting row along, so
 * a one-row INSERT with a primary key writes one batch before the seal, not
 * two.  (A PostgreSQL btree entry is visible the moment it is inserted, so
 * its table's rows never wait; nor do a serializable transaction's, for
 * bulk.c's reason.)  The one reader that learns of a row otherwise is
 * VACUUM setting a visibility-map bit: a block must not be marked all-
 * visible while a row of it waits, or an index-only scan could follow the
 * row's entry and trust the bit between the write and its clear.  So each
 * backend publishes, in a slot of its own, the tree and lowest row id of
 * the rows it holds back (one tree at a time) before it clears their bits,
 * and withdraws it once they are written; VACUUM consults the slots under
 * the map page's lock before it re-reads a block (src/am/vm.c).
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "access/transam.h"
#include "access/twophase.h"
#include "catalog/storage.h"
#include "executor/executor.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "miscadmin.h"

#include "runtime/trt.h"

static bool xact_wrote = false;
static bool xact_sealed = false;
static bool xact_force_durable = false;
static uint64 xact_tag = 0;

/*
 * deferred entries (above); flushed at this size (trt_batch_limit: 1 MB, or
 * less with small memtables -- the batch must fit one), far below a log
 * segment's half
 */
#define TRT_DEFERRED_MAX_BYTES trt_batch_limit()
int			trt_deferred_entries = 0;
static tides_batch *deferred = NULL;

/*
 * The rows a backend holds back (above): one slot per PGPROC, written only
 * by its backend.  Without a lock: `lo` is stored before `tree` and a
 * withdrawal only zeroes `tree`, so a reader that finds its tree there
 * reads that publication's `lo` or a later one; a later one means the rows
 * it stood for are written (a backend withdraws before it publishes again),
 * and their re-read sees them.
 */
typedef struct WaitingRows
{
	pg_atomic_uint64 tree;		/* 0: none */
	pg_atomic_uint64 lo;		/* the lowest of their row ids */
} WaitingRows;

static WaitingRows *waiting_rows = NULL;
static int	n_waiting_rows = 0;
static uint64 my_waiting_tree = 0;	/* what this backend's slot says */

/* slots indexed by PGPROC number: as many as InitProcGlobal makes (vids.c too) */
int
trt_proc_slots(void)
{
	return MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts;
}

Size
trt_waiting_rows_shmem_size(void)
{
	return mul_size(trt_proc_slots(), sizeof(WaitingRows));
}

void
trt_waiting_rows_shmem_init(void)
{
	bool		found;

	n_waiting_rows = trt_proc_slots();
	waiting_rows = ShmemInitStruct("tides waiting rows", trt_waiting_rows_shmem_size(), &found);
	if (!found)
		for (int i = 0; i < n_waiting_rows; i++)
		{
			pg_atomic_init_u64(&waiting_rows[i].tree, 0);
			pg_atomic_init_u64(&waiting_rows[i].lo, 0);
		}
}

static WaitingRows *
my_waiting_rows(void)
{
	Assert(MyProc != NULL && MyProc->pgprocno < n_waiting_rows);
	return &waiting_rows[MyProc->pgprocno];
}

static void
publish_waiting_rows(uint64 tree, uint64 lo)
{
	WaitingRows *w = my_waiting_rows();

	Assert(my_waiting_tree == 0 && tree != 0);
	pg_atomic_write_u64(&w->lo, lo);
	pg_write_barrier();
	pg_atomic_write_u64(&w->tree, tree);
	my_waiting_tree = tree;
	/* before the caller's look at the map's size (src/am/vm.c) */
	pg_memory_barrier();
}

static void
withdraw_waiting_rows(void)
{
	if (my_waiting_tree != 0)
	{
		/* the rows are written (or dropped): nothing to order after this */
		pg_atomic_write_u64(&my_waiting_rows()->tree, 0);
		my_waiting_tree = 0;
	}
}

static void
withdraw_at_exit(int code, Datum arg)
{
	withdraw_waiting_rows();
	trt_vids_release();
}

bool
trt_rows_waiting(uint64 tree, uint64 below)
{
	/* after the caller's store of the map's size, or its buffer lock */
	pg_memory_barrier();
	for (int i = 0; i < n_waiting_rows; i++)
	{
		WaitingRows *w = &waiting_rows[i];

		if (pg_atomic_read_u64(&w->tree) != tree)
			continue;
		pg_read_barrier();
		if (pg_atomic_read_u64(&w->lo) < below)
			return true;
	}
	return false;
}

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

	/* trt_read leaves deferred entries waiting for tree 0's keys */
	Assert(!trt_key_is_meta(key, klen));
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

/* the deferred entries are in the engine: empty the batch, and no row waits any more */
static void
deferred_written(void)
{
	tides_batch_clear(deferred);
	trt_deferred_entries = 0;
	withdraw_waiting_rows();
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

bool
trt_xact_defer_row(tides_batch *b, uint64 tree, uint64 vid)
{
	static bool exit_registered = false;
	int			n = tides_batch_count(b);
	int			before;

	Assert(xact_wrote && tree != 0 && n > 0);
	if (xact_sealed || waiting_rows == NULL || (my_waiting_tree != 0 && my_waiting_tree != tree))
		return false;
	if (deferred == NULL && (deferred = tides_batch_new()) == NULL)
		return false;
	if (trt_deferred_entries > 0 &&
		tides_batch_bytes(deferred) + tides_batch_bytes(b) > TRT_DEFERRED_MAX_BYTES)
		trt_xact_flush_deferred();
	if (!exit_registered)
	{
		before_shmem_exit(withdraw_at_exit, 0);
		exit_registered = true;
	}
	/* row ids of a tree only grow: the first row held back is the lowest */
	if (my_waiting_tree == 0)
		publish_waiting_rows(tree, vid);
	Assert(vid >= pg_atomic_read_u64(&my_waiting_rows()->lo));
	if (trt_deferred_entries == 0)
		tides_batch_set_tag(deferred, xact_tag, false);
	before = tides_batch_count(deferred);
	tides_batch_foreach(b, copy_entry, deferred);
	/* out of memory on the way: counted, so that a commit fails (trt_xact_defer_put) */
	trt_deferred_entries += n;
	if (tides_batch_count(deferred) != before + n)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("tides: could not add a row of %zu bytes to a write batch", tides_batch_bytes(b))));
	return true;
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
	deferred_written();
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
	deferred_written();
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
	withdraw_waiting_rows();
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
		deferred_written();
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

uint64
trt_full_xid(TransactionId xid)
{
	FullTransactionId next = ReadNextFullTransactionId();

	/* xid is at most 2^31 behind next: place it in next's epoch (or the one before) */
	return U64FromFullTransactionId(next) - (uint32) (XidFromFullTransactionId(next) - xid);
}

/*
 * Which committed deletions may an index forget?  nbtree drops an index
 * entry (bottom-up or LP_DEAD deletion, WAL-logged) or marks it killed (a
 * hint that reaches disk) once the table AM says every version it leads to
 * is dead to all.  But a deleter's tides records may be lost in an OS crash
 * in the relaxed sync modes (and, briefly, in any mode until its seal's
 * fsync is done), bringing the old version back without its index entry.
 * So a deletion counts only once the deleter's records are durable (and its
 * commit record flushed: src/am/visibility.c, tam_surely_dead): true of
 * every transaction older than the oldest one running when the last sync of
 * the whole log began.  The sync worker advances that horizon every
 * tides.sync_interval (every 10 s in mode none); VACUUM advances it too.
 */
static FullTransactionId
oldest_running_full(void)
{
	return FullTransactionIdFromU64(trt_full_xid(GetOldestActiveTransactionId()));
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
	/*
	 * With tides.wal whatever relies on the deletion -- an index entry's
	 * removal, a frozen xid -- is WAL-logged after the deleter's commit
	 * record, and no engine file holds a change the WAL may lose: if the
	 * consequence survives a crash, so does the commit.
	 */
	if (trt_wal)
		return true;
	return trt_full_xid(xid) < pg_atomic_read_u64(&trt_shared->durable_horizon);
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
			trt_backup_xact_end();
			trt_read_forget();
			trt_vids_release();
			/* scans a failed (sub)transaction left open never end */
			trt_held_views_reset();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			Assert(trt_deferred_entries == 0);
			xact_wrote = xact_sealed = xact_force_durable = false;
			trt_backup_xact_end();
			trt_read_forget();
			trt_vids_release();
			/* scans a failed (sub)transaction left open never end */
			trt_held_views_reset();
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
