/*
 * workers.c -- background workers that run the engine's work functions.
 *
 *   tides flush        writes sealed memtables to level-0 files
 *   tides compaction N merges levels (tides.compaction_workers of them)
 *   tides sync         fsyncs the whole log every tides.sync_interval (every
 *                      10 s in mode none), advancing the durable horizon
 *   tides maintenance  deletes obsolete files, prepares log segments,
 *                      drops the trees of dropped relations
 *   tides checkpoint guard 0, 1   (tides.wal only, instead of sync) hold
 *                      PostgreSQL's checkpoints until what they cover is in
 *                      SSTables (checkpoint.c)
 *
 * Writers wake them through the engine's wakeup callback (a SetLatch on the
 * worker's latch); each also wakes on a timeout.  A failing work function is
 * retried with growing back-off; the error goes to the server log.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/bgworker_internals.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "runtime/trt.h"

PGDLLEXPORT void trt_worker_main(Datum arg);

enum
{
	KIND_FLUSH, KIND_COMPACT, KIND_SYNC, KIND_MAINT, KIND_GUARD
};

static const char *kind_name[] = {"flush", "compaction", "sync", "maintenance", "checkpoint guard"};

static void
register_one(int kind, int index)
{
	BackgroundWorker w;

	memset(&w, 0, sizeof(w));
	/*
	 * A connection (to no database) puts the worker in the proc array:
	 * without it TransactionIdIsInProgress() run here skips the transaction
	 * in proc array slot 0 (it takes that slot for its own).
	 */
	w.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	/*
	 * With tides.wal a hot standby's replay fills memtables: flush,
	 * compaction and file deletion run there too.  Guards only matter
	 * where checkpoints happen.
	 */
	w.bgw_start_time = trt_wal && kind != KIND_GUARD ? BgWorkerStart_ConsistentState :
		BgWorkerStart_RecoveryFinished;
	w.bgw_restart_time = 1;
	snprintf(w.bgw_library_name, BGW_MAXLEN, "tidesam");
	snprintf(w.bgw_function_name, BGW_MAXLEN, "trt_worker_main");
	if (kind == KIND_COMPACT || kind == KIND_GUARD)
		snprintf(w.bgw_name, BGW_MAXLEN, "tides %s %d", kind_name[kind], index);
	else
		snprintf(w.bgw_name, BGW_MAXLEN, "tides %s", kind_name[kind]);
	snprintf(w.bgw_type, BGW_MAXLEN, "tides %s", kind_name[kind]);
	w.bgw_main_arg = Int32GetDatum(kind * 100 + index);
	RegisterBackgroundWorker(&w);
}

void
trt_register_workers(void)
{
	register_one(KIND_FLUSH, 0);
	for (int i = 0; i < trt_compaction_workers; i++)
		register_one(KIND_COMPACT, i);
	if (trt_wal)
	{
		/* no log of our own to sync; two guards for PostgreSQL's checkpoints (checkpoint.c) */
		register_one(KIND_GUARD, 0);
		register_one(KIND_GUARD, 1);
	}
	else
		register_one(KIND_SYNC, 0);
	register_one(KIND_MAINT, 0);
}

/* how many workers trt_register_workers asks for */
static int
workers_wanted(void)
{
	return 1 + trt_compaction_workers + (trt_wal ? 2 : 1) + 1;
}

/*
 * RegisterBackgroundWorker only logs "too many background workers" when
 * max_worker_processes is used up, and the server runs without the rest:
 * without the sync worker interval mode never syncs, without maintenance no
 * obsolete file is deleted, without the guards (tides.wal) every write
 * waits forever.  So count what was registered, and refuse to start.
 * (Single-user mode runs no workers: no check there.)
 */
void
trt_check_workers_registered(void)
{
	slist_iter	it;
	int			got = 0;
	int			others = 0;
	int			want = workers_wanted();

	if (!IsPostmasterEnvironment)
		return;
	slist_foreach(it, &BackgroundWorkerList)
	{
		RegisteredBgWorker *rw = slist_container(RegisteredBgWorker, rw_lnode, it.cur);

		if (strcmp(rw->rw_worker.bgw_library_name, "tidesam") == 0 &&
			strcmp(rw->rw_worker.bgw_function_name, "trt_worker_main") == 0)
			got++;
		else
			others++;
	}
	if (got < want)
		ereport(FATAL,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("tidesam needs %d background workers, but max_worker_processes = %d left room for only %d of them",
						want, max_worker_processes, got),
				 errdetail("tides runs a flush worker, %d compaction worker(s) (tides.compaction_workers), %s and a maintenance worker; %d other background worker(s) were registered before it.",
						   trt_compaction_workers,
						   trt_wal ? "two checkpoint guards (tides.wal = on)" : "a sync worker",
						   others),
				 errhint("Set max_worker_processes to at least %d, plus what parallel query and logical replication need.",
						 want + others)));
}

static Latch **
my_latch_slot(int kind, int index)
{
	switch (kind)
	{
		case KIND_FLUSH:
			return &trt_shared->flush_latch;
		case KIND_COMPACT:
			return &trt_shared->compact_latch[index];
		case KIND_SYNC:
			return &trt_shared->sync_latch;
		default:
			return &trt_shared->maint_latch;
	}
}

static void
clear_latch_slot(int code, Datum arg)
{
	int			v = DatumGetInt32(arg);

	*my_latch_slot(v / 100, v % 100) = NULL;
}

/* one round of work; true if something was done */
static bool
do_work(tides_db *db, int kind, tides_status *st)
{
	bool		did = false;

	switch (kind)
	{
		case KIND_FLUSH:
			*st = tides_flush_work(db, &did);
			break;
		case KIND_COMPACT:
			*st = tides_compact_work(db, &did);
			break;
		case KIND_SYNC:
			/* interval mode's fsync, and the durable horizon (xact.c) in every mode */
			trt_sync_everything("sync the log");
			break;
		default:
			*st = tides_maint_work(db, &did);
			/* dropping writes (to the WAL too): not on a standby */
			if (*st == TIDES_OK && !RecoveryInProgress())
				trt_process_drops();
			trt_backup_check();
			break;
	}
	return did;
}

void
trt_worker_main(Datum arg)
{
	int			v = DatumGetInt32(arg);
	int			kind = v / 100;
	int			index = v % 100;
	MemoryContext work_cxt;
	tides_db   *db;
	int			backoff_ms = 0;
	TimestampTz retry_at = 0;

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	if (kind == KIND_GUARD)
	{
		trt_guard_main(index);
		proc_exit(0);
	}
	work_cxt = AllocSetContextCreate(TopMemoryContext, "tides worker", ALLOCSET_DEFAULT_SIZES);
	db = trt_engine();
	*my_latch_slot(kind, index) = MyLatch;
	on_shmem_exit(clear_latch_slot, arg);

	while (!ShutdownRequestPending)
	{
		long		timeout = 1000;
		bool		did = false;
		tides_status st = TIDES_OK;
		MemoryContext old;

		/*
		 * We sit in the proc array, so DROP TABLESPACE and DROP DATABASE
		 * wait for us to absorb their proc-signal barriers.
		 */
		CHECK_FOR_INTERRUPTS();

		/*
		 * After a failure, the back-off is waited out even when the latch is
		 * set: writers stalled on this work set it at every retry, and a
		 * failing flush would otherwise be retried, and logged, as often as
		 * they ask (about 50 times a second on a full disk, before the
		 * engine made those writers fail instead of wait).
		 */
		if (retry_at != 0)
		{
			long		left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), retry_at);

			if (left > 0)
			{
				(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, left,
								 PG_WAIT_EXTENSION);
				ResetLatch(MyLatch);
				continue;
			}
			retry_at = 0;
		}
		old = MemoryContextSwitchTo(work_cxt);
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		PG_TRY();
		{
			did = do_work(db, kind, &st);
		}
		PG_CATCH();
		{
			EmitErrorReport();
			FlushErrorState();
			LWLockReleaseAll();
			trt_close_all_iters();
			st = TIDES_IO_ERROR;
		}
		PG_END_TRY();
		MemoryContextSwitchTo(old);
		MemoryContextReset(work_cxt);

		if (st != TIDES_OK && st != TIDES_BUSY)
		{
			if (st != TIDES_IO_ERROR || tides_errmsg(db)[0])
				ereport(LOG, (errmsg("tides %s work failed: %s", kind_name[kind], tides_errmsg(db))));
			backoff_ms = backoff_ms ? Min(backoff_ms * 2, 10000) : 100;
			retry_at = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), backoff_ms);
			timeout = backoff_ms;
		}
		else
		{
			backoff_ms = 0;
			if (did)
				continue;		/* more may be waiting */
			if (kind == KIND_SYNC)
				timeout = trt_guc_sync_mode == TIDES_SYNC_NONE ? 10000 : trt_sync_interval_ms;
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, timeout,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	if (kind == KIND_MAINT)
	{
		/*
		 * A clean stop: the log is synced and the manifest rewritten; with
		 * tides.wal, before the shutdown checkpoint, everything logged goes
		 * into SSTables first.  (A standby's redo starts at its last
		 * restartpoint, which its engine files already cover.)
		 */
		if (trt_wal && !RecoveryInProgress())
			trt_wal_shutdown(db);
		else
			tides_shutdown(db);
	}
	proc_exit(0);
}
