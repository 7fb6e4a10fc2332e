/*
 * module.c -- _PG_init, and every PostgreSQL hook tidesam installs, each
 * installed once, here, and dispatching to the layers in a fixed order.
 *
 * tidesam must be in shared_preload_libraries: the engine's memtables,
 * block cache and log state live in the main shared memory segment, its
 * recovery runs in the postmaster before any backend can read a row, and
 * its flush and compaction run in background workers registered here.
 *
 * The layers below do not install hooks or register callbacks; they export
 * the parts, and this file calls them:
 *
 *   hook / callback          order of the layers' parts
 *   -----------------------  -----------------------------------------------
 *   shmem_request_hook       runtime (engine region, locks, vid counters),
 *                            index (unique-check stripe locks)
 *   shmem_startup_hook       runtime (initialise; in the postmaster: engine
 *                            recovery, the reset after a crash)
 *   ProcessUtility_hook      before: runtime (publications naming tides
 *                            tables, ALTER DATABASE SET TABLESPACE,
 *                            step 1), index (tides_btree policy, masquerade);
 *                            the command; index cleanup (also on error);
 *                            after: index (concurrent drops, rebuilds),
 *                            runtime (CREATE DATABASE copies, the move's
 *                            step 2)
 *   object_access_hook       runtime (OAT_DROP: trees go at commit;
 *                            OAT_FUNCTION_EXECUTE: tides.wal counts a
 *                            session into pg_backup_start, so that engine
 *                            files are kept during a backup), index
 *                            (OAT_POST_CREATE: tides_btree as btree)
 *   ExecutorStart_hook,      index masquerade around the executor (ON
 *   ExecutorFinish_hook      CONFLICT targets)
 *   ExecutorRun_hook         index masquerade around; inside it table AM
 *                            (bulk loads' waiting rows) and runtime
 *                            (deferred index entries) before a parallel plan
 *   planner_hook             index (planning sees the true access methods)
 *   xact callback            table AM (bulk loads' waiting rows go in before
 *                            the seal), index (an abort ends masquerades),
 *                            runtime (seals, deferred entries, tags, the
 *                            end of a session's low-level backup)
 *   resource release         runtime (engine iterators of the owner)
 *   relcache callback        index (reloaded entries keep their masquerade)
 *
 * Each order is the one the six files that installed these hooks before
 * produced through the order of their calls in _PG_init.
 */
#include "postgres.h"

#include "executor/executor.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "optimizer/planner.h"
#include "storage/ipc.h"
#include "tcop/utility.h"
#include "utils/guc.h"
#include "utils/inval.h"

#include "runtime/trt.h"
#include "am/tam.h"
#include "index/tidx.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static shmem_request_hook_type prev_shmem_request = NULL;
static shmem_startup_hook_type prev_shmem_startup = NULL;
static ProcessUtility_hook_type prev_process_utility = NULL;
static object_access_hook_type prev_object_access = NULL;
static ExecutorStart_hook_type prev_executor_start = NULL;
static ExecutorRun_hook_type prev_executor_run = NULL;
static ExecutorFinish_hook_type prev_executor_finish = NULL;
static planner_hook_type prev_planner = NULL;

static void
tmod_shmem_request(void)
{
	if (prev_shmem_request)
		prev_shmem_request();
	trt_shmem_request();
	tidx_shmem_request();
}

static void
tmod_shmem_startup(void)
{
	if (prev_shmem_startup)
		prev_shmem_startup();
	trt_shmem_startup();
}

static void
tmod_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
					 ProcessUtilityContext context, ParamListInfo params,
					 QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	TrtUtilityState rt;
	TidxUtilityState ix;

	trt_utility_before(pstmt, &rt);
	tidx_utility_before(&pstmt, &readOnlyTree, queryString, context, &ix);
	PG_TRY();
	{
		if (prev_process_utility)
			prev_process_utility(pstmt, queryString, readOnlyTree, context, params, queryEnv,
								 dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params, queryEnv,
									dest, qc);
	}
	PG_FINALLY();
	{
		tidx_utility_cleanup(&ix);
	}
	PG_END_TRY();
	tidx_utility_after(&ix);
	trt_utility_after(&rt);
}

static void
tmod_object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg)
{
	if (prev_object_access)
		prev_object_access(access, classId, objectId, subId, arg);
	trt_object_access(access, classId, objectId, subId, arg);
	tidx_object_access(access, classId, objectId, subId);
}

static void
tmod_executor_start(QueryDesc *qd, int eflags)
{
	List	   *masq = tidx_masquerade_for_query(qd);

	PG_TRY();
	{
		if (prev_executor_start)
			prev_executor_start(qd, eflags);
		else
			standard_ExecutorStart(qd, eflags);
	}
	PG_FINALLY();
	{
		tidx_unmasquerade(masq);
	}
	PG_END_TRY();
}

static void
tmod_executor_run(QueryDesc *qd, ScanDirection direction, uint64 count, bool execute_once)
{
	List	   *masq = tidx_masquerade_for_query(qd);

	PG_TRY();
	{
		/* parallel workers read the engine, not this backend's waiting rows */
		if (qd->plannedstmt->parallelModeNeeded)
			tam_bulk_write_all();
		trt_executor_run_begin(qd);
		if (prev_executor_run)
			prev_executor_run(qd, direction, count, execute_once);
		else
			standard_ExecutorRun(qd, direction, count, execute_once);
	}
	PG_FINALLY();
	{
		tidx_unmasquerade(masq);
	}
	PG_END_TRY();
}

static void
tmod_executor_finish(QueryDesc *qd)
{
	List	   *masq = tidx_masquerade_for_query(qd);

	PG_TRY();
	{
		if (prev_executor_finish)
			prev_executor_finish(qd);
		else
			standard_ExecutorFinish(qd);
	}
	PG_FINALLY();
	{
		tidx_unmasquerade(masq);
	}
	PG_END_TRY();
}

static PlannedStmt *
plan(Query *parse, const char *query_string, int cursorOptions, ParamListInfo boundParams)
{
	if (prev_planner)
		return prev_planner(parse, query_string, cursorOptions, boundParams);
	return standard_planner(parse, query_string, cursorOptions, boundParams);
}

static PlannedStmt *
tmod_planner(Query *parse, const char *query_string, int cursorOptions, ParamListInfo boundParams)
{
	PlannedStmt *result;

	if (!tidx_planner_begin())
		return plan(parse, query_string, cursorOptions, boundParams);
	PG_TRY();
	{
		result = plan(parse, query_string, cursorOptions, boundParams);
	}
	PG_FINALLY();
	{
		tidx_planner_end();
	}
	PG_END_TRY();
	return result;
}

static void
tmod_xact_callback(XactEvent event, void *arg)
{
	/* a bulk load's waiting rows go before anything that seals the transaction */
	tam_bulk_xact_callback(event);
	tidx_xact_callback(event);
	trt_xact_callback(event);
}

void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("tidesam must be loaded via shared_preload_libraries"),
				 errhint("Add tidesam to shared_preload_libraries in postgresql.conf and restart the server, then run CREATE EXTENSION tidesam.")));

	/* settings: the index AM's, the runtime's; then the prefix is closed */
	tidx_define_settings();
	trt_define_settings();
	MarkGUCPrefixReserved("tides");

	/* custom rmgr 143 (incarnations) and the background workers */
	trt_register_rmgr();
	trt_register_workers();
	/* refuse to start without every worker (too few max_worker_processes) */
	trt_check_workers_registered();

	/* so that every layer can tell tides relations and tides_btree indexes */
	trt_register_access_methods(tam_routine(), tidx_build);
	/* so that VACUUM of a tides table deletes tides_btree entries by key */
	trt_register_index_keys(tidx_keys_begin, tidx_keys_delete);

	prev_shmem_request = shmem_request_hook;
	shmem_request_hook = tmod_shmem_request;
	prev_shmem_startup = shmem_startup_hook;
	shmem_startup_hook = tmod_shmem_startup;
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = tmod_process_utility;
	prev_object_access = object_access_hook;
	object_access_hook = tmod_object_access;
	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = tmod_executor_start;
	prev_executor_run = ExecutorRun_hook;
	ExecutorRun_hook = tmod_executor_run;
	prev_executor_finish = ExecutorFinish_hook;
	ExecutorFinish_hook = tmod_executor_finish;
	prev_planner = planner_hook;
	planner_hook = tmod_planner;

	RegisterXactCallback(tmod_xact_callback, NULL);
	RegisterResourceReleaseCallback(trt_release_iterators, NULL);
	CacheRegisterRelcacheCallback(tidx_relcache_callback, (Datum) 0);
}
