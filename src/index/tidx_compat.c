/*
 * tidx_compat.c -- the places where PostgreSQL 15 accepts only b-tree indexes.
 *
 * No index access method but btree can back a unique constraint in some
 * code paths of PostgreSQL 15, which test pg_am's btree OID directly:
 *
 *   1. Foreign keys (ATAddForeignKeyConstraint) require the referenced
 *      unique index's operator classes to belong to btree.
 *   2. INSERT ... ON CONFLICT (BuildSpeculativeIndexInfo, called when the
 *      executor opens the target's indexes) raises "unexpected non-btree
 *      speculative unique index" for any other unique index.
 *   3. ALTER TABLE ... ADD CONSTRAINT ... USING INDEX insists on a btree.
 *   4. Unique indexes of partitioned tables, REFRESH MATERIALIZED VIEW
 *      CONCURRENTLY and index quals on row comparisons are btree-only too;
 *      for these we do nothing (see README.md).
 *
 * (1) ambuild records the b-tree operator classes (same name, same input
 * type, same operator family contents) in pg_index.indclass instead of the
 * tides_btree ones that CREATE INDEX resolved: the families have the same
 * members, so the planner, the executor and this access method behave the
 * same, and pg_get_indexdef still prints no operator class (it compares
 * with the default class of the operator class's own access method), so
 * dumps recreate the index the same way.
 *
 * (2) and (3): for the duration of the statement that needs it (executor
 * start, run and finish; the utility command), the index's
 * relcache entry shows btree's OID in rd_rel->relam ("masquerade"); the AM
 * routine (rd_indam) is untouched, so the index still runs this code.  A
 * relcache callback re-applies it when the entry is reloaded, and planning
 * inside the window (triggers, functions) sees the true access method.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "access/heapam.h"
#include "catalog/objectaccess.h"
#include "utils/snapmgr.h"
#include "catalog/pg_class.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_inherits.h"
#include "utils/fmgroids.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_index.h"
#include "catalog/pg_opclass.h"
#include "commands/defrem.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/plannodes.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "index/tidx.h"

/* ------------------------------------------------ b-tree operator classes */

/*
 * Record the b-tree classes in pg_index.indclass of the index whose pg_index
 * row tup is (a copy); returns them in newcls and true if anything changed.
 * The row is updated in place: it has the same size, and either it was
 * inserted by this very command (an ordinary update could not see it yet)
 * or the change means the same thing to everyone (same operators, same
 * support functions), transaction or not.
 */
static bool
swap_opclasses(HeapTuple tup, int nkeys, Oid *newcls)
{
	Relation	pg_index = table_open(IndexRelationId, RowExclusiveLock);
	bool		isnull;
	oidvector  *cls;
	bool		changed = false;

	cls = (oidvector *) DatumGetPointer(heap_getattr(tup, Anum_pg_index_indclass,
													RelationGetDescr(pg_index), &isnull));
	Assert(!isnull);
	for (int i = 0; i < cls->dim1; i++)
	{
		HeapTuple	ct;
		Form_pg_opclass opc;
		Oid			bt;

		newcls[i] = cls->values[i];
		if (i >= nkeys)
			continue;
		ct = SearchSysCache1(CLAOID, ObjectIdGetDatum(cls->values[i]));
		if (!HeapTupleIsValid(ct))
			elog(ERROR, "cache lookup failed for operator class %u", cls->values[i]);
		opc = (Form_pg_opclass) GETSTRUCT(ct);
		if (opc->opcmethod == BTREE_AM_OID)
		{
			ReleaseSysCache(ct);
			continue;
		}
		bt = get_opclass_oid(BTREE_AM_OID,
							 list_make2(makeString("pg_catalog"), makeString(pstrdup(NameStr(opc->opcname)))),
							 true);
		ReleaseSysCache(ct);
		if (!OidIsValid(bt) || get_opclass_input_type(bt) != get_opclass_input_type(cls->values[i]))
		{
			/* not one of ours: leave the index as it is */
			table_close(pg_index, RowExclusiveLock);
			return false;
		}
		newcls[i] = bt;
		changed = true;
	}
	if (changed)
	{
		for (int i = 0; i < nkeys; i++)
			cls->values[i] = newcls[i];
		heap_inplace_update(pg_index, tup);
	}
	table_close(pg_index, RowExclusiveLock);
	return changed;
}

/* partitions follow their parent index, whose classes stay as resolved */
static bool
heap_wants_btree_classes(char relkind, bool relispartition)
{
	return (relkind == RELKIND_RELATION || relkind == RELKIND_MATVIEW) && !relispartition &&
		!IsBootstrapProcessingMode();
}

void
tidx_use_btree_opclasses(Relation heap, Relation index)
{
	Oid			newcls[INDEX_MAX_KEYS];
	int			nkeys = IndexRelationGetNumberOfKeyAttributes(index);
	HeapTuple	tup;

	if (!heap_wants_btree_classes(heap->rd_rel->relkind, heap->rd_rel->relispartition) ||
		index->rd_rel->relispartition)
		return;
	tup = SearchSysCacheCopy1(INDEXRELID, ObjectIdGetDatum(RelationGetRelid(index)));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for index %u", RelationGetRelid(index));
	if (swap_opclasses(tup, nkeys, newcls))
	{
		bool		isnull;
		oidvector  *cls;

		/*
		 * Usually done when the index was created (below); here for indexes
		 * made otherwise.  The relcache entry of an open index is not
		 * reloaded: show the new classes and families now (the members, and
		 * so the support functions already loaded, are the same).
		 */
		for (int i = 0; i < nkeys; i++)
			index->rd_opfamily[i] = get_opclass_family(newcls[i]);
		cls = (oidvector *) DatumGetPointer(SysCacheGetAttr(INDEXRELID, index->rd_indextuple,
															Anum_pg_index_indclass, &isnull));
		for (int i = 0; i < nkeys; i++)
			cls->values[i] = newcls[i];
	}
	heap_freetuple(tup);
}

/* ------------------------------------------- masquerade by name (below) */

typedef struct PendingName
{
	Oid			nsp;
	NameData	name;
} PendingName;

typedef struct NameMasq
{
	List	   *names;			/* PendingName */
	List	   *opened;			/* indexes opened and masqueraded by the hook */
} NameMasq;

static NameMasq *name_masq = NULL;

static void masquerade_if_named(Oid indexoid, Oid nsp, const char *name);
static void release_named(Oid constraintoid);

/*
 * The same as soon as the index is created (object access hook, inside
 * index_create, before its CommandCounterIncrement): an index that is built
 * later (ALTER TABLE rewrites create the new indexes unbuilt and build them
 * with the new table) can already be referenced by a foreign key.
 */
void
tidx_object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId)
{
	if (access == OAT_POST_CREATE && classId == ConstraintRelationId && name_masq != NULL)
	{
		release_named(objectId);
		return;
	}
	if (access != OAT_POST_CREATE || classId != RelationRelationId || subId != 0 ||
		IsBootstrapProcessingMode())
		return;
	{
		Oid			am = InvalidOid;
		Relation	rel;
		ScanKeyData key;
		SysScanDesc scan;
		HeapTuple	tup;
		bool		ours = false;
		Oid			heapoid = InvalidOid;
		int			nkeys = 0;
		bool		index_is_partition = false;
		HeapTuple	htup;
		HeapTuple	itup = NULL;
		bool		wants;
		Oid			newcls[INDEX_MAX_KEYS];
		NameData	relname;
		Oid			relnsp = InvalidOid;

		/* the rows were inserted by this command: read them with SnapshotSelf */
		rel = table_open(RelationRelationId, AccessShareLock);
		ScanKeyInit(&key, Anum_pg_class_oid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(objectId));
		scan = systable_beginscan(rel, ClassOidIndexId, true, SnapshotSelf, 1, &key);
		if ((tup = systable_getnext(scan)) != NULL)
		{
			Form_pg_class c = (Form_pg_class) GETSTRUCT(tup);

			if (c->relkind == RELKIND_INDEX)
			{
				am = tidx_am_oid();
				ours = OidIsValid(am) && c->relam == am;
				index_is_partition = c->relispartition;
				relname = c->relname;
				relnsp = c->relnamespace;
			}
		}
		systable_endscan(scan);
		table_close(rel, AccessShareLock);
		if (!ours || index_is_partition)
			return;
		masquerade_if_named(objectId, relnsp, NameStr(relname));

		rel = table_open(IndexRelationId, AccessShareLock);
		ScanKeyInit(&key, Anum_pg_index_indexrelid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(objectId));
		scan = systable_beginscan(rel, IndexRelidIndexId, true, SnapshotSelf, 1, &key);
		if ((tup = systable_getnext(scan)) != NULL)
		{
			heapoid = ((Form_pg_index) GETSTRUCT(tup))->indrelid;
			nkeys = ((Form_pg_index) GETSTRUCT(tup))->indnkeyatts;
			itup = heap_copytuple(tup);
		}
		systable_endscan(scan);
		table_close(rel, AccessShareLock);
		if (itup == NULL)
			return;
		htup = SearchSysCache1(RELOID, ObjectIdGetDatum(heapoid));
		if (!HeapTupleIsValid(htup))
			return;
		wants = heap_wants_btree_classes(((Form_pg_class) GETSTRUCT(htup))->relkind,
										 ((Form_pg_class) GETSTRUCT(htup))->relispartition);
		ReleaseSysCache(htup);
		/* before index_create's CommandCounterIncrement loads the relcache entry */
		if (wants)
			(void) swap_opclasses(itup, nkeys, newcls);
		heap_freetuple(itup);
	}
}

static Oid
rel_am(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			am = InvalidOid;

	if (HeapTupleIsValid(tup))
	{
		am = ((Form_pg_class) GETSTRUCT(tup))->relam;
		ReleaseSysCache(tup);
	}
	return am;
}

/* ------------------------------------------------------------ masquerade */

/*
 * One entry per masqueraded index.  Pushers that hold the relation open
 * (the executor's ON CONFLICT window) let the entry keep a pointer, which
 * the relcache callback uses to re-apply the masquerade after a reload.
 * Utility commands push by OID without holding the index open (holding it
 * would make DROP INDEX inside the same ALTER TABLE fail with "being used
 * by active queries"); their entries are patched through a short-lived
 * relcache reference.
 */
typedef struct Masq
{
	Oid			relid;
	Relation	rel;			/* valid while held > 0 */
	int			held;
	Oid			real_am;
	int			depth;
} Masq;

static List *masqs = NIL;
static int	suspended = 0;

static void
apply_one(Masq *m, bool on)
{
	Relation	rel;

	if (m->held > 0)
	{
		m->rel->rd_rel->relam = on ? BTREE_AM_OID : m->real_am;
		return;
	}
	rel = RelationIdGetRelation(m->relid);
	if (rel == NULL)
		return;					/* dropped meanwhile */
	if (rel->rd_rel->relkind == RELKIND_INDEX)
		rel->rd_rel->relam = on ? BTREE_AM_OID : m->real_am;
	RelationClose(rel);
}

static void
apply_all(bool on)
{
	ListCell   *lc;

	foreach(lc, masqs)
		apply_one(lfirst(lc), on);
}

static Masq *
find_masq(Oid relid)
{
	ListCell   *lc;

	foreach(lc, masqs)
	{
		Masq	   *m = lfirst(lc);

		if (m->relid == relid)
			return m;
	}
	return NULL;
}

static void
push(Oid relid, Relation held, Oid real_am)
{
	Masq	   *m = find_masq(relid);

	if (m == NULL)
	{
		m = MemoryContextAllocZero(TopMemoryContext, sizeof(Masq));
		m->relid = relid;
		m->real_am = real_am;
		masqs = lappend(masqs, m);
	}
	m->depth++;
	if (held)
	{
		m->rel = held;
		m->held++;
	}
	if (suspended == 0)
		apply_one(m, true);
}

static void
pop(Oid relid, bool held)
{
	Masq	   *m = find_masq(relid);

	if (m == NULL)
		return;
	if (held && --m->held == 0)
	{
		/* the pointer is about to become the caller's to close */
		m->rel->rd_rel->relam = m->real_am;
		m->rel = NULL;
	}
	if (--m->depth == 0)
	{
		apply_one(m, false);
		masqs = list_delete_ptr(masqs, m);
		pfree(m);
	}
}

/* the caller keeps index open until tidx_masquerade_pop */
void
tidx_masquerade_push(Relation index)
{
	push(RelationGetRelid(index), index, index->rd_rel->relam);
}

void
tidx_masquerade_pop(Relation index)
{
	pop(RelationGetRelid(index), true);
}

/* without holding the index open (utility commands) */
void
tidx_masquerade_push_oid(Oid indexoid)
{
	Relation	rel = RelationIdGetRelation(indexoid);

	if (rel == NULL)
		return;
	if (trt_is_tides_index(rel))
	{
		Oid			am = rel->rd_rel->relam;

		RelationClose(rel);
		push(indexoid, NULL, am);
		return;
	}
	RelationClose(rel);
}

void
tidx_masquerade_pop_oid(Oid indexoid)
{
	pop(indexoid, false);
}

/* a reloaded relcache entry gets the masquerade back (entries held open); relcache callback */
void
tidx_relcache_callback(Datum arg, Oid relid)
{
	ListCell   *lc;

	if (suspended > 0)
		return;
	foreach(lc, masqs)
	{
		Masq	   *m = lfirst(lc);

		if (m->held > 0 && (!OidIsValid(relid) || m->relid == relid))
			m->rel->rd_rel->relam = BTREE_AM_OID;
	}
}

/* the transaction callback: an abort ends every masquerade */
void
tidx_xact_callback(XactEvent event)
{
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
	{
		ListCell   *lc;

		/* PG_FINALLY blocks undo the masquerade; this is the safety net */
		foreach(lc, masqs)
		{
			Masq	   *m = lfirst(lc);

			if (m->held > 0)
				m->rel->rd_rel->relam = m->real_am;
		}
		list_free_deep(masqs);
		masqs = NIL;
		suspended = 0;
		name_masq = NULL;
	}
}

/* ------------------------------------------------- ON CONFLICT statements */

static List *
conflict_targets(PlannedStmt *ps, Plan *plan, List *acc)
{
	ListCell   *lc;

	if (plan == NULL)
		return acc;
	if (IsA(plan, ModifyTable))
	{
		ModifyTable *mt = (ModifyTable *) plan;

		if (mt->onConflictAction != ONCONFLICT_NONE)
		{
			foreach(lc, mt->resultRelations)
				acc = list_append_unique_oid(acc, rt_fetch(lfirst_int(lc), ps->rtable)->relid);
		}
	}
	acc = conflict_targets(ps, plan->lefttree, acc);
	acc = conflict_targets(ps, plan->righttree, acc);
	if (IsA(plan, Append))
		foreach(lc, ((Append *) plan)->appendplans)
			acc = conflict_targets(ps, lfirst(lc), acc);
	if (IsA(plan, SubqueryScan))
		acc = conflict_targets(ps, ((SubqueryScan *) plan)->subplan, acc);
	return acc;
}

/*
 * Executor hooks (start, run, finish), before the executor: open and
 * masquerade the unique tides_btree indexes of ON CONFLICT targets; undo
 * with tidx_unmasquerade.  PostgreSQL 15 opens a target's indexes at its
 * first insert, inside ExecutorRun, and data-modifying CTEs the query did
 * not read run in ExecutorFinish: so all three.
 */
List *
tidx_masquerade_for_query(QueryDesc *qd)
{
	PlannedStmt *ps = qd->plannedstmt;
	List	   *targets = NIL;
	List	   *opened = NIL;
	ListCell   *lc;
	Oid			am;

	if (ps == NULL || ps->commandType == CMD_UTILITY ||
		(!ps->hasModifyingCTE && ps->commandType != CMD_INSERT))
		return NIL;
	targets = conflict_targets(ps, ps->planTree, NIL);
	foreach(lc, ps->subplans)
		targets = conflict_targets(ps, lfirst(lc), targets);
	if (targets == NIL)
		return NIL;
	am = tidx_am_oid();
	if (!OidIsValid(am))
		return NIL;
	foreach(lc, targets)
	{
		Oid			relid = lfirst_oid(lc);

		if (get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE)
		{
			/* rows are routed to leaves, whose indexes open at their first row */
			List	   *all = find_all_inheritors(relid, NoLock, NULL);
			ListCell   *lc2;

			foreach(lc2, all)
				opened = list_concat(opened, tidx_masquerade_indexes(lfirst_oid(lc2), true,
																	 RowExclusiveLock));
		}
		else
			opened = list_concat(opened, tidx_masquerade_indexes(relid, true, RowExclusiveLock));
	}
	return opened;
}

/* the tides_btree indexes (only unique ones if unique_only) of a table, from the catalog */
static List *
tidx_indexes_of(Oid relid, bool unique_only)
{
	Oid			am = tidx_am_oid();
	Relation	pg_index;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	List	   *oids = NIL;

	if (!OidIsValid(am))
		return NIL;
	pg_index = table_open(IndexRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_index_indrelid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	scan = systable_beginscan(pg_index, IndexIndrelidIndexId, true, NULL, 1, &key);
	while ((tup = systable_getnext(scan)) != NULL)
	{
		Form_pg_index ind = (Form_pg_index) GETSTRUCT(tup);

		if (unique_only && !ind->indisunique)
			continue;
		if (rel_am(ind->indexrelid) == am)
			oids = lappend_oid(oids, ind->indexrelid);
	}
	systable_endscan(scan);
	table_close(pg_index, AccessShareLock);
	return oids;
}

/*
 * Masquerade the tides_btree indexes of a table, opening (and holding) each
 * with lockmode; returns them for tidx_unmasquerade.
 */
List *
tidx_masquerade_indexes(Oid relid, bool unique_only, LOCKMODE lockmode)
{
	List	   *oids = tidx_indexes_of(relid, unique_only);
	List	   *opened = NIL;
	ListCell   *lc;

	foreach(lc, oids)
	{
		Relation	index = try_relation_open(lfirst_oid(lc), lockmode);

		if (index == NULL)
			continue;
		if (trt_is_tides_index(index))
		{
			tidx_masquerade_push(index);
			opened = lappend(opened, index);
		}
		else
			relation_close(index, lockmode);
	}
	list_free(oids);
	return opened;
}

/* the same without opening them; returns OIDs for tidx_unmasquerade_oids */
List *
tidx_masquerade_indexes_oid(Oid relid, bool unique_only)
{
	List	   *oids = tidx_indexes_of(relid, unique_only);
	ListCell   *lc;

	foreach(lc, oids)
		tidx_masquerade_push_oid(lfirst_oid(lc));
	return oids;
}

void
tidx_unmasquerade_oids(List *oids)
{
	ListCell   *lc;

	foreach(lc, oids)
		tidx_masquerade_pop_oid(lfirst_oid(lc));
	list_free(oids);
}

void
tidx_unmasquerade(List *opened)
{
	ListCell   *lc;

	foreach(lc, opened)
	{
		tidx_masquerade_pop(lfirst(lc));
		index_close(lfirst(lc), NoLock);
	}
	list_free(opened);
}

/*
 * ALTER TABLE ... ADD CONSTRAINT ... USING INDEX i, together with a command
 * that re-creates i in the same statement (ALTER COLUMN TYPE of one of its
 * columns re-creates the indexes on the column, under their names, before
 * the constraint is added): the masquerade by OID taken when the statement
 * starts does not cover the re-created index, which has a new OID.  So the
 * names are remembered for the statement, and a tides_btree index created
 * under one of them meanwhile is opened and masqueraded as soon as it exists
 * (object access hook).  It is held open, so that the relcache callback keeps
 * the masquerade across reloads, until the constraint that uses it is
 * created (the "is not a btree" check is behind us then): the table rewrite
 * that follows the constraint re-indexes the table, which fails while
 * anyone holds one of its indexes open.  Whatever is still held goes when
 * the statement ends.
 */
void *
tidx_masquerade_names_begin(Oid nsp, List *names)
{
	NameMasq   *prev = name_masq;
	NameMasq   *nm;
	ListCell   *lc;
	MemoryContext old;

	if (names == NIL)
		return prev;
	old = MemoryContextSwitchTo(TopTransactionContext);
	nm = palloc0(sizeof(NameMasq));
	foreach(lc, names)
	{
		PendingName *pn = palloc0(sizeof(PendingName));

		pn->nsp = nsp;
		namestrcpy(&pn->name, (const char *) lfirst(lc));
		nm->names = lappend(nm->names, pn);
	}
	MemoryContextSwitchTo(old);
	name_masq = nm;
	return prev;
}

void
tidx_masquerade_names_end(void *prev)
{
	NameMasq   *nm = name_masq;

	if (nm == prev)
		return;
	name_masq = prev;
	if (nm != NULL)
		tidx_unmasquerade(nm->opened);
}

/* a constraint was created: stop holding the index it uses */
static void
release_named(Oid constraintoid)
{
	Relation	pg_constraint;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			indexoid = InvalidOid;
	ListCell   *lc;

	if (name_masq->opened == NIL)
		return;
	/* inserted by this command: visible with SnapshotSelf */
	pg_constraint = table_open(ConstraintRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_constraint_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(constraintoid));
	scan = systable_beginscan(pg_constraint, ConstraintOidIndexId, true, SnapshotSelf, 1, &key);
	if ((tup = systable_getnext(scan)) != NULL)
		indexoid = ((Form_pg_constraint) GETSTRUCT(tup))->conindid;
	systable_endscan(scan);
	table_close(pg_constraint, AccessShareLock);
	if (!OidIsValid(indexoid))
		return;
	foreach(lc, name_masq->opened)
	{
		Relation	index = lfirst(lc);

		if (RelationGetRelid(index) == indexoid)
		{
			tidx_masquerade_pop(index);
			RelationClose(index);
			name_masq->opened = foreach_delete_current(name_masq->opened, lc);
			return;
		}
	}
}

static void
masquerade_if_named(Oid indexoid, Oid nsp, const char *name)
{
	ListCell   *lc;

	if (name_masq == NULL)
		return;
	foreach(lc, name_masq->names)
	{
		PendingName *pn = lfirst(lc);

		if (pn->nsp == nsp && strcmp(NameStr(pn->name), name) == 0)
		{
			Relation	index = RelationIdGetRelation(indexoid);
			MemoryContext old;

			if (index == NULL)
				return;
			tidx_masquerade_push(index);
			old = MemoryContextSwitchTo(TopTransactionContext);
			name_masq->opened = lappend(name_masq->opened, index);
			MemoryContextSwitchTo(old);
			return;
		}
	}
}

/*
 * Planner hook: planning inside a masquerade window sees the true access
 * method.  tidx_planner_begin returns false when no masquerade is on (then
 * there is nothing to end); otherwise tidx_planner_end must follow.
 */
bool
tidx_planner_begin(void)
{
	if (masqs == NIL)
		return false;
	apply_all(false);
	suspended++;
	return true;
}

void
tidx_planner_end(void)
{
	suspended--;
	if (suspended == 0)
		apply_all(true);
}

/* ------------------------------------------- ALTER TABLE ... ALTER TYPE */

/*
 * ALTER COLUMN TYPE re-creates the indexes on the column from their
 * definitions and reuses the old storage when the new index is "compatible"
 * (CheckIndexCompatible compares operator classes and collations, not the
 * access method).  A PRIMARY KEY or UNIQUE constraint is re-created from its
 * constraint definition, which does not name an access method, so it comes
 * back as btree -- with the b-tree operator classes ambuild recorded, which
 * would make it "compatible" with the tides_btree index and give btree an
 * empty file.  For the duration of the statement, the cached pg_index rows
 * of the tides_btree indexes on the altered columns say "not valid", which
 * CheckIndexCompatible treats as incompatible: such indexes are rebuilt.
 * (Those indexes are dropped by the statement; nothing else reads the flag
 * from the cache before that.)
 */
typedef struct ReuseGuard
{
	HeapTuple	tup;			/* pinned catcache tuple */
	bool		was_valid;
} ReuseGuard;

List *
tidx_guard_reuse(Oid relid, List *colnames)
{
	Oid			am = tidx_am_oid();
	List	   *rels;
	List	   *guard = NIL;
	ListCell   *lc;

	if (!OidIsValid(am) || colnames == NIL)
		return NIL;
	rels = find_all_inheritors(relid, NoLock, NULL);
	foreach(lc, rels)
	{
		Oid			rel = lfirst_oid(lc);
		Relation	pg_index = table_open(IndexRelationId, AccessShareLock);
		ScanKeyData key;
		SysScanDesc scan;
		HeapTuple	tup;
		List	   *oids = NIL;
		ListCell   *lc2;
		AttrNumber	attnums[INDEX_MAX_KEYS * 2];
		int			nattnums = 0;

		foreach(lc2, colnames)
		{
			AttrNumber	a = get_attnum(rel, strVal(lfirst(lc2)));

			if (a > 0 && nattnums < lengthof(attnums))
				attnums[nattnums++] = a;
		}
		ScanKeyInit(&key, Anum_pg_index_indrelid, BTEqualStrategyNumber, F_OIDEQ,
					ObjectIdGetDatum(rel));
		scan = systable_beginscan(pg_index, IndexIndrelidIndexId, true, NULL, 1, &key);
		while ((tup = systable_getnext(scan)) != NULL)
		{
			Form_pg_index ind = (Form_pg_index) GETSTRUCT(tup);
			bool		uses = false;

			for (int i = 0; i < ind->indnatts && !uses; i++)
				for (int j = 0; j < nattnums; j++)
					if (ind->indkey.values[i] == attnums[j])
						uses = true;
			if (uses && rel_am(ind->indexrelid) == am)
				oids = lappend_oid(oids, ind->indexrelid);
		}
		systable_endscan(scan);
		table_close(pg_index, AccessShareLock);

		foreach(lc2, oids)
		{
			HeapTuple	itup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(lfirst_oid(lc2)));
			ReuseGuard *g;

			if (!HeapTupleIsValid(itup))
				continue;
			g = palloc(sizeof(ReuseGuard));
			g->tup = itup;
			g->was_valid = ((Form_pg_index) GETSTRUCT(itup))->indisvalid;
			((Form_pg_index) GETSTRUCT(itup))->indisvalid = false;
			guard = lappend(guard, g);
		}
	}
	return guard;
}

void
tidx_unguard_reuse(List *guard)
{
	ListCell   *lc;

	foreach(lc, guard)
	{
		ReuseGuard *g = lfirst(lc);

		((Form_pg_index) GETSTRUCT(g->tup))->indisvalid = g->was_valid;
		ReleaseSysCache(g->tup);
	}
	list_free_deep(guard);
}
