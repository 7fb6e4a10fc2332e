/*
 * bulk.c -- bulk loads: COPY and large INSERT ... SELECT write table files
 * straight into the store (the engine's ingestion, src/runtime/ingest.c)
 * instead of going through the memtables.
 *
 * Which loads.  Inserts into a permanent or unlogged tides table that has
 * no index, or whose storage was created in the current transaction (CREATE
 * TABLE, TRUNCATE, CREATE TABLE AS, REFRESH MATERIALIZED VIEW).  Rows are written with the
 * transaction's xid, so MVCC makes them visible exactly at commit; what
 * decides "which" is who else could look for them before they reach the
 * engine: an index entry hands out a row's TID at once (another backend's
 * unique check or index scan would find no row there and take it for dead,
 * killing the entry), and nobody else sees a table created or truncated in
 * a transaction that has not committed.  Without an index, nobody learns a
 * new row's TID but by scanning, and a scan cannot tell a row not yet
 * written from one it may not see anyway -- except under SSI: a
 * SERIALIZABLE transaction's rows must be met by concurrent readers, so it
 * stages only into storage new in it (eligible()).
 *
 * How.  Each such table (tree) gets a TamBulk for the transaction.  Rows
 * collect in a stage batch (1 MB).  Full, it goes through the memtables as
 * before, until the transaction has written tides.bulk_load_threshold
 * bytes into the table that way; from then on every stage goes into an
 * ingestion (table files built by this backend; with tides.wal also the
 * WAL, runtime/ingest.c).  Row ids then come from chunks of the tree's row
 * ids reserved for this load alone, so that the keys of one load form
 * contiguous runs nobody else writes into -- its files land on the bottom
 * level -- and the files are cut where a new chunk does not follow the last
 * one.  The stage is there for the WAL: in bulk mode, a load that is not
 * logged (an unlogged table, or tides.wal = off) puts its rows straight into
 * the ingestion (tam_bulk_add), with no batch encoded and decoded.  The
 * ingestion is installed every BULK_INSTALL_BYTES of files, when the
 * statement ends (finish_bulk_insert), before the transaction commits
 * or prepares, before a parallel plan starts or a parallel scan of the
 * table is set up (a parallel CREATE INDEX runs no plan), and before this
 * backend reads the table where rows are waiting (below).
 *
 * This backend's own reads.  A row not yet in the engine must not be
 * missed by the transaction itself: a unique check of a duplicate within
 * the same COPY (a table created in the transaction may have indexes),
 * AFTER triggers fetching their rows, the next statement's scan.  So a point
 * read of a row id that is waiting (tam_fetch_entry) and every cursor over
 * a range holding waiting rows (tam_cursor_open) first write them: the
 * stage through the memtables in normal mode, the ingestion installed in
 * bulk mode.  An install forced by a read that finds less than
 * BULK_MIN_FILE_BYTES waiting ends the table's bulk mode for the rest of
 * the transaction, so that a statement that reads the table after every
 * row does not make a file per row.  Index fetches that read in vid order
 * (seqread.c) answer "not in this view" for waiting rows and fall back to a
 * point read.
 *
 * Failures.  An ERROR while rows are moved on (staging, spilling,
 * installing) leaves the load in an unknown state: the transaction can then
 * no longer commit (the pre-commit callback fails it), even if a
 * subtransaction caught the error -- otherwise a commit could lose rows the
 * parent wrote before.  An aborted transaction drops what is not installed;
 * what is installed stays as dead rows for VACUUM.  A table dropped or
 * truncated in the transaction drops its waiting rows.
 *
 * The visibility map: bits are cleared after the rows are in the engine
 * (vm.c's rule), for the virtual blocks the rows moved on span.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/catalog.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "am/tam.h"

#define BULK_STAGE_BYTES (1024 * 1024)
#define BULK_INSTALL_BYTES ((uint64) 256 * 1024 * 1024)
#define BULK_MIN_FILE_BYTES ((uint64) 4 * 1024 * 1024)
#define BULK_FIRST_CHUNK (64 * 1024)
#define BULK_MAX_CHUNK (1024 * 1024)

typedef struct TamBulk
{
	uint64		tree;			/* hash key */
	Oid			relid;
	bool		permanent;
	tides_batch *stage;			/* rows not yet moved on, ascending row ids */
	uint64		stage_lo,		/* their row ids: [lo, hi) */
				stage_hi;
	uint64		written;		/* bytes moved through the memtables this transaction */
	TrtIngest  *ingest;			/* bulk mode */
	uint64		pend_lo,		/* row ids in the ingestion, not installed */
				pend_hi;
	uint64		chunk_next,		/* this load's own row ids (bulk mode) */
				chunk_end;
	uint32		chunk_size;
	bool		busy;			/* rows are being moved on (an ERROR left it set: failed) */
	bool		failed;
	bool		no_bulk;		/* bulk mode ended by a small forced install */
	uint64		rows_ingested;
} TamBulk;

static HTAB *bulks = NULL;
static int	nbulks = 0;			/* entries: zero in most transactions */

static void
reset_range(uint64 *lo, uint64 *hi)
{
	*lo = UINT64_MAX;
	*hi = 0;
}

static void
extend_range(uint64 *lo, uint64 *hi, uint64 vid, uint64 n)
{
	if (vid < *lo)
		*lo = vid;
	if (vid + n > *hi)
		*hi = vid + n;
}

static bool
range_overlaps(uint64 lo, uint64 hi, uint64 a, uint64 b)
{
	return lo < hi && lo < b && a < hi;
}

/* created or truncated (given new storage) in this transaction */
static bool
new_storage(Relation rel)
{
	return rel->rd_createSubid != InvalidSubTransactionId ||
		rel->rd_firstRelfilenodeSubid != InvalidSubTransactionId;
}

static bool
eligible(Relation rel)
{
	char		kind = rel->rd_rel->relkind;

	if (trt_bulk_load_threshold_kb < 0 || IsInParallelMode() || RecoveryInProgress())
		return false;

	/*
	 * Serializable transactions write through at once, unless the storage
	 * is new in the transaction (nobody else can read it).  SSI finds a
	 * concurrent reader's rw-conflict with this writer either when the
	 * reader meets the row (CheckForSerializableConflictOut on a version it
	 * may not see) or when the writer inserts after the reader took its
	 * predicate lock (CheckForSerializableConflictIn).  A row waiting in
	 * the stage is met by nobody, and its conflict-in check ran before the
	 * reader's lock existed: the conflict would be lost.
	 */
	if (IsolationIsSerializable() && !new_storage(rel))
		return false;
	if (kind != RELKIND_RELATION && kind != RELKIND_MATVIEW)
		return false;
	if (IsCatalogRelation(rel))
		return false;
	/* temporary tables: not worth it (unlogged ones: runtime/ingest.c) */
	if (rel->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
		return false;
	/* relhasindex is true while the table has (or, until VACUUM, had) an index */
	return !rel->rd_rel->relhasindex || new_storage(rel);
}

static TamBulk *
lookup(uint64 tree)
{
	if (nbulks == 0)
		return NULL;
	return hash_search(bulks, &tree, HASH_FIND, NULL);
}

static void
check_usable(TamBulk *bk)
{
	if (bk->busy)
		bk->failed = true;
	if (bk->failed)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("a bulk load into relation %u failed earlier in this transaction", bk->relid),
				 errdetail("Rows it had written may be lost; the transaction cannot commit.")));
}

/* the visibility map bits of rows now in the engine */
static void
clear_vm(TamBulk *bk, Relation rel, uint64 lo, uint64 hi)
{
	if (lo < hi)
		tam_vm_clear_range(rel, lo, hi - lo);
}

/*
 * Move the stage on: through the memtables, or into the ingestion.
 *
 * Through the memtables at commit, the rows wait for the transaction's seal
 * and go in the sealing batch (trt_xact_defer_row): one engine write for
 * both where there were two -- a one-row INSERT into a table without
 * indexes (pgbench's history) writes only the seal.  As for any waiting row
 * (src/runtime/xact.c), the visibility map's bits are cleared after the rows
 * are published as waiting.  Where they cannot wait (another table's rows
 * wait already; a serializable transaction, whose rows concurrent readers
 * must meet as early as insert_one's would), they are written now.
 */
static void
spill(TamBulk *bk, Relation rel, bool at_commit)
{
	tides_batch *b = bk->stage;

	if (tides_batch_count(b) == 0)
		return;
	bk->busy = true;
	if (bk->ingest == NULL)
	{
		bk->written += tides_batch_bytes(b);
		if (!at_commit || IsolationIsSerializable() ||
			!trt_xact_defer_row(b, bk->tree, bk->stage_lo))
		{
			trt_xact_tag_batch(b);
			trt_write_batch(b);
		}
		clear_vm(bk, rel, bk->stage_lo, bk->stage_hi);
	}
	else
	{
		trt_ingest_add(bk->ingest, b);
		bk->rows_ingested += tides_batch_count(b);
		extend_range(&bk->pend_lo, &bk->pend_hi, bk->stage_lo, bk->stage_hi - bk->stage_lo);
	}
	tides_batch_clear(b);
	reset_range(&bk->stage_lo, &bk->stage_hi);
	bk->busy = false;
}

static void
install(TamBulk *bk, Relation rel, bool at_commit)
{
	spill(bk, rel, at_commit);
	if (bk->ingest == NULL || trt_ingest_pending_rows(bk->ingest) == 0)
		return;
	bk->busy = true;
	trt_ingest_install(bk->ingest);
	clear_vm(bk, rel, bk->pend_lo, bk->pend_hi);
	reset_range(&bk->pend_lo, &bk->pend_hi);
	bk->busy = false;
}

static void
end_bulk_mode(TamBulk *bk)
{
	trt_ingest_end(bk->ingest);
	bk->ingest = NULL;
	bk->chunk_next = bk->chunk_end = 0;
}

/* the bulk state of an eligible relation, created on first use; NULL otherwise */
TamBulk *
tam_bulk_get(Relation rel)
{
	uint64		tree;
	TamBulk    *bk;
	bool		found;

	if (!eligible(rel))
	{
		/* no longer eligible (an index appeared): what waits goes first */
		if (nbulks > 0 && (bk = lookup(trt_rel_tree(rel))) != NULL)
		{
			check_usable(bk);
			install(bk, rel, false);
		}
		return NULL;
	}
	tree = trt_rel_tree(rel);
	if (bulks == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(uint64);
		ctl.entrysize = sizeof(TamBulk);
		ctl.hcxt = TopMemoryContext;
		bulks = hash_create("tides bulk loads", 16, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	bk = hash_search(bulks, &tree, HASH_ENTER, &found);
	if (!found)
	{
		memset(((char *) bk) + sizeof(uint64), 0, sizeof(TamBulk) - sizeof(uint64));
		nbulks++;
		bk->relid = RelationGetRelid(rel);
		bk->permanent = rel->rd_rel->relpersistence == RELPERSISTENCE_PERMANENT;
		reset_range(&bk->stage_lo, &bk->stage_hi);
		reset_range(&bk->pend_lo, &bk->pend_hi);
		bk->chunk_size = BULK_FIRST_CHUNK;
		bk->stage = tides_batch_new();
		if (bk->stage == NULL)
		{
			hash_search(bulks, &tree, HASH_REMOVE, NULL);
			nbulks--;
			ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
		}
	}
	check_usable(bk);
	return bk;
}

/* row ids for n rows, ascending */
uint64
tam_bulk_vids(TamBulk *bk, Relation rel, uint32 n)
{
	uint64		v;

	check_usable(bk);
	/* bulk mode starts at a stage boundary: the stage never mixes the two kinds of row ids */
	if (bk->ingest == NULL && !bk->no_bulk && tides_batch_count(bk->stage) == 0 &&
		bk->written >= (uint64) trt_bulk_load_threshold_kb * 1024)
	{
		bk->busy = true;
		bk->ingest = trt_ingest_begin(bk->tree, bk->permanent);
		bk->busy = false;
	}
	if (bk->ingest == NULL)
		return trt_alloc_vids(bk->tree, n);

	if (bk->chunk_next + n > bk->chunk_end)
	{
		uint64		size = Max(bk->chunk_size, n);

		v = trt_alloc_vids(bk->tree, (uint32) size);
		if (v != bk->chunk_end && bk->chunk_end != 0)
		{
			/* another writer took the row ids between: no file may span them */
			spill(bk, rel, false);
			bk->busy = true;
			trt_ingest_cut(bk->ingest);
			bk->busy = false;
		}
		bk->chunk_next = v;
		bk->chunk_end = v + size;
		if (bk->chunk_size < BULK_MAX_CHUNK)
			bk->chunk_size *= 2;
	}
	v = bk->chunk_next;
	bk->chunk_next += n;
	return v;
}

/*
 * A new row (its row id from tam_bulk_vids): into the stage, or, in bulk
 * mode for a load that is not logged, straight into the ingestion.  Adding
 * is part of moving rows on: an ERROR inside leaves the load failed.
 */
void
tam_bulk_add(TamBulk *bk, Relation rel, uint64 vid, const TamVersionMeta *meta, HeapTupleHeader data,
			 uint32 len)
{
	bk->busy = true;
	if (bk->ingest != NULL && !trt_ingest_logged(bk->ingest))
	{
		Assert(tides_batch_count(bk->stage) == 0);
		tam_ingest_add_version(bk->ingest, bk->tree, vid, meta, data, len);
		bk->rows_ingested++;
		extend_range(&bk->pend_lo, &bk->pend_hi, vid, 1);
		bk->busy = false;
	}
	else
	{
		tam_batch_add_version(bk->stage, bk->tree, vid, meta, data, len);
		bk->busy = false;
		extend_range(&bk->stage_lo, &bk->stage_hi, vid, 1);
		if (tides_batch_bytes(bk->stage) < BULK_STAGE_BYTES)
			return;
		spill(bk, rel, false);
	}
	if (bk->ingest != NULL && trt_ingest_pending_bytes(bk->ingest) >= BULK_INSTALL_BYTES)
		install(bk, rel, false);
}

/* finish_bulk_insert: the statement's rows go into the store now */
void
tam_bulk_finish(Relation rel)
{
	TamBulk    *bk;

	if (nbulks == 0 || (bk = lookup(trt_rel_tree(rel))) == NULL)
		return;
	check_usable(bk);
	install(bk, rel, false);
}

/* ---- reads by this backend */

static void
write_for_read(TamBulk *bk)
{
	Relation	rel = RelationIdGetRelation(bk->relid);
	bool		small;

	if (!RelationIsValid(rel))
		elog(ERROR, "tides: relation %u of a bulk load is gone", bk->relid);
	check_usable(bk);
	small = bk->ingest != NULL &&
		trt_ingest_pending_bytes(bk->ingest) + tides_batch_bytes(bk->stage) < BULK_MIN_FILE_BYTES;
	install(bk, rel, false);
	if (small)
	{
		bk->busy = true;
		end_bulk_mode(bk);
		bk->no_bulk = true;
		bk->busy = false;
	}
	RelationClose(rel);
}

void
tam_bulk_before_read(uint64 tree, uint64 lo_vid, uint64 hi_vid)
{
	TamBulk    *bk;

	if (nbulks == 0 || (bk = lookup(tree)) == NULL)
		return;
	if (range_overlaps(bk->stage_lo, bk->stage_hi, lo_vid, hi_vid) ||
		range_overlaps(bk->pend_lo, bk->pend_hi, lo_vid, hi_vid))
		write_for_read(bk);
}

/* before a parallel plan: workers read the engine */
void
tam_bulk_write_all(void)
{
	HASH_SEQ_STATUS seq;
	TamBulk    *bk;

	if (nbulks == 0)
		return;
	hash_seq_init(&seq, bulks);
	while ((bk = hash_seq_search(&seq)) != NULL)
		if (bk->stage_lo < bk->stage_hi || bk->pend_lo < bk->pend_hi)
			write_for_read(bk);
}

/* ---- the table's storage goes away in this transaction */

/* what an entry holds outside the hash table */
static void
release(TamBulk *bk)
{
	if (bk->ingest != NULL)
		trt_ingest_end(bk->ingest);
	tides_batch_free(bk->stage);
}

static void
forget(TamBulk *bk)
{
	uint64		tree = bk->tree;

	release(bk);
	hash_search(bulks, &tree, HASH_REMOVE, NULL);
	nbulks--;
}

void
tam_bulk_drop_tree(uint64 tree)
{
	TamBulk    *bk;

	if (nbulks == 0 || (bk = lookup(tree)) == NULL)
		return;
	forget(bk);
}

/* ---- the transaction's end */

static void
forget_all(void)
{
	HASH_SEQ_STATUS seq;
	TamBulk    *bk;

	if (nbulks == 0)
		return;
	hash_seq_init(&seq, bulks);
	while ((bk = hash_seq_search(&seq)) != NULL)
		release(bk);
	hash_destroy(bulks);
	bulks = NULL;
	nbulks = 0;
}

static void
write_all_before_commit(void)
{
	HASH_SEQ_STATUS seq;
	TamBulk    *bk;

	if (nbulks == 0)
		return;
	hash_seq_init(&seq, bulks);
	while ((bk = hash_seq_search(&seq)) != NULL)
	{
		Relation	rel;

		check_usable(bk);
		if (bk->stage_lo >= bk->stage_hi && bk->pend_lo >= bk->pend_hi)
			continue;
		rel = RelationIdGetRelation(bk->relid);
		/* dropped or rewritten in this transaction: its rows go with the old tree */
		if (!RelationIsValid(rel) || trt_rel_tree(rel) != bk->tree)
		{
			if (RelationIsValid(rel))
				RelationClose(rel);
			continue;
		}
		install(bk, rel, true);
		RelationClose(rel);
	}
}

void
tam_bulk_xact_callback(XactEvent event)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			/* before the index AM's and the runtime's parts: the seal comes after the rows */
			write_all_before_commit();
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			forget_all();
			break;
		default:
			break;
	}
}
