/*
 * tides_engine.h -- public interface of the tides LSM engine.
 *
 * The engine is an ordered byte-string key/value store (keys compare with
 * plain memcmp) built as a library that lives inside a caller-provided memory
 * region shared by several processes.  It owns no threads and never blocks
 * without bound: background work (flush, compaction, log sync, file
 * reclamation) is exposed as "work functions" the caller runs, and a call that
 * would have to wait for such work returns TIDES_BUSY so the caller can wait in
 * its own interruptible way and retry.
 *
 * Life cycle
 *   1. One process computes tides_region_size(), obtains that many bytes of
 *      memory that every participating process maps at the SAME address
 *      (fork-inherited MAP_SHARED memory, or PostgreSQL's main shared segment),
 *      and calls tides_region_init().
 *   2. Exactly one process calls tides_open() with recover = true: it loads the
 *      manifest and replays the log into the memtable.  Others call
 *      tides_open() with recover = false after that has finished.
 *   3. Any process reads and writes; some process runs the work functions.
 *   4. tides_close() releases a process's handle (file descriptors, buffers).
 *      tides_shutdown() (one process, no concurrent users) syncs and writes a
 *      clean manifest.
 *
 * Concurrency contract: every function may be called concurrently from any
 * number of processes attached to the same region, except tides_region_init,
 * recovery and tides_shutdown.  A tides_db handle belongs to one process and
 * must not be used by two threads at once; tides_iter and tides_batch objects
 * are process-local too.
 *
 * Nothing in this header (or anywhere under src/engine) includes a PostgreSQL
 * header.
 */
#ifndef TIDES_ENGINE_H
#define TIDES_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- status */

typedef enum tides_status
{
	TIDES_OK = 0,
	TIDES_NOT_FOUND,		/* key absent (not an error) */
	TIDES_BUSY,				/* pipeline full: run/await background work, retry */
	TIDES_INVALID,			/* bad argument or option */
	TIDES_IO_ERROR,			/* EIO and other I/O failures */
	TIDES_NO_SPACE,			/* ENOSPC / EDQUOT */
	TIDES_CORRUPTION,		/* checksum or format failure in a file */
	TIDES_NO_MEMORY,		/* shared region exhausted */
	TIDES_UNAVAILABLE		/* engine stopped after an unrecoverable error */
} tides_status;

const char *tides_status_name(tides_status s);

/* ----------------------------------------------------------- file access */

/*
 * All file I/O goes through a vfs table.  tides_vfs_posix() is the default;
 * test/engine builds a fault-injecting vfs on top of it (test/vfs/vfs_fault.h).
 * Every function returns 0 or a negative errno value.
 */
typedef struct tides_vfs tides_vfs;
struct tides_vfs
{
	void	   *ctx;
	int			(*open) (tides_vfs *v, const char *path, int flags, int mode);	/* fd */
	int			(*close) (tides_vfs *v, int fd);
	int64_t		(*pread) (tides_vfs *v, int fd, void *buf, size_t n, uint64_t off);
	int64_t		(*pwrite) (tides_vfs *v, int fd, const void *buf, size_t n, uint64_t off);
	int			(*fsync) (tides_vfs *v, int fd);
	int			(*allocate) (tides_vfs *v, int fd, uint64_t off, uint64_t len);
	int			(*truncate) (tides_vfs *v, int fd, uint64_t len);
	int64_t		(*file_size) (tides_vfs *v, int fd);
	int			(*unlink) (tides_vfs *v, const char *path);
	int			(*rename) (tides_vfs *v, const char *from, const char *to);
	int			(*mkdir) (tides_vfs *v, const char *path);
	int			(*sync_dir) (tides_vfs *v, const char *path);
	/* calls fn(name, arg) for each entry of a directory */
	int			(*list_dir) (tides_vfs *v, const char *path,
							 void (*fn) (const char *name, void *arg), void *arg);

	/*
	 * Optional (NULL: not offered).  map() shares bytes [0, len) of an open
	 * file read-write with the kernel's page cache (MAP_SHARED): a store
	 * into the mapping is in the file, for every process and across this
	 * one's death, as a pwrite's bytes are, and the file's fsync makes it
	 * durable.  Only for files at least len long whose blocks are allocated
	 * (a store cannot fail later for want of space).  NULL on failure, and
	 * the caller falls back to pwrite.  A vfs that must see every write (to
	 * inject faults, or to keep unsynced bytes apart) leaves both NULL.
	 */
	void	   *(*map) (tides_vfs *v, int fd, uint64_t len);
	void		(*unmap) (tides_vfs *v, void *addr, uint64_t len);

	/*
	 * Optional (NULL: not offered).  will_need() asks the kernel to start
	 * reading bytes [off, off + len) of an open file into its page cache
	 * and returns at once (posix_fadvise WILLNEED): a hint, whose failure
	 * changes nothing but speed, so it reports none.  tides_prefetch's
	 * reads, started together, overlap on the device.
	 */
	void		(*will_need) (tides_vfs *v, int fd, uint64_t off, uint64_t len);
};

tides_vfs  *tides_vfs_posix(void);

/* --------------------------------------------------------------- options */

typedef enum tides_sync_mode
{
	TIDES_SYNC_NONE = 0,		/* write() to the kernel, never fsync on commit */
	TIDES_SYNC_INTERVAL,		/* tides_sync_work() fsyncs every sync_interval_ms */
	TIDES_SYNC_FULL				/* tides_sync() waits for fsync (group commit) */
} tides_sync_mode;

/* where the engine's writes are logged (see "External log" below) */
typedef enum tides_log_mode
{
	TIDES_LOG_OWN = 0,			/* the engine's own log; sync_mode applies */
	TIDES_LOG_EXTERNAL			/* the application's log: tides_write_external() */
} tides_log_mode;

typedef enum tides_compression
{
	TIDES_COMPRESS_NONE = 0,
	TIDES_COMPRESS_LZ4 = 1,
	TIDES_COMPRESS_ZSTD = 2
} tides_compression;

/*
 * zstd levels: 1 .. 22, and zstd's fast levels -1 .. TIDES_ZSTD_FASTEST
 * (faster than level 1 and larger output, nearer LZ4's; 0, zstd's "default",
 * is not a level here).
 */
#define TIDES_ZSTD_FASTEST (-7)

/*
 * Options fixed at tides_region_init() time (they size the region) are
 * marked [region]; the rest may differ per process and are read from the
 * options passed to tides_open().
 */
/* the largest tides_options.filter_stem_suffix */
#define TIDES_MAX_STEM_SUFFIX 64

typedef struct tides_options
{
	uint64_t	memtable_size;		/* [region] bytes per memtable (64 MiB) */
	uint32_t	memtable_count;		/* [region] active + sealed memtables (4) */
	/*
	 * A flush writes up to this many sealed memtables, merged, into one
	 * level-0 file; the flush worker waits until that many are sealed
	 * (unless a seal was asked for explicitly, no memtable is free, or a
	 * log sync failed).  Small memtables keep the skiplist a write searches
	 * within the CPU caches; merging them keeps level-0 files, and so
	 * compaction, as they were with one large memtable.  (1; less than
	 * memtable_count)
	 */
	uint32_t	memtables_per_flush;
	/*
	 * A memtable slot that stayed free this long gives its arena's pages
	 * back to the operating system (the maintenance work does it, keeping
	 * one free slot's pages for the next switch); the next activation
	 * faults in fresh ones.  Memory a burst of writes needed does not stay
	 * taken from the page cache and the block cache's files once writes
	 * slow down.  Needs a shared mapping (db/maint.c, "Idle memtables");
	 * 0: never.  (10000)
	 */
	uint32_t	memtable_discard_ms;
	uint64_t	block_cache_size;	/* [region] shared block cache bytes (128 MiB) */
	uint64_t	meta_size;			/* [region] shared metadata heap (16 MiB) */
	uint32_t	max_open_tags;		/* [region] concurrently open batch tags (4096) */
	tides_log_mode log_mode;		/* [region] (TIDES_LOG_OWN) */

	uint32_t	block_size;			/* SSTable data block target, bytes (4096) */
	uint32_t	restart_interval;	/* keys between restart points (16) */
	uint32_t	bloom_bits_per_key; /* 0 disables filters (10) */
	uint32_t	prefix_len;			/* also filter on the first prefix_len key bytes (0: off) */
	uint32_t	filter_stem_suffix; /* also filter on every key without its last
									 * filter_stem_suffix bytes, its stem, for
									 * iterators with lower_is_stem (0: off; at
									 * most TIDES_MAX_STEM_SUFFIX) */
	/*
	 * Each SSTable records the key range of every run of its keys that
	 * share their first range_prefix_len bytes (up to 64 runs), and a prefix
	 * or stem probe for keys that fall in no run of a file answers "absent"
	 * without reading its filter.  A store whose keys start with a table or
	 * index id sets it to the id's length: a file holding the ids 3, 5 and 9
	 * then tells that it holds no key of id 4, nor one of id 5 above its
	 * largest (an ascending key's uniqueness check).  (0: off; at most 64)
	 */
	uint32_t	range_prefix_len;
	tides_compression compression;	/* per-block compression (LZ4) */
	int			compression_level;	/* zstd level (3; see TIDES_ZSTD_FASTEST) */
	/*
	 * Files written into the last level -- where nearly all of a store's
	 * bytes end up -- and ingested files (placed as deep as they fit):
	 * compressed with this instead (LZ4, level 3).  Upper levels are
	 * rewritten often and read hot; the last level is written least often
	 * per byte, so a stronger, slower compression costs least there.
	 */
	tides_compression bottommost_compression;
	int			bottommost_compression_level;

	uint64_t	target_file_size;	/* SSTable output size (64 MiB) */
	uint32_t	level0_compaction_trigger;	/* L0 files that start L0->L1 (4) */
	bool		level0_adaptive_trigger;	/* raise it while the base level is large
											 * against L0 (false; db/compaction_l0.c) */
	bool		level0_tiered;	/* L0 as sorted runs that merge among themselves
								 * until L0 is half the base level (false;
								 * db/compaction_l0.c; replaces the adaptive
								 * trigger) */
	uint32_t	level0_slowdown_trigger;	/* L0 files that delay writers (12) */
	uint32_t	level0_stop_trigger;		/* L0 files that stall writers (20) */
	uint64_t	level_base_size;	/* smallest level target (256 MiB) */
	uint32_t	level_size_ratio;	/* fanout between levels (10) */
	/*
	 * From level0_slowdown_trigger L0 files on, each writing process is
	 * paced to this many bytes per second (batch arena bytes), halved with
	 * each further L0 file; 0: never delayed (16 MiB/s).
	 */
	uint64_t	delayed_write_rate;

	uint64_t	log_segment_size;	/* log segment bytes (64 MiB) */
	tides_sync_mode sync_mode;		/* (FULL) */
	uint32_t	sync_interval_ms;	/* for TIDES_SYNC_INTERVAL (200) */

	uint32_t	max_open_files;		/* per-process SSTable descriptor cache (256) */

	/* called (by the writer) when background work became due; may be NULL */
	void		(*wakeup) (void *arg, int kind);
	void	   *wakeup_arg;
} tides_options;

/* kinds passed to wakeup() */
#define TIDES_WORK_FLUSH	1
#define TIDES_WORK_COMPACT	2
#define TIDES_WORK_SYNC		4
#define TIDES_WORK_MAINT	8

void		tides_options_default(tides_options *opts);

/* ------------------------------------------------------------ life cycle */

typedef struct tides_db tides_db;

/* bytes of shared memory the options need (region must be 64-byte aligned) */
size_t		tides_region_size(const tides_options *opts);

/* lay out a fresh region; no file is touched */
tides_status tides_region_init(void *region, size_t size, const tides_options *opts);

/* what recovery found; filled by tides_open(recover = true) */
typedef struct tides_recovery_info
{
	uint64_t	log_bytes_replayed;
	uint64_t	batches_replayed;
	uint64_t	last_seq;
	bool		log_tail_damaged;	/* replay stopped at a bad record (a torn tail:
									 * damage that later records prove was
									 * durable fails recovery instead) */
	/* tags with records but no sealing batch (see tides_batch_set_tag) */
	uint32_t	n_unsealed_tags;
	uint64_t   *unsealed_tags;	/* malloc'd; freed by tides_close */
	double		seconds;
} tides_recovery_info;

/*
 * Attach this process to an initialised region.  dir holds the engine's
 * files.  With recover = true (exactly one process, once per region
 * initialisation) the manifest is loaded (or created) and the log replayed;
 * info may be NULL.  Recovery fails with TIDES_CORRUPTION, naming the file,
 * and changes nothing when CURRENT is missing from a directory that holds a
 * store, or when the log is damaged at a place later records prove was
 * durable (src/engine/README.md, 3.1 and 3.3).
 */
tides_status tides_open(void *region, const char *dir, const tides_options *opts,
						tides_vfs *vfs, bool recover,
						tides_recovery_info *info, tides_db **out);
void		tides_close(tides_db *db);

/*
 * clean shutdown: flush nothing, sync the log (OWN mode), persist the manifest.
 * In EXTERNAL mode, tides_close_writes and a passed flush barrier come first.
 */
tides_status tides_shutdown(tides_db *db);

/*
 * The last error of this process's handle, with the file it concerns, e.g.
 * "checksum mismatch in block at offset 8192 of 000123.sst".
 */
const char *tides_errmsg(tides_db *db);

/* --------------------------------------------------------------- writes */

typedef struct tides_batch tides_batch;

/*
 * Longest key a batch accepts.  Every file's smallest and largest keys live
 * in the shared metadata heap (options.meta_size), so the limit bounds what
 * one file can take there; values have no such limit.
 */
#define TIDES_MAX_KEY_LEN 65536

tides_batch *tides_batch_new(void);
void		tides_batch_free(tides_batch *b);
void		tides_batch_clear(tides_batch *b);
tides_status tides_batch_put(tides_batch *b, const void *key, size_t klen,
							 const void *val, size_t vlen);
tides_status tides_batch_delete(tides_batch *b, const void *key, size_t klen);
uint32_t	tides_batch_count(const tides_batch *b);
size_t		tides_batch_bytes(const tides_batch *b);

/* call fn for each entry of b, in order (delete: val NULL, vlen 0) */
void		tides_batch_foreach(const tides_batch *b,
								void (*fn) (void *arg, bool is_delete, const void *key, size_t klen,
											const void *val, size_t vlen),
								void *arg);

/*
 * Tags give multi-batch atomicity across crashes.  A batch may carry a
 * nonzero tag (e.g. a transaction id).  A tag is open from its first batch
 * until a batch with seal = true; after a crash, recovery reports every tag
 * that has surviving records but whose sealing batch did not survive
 * (tides_recovery_info.unsealed_tags), including tags whose records were
 * already flushed into SSTables.  The caller decides what an unsealed tag
 * means (the table AM treats its transaction as aborted).  Tags must not be
 * reused.
 */
void		tides_batch_set_tag(tides_batch *b, uint64_t tag, bool seal);

/*
 * In FULL mode tides_write() of an untagged batch, or of a seal, returns
 * only once the batch is durable.  A caller that makes a series of such
 * writes durable at once with tides_sync(force) later (VACUUM freezing row
 * by row) marks each batch with this; the mark is cleared with the batch.
 */
void		tides_batch_defer_sync(tides_batch *b);

/*
 * Writes at the slowdown trigger are paced (delayed_write_rate); a batch
 * marked with this is not: one that only removes what others wrote and
 * saves later work -- a scan's deletions of entries it found dead, which
 * are bounded by the deletions that were paced, and which a reader makes
 * in the middle of a query.  Level 0's stop trigger still answers
 * TIDES_BUSY.  The mark is cleared with the batch.
 */
void		tides_batch_unpaced(tides_batch *b);

/*
 * tides_write() of a batch marked with this returns once its entries are
 * in the memtable, without waiting for the writes reserved before it --
 * which it otherwise does, to make it visible to every reader on return.
 * Readers see a prefix of the writes, so the batch becomes visible to
 * other handles when every earlier write is in too; this handle's own
 * reads (every read point it takes after the write returns) wait for it.
 * A process that depends on the write in another way -- it takes a lock
 * the writer held while writing -- must wait for tides_write_point()
 * taken by the writer right after the write, with tides_await_point().
 * A failure of a log write ahead of the batch is reported by the handle's
 * next write that waits (an unmarked batch, or one synced before it
 * returns: those always wait).  The mark is cleared with the batch.
 */
void		tides_batch_no_wait(tides_batch *b);

/*
 * The publication point of this handle's last no-wait write: 0 when it is
 * published (or there is none).  Points of different handles compare as
 * numbers: a larger one is published after a smaller.
 */
uint64_t	tides_write_point(tides_db *db);

/* return once every write up to `point` is visible to every reader (0: at once) */
void		tides_await_point(tides_db *db, uint64_t point);

/* return once every write reserved before the call is visible to every reader */
void		tides_await_reserved(tides_db *db);

/*
 * What a batch carries: its tag, whether it seals it, and the defer_sync
 * mark (a cleared batch: 0, false, false).  False, with nothing set, for a
 * batch that ran out of memory.  Lets a caller tell whether two batches may
 * be written as one (same tag, no seal, same mark) without changing what
 * either means.
 */
bool		tides_batch_get_tag(const tides_batch *b, uint64_t *tag, bool *seal,
								bool *defer_sync);

/*
 * Recovery keeps reporting an unsealed tag (after every further crash) until
 * the caller settles it: call this once the caller's own decision about the
 * tags is durable.
 */
tides_status tides_settle_tags(tides_db *db, const uint64_t *tags, uint32_t n);

/*
 * Apply a batch atomically: after a crash it is wholly present or wholly
 * absent, and readers see all of it or none of it.  *lsn receives the log
 * position just past the batch (for tides_sync) when it returns TIDES_OK.
 * Returns TIDES_BUSY when the memtables or level 0 are full; the batch was
 * not applied.
 */
tides_status tides_write(tides_db *db, tides_batch *b, uint64_t *lsn);

/*
 * Make the log durable up to lsn (0: everything written so far).  In FULL
 * mode this fsyncs (one fsync serves every concurrent caller); in the other
 * modes it only guarantees the bytes reached the kernel unless force = true.
 */
tides_status tides_sync(tides_db *db, uint64_t lsn, bool force);

/* change this process's sync mode (e.g. after a configuration reload) */
void		tides_set_sync_mode(tides_db *db, tides_sync_mode mode);

/*
 * Change the compression (and zstd level, 1..22) of the SSTables this
 * process's handle writes from now on: its flushes and compactions.
 * TIDES_INVALID for an unknown compression or a level out of range.
 */
tides_status tides_set_compression(tides_db *db, tides_compression c, int level);

/* the same for files written into the last level and ingested files */
tides_status tides_set_bottommost_compression(tides_db *db, tides_compression c, int level);

/* change memtable_discard_ms for this process's maintenance work (0: never) */
void		tides_set_memtable_discard_ms(tides_db *db, uint32_t ms);

/* highest lsn known durable */
uint64_t	tides_durable_lsn(tides_db *db);

/*
 * Refuse every later write (TIDES_UNAVAILABLE) in every process: the step
 * before a final tides_flush_barrier() at a clean shutdown in EXTERNAL mode,
 * so that the barrier covers every logged batch.  Not undone until the
 * region is initialised again.
 */
void		tides_close_writes(tides_db *db);

/* ---------------------------------------------------------- external log */

/*
 * An application that keeps a write-ahead log of its own (PostgreSQL's WAL)
 * can make that the engine's log: options.log_mode = TIDES_LOG_EXTERNAL.  The
 * engine then writes no log file and tides_write() is refused; instead:
 *
 *  - tides_write_external() applies a batch as tides_write() would, except
 *    that where tides_write() appends a record to the engine's log it calls
 *    append(arg, rec, len) with the batch's encoding: after the batch's
 *    memtable space is reserved, before its entries are inserted.  append()
 *    returns the position just past the record in its log (see the
 *    write-ahead rule below) and must neither fail nor longjmp (log inside a
 *    critical section).  append
 *    = NULL applies the batch unlogged: data the application does not keep
 *    across crashes, and the replay below.  Tags are refused: the
 *    application's log orders commits and aborts.
 *
 *  - A logged batch is durable only through the application's log until
 *    its memtable is flushed.  tides_flush_barrier() seals the active
 *    memtable and returns a ticket; once tides_flush_barrier_passed(ticket)
 *    is true, every batch whose append() had returned when the barrier was
 *    taken is in an SSTable.  (The space is reserved before append() is
 *    called, so such a batch is in a memtable the barrier sealed or in an
 *    older one.)  An application checkpoint chooses its redo point, takes a
 *    barrier, and declares the checkpoint done only once it has passed.
 *
 *  - After a crash the application replays its log from its redo point:
 *    tides_batch_load() and tides_write_external(append = NULL) for every
 *    logged batch, in log order.  Batches that are already in SSTables are
 *    applied again, with new sequence numbers.  The end state is exact if
 *    every key's batches were logged in the order in which they were
 *    applied -- writers of one key hold a lock of their own across
 *    reserve, append and insert -- since replay then leaves each key at its
 *    last logged value.  tides_drop_prefix() is not logged: log the drop
 *    and replay it too.
 *
 * A store written in OWN mode and opened in EXTERNAL mode is recovered from
 * its own log as usual, and what the replay put into memtables is flushed
 * before tides_open() returns.
 */
typedef uint64_t (*tides_append_fn) (void *arg, const void *rec, size_t len);

tides_status tides_write_external(tides_db *db, tides_batch *b, tides_append_fn append,
								  void *arg);

/*
 * Write-ahead rule: a memtable may reach an SSTable only once the
 * application's log is durable up to the last of its batches -- otherwise a
 * crash could keep the batch in the store and lose it from the log.  append()
 * returns the position just past its record; before writing a memtable out,
 * flush calls sync(arg, pos) with the largest position of its batches, and
 * sync returns once the log is durable there (PostgreSQL: XLogFlush).
 * Installed per process, like the filter; a process without it cannot flush
 * a memtable that holds logged batches (tides_flush_work fails with
 * TIDES_INVALID).
 */
typedef void (*tides_log_sync_fn) (void *arg, uint64_t pos);

void		tides_set_log_sync(tides_db *db, tides_log_sync_fn sync, void *arg);

/* make b the batch a record handed to append() encodes (TIDES_CORRUPTION if malformed) */
tides_status tides_batch_load(tides_batch *b, const void *rec, size_t len);

/* seal the active memtable (if not empty); TIDES_BUSY while none is free */
tides_status tides_flush_barrier(tides_db *db, uint64_t *ticket);
bool		tides_flush_barrier_passed(tides_db *db, uint64_t ticket);

/* ------------------------------------------------------------- ingestion */

/*
 * Ingestion of sorted data as table files (the idea of RocksDB's
 * IngestExternalFile): instead of going through the log and the memtables,
 * a load is written straight into SSTables, which one manifest edit then
 * adds to the store -- in the deepest level where they fit, normally the
 * bottom, so compaction never rewrites them.
 *
 *   - tides_ingest_begin starts an ingestion (process-local, like a batch).
 *   - tides_ingest_put / _delete add entries in strictly increasing user-key
 *     order (one entry per key); anything else fails with TIDES_INVALID and
 *     the ingestion can then only be aborted.  Output files are cut at
 *     target_file_size and where the partitioner says, as compaction outputs
 *     are; tides_ingest_cut ends the current file early (a caller whose keys
 *     jump over a range that others write cuts there, so that no file spans
 *     the gap).  Files are written and fsynced as they fill.
 *   - tides_ingest_install makes everything put so far part of the store at
 *     once, atomically and durably: every entry gets one new sequence number
 *     S, larger than anything published or held by a snapshot before, so
 *     readers at an older sequence number (existing snapshots) do not see
 *     it and everyone after sees all of it; a crash before the edit is
 *     durable leaves nothing (recovery deletes the files).  The files go to
 *     the deepest level at which no level above holds a key of their range
 *     and none of that level's files overlaps them (level 0 if data above
 *     allows nothing else).  TIDES_BUSY, with nothing changed, when a
 *     memtable holds a key of their range (the active one is sealed: run
 *     flush work, then retry), or the tag table is full.  Writers are held
 *     back for the moment the edit takes (one manifest append and the files'
 *     property rewrite), so that no write can be published between choosing
 *     S and the files becoming visible.  After TIDES_OK the ingestion may go
 *     on (more puts, keys above the last) and be installed again.
 *   - tides_ingest_abort deletes the files not installed (keeping any a
 *     possibly durable manifest record names; recovery deletes them) and
 *     frees the ingestion; tides_ingest_free after a last install.
 *   - tides_ingest_set_helper(in, true), before the first put: the files'
 *     data blocks are compressed by a helper thread of this process, ahead
 *     of the puts (table/block_pipe.h; the files are the same), for a
 *     caller that has nothing else to run on another CPU.  Without a
 *     helper (the default, or when no thread can be started) the puts
 *     compress.
 *
 * Tags (OWN log mode): an ingestion with a tag is part of that tag's
 * multi-batch unit.  Its install records the tag as pending in the manifest
 * (and opens it), so if the tag's seal is lost in a crash, recovery reports
 * it unsealed even though the ingested files survive.  Seal the tag with a
 * batch afterwards as usual.  Refused in EXTERNAL mode (TIDES_INVALID).
 */
typedef struct tides_ingest tides_ingest;

typedef struct tides_ingest_result
{
	uint64_t	seq;			/* the sequence number every entry got (0: nothing installed) */
	int			level;			/* where the files went */
	uint32_t	files;
	uint64_t	entries;
	uint64_t	bytes;			/* file bytes */
} tides_ingest_result;

tides_status tides_ingest_begin(tides_db *db, tides_ingest **out);
tides_status tides_ingest_put(tides_ingest *in, const void *key, size_t klen,
							  const void *val, size_t vlen);
tides_status tides_ingest_delete(tides_ingest *in, const void *key, size_t klen);
void		tides_ingest_set_tag(tides_ingest *in, uint64_t tag);
void		tides_ingest_set_helper(tides_ingest *in, bool helper);
tides_status tides_ingest_cut(tides_ingest *in);
/* entries put and not yet installed, and the bytes of their files so far */
uint64_t	tides_ingest_pending_entries(const tides_ingest *in);
uint64_t	tides_ingest_pending_bytes(const tides_ingest *in);
tides_status tides_ingest_install(tides_ingest *in, tides_ingest_result *res);
void		tides_ingest_abort(tides_ingest *in);
void		tides_ingest_free(tides_ingest *in);

/*
 * Call fn for every entry put and not yet installed, in order, after
 * tides_ingest_cut (an application that logs a load only now, or again,
 * reads it back from the files; val is NULL for a deletion).
 */
tides_status tides_ingest_foreach(tides_ingest *in,
								  void (*fn) (void *arg, bool is_delete, const void *key, size_t klen,
											  const void *val, size_t vlen),
								  void *arg);

/*
 * The encoding of a batch (what tides_write_external hands to append, and
 * tides_batch_load takes): an application that logs a batch without
 * applying it -- because the same entries go into an ingestion -- logs
 * this.  Valid until the batch changes.
 */
const void *tides_batch_encoding(tides_batch *b, size_t *len);

/* ----------------------------------------------------------- checkpoints */

/*
 * A checkpoint is the current set of files saved under a name, as a
 * manifest file of its own ("CKPT-<name>") in the engine's directory.  A
 * copy of the directory taken file by file while the engine runs (a
 * physical backup) holds a consistent store as of a checkpoint saved before
 * the copy began, provided no file the checkpoint names was deleted before
 * the copy reached it: hold file deletion from before the checkpoint until
 * the copy is done.  In EXTERNAL mode the store is then as of the barrier
 * that preceded the checkpoint, and the application replays its log from
 * there.  Names: letters, digits, '-', '_', at most 64 characters.
 */
tides_status tides_checkpoint_save(tides_db *db, const char *name);
tides_status tides_checkpoint_remove(tides_db *db, const char *name);

/*
 * Make a copy's checkpoint its current state.  No process may be attached
 * (call before tides_open); recovery then deletes every file the checkpoint
 * does not name.  TIDES_NOT_FOUND if there is no such checkpoint;
 * TIDES_CORRUPTION, changing nothing, if it names a file the directory
 * lacks or holds at a different size (an incomplete copy).
 */
tides_status tides_checkpoint_restore(const char *dir, tides_vfs *vfs, const char *name);

/* while held (a counter: holds nest), obsolete files are kept, not deleted */
void		tides_hold_file_deletion(tides_db *db, bool hold);

/* ---------------------------------------------------------------- reads */

/*
 * A snapshot pins a sequence number: reads through it ignore later writes,
 * and compaction keeps the versions it can see.  Release every snapshot.
 */
typedef struct tides_snapshot
{
	uint64_t	seq;
	uint32_t	slot;
} tides_snapshot;

tides_status tides_snapshot_acquire(tides_db *db, tides_snapshot *snap);
void		tides_snapshot_release(tides_db *db, tides_snapshot *snap);

/*
 * Point read.  On TIDES_OK *val is a malloc'd copy (caller frees) of *vlen
 * bytes.  snap may be NULL (read the latest).
 */
tides_status tides_get(tides_db *db, const tides_snapshot *snap,
					   const void *key, size_t klen, void **val, size_t *vlen);

/*
 * Same as tides_get, but copies into a caller buffer; if the value is larger
 * than cap, *vlen is set to its size and TIDES_INVALID is returned.
 */
tides_status tides_get_into(tides_db *db, const tides_snapshot *snap,
							const void *key, size_t klen,
							void *buf, size_t cap, size_t *vlen);

/*
 * Start reading, all at once, the table blocks that tides_get of each of
 * keys[0..n) at the latest read point would read from the device, so that
 * the gets that follow, one after another, find them in the kernel's page
 * cache: a caller that knows several keys before it needs the first (the
 * rows of an `IN (...)` list) waits for one device latency instead of n.
 * Per key it searches as tides_get does -- memtables, level 0, then one
 * file per level, each ruled out by its key ranges and filter -- and stops
 * at the first file whose data block for the key is either in the block
 * cache and holds the key, or not in the cache (then it is the block asked
 * for, through the vfs's will_need).  An index partition not in the cache
 * is read at once (it is cached ahead of data blocks, so that is rare).
 * Nothing is inserted into the block cache and no result is returned: a
 * hint, whose failures (an unreadable partition, a vfs without will_need)
 * are left for the gets to report.  Returns the number of blocks asked
 * for; counted in tides_stats as blocks_prefetched.
 */
size_t		tides_prefetch(tides_db *db, const void *const *keys, const size_t *lens, size_t n);

/*
 * The same for iterators about to seek stems[0..n) with tides_iter_seek_stem:
 * the block each such seek would land in, in every table it would read (key
 * range and stem filter; the last level's by key range only) -- not only
 * the first, as a seek merges all levels.
 */
size_t		tides_prefetch_stems(tides_db *db, const void *const *stems, const size_t *lens, size_t n);

/*
 * Read points, for a reader that keeps a value it read and wants to know
 * later whether it is still the newest (a row read by a scan, then locked
 * and changed by the same backend).  tides_read_point() is the sequence
 * number a read starting now would take: every entry published so far is at
 * or below it, so a tides_get after the call returns an entry at least as
 * new.  tides_iter_read_point() is the point of the view an iterator shows
 * its current entry from (a repin moves it, once the iterator steps on).
 *
 * tides_changed_since(key, since) sets *changed to false only when no entry
 * for key was published after since and no prefix was dropped since: then
 * the newest entry for key now is the one a read at since returned.  It
 * reads the memtables' point index and the table files' key and
 * sequence-number ranges, never a table block, and answers true ("read
 * again") whenever a file that may hold key holds an entry newer than since
 * (a flush or ingestion since, rarely) or any prefix was dropped since.
 * since must come from this engine since it was opened.
 *
 * tides_range_changed_since(lower, upper, since) is the same question for
 * every key in [lower, upper): *changed false only when no entry with a key
 * there was published after since and no prefix was dropped since, so a
 * read of the range now would show what one at since showed.  It walks the
 * memtables' entries in the range (answering "changed" past a few thousand
 * of them) and, as above, rules table files out by their key and sequence-
 * number ranges only.
 */
uint64_t	tides_read_point(tides_db *db);
tides_status tides_changed_since(tides_db *db, const void *key, size_t klen, uint64_t since,
								 bool *changed);
tides_status tides_range_changed_since(tides_db *db, const void *lower, size_t llen,
									   const void *upper, size_t ulen, uint64_t since,
									   bool *changed);

/*
 * tides_stem_absent(stem) sets *absent to true only when the engine holds no
 * key stem || filter_stem_suffix bytes (no key starting with stem, when
 * filter_stem_suffix is 0) of any seq -- not even a deletion -- among the
 * entries of every write that returned before the call.  It searches the
 * memtables and rules files out by their key ranges and stem filters,
 * never reading a table block; false means "maybe" (read to know).  A
 * unique check of a key beyond every key of its tree, or one no filter
 * lets through, costs no iterator.
 */
tides_status tides_stem_absent(tides_db *db, const void *stem, size_t len, bool *absent);

typedef struct tides_iter tides_iter;

typedef struct tides_iter_options
{
	const tides_snapshot *snap; /* NULL: a private snapshot taken now */
	const void *lower;			/* inclusive lower bound, or NULL */
	size_t		lower_len;
	const void *upper;			/* exclusive upper bound, or NULL */
	size_t		upper_len;
	bool		fill_cache;		/* add blocks read to the block cache (true) */

	/*
	 * A pass forward over much of the bounds (a table scan): each file's
	 * data blocks after the reader's are read in large windows and decoded
	 * by a helper thread, ahead of the reader.  (false)
	 */
	bool		read_ahead;

	/*
	 * The reader wants only the keys lower || exactly filter_stem_suffix
	 * more bytes (lower is their stem; upper must bound them, e.g. lower's
	 * successor): SSTables whose stem filter proves none there are not
	 * read.  Other keys in the bounds may still be shown, even versions
	 * that a skipped file would have hidden: ignore them.  Ignored when
	 * filter_stem_suffix is 0 or there is no lower bound.  (false)
	 */
	bool		lower_is_stem;
} tides_iter_options;

tides_iter *tides_iter_new(tides_db *db, const tides_iter_options *opts);
void		tides_iter_free(tides_iter *it);
void		tides_iter_seek(tides_iter *it, const void *key, size_t klen);	/* first >= key */
void		tides_iter_seek_for_prev(tides_iter *it, const void *key, size_t klen); /* last <= key */
/*
 * tides_iter_seek for a reader that wants only the keys stem || exactly
 * filter_stem_suffix bytes from here (a unique check, one key of an index
 * scan): tables whose stem filter proves they hold none of them are not
 * read.  Those keys are shown as tides_iter_seek(stem) would show them, up
 * to the next seek; other keys may be shown, even versions that a skipped
 * table would have hidden: ignore them.  A plain seek when
 * filter_stem_suffix is 0.
 */
void		tides_iter_seek_stem(tides_iter *it, const void *stem, size_t len);
void		tides_iter_first(tides_iter *it);
void		tides_iter_last(tides_iter *it);
void		tides_iter_next(tides_iter *it);
void		tides_iter_prev(tides_iter *it);
bool		tides_iter_valid(const tides_iter *it);
/*
 * next, prev, key and value only while tides_iter_valid (asserted in the
 * engine's sanitizer build); key/value stay valid until the next move and
 * point into engine memory.
 */
const void *tides_iter_key(const tides_iter *it, size_t *klen);
const void *tides_iter_value(const tides_iter *it, size_t *vlen);
/* TIDES_OK, or the error that ended iteration early (message: tides_errmsg) */
tides_status tides_iter_status(const tides_iter *it);
/* the read point of the current entry's view (see tides_read_point) */
uint64_t	tides_iter_read_point(const tides_iter *it);

/*
 * Let go of the memtables and files the iterator pins, pinning the current
 * ones instead, without moving it: the entry it stands on stays its key and
 * value (a copy; pointers the caller took earlier are no longer valid), and
 * the next step goes to the entry after (before) that key in the new view.
 * Without a snapshot the read point moves up to the latest write.  For a
 * writer that must wait for a free memtable while its own walks pin the
 * ones the wait is for.  On failure (NO_MEMORY, UNAVAILABLE) nothing
 * changed.
 */
tides_status tides_iter_repin(tides_iter *it);

/* ------------------------------------------------------ background work */

/*
 * Each work function does at most one unit of work and returns TIDES_OK with
 * *did set when it did something (call again), or *did = false when there
 * was nothing to do.  Errors are returned; the work can be retried later
 * (back-off is the caller's choice) and nothing acknowledged is lost.
 */
/*
 * Flush: the oldest sealed memtable, with the sealed ones after it up to
 * memtables_per_flush, into one level-0 file.  Nothing (*did false) while
 * fewer are sealed, unless a seal was asked for (tides_seal_memtable,
 * tides_flush_barrier) below them, no memtable is free, or a log sync failed.
 */
tides_status tides_flush_work(tides_db *db, bool *did);
tides_status tides_compact_work(tides_db *db, bool *did);	/* one compaction */
tides_status tides_sync_work(tides_db *db, bool *did);	/* interval fsync */
tides_status tides_maint_work(tides_db *db, bool *did);	/* delete obsolete files, prepare
															 * log segments, reclaim dropped
															 * prefixes; wakes compaction
															 * while files await a rewrite */

/*
 * A full (manual) compaction, as RocksDB's CompactRange over the whole key
 * space: every level is compacted down to the last one, level by level, so
 * that deletions meet the versions they shadow, and last-level files that
 * still hold deletions or keys of dropped prefixes are rewritten.  When it
 * is done, everything obsolete that was in the store's files when it began
 * (shadowed versions, deletions and what they deleted, keys of dropped
 * prefixes) is gone -- except what a snapshot still reads.  Memtables are
 * not included: seal and flush them first to include them.
 *
 * Begin, then call step until *done.  Each step runs at most one
 * compaction (*did: one was installed).  *done = false with *did = false
 * means that what comes next is being compacted by someone else: wait a
 * little (interruptibly) and call again.  Runs beside background
 * compactions; a state is process-local and needs no cleanup.
 */
typedef struct tides_full_compaction
{
	uint64_t	seq;			/* covers files with entries up to this seq */
	uint64_t	first_new_file; /* last-level files numbered below it are covered */
	int			level;			/* the level being passed; TIDES_MAX_LEVELS: done */
} tides_full_compaction;

void		tides_full_compaction_begin(tides_db *db, tides_full_compaction *fc);
tides_status tides_full_compaction_step(tides_db *db, tides_full_compaction *fc, bool *done,
										bool *did);

/* bitmask of TIDES_WORK_* kinds that currently have work pending */
int			tides_work_pending(tides_db *db);

/* seal the active memtable so that tides_flush_work() writes it out */
tides_status tides_seal_memtable(tides_db *db);

/*
 * Compaction filter: called for the newest surviving version of each key
 * (that no snapshot needs older versions of) during flush and compaction.
 * Return TIDES_FILTER_KEEP, TIDES_FILTER_DROP (the key and all its older
 * versions disappear once at the bottom, a tombstone otherwise), or
 * TIDES_FILTER_CHANGE with *new_val / *new_vlen pointing to a replacement
 * (valid until the next call).  Must not fail; must not longjmp.
 * Installed per process; the processes that run flush/compaction need it.
 */
typedef enum tides_filter_decision
{
	TIDES_FILTER_KEEP = 0,
	TIDES_FILTER_DROP,
	TIDES_FILTER_CHANGE
} tides_filter_decision;

typedef tides_filter_decision (*tides_filter_fn) (void *arg,
												  const void *key, size_t klen,
												  const void *val, size_t vlen,
												  const void **new_val, size_t *new_vlen);

void		tides_set_filter(tides_db *db, tides_filter_fn fn, void *arg);

/*
 * Output partitioner: called with two consecutive user keys of a
 * compaction output; true puts them in different table files (the idea of
 * RocksDB's SstPartitioner).  Keys that an application writes alongside
 * every batch of some other range -- its metadata -- then keep files of
 * their own on the lower levels, and the compactions they touch rewrite
 * those, not the data files they would otherwise share one with.  Installed
 * per process, like the filter.  Only a hint: without it outputs are cut by
 * size alone, with the same contents.
 */
typedef bool (*tides_partition_fn) (void *arg, const void *prev, size_t prevlen,
									const void *key, size_t klen);

void		tides_set_partitioner(tides_db *db, tides_partition_fn fn, void *arg);

/*
 * Drop every key starting with prefix, cheaply: whole files inside the prefix
 * are deleted, the rest is skipped by reads and discarded by compaction, which
 * rewrites the files that hold such keys before other work (in place at the
 * bottom level), giving the space back.  Durable when the call returns.
 * TIDES_BUSY while 256 dropped prefixes await that work (run the work, retry).
 */
tides_status tides_drop_prefix(tides_db *db, const void *prefix, size_t len);

/*
 * Ask compaction to rewrite, before score-based work and in place at the
 * bottom of their range, the table files whose keys all lie in [lower,
 * upper) and all end in a suffix below suffix_below -- their last
 * filter_stem_suffix bytes (1 to 7) read as a big-endian number, a row id
 * or a TID at the end of a key.  For keys the filter (tides_set_filter)
 * now drops that lie where no other work rewrites files: the low end of an
 * ascending key space, whose bottom files nothing written later overlaps.
 * Files whose suffixes are not known (a store of format 1, keys shorter
 * than the suffix) are never chosen.  Not durable: a file marked stays so
 * until it is rewritten or the engine restarts.  Returns the files marked.
 */
uint32_t	tides_mark_retired(tides_db *db, const void *lower, size_t llen,
							   const void *upper, size_t ulen, uint64_t suffix_below);

/*
 * Bytes that keys in [lower, upper) take: in SSTables, to a block (from their
 * indexes; compressed sizes), and in memtables, their keys and values.
 */
uint64_t	tides_approximate_size(tides_db *db, const void *lower, size_t llen,
								   const void *upper, size_t ulen);

/*
 * The same with memtables estimated in O(log n) instead of walked: cheap
 * enough for a query planner, rough for ranges of a few entries.  A
 * memtable's entries count at their mean arena size (node and index header
 * included; the arena's fixed head, its point-index buckets and the unfilled
 * rest of writers' pieces not).
 */
uint64_t	tides_estimate_size(tides_db *db, const void *lower, size_t llen,
								const void *upper, size_t ulen);

/* -------------------------------------------------------------- counters */

#define TIDES_MAX_LEVELS 7

typedef struct tides_stats
{
	uint64_t	log_bytes_written;
	uint64_t	log_syncs;
	uint64_t	flush_bytes_written;
	uint64_t	flushes;
	uint64_t	compaction_bytes_read;
	uint64_t	compaction_bytes_written;
	uint64_t	compactions;
	uint64_t	trivial_moves;
	uint64_t	bytes_read;			/* from SSTables */
	uint64_t	cache_hits;
	uint64_t	cache_misses;
	uint64_t	bloom_useful;		/* probes a filter answered "absent" */
	uint64_t	stall_count;		/* writes that had to wait (TIDES_BUSY), each once */
	uint64_t	slowdown_count;		/* writes delayed */
	uint64_t	slowdown_us;
	uint64_t	keys_written;
	uint64_t	user_bytes_written;
	uint64_t	last_seq;
	uint64_t	written_lsn;
	uint64_t	durable_lsn;
	uint32_t	memtables_sealed;
	uint64_t	memtable_bytes;
	uint32_t	level_files[TIDES_MAX_LEVELS];
	uint64_t	level_bytes[TIDES_MAX_LEVELS];
	uint64_t	ingested_files;		/* tables added by tides_ingest_install */
	uint64_t	ingested_bytes;
	uint64_t	bloom_checked;		/* probes that consulted a bloom filter */
	uint64_t	stall_us;			/* from a write's first TIDES_BUSY to its success */
	uint64_t	flush_entries_written;
	uint64_t	compaction_entries_read;	/* input entries merged */
	uint64_t	compaction_entries_written;
	uint64_t	reads_unchanged;	/* tides_changed_since answers "unchanged" */
	uint64_t	reads_changed;		/* ... and "changed" (read again) */
	uint64_t	ranges_unchanged;	/* tides_range_changed_since answers "unchanged" */
	uint64_t	ranges_changed;		/* ... and "changed" */
	uint64_t	flush_placed_files; /* files a flush placed below level 0 (db/flush_place.h) */
	uint64_t	flush_placed_bytes; /* ... and their bytes (part of flush_bytes_written) */
	uint64_t	stem_probes_absent; /* tides_stem_absent answers "absent" */
	uint64_t	stem_probes_maybe;	/* ... and "maybe" */
	uint64_t	publish_waits;		/* writes that slept until an earlier write was published */
	uint64_t	publish_wait_us;	/* ... from their first sleep to their turn */
	uint64_t	log_sync_requests;	/* writes that waited for a log fsync (FULL mode); / log_syncs = commits per fsync */
	uint64_t	blocks_fetched;	/* data blocks read and decoded ahead of a read_ahead iterator, and taken */
	uint64_t	blocks_prefetched;	/* data blocks tides_prefetch asked the kernel to read */
	uint64_t	writes;			/* batches written (tides_write), each one log record */
	uint64_t	memtable_discards;	/* idle memtable slots whose pages went back to the system */
	uint64_t	filtered_dropped;	/* keys flush and compaction dropped on the filter's word */
	uint32_t	memtable_count;		/* memtable slots in the region */
	uint64_t	memtable_size;		/* bytes per memtable */
	uint64_t	memtable_active_bytes;	/* bytes in the memtable taking writes */
	uint64_t	memtable_entries;	/* entries in every memtable */
	uint32_t	memtables_discarded;	/* slots whose pages are given back now */
	uint32_t	compactions_running;
} tides_stats;

void		tides_get_stats(tides_db *db, tides_stats *st);

/*
 * Block I/O of this process (every handle in it), since it started: block
 * cache hits, and blocks read from table files (cache misses and reads
 * that bypass the cache: compaction, verification).  Process-local and
 * cheap, for a caller that attributes reads to its own operations (the
 * extension's EXPLAIN BUFFERS and pg_statio counts).
 */
typedef struct tides_io_stats
{
	uint64_t	cache_hits;
	uint64_t	blocks_read;
	uint64_t	bytes_read;
} tides_io_stats;

void		tides_get_process_io(tides_io_stats *io);

/*
 * The shape of the tree, per level, as compaction sees it now.  score is
 * the picker's: level 0 files / level0_compaction_trigger; a level above
 * the base level that holds data 1e9 (pushed down first); the others
 * bytes / target_bytes; the last level 0.  A level is compacted when its
 * score reaches 1.  pending_bytes estimates the bytes compaction must read
 * to bring the level to its target: level 0, once at the trigger, its bytes
 * plus those of the level it goes to; a level above the base, its bytes;
 * a level from the base down, (bytes - target) x (1 + next level's bytes /
 * its bytes) (RocksDB's estimate); 0 otherwise.
 */
typedef struct tides_level_info
{
	uint32_t	files;
	uint32_t	files_compacting;	/* inputs of running compactions */
	uint64_t	bytes;
	uint64_t	entries;
	uint64_t	deletions;
	uint64_t	target_bytes;	/* 0: no size target (level 0, or above the base) */
	double		score;
	uint64_t	pending_bytes;
} tides_level_info;

/* fills info[TIDES_MAX_LEVELS]; returns the base level (where level 0 goes) */
int			tides_get_level_info(tides_db *db, tides_level_info *info);

/*
 * Compactions running now (in any process).  Progress = entries_read /
 * input_entries.  Input figures are those of the files merged (files of
 * the output level that the compaction leaves alone are not counted).
 */
typedef struct tides_compaction_info
{
	int			level;			/* input level */
	int			output_level;	/* == level: a file rewritten in place */
	int32_t		pid;			/* process running it */
	uint64_t	started_us;		/* wall clock, microseconds since the Unix epoch */
	uint32_t	input_files;
	uint64_t	input_bytes;
	uint64_t	input_entries;
	uint64_t	entries_read;	/* input entries merged so far */
	uint64_t	entries_written;
	uint64_t	bytes_written;	/* output bytes so far (finished files + the open one) */
	uint32_t	files_written;
} tides_compaction_info;

/* up to max entries into out; returns how many run */
int			tides_get_compactions(tides_db *db, tides_compaction_info *out, int max);

/*
 * What the table files say about the keys in [lower, upper) (NULL: open):
 * bytes per level (to a block, from the files' indexes, compressed), and
 * the entries and deletions of the files that overlap the range, prorated
 * by the share of each file's bytes that lies in it (exact for files wholly
 * inside).  Memtables: their bytes in the range (estimated as
 * tides_estimate_size does).  written_us: the newest time a file holding
 * keys of the range was written by a flush, compacted_us by a compaction
 * (wall clock, microseconds since the Unix epoch; 0: none since the engine
 * started -- files found at recovery have no time).
 */
typedef struct tides_range_info
{
	uint64_t	level_bytes[TIDES_MAX_LEVELS];
	uint32_t	level_files[TIDES_MAX_LEVELS];	/* files overlapping the range */
	uint64_t	memtable_bytes;
	uint64_t	entries;
	uint64_t	deletions;
	uint64_t	flushed_us;
	uint64_t	compacted_us;
} tides_range_info;

void		tides_get_range_info(tides_db *db, const void *lower, size_t llen,
								 const void *upper, size_t ulen, tides_range_info *info);

/*
 * The on-disk format of a store: a manifest names the format it was
 * written in (its first record; stores from before this field are format
 * 1).  Opening a store of a newer format than TIDES_FORMAT_VERSION fails
 * with TIDES_INVALID and a message naming both, before anything is read
 * further or changed.
 */
#define TIDES_FORMAT_VERSION 2

/* ------------------------------------------------------------ integrity */

/*
 * Check every live file: checksums of every block of every SSTable, the
 * manifest, the log, and the level invariants (key ranges inside files,
 * non-overlap in L1+).  report() is called once per problem found; returns
 * the number of problems (or -1 if the check could not run).
 */
typedef void (*tides_verify_report) (void *arg, const char *file, const char *problem);

int			tides_verify(tides_db *db, tides_verify_report report, void *arg);

#ifdef __cplusplus
}
#endif

#endif							/* TIDES_ENGINE_H */
