/*
 * functions.c -- SQL-callable functions: verification, statistics, sizes,
 * and manual flush/compaction (useful in tests and maintenance).
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "runtime/trt.h"
#include "index/tidx.h"

PG_FUNCTION_INFO_V1(tides_verify_sql);
PG_FUNCTION_INFO_V1(tides_stats_sql);
PG_FUNCTION_INFO_V1(tides_relation_size_sql);
PG_FUNCTION_INFO_V1(tides_flush_sql);
PG_FUNCTION_INFO_V1(tides_compact_sql);


typedef struct VerifyCollect
{
	Tuplestorestate *store;
	TupleDesc	desc;
} VerifyCollect;

static void
collect_problem(void *arg, const char *file, const char *problem)
{
	VerifyCollect *vc = arg;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	values[0] = CStringGetTextDatum(file);
	values[1] = CStringGetTextDatum(problem);
	tuplestore_putvalues(vc->store, vc->desc, values, nulls);
}

Datum
tides_verify_sql(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	VerifyCollect vc;
	int			n;

	InitMaterializedSRF(fcinfo, 0);
	vc.store = rsinfo->setResult;
	vc.desc = rsinfo->setDesc;
	n = tides_verify(trt_engine(), collect_problem, &vc);
	if (n < 0)
		ereport(ERROR, (errmsg("tides: verification could not run: %s", tides_errmsg(trt_engine()))));
	return (Datum) 0;
}

static void
put_stat(ReturnSetInfo *rsinfo, const char *name, uint64 v)
{
	Datum		values[2];
	bool		nulls[2] = {false, false};

	values[0] = CStringGetTextDatum(name);
	values[1] = Int64GetDatum((int64) v);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

Datum
tides_stats_sql(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	tides_stats st;
	char		name[64];

	InitMaterializedSRF(fcinfo, 0);
	tides_get_stats(trt_engine(), &st);
#define S(f) put_stat(rsinfo, #f, st.f)
	S(log_bytes_written);
	S(log_syncs);
	S(flush_bytes_written);
	S(flushes);
	S(compaction_bytes_read);
	S(compaction_bytes_written);
	S(compactions);
	S(trivial_moves);
	S(bytes_read);
	S(cache_hits);
	S(cache_misses);
	S(bloom_useful);
	S(stall_count);
	S(slowdown_count);
	S(slowdown_us);
	S(keys_written);
	S(user_bytes_written);
	S(last_seq);
	S(written_lsn);
	S(durable_lsn);
	S(memtables_sealed);
	S(memtable_bytes);
#undef S
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
	{
		snprintf(name, sizeof(name), "level%d_files", l);
		put_stat(rsinfo, name, st.level_files[l]);
		snprintf(name, sizeof(name), "level%d_bytes", l);
		put_stat(rsinfo, name, st.level_bytes[l]);
	}
	put_stat(rsinfo, "incarnation", trt_shared->incarnation);
	return (Datum) 0;
}

Datum
tides_relation_size_sql(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	rel = relation_open(relid, AccessShareLock);
	uint64		tree;

	if (trt_is_tides_index(rel))
		tree = tidx_index_tree(rel);	/* a tides_btree index: its entries */
	else if (RELKIND_HAS_STORAGE(rel->rd_rel->relkind) && trt_is_tides_relation(rel))
		tree = trt_rel_tree(rel);
	else
	{
		relation_close(rel, AccessShareLock);
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not stored by tides", get_rel_name(relid))));
	}
	relation_close(rel, AccessShareLock);
	PG_RETURN_INT64((int64) trt_tree_bytes(tree, false));
}

/* seal the memtable and wait until every sealed memtable is flushed */
Datum
tides_flush_sql(PG_FUNCTION_ARGS)
{
	tides_db   *db = trt_engine();
	tides_status s;

	for (;;)
	{
		s = tides_seal_memtable(db);
		if (s == TIDES_OK)
			break;
		if (s != TIDES_BUSY)
			trt_engine_error(s, "seal the memtable");
		pg_usleep(1000L);
		CHECK_FOR_INTERRUPTS();
	}
	while (tides_work_pending(db) & TIDES_WORK_FLUSH)
	{
		bool		did;

		s = tides_flush_work(db, &did);
		if (s != TIDES_OK)
			trt_engine_error(s, "flush");
		if (!did)
			pg_usleep(1000L);
		CHECK_FOR_INTERRUPTS();
	}
	PG_RETURN_VOID();
}

/*
 * A full compaction (tides_full_compaction_*: every level down to the last,
 * last-level files with deletions or dropped keys rewritten), so that what
 * was obsolete in the engine's files when it began is gone when it returns;
 * then compactions and maintenance until nothing is due (obsolete files
 * deleted, dropped prefixes retired).  The memtables are not included:
 * tides_flush() first.  Waits, interruptibly, for compactions of other
 * processes that hold the files it needs next.
 */
Datum
tides_compact_sql(PG_FUNCTION_ARGS)
{
	tides_db   *db = trt_engine();
	tides_full_compaction fc;
	bool		did = true;
	bool		done = false;

	tides_full_compaction_begin(db, &fc);
	while (!done)
	{
		tides_status s = tides_full_compaction_step(db, &fc, &done, &did);

		if (s != TIDES_OK)
			trt_engine_error(s, "compact");
		if (!done && !did)
			pg_usleep(2000L);	/* another process compacts what comes next */
		CHECK_FOR_INTERRUPTS();
	}
	did = true;
	while (did)
	{
		bool		c = false,
					m = false;
		tides_status s = tides_compact_work(db, &c);

		if (s != TIDES_OK)
			trt_engine_error(s, "compact");
		s = tides_maint_work(db, &m);
		if (s != TIDES_OK)
			trt_engine_error(s, "run maintenance");
		did = c || m;
		CHECK_FOR_INTERRUPTS();
	}
	PG_RETURN_VOID();
}
