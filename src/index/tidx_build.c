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
#include "access/parallel.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/indexing.h"
#include "catalog/pg_class.h"
#include "catalog/pg_operator_d.h"
#include "catalog/pg_type_d.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "storage/condition_variable.h"
#include "storage/spin.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

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
 * entry and hands it to the build's sort (tidx_sort.c: maintenance_work_mem,
 * spilling sorted runs to temporary files as nbtree's build does) as one
 * byte string: the key without its tree prefix (the same 8 bytes in every
 * entry) || value || the key's length (4 bytes, BE), sorted by a prefix:
 * the first 8 bytes of the key's sort key, which packs the leading
 * fixed-width columns into their informative bytes (tidx_sortkey.c).  Keys
 * are distinct (each holds its TID) and none is a prefix of another
 * (self-delimiting columns, fixed-length TID), so the byte order of these
 * strings is the order of their keys; the writer checks that the keys
 * ascend.  The length's top bit says the row was not alive
 * (BUILD_NOT_ALIVE): the bytes after the key never decide the order, and a
 * unique build learns there, as the entries come out of the sort, which
 * rows cannot be duplicates.
 *
 * A parallel build (the workers plan_create_index_workers grants, as for a
 * btree index; PostgreSQL 15 asks only nbtree itself) splits the table scan
 * between the leader and its workers through the table's parallel scan;
 * each participant sorts what it read into its own runs in a shared file
 * set, and the leader merges the runs and writes, as nbtree's parallel
 * build does.  Workers only read: every write is the leader's.
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
#define BUILD_INSTALL_BYTES ((uint64) 256 * 1024 * 1024)
#define BUILD_NOT_ALIVE 0x80000000u

/* what a parallel build shares (the DSM), the table's parallel scan after it */
typedef struct BuildShared
{
	Oid			heaprelid;
	Oid			indexrelid;
	uint64		tree;
	bool		isunique;
	bool		isconcurrent;
	int			nsorts;			/* requested workers + the leader: each one's memory share */
	TimestampTz sortkey_near;	/* origin of the sort key's dates and timestamps */
	ConditionVariable done_cv;
	slock_t		mutex;
	/* filled in as participants finish */
	int			ndone;
	double		reltuples;
	double		indtuples;
	uint64		bytes;
	bool		brokenhotchain;
} BuildShared;

#define BUILD_SHARED_SCAN(shared) \
	((ParallelTableScanDesc) ((char *) (shared) + BUFFERALIGN(sizeof(BuildShared))))

/* the participants' sorted runs: files in the set, how many each wrote (BuildShared.mutex) */
typedef struct BuildRuns
{
	SharedFileSet fileset;
	int			nruns[FLEXIBLE_ARRAY_MEMBER];	/* by participant: workers, then the leader */
} BuildRuns;

/* shm_toc keys */
#define BUILD_KEY_SHARED	UINT64CONST(0x7ED0000000000001)
#define BUILD_KEY_SORT		UINT64CONST(0x7ED0000000000002)
#define BUILD_KEY_QUERY		UINT64CONST(0x7ED0000000000003)
#define BUILD_KEY_WAL		UINT64CONST(0x7ED0000000000004)
#define BUILD_KEY_BUFFER	UINT64CONST(0x7ED0000000000005)

typedef struct BuildLeader
{
	ParallelContext *pcxt;
	int			nparticipants;	/* runs to merge: the launched workers and the leader */
	BuildShared *shared;
	BuildRuns  *runs;
	Snapshot	snapshot;
	WalUsage   *walusage;
	BufferUsage *bufferusage;
} BuildLeader;

typedef struct BuildState
{
	TidxDesc   *d;
	Relation	heap;
	tides_batch *b;
	TidxSort   *sort;
	TrtIngest  *ingest;			/* a large build's ingestion, or NULL */
	MemoryContextCallback cb;
	MemoryContext tmp;
	double		indtuples;
	uint64		bytes;			/* keys and values sorted */
	HTAB	   *not_alive;		/* unique builds: TIDs of rows not alive */
	StringInfoData key;
	StringInfoData last;		/* the writer's previous key */
	TidxSortKey skey;			/* how the sort's prefixes pack the leading columns */
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

/* the length word that ends a sorted entry (big-endian) */
static void
put_word(uint8 *p, uint32 w)
{
	p[0] = (uint8) (w >> 24);
	p[1] = (uint8) (w >> 16);
	p[2] = (uint8) (w >> 8);
	p[3] = (uint8) w;
}

static uint32
get_word(const uint8 *p)
{
	return ((uint32) p[0] << 24) | ((uint32) p[1] << 16) | ((uint32) p[2] << 8) | p[3];
}

static void
build_callback(Relation index, ItemPointer tid, Datum *values, bool *isnull,
			   bool tupleIsAlive, void *state)
{
	BuildState *bs = state;
	MemoryContext old = MemoryContextSwitchTo(bs->tmp);
	IndexTuple	itup;
	uint32		klen;
	uint64		prefix;
	uint8		word[4];

	resetStringInfo(&bs->key);
	tidx_encode_prefix(&bs->key, bs->d, values, isnull);
	tidx_append_tid(&bs->key, tid);
	tidx_check_key_size(index, bs->heap, bs->key.len, tid);
	itup = tidx_entry_value(bs->d, values, isnull, tid);
	bs->bytes += bs->key.len + TIDX_VALUE_LEN(itup);

	/* the sorted string: the key without its tree, the value, the key's length */
	klen = bs->key.len - 8;
	prefix = tidx_sortkey_prefix((const uint8 *) bs->key.data + 8, klen, &bs->skey);
	if (itup)
		tidx_put_bytes(&bs->key, itup, IndexTupleSize(itup));
	StaticAssertStmt(TIDX_MAX_KEY_LEN < BUILD_NOT_ALIVE, "a key's length leaves the flag bit free");
	put_word(word, klen | (tupleIsAlive ? 0 : BUILD_NOT_ALIVE));
	tidx_put_bytes(&bs->key, word, 4);
	tidx_sort_put(bs->sort, prefix, bs->key.data + 8, bs->key.len - 8);
	bs->indtuples += 1;
	MemoryContextSwitchTo(old);
	MemoryContextReset(bs->tmp);
}

/* a < b, as the engine orders keys (bytes, then length) */
static bool
key_below(const StringInfo a, const StringInfo b)
{
	int			c = memcmp(a->data, b->data, Min(a->len, b->len));

	return c < 0 || (c == 0 && a->len < b->len);
}

/* the sorted entries into the tree */
static void
write_sorted(BuildState *bs)
{
	const uint8 *p;
	uint32		len;
	uint8		tree[8];

	trt_key_put_tree(tree, bs->d->tree);
	resetStringInfo(&bs->key);
	resetStringInfo(&bs->last);
	if (trt_bulk_load_threshold_kb >= 0 && bs->bytes >= (uint64) trt_bulk_load_threshold_kb * 1024)
		bs->ingest = trt_ingest_begin(bs->d->tree,
									  bs->d->index->rd_rel->relpersistence == RELPERSISTENCE_PERMANENT);
	while (tidx_sort_next(bs->sort, &p, &len))
	{
		uint32		word;
		size_t		klen;
		StringInfoData prev;

		CHECK_FOR_INTERRUPTS();
		if (len < 4)
			elog(ERROR, "tides_btree: index build sorted an entry of %u bytes", len);
		word = get_word(p + len - 4);
		klen = word & ~BUILD_NOT_ALIVE;
		if (klen > len - 4)
			elog(ERROR, "tides_btree: index build sorted a key of %zu bytes in an entry of %u", klen, len);
		/* bs->last keeps the previous key */
		prev = bs->key;
		bs->key = bs->last;
		bs->last = prev;
		resetStringInfo(&bs->key);
		tidx_put_bytes(&bs->key, tree, 8);
		tidx_put_bytes(&bs->key, p, klen);
		/* the order the tree needs: never written out of it */
		if (bs->last.len > 0 && !key_below(&bs->last, &bs->key))
			elog(ERROR, "tides_btree: index build sorted its entries out of key order");
		if (bs->not_alive && (word & BUILD_NOT_ALIVE))
		{
			ItemPointerData tid;

			tidx_decode_tid((const uint8 *) bs->key.data, bs->key.len, &tid);
			(void) hash_search(bs->not_alive, &tid, HASH_ENTER, NULL);
		}
		if (tides_batch_put(bs->b, bs->key.data, bs->key.len, klen < len - 4 ? p + klen : NULL,
							len - 4 - klen) != TIDES_OK)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("tides_btree: could not add an index entry of %d bytes", bs->key.len)));
		if (tides_batch_bytes(bs->b) >= trt_batch_limit())
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

/* ------------------------------------------------------------ participants */

/*
 * A participant's state: the sort it feeds, the scratch the callback uses,
 * the sort key's origins (near: the leader's transaction start, the same in
 * every participant).
 */
static void
build_state_init(BuildState *bs, TidxDesc *d, Relation heap, TidxSort *sort, TimestampTz near)
{
	memset(bs, 0, sizeof(*bs));
	bs->d = d;
	bs->heap = heap;
	bs->sort = sort;
	bs->tmp = AllocSetContextCreate(CurrentMemoryContext, "tides_btree build", ALLOCSET_DEFAULT_SIZES);
	initStringInfo(&bs->key);
	initStringInfo(&bs->last);
	tidx_sortkey_init(&bs->skey, d, near);
}

/*
 * One participant of a parallel build, the leader included: its share of
 * the table's parallel scan into its own sorted runs, then its counts into
 * the shared state.
 */
static void
scan_and_sort(BuildShared *shared, BuildRuns *runs, int participant, Relation heap,
			  Relation index, int sortmem, bool progress)
{
	IndexInfo  *info = BuildIndexInfo(index);
	TableScanDesc scan;
	TidxDesc	d;
	BuildState	bs;
	double		reltuples;
	int			nruns;

	tidx_desc_init(&d, index, true);
	d.unique = shared->isunique;
	d.tree = shared->tree;
	info->ii_Unique = shared->isunique;	/* as the leader's: rebuilds need not check */
	build_state_init(&bs, &d, heap, tidx_sort_begin(sortmem, &runs->fileset, participant),
					 shared->sortkey_near);
	info->ii_Concurrent = shared->isconcurrent;
	scan = table_beginscan_parallel(heap, BUILD_SHARED_SCAN(shared));
	reltuples = table_index_build_scan(heap, index, info, true, progress, build_callback, &bs, scan);
	nruns = tidx_sort_write_runs(bs.sort);
	tidx_sort_end(bs.sort);
	MemoryContextDelete(bs.tmp);

	SpinLockAcquire(&shared->mutex);
	runs->nruns[participant] = nruns;
	shared->ndone++;
	shared->reltuples += reltuples;
	shared->indtuples += bs.indtuples;
	shared->bytes += bs.bytes;
	if (info->ii_BrokenHotChain)
		shared->brokenhotchain = true;
	SpinLockRelease(&shared->mutex);
	ConditionVariableSignal(&shared->done_cv);
}

/* a worker's entry point (CreateParallelContext names it) */
PGDLLEXPORT void tidx_parallel_build_main(dsm_segment *seg, shm_toc *toc);

void
tidx_parallel_build_main(dsm_segment *seg, shm_toc *toc)
{
	BuildShared *shared = shm_toc_lookup(toc, BUILD_KEY_SHARED, false);
	BuildRuns  *runs = shm_toc_lookup(toc, BUILD_KEY_SORT, false);
	/* the locks index.c holds in the leader: no conflict with it */
	LOCKMODE	heap_mode = shared->isconcurrent ? ShareUpdateExclusiveLock : ShareLock;
	LOCKMODE	index_mode = shared->isconcurrent ? RowExclusiveLock : AccessExclusiveLock;
	Relation	heap;
	Relation	index;
	WalUsage   *walusage;
	BufferUsage *bufferusage;

	debug_query_string = shm_toc_lookup(toc, BUILD_KEY_QUERY, true);
	pgstat_report_activity(STATE_RUNNING, debug_query_string);
	heap = table_open(shared->heaprelid, heap_mode);
	index = index_open(shared->indexrelid, index_mode);
	SharedFileSetAttach(&runs->fileset, seg);
	InstrStartParallelQuery();
	scan_and_sort(shared, runs, ParallelWorkerNumber, heap, index,
				  maintenance_work_mem / shared->nsorts, false);
	walusage = shm_toc_lookup(toc, BUILD_KEY_WAL, false);
	bufferusage = shm_toc_lookup(toc, BUILD_KEY_BUFFER, false);
	InstrEndParallelQuery(&bufferusage[ParallelWorkerNumber], &walusage[ParallelWorkerNumber]);
	index_close(index, index_mode);
	table_close(heap, heap_mode);
}

/* ------------------------------------------------------------ the leader */

/* workers for this build: none unless plan_create_index_workers grants some */
static int
build_workers(Relation heap, Relation index)
{
	if (!IsNormalProcessingMode() || IsInParallelMode())
		return 0;
	return plan_create_index_workers(RelationGetRelid(heap), RelationGetRelid(index));
}

static void
end_parallel(BuildLeader *leader)
{
	WaitForParallelWorkersToFinish(leader->pcxt);
	for (int i = 0; i < leader->pcxt->nworkers_launched; i++)
		InstrAccumParallelQuery(&leader->bufferusage[i], &leader->walusage[i]);
	if (IsMVCCSnapshot(leader->snapshot))
		UnregisterSnapshot(leader->snapshot);
	DestroyParallelContext(leader->pcxt);
	ExitParallelMode();
}

/*
 * Launch the workers and set up what they share; NULL (a serial build)
 * when no worker could be started.
 */
static BuildLeader *
begin_parallel(Relation heap, Relation index, uint64 tree, bool isunique, bool isconcurrent,
			   int request)
{
	BuildLeader *leader = palloc0(sizeof(BuildLeader));
	ParallelContext *pcxt;
	BuildShared *shared;
	Size		est_shared;
	Size		est_runs;
	int			querylen = debug_query_string ? strlen(debug_query_string) : 0;

	/*
	 * The workers read the engine: this transaction's rows and entries
	 * still waiting in this backend go there first (the table's parallel
	 * scan writes its bulk-loaded rows, tam_parallelscan_initialize).
	 */
	trt_xact_flush_deferred();

	EnterParallelMode();
	pcxt = CreateParallelContext("tidesam", "tidx_parallel_build_main", request);
	/* as CREATE INDEX does: every version some snapshot may need, or (CIC) one snapshot's */
	leader->snapshot = isconcurrent ? RegisterSnapshot(GetTransactionSnapshot()) : SnapshotAny;
	est_shared = add_size(BUFFERALIGN(sizeof(BuildShared)),
						  table_parallelscan_estimate(heap, leader->snapshot));
	est_runs = add_size(offsetof(BuildRuns, nruns), mul_size(sizeof(int), request + 1));
	shm_toc_estimate_chunk(&pcxt->estimator, est_shared);
	shm_toc_estimate_chunk(&pcxt->estimator, est_runs);
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(sizeof(WalUsage), pcxt->nworkers));
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(sizeof(BufferUsage), pcxt->nworkers));
	shm_toc_estimate_keys(&pcxt->estimator, 4);
	if (querylen > 0)
	{
		shm_toc_estimate_chunk(&pcxt->estimator, querylen + 1);
		shm_toc_estimate_keys(&pcxt->estimator, 1);
	}
	InitializeParallelDSM(pcxt);
	leader->pcxt = pcxt;
	if (pcxt->seg == NULL)
	{
		/* no shared memory segment to be had: serial */
		if (IsMVCCSnapshot(leader->snapshot))
			UnregisterSnapshot(leader->snapshot);
		DestroyParallelContext(pcxt);
		ExitParallelMode();
		return NULL;
	}

	shared = shm_toc_allocate(pcxt->toc, est_shared);
	memset(shared, 0, sizeof(BuildShared));
	shared->heaprelid = RelationGetRelid(heap);
	shared->indexrelid = RelationGetRelid(index);
	shared->tree = tree;
	shared->isunique = isunique;
	shared->isconcurrent = isconcurrent;
	shared->sortkey_near = GetCurrentTransactionStartTimestamp();
	shared->nsorts = request + 1;
	ConditionVariableInit(&shared->done_cv);
	SpinLockInit(&shared->mutex);
	table_parallelscan_initialize(heap, BUILD_SHARED_SCAN(shared), leader->snapshot);
	shm_toc_insert(pcxt->toc, BUILD_KEY_SHARED, shared);
	leader->shared = shared;

	leader->runs = shm_toc_allocate(pcxt->toc, est_runs);
	memset(leader->runs, 0, est_runs);
	SharedFileSetInit(&leader->runs->fileset, pcxt->seg);
	shm_toc_insert(pcxt->toc, BUILD_KEY_SORT, leader->runs);
	if (querylen > 0)
	{
		char	   *q = shm_toc_allocate(pcxt->toc, querylen + 1);

		memcpy(q, debug_query_string, querylen + 1);
		shm_toc_insert(pcxt->toc, BUILD_KEY_QUERY, q);
	}
	leader->walusage = shm_toc_allocate(pcxt->toc, mul_size(sizeof(WalUsage), pcxt->nworkers));
	shm_toc_insert(pcxt->toc, BUILD_KEY_WAL, leader->walusage);
	leader->bufferusage = shm_toc_allocate(pcxt->toc, mul_size(sizeof(BufferUsage), pcxt->nworkers));
	shm_toc_insert(pcxt->toc, BUILD_KEY_BUFFER, leader->bufferusage);

	LaunchParallelWorkers(pcxt);
	if (pcxt->nworkers_launched == 0)
	{
		end_parallel(leader);
		return NULL;
	}
	leader->nparticipants = pcxt->nworkers_launched + 1;
	ereport(DEBUG1,
			(errmsg_internal("building tides_btree index \"%s\" with %d parallel workers",
							 RelationGetRelationName(index), pcxt->nworkers_launched)));
	return leader;
}

/*
 * The leader's share of the scan, then the wait for every worker's; the
 * leader's sort that merges their runs, and the totals, into *bs.
 */
static double
parallel_scan(BuildLeader *leader, BuildState *bs, Relation index, IndexInfo *indexInfo)
{
	BuildShared *shared = leader->shared;
	double		reltuples;

	/* participant numbers: the workers' ParallelWorkerNumber, then the leader */
	scan_and_sort(shared, leader->runs, shared->nsorts - 1, bs->heap, index,
				  maintenance_work_mem / shared->nsorts, true);
	/* a worker that never started would never finish: that is an error here */
	WaitForParallelWorkersToAttach(leader->pcxt);
	for (;;)
	{
		SpinLockAcquire(&shared->mutex);
		if (shared->ndone == leader->nparticipants)
			break;
		SpinLockRelease(&shared->mutex);
		ConditionVariableSleep(&shared->done_cv, WAIT_EVENT_PARALLEL_CREATE_INDEX_SCAN);
	}
	reltuples = shared->reltuples;
	bs->indtuples = shared->indtuples;
	bs->bytes = shared->bytes;
	if (shared->brokenhotchain)
		indexInfo->ii_BrokenHotChain = true;
	SpinLockRelease(&shared->mutex);
	ConditionVariableCancelSleep();

	bs->sort = tidx_sort_begin(maintenance_work_mem, NULL, 0);
	tidx_sort_performsort(bs->sort, &leader->runs->fileset, leader->runs->nruns, shared->nsorts);
	return reltuples;
}

IndexBuildResult *
tidx_build(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result = palloc0(sizeof(IndexBuildResult));
	TidxDesc	d;
	BuildState *bsp = palloc0(sizeof(BuildState));	/* lives as long as its reset callback */
	BuildLeader *leader = NULL;
	double		reltuples;
	int			nworkers;
#define bs (*bsp)

	/* tablespace and columns first: both fail before anything is written */
	trt_check_tablespace(index->rd_node.spcNode, index);
	tidx_desc_init(&d, index, true);
	/* REINDEX of VACUUM FULL and CLUSTER builds without checking uniqueness */
	d.unique = indexInfo->ii_Unique;
	d.tree = new_storage(index);
	tidx_use_btree_opclasses(heap, index);

	nworkers = build_workers(heap, index);
	if (nworkers > 0)
		leader = begin_parallel(heap, index, d.tree, d.unique, indexInfo->ii_Concurrent, nworkers);
	build_state_init(&bs, &d, heap, NULL, leader != NULL ? leader->shared->sortkey_near
					 : GetCurrentTransactionStartTimestamp());
	if (leader != NULL)
		reltuples = parallel_scan(leader, &bs, index, indexInfo);
	else
	{
		bs.sort = tidx_sort_begin(maintenance_work_mem, NULL, 0);
		reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
										   build_callback, &bs, NULL);
		tidx_sort_performsort(bs.sort, NULL, NULL, 0);
	}

	bs.b = tides_batch_new();
	if (bs.b == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	bs.cb.func = release_build;
	bs.cb.arg = &bs;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &bs.cb);
	if (d.unique)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(ItemPointerData);
		ctl.entrysize = sizeof(ItemPointerData);
		ctl.hcxt = CurrentMemoryContext;
		bs.not_alive = hash_create("tides_btree build", 256, &ctl,
								   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	write_sorted(&bs);
	tidx_sort_end(bs.sort);
	/* the workers' runs live as long as the parallel context */
	if (leader != NULL)
		end_parallel(leader);
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
