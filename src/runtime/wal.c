/*
 * wal.c -- tides changes in PostgreSQL's WAL (tides.wal = on), and custom
 * resource manager 143, which replays them.
 *
 * With tides.wal = on the engine runs with the external log
 * (TIDES_LOG_EXTERNAL, src/engine/include/tides_engine.h): it keeps no log
 * of its own, and every batch it applies is handed to wal_append() between
 * reserving its memtable space and inserting it, which writes it as one
 * XLOG_TIDES_BATCH record.  So a transaction's tides writes precede its
 * commit record in the WAL, and the commit's one WAL flush makes both
 * durable; a standby, a base backup and point-in-time recovery get them by
 * replaying the WAL like any other record.  Three rules make that exact:
 *
 *   write-ahead   a memtable reaches an SSTable only after XLogFlush up to
 *                 its last batch (engine.c installs wal_sync as the
 *                 engine's log sync), so the engine never holds a change
 *                 the WAL might lose; in recovery that XLogFlush moves
 *                 minRecoveryPoint, as writing a data page does.
 *   checkpoints   a checkpoint's redo point R may only be declared once
 *                 every batch logged before R is in an SSTable
 *                 (checkpoint.c: the flush barrier and the checkpoint
 *                 guards).  Redo starts at R.
 *   key order     every writer of a key holds a lock of its own across the
 *                 engine's reserve, XLogInsert and insert (row stripes,
 *                 unique stripes, reserve_lock, the drop markers' lock), so
 *                 WAL order is the order in which each key's batches were
 *                 applied.  Replaying from R over a store that holds
 *                 everything before R, and maybe some of what follows,
 *                 then leaves each key at its last logged value.
 *
 * Data of unlogged and temporary relations is never logged (their trees
 * are noted when a relation is opened, trt_note_tree_persistence); a batch
 * that mixes them with permanent data is logged without them.
 *
 * Record types (info & XLR_RMGR_INFO_MASK):
 *   XLOG_TIDES_BATCH       xl_tides_batch + a batch's encoding
 *   XLOG_TIDES_DROP        the prefix of a dropped tree (tides_drop_prefix)
 *   XLOG_TIDES_CHECKPOINT  the redo point whose barrier the primary passed;
 *                          a standby flushes its memtables when it replays
 *                          it, since restartpoints do not wait for anyone
 *                          (checkpoint.c)
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "access/xlogrecovery.h"
#include "access/xlog_internal.h"
#include "access/xlogutils.h"
#include "miscadmin.h"
#include "postmaster/startup.h"
#include "storage/standby.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "runtime/trt.h"

#define XLOG_TIDES_BATCH		0x00
#define XLOG_TIDES_DROP			0x10
#define XLOG_TIDES_CHECKPOINT	0x20

/*
 * A batch record's header.  conflict_xid: the batch removes row versions or
 * index entries dead to every snapshot older than this xid (invalid: it
 * removes nothing), as heap's prune records carry; a hot standby cancels the
 * queries that could still see them before replaying it.
 */
typedef struct xl_tides_batch
{
	TransactionId conflict_xid;
	Oid			conflict_db;
} xl_tides_batch;

/* ---- which trees are not permanent */

/*
 * Trees of unlogged and temporary relations this backend has opened.  A
 * backend writes a relation only after opening it (trt_rel_tree, or
 * creating its storage), so the set knows every tree this backend can
 * write that must stay out of the WAL.  Most backends never touch such a
 * relation, and then no batch is looked into.
 */
static HTAB *nonpermanent_trees = NULL;

void
trt_note_tree_persistence(uint64 tree, char persistence)
{
	if (persistence == RELPERSISTENCE_PERMANENT)
		return;
	if (nonpermanent_trees == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(uint64);
		ctl.entrysize = sizeof(uint64);
		ctl.hcxt = TopMemoryContext;
		nonpermanent_trees = hash_create("tides non-permanent trees", 64, &ctl,
										 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	(void) hash_search(nonpermanent_trees, &tree, HASH_ENTER, NULL);
}

static bool
key_is_permanent(const void *key, size_t klen)
{
	uint64		tree;

	if (nonpermanent_trees == NULL || klen < 8)
		return true;
	tree = trt_key_get_tree(key);
	return hash_search(nonpermanent_trees, &tree, HASH_FIND, NULL) == NULL;
}

typedef struct classify_ctx
{
	uint32		permanent;
	uint32		other;
	tides_batch *half[2];		/* when both kinds are there: [1] permanent, [0] the rest */
} classify_ctx;

static void
count_entry(void *arg, bool is_delete, const void *key, size_t klen, const void *val, size_t vlen)
{
	classify_ctx *c = arg;

	if (key_is_permanent(key, klen))
		c->permanent++;
	else
		c->other++;
}

static void
split_entry(void *arg, bool is_delete, const void *key, size_t klen, const void *val, size_t vlen)
{
	classify_ctx *c = arg;
	tides_batch *h = c->half[key_is_permanent(key, klen)];

	/* out of memory: the batch says so when it is written */
	if (is_delete)
		(void) tides_batch_delete(h, key, klen);
	else
		(void) tides_batch_put(h, key, klen, val, vlen);
}

/* ---- writing */

/* a removal's conflict horizon for the next logged batch of this backend */
static xl_tides_batch next_header = {InvalidTransactionId, InvalidOid};

void
trt_wal_set_conflict(TransactionId latest_removed, Oid db)
{
	if (TransactionIdFollows(latest_removed, next_header.conflict_xid) ||
		!TransactionIdIsValid(next_header.conflict_xid))
		next_header.conflict_xid = latest_removed;
	next_header.conflict_db = db;
}

/*
 * A tides record of end position end was just inserted by this process:
 * its bytes (page headers it crossed included) count as the tides log's
 * (tides_engine_stats.log_bytes_written, monitor.c).
 */
static inline void
count_record(XLogRecPtr end)
{
	pg_atomic_fetch_add_u64(&trt_shared->wal_bytes, end - ProcLastRecPtr);
}

/*
 * The engine's append callback: the batch as one WAL record.  It may not
 * fail or longjmp (the engine has reserved memtable space and other writers
 * wait to publish behind this one), so it runs as a critical section, as
 * heap's record insertion does: an error in XLogInsert is a PANIC.
 */
static uint64
wal_append(void *arg, const void *rec, size_t len)
{
	xl_tides_batch *hdr = arg;
	XLogRecPtr	end;

	START_CRIT_SECTION();
	XLogBeginInsert();
	XLogRegisterData((char *) hdr, sizeof(*hdr));
	XLogRegisterData((char *) rec, (uint32) len);
	end = XLogInsert(TRT_RMGR_ID, XLOG_TIDES_BATCH);
	count_record(end);
	END_CRIT_SECTION();
	return end;
}

/* the engine's log sync (the write-ahead rule); moves minRecoveryPoint in recovery */
static void
wal_sync(void *arg, uint64 pos)
{
	START_CRIT_SECTION();
	XLogFlush((XLogRecPtr) pos);
	END_CRIT_SECTION();
}

void
trt_wal_attach(tides_db *db)
{
	if (trt_wal)
		tides_set_log_sync(db, wal_sync, NULL);
}

/*
 * A batch through the WAL, hdr its record's header: the entries of
 * non-permanent trees stay out of it.  BUSY only when nothing was written.
 */
static tides_status
write_logged(tides_db *db, tides_batch *b, xl_tides_batch *hdr)
{
	classify_ctx c = {0};
	tides_status s;

	if (nonpermanent_trees == NULL)
		return tides_write_external(db, b, wal_append, hdr);
	tides_batch_foreach(b, count_entry, &c);
	if (c.other == 0)
		return tides_write_external(db, b, wal_append, hdr);
	if (c.permanent == 0)
		return tides_write_external(db, b, NULL, NULL);

	/*
	 * Mixed (a transaction's deferred index entries over tables of both
	 * kinds): the permanent entries go to the WAL as a batch of their own,
	 * then the rest unlogged.  Each half is applied atomically; their keys
	 * are distinct, and the rows they index are visible to nobody before
	 * the transaction commits.
	 */
	c.half[0] = tides_batch_new();
	c.half[1] = tides_batch_new();
	s = TIDES_NO_MEMORY;
	if (c.half[0] != NULL && c.half[1] != NULL)
	{
		tides_batch_foreach(b, split_entry, &c);
		s = tides_write_external(db, c.half[1], wal_append, hdr);
		/* the caller retries a busy answer: not after the logged half went in */
		if (s == TIDES_OK)
			while ((s = tides_write_external(db, c.half[0], NULL, NULL)) == TIDES_BUSY)
				pg_usleep(1000L);
	}
	tides_batch_free(c.half[0]);
	tides_batch_free(c.half[1]);
	return s;
}

tides_status
trt_engine_write(tides_db *db, tides_batch *b, bool may_log, uint64 *lsn)
{
	xl_tides_batch hdr;
	tides_status s;

	if (lsn)
		*lsn = 0;
	if (!trt_wal)
		return tides_write(db, b, lsn);
	if (!may_log)
		return tides_write_external(db, b, NULL, NULL);
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("tides data cannot be written during recovery")));
	trt_wait_for_guards();
	hdr = next_header;
	next_header.conflict_xid = InvalidTransactionId;
	next_header.conflict_db = InvalidOid;
	s = write_logged(db, b, &hdr);
	/* busy: nothing was logged, and the retry must carry the same horizon */
	if (s == TIDES_BUSY && TransactionIdIsValid(hdr.conflict_xid))
		trt_wal_set_conflict(hdr.conflict_xid, hdr.conflict_db);
	return s;
}

tides_status
trt_make_room(tides_db *db, bool *did)
{
	tides_status s;

	*did = false;
	s = tides_flush_work(db, did);
	if (s == TIDES_OK && !*did)
		s = tides_compact_work(db, did);
	return s;
}

tides_status
trt_engine_write_here(tides_db *db, tides_batch *b, bool may_log, uint64 *lsn)
{
	for (;;)
	{
		bool		did;
		tides_status s = trt_engine_write(db, b, may_log, lsn);

		if (s != TIDES_BUSY)
			return s;
		s = trt_make_room(db, &did);
		if (s != TIDES_OK)
			return s;
		if (!did)
			pg_usleep(1000L);	/* a background worker holds the work: let it finish */
	}
}

/*
 * Log a batch without applying it: the rows of a bulk load (ingest.c), which
 * go into table files instead of a memtable.  On replay the record is an
 * ordinary batch.  Returns the end of the record; the write-ahead rule is
 * the caller's (XLogFlush before its files are installed).
 */
XLogRecPtr
trt_wal_log_batch(tides_batch *b)
{
	xl_tides_batch hdr = {InvalidTransactionId, InvalidOid};
	const void *rec;
	size_t		len;

	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("tides data cannot be written during recovery")));
	rec = tides_batch_encoding(b, &len);
	if (rec == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	trt_wait_for_guards();
	XLogBeginInsert();
	XLogRegisterData((char *) &hdr, sizeof(hdr));
	XLogRegisterData((char *) rec, (uint32) len);
	return XLogInsert(TRT_RMGR_ID, XLOG_TIDES_BATCH);
}

/*
 * Drop a tree's keys (tides_drop_prefix), logged first and flushed, so that
 * no crash can keep the drop in the store and lose it from the WAL.
 */
tides_status
trt_drop_prefix(tides_db *db, const uint8 *prefix, size_t len, bool may_log)
{
	if (trt_wal && may_log)
	{
		XLogRecPtr	end;

		if (RecoveryInProgress())
			ereport(ERROR,
					(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
					 errmsg("tides data cannot be written during recovery")));
		trt_wait_for_guards();
		XLogBeginInsert();
		XLogRegisterData((char *) prefix, (uint32) len);
		end = XLogInsert(TRT_RMGR_ID, XLOG_TIDES_DROP);
		count_record(end);
		XLogFlush(end);
	}
	return tides_drop_prefix(db, prefix, len);
}

void
trt_wal_log_checkpoint(XLogRecPtr redo)
{
	XLogBeginInsert();
	XLogRegisterData((char *) &redo, sizeof(redo));
	count_record(XLogInsert(TRT_RMGR_ID, XLOG_TIDES_CHECKPOINT));
}

/* ---- replay (the startup process) */

static tides_batch *redo_batch = NULL;

/* the "append" of a replayed batch: nothing to log, but its WAL position */
static uint64
redo_position(void *arg, const void *rec, size_t len)
{
	return *(XLogRecPtr *) arg;
}

/*
 * Make room when the engine is busy during replay: no background worker may
 * be running (crash recovery), so the startup process flushes and compacts
 * itself.
 */
static void
redo_make_room(tides_db *db)
{
	bool		did;
	tides_status s = trt_make_room(db, &did);

	if (s != TIDES_OK)
		trt_engine_error(s, "make room while replaying WAL");
	if (!did)
		pg_usleep(1000L);		/* a background worker holds the work: let it finish */
	HandleStartupProcInterrupts();
}

static void
redo_batch_record(XLogReaderState *record)
{
	tides_db   *db = trt_engine_attach();
	xl_tides_batch hdr;
	char	   *data = XLogRecGetData(record);
	size_t		len = XLogRecGetDataLen(record);
	XLogRecPtr	end = record->EndRecPtr;
	tides_status s;

	if (len < sizeof(hdr))
		elog(PANIC, "tides: WAL record at %X/%X is too short", LSN_FORMAT_ARGS(record->ReadRecPtr));
	memcpy(&hdr, data, sizeof(hdr));
	if (InHotStandby && TransactionIdIsValid(hdr.conflict_xid))
	{
		RelFileNode node = {InvalidOid, hdr.conflict_db, InvalidOid};

		ResolveRecoveryConflictWithSnapshot(hdr.conflict_xid, node);
	}
	if (redo_batch == NULL && (redo_batch = tides_batch_new()) == NULL)
		elog(PANIC, "tides: out of memory replaying WAL");
	s = tides_batch_load(redo_batch, data + sizeof(hdr), len - sizeof(hdr));
	if (s != TIDES_OK)
		elog(PANIC, "tides: WAL record at %X/%X holds a malformed batch: %s",
			 LSN_FORMAT_ARGS(record->ReadRecPtr), tides_status_name(s));
	if (!trt_wal)
	{
		/* the WAL was written with tides.wal = on, the server runs with off: into our log */
		while ((s = tides_write(db, redo_batch, NULL)) == TIDES_BUSY)
			redo_make_room(db);
	}
	else
		while ((s = tides_write_external(db, redo_batch, redo_position, &end)) == TIDES_BUSY)
			redo_make_room(db);
	if (s != TIDES_OK)
		trt_engine_error(s, "replay a WAL record");
	trt_low_marks_redo(redo_batch);
}

static void
redo_drop(XLogReaderState *record)
{
	tides_db   *db = trt_engine_attach();
	tides_status s;

	/* the drop is durable at once: recovery must not end before this record (WAL before data) */
	XLogFlush(record->EndRecPtr);
	while ((s = tides_drop_prefix(db, (uint8 *) XLogRecGetData(record),
								  XLogRecGetDataLen(record))) == TIDES_BUSY)
		redo_make_room(db);
	if (s != TIDES_OK)
		trt_engine_error(s, "replay a dropped tree");
}

static void
rmgr_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;

	switch (info)
	{
		case XLOG_TIDES_BATCH:
			redo_batch_record(record);
			break;
		case XLOG_TIDES_DROP:
			redo_drop(record);
			break;
		case XLOG_TIDES_CHECKPOINT:
			{
				XLogRecPtr	redo;

				memcpy(&redo, XLogRecGetData(record), sizeof(redo));
				trt_checkpoint_replayed(redo);
			}
			break;
		default:
			elog(PANIC, "tides: unknown WAL record type 0x%02X", info);
	}
}

static void
rmgr_desc(StringInfo buf, XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	char	   *data = XLogRecGetData(record);

	if (info == XLOG_TIDES_BATCH && XLogRecGetDataLen(record) >= sizeof(xl_tides_batch))
	{
		xl_tides_batch hdr;

		memcpy(&hdr, data, sizeof(hdr));
		appendStringInfo(buf, "%u bytes", (unsigned) (XLogRecGetDataLen(record) - sizeof(hdr)));
		if (TransactionIdIsValid(hdr.conflict_xid))
			appendStringInfo(buf, ", removes versions dead before %u", hdr.conflict_xid);
	}
	else if (info == XLOG_TIDES_DROP && XLogRecGetDataLen(record) >= 8)
		appendStringInfo(buf, "tree " UINT64_FORMAT, trt_key_get_tree((uint8 *) data));
	else if (info == XLOG_TIDES_CHECKPOINT && XLogRecGetDataLen(record) >= sizeof(XLogRecPtr))
	{
		XLogRecPtr	redo;

		memcpy(&redo, data, sizeof(redo));
		appendStringInfo(buf, "redo %X/%X", LSN_FORMAT_ARGS(redo));
	}
}

static const char *
rmgr_identify(uint8 info)
{
	switch (info & ~XLR_INFO_MASK)
	{
		case XLOG_TIDES_BATCH:
			return "BATCH";
		case XLOG_TIDES_DROP:
			return "DROP";
		case XLOG_TIDES_CHECKPOINT:
			return "CHECKPOINT";
	}
	return NULL;
}

static void
rmgr_cleanup(void)
{
	/* the startup process, after redo */
	trt_incarnation_redo_done();
	if (trt_wal)
		trt_flush_after_redo();
}

static RmgrData trt_rmgr = {
	.rm_name = "tides",
	.rm_redo = rmgr_redo,
	.rm_desc = rmgr_desc,
	.rm_identify = rmgr_identify,
	.rm_startup = NULL,
	.rm_cleanup = rmgr_cleanup,
	.rm_mask = NULL,
	.rm_decode = NULL
};

void
trt_register_rmgr(void)
{
	RegisterCustomRmgr(TRT_RMGR_ID, &trt_rmgr);
}
