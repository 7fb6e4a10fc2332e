/*
 * hooks.c -- telling the engine about relations that go away.
 *
 * PostgreSQL gives a table access method no callback when a relation is
 * dropped: DROP TABLE unlinks storage through the storage manager.  The
 * object access hook sees the drop (still inside the dropping transaction),
 * and we record that the relation's tree goes when that transaction commits.
 * DROP DATABASE takes every tree of the database with it.
 *
 * Databases are copied and moved below the table AM too: CREATE DATABASE
 * copies the template's files and ALTER DATABASE SET TABLESPACE moves them,
 * neither through a table AM callback.  A utility hook follows each with the
 * matching change to the engine's trees (see tides_copy_database and
 * tides_move_database).
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "commands/tablespace.h"
#include "access/xact.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "runtime/trt.h"

extern void tides_schedule_database_drop(Oid dboid);

static object_access_hook_type prev_object_access_hook = NULL;
static ProcessUtility_hook_type prev_process_utility = NULL;

static void
tides_object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access != OAT_DROP)
		return;
	if (classId == RelationRelationId && subId == 0)
	{
		Relation	rel = try_relation_open(objectId, NoLock);

		if (rel == NULL)
			return;
		if (RELKIND_HAS_STORAGE(rel->rd_rel->relkind) && tides_is_tides_relation(rel))
			tides_schedule_relation_drop(rel);
		relation_close(rel, NoLock);
	}
	else if (classId == DatabaseRelationId)
		tides_schedule_database_drop(objectId);
}

/* a database's default tablespace */
static Oid
database_tablespace(Oid dboid)
{
	HeapTuple	tup = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(dboid));
	Oid			spc;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for database %u", dboid);
	spc = ((Form_pg_database) GETSTRUCT(tup))->dattablespace;
	ReleaseSysCache(tup);
	return spc;
}

static const char *
createdb_template(CreatedbStmt *stmt)
{
	ListCell   *lc;

	foreach(lc, stmt->options)
	{
		DefElem    *d = lfirst(lc);

		if (strcmp(d->defname, "template") == 0 && d->arg != NULL)
			return defGetString(d);
	}
	return "template1";
}

/* the tablespace ALTER DATABASE ... SET TABLESPACE names, or NULL */
static char *
alterdb_tablespace(AlterDatabaseStmt *stmt)
{
	ListCell   *lc;

	foreach(lc, stmt->options)
	{
		DefElem    *d = lfirst(lc);

		if (strcmp(d->defname, "tablespace") == 0)
			return defGetString(d);
	}
	return NULL;
}

static void
tides_process_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
					  ProcessUtilityContext context, ParamListInfo params,
					  QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *node = pstmt->utilityStmt;
	Oid			src_db = InvalidOid;
	Oid			old_spc = InvalidOid;
	Oid			new_spc = InvalidOid;

	if (IsA(node, CreatedbStmt))
		src_db = get_database_oid(createdb_template((CreatedbStmt *) node), false);
	else if (IsA(node, AlterDatabaseStmt) && alterdb_tablespace((AlterDatabaseStmt *) node) != NULL)
	{
		src_db = get_database_oid(((AlterDatabaseStmt *) node)->dbname, false);
		old_spc = database_tablespace(src_db);
		new_spc = get_tablespace_oid(alterdb_tablespace((AlterDatabaseStmt *) node), false);
		if (new_spc != old_spc)
			tides_move_database(src_db, old_spc, new_spc, false);
	}

	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);

	if (!OidIsValid(src_db))
		return;
	CommandCounterIncrement();
	if (IsA(node, CreatedbStmt))
	{
		Oid			dst_db = get_database_oid(((CreatedbStmt *) node)->dbname, false);

		tides_copy_database(src_db, database_tablespace(src_db), dst_db, database_tablespace(dst_db));
	}
	else if (database_tablespace(src_db) == new_spc && new_spc != old_spc)
		tides_move_database(src_db, old_spc, new_spc, true);
}

void		tides_hooks_init(void);

void
tides_hooks_init(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = tides_object_access;
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = tides_process_utility;
}
