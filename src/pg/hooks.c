/*
 * hooks.c -- telling the engine about relations that go away.
 *
 * PostgreSQL gives a table access method no callback when a relation is
 * dropped: DROP TABLE unlinks storage through the storage manager.  The
 * object access hook sees the drop (still inside the dropping transaction),
 * and we record that the relation's tree goes when that transaction commits.
 * DROP DATABASE takes every tree of the database with it.
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "utils/rel.h"

#include "tides_pg.h"

extern void tides_schedule_database_drop(Oid dboid);

static object_access_hook_type prev_object_access_hook = NULL;

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

void		tides_hooks_init(void);

void
tides_hooks_init(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = tides_object_access;
}
