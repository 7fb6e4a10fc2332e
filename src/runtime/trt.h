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
#include "access/xlogdefs.h"
#include "catalog/objectaccess.h"
#include "executor/execdesc.h"
#include "fmgr.h"
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
extern int	trt_memtables_per_flush;
extern int	trt_memtable_discard_ms;
extern int	trt_block_cache_mb;
extern int	trt_meta_size_mb;
extern int	trt_guc_sync_mode;
extern int	trt_sync_interval_ms;
extern int	trt_guc_compression;
extern int	trt_compression_level;
extern int	trt_guc_bottommost_compression;
extern int	trt_compaction_workers;
extern int	trt_l0_slowdown;
extern int	trt_l0_stop;
extern int	trt_delayed_write_rate_kb;
extern int	trt_max_relations;
extern int	trt_row_lock_stripes;
extern int	trt_tablespaces;
extern bool trt_wal;			/* tides.wal: PostgreSQL's WAL is the log (wal.c) */

/* tides.tablespaces */
#define TRT_TABLESPACES_REFUSE	0
#define TRT_TABLESPACES_IGNORE	1

/* ------------------------------------------------------------ keys */

/*
 * Every key starts with an 8-byte big-endian tree id.  Tree 0 holds the
 * runtime's own metadata (its keys: runtime/meta.h, private to the
 * runtime); relation storage gets trees from TRT_TREE_FIRST (ids below it
 * are reserved).
 */
#define TRT_TREE_META			UINT64CONST(0)
#define TRT_TREE_FIRST		UINT64CONST(16)

#define TRT_TREE_KEY_LEN	8
#define TRT_ROW_KEY_LEN		14	/* tree (8) + vid (6) */
/*
 * the engine's stem filter (tides_options.filter_stem_suffix): keys are
 * also filtered without their last 6 bytes, which for an index entry is the
 * table TID it ends with (src/index/README.md): its stem is the index key
 */
#define TRT_STEM_SUFFIX_LEN	6
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

	/* tides.wal = on: the checkpoint guards and base backups (checkpoint.c) */
	slock_t		guard_lock;
	bool		guard_active[2];	/* flagged DELAY_CHKPT_COMPLETE in a transaction */
	bool		guards_ready;	/* both have been: writes may begin */
	LWLock	   *ckpt_lock;		/* ckpt_done_redo, deletion_held, engine checkpoints */
	XLogRecPtr	ckpt_done_redo; /* the newest redo point handled */
	bool		deletion_held;	/* a base backup runs: obsolete files are kept */
	pg_atomic_uint32 lowlevel_backups;	/* sessions inside pg_backup_start/stop */
	bool		incarnations_loaded;	/* read-only, on a hot standby (incarnation.c) */

	/* row lock stripes: a named LWLock tranche */
	LWLockPadded *row_locks;
	int			n_row_locks;
	/* per stripe: the publication point of the last no-wait write under it (engine.c) */
	pg_atomic_uint64 *row_lock_points;

	/*
	 * tides.wal = on: bytes of the tides WAL records this server inserted
	 * since it started (wal.c; replayed ones are not counted), which stand
	 * for the engine's log bytes in the statistics (monitor.c)
	 */
	pg_atomic_uint64 wal_bytes;

	/* the engine's counters at the last tides_stats_reset() (monitor.c) */
	slock_t		stats_lock;
	tides_stats stats_base;
	TimestampTz stats_reset;	/* that reset, or the shared memory's creation */

	/*
	 * Write stalls (engine.c): writes that had to wait for background work
	 * (the engine answered TIDES_BUSY: every memtable full, or level 0 at
	 * its stop trigger) and the time they waited, reported by tides_stats()
	 * as write_stalls and write_stall_us.
	 */
	pg_atomic_uint64 write_stalls;
	pg_atomic_uint64 write_stall_us;

	/*
	 * Vacant ranges (vacant.c): how many scans recorded, how many jumps
	 * over one scans made; tides_stats() reports them as vacant_ranges and
	 * vacant_jumps.
	 */
	pg_atomic_uint64 vacant_ranges;
	pg_atomic_uint64 vacant_jumps;
} TrtShared;

extern TrtShared *trt_shared;

/* ------------------------------------------------------ engine access */

/* this backend's engine handle; attaches (and finalises) on first use */
extern tides_db *trt_engine(void);

/*
 * The handle without finalising the incarnation (whose records are
 * written, and with tides.wal logged): for WAL replay in the startup
 * process, and for the checkpoint guards, which writes wait for.
 */
extern tides_db *trt_engine_attach(void);

/* report an engine failure as ERROR (never returns) */
extern int	trt_status_sqlstate(tides_status s);
extern void trt_engine_error(tides_status s, const char *what) pg_attribute_noreturn();

/*
 * Write a batch, waiting interruptibly while the engine is busy.  This
 * backend's deferred entries (xact.c) go first, in a batch of their own.
 */
extern uint64 trt_write_batch(tides_batch *b);

/*
 * How many bytes a writer that splits a large write into batches puts in
 * each: 1 MB, or an eighth of tides.memtable_size if that is smaller.  A
 * batch must fit in one memtable with its skiplist nodes (the engine
 * refuses it otherwise), which for small entries take as much again.
 */
extern size_t trt_batch_limit(void);

/* the same without the deferred entries (for xact.c, which writes them) */
extern uint64 trt_write_batch_now(tides_batch *b);

/*
 * One attempt, for a write that may be dropped: false (nothing written)
 * when the engine is busy.  A backend must not wait for a free memtable
 * while its own open iterators may pin the memtables the wait is for: an
 * index scan deleting the dead entries it passed waited so forever.  Nor
 * is it paced at level 0's slowdown trigger (tides_batch_unpaced): the
 * write only removes entries (bounded by the deletions, which were paced)
 * and saves later scans work, and a reader should not sleep for it in the
 * middle of a query -- after an ANALYZE's snapshot ends, the first scan
 * from the low end of a queue's key kills the entries of every row deleted
 * meanwhile, about a thousand batches of 128.
 */
extern bool trt_try_write_batch(tides_batch *b);

/*
 * point read into a palloc'd buffer; false if absent (deferred entries go
 * first, unless the key is tree 0's)
 */
extern bool trt_read(const uint8 *key, size_t klen, char **val, size_t *vlen);

/*
 * Start reading from the device, all at once, the blocks that reads of the
 * rows of tree at vids[0..n) would wait for (tides_prefetch): for a caller
 * that knows several rows before it reads the first.  A hint: no error, no
 * result.
 */
extern void trt_prefetch_rows(uint64 tree, const uint64 *vids, int n);

/* the same for the blocks that stem seeks (tides_iter_seek_stem) of stems[0..n) would read */
extern void trt_prefetch_stems(const uint8 *const *stems, const size_t *lens, int n);

/* is key one of tree 0's, the runtime's metadata (meta.h)? */
static inline bool
trt_key_is_meta(const uint8 *key, size_t klen)
{
	static const uint8 tree0[8] = {0};

	return klen >= sizeof(tree0) && memcmp(key, tree0, sizeof(tree0)) == 0;
}

/*
 * true only when no key stem || TRT_STEM_SUFFIX_LEN bytes is in the engine,
 * proven without a block read (tides_stem_absent); false: maybe, read to
 * know.  This backend's deferred entries are not looked at (a unique
 * index's entries are never deferred).
 */
extern bool trt_stem_absent(const uint8 *stem, size_t len);

/*
 * false only when no row version of tree in vids [lo_vid, hi_vid) was
 * written after read point since and no prefix was dropped since, proven
 * without a block read (tides_range_changed_since); true: maybe, read again.
 */
extern bool trt_rows_changed_since(uint64 tree, uint64 lo_vid, uint64 hi_vid, uint64 since);

/*
 * trt_read for a key this backend may have read just before (a row found
 * by a scan, then locked and read again): the value it read last, if the
 * engine proves nothing was written to the key since (tides_changed_since),
 * else a point read.  Every row read goes through it and is remembered (one
 * value per backend), as is the entry trt_iter_remember is called on (a row
 * read through an iterator).  trt_read_forget at every transaction end.
 */
extern bool trt_read_row(const uint8 *key, size_t klen, char **val, size_t *vlen);
extern void trt_read_forget(void);

/* the vfs to open the engine with: POSIX or a test module's, descriptors counted (shmem.c) */
extern tides_vfs *trt_engine_vfs(void);

/* the engine's descriptors in fd.c's count (descriptors.c) */
extern tides_vfs *trt_counted_vfs(tides_vfs *base);
extern uint32 trt_table_files_budget(void);

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

/* tides.compression or tides.compression_level changed (configuration reload) */
extern void trt_compression_changed(void);

/* tides.memtable_discard_after changed (configuration reload) */
extern void trt_memtable_discard_changed(void);

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

/*
 * The head of the tides table AM's index fetch state (src/am/fetch.c), the
 * one field of it an index AM may set.  An index forgets an entry whose rows
 * an index fetch reported all dead (kill_prior_tuple).  A crash must not
 * bring back a row its index forgot, so by default "all dead" waits until
 * the deleter's commit record is flushed and its tides records are durable
 * (trt_xid_durable): nbtree's forgetting, an LP_DEAD hint, may reach the disk
 * before either.  kills_logged: the index writes each forgetting to the
 * tides log (tides_btree), after the deletion, so a crash that keeps the
 * one keeps the other; only the commit record must be flushed.  Set by the
 * index AM on scan->xs_heapfetch of a tides table (trt_is_tides_relation).
 */
typedef struct TrtIndexFetch
{
	IndexFetchTableData base;
	bool		kills_logged;

	/*
	 * deleted_by, if the index AM points it somewhere (memory of its own: a
	 * scan's fetch state is freed before amendscan): what an MVCC fetch of a
	 * TID that returned nothing found, when every version the TID leads to
	 * was deleted by a committed transaction (or never committed) -- the
	 * newest such deleter, or FrozenTransactionId when there is none (dead to
	 * everyone).  Any other fetch leaves it alone; the index AM sets it to
	 * InvalidTransactionId before it hands out a TID (tidx_scan.c, "dead
	 * runs").
	 */
	TransactionId *deleted_by;
} TrtIndexFetch;

/*
 * Index entries by key: deleting the entries a row version has in an index
 * without reading the index.  A table AM that knows a dead version (VACUUM)
 * can compute the keys of its entries where the index AM says how, and
 * delete them blindly instead of scanning every entry (ambulkdelete).  The
 * index AM's part (src/index) is registered by src/module/module.c in
 * _PG_init, so src/am asks here and never calls src/index.
 *
 * begin: a state for one index, or NULL when its entries cannot be found
 * by key (not a tides_btree index, expressions, types whose encoding may
 * change); lives in the current memory context.
 * delete: add to b the deletions of the entries the version (a tuple of the
 * table's descriptor) has in the index under tid (its chain root's TID);
 * false, adding nothing, when the keys cannot be computed from the tuple
 * (a key column stored out of line: TOAST may be gone).
 */
typedef void *(*trt_index_keys_begin_fn) (Relation index);
typedef bool (*trt_index_keys_delete_fn) (void *state, HeapTuple tuple, TupleDesc tupdesc,
										  ItemPointer tid, tides_batch *b);

extern void trt_register_index_keys(trt_index_keys_begin_fn begin,
									trt_index_keys_delete_fn delete);
extern void *trt_index_keys_begin(Relation index);
extern bool trt_index_keys_delete(void *state, HeapTuple tuple, TupleDesc tupdesc,
								  ItemPointer tid, tides_batch *b);


/* ------------------------------------------------------ trees (trees.c, vids.c, copies.c, drops.c) */

/* tree of a relation's current storage (cached in rd_amcache) */
extern uint64 trt_rel_tree(Relation rel);

/* does every index of rel (none at all included) belong to tides_btree? (cached) */
extern bool trt_rel_only_tides_indexes(Relation rel);

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

/* the same for a tides_btree index (DROP INDEX, or DROP TABLE taking it along) */
extern void trt_schedule_index_drop(Relation index);

/*
 * hand out n consecutive vids of a tree; the backend holds the tree's vids
 * from the first it took until its transaction ends (trt_vids_release)
 */
extern uint64 trt_alloc_vids(uint64 tree, uint32 n);
extern void trt_vids_release(void);
/* a vid below which every row id ever to be written has been written (vids.c) */
extern uint64 trt_vids_settled_below(uint64 tree);
/* the number of PGPROCs, for arrays of per-backend slots (xact.c) */
extern int	trt_proc_slots(void);

/*
 * Vacant ranges (vacant.c): row ids of a tree where no snapshot taken from
 * now on can find a version -- every version there is dead to all or a
 * stub, every other vid will never be written.  Sequential scans under an
 * MVCC snapshot jump over them and report new ones.  Shared memory only:
 * a crash restart starts without any.
 */
#define TRT_VACANT_RANGES 16
typedef struct TrtVidRange
{
	uint64		lo;
	uint64		hi;				/* exclusive */
} TrtVidRange;
extern int	trt_vacant_load(uint64 tree, TrtVidRange *out);
extern void trt_vacant_add(uint64 tree, uint64 lo, uint64 hi);
extern void trt_vacant_forget(uint64 tree);
extern void trt_vacant_count_jumps(uint64 n);
extern Size trt_vacant_shmem_size(void);
extern void trt_vacant_shmem_init(void);

/* start to_tree's numbering at from_tree's high-water mark */
extern void trt_copy_vid_counter(uint64 from_tree, uint64 to_tree);
extern void trt_copy_tree(uint64 from, uint64 to);
extern void trt_copy_database(Oid src_db, Oid src_spc, Oid dst_db, Oid dst_spc);
extern void trt_move_database(Oid db, Oid old_spc, Oid new_spc, bool finish);

/*
 * Retired row ids (low_marks.c): below a tree's low mark no version of the
 * table and no entry of its tides_btree indexes is seen again; flush and
 * compaction drop them, scans step over them.
 */
extern Size trt_low_marks_shmem_size(void);
extern void trt_low_marks_shmem_init(void);
extern void trt_low_marks_load(tides_db *db);
extern void trt_low_marks_attach(tides_db *db);
extern uint64 trt_tree_low_mark(uint64 tree);
extern bool trt_low_marks_reserve(uint64 table_tree, const uint64 *index_trees, int n);
extern void trt_set_low_marks(uint64 table_tree, const uint64 *index_trees, int n, uint64 mark);
extern void trt_forget_low_mark(uint64 tree);
extern bool trt_copy_low_mark(uint64 from, uint64 to, tides_batch *b);
extern void trt_low_marks_redo(tides_batch *b);
extern bool trt_entry_retired(const uint8 *key, size_t klen, uint64 mark);

/* row ids below which a crash may have lost rows whose index entries survived */
extern uint64 trt_tree_suspect_below(uint64 tree);
extern void trt_tree_clear_suspect(uint64 tree);

/* pages of the tree's visibility map fork, or TRT_VM_PAGES_UNKNOWN */
#define TRT_VM_PAGES_UNKNOWN 0xFFFFFFFF
extern pg_atomic_uint32 *trt_tree_vm_pages(uint64 tree);

/*
 * The read point after the tree's last removal of versions whose index
 * entries were deleted (VACUUM): a view older than it may still show those
 * entries (held_views.c).  0 when none since the server started.
 */
extern void trt_tree_note_removal(uint64 tree, uint64 point);
extern uint64 trt_tree_removed_at(uint64 tree);

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
/* the same, for the planner: remembered, so that scans can tell when cached plans went stale */
extern uint64 trt_rel_plan_bytes(Relation rel);
/* has the tree grown factor times (and by min_bytes) since the last plan?  Once per growth */
extern bool trt_rel_outgrew_plan(Relation rel, double factor, uint64 min_bytes);

/* drop trees whose transactions have ended (maintenance worker) */
extern void trt_process_drops(void);

/* DROP DATABASE: every tree of the database goes when the drop commits */
extern void trt_schedule_database_drop(Oid dboid);

/* the vid counters' shared hash */
extern Size trt_trees_shmem_size(void);
extern void trt_trees_shmem_init(void);

/* ------------------------------------------------------ commands (commands.c) */

/* object access hook: trees of dropped relations and databases (arg: the hook's) */
extern void trt_object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId,
							  void *arg);

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
/* publications.c: ERROR for a publication naming a tides table, WARNING for ALL TABLES / IN SCHEMA */
extern void trt_check_publication(Node *stmt);
extern PGDLLIMPORT bool trt_check_publications;	/* tides.check_publications */

/*
 * New storage of a tides relation (a table, materialized view or
 * tides_btree index) in tablespace spc: an ERROR unless spc is the
 * database's default or tides.tablespaces = ignore.
 */
extern void trt_check_tablespace(Oid spc, Relation rel);

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
/* a writer waiting for a free memtable: every open iterator of this process repinned in place */
extern void trt_repin_iters(void);
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
	bool		lower_is_stem;	/* wants only lower || TRT_STEM_SUFFIX_LEN bytes */
	bool		bulk;			/* blocks read from files stay out of the block cache */
	TimestampTz opened_at;
	uint32		steps;
} TrtIter;

extern TrtIter *trt_iter_open(const void *lower, size_t llen, const void *upper, size_t ulen,
							  const char *what);
/*
 * The same for a bulk read (a scan of a table larger than a quarter of the
 * block cache): blocks found in the cache are used, blocks read from files
 * are not added to it -- heap's scans of such tables cycle through a small
 * ring of buffers for the same reason, so that one scan does not evict
 * everything else.
 */
extern TrtIter *trt_iter_open_bulk(const void *lower, size_t llen, const void *upper, size_t ulen,
								   const char *what);
/* is a table of this many bytes a bulk read's (more than a quarter of the block cache)? */
extern bool trt_bulk_read_bytes(uint64 bytes);
/*
 * The same for a reader that wants only the keys lower || exactly
 * TRT_STEM_SUFFIX_LEN more bytes (a uniqueness check: an index key and any
 * row id): SSTables whose stem filter proves none there are not read.  It
 * may still see other keys in [lower, upper).  It does not write this
 * backend's deferred entries first: only for keys that are never deferred
 * (a unique index's entries, xact.c).
 */
extern TrtIter *trt_iter_open_stem(const void *lower, size_t llen, const void *upper, size_t ulen,
								   const char *what);
/* remember the entry w stands on for trt_read_row (engine.c) */
extern void trt_iter_remember(TrtIter *w);

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

/* the current transaction's tag (0: none, with tides.wal or after the seal) */
extern uint64 trt_xact_tag(void);

/*
 * Deferred entries: a put of the current transaction that no other backend
 * may look for before it commits (xact.c explains which).  It reaches the
 * engine before this backend's next write or read, at the latest in the
 * transaction's sealing batch.  trt_deferred_entries counts those waiting.
 */
extern int	trt_deferred_entries;
extern void trt_xact_defer_put(const void *key, size_t klen, const void *val, size_t vlen);
extern void trt_xact_flush_deferred(void);
/* write the deferred entries and b in one write if they carry the same tag (xact.c) */
extern bool trt_xact_write_with_deferred(tides_batch *b, uint64 *lsn);

/*
 * Deferred rows: b holds a new row of tree at row id vid (and nothing else),
 * which no other backend can find before an index entry leads to it -- the
 * caller has checked that every index of the table is a tides_btree one,
 * whose entries are written with the row or after it.  Its entries join
 * the deferred ones (then true), and until they are written vid counts as
 * waiting (trt_rows_waiting).  False when the row cannot wait (after the
 * seal, rows of another tree are waiting, or no memory): the caller writes
 * b itself.  A deferred row's visibility-map bit is cleared after this
 * call, not after its write (src/am/vm.c).
 */
extern bool trt_xact_defer_row(tides_batch *b, uint64 tree, uint64 vid);

/*
 * May a row of tree with a row id below `below` wait in some backend's
 * deferred entries?  VACUUM asks, under the map page's lock, before it
 * re-reads a block to set its bit.
 */
extern bool trt_rows_waiting(uint64 tree, uint64 below);
extern Size trt_waiting_rows_shmem_size(void);
extern void trt_waiting_rows_shmem_init(void);

/*
 * Index views that scans still act on (held_views.c): an index-only or
 * bitmap scan of a tides_btree index enters one before it opens its
 * iterator and leaves it when it ends (or the transaction does); VACUUM
 * sets no visibility-map bit of a tree while a view older than the tree's
 * last removal is held (trt_tree_note_removal, trt_held_views_oldest).
 */
extern uint64 trt_held_view_enter(void);
extern void trt_held_view_leave(uint64 point);
extern void trt_held_views_reset(void);
extern uint64 trt_held_views_oldest(void);	/* 0: none held */
extern Size trt_held_views_shmem_size(void);
extern void trt_held_views_shmem_init(void);

/* the transaction must be durable when it commits, whatever the sync mode */
extern void trt_xact_force_durable(void);

/* make the whole log durable and advance the durable-transaction horizon */
extern void trt_sync_everything(const char *why);

/* a recent xid (at most 2^31 behind the next one) as a full xid */
extern uint64 trt_full_xid(TransactionId xid);

/* are the tides records of this (ended) transaction durable? */
extern bool trt_xid_durable(TransactionId xid);

/* the transaction callback, and the ExecutorRun hook's part (registered by src/module) */
extern void trt_xact_callback(XactEvent event);
extern void trt_executor_run_begin(QueryDesc *qd);

/* ------------------------------------------------------ bulk loads (ingest.c) */

/*
 * One backend's load into one tree, as table files (the engine's
 * ingestion): batches of rows in ascending key order are added, logged in
 * the WAL when the tree is permanent and tides.wal is on, and installed in
 * the store by trt_ingest_install; trt_ingest_end drops what was not
 * installed.  Errors are ERRORs; after one the load cannot go on.
 */
typedef struct TrtIngest TrtIngest;

extern TrtIngest *trt_ingest_begin(uint64 tree, bool permanent);
extern void trt_ingest_add(TrtIngest *ti, tides_batch *b);
/* are its rows logged in the WAL (so they must come as batches, trt_ingest_add)? */
extern bool trt_ingest_logged(TrtIngest *ti);
/* one row of a load that is not logged, after every key added before it */
extern void trt_ingest_put(TrtIngest *ti, const void *key, size_t klen, const void *val, size_t vlen);
extern void trt_ingest_cut(TrtIngest *ti);
extern uint64 trt_ingest_pending_bytes(TrtIngest *ti);
extern uint64 trt_ingest_pending_rows(TrtIngest *ti);
extern void trt_ingest_install(TrtIngest *ti);
extern void trt_ingest_end(TrtIngest *ti);

/* a batch in the WAL, not applied (wal.c) */
extern XLogRecPtr trt_wal_log_batch(tides_batch *b);

/* tides.bulk_load_threshold, in kB: -1 never, else bytes a load writes normally first */
extern int	trt_bulk_load_threshold_kb;
/* tides.bulk_load_helper: a bulk load's blocks compressed by a helper thread */
extern bool trt_bulk_load_helper;
/* tides.bulk_read_helper: a bulk read's blocks read and decoded ahead by a helper thread */
extern bool trt_bulk_read_helper;
/* tides.transparent_huge_pages: the engine's region advised MADV_HUGEPAGE (shmem.c) */
extern bool trt_transparent_huge_pages;

/* ------------------------------------------------------ incarnations (incarnation.c) */

/* tags: (incarnation << 32) | top-level xid */
static inline uint64
trt_make_tag(uint32 inc, TransactionId top)
{
	return ((uint64) inc << 32) | top;
}

/* finalise this incarnation if not done (takes init_lock) */
extern void trt_finalize_startup(tides_db *db);
/* in recovery (hot standby): load what trt_writer_lost needs, read-only */
extern void trt_load_incarnations_readonly(tides_db *db);

/*
 * For a stored xid written in incarnation inc by top-level transaction top:
 * true if that transaction can never count as committed (PostgreSQL forgot
 * it in a crash, or its tides writes were cut short).
 */
extern bool trt_writer_lost(uint32 inc, TransactionId top, TransactionId xid);
extern bool trt_multi_lost(uint32 inc, MultiXactId multi);

extern void trt_capture_control_file(void);
extern void trt_reset_after_crash(void);
/* the startup process, at the end of redo: the start values are final */
extern void trt_incarnation_redo_done(void);

/* ------------------------------------------------------ the WAL (wal.c, checkpoint.c) */

#define TRT_RMGR_ID 143
extern void trt_register_rmgr(void);

/*
 * Write a batch through the engine -- as a WAL record too when tides.wal is
 * on and may_log (permanent data; never in recovery) -- without waiting or
 * raising an error for the engine's answer.
 */
extern tides_status trt_engine_write(tides_db *db, tides_batch *b, bool may_log, uint64 *lsn);

/*
 * For a process no background worker helps -- the postmaster resetting the
 * store after a crash (before it starts any worker), the startup process,
 * the incarnation's finalisation (the workers wait for its lock): a write
 * answered TIDES_BUSY (a memtable to flush, level 0 at tides.l0_stop_files)
 * does that flush or compaction itself.  trt_make_room does one piece of
 * such work (*did: whether there was one); trt_engine_write_here writes,
 * making room until the write goes in or the work fails.
 */
extern tides_status trt_make_room(tides_db *db, bool *did);
extern tides_status trt_engine_write_here(tides_db *db, tides_batch *b, bool may_log, uint64 *lsn);
/* drop every key under a prefix (logged and flushed first when tides.wal is on and may_log) */
extern tides_status trt_drop_prefix(tides_db *db, const uint8 *prefix, size_t len, bool may_log);
/* the next logged batch removes what snapshots older than xid could see (hot standby) */
extern void trt_wal_set_conflict(TransactionId latest_removed, Oid db);
/* an unlogged or temporary relation's tree stays out of the WAL */
extern void trt_note_tree_persistence(uint64 tree, char persistence);
extern void trt_wal_attach(tides_db *db);
extern void trt_wal_log_checkpoint(XLogRecPtr redo);

extern void trt_wait_for_guards(void);
/* seal and flush every memtable that holds anything now, waiting (checkpoint.c) */
extern void trt_flush_everything(tides_db *db);
extern void trt_guard_main(int index);
extern void trt_checkpoint_replayed(XLogRecPtr redo);
extern void trt_flush_after_redo(void);
extern void trt_wal_shutdown(tides_db *db);
extern void trt_backup_check(void);
extern void trt_backup_function_execute(Oid fn);
extern void trt_backup_xact_end(void);
extern bool trt_restore_backup(const char *dir, tides_vfs *vfs, char *why, size_t cap);
/* trees.c: storage was created here in binary-upgrade mode (pg_upgrade's placeholders) */
extern bool trt_binary_upgrade_marked(tides_db *db);

/* ------------------------------------------------------ monitoring (monitor.c) */

/*
 * Engine block I/O of this process since the last call: into pgBufferUsage
 * (EXPLAIN BUFFERS, pg_stat_statements) and, unless rel is NULL, the
 * relation's pgstat block counts (pg_statio_*).  Cheap when nothing was read.
 */
extern void trt_io_account(Relation rel);

/*
 * The engine's counters (tides_get_stats), with tides.wal = on the bytes of
 * tides' WAL records as log_bytes_written: the engine keeps no log then.
 */
extern void trt_get_stats(tides_stats *st);

/* trt_get_stats minus the figures at the last reset, and when that was */
extern void trt_stats_since_reset(tides_stats *st, TimestampTz *reset_at);
extern void trt_stats_reset(void);

/* bytes of every tree database db maps (estimated, as the planner's) */
extern uint64 trt_database_bytes(Oid db);

/* the files in $PGDATA/pg_tides */
typedef struct TrtEngineFiles
{
	uint64		sst_files;
	uint64		sst_bytes;
	uint64		log_files;
	uint64		log_bytes;
	uint64		other_files;	/* MANIFEST-*, CURRENT, leftovers */
	uint64		other_bytes;
} TrtEngineFiles;

extern void trt_engine_files(TrtEngineFiles *f);

/* ------------------------------------------------------ workers (workers.c) */

extern void trt_register_workers(void);
/* _PG_init, after trt_register_workers: FATAL unless every worker got a slot */
extern void trt_check_workers_registered(void);

/* ------------------------------------------------------ row locks */

static inline LWLock *
trt_row_lock(uint64 tree, uint64 vid)
{
	uint64		h = (tree * UINT64CONST(0x9E3779B97F4A7C15)) ^ (vid * UINT64CONST(0xC2B2AE3D27D4EB4F));

	h ^= h >> 29;
	return &trt_shared->row_locks[h % (uint64) trt_shared->n_row_locks].lock;
}

/*
 * A stripe's next holder must read what was written under it.  A write
 * under a stripe may return before it is published (trt_write_under_stripe):
 * whoever takes the stripe then waits for it here, after acquiring.
 */
extern void trt_row_lock_acquired(LWLock *stripe);

/*
 * Write b under `stripe` (held exclusively), b being one row's new state:
 * without waiting for other backends' writes to be published when nothing
 * else depends on that before the stripe's next holder (which waits in
 * trt_row_lock_acquired) -- this backend's own reads wait for it, and its
 * commit's seal is published after it.  Callers pass only writes whose
 * effect no other reader needs at once (src/am/README.md section 3).
 */
extern void trt_write_under_stripe(tides_batch *b, LWLock *stripe);

#endif
