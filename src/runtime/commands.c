/*
 * commands.c -- what commands below the table AM mean for trees.
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
 * matching change to the engine's trees (see trt_copy_database and
 * trt_move_database).
 *
 * src/module/module.c owns the hooks and calls trt_object_access and
 * trt_utility_before/after from them.
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

/* object access hook: a relation's or a database's trees go when the DROP commits */
void
trt_object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId)
{
	if (access != OAT_DROP)
		return;
	if (classId == RelationRelationId && subId == 0)
	{
		Relation	rel = try_relation_open(objectId, NoLock);

		if (rel == NULL)
			return;
		if (RELKIND_HAS_STORAGE(rel->rd_rel->relkind) && trt_is_tides_relation(rel))
			trt_schedule_relation_drop(rel);
		relation_close(rel, NoLock);
	}
	else if (classId == DatabaseRelationId)
		trt_schedule_database_drop(objectId);
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

/*
 * Utility hook, before the command: for ALTER DATABASE ... SET TABLESPACE to
 * another tablespace, the first step of trt_move_database (in the
 * command's first transaction).  Remembers what trt_utility_after needs.
 */
void
trt_utility_before(PlannedStmt *pstmt, TrtUtilityState *st)
{
	Node	   *node = pstmt->utilityStmt;

	st->node = node;
	st->src_db = InvalidOid;
	st->old_spc = InvalidOid;
	st->new_spc = InvalidOid;
	if (IsA(node, CreatedbStmt))
		st->src_db = get_database_oid(createdb_template((CreatedbStmt *) node), false);
	else if (IsA(node, AlterDatabaseStmt) && alterdb_tablespace((AlterDatabaseStmt *) node) != NULL)
	{
		st->src_db = get_database_oid(((AlterDatabaseStmt *) node)->dbname, false);
		st->old_spc = database_tablespace(st->src_db);
		st->new_spc = get_tablespace_oid(alterdb_tablespace((AlterDatabaseStmt *) node), false);
		if (st->new_spc != st->old_spc)
			trt_move_database(st->src_db, st->old_spc, st->new_spc, false);
	}
}

/*
 * Utility hook, after the command ran: CREATE DATABASE copies the
 * template's trees in the same transaction, so the copies exist exactly if
 * the database does; ALTER DATABASE ... SET TABLESPACE, if the database's
 * tablespace now is the new one, finishes the move (in the transaction
 * movedb() started after committing).
 */
void
trt_utility_after(TrtUtilityState *st)
{
	if (!OidIsValid(st->src_db))
		return;
	CommandCounterIncrement();
	if (IsA(st->node, CreatedbStmt))
	{
		Oid			dst_db = get_database_oid(((CreatedbStmt *) st->node)->dbname, false);

		trt_copy_database(st->src_db, database_tablespace(st->src_db), dst_db,
							database_tablespace(dst_db));
	}
	else if (database_tablespace(st->src_db) == st->new_spc && st->new_spc != st->old_spc)
		trt_move_database(st->src_db, st->old_spc, st->new_spc, true);
}
