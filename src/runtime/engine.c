/*
 * engine.c -- this backend's handle on the shared engine, and the adapters
 * that turn engine results into PostgreSQL behaviour: errors become
 * ereport(ERROR) with the engine's message (which names the file), and
 * TIDES_BUSY becomes an interruptible wait (CHECK_FOR_INTERRUPTS between
 * short sleeps) while the background workers catch up.
 */
#include "postgres.h"

#include <unistd.h>

#include "access/parallel.h"
#include "access/twophase.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "runtime/trt.h"

static tides_db *my_db = NULL;

static tides_batch *my_batch = NULL;

void
trt_fill_options(tides_options *o)
{
	tides_options_default(o);
	o->memtable_size = (uint64) trt_memtable_size_mb << 20;
	o->memtable_count = trt_memtable_count;
	o->memtables_per_flush = trt_memtables_per_flush;
	o->memtable_discard_ms = (uint32) trt_memtable_discard_ms;
	o->block_cache_size = (uint64) trt_block_cache_mb << 20;
	o->meta_size = (uint64) trt_meta_size_mb << 20;
	o->max_open_tags = Max(1024, Min(16384, 4 * (MaxBackends + max_prepared_xacts) + 256));
	o->sync_mode = (tides_sync_mode) trt_guc_sync_mode;
	o->sync_interval_ms = trt_sync_interval_ms;
	o->compression = (tides_compression) trt_guc_compression;
	o->compression_level = trt_compression_level;
	o->bottommost_compression = (tides_compression) trt_guc_bottommost_compression;
	o->bottommost_compression_level = trt_compression_level;
	o->level0_slowdown_trigger = trt_l0_slowdown;
	/* level 0 as sorted runs: it goes down once it holds half the base level (compaction_l0.c) */
	o->level0_tiered = true;
	o->level0_stop_trigger = Max(trt_l0_stop, trt_l0_slowdown);
	o->delayed_write_rate = (uint64) trt_delayed_write_rate_kb << 10;

	/*
	 * The startup process never delays its own writes.  Until a standby is
	 * consistent no background worker runs, so nothing would ever bring
	 * level 0 back under the slowdown trigger and every replayed record would
	 * sleep (a restarted standby replayed 1 MB of WAL per second and timed
	 * out); at the stop trigger it gets TIDES_BUSY and compacts itself
	 * (redo_make_room in wal.c).
	 */
	if (AmStartupProcess())
		o->delayed_write_rate = 0;
	/* a log segment must hold the largest batch: a memtable's worth */
	o->log_segment_size = Max((uint64) 64 << 20, o->memtable_size / 4);
	/* a share of the process's descriptors, counted by fd.c (descriptors.c) */
	o->max_open_files = trt_table_files_budget();
	o->prefix_len = TRT_ROW_KEY_LEN;
	o->filter_stem_suffix = TRT_STEM_SUFFIX_LEN;
	/* each file tells the key range it holds of every tree: an ascending key's check skips it */
	o->range_prefix_len = TRT_TREE_KEY_LEN;
	o->log_mode = trt_wal ? TIDES_LOG_EXTERNAL : TIDES_LOG_OWN;
	o->wakeup = trt_wakeup_workers;
	o->wakeup_arg = NULL;
}

void
trt_sync_mode_changed(void)
{
	/* each process reads the mode from its own options copy */
	if (my_db != NULL)
		tides_set_sync_mode(my_db, (tides_sync_mode) trt_guc_sync_mode);
}

void
trt_compression_changed(void)
{
	/* the next file this process's flushes and compactions write */
	if (my_db != NULL)
	{
		(void) tides_set_compression(my_db, (tides_compression) trt_guc_compression,
									 trt_compression_level);
		(void) tides_set_bottommost_compression(my_db,
												(tides_compression) trt_guc_bottommost_compression,
												trt_compression_level);
	}
}

void
trt_memtable_discard_changed(void)
{
	if (my_db != NULL)
		tides_set_memtable_discard_ms(my_db, (uint32) trt_memtable_discard_ms);
}

static void
detach_engine(int code, Datum arg)
{
	if (my_db != NULL)
	{
		tides_close(my_db);
		my_db = NULL;
	}
}

/*
 * Compaction outputs never mix the access method's metadata (tree 0) with
 * relation keys.  A memtable that takes rows of a table being loaded also
 * takes a few tree-0 keys (row ids handed out, tree ids, drop markers), so
 * every level-0 compaction touches tree 0; in a file of its own that costs
 * a small rewrite, where sharing a file with rows would rewrite up to a
 * whole target-sized file of them each time.
 */
static bool
trt_metadata_partition(void *arg, const void *prev, size_t prevlen, const void *key, size_t klen)
{
	static const uint8 meta[8] = {0};
	bool		prev_meta = prevlen >= 8 && memcmp(prev, meta, 8) == 0;
	bool		key_meta = klen >= 8 && memcmp(key, meta, 8) == 0;

	return prev_meta != key_meta;
}

/* attach this process to the engine (once), without finalising anything */
static tides_db *
attach(void)
{
	tides_options o;
	char		dir[MAXPGPATH];
	tides_status s;

	if (my_db != NULL)
		return my_db;
	if (trt_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("tidesam must be loaded via shared_preload_libraries")));
	if (!trt_shared->engine_ok)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("tides storage is unavailable: %s", trt_shared->engine_error),
				 errhint("See the server log and docs/operations.md.")));
	trt_fill_options(&o);
	snprintf(dir, sizeof(dir), "%s/pg_tides", DataDir);
	s = tides_open(trt_shared->region, dir, &o, trt_engine_vfs(), false, NULL, &my_db);
	if (s != TIDES_OK)
	{
		char		msg[512];

		snprintf(msg, sizeof(msg), "%s", my_db ? tides_errmsg(my_db) : tides_status_name(s));
		if (my_db)
			tides_close(my_db);
		my_db = NULL;
		ereport(ERROR, (errmsg("could not attach to tides storage: %s", msg)));
	}
	tides_set_partitioner(my_db, trt_metadata_partition, NULL);
	trt_low_marks_attach(my_db);
	trt_wal_attach(my_db);
	on_shmem_exit(detach_engine, 0);
	/*
	 * A parallel worker reads what its leader wrote before it started; the
	 * leader's last writes may not be published yet (trt_write_under_stripe).
	 */
	if (IsParallelWorker())
		tides_await_reserved(my_db);
	return my_db;
}

tides_db *
trt_engine(void)
{
	tides_db   *db = attach();

	if (RecoveryInProgress())
	{
		/* a hot standby reads what WAL replay put there (engine_ok says tides.wal is on) */
		trt_load_incarnations_readonly(db);
		return db;
	}
	if (!trt_shared->finalized)
		trt_finalize_startup(db);
	return db;
}

tides_db *
trt_engine_attach(void)
{
	return attach();
}

tides_batch *
trt_local_batch(void)
{
	if (my_batch == NULL)
	{
		my_batch = tides_batch_new();
		if (my_batch == NULL)
			ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	}
	tides_batch_clear(my_batch);
	return my_batch;
}

/* the SQLSTATE of an engine status: what a client can act on */
int
trt_status_sqlstate(tides_status s)
{
	switch (s)
	{
		case TIDES_NO_SPACE:
			return ERRCODE_DISK_FULL;
		case TIDES_CORRUPTION:
			return ERRCODE_DATA_CORRUPTED;
		case TIDES_NO_MEMORY:
			return ERRCODE_OUT_OF_MEMORY;
		case TIDES_IO_ERROR:
			return ERRCODE_IO_ERROR;
		case TIDES_UNAVAILABLE:
			return ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
		default:
			return ERRCODE_INTERNAL_ERROR;
	}
}

void
trt_engine_error(tides_status s, const char *what)
{
	const char *msg = my_db ? tides_errmsg(my_db) : "";

	ereport(ERROR,
			(errcode(trt_status_sqlstate(s)),
			 errmsg("tides: could not %s: %s", what, msg[0] ? msg : tides_status_name(s))));
}

/*
 * Wait a little for background work.  The engine never blocks; we sleep on
 * our latch so that a cancel or a shutdown interrupts the wait.
 */
static void
busy_wait(int attempt)
{
	long		ms = attempt < 10 ? 1 : (attempt < 100 ? 5 : 20);

	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, ms,
					 PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

size_t
trt_batch_limit(void)
{
	return Min((size_t) 1 << 20, (size_t) trt_memtable_size_mb * 1024 * 1024 / 8);
}

uint64
trt_write_batch(tides_batch *b)
{
	uint64		lsn;

	if (trt_deferred_entries > 0)
	{
		/* with the deferred entries in one write when it may (xact.c) */
		if (trt_xact_write_with_deferred(b, &lsn))
			return lsn;
		trt_xact_flush_deferred();
	}
	return trt_write_batch_now(b);
}

static pg_atomic_uint64 *
stripe_point(LWLock *stripe)
{
	ptrdiff_t	i = (LWLockPadded *) stripe - trt_shared->row_locks;

	Assert(i >= 0 && i < trt_shared->n_row_locks);
	return &trt_shared->row_lock_points[i];
}

void
trt_row_lock_acquired(LWLock *stripe)
{
	uint64		point;

	Assert(LWLockHeldByMeInMode(stripe, LW_EXCLUSIVE));
	point = pg_atomic_read_u64(stripe_point(stripe));
	if (point != 0)
		tides_await_point(trt_engine(), point);
}

void
trt_write_under_stripe(tides_batch *b, LWLock *stripe)
{
	uint64		point;

	Assert(LWLockHeldByMeInMode(stripe, LW_EXCLUSIVE));
	/* joined with deferred rows or entries, the write is theirs too: it waits */
	if (trt_deferred_entries > 0)
	{
		trt_write_batch(b);
		return;
	}
	tides_batch_no_wait(b);
	trt_write_batch_now(b);
	/* later than any point stored here: the stripe orders its writers */
	point = tides_write_point(trt_engine());
	if (point != 0)
		pg_atomic_write_u64(stripe_point(stripe), point);
}

/* a write waited from `since` until now: count the stall and its time */
static void
note_stall(TimestampTz since)
{
	long		secs;
	int			us;

	TimestampDifference(since, GetCurrentTimestamp(), &secs, &us);
	pg_atomic_fetch_add_u64(&trt_shared->write_stalls, 1);
	pg_atomic_fetch_add_u64(&trt_shared->write_stall_us, (uint64) secs * 1000000 + us);
}

uint64
trt_write_batch_now(tides_batch *b)
{
	tides_db   *db = trt_engine();
	uint64		lsn = 0;
	TimestampTz stalled = 0;

	for (int attempt = 0;; attempt++)
	{
		tides_status s = trt_engine_write(db, b, true, &lsn);

		if (s == TIDES_OK)
		{
			if (stalled != 0)
				note_stall(stalled);
			return lsn;
		}
		if (s != TIDES_BUSY)
			trt_engine_error(s, "write");
		if (stalled == 0)
			stalled = GetCurrentTimestamp();
		/* our own walks may pin the memtables this wait is for */
		trt_repin_iters();
		PG_TRY();
		{
			busy_wait(attempt);
		}
		PG_CATCH();
		{
			note_stall(stalled);	/* cancelled while it waited */
			PG_RE_THROW();
		}
		PG_END_TRY();
	}
}

bool
trt_try_write_batch(tides_batch *b)
{
	tides_status s;

	if (trt_deferred_entries > 0)
		trt_xact_flush_deferred();
	/* optional work (kills): never paced, dropped when the engine is busy */
	tides_batch_unpaced(b);
	s = trt_engine_write(trt_engine(), b, true, NULL);
	if (s == TIDES_BUSY)
		return false;
	if (s != TIDES_OK)
		trt_engine_error(s, "write");
	return true;
}

#define TRT_PREFETCH_MAX 64		/* keys per tides_prefetch call */

/*
 * A prefetch searches the engine once more per key before the key is read,
 * as much CPU again as the read's own search when the blocks are cached,
 * and pays only when they are read from the files.  So a backend asks only
 * while its reads miss the block cache: on its first call, and when it has
 * read a block from the files since its last call ended (blocks_read: the
 * entries and rows read after it, mostly).
 */
static uint64 prefetch_reads_seen = UINT64_MAX;

static bool
prefetch_pays(void)
{
	tides_io_stats io;

	tides_get_process_io(&io);
	return io.blocks_read != prefetch_reads_seen;
}

static void
prefetch_done(void)
{
	tides_io_stats io;

	tides_get_process_io(&io);
	prefetch_reads_seen = io.blocks_read;
}

void
trt_prefetch_rows(uint64 tree, const uint64 *vids, int n)
{
	uint8		keys[TRT_PREFETCH_MAX][TRT_ROW_KEY_LEN];
	const void *ptrs[TRT_PREFETCH_MAX];
	size_t		lens[TRT_PREFETCH_MAX];

	if (!prefetch_pays())
		return;
	for (int done = 0; done < n;)
	{
		int			m = Min(n - done, TRT_PREFETCH_MAX);

		for (int i = 0; i < m; i++)
		{
			trt_row_key(keys[i], tree, vids[done + i]);
			ptrs[i] = keys[i];
			lens[i] = TRT_ROW_KEY_LEN;
		}
		tides_prefetch(trt_engine(), ptrs, lens, m);
		done += m;
	}
	prefetch_done();
}

void
trt_prefetch_stems(const uint8 *const *stems, const size_t *lens, int n)
{
	if (!prefetch_pays())
		return;
	tides_prefetch_stems(trt_engine(), (const void *const *) stems, lens, n);
	prefetch_done();
}

bool
trt_read(const uint8 *key, size_t klen, char **val, size_t *vlen)
{
	tides_db   *db = trt_engine();
	size_t		cap = 512;
	char	   *buf;

	/*
	 * Deferred entries are rows and index entries, never tree 0's metadata:
	 * a metadata read (a relation's tree, looked up when a statement opens
	 * an index) leaves them waiting, or a one-row INSERT's row would go in a
	 * batch of its own instead of with the seal.
	 */
	if (trt_deferred_entries > 0 && !trt_key_is_meta(key, klen))
		trt_xact_flush_deferred();
	buf = palloc(cap);

	for (;;)
	{
		tides_status s = tides_get_into(db, NULL, key, klen, buf, cap, vlen);

		if (s == TIDES_OK)
		{
			*val = buf;
			return true;
		}
		if (s == TIDES_NOT_FOUND)
		{
			pfree(buf);
			return false;
		}
		if (s == TIDES_INVALID && *vlen > cap)
		{
			cap = *vlen;
			buf = repalloc(buf, cap);
			continue;
		}
		trt_engine_error(s, "read");
	}
}

/*
 * The last row value this backend read, with the read point of that read.
 * An UPDATE or DELETE reads each row twice: the scan that finds it, then
 * the row lock that reads its newest state again before deciding.  For a
 * row in the table files the second read costs what the first did (a filter
 * probe in each level-0 file, a block of the last level), while the engine
 * can tell from its memtables and its files' metadata alone whether
 * anything was written to the key since the first read
 * (tides_changed_since): then the value kept is still the newest.  One
 * value of up to MEMO_MAX_VALUE bytes, forgotten at every transaction end.
 */
#define MEMO_MAX_KEY 64
#define MEMO_MAX_VALUE 8192

static struct
{
	bool		valid;
	uint64		since;			/* the read point the value was read at */
	size_t		klen;
	uint8		key[MEMO_MAX_KEY];
	size_t		vlen;
	char	   *val;			/* MEMO_MAX_VALUE bytes in TopMemoryContext */
}			memo;

static void
memo_keep(const uint8 *key, size_t klen, uint64 since, const void *val, size_t vlen)
{
	memo.valid = false;
	if (klen > MEMO_MAX_KEY || vlen > MEMO_MAX_VALUE)
		return;
	if (memo.val == NULL)
		memo.val = MemoryContextAlloc(TopMemoryContext, MEMO_MAX_VALUE);
	memcpy(memo.key, key, klen);
	memo.klen = klen;
	memcpy(memo.val, val, vlen);
	memo.vlen = vlen;
	memo.since = since;
	memo.valid = true;
}

static bool
memo_holds(const uint8 *key, size_t klen)
{
	return memo.valid && memo.klen == klen && memcmp(memo.key, key, klen) == 0;
}

bool
trt_stem_absent(const uint8 *stem, size_t len)
{
	bool		absent;
	tides_status s = tides_stem_absent(trt_engine(), stem, len, &absent);

	if (s != TIDES_OK)
		trt_engine_error(s, "read an index");
	return absent;
}

bool
trt_rows_changed_since(uint64 tree, uint64 lo_vid, uint64 hi_vid, uint64 since)
{
	uint8		lower[TRT_ROW_KEY_LEN];
	uint8		upper[TRT_ROW_KEY_LEN];
	bool		changed;
	tides_status s;

	Assert(lo_vid < hi_vid && lo_vid <= TRT_VID_MAX);
	trt_row_key(lower, tree, lo_vid);
	if (hi_vid > TRT_VID_MAX)
		trt_row_key(upper, tree + 1, 0);	/* to the end of the tree */
	else
		trt_row_key(upper, tree, hi_vid);
	s = tides_range_changed_since(trt_engine(), lower, sizeof(lower), upper, sizeof(upper), since,
								  &changed);
	if (s != TIDES_OK)
		trt_engine_error(s, "read a table");
	return changed;
}

bool
trt_read_row(const uint8 *key, size_t klen, char **val, size_t *vlen)
{
	tides_db   *db = trt_engine();
	uint64		since;

	/* this backend's own writes first: they move the key past the read point */
	if (trt_deferred_entries > 0)
		trt_xact_flush_deferred();
	if (memo_holds(key, klen))
	{
		bool		changed;
		tides_status s = tides_changed_since(db, key, klen, memo.since, &changed);

		if (s != TIDES_OK)
			trt_engine_error(s, "read");
		if (!changed)
		{
			*val = palloc(Max(memo.vlen, 1));
			memcpy(*val, memo.val, memo.vlen);
			*vlen = memo.vlen;
			return true;
		}
	}
	/* taken before the read: the value read is at least this new */
	since = tides_read_point(db);
	if (!trt_read(key, klen, val, vlen))
	{
		if (memo_holds(key, klen))
			memo.valid = false;
		return false;
	}
	memo_keep(key, klen, since, *val, *vlen);
	return true;
}

void
trt_iter_remember(TrtIter *w)
{
	size_t		klen,
				vlen;
	const void *key = tides_iter_key(w->it, &klen);
	const void *val = tides_iter_value(w->it, &vlen);

	memo_keep(key, klen, tides_iter_read_point(w->it), val, vlen);
}

void
trt_read_forget(void)
{
	memo.valid = false;
}

void
trt_wakeup_workers(void *arg, int kind)
{
	TrtShared *ts = trt_shared;

	if (ts == NULL)
		return;
	if ((kind & TIDES_WORK_FLUSH) && ts->flush_latch)
		SetLatch(ts->flush_latch);
	if ((kind & TIDES_WORK_MAINT) && ts->maint_latch)
		SetLatch(ts->maint_latch);
	if ((kind & TIDES_WORK_SYNC) && ts->sync_latch)
		SetLatch(ts->sync_latch);
	if (kind & TIDES_WORK_COMPACT)
	{
		uint32		n = Max(1, trt_compaction_workers);
		uint32		i = pg_atomic_fetch_add_u32(&ts->compact_rr, 1) % n;

		if (ts->compact_latch[i])
			SetLatch(ts->compact_latch[i]);
	}
}
