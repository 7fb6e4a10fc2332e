/*
 * db_impl.h -- the engine's shared state and the per-process handle.
 *
 * Shared region layout (tides_region_init):
 *
 *   [tides_shared][metadata heap][block cache][memtable arenas ...]
 *
 * Lock order, the contract (never take an earlier lock while holding a
 * later one):
 *
 *   flush_mutex -> version_mutex -> write_lock (spin) -> tag_lock (spin)
 *                  version_mutex -> sv_lock (rw)
 *                  version_mutex -> log prepare/sync mutexes
 *   leaves (nothing is taken while one is held): the metadata heap's lock,
 *   obsolete_lock, failure_lock, the block cache's locks
 *
 * flush_mutex is only ever tried (trylock), so it cannot deadlock; the
 * order still holds.  No path holds write_lock while it takes sv_lock
 * (tides_sv_publish reads the memtables under write_lock, releases it,
 * then swaps the pointer), and switch_memtable / repair_log release
 * write_lock before they take version_mutex.  tides_lock_version and
 * tides_lock_write below take the two central locks and assert (with
 * TIDES_ASSERTS) that the caller holds nothing later in the order; a lock
 * held by another process is not visible to those checks (util/lock.h).
 *
 * What each protects:
 *   write_lock     last_seq, next_lsn, next_ticket, the active memtable pointer and the
 *                  reservation of its space, writers_paused, writes_closed,
 *                  log_broken_lsn
 *   version_mutex  the current version, manifest file, replay_lsn, skips,
 *                  dropped prefixes and the files' marks for compaction
 *                  (marked, dropped_seen), building/installing
 *                  superversions, marking compaction inputs and the
 *                  running-compaction output claims
 *   sv_lock        the sv pointer (readers take it shared to pin sv)
 *   flush_mutex    one flush at a time (flushes must go oldest first)
 *   tag_lock       the open-tag table
 *   obsolete_lock  the obsolete-file list (a leaf, like the heap lock and the
 *                  block cache's locks)
 *   failure_lock   flush_failure, compact_failure (a leaf)
 *
 * Reader protocol: pin the current superversion and read seq =
 * published_seq together, under sv_lock held shared (tides_sv_acquire_at).
 * Every entry with seq <= published_seq is in a memtable of that
 * superversion or in one of its files, because a memtable joins the
 * superversion before any write goes into it and leaves only together with
 * the installation of the file it was flushed to; and every version a
 * flush or compaction dropped is shadowed by one the pair can see (see
 * superversion.c).  A reader with a snapshot uses the snapshot's seq, which
 * flush and compaction know about.
 */
#ifndef TIDES_DB_DB_IMPL_H
#define TIDES_DB_DB_IMPL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cache/block_cache.h"
#include "util/dbformat.h"
#include "db/version.h"
#include "db/version_edit.h"
#include "log/log.h"
#include "mem/memtable.h"
#include "table/table_cache.h"
#include "tides_engine.h"
#include "util/assert.h"
#include "util/counters.h"
#include "util/lock.h"
#include "util/random.h"
#include "util/shm_heap.h"
#include "util/status.h"
#include "util/thread.h"

#define TIDES_REGION_MAGIC 0x5449444553524731ull	/* "TIDESRG1" */
#define TIDES_MAX_MEMTABLES 16
#define TIDES_MAX_SNAPSHOTS 4096
#define TIDES_MAX_SKIPS 64
#define TIDES_MAX_DROPPED 256
#define TIDES_MAX_OBSOLETE 8192
#define TIDES_PUBLISH_SLOTS 64
#define TIDES_PUBLISH_RING 1024		/* writes between reservation and publication */
#define TIDES_MAX_COMPACTIONS 32	/* running at once, over all processes */

enum tides_engine_state
{
	TIDES_STATE_INIT = 0,		/* region laid out, not recovered */
	TIDES_STATE_OPEN,			/* recovered, serving */
	TIDES_STATE_FAILED			/* recovery failed: see fatal */
};

typedef struct tides_superversion
{
	_Atomic int32_t refs;
	uint32_t	nmem;
	tides_memtable *mems[TIDES_MAX_MEMTABLES];	/* newest first */
	tides_version *version;
	uint32_t	ndropped;
	uint32_t	dropped_cap;	/* room in `dropped` (tides_sv_alloc) */
	tides_dropped_prefix *dropped;	/* heap copy, may be NULL */
} tides_superversion;

/*
 * A running compaction's claim on its output: the user-key range
 * [smallest key of lo, largest key of hi] of `output_level`, which holds
 * every key its outputs can have.  The two descriptors stay alive while the
 * compaction holds its version.  No other compaction may write an
 * overlapping range of that level until the claim is released.
 */
typedef struct tides_running_compaction
{
	bool		used;
	int			level;
	int			output_level;
	const tides_file_meta *lo;
	const tides_file_meta *hi;

	/*
	 * Progress, for tides_get_compactions: set when the slot is claimed
	 * (version_mutex), the input figures again once the files left alone
	 * are known, the rest by the running process as it goes.  Read without
	 * a lock: each field is right, the set of them only roughly together.
	 */
	int32_t		pid;
	uint64_t	started_us;
	_Atomic uint32_t input_files;
	_Atomic uint64_t input_bytes;
	_Atomic uint64_t input_entries;
	_Atomic uint64_t entries_read;
	_Atomic uint64_t entries_written;
	_Atomic uint64_t bytes_written;
	_Atomic uint32_t files_written;
} tides_running_compaction;

typedef struct tides_tag_entry
{
	uint64_t	tag;			/* 0: empty slot (deletion shifts entries back, db/tags.c) */
	uint64_t	first_lsn;
	uint64_t	seal_lsn;		/* sealing record's position + 1; 0: not sealed */
} tides_tag_entry;

typedef struct tides_shared
{
	uint64_t	magic;
	uint64_t	region_size;
	tides_options ropts;		/* the [region] options in force */
	_Atomic int state;
	tides_error fatal;

	tides_counters counters;
	tides_shm_heap heap;
	tides_block_cache *cache;

	/*
	 * ---- write path.  Every write takes the write lock and then the
	 * publication's lines; readers read published_seq.  Each group sits on
	 * cache lines of its own, so that the lock taken by one writer does not
	 * take from another CPU the line a reader or a publisher is using
	 * (TIDES_LINE; bench/results/2026-12-07-0830-where-cpu-goes.md).
	 */
	/* under write_lock */
	_Alignas(TIDES_LINE) tides_spinlock write_lock;
	uint64_t	last_seq;		/* last sequence number handed out */
	uint64_t	next_lsn;
	uint64_t	next_ticket;	/* the next reservation's publication ticket */
	tides_memtable *active;
	uint64_t	next_mem_id;
	bool		writers_paused; /* a memtable switch or log repair is under way */
	bool		writes_closed;	/* tides_close_writes: every later write fails */
	/* read by every write, rarely written */
	_Alignas(TIDES_LINE) _Atomic uint64_t log_broken_lsn;	/* 0, or the position of a failed log write */
	_Atomic uint64_t log_repairs;	/* repairs done (repair_log): see no-wait writes */
	_Atomic uint64_t sync_poisoned_lsn; /* an fsync failed below this: see write.c */
	_Atomic uint32_t l0_files;	/* level-0 file count of the current version */
	_Atomic uint32_t l0_shift;	/* its back-pressure shift (tides_compaction_l0_shift) */
	/*
	 * Publication (write.c).  Each reservation takes the next ticket
	 * (next_ticket, write_lock); a write that has inserted its entries marks
	 * its ring slot done, and whoever holds `publishing` moves
	 * published_ticket, published_seq and published_lsn past every done
	 * write in ticket order.  A writer whose ticket is not yet published
	 * sleeps on the wait slot of its ticket, which the publisher wakes.
	 */
	_Alignas(TIDES_LINE) _Atomic uint64_t published_seq;
	_Atomic uint64_t published_lsn;
	_Atomic uint64_t published_ticket;	/* every ticket below it is published */
	_Alignas(TIDES_LINE) atomic_bool publishing;
	_Alignas(TIDES_LINE) _Atomic uint64_t inflight;	/* writes reserved and not yet acknowledged */
	struct
	{
		/* a line each: writers of adjacent tickets mark them at once */
		_Alignas(TIDES_LINE) _Atomic uint64_t done;	/* ticket + 1 once the write's entries are in */
		uint64_t	end_lsn;
		uint64_t	last_seq;
	}			publish_ring[TIDES_PUBLISH_RING];
	struct
	{
		_Alignas(TIDES_LINE) atomic_uint epoch; /* bumped when a ticket of this slot is published: a futex word */
		atomic_uint waiters;
	}			publish_slots[TIDES_PUBLISH_SLOTS];

	uint32_t	nmemtables;
	tides_memtable memtables[TIDES_MAX_MEMTABLES];
	/* memtables below this id were sealed on request: flush them without waiting for more */
	_Atomic uint64_t flush_asked_below;
	/* the region's memory cannot be given back (tides_mem_discard failed once) */
	_Atomic bool discard_unsupported;

	tides_log_shared log;
	_Atomic uint64_t last_interval_sync_us;

	/* ---- persistent state (version_mutex) */
	tides_mutex version_mutex;
	tides_version *current;
	uint64_t	version_number;
	_Atomic uint64_t next_file_number;
	uint64_t	manifest_number;
	uint64_t	manifest_size;
	bool		manifest_dir_unsynced;	/* a rewrite's directory sync failed: retry first */
	uint64_t	replay_lsn;
	uint32_t	nskips;
	tides_log_skip skips[TIDES_MAX_SKIPS];
	uint32_t	ndropped;
	uint64_t	next_dropped_id;
	tides_dropped_prefix dropped[TIDES_MAX_DROPPED];
	/*
	 * 1 + the seq of the newest prefix dropped since open (0: none).  A drop
	 * removes keys without writing an entry, and leaves no trace once
	 * reclaimed: tides_changed_since answers "changed" for any read point
	 * not above it.  Raised before the drop is published.
	 */
	_Atomic uint64_t drop_end;
	uint32_t	npending;		/* unsealed tags as of the last flush */
	uint64_t   *pending;		/* heap array */
	uint32_t	compact_cursor[TIDES_MAX_LEVELS];	/* round-robin file index */
	tides_running_compaction running[TIDES_MAX_COMPACTIONS];	/* output claims */
	/*
	 * The last failure of flush and of compaction work (code TIDES_OK once
	 * one succeeds), kept so that a writer stalled on that work fails with
	 * its cause -- a full disk, an I/O error, naming the file -- instead of
	 * waiting for work that keeps failing (write.c).  Under failure_lock.
	 */
	tides_spinlock failure_lock;
	tides_error flush_failure;
	tides_error compact_failure;

	/* ---- superversion (sv_lock) */
	tides_rwlock sv_lock;
	tides_superversion *sv;

	/* ---- flush */
	tides_mutex flush_mutex;

	/* ---- obsolete files (obsolete_lock) */
	tides_spinlock obsolete_lock;
	uint32_t	nobsolete;
	uint64_t	obsolete[TIDES_MAX_OBSOLETE];
	_Atomic uint64_t deletion_epoch;
	_Atomic int32_t deletion_holds; /* tides_hold_file_deletion: keep obsolete files */

	/* ---- snapshots: 0 = free slot, else seq + 1 */
	_Atomic uint64_t snapshots[TIDES_MAX_SNAPSHOTS];

	/* ---- open tags (tag_lock) */
	tides_spinlock tag_lock;
	uint32_t	tag_cap;		/* power of two */
	uint32_t	ntags;			/* live + deleted slots in use */
	tides_tag_entry *tags;
} tides_shared;

/*
 * Where this handle's last inserts went (write.c, splice_for): one skiplist
 * splice per run of keys that share their first range_prefix_len bytes (at
 * most TIDES_SPLICE_PREFIX of them), in one memtable, kept from batch to
 * batch.  A backend inserting rows in key order writes one small batch per
 * row, interleaved with batches of other trees (its index entries); with
 * a splice per tree each insert starts next to the last one of its tree
 * instead of at the top of the list.  Only hints: a slot is trusted only
 * for the memtable whose id it recorded (ids are never reused, and a
 * memtable's nodes stay where they are until the slot is released), and a
 * stale pair is still a valid place to search forward from (skiplist.h).
 */
#define TIDES_SPLICE_SLOTS 8
#define TIDES_SPLICE_PREFIX 16

typedef struct tides_splice_slot
{
	uint64_t	mem;			/* 1 + id of the memtable the pairs belong to; 0: empty */
	uint64_t	used;			/* handle's insert count at the last use */
	uint32_t	plen;
	uint8_t		prefix[TIDES_SPLICE_PREFIX];
	tides_skip_splice sp;
} tides_splice_slot;

struct tides_db
{
	tides_shared *sh;
	char	   *dir;
	tides_options opts;
	tides_vfs  *vfs;
	tides_table_env tenv;
	tides_table_cache *tcache;
	tides_log	log;
	tides_error err;
	tides_rand	rnd;
	int64_t		pace_debt_us;	/* what this process's writes still owe the pacing (write.c) */
	tides_filter_fn filter;
	void	   *filter_arg;
	tides_partition_fn partition;
	void	   *partition_arg;
	tides_log_sync_fn log_sync; /* EXTERNAL mode: the application's log flush */
	void	   *log_sync_arg;
	uint64_t	seen_deletion_epoch;
	uint64_t   *unsealed_tags;	/* owned copy handed out by recovery */
	int			manifest_fd;	/* this process's descriptor of the manifest */
	uint64_t	manifest_fd_number;
	/* a write of this handle answered TIDES_BUSY: since, and last (write.c) */
	uint64_t	stall_began_us;
	uint64_t	stall_last_us;
	tides_splice_slot splices[TIDES_SPLICE_SLOTS];
	/* this handle's piece of a memtable's arena, [piece_off, piece_end) (write.c) */
	const tides_memtable *piece_mem;
	uint64_t	piece_mem_id;
	uint64_t	piece_off;
	uint64_t	piece_end;
	uint64_t	splice_uses;
	/*
	 * No-wait writes (write.c): the ticket + 1 of this handle's last one,
	 * 0 once it is known published; and log_repairs when the first one
	 * since this handle's last waiting write was reserved.
	 */
	uint64_t	own_point;
	bool		no_wait_pending;
	uint64_t	no_wait_repairs;
};

/* ---- locks, in the order stated at the top of this file */

static inline void
tides_lock_version(tides_shared *sh)
{
	TIDES_ASSERT(!tides_spin_held(&sh->write_lock));
	TIDES_ASSERT(!tides_spin_held(&sh->tag_lock));
	TIDES_ASSERT(!tides_spin_held(&sh->obsolete_lock) && !tides_spin_held(&sh->heap.lock));
	TIDES_ASSERT(!tides_mutex_held(&sh->log.sync_mutex));
	TIDES_ASSERT(!tides_mutex_held(&sh->log.prepare_mutex));
	tides_mutex_lock(&sh->version_mutex);
}

static inline void
tides_lock_write(tides_shared *sh)
{
	TIDES_ASSERT(!tides_spin_held(&sh->tag_lock));
	TIDES_ASSERT(!tides_spin_held(&sh->obsolete_lock) && !tides_spin_held(&sh->heap.lock));
	tides_spin_lock(&sh->write_lock);
}

/* the tag table's lock: below write_lock, above nothing but leaves */
static inline void
tides_lock_tags(tides_shared *sh)
{
	TIDES_ASSERT(!tides_spin_held(&sh->obsolete_lock) && !tides_spin_held(&sh->heap.lock));
	tides_spin_lock(&sh->tag_lock);
}

/*
 * One flush at a time: try flush_mutex, first in the order (so the caller
 * holds none of the engine's locks).
 */
static inline bool
tides_trylock_flush(tides_shared *sh)
{
	TIDES_ASSERT(!tides_mutex_held(&sh->version_mutex));
	TIDES_ASSERT(!tides_spin_held(&sh->write_lock));
	return tides_mutex_trylock(&sh->flush_mutex);
}

/* ---- helpers shared by the files of db/ */

/*
 * recovery (db/recovery.c): the phases of src/engine/README.md section 7,
 * run by tides_open in the first process, state INIT.  On success the
 * store is OPEN and info (may be NULL) says what was replayed; on failure
 * err says why and the caller marks the region FAILED.
 */
tides_status tides_recover(tides_db *db, tides_recovery_info *info, tides_error *err);

/* record err in the handle and return its code */
tides_status tides_db_fail(tides_db *db, const tides_error *err);
/*
 * Background work's outcome, for writers stalled on it: err NULL clears
 * *slot (the work succeeded), else *slot becomes err, which must carry a
 * failure's code.  A TIDES_BUSY outcome (nothing could run) changes nothing.
 */
void		tides_note_work(tides_shared *sh, tides_error *slot, const tides_error *err);

/* the obsolete-file callback for version/file unref */
void		tides_db_note_obsolete(void *arg, uint64_t file_number);

/* superversions */
tides_superversion *tides_sv_acquire(tides_db *db);
/* pin the superversion and read published_seq atomically with it (readers) */
tides_superversion *tides_sv_acquire_at(tides_db *db, uint64_t *seq);
void		tides_sv_release(tides_db *db, tides_superversion *sv);
/* build and install a superversion from the current state (version_mutex held) */
tides_status tides_sv_install(tides_db *db);

/*
 * The same in two steps, for callers that must not fail once they have
 * changed something durable: tides_sv_alloc takes all the memory (room for
 * ndropped dropped prefixes), tides_sv_publish fills it from the current
 * state and installs it and cannot fail.  version_mutex held across both
 * (so the dropped list cannot outgrow the room).
 */
tides_superversion *tides_sv_alloc(tides_db *db, uint32_t ndropped);
void		tides_sv_free_unused(tides_db *db, tides_superversion *sv);
void		tides_sv_publish(tides_db *db, tides_superversion *sv);

/* is this (user key, seq) hidden by a dropped prefix? */
bool		tides_dropped_hides(const tides_dropped_prefix *d, uint32_t n,
								const uint8_t *ukey, size_t klen, uint64_t seq);

/* oldest sequence number any snapshot may read (published_seq if none) */
uint64_t	tides_oldest_snapshot(tides_db *db);
/* sorted list of distinct snapshot seqs (malloc'd) */
uint64_t   *tides_snapshot_list(tides_db *db, uint32_t *n);

/*
 * manifest (db/manifest.c), version_mutex held.
 *
 * tides_manifest_apply appends e durably and makes it the in-memory state:
 * the new current version, the persistent lists, and a new superversion
 * (in which the nflushed memtables `flushed` are marked FLUSHED and so
 * left out).  It
 * is all or nothing: everything it needs from the metadata heap is
 * allocated before the append, so once the edit is durable nothing can
 * fail.  On failure *written (may be NULL) tells whether the record was
 * written and only its fsync failed: it may then be durable, and the
 * caller must keep every file the edit names (never unlink a file a
 * durable edit may name; recovery deletes it if no manifest does).
 */
tides_status tides_manifest_apply(tides_db *db, tides_edit *e, tides_memtable *const *flushed,
								  uint32_t nflushed, bool *written, tides_error *err);
tides_status tides_manifest_load(tides_db *db, tides_edit *state, bool *exists, tides_error *err);
tides_status tides_manifest_rewrite(tides_db *db, tides_error *err);
/* the current state as a manifest file of its own named name (a checkpoint) */
tides_status tides_manifest_save_as(tides_db *db, const char *name, tides_error *err);
tides_status tides_manifest_verify(tides_db *db, tides_error *err);

/* the state edit: every file and list of the current state */
tides_status tides_manifest_state_edit(tides_db *db, tides_edit *e);

/*
 * new version = current + edit (version_mutex held); installs it as current.
 * All or nothing; used by recovery for the manifest's state (no append).
 */
tides_status tides_version_apply_edit(tides_db *db, const tides_edit *e, tides_error *err);

/* open tags (db/tags.c) */
tides_status tides_tags_note(tides_db *db, uint64_t tag, uint64_t lsn, bool seal,
							 uint64_t memtable_start);
uint64_t   *tides_tags_pending_at(tides_db *db, uint64_t end_lsn, uint32_t *n);
void		tides_tags_forget_settled(tides_db *db, uint64_t end_lsn);

/* wake the embedding program's workers */
void		tides_db_wakeup(tides_db *db, int kind);

/* the memtable whose sealed state is oldest, or NULL */
tides_memtable *tides_oldest_sealed(tides_shared *sh);

/*
 * a FREE memtable no superversion holds any more (ready to activate): one
 * whose pages are kept if any, never one being discarded; or NULL
 */
tides_memtable *tides_free_memtable(tides_shared *sh);

/* is a flush due (see tides_flush_work)?  (db/flush.c) */
bool		tides_flush_due(tides_db *db);

/* log space and segments (db/write.c) */
tides_status tides_log_ensure_ready(tides_db *db, uint64_t segment, tides_error *err);

/* is there compaction work: a marked file, or a level over its target?  (db/compaction.c) */
bool		tides_compaction_needed(tides_db *db);

/*
 * Dropped prefixes (db/maint.c), version_mutex held: check files not yet
 * checked against the listed prefixes and mark those that may hold hidden
 * keys; delete marked files whose keys are all hidden; retire prefixes no
 * live file or memtable can hold a hidden key of.  Deletions and
 * retirements go into one manifest edit.  Marks are set even if that edit
 * fails.
 */
typedef struct tides_dropped_state
{
	bool		did;			/* a manifest edit was applied */
	uint32_t	marked;			/* marked files no compaction is working on */
	bool		in_active_memtable;	/* a prefix stays because the active memtable may hold its keys */
} tides_dropped_state;

tides_status tides_dropped_reconcile(tides_db *db, tides_dropped_state *out, tides_error *err);

/*
 * For a flush or a compaction about to run (db/maint.c): the prefixes
 * listed now, copied into *copy (malloc'd, NULL if none; the caller frees
 * it) with their number in *n, and in *seen the id below which the job's
 * output will hold no hidden key (every listed prefix is applied; those
 * below it not listed are retired).  Takes and releases version_mutex.
 * false: no memory for the copy (the job must not run without it).
 */
bool		tides_dropped_take(tides_shared *sh, tides_dropped_prefix **copy, uint32_t *n,
							   uint64_t *seen);

/* a monotonic clock in microseconds (intervals) */
uint64_t	tides_now_us(void);

/* the wall clock in microseconds since the Unix epoch (times reported to callers) */
uint64_t	tides_wall_us(void);

#endif
