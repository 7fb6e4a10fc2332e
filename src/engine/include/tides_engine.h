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
};

tides_vfs  *tides_vfs_posix(void);

/* --------------------------------------------------------------- options */

typedef enum tides_sync_mode
{
	TIDES_SYNC_NONE = 0,		/* write() to the kernel, never fsync on commit */
	TIDES_SYNC_INTERVAL,		/* tides_sync_work() fsyncs every sync_interval_ms */
	TIDES_SYNC_FULL				/* tides_sync() waits for fsync (group commit) */
} tides_sync_mode;

typedef enum tides_compression
{
	TIDES_COMPRESS_NONE = 0,
	TIDES_COMPRESS_LZ4 = 1,
	TIDES_COMPRESS_ZSTD = 2
} tides_compression;

/*
 * Options fixed at tides_region_init() time (they size the region) are
 * marked [region]; the rest may differ per process and are read from the
 * options passed to tides_open().
 */
typedef struct tides_options
{
	uint64_t	memtable_size;		/* [region] bytes per memtable (64 MiB) */
	uint32_t	memtable_count;		/* [region] active + sealed memtables (4) */
	uint64_t	block_cache_size;	/* [region] shared block cache bytes (128 MiB) */
	uint64_t	meta_size;			/* [region] shared metadata heap (16 MiB) */
	uint32_t	max_open_tags;		/* [region] concurrently open batch tags (4096) */

	uint32_t	block_size;			/* SSTable data block target, bytes (4096) */
	uint32_t	restart_interval;	/* keys between restart points (16) */
	uint32_t	bloom_bits_per_key; /* 0 disables filters (10) */
	uint32_t	prefix_len;			/* also filter on the first prefix_len key bytes (0: off) */
	tides_compression compression;	/* per-block compression (LZ4) */
	int			compression_level;	/* zstd level (3) */

	uint64_t	target_file_size;	/* SSTable output size (64 MiB) */
	uint32_t	level0_compaction_trigger;	/* L0 files that start L0->L1 (4) */
	uint32_t	level0_slowdown_trigger;	/* L0 files that delay writers (12) */
	uint32_t	level0_stop_trigger;		/* L0 files that stall writers (20) */
	uint64_t	level_base_size;	/* smallest level target (256 MiB) */
	uint32_t	level_size_ratio;	/* fanout between levels (10) */
	uint32_t	slowdown_delay_us;	/* delay per write while slowed (1000) */

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

/* clean shutdown: flush nothing, sync the log, persist the manifest */
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
 * Recovery keeps reporting an unsealed tag (after every further crash) until
 * the caller settles it: call this once the caller's own decision about the
 * tags is durable.
 */
tides_status tides_settle_tags(tides_db *db, const uint64_t *tags, uint32_t n);

/*
 * Apply a batch atomically: after a crash it is wholly present or wholly
 * absent, and readers see all of it or none of it.  *lsn receives the log
 * position just past the batch (for tides_sync).  Returns TIDES_BUSY when the
 * memtables or level 0 are full; the batch was not applied.
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

/* highest lsn known durable */
uint64_t	tides_durable_lsn(tides_db *db);

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

typedef struct tides_iter tides_iter;

typedef struct tides_iter_options
{
	const tides_snapshot *snap; /* NULL: a private snapshot taken now */
	const void *lower;			/* inclusive lower bound, or NULL */
	size_t		lower_len;
	const void *upper;			/* exclusive upper bound, or NULL */
	size_t		upper_len;
	bool		fill_cache;		/* add blocks read to the block cache (true) */
} tides_iter_options;

tides_iter *tides_iter_new(tides_db *db, const tides_iter_options *opts);
void		tides_iter_free(tides_iter *it);
void		tides_iter_seek(tides_iter *it, const void *key, size_t klen);	/* first >= key */
void		tides_iter_seek_for_prev(tides_iter *it, const void *key, size_t klen); /* last <= key */
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

/* ------------------------------------------------------ background work */

/*
 * Each work function does at most one unit of work and returns TIDES_OK with
 * *did set when it did something (call again), or *did = false when there
 * was nothing to do.  Errors are returned; the work can be retried later
 * (back-off is the caller's choice) and nothing acknowledged is lost.
 */
tides_status tides_flush_work(tides_db *db, bool *did);	/* one sealed memtable */
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
 * Bytes that keys in [lower, upper) take: in SSTables, to a block (from their
 * indexes; compressed sizes), and in memtables, their keys and values.
 */
uint64_t	tides_approximate_size(tides_db *db, const void *lower, size_t llen,
								   const void *upper, size_t ulen);

/*
 * The same with memtables estimated in O(log n) instead of walked: cheap
 * enough for a query planner, rough for ranges of a few entries.  A
 * memtable's entries count at their mean arena size (node and index header
 * included, the arena's fixed head and point-index buckets not).
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
	uint64_t	stall_count;		/* writes answered TIDES_BUSY */
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
} tides_stats;

void		tides_get_stats(tides_db *db, tides_stats *st);

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
