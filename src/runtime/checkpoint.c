/*
 * checkpoint.c -- with tides.wal = on: what a PostgreSQL checkpoint must wait
 * for, base backups, and the engine's state at the ends of recovery.
 *
 * A checkpoint with redo point R tells recovery to start replaying at R,
 * so by the time its record is written every tides batch logged before R
 * must be in an SSTable (heap's equivalent: CheckPointBuffers).  PostgreSQL
 * 15 has no checkpoint hook, but CreateCheckPoint, after CheckPointGuts and
 * before it writes the checkpoint record, waits for every virtual
 * transaction that has DELAY_CHKPT_COMPLETE set at that moment.  Two
 * "checkpoint guard" workers keep it set, each inside a transaction of its
 * own (a virtual xid and nothing else: no xid, no snapshot, no lock):
 *
 *   - a guard that sees a redo point newer than the last one handled takes
 *     a flush barrier (src/engine: every batch whose XLogInsert returned
 *     before it is in a memtable the barrier sealed), waits until the
 *     barrier passed, saves an engine checkpoint named after R (for base
 *     backups, below), logs XLOG_TIDES_CHECKPOINT(R) for standbys, and
 *     records R as handled;
 *   - while a checkpoint is in progress (its redo point is newer than
 *     the last completed one's, GetOldestRestartPoint) and its redo point
 *     has been handled, the guards take turns releasing their flags:
 *     a release ends the guard's transaction, so its virtual xid changes
 *     and a checkpoint waiting for it goes on; the guard then flags again
 *     under a new one.  A guard releases only while the other is flagged.
 *     So whenever the checkpointer looks, at least one guard is flagged,
 *     and the checkpoint waits until R is handled.  (Which guards the
 *     checkpointer collected nobody can tell, hence the turns for as long
 *     as it runs: a few transaction ends per 10 ms, only then.)
 *
 * Writes wait until both guards run (trt_wait_for_guards).  Restartpoints
 * on a standby wait for nobody; there the marker does the work: replaying
 * XLOG_TIDES_CHECKPOINT(R) flushes the standby's memtables before the
 * checkpoint record that follows it can become a restartpoint.
 *
 * Base backups.  pg_basebackup copies pg_tides file by file while the
 * engine writes, flushes and compacts.  The guard's engine checkpoint
 * "CKPT-<R>" names a complete set of files as of R; while a backup runs no
 * obsolete file is deleted (tides_hold_file_deletion), so the copy holds
 * every file of the checkpoint of its own start.  A backup is running when
 * a backend reports PROGRESS_COMMAND_BASEBACKUP (pg_basebackup reports it
 * before it asks for its checkpoint) or a session is between
 * pg_backup_start() and pg_backup_stop() (counted as described above
 * trt_backup_function_execute).
 * A server started from such a copy (backup_label) restores the engine to
 * CKPT-<START WAL LOCATION> before anything opens it, and WAL replay brings
 * it forward -- to a standby's present, or to a point-in-time target.
 *
 * Ends of recovery: the end-of-recovery checkpoint and promotion come
 * right after rm_cleanup, which flushes what redo put into memtables
 * (trt_flush_after_redo).  A clean shutdown closes the engine to writes
 * and flushes everything before the shutdown checkpoint
 * (trt_wal_shutdown), so nothing logged before it needs replay.
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xlogrecovery.h"
#include "commands/progress.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "utils/backend_status.h"
#include "utils/fmgroids.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "runtime/trt.h"

/* ---- engine checkpoints */

static void
ckpt_name(char *buf, size_t cap, XLogRecPtr redo)
{
	snprintf(buf, cap, "%08X%08X", LSN_FORMAT_ARGS(redo));
}

/* seal and flush every memtable that holds anything now (waiting, interruptibly) */
void
trt_flush_everything(tides_db *db)
{
	uint64		ticket;
	tides_status s;

	while ((s = tides_flush_barrier(db, &ticket)) == TIDES_BUSY)
	{
		bool		did;

		if ((s = tides_flush_work(db, &did)) != TIDES_OK)
			break;
		if (!did)
			pg_usleep(1000L);
		CHECK_FOR_INTERRUPTS();
	}
	if (s != TIDES_OK)
		trt_engine_error(s, "seal a memtable for a checkpoint");
	while (!tides_flush_barrier_passed(db, ticket))
	{
		bool		did;

		s = tides_flush_work(db, &did);
		if (s != TIDES_OK)
			trt_engine_error(s, "flush memtables for a checkpoint");
		if (!did)
			pg_usleep(1000L);	/* another process is flushing */
		CHECK_FOR_INTERRUPTS();
	}
}

/* remove the engine checkpoints older than keep (none while a backup may need them) */
static void
prune_checkpoints(tides_db *db, const char *keep)
{
	char		dir[MAXPGPATH];
	DIR		   *d;
	struct dirent *de;

	snprintf(dir, sizeof(dir), "%s/pg_tides", DataDir);
	d = AllocateDir(dir);
	while ((de = ReadDir(d, dir)) != NULL)
	{
		if (strncmp(de->d_name, "CKPT-", 5) != 0 || strlen(de->d_name) != 5 + 16 ||
			strcmp(de->d_name + 5, keep) >= 0)
			continue;
		(void) tides_checkpoint_remove(db, de->d_name + 5);
	}
	FreeDir(d);
}

/* ---- running base backups */

/* does some backend report a base backup in progress (pg_basebackup)? */
static bool
basebackup_reported(void)
{
	bool		found = false;
	int			n;

	pgstat_clear_backend_activity_snapshot();
	n = pgstat_fetch_stat_numbackends();
	for (int i = 1; i <= n && !found; i++)
	{
		LocalPgBackendStatus *l = pgstat_fetch_stat_local_beentry(i);

		found = l != NULL && l->backendStatus.st_progress_command == PROGRESS_COMMAND_BASEBACKUP;
	}
	pgstat_clear_backend_activity_snapshot();
	return found;
}

static bool
backup_running(void)
{
	return pg_atomic_read_u32(&trt_shared->lowlevel_backups) > 0 || basebackup_reported();
}

/*
 * Keep obsolete files while a backup runs; let them go when none does.
 * Called with ckpt_lock held, by a guard before it saves a checkpoint and
 * by the maintenance worker now and then.
 */
static void
update_deletion_hold(tides_db *db)
{
	bool		want = backup_running();

	if (want != trt_shared->deletion_held)
	{
		tides_hold_file_deletion(db, want);
		trt_shared->deletion_held = want;
		ereport(LOG,
				(errmsg(want ? "tides: a base backup is running: obsolete engine files are kept until it ends" :
						"tides: no base backup is running any more: obsolete engine files are deleted again")));
	}
}

void
trt_backup_check(void)
{
	if (!trt_wal || trt_shared == NULL || !trt_shared->engine_ok)
		return;
	LWLockAcquire(trt_shared->ckpt_lock, LW_EXCLUSIVE);
	update_deletion_hold(trt_engine());
	LWLockRelease(trt_shared->ckpt_lock);
}

/*
 * The low-level backup API.  No other backend can tell that a session is
 * between pg_backup_start() and pg_backup_stop() (PostgreSQL 15 keeps that
 * count private to xlog.c), and an fmgr hook is never consulted for a
 * built-in function (fmgr_info's fast path returns first).  What does see
 * every function, built-ins included, is the object access hook's
 * OAT_FUNCTION_EXECUTE, raised when the executor initialises a call: the
 * session counts itself in there, before pg_backup_start() runs and so
 * before the checkpoint it requests, whose guard then holds deletions.  It
 * counts itself out at the end of the first transaction after which
 * get_backup_status() says no backup runs in this session (the one of
 * pg_backup_stop(), or of a pg_backup_start() that failed or was only
 * planned), or when it exits (PostgreSQL then aborts its backup).
 */
static bool session_in_backup = false;
static bool exit_callback_registered = false;

static void
backup_session_exit(int code, Datum arg)
{
	if (session_in_backup)
	{
		Assert(pg_atomic_read_u32(&trt_shared->lowlevel_backups) > 0);
		pg_atomic_fetch_sub_u32(&trt_shared->lowlevel_backups, 1);
		session_in_backup = false;
	}
}

void
trt_backup_function_execute(Oid fn)
{
	if (fn != F_PG_BACKUP_START || !trt_wal || trt_shared == NULL || session_in_backup)
		return;
	if (!exit_callback_registered)
	{
		before_shmem_exit(backup_session_exit, 0);
		exit_callback_registered = true;
	}
	/* a full barrier: counted before the checkpoint request can be seen */
	pg_atomic_fetch_add_u32(&trt_shared->lowlevel_backups, 1);
	session_in_backup = true;
}

void
trt_backup_xact_end(void)
{
	if (session_in_backup && get_backup_status() != SESSION_BACKUP_RUNNING)
		backup_session_exit(0, 0);
}

/* ---- the checkpoint guards */

/*
 * Handle redo point R (ckpt_lock serialises the two guards): everything
 * logged before R into SSTables, an engine checkpoint named after R, the
 * marker for standbys.  Returns once R is handled.
 */
static void
handle_checkpoint(tides_db *db, XLogRecPtr redo)
{
	char		name[32];
	tides_status s;

	LWLockAcquire(trt_shared->ckpt_lock, LW_EXCLUSIVE);
	if (trt_shared->ckpt_done_redo >= redo)
	{
		LWLockRelease(trt_shared->ckpt_lock);
		return;
	}
	update_deletion_hold(db);
	trt_flush_everything(db);
	ckpt_name(name, sizeof(name), redo);
	s = tides_checkpoint_save(db, name);
	if (s != TIDES_OK)
		trt_engine_error(s, "save an engine checkpoint");
	if (!trt_shared->deletion_held)
		prune_checkpoints(db, name);
	trt_wal_log_checkpoint(redo);
	trt_shared->ckpt_done_redo = redo;
	LWLockRelease(trt_shared->ckpt_lock);
}

static void
set_active(int me, bool active)
{
	SpinLockAcquire(&trt_shared->guard_lock);
	trt_shared->guard_active[me] = active;
	if (trt_shared->guard_active[0] && trt_shared->guard_active[1])
		trt_shared->guards_ready = true;
	SpinLockRelease(&trt_shared->guard_lock);
}

/* may guard me release its flag now?  Only while the other one holds its own */
static bool
try_release(int me)
{
	bool		ok;

	SpinLockAcquire(&trt_shared->guard_lock);
	ok = trt_shared->guard_active[1 - me];
	if (ok)
		trt_shared->guard_active[me] = false;
	SpinLockRelease(&trt_shared->guard_lock);
	return ok;
}

static void
guard_flag(int me)
{
	StartTransactionCommand();
	MyProc->delayChkptFlags |= DELAY_CHKPT_COMPLETE;
	set_active(me, true);
}

static void
guard_unflag(void)
{
	MyProc->delayChkptFlags &= ~DELAY_CHKPT_COMPLETE;
	CommitTransactionCommand();
}

void
trt_guard_main(int me)
{
	tides_db   *db = trt_engine_attach();
	int			backoff_ms = 0;

	guard_flag(me);
	while (!ShutdownRequestPending)
	{
		XLogRecPtr	redo = GetRedoRecPtr();
		XLogRecPtr	completed;
		TimeLineID	tli;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (redo > trt_shared->ckpt_done_redo)
		{
			/*
			 * An error here must not release the flag: the checkpoint
			 * waits until the flush succeeds (heap's checkpoint fails
			 * instead; this one is retried, and the log says why).
			 */
			PG_TRY();
			{
				handle_checkpoint(db, redo);
				backoff_ms = 0;
			}
			PG_CATCH();
			{
				EmitErrorReport();
				FlushErrorState();
				LWLockReleaseAll();
				trt_close_all_iters();
				backoff_ms = backoff_ms ? Min(backoff_ms * 2, 10000) : 100;
			}
			PG_END_TRY();
		}
		/* the redo point of the last completed checkpoint (or restartpoint) */
		GetOldestRestartPoint(&completed, &tli);
		if (redo > completed && trt_shared->ckpt_done_redo >= redo && try_release(me))
		{
			guard_unflag();
			guard_flag(me);
		}
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 backoff_ms ? backoff_ms : 10, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	set_active(me, false);
	guard_unflag();
}

void
trt_wait_for_guards(void)
{
	for (int attempt = 0; !trt_shared->guards_ready; attempt++)
	{
		if (attempt == 30000)
			ereport(WARNING,
					(errmsg("tides: still waiting for the checkpoint guard workers to start"),
					 errhint("With tides.wal = on, two \"tides checkpoint guard\" workers must run; see max_worker_processes.")));
		CHECK_FOR_INTERRUPTS();
		pg_usleep(1000L);
	}
}

/* ---- the ends of recovery, and shutdown */

void
trt_checkpoint_replayed(XLogRecPtr redo)
{
	tides_db   *db;
	char		name[32];
	tides_status s;

	/* crash recovery ends with trt_flush_after_redo; only archive recovery and standbys need this */
	if (!ArchiveRecoveryRequested || !trt_wal)
		return;
	db = trt_engine_attach();
	trt_flush_everything(db);
	ckpt_name(name, sizeof(name), redo);
	s = tides_checkpoint_save(db, name);
	if (s != TIDES_OK)
		trt_engine_error(s, "save an engine checkpoint");
	if (!backup_running())
		prune_checkpoints(db, name);
}

void
trt_flush_after_redo(void)
{
	if (trt_shared == NULL || !trt_shared->engine_ok)
		return;
	trt_flush_everything(trt_engine_attach());
}

void
trt_wal_shutdown(tides_db *db)
{
	tides_status s;

	tides_close_writes(db);
	PG_TRY();
	{
		trt_flush_everything(db);
		s = tides_shutdown(db);
		if (s != TIDES_OK)
			ereport(LOG, (errmsg("tides: clean shutdown failed: %s", tides_errmsg(db))));
	}
	PG_CATCH();
	{
		/* nothing is lost: the WAL since the last checkpoint replays it */
		EmitErrorReport();
		FlushErrorState();
	}
	PG_END_TRY();
}

/* ---- start from a base backup (the postmaster, before engine recovery) */

/*
 * A refusal is remembered in pg_tides/UNAVAILABLE, since what caused it goes
 * away: PostgreSQL renames backup_label when recovery starts, and removes
 * standby.signal and recovery.signal when it ends (promotion).  Without the
 * file, the next start would serve the untrustworthy copy as if nothing had
 * happened.  Only removing pg_tides (all tides data) lifts it
 * (docs/operations.md).
 */
#define UNAVAILABLE_FILE "UNAVAILABLE"

static bool
refuse(const char *dir, char *why)
{
	char		path[MAXPGPATH];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s", dir, UNAVAILABLE_FILE);
	f = fopen(path, "w");
	if (f != NULL)
	{
		fprintf(f, "%s\n", why);
		if (fflush(f) != 0 || fsync(fileno(f)) != 0)
			ereport(LOG, (errmsg("tides: could not write \"%s\": %m", path)));
		fclose(f);
	}
	return false;
}

/* an earlier refusal, recorded in pg_tides/UNAVAILABLE: its reason into why */
static bool
refused_before(const char *dir, char *why, size_t cap)
{
	char		path[MAXPGPATH];
	char		reason[400];
	FILE	   *f;
	size_t		n;

	snprintf(path, sizeof(path), "%s/%s", dir, UNAVAILABLE_FILE);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	n = fread(reason, 1, sizeof(reason) - 1, f);
	fclose(f);
	reason[n] = '\0';
	while (n > 0 && reason[n - 1] == '\n')
		reason[--n] = '\0';
	snprintf(why, cap, "%s (recorded in %s at an earlier start)", reason, path);
	return true;
}

/*
 * If this data directory is a restored base backup (backup_label), put the
 * engine back to the checkpoint of the backup's start.  Returns false, with
 * the reason in why, when tides data cannot be trusted here; the refusal
 * then holds for every later start (refuse).
 */
bool
trt_restore_backup(const char *dir, tides_vfs *vfs, char *why, size_t cap)
{
	FILE	   *f;
	char		line[256];
	uint32		hi = 0,
				lo = 0;
	bool		have_start = false;
	char		name[32];
	tides_status s;
	struct stat st;

	if (refused_before(dir, why, cap))
		return false;
	f = fopen(BACKUP_LABEL_FILE, "r");
	if (f == NULL)
	{
		if (!trt_wal && (stat(STANDBY_SIGNAL_FILE, &st) == 0 || stat(RECOVERY_SIGNAL_FILE, &st) == 0))
		{
			snprintf(why, cap, "the server runs WAL recovery (%s), and with tides.wal = off tides data is not in the WAL",
					 stat(STANDBY_SIGNAL_FILE, &st) == 0 ? STANDBY_SIGNAL_FILE : RECOVERY_SIGNAL_FILE);
			return refuse(dir, why);
		}
		return true;
	}
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "START WAL LOCATION: %X/%X", &hi, &lo) == 2)
			have_start = true;
	fclose(f);
	if (!trt_wal)
	{
		snprintf(why, cap, "the data directory is a copy made by a base backup (%s), and with tides.wal = off the tides files copied from a running server are not consistent",
				 BACKUP_LABEL_FILE);
		return refuse(dir, why);
	}
	if (!have_start)
	{
		snprintf(why, cap, "%s has no START WAL LOCATION line", BACKUP_LABEL_FILE);
		return refuse(dir, why);
	}
	ckpt_name(name, sizeof(name), ((uint64) hi << 32) | lo);
	s = tides_checkpoint_restore(dir, vfs, name);
	if (s == TIDES_NOT_FOUND)
	{
		snprintf(why, cap, "the base backup started at %X/%X, but pg_tides holds no engine checkpoint for it (CKPT-%s): the backup was not taken from a server running with tides.wal = on",
				 hi, lo, name);
		return refuse(dir, why);
	}
	if (s != TIDES_OK)
	{
		snprintf(why, cap, "could not restore the engine checkpoint CKPT-%s of the base backup: %s",
				 name, tides_status_name(s));
		return refuse(dir, why);
	}
	ereport(LOG,
			(errmsg("tides: engine files restored to their checkpoint at %X/%X, the start of the base backup; WAL replay brings them forward",
					hi, lo)));
	return true;
}
