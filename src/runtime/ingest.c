/*
 * ingest.c -- loading rows as table files (the engine's ingestion,
 * tides_ingest_*), with both logs' rules kept.
 *
 * A TrtIngest is one backend's load into one tree: batches of rows in
 * ascending key order go into the engine's ingestion (SSTables built in
 * this backend, in no memtable), and trt_ingest_install makes what was
 * added part of the store, one manifest edit at a time.  The access method
 * (src/am/bulk.c) decides when a load takes this path and when it installs.
 *
 * tides.wal = on (wal.c).  The rows must reach standbys, base backups and
 * point-in-time recovery, so each batch is logged as an ordinary
 * XLOG_TIDES_BATCH record when it is added -- on replay applied through the
 * memtable, as any batch is; replaying rows a file already holds gives the
 * same values again (their keys are new and written by nobody else before
 * the file is installed, so no later record of them precedes these).  The
 * rules of wal.c, for files instead of memtables:
 *
 *   write-ahead   before the install, XLogFlush to the last record of the
 *                 rows installed: no engine file holds a change the WAL
 *                 might lose (D4: the rows' xid is then in the WAL too);
 *   checkpoints   a checkpoint with redo point R needs every row logged
 *                 before R in its engine checkpoint CKPT-R (base backups
 *                 restore it and replay from R).  The guard saves CKPT-R
 *                 under ckpt_lock; the install runs under ckpt_lock shared,
 *                 so it comes wholly before the guard handles R -- and the
 *                 files are in CKPT-R -- or wholly after; then, if any of
 *                 its rows were logged before the newest redo point already
 *                 handled, they are logged again first (read back from the
 *                 files), so that replay from there brings them.  Crash
 *                 recovery needs nothing of this: the installed files are
 *                 in the store, and rows not yet installed belong to a
 *                 transaction that has not committed.
 *   key order     the rows' keys are new: no other writer has them until
 *                 the install made them visible, which follows their
 *                 records.
 *
 * Rows of unlogged relations are not logged.  After a crash their trees
 * are emptied before WAL redo (incarnation.c), found through their
 * tree-map entries; with tides.wal = on an entry written since the last
 * flush is then only in the WAL, and installed files would keep the rows.
 * So before its first install a load into an unlogged tree flushes the
 * memtables (the entry was written when the storage was created, before
 * anything of the load).  With tides.wal = off the engine's log brings the
 * entry back before the reset.
 *
 * tides.wal = off (xact.c).  The engine's own log does not carry the rows:
 * the files are durable when the install returns.  The ingestion carries
 * the transaction's tag: the install's manifest edit records the tag as
 * pending, so if the transaction's seal (written after every install, at
 * pre-commit) is lost in a crash, recovery reports the tag unsealed and
 * the rows read as aborted (D1), as for rows that came through the log.
 * Row ids come from durable reservations as always (D6).
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"
#include "storage/lwlock.h"
#include "utils/memutils.h"

#include "runtime/trt.h"

struct TrtIngest
{
	uint64		tree;
	bool		permanent;
	bool		logged;			/* rows go to the WAL too */
	tides_ingest *in;
	XLogRecPtr	first_lsn;		/* of the rows not yet installed (0: none logged) */
	XLogRecPtr	last_lsn;
	uint64		entries;		/* added and not yet installed */
	uint64		installed;		/* rows installed, in all */
	uint32		installs;
};

TrtIngest *
trt_ingest_begin(uint64 tree, bool permanent)
{
	TrtIngest  *ti = MemoryContextAllocZero(TopMemoryContext, sizeof(TrtIngest));
	tides_status s;

	ti->tree = tree;
	ti->permanent = permanent;
	ti->logged = trt_wal && permanent;
	s = tides_ingest_begin(trt_engine(), &ti->in);
	if (s != TIDES_OK)
	{
		pfree(ti);
		trt_engine_error(s, "begin a bulk load");
	}
	if (!trt_wal)
		tides_ingest_set_tag(ti->in, trt_xact_tag());
	/* the backend parses rows on one CPU; the codec takes another */
	tides_ingest_set_helper(ti->in, trt_bulk_load_helper);
	return ti;
}

typedef struct add_ctx
{
	TrtIngest  *ti;
	tides_status s;
} add_ctx;

static void
add_entry(void *arg, bool is_delete, const void *key, size_t klen, const void *val, size_t vlen)
{
	add_ctx    *c = arg;

	if (c->s != TIDES_OK)
		return;
	c->s = is_delete ? tides_ingest_delete(c->ti->in, key, klen) :
		tides_ingest_put(c->ti->in, key, klen, val, vlen);
}

/* log one batch of the load (the write-ahead and checkpoint rules are the install's) */
static void
log_batch(TrtIngest *ti, tides_batch *b)
{
	XLogRecPtr	end = trt_wal_log_batch(b);

	if (ti->first_lsn == InvalidXLogRecPtr)
		ti->first_lsn = end;
	ti->last_lsn = end;
}

void
trt_ingest_add(TrtIngest *ti, tides_batch *b)
{
	add_ctx		c = {ti, TIDES_OK};

	if (tides_batch_count(b) == 0)
		return;
	if (ti->logged)
		log_batch(ti, b);
	tides_batch_foreach(b, add_entry, &c);
	if (c.s != TIDES_OK)
		trt_engine_error(c.s, "add rows to a bulk load");
	ti->entries += tides_batch_count(b);
}

bool
trt_ingest_logged(TrtIngest *ti)
{
	return ti->logged;
}

/*
 * A row straight into the ingestion, with no batch to encode and decode on
 * the way: a COPY into an unlogged table spent a tenth of its backend's time
 * there.  Only for a load that is not logged: a logged one's rows go as the
 * batches that become its WAL records.
 */
void
trt_ingest_put(TrtIngest *ti, const void *key, size_t klen, const void *val, size_t vlen)
{
	tides_status s;

	Assert(!ti->logged);
	s = tides_ingest_put(ti->in, key, klen, val, vlen);
	if (s != TIDES_OK)
		trt_engine_error(s, "add rows to a bulk load");
	ti->entries++;
}

void
trt_ingest_cut(TrtIngest *ti)
{
	tides_status s = tides_ingest_cut(ti->in);

	if (s != TIDES_OK)
		trt_engine_error(s, "finish a file of a bulk load");
}

uint64
trt_ingest_pending_bytes(TrtIngest *ti)
{
	return tides_ingest_pending_bytes(ti->in);
}

uint64
trt_ingest_pending_rows(TrtIngest *ti)
{
	return ti->entries;
}

/* log the rows not yet installed once more, read back from their files */
typedef struct relog_ctx
{
	TrtIngest  *ti;
	tides_batch *b;
} relog_ctx;

static void
relog_entry(void *arg, bool is_delete, const void *key, size_t klen, const void *val, size_t vlen)
{
	relog_ctx  *c = arg;
	tides_status s;

	s = is_delete ? tides_batch_delete(c->b, key, klen) : tides_batch_put(c->b, key, klen, val, vlen);
	if (s != TIDES_OK)
		return;					/* out of memory: the batch says so below */
	if (tides_batch_bytes(c->b) >= trt_batch_limit())
	{
		log_batch(c->ti, c->b);
		tides_batch_clear(c->b);
	}
}

static void
relog(TrtIngest *ti)
{
	relog_ctx	c = {ti, tides_batch_new()};
	tides_status s;

	if (c.b == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	ti->first_lsn = InvalidXLogRecPtr;
	s = tides_ingest_foreach(ti->in, relog_entry, &c);
	if (s == TIDES_OK && tides_batch_count(c.b) > 0)
		log_batch(ti, c.b);
	tides_batch_free(c.b);
	if (s != TIDES_OK)
		trt_engine_error(s, "read a bulk load back for the WAL");
}

void
trt_ingest_install(TrtIngest *ti)
{
	tides_ingest_result res;
	tides_status s;

	if (ti->entries == 0)
		return;
	trt_ingest_cut(ti);
	/* an unlogged tree's map entry is in a table file before its rows are (above) */
	if (trt_wal && !ti->permanent && ti->installs == 0)
		trt_flush_everything(trt_engine());
	if (ti->logged)
	{
		trt_wait_for_guards();
		LWLockAcquire(trt_shared->ckpt_lock, LW_SHARED);
		if (ti->first_lsn < trt_shared->ckpt_done_redo)
			relog(ti);
		/* the write-ahead rule */
		XLogFlush(ti->last_lsn);
	}
	for (int attempt = 0;; attempt++)
	{
		s = tides_ingest_install(ti->in, &res);
		if (s != TIDES_BUSY)
			break;
		/*
		 * A memtable holds a key of the range (nothing the access method
		 * writes: its row ids are new), or the tag table is full; the
		 * engine sealed what needs a flush.  Interrupts are held while we
		 * hold ckpt_lock: a short sleep, not an interruptible wait.
		 */
		if (attempt > 60000)
			break;
		pg_usleep(attempt < 100 ? 1000L : 10000L);
	}
	if (ti->logged)
		LWLockRelease(trt_shared->ckpt_lock);
	if (s != TIDES_OK)
		trt_engine_error(s, "install a bulk load");
	ti->installed += ti->entries;
	ti->installs++;
	ti->entries = 0;
	ti->first_lsn = ti->last_lsn = InvalidXLogRecPtr;
}

void
trt_ingest_end(TrtIngest *ti)
{
	if (ti == NULL)
		return;
	/* what was not installed goes (its files are deleted, or left to recovery) */
	tides_ingest_abort(ti->in);
	pfree(ti);
}
