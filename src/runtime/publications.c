/*
 * publications.c -- logical replication does not see tides data: refuse
 * publications that name tides tables, warn about those that take every
 * table of a database or a schema.
 *
 * Logical decoding reads heap-format changes out of PostgreSQL's WAL; tides
 * changes are not there (tides.wal = off) or are rmgr 143 records that no
 * decoder understands (tides.wal = on).  A publication of a tides table
 * would be accepted and would publish nothing, silently.  So, from the
 * utility hook (src/module/module.c, before the command, through
 * trt_utility_before):
 *
 *   CREATE PUBLICATION ... FOR TABLE t          ERROR if t, a partition or a
 *   ALTER PUBLICATION ... ADD / SET TABLE t     child it would include is a
 *                                               tides table
 *   CREATE PUBLICATION ... FOR ALL TABLES       WARNING in a database where
 *   ... TABLES IN SCHEMA s (CREATE, ADD, SET)   the tides access method
 *                                               exists: its tides tables are
 *                                               not published
 *
 * tides.check_publications = off (superuser) turns both off: PostgreSQL's
 * own regression suite, run with every table a tides table
 * (test/pg_suites), creates publications as heap would let it.
 */
#include "postgres.h"

#include "access/relation.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "storage/lockdefs.h"
#include "commands/defrem.h"
#include "nodes/parsenodes.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "runtime/trt.h"

/* the first tides table among rel and, if it includes them, its descendants; InvalidOid if none */
static Oid
tides_table_in(RangeVar *rv)
{
	/* AccessShareLock, as a read of the relations; the command locks them more strongly later */
	Oid			relid = RangeVarGetRelid(rv, AccessShareLock, true);
	List	   *rels;
	ListCell   *lc;
	Oid			found = InvalidOid;

	if (!OidIsValid(relid))
		return InvalidOid;		/* the command reports it */
	if (rv->inh || get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE)
		rels = find_all_inheritors(relid, AccessShareLock, NULL);
	else
		rels = list_make1_oid(relid);
	foreach(lc, rels)
	{
		Relation	rel = try_relation_open(lfirst_oid(lc), AccessShareLock);

		if (rel == NULL)
			continue;
		if (RELKIND_HAS_TABLE_AM(rel->rd_rel->relkind) && trt_is_tides_relation(rel))
			found = RelationGetRelid(rel);
		relation_close(rel, NoLock);	/* the lock stays until the end of the transaction */
		if (OidIsValid(found))
			break;
	}
	list_free(rels);
	return found;
}

static void
check_objects(List *objects, bool all_tables, const char *pubname)
{
	ListCell   *lc;
	bool		schemas = false;

	foreach(lc, objects)
	{
		PublicationObjSpec *o = lfirst(lc);

		if (o->pubobjtype == PUBLICATIONOBJ_TABLE && o->pubtable != NULL)
		{
			Oid			t = tides_table_in(o->pubtable->relation);

			if (OidIsValid(t))
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("publication \"%s\" cannot include tides table \"%s\"",
								pubname, get_rel_name(t)),
						 errdetail("Logical decoding does not see the changes of tables using the tides access method."),
						 errhint("Replicate tides tables physically (streaming replication with tides.wal = on), or publish heap tables only.")));
		}
		else if (o->pubobjtype == PUBLICATIONOBJ_TABLES_IN_SCHEMA ||
				 o->pubobjtype == PUBLICATIONOBJ_TABLES_IN_CUR_SCHEMA)
			schemas = true;
	}
	if ((all_tables || schemas) && OidIsValid(get_table_am_oid("tides", true)))
		ereport(WARNING,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("publication \"%s\" does not publish the changes of tides tables", pubname),
				 errdetail("Logical decoding does not see the changes of tables using the tides access method; %s.",
						   all_tables ? "FOR ALL TABLES includes them, now and later, without publishing anything of them" :
						   "TABLES IN SCHEMA includes them, now and later, without publishing anything of them")));
}

void
trt_check_publication(Node *stmt)
{
	if (!trt_check_publications)
		return;
	if (IsA(stmt, CreatePublicationStmt))
	{
		CreatePublicationStmt *c = (CreatePublicationStmt *) stmt;

		check_objects(c->pubobjects, c->for_all_tables, c->pubname);
	}
	else if (IsA(stmt, AlterPublicationStmt))
	{
		AlterPublicationStmt *a = (AlterPublicationStmt *) stmt;

		if (a->action != AP_DropObjects)
			check_objects(a->pubobjects, false, a->pubname);
	}
}
