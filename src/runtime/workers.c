/*
 * workers.c -- background workers that run the engine's work functions.
 *
 *   tides flush        writes sealed memtables to level-0 files
 *   tides compaction N merges levels (tides.compaction_workers of them)
 *   tides sync         fsyncs the whole log every tides.sync_interval (every
 *                      10 s in mode none), advancing the durable horizon
 *   tides maintenance  deletes obsolete files, prepares log segments,
 *                      drops the trees of dropped relations
 *
 * Writers wake them through the engine's wakeup callback (a SetLatch on the
 * worker's latch); each also wakes on a timeout.  A failing work function is
 * retried with growing back-off; the error goes to the server log.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "runtime/trt.h"

PGDLLEXPORT void trt_worker_main(Datum arg);

enum
{
	KIND_FLUSH, KIND_COMPACT, KIND_SYNC, KIND_MAINT
};

static const char *kind_name[] = {"flush", "compaction", "sync", "maintenance"};

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
	w.bgw_start_time = BgWorkerStart_RecoveryFinished;
	w.bgw_restart_time = 1;
	snprintf(w.bgw_library_name, BGW_MAXLEN, "tidesam");
	snprintf(w.bgw_function_name, BGW_MAXLEN, "trt_worker_main");
	if (kind == KIND_COMPACT)
		snprintf(w.bgw_name, BGW_MAXLEN, "tides compaction %d", index);
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
	register_one(KIND_SYNC, 0);
	register_one(KIND_MAINT, 0);
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
			if (*st == TIDES_OK)
				trt_process_drops();
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

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

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
		/* a clean stop: the log is synced and the manifest rewritten */
		tides_shutdown(db);
	}
	proc_exit(0);
}
