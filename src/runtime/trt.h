/*
 * trt.h -- the runtime: settings, shared state, the per-backend
 * engine handle, and the services the table and index access methods use
 * (trees, row ids, transaction tags, incarnations).
 *
 * Everything here runs inside the server; the engine below (src/engine)
 * knows nothing of PostgreSQL, so this layer turns engine status codes into
 * ereport()s and makes every engine wait interruptible.
 */
#ifndef TRT_H
#define TRT_H

#include "postgres.h"

#include "access/amapi.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/objectaccess.h"
#include "executor/execdesc.h"
#include "nodes/plannodes.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/relfilenode.h"
#include "storage/spin.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"

#include "tides_engine.h"

/* ------------------------------------------------------ settings (settings.c) */

extern int	trt_memtable_size_mb;
extern int	trt_memtable_count;
extern int	trt_block_cache_mb;
extern int	trt_meta_size_mb;
extern int	trt_guc_sync_mode;
extern int	trt_sync_interval_ms;
extern int	trt_guc_compression;
extern int	trt_compression_level;
extern int	trt_compaction_workers;
extern int	trt_l0_slowdown;
extern int	trt_l0_stop;
extern int	trt_max_relations;
extern int	trt_row_lock_stripes;

/* ------------------------------------------------------------ keys */

/*
 * Every key starts with an 8-byte big-endian tree id.  Tree 0 holds the
 * runtime's own metadata (its keys: runtime/meta.h, private to the
 * runtime); relation storage gets trees from TRT_TREE_FIRST (ids below it
 * are reserved).
 */
#define TRT_TREE_META			UINT64CONST(0)
#define TRT_TREE_FIRST		UINT64CONST(16)

#define TRT_ROW_KEY_LEN		14	/* tree (8) + vid (6) */
#define TRT_VID_MAX			((UINT64CONST(1) << 40) - 1)	/* keeps block < 2^32 */
#define TRT_ROWS_PER_BLOCK	MaxHeapTuplesPerPage	/* 291 */

static inline void
trt_key_put_tree(uint8 *p, uint64 tree)
{
	for (int i = 7; i >= 0; i--)
	{
		p[i] = (uint8) tree;
		tree >>= 8;
	}
}

static inline uint64
trt_key_get_tree(const uint8 *p)
{
	uint64		v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

/* 6-byte big-endian vid after the tree */
static inline void
trt_row_key(uint8 *key, uint64 tree, uint64 vid)
{
	trt_key_put_tree(key, tree);
	for (int i = 13; i >= 8; i--)
	{
		key[i] = (uint8) vid;
		vid >>= 8;
	}
}

static inline uint64
trt_row_key_vid(const uint8 *key)
{
	uint64		v = 0;

	for (int i = 8; i < 14; i++)
		v = (v << 8) | key[i];
	return v;
}

/* TID <-> vid: 291 versions per virtual block, offsets 1..291 */
static inline void
trt_vid_to_tid(uint64 vid, ItemPointer tid)
{
	ItemPointerSet(tid, (BlockNumber) (vid / TRT_ROWS_PER_BLOCK),
				   (OffsetNumber) (vid % TRT_ROWS_PER_BLOCK + 1));
}

static inline bool
trt_tid_to_vid(ItemPointer tid, uint64 *vid)
{
	OffsetNumber off = ItemPointerGetOffsetNumberNoCheck(tid);

	if (off < 1 || off > TRT_ROWS_PER_BLOCK)
		return false;
	*vid = (uint64) ItemPointerGetBlockNumberNoCheck(tid) * TRT_ROWS_PER_BLOCK + (off - 1);
	return true;
}

/* ------------------------------------------------------ shared state */

typedef struct TrtIncStart
{
	uint32		inc;
	uint32		next_multi;
	uint64		next_fxid;		/* FullTransactionId value */
} TrtIncStart;

#define TRT_MAX_INCARNATIONS 8192
#define TRT_MAX_ABORTED 65536
#define TRT_MAX_COMPACTION_WORKERS 8

typedef struct TrtShared
{
	void	   *region;			/* the engine's region (main shared segment) */
	bool		engine_ok;		/* recovery succeeded */
	char		engine_error[512];
	double		recovery_seconds;
	uint64		recovery_batches;

	/* D4: what PostgreSQL's own recovery ended with (see incarnation.c) */
	uint64		start_next_fxid;
	uint32		start_next_multi;
	bool		after_crash;	/* pg_control: the last shutdown was not clean */
	bool		clean_start;	/* the engine log ended cleanly */
	/* full xid below which every transaction's tides records are durable (xact.c) */
	pg_atomic_uint64 durable_horizon;

	/* finalisation of this incarnation, done once by the first user */
	LWLock	   *init_lock;
	bool		finalized;
	uint32		incarnation;
	uint32		n_inc_start;
	TrtIncStart inc_start[TRT_MAX_INCARNATIONS];
	uint32		n_unsealed;		/* tags recovery found unsealed */
	uint64	   *unsealed;		/* in shared memory, n_unsealed entries */
	uint32		n_aborted;		/* sorted (incarnation << 32 | top xid) */
	uint64		aborted[TRT_MAX_ABORTED];

	/* tree ids and the lock that reserves more of them */
	slock_t		tree_lock;
	uint64		next_tree;
	uint64		reserved_tree;
	LWLock	   *reserve_lock;

	/* background workers' latches, set by the engine's wakeup callback */
	Latch	   *flush_latch;
	Latch	   *maint_latch;
	Latch	   *sync_latch;
	Latch	   *compact_latch[TRT_MAX_COMPACTION_WORKERS];
	pg_atomic_uint32 compact_rr;	/* round robin for compaction wakeups */

	/* row lock stripes: a named LWLock tranche */
	LWLockPadded *row_locks;
	int			n_row_locks;
} TrtShared;

extern TrtShared *trt_shared;

/* ------------------------------------------------------ engine access */

/* this backend's engine handle; attaches (and finalises) on first use */
extern tides_db *trt_engine(void);

/* report an engine failure as ERROR (never returns) */
extern void trt_engine_error(tides_status s, const char *what) pg_attribute_noreturn();

/*
 * Write a batch, waiting interruptibly while the engine is busy.  This
 * backend's deferred entries (xact.c) go first, in a batch of their own.
 */
extern uint64 trt_write_batch(tides_batch *b);

/* the same without the deferred entries (for xact.c, which writes them) */
extern uint64 trt_write_batch_now(tides_batch *b);

/* point read into a palloc'd buffer; false if absent (deferred entries go first) */
extern bool trt_read(const uint8 *key, size_t klen, char **val, size_t *vlen);

/* the vfs to open the engine with: NULL (POSIX), or a test module's (shmem.c) */
extern tides_vfs *trt_engine_vfs(void);

/*
 * A test file system for the engine, from a separately built test module --
 * never linked into tidesam.so.  test/crash/keepvfs (tidesam_keepvfs.so,
 * shared_preload_libraries = 'tidesam,tidesam_keepvfs') is the one user.
 *
 * The module calls trt_set_vfs_provider in its _PG_init (it must be loaded
 * after tidesam, in shared_preload_libraries), requests its own shared
 * memory in its own shmem_request hook, and does nothing in
 * shmem_startup_hook: tidesam calls it instead, at the right moment --
 *   shmem_startup  in tidesam's shmem startup (postmaster; again after each
 *                  crash-restart), under AddinShmemInitLock, after tidesam's
 *                  own shared state and before engine recovery, which
 *                  already opens the engine over the provider's vfs;
 *   vfs            every time a process opens the engine (recovery, the
 *                  reset after a crash, each process's attach): the vfs.
 * A hook of the module's own would run before or after tidesam's by the
 * order of the libraries, which is why tidesam calls it.
 */
typedef struct TrtVfsProvider
{
	const char *name;			/* for the server log */
	void		(*shmem_startup) (void);
	tides_vfs  *(*vfs) (void);
} TrtVfsProvider;

extern PGDLLEXPORT void trt_set_vfs_provider(const TrtVfsProvider *provider);

/*
 * A reusable backend-local batch, cleared on each get.  Whoever fills it
 * must write it before calling anything that may get it too.
 */
extern tides_batch *trt_local_batch(void);

/* engine options from the GUCs */
extern void trt_fill_options(tides_options *o);

/* the sync mode setting changed (configuration reload) */
extern void trt_sync_mode_changed(void);

/* wake background workers (engine callback) */
extern void trt_wakeup_workers(void *arg, int kind);

/* ------------------------------------------------------ access methods (access_methods.c) */

/*
 * The two access methods, registered by src/module/module.c in _PG_init, so
 * that any layer can ask whether a relation is stored by tides without
 * calling up into src/am or src/index.
 */
extern void trt_register_access_methods(const TableAmRoutine *table_am,
										ambuild_function index_build);

/* is this relation stored by tides (a tides table, matview, ...)? */
extern bool trt_is_tides_relation(Relation rel);

/* is this index relation a tides_btree index? */
extern bool trt_is_tides_index(Relation rel);


/* ------------------------------------------------------ trees (trees.c, vids.c, copies.c, drops.c) */

/* tree of a relation's current storage (cached in rd_amcache) */
extern uint64 trt_rel_tree(Relation rel);

/* the tree a relfilenode maps to, without creating one; false if none */
extern bool trt_lookup_tree(const RelFileNode *rnode, BackendId backend, uint64 *tree);

/* create a tree for new storage of rel and map rnode to it */
extern uint64 trt_create_tree(Relation rel, const RelFileNode *rnode, char persistence);

/* replace the tree behind the relation's current storage (non-transactional truncate) */
extern uint64 trt_replace_tree(Relation rel);

/* remember to drop a tree when the current (sub)transaction commits or aborts */
extern void trt_drop_tree_at_end(uint64 tree, bool at_commit);

/* drop the storage of a relation at commit (DROP TABLE) */
extern void trt_schedule_relation_drop(Relation rel);

/* hand out n consecutive vids of a tree */
extern uint64 trt_alloc_vids(uint64 tree, uint32 n);

/* start to_tree's numbering at from_tree's high-water mark */
extern void trt_copy_vid_counter(uint64 from_tree, uint64 to_tree);
extern void trt_copy_tree(uint64 from, uint64 to);
extern void trt_copy_database(Oid src_db, Oid src_spc, Oid dst_db, Oid dst_spc);
extern void trt_move_database(Oid db, Oid old_spc, Oid new_spc, bool finish);

/* row ids below which a crash may have lost rows whose index entries survived */
extern uint64 trt_tree_suspect_below(uint64 tree);
extern void trt_tree_clear_suspect(uint64 tree);

/* pages of the tree's visibility map fork, or TRT_VM_PAGES_UNKNOWN */
#define TRT_VM_PAGES_UNKNOWN 0xFFFFFFFF
extern pg_atomic_uint32 *trt_tree_vm_pages(uint64 tree);

/* one past the largest vid handed out (for relation_size) */
extern uint64 trt_vid_high_water(uint64 tree);

/*
 * Bytes the tree's keys take in the engine (dead versions and deletions not
 * yet compacted away included): exact for memtables, or estimated in
 * O(log n) for the planner.
 */
extern uint64 trt_tree_bytes(uint64 tree, bool estimate);
/* trt_tree_bytes(estimate) of a relation's tree, at most a second old */
extern uint64 trt_rel_bytes_estimate(Relation rel);

/* drop trees whose transactions have ended (maintenance worker) */
extern void trt_process_drops(void);

/* DROP DATABASE: every tree of the database goes when the drop commits */
extern void trt_schedule_database_drop(Oid dboid);

/* the vid counters' shared hash */
extern Size trt_trees_shmem_size(void);
extern void trt_trees_shmem_init(void);

/* ------------------------------------------------------ commands (commands.c) */

/* object access hook: trees of dropped relations and databases */
extern void trt_object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId);

/* utility hook: CREATE DATABASE copies trees, ALTER DATABASE SET TABLESPACE moves them */
typedef struct TrtUtilityState
{
	Node	   *node;			/* the statement */
	Oid			src_db;			/* template, or the database moved; InvalidOid: nothing to do */
	Oid			old_spc;
	Oid			new_spc;
} TrtUtilityState;

extern void trt_utility_before(PlannedStmt *pstmt, TrtUtilityState *st);
extern void trt_utility_after(TrtUtilityState *st);

/* ------------------------------------------------------ settings and shared memory */

extern void trt_define_settings(void);	/* settings.c */
extern void trt_shmem_request(void);	/* shmem.c */
extern void trt_shmem_startup(void);

/* ------------------------------------------------------ iterators (iterators.c) */
/* an engine iterator released with the current resource owner; never NULL */
extern tides_iter *trt_open_iter(tides_db *db, const tides_iter_options *o);
/* the same over [lower, upper), without a snapshot of its own */
extern tides_iter *trt_open_range_iter(tides_db *db, const void *lower, size_t lower_len,
										 const void *upper, size_t upper_len, bool fill_cache);
extern void trt_close_iter(tides_iter *it);
/* background workers, after an error: close every iterator of this process */
extern void trt_close_all_iters(void);
/*
 * The refreshing iterator: an engine iterator over [lower, upper) (bounds
 * copied) owned by the resource owner, replaced by a fresh one every
 * TRT_ITER_REFRESH_MS so that a long walk pins no memtable for long
 * (iterators.c explains the positioning).  Read it with tides_iter_* on
 * ->it; step it with trt_iter_next/prev, or check trt_iter_refresh_due and
 * trt_iter_reopen to position the fresh one yourself.
 */
#define TRT_ITER_REFRESH_MS 200

typedef struct TrtIter
{
	tides_iter *it;				/* the engine iterator of the moment */
	uint8	   *lower;			/* copies of the bounds, for refreshes */
	size_t		llen;
	uint8	   *upper;
	size_t		ulen;
	const char *what;			/* "scan a table": the ERROR of trt_iter_check */
	TimestampTz opened_at;
	uint32		steps;
} TrtIter;

extern TrtIter *trt_iter_open(const void *lower, size_t llen, const void *upper, size_t ulen,
							  const char *what);
/* close the engine iterator (again: a no-op); the TrtIter's memory stays */
extern void trt_iter_close(TrtIter *w);
/* close and free */
extern void trt_iter_free(TrtIter *w);
/* ERROR if the iterator stopped because of an engine error */
extern void trt_iter_check(TrtIter *w);
/* has the iterator lived long enough to be replaced? (counts a step) */
extern bool trt_iter_refresh_due(TrtIter *w);
/* replace the iterator by a fresh one over the same bounds (not positioned) */
extern void trt_iter_reopen(TrtIter *w);
/* step, replacing the iterator first when it is due */
extern void trt_iter_next(TrtIter *w);
extern void trt_iter_prev(TrtIter *w);
/* the resource-release callback that closes iterators (registered by src/module) */
extern void trt_release_iterators(ResourceReleasePhase phase, bool isCommit, bool isTopLevel,
								  void *arg);

/* ------------------------------------------------------ transactions (xact.c) */

/* called before a transaction's first tides write: tags, callbacks */
extern void trt_xact_note_write(void);

/* tag a batch as the current transaction's (after trt_xact_note_write) */
extern void trt_xact_tag_batch(tides_batch *b);

/*
 * Deferred entries: a put of the current transaction that no other backend
 * may look for before it commits (xact.c explains which).  It reaches the
 * engine before this backend's next write or read, at the latest in the
 * transaction's sealing batch.  trt_deferred_entries counts those waiting.
 */
extern int	trt_deferred_entries;
extern void trt_xact_defer_put(const void *key, size_t klen, const void *val, size_t vlen);
extern void trt_xact_flush_deferred(void);

/* the transaction must be durable when it commits, whatever the sync mode */
extern void trt_xact_force_durable(void);

/* make the whole log durable and advance the durable-transaction horizon */
extern void trt_sync_everything(const char *why);

/* are the tides records of this (ended) transaction durable? */
extern bool trt_xid_durable(TransactionId xid);

/* the transaction callback, and the ExecutorRun hook's part (registered by src/module) */
extern void trt_xact_callback(XactEvent event);
extern void trt_executor_run_begin(QueryDesc *qd);

/* ------------------------------------------------------ incarnations (incarnation.c) */

/* tags: (incarnation << 32) | top-level xid */
static inline uint64
trt_make_tag(uint32 inc, TransactionId top)
{
	return ((uint64) inc << 32) | top;
}

/* finalise this incarnation if not done (takes init_lock) */
extern void trt_finalize_startup(tides_db *db);

/*
 * For a stored xid written in incarnation inc by top-level transaction top:
 * true if that transaction can never count as committed (PostgreSQL forgot
 * it in a crash, or its tides writes were cut short).
 */
extern bool trt_writer_lost(uint32 inc, TransactionId top, TransactionId xid);
extern bool trt_multi_lost(uint32 inc, MultiXactId multi);

extern void trt_register_rmgr(void);
extern void trt_capture_control_file(void);
extern void trt_reset_after_crash(void);

/* ------------------------------------------------------ workers (workers.c) */

extern void trt_register_workers(void);

/* ------------------------------------------------------ row locks */

static inline LWLock *
trt_row_lock(uint64 tree, uint64 vid)
{
	uint64		h = (tree * UINT64CONST(0x9E3779B97F4A7C15)) ^ (vid * UINT64CONST(0xC2B2AE3D27D4EB4F));

	h ^= h >> 29;
	return &trt_shared->row_locks[h % (uint64) trt_shared->n_row_locks].lock;
}

#endif
