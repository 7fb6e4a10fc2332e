/*
 * tidx_build.c -- ambuild / ambuildempty for tides_btree, and the life cycle of
 * an index's engine tree.
 *
 * PostgreSQL creates an index's storage itself (an empty file) and then
 * calls ambuild, for CREATE INDEX and for every rebuild (REINDEX, TRUNCATE,
 * CLUSTER, VACUUM FULL, ALTER TABLE rewrites).  So ambuild is where the tree
 * is made:
 *   - a new relfilenode gets a new tree (dropped if the transaction aborts);
 *     relfilenodes the index had earlier in this transaction (the storage
 *     this rebuild replaces) have their trees dropped when it commits;
 *   - a relfilenode that already has a tree is being rebuilt in place
 *     (truncation of a table created in this transaction, ON COMMIT DELETE
 *     ROWS): its tree is replaced.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/indexing.h"
#include "catalog/pg_class.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/tuplesort.h"

#include "index/tidx.h"

/* ------------------------------------------------------------ storage */

/* trees this transaction already scheduled for dropping (avoid repeats) */
static TransactionId sched_xid = InvalidTransactionId;
static List *sched_trees = NIL;

static void
drop_at_commit_once(uint64 tree)
{
	TransactionId xid = GetTopTransactionId();
	MemoryContext old;
	ListCell   *lc;

	if (xid != sched_xid)
	{
		list_free_deep(sched_trees);
		sched_trees = NIL;
		sched_xid = xid;
	}
	foreach(lc, sched_trees)
		if (*(uint64 *) lfirst(lc) == tree)
			return;
	trt_drop_tree_at_end(tree, true);
	old = MemoryContextSwitchTo(TopMemoryContext);
	{
		uint64	   *p = palloc(sizeof(uint64));

		*p = tree;
		sched_trees = lappend(sched_trees, p);
	}
	MemoryContextSwitchTo(old);
}

/*
 * Storage this index had earlier in the current transaction: pg_class row
 * versions of the index that this transaction replaced, with another
 * relfilenode.  Their trees go when the transaction commits, as their files
 * do.
 */
static void
drop_replaced_trees(Relation index)
{
	Relation	pg_class = table_open(RelationRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;

	ScanKeyInit(&key, Anum_pg_class_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(RelationGetRelid(index)));
	scan = systable_beginscan(pg_class, ClassOidIndexId, true, SnapshotAny, 1, &key);
	while ((tup = systable_getnext(scan)) != NULL)
	{
		Form_pg_class c = (Form_pg_class) GETSTRUCT(tup);
		HeapTupleHeader h = tup->t_data;
		TransactionId xmin = HeapTupleHeaderGetXmin(h);
		TransactionId xmax;
		RelFileNode old;
		uint64		tree;

		if (h->t_infomask & HEAP_XMAX_INVALID || HeapTupleHeaderIsOnlyLocked(h))
			continue;
		xmax = HeapTupleHeaderGetUpdateXid(h);
		if (!TransactionIdIsValid(xmax) || !TransactionIdIsCurrentTransactionId(xmax))
			continue;			/* not replaced by this transaction */
		if (!HeapTupleHeaderXminFrozen(h) && !TransactionIdIsCurrentTransactionId(xmin) &&
			!TransactionIdDidCommit(xmin))
			continue;			/* never was the index's storage */
		old.spcNode = OidIsValid(c->reltablespace) ? c->reltablespace : MyDatabaseTableSpace;
		old.dbNode = MyDatabaseId;
		old.relNode = c->relfilenode;
		if (RelFileNodeEquals(old, index->rd_node))
			continue;
		if (trt_lookup_tree(&old, index->rd_backend, &tree))
			drop_at_commit_once(tree);
	}
	systable_endscan(scan);
	table_close(pg_class, AccessShareLock);
}

static uint64
new_storage(Relation index)
{
	uint64		tree;

	trt_xact_note_write();
	if (trt_lookup_tree(&index->rd_node, index->rd_backend, &tree))
	{
		/* rebuilt in place: the old contents go whatever happens */
		return trt_replace_tree(index);
	}
	drop_replaced_trees(index);
	return trt_create_tree(index, &index->rd_node, index->rd_rel->relpersistence);
}

/* ------------------------------------------------------------ building */

/*
 * The build sorts, then writes in key order.  The table scan encodes every
 * entry and hands it to a tuplesort (maintenance_work_mem, spilling to
 * temporary files as nbtree's build does) as one bytea: the key without its
 * tree prefix (the same 8 bytes in every entry, which would leave the
 * sort's abbreviated keys nothing to tell apart) || value || the length of
 * that key part (4 bytes, BE).  Keys are distinct (each holds its TID) and
 * none is a prefix of another (self-delimiting columns, fixed-length TID),
 * so bytea order of these strings is the order of their keys.
 *
 * A build of at least tides.bulk_load_threshold goes into the engine's
 * ingestion (src/runtime/ingest.c): SSTables written by this backend in
 * key order, installed below every file that could hold keys of the new
 * tree -- no memtable, no flush, and no compaction that rewrites the index
 * once per level it passes.  The tree is new (ambuild made it), nobody else
 * writes it until the index is ready, and the ingestion keeps both logs'
 * rules (WAL records of the entries, the transaction's tag).  A smaller
 * build writes its sorted entries through the memtables, as any write.
 */
#define BUILD_BATCH_BYTES (1024 * 1024)
#define BUILD_INSTALL_BYTES ((uint64) 256 * 1024 * 1024)

typedef struct BuildState
{
	TidxDesc   *d;
	Relation	heap;
	tides_batch *b;
	Tuplesortstate *sort;
	TrtIngest  *ingest;			/* a large build's ingestion, or NULL */
	MemoryContextCallback cb;
	MemoryContext tmp;
	double		indtuples;
	uint64		bytes;			/* keys and values sorted */
	HTAB	   *not_alive;		/* unique builds: TIDs of rows not alive */
	StringInfoData key;
} BuildState;

/* on success and on error alike: what the build holds outside its memory */
static void
release_build(void *arg)
{
	BuildState *bs = arg;

	if (bs->b)
	{
		tides_batch_free(bs->b);
		bs->b = NULL;
	}
	/* files of an ingestion not installed are deleted */
	trt_ingest_end(bs->ingest);
	bs->ingest = NULL;
}

/* write the batch: into the ingestion, or through the memtables */
static void
flush_batch(BuildState *bs)
{
	if (tides_batch_count(bs->b) == 0)
		return;
	if (bs->ingest)
	{
		trt_ingest_add(bs->ingest, bs->b);
		if (trt_ingest_pending_bytes(bs->ingest) >= BUILD_INSTALL_BYTES)
			trt_ingest_install(bs->ingest);
	}
	else
	{
		trt_xact_note_write();
		trt_xact_tag_batch(bs->b);
		trt_write_batch(bs->b);
	}
	tides_batch_clear(bs->b);
}

static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *state)
{
	BuildState *bs = state;
	MemoryContext old = MemoryContextSwitchTo(bs->tmp);
	IndexTuple	itup;
	size_t		klen,
				vlen;
	bytea	   *e;
	uint8	   *p;

	resetStringInfo(&bs->key);
	tidx_encode_prefix(&bs->key, bs->d, values, isnull);
	tidx_append_tid(&bs->key, tid);
	tidx_check_key_size(index, bs->heap, bs->key.len, tid);
	itup = tidx_entry_value(bs->d, values, isnull, tid);
	vlen = TIDX_VALUE_LEN(itup);
	klen = bs->key.len - 8;		/* without the tree */
	e = palloc(VARHDRSZ + klen + vlen + 4);
	SET_VARSIZE(e, VARHDRSZ + klen + vlen + 4);
	p = (uint8 *) VARDATA(e);
	memcpy(p, bs->key.data + 8, klen);
	if (vlen > 0)
		memcpy(p + klen, itup, vlen);
	p += klen + vlen;
	p[0] = (uint8) (klen >> 24);
	p[1] = (uint8) (klen >> 16);
	p[2] = (uint8) (klen >> 8);
	p[3] = (uint8) klen;
	tuplesort_putdatum(bs->sort, PointerGetDatum(e), false);
	bs->bytes += bs->key.len + vlen;
	if (bs->not_alive && !tupleIsAlive)
		(void) hash_search(bs->not_alive, tid, HASH_ENTER, NULL);
	bs->indtuples += 1;
	MemoryContextSwitchTo(old);
	MemoryContextReset(bs->tmp);
}

/* the sorted entries into the tree */
static void
write_sorted(BuildState *bs)
{
	Datum		val;
	bool		isnull;
	uint8		tree[8];

	trt_key_put_tree(tree, bs->d->tree);
	tuplesort_performsort(bs->sort);
	if (trt_bulk_load_threshold_kb >= 0 && bs->bytes >= (uint64) trt_bulk_load_threshold_kb * 1024)
		bs->ingest = trt_ingest_begin(bs->d->tree,
									  bs->d->index->rd_rel->relpersistence == RELPERSISTENCE_PERMANENT);
	while (tuplesort_getdatum(bs->sort, true, &val, &isnull, NULL))
	{
		bytea	   *e = DatumGetByteaPP(val);
		const uint8 *p = (const uint8 *) VARDATA_ANY(e);
		size_t		len = VARSIZE_ANY_EXHDR(e);
		size_t		klen;

		Assert(!isnull && len >= 4);
		klen = ((size_t) p[len - 4] << 24) | ((size_t) p[len - 3] << 16) |
			((size_t) p[len - 2] << 8) | p[len - 1];
		Assert(klen <= len - 4);
		resetStringInfo(&bs->key);
		appendBinaryStringInfo(&bs->key, (const char *) tree, 8);
		appendBinaryStringInfo(&bs->key, (const char *) p, klen);
		if (tides_batch_put(bs->b, bs->key.data, bs->key.len, klen < len - 4 ? p + klen : NULL,
							len - 4 - klen) != TIDES_OK)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("tides_btree: could not add an index entry of %d bytes", bs->key.len)));
		if ((Pointer) e != DatumGetPointer(val))
			pfree(e);
		pfree(DatumGetPointer(val));
		if (tides_batch_bytes(bs->b) >= BUILD_BATCH_BYTES)
			flush_batch(bs);
	}
	flush_batch(bs);
	if (bs->ingest)
		trt_ingest_install(bs->ingest);
}

/*
 * Unique builds: equal keys are adjacent in the tree; two entries of one key
 * whose rows are both alive are a duplicate (nbtree's rule).
 */
static void
check_build_duplicates(BuildState *bs)
{
	TidxDesc   *d = bs->d;
	uint8		lo[8],
				hi[8];
	TrtIter   *w;
	char	   *prev = NULL;
	int			prevlen = 0;
	int			prevcap = 0;
	TupleDesc	tupdesc = RelationGetDescr(d->index);

	trt_key_put_tree(lo, d->tree);
	trt_key_put_tree(hi, d->tree + 1);
	w = trt_iter_open(lo, 8, hi, 8, "read an index");
	for (tides_iter_first(w->it); tides_iter_valid(w->it); tides_iter_next(w->it))
	{
		size_t		klen,
					vlen;
		const uint8 *k = tides_iter_key(w->it, &klen);
		const char *v = tides_iter_value(w->it, &vlen);
		ItemPointerData tid;
		int			plen = (int) klen - TIDX_TID_LEN;
		bool		skip = false;
		IndexTuple	itup;

		CHECK_FOR_INTERRUPTS();
		tidx_decode_tid(k, klen, &tid);
		if (hash_search(bs->not_alive, &tid, HASH_FIND, NULL) != NULL)
			continue;
		itup = tidx_entry_tuple(d, k, klen, v, vlen);
		if (itup == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INDEX_CORRUPTED),
					 errmsg("tides_btree index \"%s\" has a malformed entry",
							RelationGetRelationName(d->index))));
		if (!d->nulls_not_distinct && IndexTupleHasNulls(itup))
		{
			for (int i = 0; i < d->nkeys; i++)
			{
				bool		isnull;

				(void) index_getattr(itup, i + 1, tupdesc, &isnull);
				if (isnull)
					skip = true;
			}
		}
		if (!skip && prev != NULL && prevlen == plen && memcmp(prev, k, plen) == 0)
		{
			Datum		values[INDEX_MAX_KEYS];
			bool		isnull[INDEX_MAX_KEYS];
			char	   *key_desc;

			index_deform_tuple(itup, tupdesc, values, isnull);
			key_desc = BuildIndexValueDescription(d->index, values, isnull);
			ereport(ERROR,
					(errcode(ERRCODE_UNIQUE_VIOLATION),
					 errmsg("could not create unique index \"%s\"",
							RelationGetRelationName(d->index)),
					 key_desc ? errdetail("Key %s is duplicated.", key_desc) :
					 errdetail("Duplicate keys exist."),
					 errtableconstraint(bs->heap, RelationGetRelationName(d->index))));
		}
		if (!skip)
		{
			if (prevcap < plen)
			{
				prevcap = Max(plen, 64);
				prev = prev ? repalloc(prev, prevcap) : palloc(prevcap);
			}
			memcpy(prev, k, plen);
			prevlen = plen;
		}
		pfree(itup);
	}
	trt_iter_check(w);
	trt_iter_close(w);
}

IndexBuildResult *
tidx_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result = palloc0(sizeof(IndexBuildResult));
	TidxDesc	d;
	BuildState *bsp = palloc0(sizeof(BuildState));	/* lives as long as its reset callback */
	double		reltuples;
#define bs (*bsp)

	/* tablespace and columns first: both fail before anything is written */
	trt_check_tablespace(index->rd_node.spcNode, index);
	tidx_desc_init(&d, index, true);
	/* REINDEX of VACUUM FULL and CLUSTER builds without checking uniqueness */
	d.unique = indexInfo->ii_Unique;
	d.tree = new_storage(index);
	tidx_use_btree_opclasses(heap, index);

	bs.d = &d;
	bs.heap = heap;
	bs.b = tides_batch_new();
	if (bs.b == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	bs.cb.func = release_build;
	bs.cb.arg = &bs;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &bs.cb);
	bs.tmp = AllocSetContextCreate(CurrentMemoryContext, "tides_btree build", ALLOCSET_DEFAULT_SIZES);
	initStringInfo(&bs.key);
	bs.sort = tuplesort_begin_datum(BYTEAOID, ByteaLessOperator, InvalidOid, false,
									maintenance_work_mem, NULL, TUPLESORT_NONE);
	if (d.unique)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(ItemPointerData);
		ctl.entrysize = sizeof(ItemPointerData);
		ctl.hcxt = CurrentMemoryContext;
		bs.not_alive = hash_create("tides_btree build", 256, &ctl,
								   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}

	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   build_callback, &bs, NULL);
	write_sorted(&bs);
	tuplesort_end(bs.sort);
	release_build(&bs);
	if (d.unique)
		check_build_duplicates(&bs);
	MemoryContextDelete(bs.tmp);

	result->heap_tuples = reltuples;
	result->index_tuples = bs.indtuples;
#undef bs
	return result;
}

/*
 * Unlogged indexes: the entries live in the engine, not in the init fork,
 * which stays empty.
 */
void
tidx_buildempty(Relation index)
{
}
