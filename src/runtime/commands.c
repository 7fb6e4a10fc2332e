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
#include "catalog/dependency.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "commands/tablespace.h"
#include "miscadmin.h"
#include "access/xact.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "runtime/trt.h"

/*
 * object access hook: a relation's or a database's trees go when the DROP
 * commits -- a tides table's (or materialized view's), and a tides_btree
 * index's, whether the index is dropped by DROP INDEX, with its table, or
 * by REINDEX CONCURRENTLY (the old index).  DROP INDEX CONCURRENTLY is the
 * exception: its first transaction, where this hook runs, must not take an
 * xid (a drop marker needs one), and the index's storage goes only in its
 * last transaction; src/index's utility hook part schedules those trees
 * then (tidx_utility_after).
 */
void
trt_object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg)
{
	if (access == OAT_FUNCTION_EXECUTE)
	{
		trt_backup_function_execute(objectId);
		return;
	}
	if (access != OAT_DROP)
		return;
	if (classId == RelationRelationId && subId == 0)
	{
		ObjectAccessDrop *drop = arg;
		Relation	rel;

		rel = try_relation_open(objectId, NoLock);
		if (rel == NULL)
			return;
		if (RELKIND_HAS_STORAGE(rel->rd_rel->relkind) && trt_is_tides_relation(rel))
			trt_schedule_relation_drop(rel);
		else if (trt_is_tides_index(rel) &&
				 !(drop != NULL && (drop->dropflags & PERFORM_DELETION_CONCURRENTLY)))
			trt_schedule_index_drop(rel);
		relation_close(rel, NoLock);
	}
	else if (classId == DatabaseRelationId)
		trt_schedule_database_drop(objectId);
}

/*
 * Tablespaces.  Every tides row and tides_btree entry of the cluster lives
 * in the one engine under $PGDATA/pg_tides, so a TABLESPACE clause cannot
 * put a table's rows on another disk; accepting it would only move the
 * relation's empty files and mislead whoever meant to move the data.  So
 * new storage outside the database's default tablespace -- CREATE TABLE /
 * INDEX ... TABLESPACE, default_tablespace, temp_tablespaces, partitions of
 * a parent with a tablespace, ALTER TABLE / INDEX ... SET TABLESPACE,
 * REINDEX (TABLESPACE), and rewrites (TRUNCATE, CLUSTER, VACUUM FULL) of a
 * relation placed elsewhere before -- is refused, unless tides.tablespaces
 * = ignore (the behaviour before 1.1, for tools and test suites that place
 * objects in tablespaces generically).  Moving back to the default is
 * always allowed.  The database's own tablespace (CREATE DATABASE ...
 * TABLESPACE, ALTER DATABASE ... SET TABLESPACE) is accepted: it is where
 * relations without a clause go, and the rows stay in pg_tides for it too.
 */
void
trt_check_tablespace(Oid spc, Relation rel)
{
	bool		index = rel->rd_rel->relkind == RELKIND_INDEX;
	char	   *name;

	/*
	 * (The message names no relation: CLUSTER and VACUUM FULL build a
	 * transient "pg_temp_<oid>" one.)
	 */

	if (spc == MyDatabaseTableSpace || !OidIsValid(spc) ||
		trt_tablespaces == TRT_TABLESPACES_IGNORE)
		return;
	name = get_tablespace_name(spc);
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg(index ? "tides_btree indexes cannot be placed in tablespace \"%s\"" :
					"tides tables cannot be placed in tablespace \"%s\"",
					name ? name : "?"),
			 errdetail("tides keeps the rows and index entries of every relation in $PGDATA/pg_tides, whatever their tablespace; only the database's default tablespace is accepted."),
			 errhint("Leave out the TABLESPACE clause (and check default_tablespace and temp_tablespaces), or move the relation to the database's default tablespace, e.g. SET TABLESPACE pg_default.")));
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
 * Utility hook, before the command: CREATE and ALTER PUBLICATION are checked
 * (publications.c); for ALTER DATABASE ... SET TABLESPACE to
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
	/* publications naming tides tables: refused (publications.c) */
	if (IsA(node, CreatePublicationStmt) || IsA(node, AlterPublicationStmt))
		trt_check_publication(node);
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
