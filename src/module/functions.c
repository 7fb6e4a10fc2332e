/*
 * functions.c -- SQL-callable functions: verification, statistics (the
 * functions behind the monitoring views), sizes, and manual
 * flush/compaction (useful in tests and maintenance).
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "runtime/trt.h"
#include "index/tidx.h"

PG_FUNCTION_INFO_V1(tides_verify_sql);
PG_FUNCTION_INFO_V1(tides_stats_sql);
PG_FUNCTION_INFO_V1(tides_relation_size_sql);
PG_FUNCTION_INFO_V1(tides_flush_sql);
PG_FUNCTION_INFO_V1(tides_compact_sql);
PG_FUNCTION_INFO_V1(tides_engine_stats_sql);
PG_FUNCTION_INFO_V1(tides_stats_reset_sql);
PG_FUNCTION_INFO_V1(tides_levels_sql);
PG_FUNCTION_INFO_V1(tides_compactions_sql);
PG_FUNCTION_INFO_V1(tides_relations_sql);
PG_FUNCTION_INFO_V1(tides_database_size_sql);
PG_FUNCTION_INFO_V1(tides_engine_size_sql);


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
	trt_io_account(NULL);
	if (n < 0)
		trt_engine_error(TIDES_UNAVAILABLE, "run the verification");	/* the store closed meanwhile */
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
	trt_get_stats(&st);
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
	S(ingested_files);
	S(ingested_bytes);
	S(reads_unchanged);
	S(reads_changed);
	S(ranges_unchanged);
	S(ranges_changed);
	S(flush_placed_files);
	S(flush_placed_bytes);
	S(stem_probes_absent);
	S(stem_probes_maybe);
	S(publish_waits);
	S(publish_wait_us);
	S(log_sync_requests);
	S(blocks_fetched);
	S(blocks_prefetched);
	S(memtable_discards);
	S(memtables_discarded);
	S(writes);
	S(filtered_dropped);
#undef S
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
	{
		snprintf(name, sizeof(name), "level%d_files", l);
		put_stat(rsinfo, name, st.level_files[l]);
		snprintf(name, sizeof(name), "level%d_bytes", l);
		put_stat(rsinfo, name, st.level_bytes[l]);
	}
	put_stat(rsinfo, "incarnation", trt_shared->incarnation);
	/* writes that waited for flush or compaction (engine.c), and how long */
	put_stat(rsinfo, "write_stalls", pg_atomic_read_u64(&trt_shared->write_stalls));
	put_stat(rsinfo, "write_stall_us", pg_atomic_read_u64(&trt_shared->write_stall_us));
	put_stat(rsinfo, "vacant_ranges", pg_atomic_read_u64(&trt_shared->vacant_ranges));
	put_stat(rsinfo, "vacant_jumps", pg_atomic_read_u64(&trt_shared->vacant_jumps));
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

/*
 * Seal the memtable and wait until every sealed memtable is flushed: by
 * this backend, or with tides_flush(true) by the flush worker (the session
 * only waits, interruptibly).
 */
Datum
tides_flush_sql(PG_FUNCTION_ARGS)
{
	tides_db   *db = trt_engine();
	bool		background = PG_NARGS() > 0 && PG_GETARG_BOOL(0);
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
	while (background && (tides_work_pending(db) & TIDES_WORK_FLUSH))
	{
		trt_wakeup_workers(NULL, TIDES_WORK_FLUSH);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 10,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
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
	trt_io_account(NULL);
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
	trt_io_account(NULL);
	PG_RETURN_VOID();
}

/* ------------------------------------------------------------------------
 * The monitoring views' functions (tidesam--1.0--1.1.sql defines the views;
 * docs/operations.md says what every column means).
 */

/* engine wall-clock microseconds since the Unix epoch -> timestamptz */
static TimestampTz
engine_time(uint64 us)
{
	return (TimestampTz) us - (TimestampTz) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
}

/* tides_engine_stats: one row, the counters since the last reset */
Datum
tides_engine_stats_sql(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	tides_stats st;
	TimestampTz reset_at;
	Datum		v[40];
	bool		nulls[40];
	int			n = 0;
	uint64		files = 0,
				bytes = 0,
				written;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	trt_stats_since_reset(&st, &reset_at);
	memset(nulls, 0, sizeof(nulls));
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
	{
		files += st.level_files[l];
		bytes += st.level_bytes[l];
	}
	written = st.log_bytes_written + st.flush_bytes_written + st.compaction_bytes_written;
#define I(x) v[n++] = Int64GetDatum((int64) (x))
	I(st.log_bytes_written);
	I(st.keys_written);
	/* tides.wal = on: the engine's log does not exist; the WAL's fsyncs are pg_stat_wal's */
	if (trt_wal)
		nulls[n++] = true;
	else
		I(st.log_syncs);
	I(st.user_bytes_written);
	I(st.flushes);
	I(st.flush_bytes_written);
	I(st.flush_entries_written);
	I(st.compactions);
	I(st.trivial_moves);
	I(st.compaction_bytes_read);
	I(st.compaction_bytes_written);
	I(st.compaction_entries_read);
	I(st.compaction_entries_written);
	if (st.user_bytes_written > 0)
		v[n++] = Float8GetDatum((double) written / (double) st.user_bytes_written);
	else
		nulls[n++] = true;
	I(st.stall_count);
	v[n++] = Float8GetDatum((double) st.stall_us / 1000.0);
	I(st.slowdown_count);
	v[n++] = Float8GetDatum((double) st.slowdown_us / 1000.0);
	I(st.cache_hits);
	I(st.cache_misses);
	I(st.bytes_read);
	I(st.bloom_checked);
	I(st.bloom_useful);
	v[n++] = Int32GetDatum((int32) st.memtable_count);
	I(st.memtable_size);
	v[n++] = Int32GetDatum((int32) st.memtables_sealed);
	I(st.memtable_bytes);
	I(st.memtable_active_bytes);
	I(st.memtable_entries);
	v[n++] = Int32GetDatum((int32) st.compactions_running);
	I(files);
	I(bytes);
	I(st.last_seq);
	if (trt_wal)
	{
		nulls[n++] = true;
		nulls[n++] = true;
	}
	else
	{
		I(st.written_lsn);
		I(st.durable_lsn);
	}
	I(trt_shared->incarnation);
	v[n++] = TimestampTzGetDatum(reset_at);
#undef I
	if (n != desc->natts)
		elog(ERROR, "tides_engine_stats: %d columns, the function declares %d", n, desc->natts);
	trt_io_account(NULL);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), v, nulls)));
}

Datum
tides_stats_reset_sql(PG_FUNCTION_ARGS)
{
	trt_stats_reset();
	PG_RETURN_VOID();
}

/* tides_levels: one row per level */
Datum
tides_levels_sql(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	tides_level_info li[TIDES_MAX_LEVELS];
	int			base;

	InitMaterializedSRF(fcinfo, 0);
	base = tides_get_level_info(trt_engine(), li);
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
	{
		Datum		v[10];
		bool		nulls[10] = {0};

		v[0] = Int32GetDatum(l);
		v[1] = Int32GetDatum((int32) li[l].files);
		v[2] = Int32GetDatum((int32) li[l].files_compacting);
		v[3] = Int64GetDatum((int64) li[l].bytes);
		v[4] = Int64GetDatum((int64) li[l].entries);
		v[5] = Int64GetDatum((int64) li[l].deletions);
		v[6] = Int64GetDatum((int64) li[l].target_bytes);
		nulls[6] = li[l].target_bytes == 0;
		v[7] = Float8GetDatum(li[l].score);
		v[8] = Int64GetDatum((int64) li[l].pending_bytes);
		v[9] = BoolGetDatum(l == base);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
	}
	return (Datum) 0;
}

/* tides_compactions: one row per compaction running now */
Datum
tides_compactions_sql(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	tides_compaction_info ci[64];
	int			n;

	InitMaterializedSRF(fcinfo, 0);
	n = tides_get_compactions(trt_engine(), ci, lengthof(ci));
	for (int i = 0; i < n; i++)
	{
		Datum		v[12];
		bool		nulls[12] = {0};

		if (ci[i].started_us == 0)
			continue;			/* released while it was copied */
		v[0] = Int32GetDatum(ci[i].pid);
		v[1] = Int32GetDatum(ci[i].level);
		v[2] = Int32GetDatum(ci[i].output_level);
		v[3] = TimestampTzGetDatum(engine_time(ci[i].started_us));
		v[4] = Int32GetDatum((int32) ci[i].input_files);
		v[5] = Int64GetDatum((int64) ci[i].input_bytes);
		v[6] = Int64GetDatum((int64) ci[i].input_entries);
		v[7] = Int64GetDatum((int64) ci[i].entries_read);
		v[8] = Int32GetDatum((int32) ci[i].files_written);
		v[9] = Int64GetDatum((int64) ci[i].bytes_written);
		v[10] = Int64GetDatum((int64) ci[i].entries_written);
		if (ci[i].input_entries > 0)
			v[11] = Float8GetDatum(Min(1.0, (double) ci[i].entries_read / ci[i].input_entries));
		else
			nulls[11] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
	}
	return (Datum) 0;
}

/*
 * tides_relations: every tides table (and materialized view) and
 * tides_btree index of this database whose storage the engine maps, read
 * from pg_class without locking the relations: what the engine's files say
 * about each one's tree (tides_get_range_info).
 */
Datum
tides_relations_sql(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			table_am = get_table_am_oid("tides", true);
	Oid			index_am = get_index_am_oid("tides_btree", true);
	Relation	pg_class;
	TableScanDesc scan;
	HeapTuple	tup;
	tides_db   *db = trt_engine();

	InitMaterializedSRF(fcinfo, 0);
	pg_class = table_open(RelationRelationId, AccessShareLock);
	scan = table_beginscan_catalog(pg_class, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_class c = (Form_pg_class) GETSTRUCT(tup);
		bool		is_index = c->relkind == RELKIND_INDEX;
		RelFileNode rnode;
		BackendId	backend = InvalidBackendId;
		uint64		tree;
		uint8		lo[8],
					hi[8];
		tides_range_info ri;
		Datum		levels[TIDES_MAX_LEVELS];
		uint64		sst = 0;
		Datum		v[9];
		bool		nulls[9] = {0};

		CHECK_FOR_INTERRUPTS();
		if (!(is_index ? OidIsValid(index_am) && c->relam == index_am :
			  OidIsValid(table_am) && c->relam == table_am &&
			  RELKIND_HAS_STORAGE(c->relkind)))
			continue;
		if (c->relpersistence == RELPERSISTENCE_TEMP)
		{
			backend = GetTempNamespaceBackendId(c->relnamespace);
			if (backend == InvalidBackendId)
				continue;
		}
		rnode.spcNode = OidIsValid(c->reltablespace) ? c->reltablespace : MyDatabaseTableSpace;
		rnode.dbNode = MyDatabaseId;
		rnode.relNode = c->relfilenode;
		if (!trt_lookup_tree(&rnode, backend, &tree))
			continue;
		trt_key_put_tree(lo, tree);
		trt_key_put_tree(hi, tree + 1);
		tides_get_range_info(db, lo, sizeof(lo), hi, sizeof(hi), &ri);
		for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		{
			levels[l] = Int64GetDatum((int64) ri.level_bytes[l]);
			sst += ri.level_bytes[l];
		}
		v[0] = ObjectIdGetDatum(c->oid);
		v[1] = CStringGetTextDatum(is_index ? "index" : "table");
		v[2] = Int64GetDatum((int64) sst);
		v[3] = Int64GetDatum((int64) ri.memtable_bytes);
		v[4] = PointerGetDatum(construct_array(levels, TIDES_MAX_LEVELS, INT8OID, 8,
											   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		v[5] = Int64GetDatum((int64) ri.entries);
		v[6] = Int64GetDatum((int64) ri.deletions);
		v[7] = TimestampTzGetDatum(engine_time(ri.flushed_us));
		nulls[7] = ri.flushed_us == 0;
		v[8] = TimestampTzGetDatum(engine_time(ri.compacted_us));
		nulls[8] = ri.compacted_us == 0;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
	}
	table_endscan(scan);
	table_close(pg_class, AccessShareLock);
	trt_io_account(NULL);
	return (Datum) 0;
}

/* this database's (or the given one's) share of the engine: its trees' bytes */
Datum
tides_database_size_sql(PG_FUNCTION_ARGS)
{
	Oid			dboid = PG_NARGS() == 0 ? MyDatabaseId : PG_GETARG_OID(0);
	uint64		bytes;

	if (!SearchSysCacheExists1(DATABASEOID, ObjectIdGetDatum(dboid)))
		PG_RETURN_NULL();		/* as pg_database_size(oid) for a missing database */
	bytes = trt_database_bytes(dboid);
	trt_io_account(NULL);
	PG_RETURN_INT64((int64) bytes);
}

/* every file in $PGDATA/pg_tides: tables, log segments, manifests, CURRENT */
Datum
tides_engine_size_sql(PG_FUNCTION_ARGS)
{
	TrtEngineFiles f;

	trt_engine_files(&f);
	PG_RETURN_INT64((int64) (f.sst_bytes + f.log_bytes + f.other_bytes));
}
