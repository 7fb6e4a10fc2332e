/*
 * tidx_utility.c -- the setting tides.index_method, and the utility commands
 * that need help with tides_btree indexes.  src/module/module.c owns the
 * ProcessUtility hook and calls tidx_utility_before, _cleanup and _after.
 *
 * tides.index_method = tides_btree makes the b-tree indexes that a user
 * does not ask for by name use tides_btree instead, on ordinary (not
 * partitioned, not partition) tides tables whose key columns tides_btree
 * supports; anything else silently stays btree:
 *   - PRIMARY KEY and UNIQUE constraints of CREATE TABLE (their IndexStmts
 *     pass through here as subcommands) and of ALTER TABLE ADD CONSTRAINT /
 *     ADD COLUMN (the Constraint node's access_method is set);
 *   - CREATE INDEX without a USING clause.  The parse tree cannot tell
 *     "USING btree" from no USING clause, so the statement's text is read
 *     with the SQL scanner: USING at parenthesis depth 0 after ON and before
 *     the column list means an explicit choice, which is kept.
 * CREATE INDEX inside CREATE SCHEMA and indexes copied by LIKE ... INCLUDING
 * INDEXES keep their method.
 *
 * Independently of the setting:
 *   - ALTER TABLE ... ADD CONSTRAINT ... USING INDEX of a tides_btree index
 *     is let through PostgreSQL's "is not a btree" check (src/index/tidx_compat.c);
 *   - ALTER INDEX ... SET TABLESPACE copies an index's (empty) file without
 *     telling the access method, so tides_btree indexes moved that way are
 *     rebuilt in their new place.
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/relation.h"
#include "access/tableam.h"
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_collation_d.h"
#include "catalog/pg_opclass.h"
#include "access/genam.h"
#include "commands/defrem.h"
#include "commands/tablecmds.h"
#include "commands/tablespace.h"
#include "common/keywords.h"
#include "access/nbtree.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_collate.h"
#include "parser/parse_type.h"
#include "parser/parse_utilcmd.h"
#include "parser/scanner.h"
#include "storage/lmgr.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "parser/parse_coerce.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "runtime/trt.h"
#include "index/tidx.h"

/* --------------------------------------------------- was USING written? */

#define KW_TOKEN_BASE 10000

static uint16 *kw_tokens = NULL;

static bool
explicit_using(const char *query, int location, int len)
{
	core_yy_extra_type yyextra;
	core_yyscan_t scanner;
	core_YYSTYPE yylval;
	YYLTYPE		yylloc;
	char	   *str;
	bool		seen_on = false;
	bool		result = false;
	int			depth = 0;

	if (query == NULL)
		return false;
	if (location < 0)
		location = 0;
	if (len <= 0)
		len = strlen(query + location);
	str = pnstrdup(query + location, len);
	if (kw_tokens == NULL)
	{
		kw_tokens = MemoryContextAlloc(TopMemoryContext, sizeof(uint16) * ScanKeywords.num_keywords);
		for (int i = 0; i < ScanKeywords.num_keywords; i++)
			kw_tokens[i] = KW_TOKEN_BASE + i;
	}
	scanner = scanner_init(str, &yyextra, &ScanKeywords, kw_tokens);
	for (;;)
	{
		int			tok = core_yylex(&yylval, &yylloc, scanner);
		const char *kw;

		if (tok == 0 || tok == ';')
			break;
		if (tok == '(')
		{
			if (seen_on && depth == 0)
				break;			/* the column list: no USING before it */
			depth++;
			continue;
		}
		if (tok == ')')
		{
			depth--;
			continue;
		}
		if (depth != 0 || tok < KW_TOKEN_BASE)
			continue;
		kw = GetScanKeyword(tok - KW_TOKEN_BASE, &ScanKeywords);
		if (!seen_on && strcmp(kw, "on") == 0)
			seen_on = true;
		else if (seen_on && strcmp(kw, "using") == 0)
		{
			result = true;
			break;
		}
	}
	scanner_finish(scanner);
	pfree(str);
	return result;
}

/* ------------------------------------------------- can tides_btree do it? */

static bool
table_qualifies(Relation rel)
{
	return rel->rd_rel->relkind == RELKIND_RELATION && !rel->rd_rel->relispartition &&
		trt_is_tides_relation(rel);
}

/* a key column of type typid and collation coll, with opclass name opcname (or NIL) */
static bool
column_supported(Oid am, Oid typid, Oid coll, List *opcname, Oid *opclass_out)
{
	Oid			opclass;
	Oid			opcintype;
	Oid			cmp;
	TidxCol		col;

	if (!OidIsValid(typid))
		return false;
	if (opcname != NIL)
		opclass = get_opclass_oid(am, list_make1(llast(opcname)), true);
	else
		opclass = GetDefaultOpClass(typid, am);
	if (!OidIsValid(opclass))
		return false;
	opcintype = get_opclass_input_type(opclass);
	if (!IsBinaryCoercible(typid, opcintype) && !(opcintype == ANYENUMOID && type_is_enum(typid)))
		return false;
	cmp = get_opfamily_proc(get_opclass_family(opclass), opcintype, opcintype, BTORDER_PROC);
	if (!OidIsValid(cmp))
		return false;
	if (!OidIsValid(coll) && type_is_collatable(typid))
		coll = DEFAULT_COLLATION_OID;
	if (!tidx_col_init(&col, cmp, typid, coll, false, false, 0, ""))
		return false;
	if (opclass_out)
		*opclass_out = opclass;
	return true;
}

static Oid
explicit_collation(List *collname)
{
	return collname ? get_collation_oid(collname, false) : InvalidOid;
}

/* decide for a CREATE INDEX / constraint index; may rewrite opclass names */
static bool
index_stmt_qualifies(IndexStmt *stmt, const char *queryString)
{
	Oid			am = tidx_am_oid();
	LOCKMODE	lockmode = stmt->concurrent ? ShareUpdateExclusiveLock : ShareLock;
	Oid			relid;
	Relation	rel;
	IndexStmt  *t;
	ListCell   *lc;
	bool		ok;
	Oid			opclasses[INDEX_MAX_KEYS];
	int			n = 0;

	if (!OidIsValid(am) || stmt->excludeOpNames != NIL)
		return false;
	/* the lock DefineIndex takes; it takes it again, harmlessly */
	relid = RangeVarGetRelidExtended(stmt->relation, lockmode, RVR_MISSING_OK,
									 RangeVarCallbackOwnsRelation, NULL);
	if (!OidIsValid(relid))
		return false;
	rel = relation_open(relid, NoLock);
	ok = table_qualifies(rel);
	if (ok)
	{
		t = stmt->transformed ? stmt : transformIndexStmt(relid, copyObject(stmt), queryString);
		foreach(lc, t->indexParams)
		{
			IndexElem  *e = lfirst(lc);
			Oid			typid;
			Oid			coll;

			if (e->name)
			{
				AttrNumber attno = get_attnum(relid, e->name);

				if (attno <= 0)
				{
					ok = false;
					break;
				}
				typid = get_atttype(relid, attno);
				{
					HeapTuple	at = SearchSysCache2(ATTNUM, ObjectIdGetDatum(relid), Int16GetDatum(attno));

					if (!HeapTupleIsValid(at))
						elog(ERROR, "cache lookup failed for attribute %d of relation %u", attno, relid);
					coll = ((Form_pg_attribute) GETSTRUCT(at))->attcollation;
					ReleaseSysCache(at);
				}
			}
			else
			{
				typid = exprType(e->expr);
				coll = exprCollation(e->expr);
			}
			if (e->collation)
				coll = explicit_collation(e->collation);
			if (!column_supported(am, typid, coll, e->opclass, &opclasses[n]))
			{
				ok = false;
				break;
			}
			n++;
		}
	}
	relation_close(rel, NoLock);
	if (!ok)
		return false;

	/* name explicit operator classes so that tides_btree's are found */
	n = 0;
	foreach(lc, stmt->indexParams)
	{
		IndexElem  *e = lfirst(lc);

		if (e->opclass != NIL)
		{
			HeapTuple	ct = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclasses[n]));
			Form_pg_opclass opc = (Form_pg_opclass) GETSTRUCT(ct);

			e->opclass = list_make2(makeString(get_namespace_name(opc->opcnamespace)),
									makeString(pstrdup(NameStr(opc->opcname))));
			ReleaseSysCache(ct);
		}
		n++;
	}
	return true;
}

/*
 * Operator class names of a tides_btree IndexStmt that name b-tree classes
 * (LIKE ... INCLUDING INDEXES copies the b-tree classes ambuild records,
 * schema-qualified): use tides_btree's class of the same name.
 */
static void
fix_opclass_names(IndexStmt *stmt)
{
	Oid			am = tidx_am_oid();
	ListCell   *lc;

	if (!OidIsValid(am))
		return;
	foreach(lc, stmt->indexParams)
	{
		IndexElem  *e = lfirst(lc);
		Oid			opc;
		HeapTuple	ct;

		if (e->opclass == NIL || OidIsValid(get_opclass_oid(am, e->opclass, true)))
			continue;
		opc = get_opclass_oid(am, list_make1(llast(e->opclass)), true);
		if (!OidIsValid(opc))
		{
			/* not on the search path: any schema will do */
			Relation	rel = table_open(OperatorClassRelationId, AccessShareLock);
			SysScanDesc scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
			HeapTuple	tup;

			while ((tup = systable_getnext(scan)) != NULL)
			{
				Form_pg_opclass f = (Form_pg_opclass) GETSTRUCT(tup);

				if (f->opcmethod == am && strcmp(NameStr(f->opcname), strVal(llast(e->opclass))) == 0)
				{
					opc = f->oid;
					break;
				}
			}
			systable_endscan(scan);
			table_close(rel, AccessShareLock);
		}
		if (!OidIsValid(opc))
			continue;
		ct = SearchSysCache1(CLAOID, ObjectIdGetDatum(opc));
		e->opclass = list_make2(makeString(get_namespace_name(((Form_pg_opclass) GETSTRUCT(ct))->opcnamespace)),
								makeString(pstrdup(NameStr(((Form_pg_opclass) GETSTRUCT(ct))->opcname))));
		ReleaseSysCache(ct);
	}
}

/* the type and collation of a table column, or of a column being added */
static bool
column_type(Relation rel, List *added, const char *name, Oid *typid, Oid *coll)
{
	AttrNumber	attno = get_attnum(RelationGetRelid(rel), name);
	ListCell   *lc;

	if (attno > 0)
	{
		Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), attno - 1);

		*typid = att->atttypid;
		*coll = att->attcollation;
		return true;
	}
	foreach(lc, added)
	{
		ColumnDef  *cd = lfirst(lc);

		if (strcmp(cd->colname, name) == 0)
		{
			int32		typmod;

			typenameTypeIdAndMod(NULL, cd->typeName, typid, &typmod);
			*coll = cd->collClause ? get_collation_oid(cd->collClause->collname, false)
				: get_typcollation(*typid);
			return true;
		}
	}
	return false;
}

static void
rewrite_constraint(Oid am, Relation rel, List *added, Constraint *c)
{
	ListCell   *lc;

	if ((c->contype != CONSTR_PRIMARY && c->contype != CONSTR_UNIQUE) ||
		c->indexname != NULL || c->access_method != NULL)
		return;
	foreach(lc, c->keys)
	{
		Oid			typid,
					coll;

		if (!column_type(rel, added, strVal(lfirst(lc)), &typid, &coll) ||
			!column_supported(am, typid, coll, NIL, NULL))
			return;
	}
	c->access_method = pstrdup("tides_btree");
}

static void
rewrite_alter_table(AlterTableStmt *stmt)
{
	Oid			am = tidx_am_oid();
	Oid			relid;
	Relation	rel;
	List	   *added = NIL;
	ListCell   *lc;

	if (!OidIsValid(am) || stmt->objtype != OBJECT_TABLE)
		return;
	relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	if (!OidIsValid(relid))
		return;
	rel = try_relation_open(relid, NoLock);
	if (rel == NULL)
		return;
	if (!table_qualifies(rel))
	{
		relation_close(rel, NoLock);
		return;
	}
	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst(lc);

		if (cmd->subtype == AT_AddColumn && IsA(cmd->def, ColumnDef))
			added = lappend(added, cmd->def);
	}
	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst(lc);

		if (cmd->subtype == AT_AddConstraint && cmd->def && IsA(cmd->def, Constraint))
			rewrite_constraint(am, rel, added, (Constraint *) cmd->def);
		else if (cmd->subtype == AT_AddColumn && IsA(cmd->def, ColumnDef))
		{
			ColumnDef  *cd = (ColumnDef *) cmd->def;
			ListCell   *lc2;

			foreach(lc2, cd->constraints)
			{
				Constraint *c = lfirst(lc2);

				if (c->contype == CONSTR_PRIMARY || c->contype == CONSTR_UNIQUE)
				{
					c->keys = list_make1(makeString(cd->colname));
					rewrite_constraint(am, rel, added, c);
					c->keys = NIL;
				}
			}
		}
	}
	relation_close(rel, NoLock);
}

/* ------------------------------------------ help for tides_btree indexes */

/*
 * ADD CONSTRAINT ... USING INDEX: masquerade the named indexes as btree
 * (OIDs); their names go to *names (char *) for indexes the statement
 * re-creates under them (tidx_masquerade_names_begin), with the namespace in
 * *nsp_out.
 */
static List *
using_index_targets(AlterTableStmt *stmt, List **names, Oid *nsp_out)
{
	List	   *oids = NIL;
	ListCell   *lc;
	Oid			relid;
	Oid			nsp;

	if (stmt->objtype != OBJECT_TABLE)
		return NIL;
	relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	if (!OidIsValid(relid))
		return NIL;
	nsp = get_rel_namespace(relid);
	*nsp_out = nsp;
	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst(lc);
		Constraint *c;
		Oid			idx;

		if (cmd->subtype != AT_AddConstraint || cmd->def == NULL || !IsA(cmd->def, Constraint))
			continue;
		c = (Constraint *) cmd->def;
		if (c->indexname == NULL)
			continue;
		*names = lappend(*names, c->indexname);
		idx = get_relname_relid(c->indexname, nsp);
		if (!OidIsValid(idx) || get_rel_relkind(idx) != RELKIND_INDEX)
			continue;
		tidx_masquerade_push_oid(idx);
		oids = lappend_oid(oids, idx);
	}
	return oids;
}

/*
 * ATTACH PARTITION matches the partition's indexes with the parent's by
 * access method among other things: a tides_btree index (with the b-tree
 * operator classes ambuild records) stands for a btree one, as it does for a
 * unique constraint, instead of a second index (or a second primary key,
 * which fails) being created.
 */
static List *
attach_targets(AlterTableStmt *stmt)
{
	List	   *oids = NIL;
	ListCell   *lc;

	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst(lc);
		PartitionCmd *pc;
		Oid			relid;

		if (cmd->subtype != AT_AttachPartition || cmd->def == NULL || !IsA(cmd->def, PartitionCmd))
			continue;
		pc = (PartitionCmd *) cmd->def;
		relid = RangeVarGetRelid(pc->name, NoLock, true);
		if (!OidIsValid(relid))
			continue;
		if (stmt->objtype == OBJECT_INDEX)
		{
			if (get_rel_relkind(relid) == RELKIND_INDEX)
			{
				tidx_masquerade_push_oid(relid);
				oids = lappend_oid(oids, relid);
			}
		}
		else
		{
			List	   *all = find_all_inheritors(relid, NoLock, NULL);
			ListCell   *lc2;

			foreach(lc2, all)
				oids = list_concat(oids, tidx_masquerade_indexes_oid(lfirst_oid(lc2), false));
		}
	}
	return oids;
}

/*
 * CREATE INDEX on a partitioned table attaches matching indexes that the
 * partitions already have, by the same comparison as ATTACH PARTITION.
 */
static List *
partition_index_targets(IndexStmt *stmt)
{
	List	   *oids = NIL;
	Oid			relid;
	List	   *all;
	ListCell   *lc;

	if (strcmp(stmt->accessMethod, DEFAULT_INDEX_TYPE) != 0 || stmt->relation == NULL)
		return NIL;
	relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		return NIL;
	all = find_all_inheritors(relid, NoLock, NULL);
	foreach(lc, all)
		oids = list_concat(oids, tidx_masquerade_indexes_oid(lfirst_oid(lc), false));
	return oids;
}

/* ALTER COLUMN TYPE: the columns whose indexes get re-created */
static List *
guard_type_changes(AlterTableStmt *stmt)
{
	List	   *cols = NIL;
	ListCell   *lc;
	Oid			relid;

	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst(lc);

		if (cmd->subtype == AT_AlterColumnType && cmd->name)
			cols = lappend(cols, makeString(cmd->name));
	}
	if (cols == NIL)
		return NIL;
	relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	if (!OidIsValid(relid))
		return NIL;
	return tidx_guard_reuse(relid, cols);
}

/* ALTER INDEX ... SET TABLESPACE of a tides_btree index */
static Oid
moved_index(AlterTableStmt *stmt)
{
	ListCell   *lc;
	Oid			relid;
	Relation	rel;
	bool		ours;

	foreach(lc, stmt->cmds)
	{
		if (((AlterTableCmd *) lfirst(lc))->subtype == AT_SetTableSpace)
			break;
	}
	if (lc == NULL)
		return InvalidOid;
	relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	if (!OidIsValid(relid))
		return InvalidOid;
	rel = try_relation_open(relid, NoLock);
	if (rel == NULL)
		return InvalidOid;
	ours = trt_is_tides_index(rel);
	relation_close(rel, NoLock);
	return ours ? relid : InvalidOid;
}

/* rebuild tides_btree indexes whose current relfilenode has no tree */
static void
rebuild_if_storage_missing(Oid indexoid)
{
	Relation	index = index_open(indexoid, AccessExclusiveLock);
	uint64		tree;
	bool		missing = trt_is_tides_index(index) &&
		!trt_lookup_tree(&index->rd_node, index->rd_backend, &tree);
	char		persistence = index->rd_rel->relpersistence;

	index_close(index, NoLock);
	if (missing)
	{
		ReindexParams params = {0};

		reindex_index(indexoid, false, persistence, &params);
	}
}

static List *
indexes_in_tablespace(Oid spc)
{
	Oid			am = tidx_am_oid();
	Relation	pg_class;
	TableScanDesc scan;
	HeapTuple	tup;
	List	   *result = NIL;

	if (!OidIsValid(am))
		return NIL;
	if (spc == MyDatabaseTableSpace)
		spc = InvalidOid;
	pg_class = table_open(RelationRelationId, AccessShareLock);
	scan = table_beginscan_catalog(pg_class, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_class c = (Form_pg_class) GETSTRUCT(tup);

		if (c->relkind == RELKIND_INDEX && c->relam == am && c->reltablespace == spc)
			result = lappend_oid(result, c->oid);
	}
	table_endscan(scan);
	table_close(pg_class, AccessShareLock);
	return result;
}

/*
 * DROP INDEX CONCURRENTLY: the object access hook (src/runtime/commands.c) cannot
 * write the drop marker, since the command must not have an xid when it
 * starts; its last transaction drops the index's storage, so the trees are
 * scheduled then, after PostgreSQL's part.
 */
static List *
concurrent_drop_trees(DropStmt *stmt)
{
	List	   *trees = NIL;
	ListCell   *lc;

	if (stmt->removeType != OBJECT_INDEX || !stmt->concurrent)
		return NIL;
	foreach(lc, stmt->objects)
	{
		RangeVar   *rv = makeRangeVarFromNameList((List *) lfirst(lc));
		Oid			relid = RangeVarGetRelid(rv, NoLock, true);
		Relation	rel;
		uint64		tree;

		if (!OidIsValid(relid))
			continue;
		rel = try_relation_open(relid, NoLock);
		if (rel == NULL)
			continue;
		if (trt_is_tides_index(rel) && trt_lookup_tree(&rel->rd_node, rel->rd_backend, &tree))
		{
			uint64	   *p = palloc(sizeof(uint64));

			*p = tree;
			trees = lappend(trees, p);
		}
		relation_close(rel, NoLock);
	}
	return trees;
}

/* ------------------------------------------------------------------ hook */

/*
 * Before the command: with tides.index_method = tides_btree, make the
 * statement's unnamed b-tree indexes tides_btree (*pstmt may be replaced by
 * a copy, and *readOnlyTree then becomes false); fix operator class names;
 * masquerade the indexes the command must take for btree; note what
 * tidx_utility_after must do.  tidx_utility_cleanup must follow, also on
 * error.
 */
void
tidx_utility_before(PlannedStmt **pstmt_p, bool *readOnlyTree, const char *queryString,
					ProcessUtilityContext context, TidxUtilityState *st)
{
	PlannedStmt *pstmt = *pstmt_p;
	Node	   *node = pstmt->utilityStmt;

	memset(st, 0, sizeof(*st));
	if (tidx_index_method == TIDX_INDEX_METHOD_TIDES_BTREE &&
		(IsA(node, IndexStmt) || IsA(node, AlterTableStmt)))
	{
		if (*readOnlyTree)
		{
			pstmt = copyObject(pstmt);
			node = pstmt->utilityStmt;
			*readOnlyTree = false;
		}
		if (IsA(node, IndexStmt))
		{
			IndexStmt  *stmt = (IndexStmt *) node;

			if (strcmp(stmt->accessMethod, DEFAULT_INDEX_TYPE) == 0 &&
				(context == PROCESS_UTILITY_SUBCOMMAND ? (stmt->isconstraint || stmt->primary) :
				 !explicit_using(queryString, pstmt->stmt_location, pstmt->stmt_len)) &&
				index_stmt_qualifies(stmt, queryString))
				stmt->accessMethod = pstrdup("tides_btree");
		}
		else
			rewrite_alter_table((AlterTableStmt *) node);
	}
	if (IsA(node, IndexStmt))
	{
		st->masq = partition_index_targets((IndexStmt *) node);
		if (strcmp(((IndexStmt *) node)->accessMethod, "tides_btree") == 0)
		{
			if (*readOnlyTree)
			{
				pstmt = copyObject(pstmt);
				node = pstmt->utilityStmt;
				*readOnlyTree = false;
			}
			fix_opclass_names((IndexStmt *) node);
		}
	}
	else if (IsA(node, AlterTableStmt))
	{
		st->masq = using_index_targets((AlterTableStmt *) node, &st->masq_names, &st->masq_nsp);
		st->masq = list_concat(st->masq, attach_targets((AlterTableStmt *) node));
		st->guard = guard_type_changes((AlterTableStmt *) node);
		if (((AlterTableStmt *) node)->objtype == OBJECT_INDEX)
			st->moved = moved_index((AlterTableStmt *) node);
	}
	else if (IsA(node, DropStmt))
		st->dropped_trees = concurrent_drop_trees((DropStmt *) node);
	else if (IsA(node, AlterTableMoveAllStmt) &&
			 ((AlterTableMoveAllStmt *) node)->objtype == OBJECT_INDEX)
		st->move_all_spc = get_tablespace_oid(((AlterTableMoveAllStmt *) node)->new_tablespacename, true);

	st->prev_names = tidx_masquerade_names_begin(st->masq_nsp, st->masq_names);
	*pstmt_p = pstmt;
}

/* after the command, on success or error: every masquerade and guard ends */
void
tidx_utility_cleanup(TidxUtilityState *st)
{
	tidx_masquerade_names_end(st->prev_names);
	tidx_unmasquerade_oids(st->masq);
	tidx_unguard_reuse(st->guard);
}

/*
 * After the command succeeded: DROP INDEX CONCURRENTLY's trees are
 * scheduled, and tides_btree indexes moved by SET TABLESPACE without their
 * storage are rebuilt.
 */
void
tidx_utility_after(TidxUtilityState *st)
{
	ListCell   *lc;

	foreach(lc, st->dropped_trees)
		trt_drop_tree_at_end(*(uint64 *) lfirst(lc), true);
	if (OidIsValid(st->moved))
	{
		CommandCounterIncrement();
		rebuild_if_storage_missing(st->moved);
	}
	if (OidIsValid(st->move_all_spc))
	{
		List	   *list;

		CommandCounterIncrement();
		list = indexes_in_tablespace(st->move_all_spc);
		foreach(lc, list)
			rebuild_if_storage_missing(lfirst_oid(lc));
	}
}
