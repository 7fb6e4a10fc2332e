/*
 * tides_am.h -- the table access method "tides": stored row versions,
 * visibility, and the entry points of the TableAmRoutine.
 *
 * A row version is stored under key (tree, vid) as:
 *
 *     TidesVersionMeta (32 bytes) | heap tuple (HeapTupleHeaderData + data)
 *
 * The heap tuple part keeps PostgreSQL's own layout, so xmin, xmax, t_cid
 * (our cmin), t_ctid (successor, or self, or a speculative token) and the
 * infomask bits mean what they mean for heap, and slots and system columns
 * work unchanged.  The meta part adds what heap keeps elsewhere or not at
 * all: cmax (heap folds cmin/cmax into a combo id; we keep both), and for
 * xmin and xmax the incarnation and top-level xid of the writer, which decide
 * whether a transaction PostgreSQL forgot in a crash wrote them (see
 * src/pg/incarnation.c).
 *
 * Nothing is rewritten in place: deleting, updating or locking a version
 * writes the whole version again under the same key with the new xmax (the
 * engine keeps the newest), under the row's stripe lock, so reading the
 * newest state and writing the next one is atomic for all writers.
 */
#ifndef TIDES_AM_H
#define TIDES_AM_H

#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#include "storage/lmgr.h"
#include "utils/snapmgr.h"
#include "utils/snapshot.h"

#include "runtime/trt.h"

typedef struct TidesVersionMeta
{
	uint32		cmax;
	uint32		xmin_inc;
	TransactionId xmin_top;
	uint32		xmax_inc;
	TransactionId xmax_top;
	uint16		flags;
	uint16		hot_depth;		/* HOT updates from the chain's root to this version */
	uint64		link;			/* heap-only version: its root; stub: see below */
} TidesVersionMeta;

#define TIDES_META_SIZE sizeof(TidesVersionMeta)

/*
 * flags.  A stub is a key whose value is only a meta header, standing where
 * a version was (heap's non-normal line pointers):
 *   REDIRECT  the root of a HOT chain whose first versions were pruned;
 *             link is the first remaining version (LP_REDIRECT)
 *   DEAD      a removed version whose index entries may still exist; goes
 *             once VACUUM has removed them (LP_DEAD)
 */
#define TIDES_VF_NONE		0x0000
#define TIDES_VF_REDIRECT	0x0001
#define TIDES_VF_DEAD		0x0002
#define TIDES_VF_STUB		(TIDES_VF_REDIRECT | TIDES_VF_DEAD)
/* the xmax was written by its updater (delete or update), not a locker */
#define TIDES_VF_XMAX_BY_UPDATER 0x0004

/* HOT chains are cut after this many HOT updates (see hot.c) */
#define TIDES_MAX_HOT_DEPTH 32
/* a reader that walks this many chain members prunes the chain (hot.c) */
#define TIDES_PRUNE_WALK 4

/* a row version in backend memory */
typedef struct TidesTuple
{
	TidesVersionMeta meta;
	uint64		vid;
	uint16		stored_infomask;	/* t_infomask as read, before in-memory hints */
	HeapTupleData htup;			/* t_data points at data[] */
	/* MAXALIGN'd heap tuple bytes follow */
} TidesTuple;

#define TIDES_TUPLE_DATA(t) ((HeapTupleHeader) ((char *) (t) + MAXALIGN(sizeof(TidesTuple))))

/* a stub (meta only, no heap tuple: htup.t_data is NULL) */
#define TIDES_IS_STUB(t) (((t)->meta.flags & TIDES_VF_STUB) != 0)
#define TIDES_IS_REDIRECT(t) (((t)->meta.flags & TIDES_VF_REDIRECT) != 0)

/* the vid of the root of the HOT chain a version belongs to */
static inline uint64
tides_root_vid(const TidesTuple *t)
{
	return HeapTupleHeaderIsHeapOnly(t->htup.t_data) ? t->meta.link : t->vid;
}

/* cmin of a version inserted by the current transaction (t_cid may be a combo id) */
static inline CommandId
tides_cmin(const TidesTuple *t)
{
	return HeapTupleHeaderGetCmin(t->htup.t_data);
}

/* ---- handler.c */

/* the TableAmRoutine of "tides" (registered with the runtime by src/module) */
extern const TableAmRoutine *tam_routine(void);

/* ---- tuple.c */

/*
 * A reusable buffer for one TidesTuple, allocated in a fixed memory context
 * (callers in executor callbacks run in short-lived contexts; the buffer
 * must live as long as its owner).
 */
typedef struct TidesTupleBuf
{
	TidesTuple *t;
	Size		size;
	MemoryContext cxt;
} TidesTupleBuf;

static inline void
tides_tuple_buf_init(TidesTupleBuf *b, MemoryContext cxt)
{
	b->t = NULL;
	b->size = 0;
	b->cxt = cxt;
}

static inline void
tides_tuple_buf_free(TidesTupleBuf *b)
{
	if (b->t)
		pfree(b->t);
	b->t = NULL;
	b->size = 0;
}

/* turn a stored value into a TidesTuple in the buffer */
extern TidesTuple *tides_tuple_from_value(const char *val, size_t vlen, uint64 vid, Oid relid,
										  TidesTupleBuf *buf);

/* read the newest state of a version; NULL if absent or a stub */
extern TidesTuple *tides_fetch_version(uint64 tree, uint64 vid, Oid relid, TidesTupleBuf *buf);
/* the same, returning stubs too */
extern TidesTuple *tides_fetch_entry(uint64 tree, uint64 vid, Oid relid, TidesTupleBuf *buf);

/* add a stub (flags TIDES_VF_REDIRECT with its target, or TIDES_VF_DEAD) to a batch */
/* a redirect stub keeps its target's hot_depth in its own (hot.c: the chain-length limit) */
extern void tides_batch_add_stub(tides_batch *b, uint64 tree, uint64 vid, uint16 flags, uint64 link,
								 uint16 target_depth);

/* add (tree, vid) -> tuple to a batch */
extern void tides_batch_add_version(tides_batch *b, uint64 tree, uint64 vid,
									const TidesVersionMeta *meta, HeapTupleHeader data, uint32 len);

/* meta for a version being written by the current transaction */
extern void tides_meta_init_insert(TidesVersionMeta *m);
extern void tides_meta_set_xmax_writer(TidesVersionMeta *m, bool is_update);

/* a palloc'd copy as a plain HeapTuple (for slots that must own it) */
extern HeapTuple tides_tuple_copy_heap(const TidesTuple *t);

/* ---- visibility.c */

extern bool tides_visible(TidesTuple *t, Snapshot snapshot);
extern TM_Result tides_satisfies_update(TidesTuple *t, CommandId curcid);
extern HTSV_Result tides_satisfies_vacuum(TidesTuple *t, TransactionId oldest_xmin,
										  TransactionId *dead_after);
extern bool tides_surely_dead(TidesTuple *t, GlobalVisState *vistest, bool durable);
extern bool tides_is_only_locked(TidesTuple *t);
extern void tides_ssi_conflict_out(bool visible, Relation rel, TidesTuple *t, Snapshot snapshot);

/* ---- modify.c */

extern void tides_tuple_insert(Relation rel, TupleTableSlot *slot, CommandId cid,
							   int options, BulkInsertState bistate);
extern void tides_tuple_insert_speculative(Relation rel, TupleTableSlot *slot, CommandId cid,
										   int options, BulkInsertState bistate,
										   uint32 specToken);
extern void tides_tuple_complete_speculative(Relation rel, TupleTableSlot *slot,
											 uint32 specToken, bool succeeded);
extern void tides_multi_insert(Relation rel, TupleTableSlot **slots, int nslots,
							   CommandId cid, int options, BulkInsertState bistate);
extern TM_Result tides_tuple_delete(Relation rel, ItemPointer tid, CommandId cid,
									Snapshot snapshot, Snapshot crosscheck, bool wait,
									TM_FailureData *tmfd, bool changingPart);
extern TM_Result tides_tuple_update(Relation rel, ItemPointer otid, TupleTableSlot *slot,
									CommandId cid, Snapshot snapshot, Snapshot crosscheck,
									bool wait, TM_FailureData *tmfd, LockTupleMode *lockmode,
									bool *update_indexes);
extern TM_Result tides_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot,
								  TupleTableSlot *slot, CommandId cid, LockTupleMode mode,
								  LockWaitPolicy wait_policy, uint8 flags,
								  TM_FailureData *tmfd);

/* ---- xmax.c: row locks and the xmax they leave behind */

extern void tides_compute_new_xmax(TransactionId xmax, uint16 old_infomask, uint16 old_infomask2,
								   TransactionId add_to_xmax, LockTupleMode mode, bool is_update,
								   TransactionId *result_xmax, uint16 *result_infomask,
								   uint16 *result_infomask2);
extern bool tides_xmax_conflicts(TidesTuple *t, LockTupleMode mode, bool *current_is_member);
extern bool tides_wait_for_xmax(Relation rel, TidesTuple *t, LockTupleMode mode,
								LockWaitPolicy policy, XLTW_Oper oper, int *remain);
extern LockTupleMode tides_lock_mode_of_xmax(TidesTuple *t, bool *is_update);
extern bool tides_acquire_tuplock(Relation rel, ItemPointer tid, LockTupleMode mode,
								  LockWaitPolicy policy, bool *have);
extern void tides_release_tuplock(Relation rel, ItemPointer tid, LockTupleMode mode, bool *have);
extern void tides_inherited_xmax_bits(TransactionId xmax, uint16 old_infomask,
									  uint16 *infomask, uint16 *infomask2);

/* ---- scan.c */

extern TableScanDesc tides_scan_begin(Relation rel, Snapshot snapshot, int nkeys,
									  struct ScanKeyData *key, ParallelTableScanDesc pscan,
									  uint32 flags);
extern void tides_scan_end(TableScanDesc scan);
extern void tides_scan_rescan(TableScanDesc scan, struct ScanKeyData *key, bool set_params,
							  bool allow_strat, bool allow_sync, bool allow_pagemode);
extern bool tides_scan_getnextslot(TableScanDesc scan, ScanDirection direction,
								   TupleTableSlot *slot);
extern void tides_scan_set_tidrange(TableScanDesc scan, ItemPointer mintid, ItemPointer maxtid);
extern bool tides_scan_getnextslot_tidrange(TableScanDesc scan, ScanDirection direction,
											TupleTableSlot *slot);
extern Size tides_parallelscan_estimate(Relation rel);
extern Size tides_parallelscan_initialize(Relation rel, ParallelTableScanDesc pscan);
extern void tides_parallelscan_reinitialize(Relation rel, ParallelTableScanDesc pscan);
extern bool tides_scan_bitmap_next_block(TableScanDesc scan, struct TBMIterateResult *tbmres);
extern bool tides_scan_bitmap_next_tuple(TableScanDesc scan, struct TBMIterateResult *tbmres,
										 TupleTableSlot *slot);
extern bool tides_scan_sample_next_block(TableScanDesc scan, struct SampleScanState *scanstate);
extern bool tides_scan_sample_next_tuple(TableScanDesc scan, struct SampleScanState *scanstate,
										 TupleTableSlot *slot);
extern bool tides_scan_analyze_next_block(TableScanDesc scan, BlockNumber blockno,
										  BufferAccessStrategy bstrategy);
extern bool tides_scan_analyze_next_tuple(TableScanDesc scan, TransactionId OldestXmin,
										  double *liverows, double *deadrows,
										  TupleTableSlot *slot);

extern TidesTuple *tides_scan_next_root(TableScanDesc sscan);
extern void tides_scan_set_block_range(TableScanDesc sscan, BlockNumber start, BlockNumber nblocks);

/* root reads that come in vid order, through one engine iterator (seqread.c) */
typedef struct TidesSeqReader TidesSeqReader;
extern TidesSeqReader *tides_seq_reader_create(MemoryContext cxt);
/* vid's entry, or NULL: not in the reader's view, or not read in order (read the engine) */
extern TidesTuple *tides_seq_reader_read(TidesSeqReader *r, uint64 tree, uint64 vid, Oid relid,
										 TidesTupleBuf *buf);
extern void tides_seq_reader_free(TidesSeqReader *r);

/* a raw cursor over one tree's versions, used by scans, vacuum, builds */
typedef struct TidesCursor TidesCursor;

extern TidesCursor *tides_cursor_open(uint64 tree, Oid relid, uint64 lo_vid, uint64 hi_vid);
/* also return stubs (VACUUM, the visibility map, lossy bitmap pages) */
extern void tides_cursor_include_stubs(TidesCursor *c);
extern TidesTuple *tides_cursor_next(TidesCursor *c, ScanDirection dir);
extern void tides_cursor_seek(TidesCursor *c, uint64 vid, ScanDirection dir);
extern void tides_cursor_close(TidesCursor *c);

/* ---- fetch.c */

extern IndexFetchTableData *tides_index_fetch_begin(Relation rel);
extern void tides_index_fetch_reset(IndexFetchTableData *scan);
extern void tides_index_fetch_end(IndexFetchTableData *scan);
extern bool tides_index_fetch_tuple(IndexFetchTableData *scan, ItemPointer tid,
									Snapshot snapshot, TupleTableSlot *slot,
									bool *call_again, bool *all_dead);
extern bool tides_tuple_fetch_row_version(Relation rel, ItemPointer tid, Snapshot snapshot,
										  TupleTableSlot *slot);
extern bool tides_tuple_tid_valid(TableScanDesc scan, ItemPointer tid);
extern void tides_tuple_get_latest_tid(TableScanDesc scan, ItemPointer tid);
extern bool tides_tuple_satisfies_snapshot(Relation rel, TupleTableSlot *slot, Snapshot snapshot);
extern TransactionId tides_index_delete_tuples(Relation rel, TM_IndexDeleteOp *delstate);

/* store a version into a slot (copying) */
extern void tides_store_in_slot(TidesTuple *t, TupleTableSlot *slot);

/* ---- ddl.c */

extern void tides_relation_set_new_filenode(Relation rel, const RelFileNode *newrnode,
											char persistence, TransactionId *freezeXid,
											MultiXactId *minmulti);
extern void tides_relation_nontransactional_truncate(Relation rel);
extern void tides_relation_copy_data(Relation rel, const RelFileNode *newrnode);
extern void tides_relation_copy_for_cluster(Relation OldTable, Relation NewTable,
											Relation OldIndex, bool use_sort,
											TransactionId OldestXmin, TransactionId *xid_cutoff,
											MultiXactId *multi_cutoff, double *num_tuples,
											double *tups_vacuumed, double *tups_recently_dead);
extern uint64 tides_relation_size(Relation rel, ForkNumber forkNumber);
extern bool tides_relation_needs_toast_table(Relation rel);
extern Oid	tides_relation_toast_am(Relation rel);
extern void tides_relation_estimate_size(Relation rel, int32 *attr_widths, BlockNumber *pages,
										 double *tuples, double *allvisfrac);

/* ---- hot.c: heap-only versions and their chains */

extern TidesTuple *tides_hot_search(Relation rel, uint64 tree, ItemPointer tid, Snapshot snapshot,
									TidesTupleBuf *buf, bool *all_dead, bool first_call,
									bool may_prune, TidesSeqReader *reader);
extern bool tides_hot_update_allowed(Relation rel, Bitmapset *hot_attrs, TidesTuple *old,
									 HeapTuple newtup);
extern bool tides_hot_chain_dead(Relation rel, uint64 tree, uint64 root_vid, GlobalVisState *vistest,
								 TransactionId *latest_removed);

/* pruning a chain: what VACUUM (against OldestXmin) and readers (on access) share */
typedef enum TidesMemberFate
{
	TIDES_MEMBER_DEAD,			/* dead to everyone */
	TIDES_MEMBER_RECENTLY_DEAD, /* deleted, but someone may still see it */
	TIDES_MEMBER_STAYS			/* anything else: it and every later member stay */
} TidesMemberFate;

typedef TidesMemberFate (*TidesMemberJudge) (TidesTuple *t, void *arg);

typedef struct TidesHotPrune
{
	bool		root_is_stub;	/* the root is already a redirect */
	uint64		old_target;		/* ... to this member */
	uint64	   *chain;			/* members walked, from the root (or its target) */
	TransactionId *updaters;	/* each one's updater */
	uint16	   *depths;			/* each one's hot_depth */
	int			n;
	int			latestdead;		/* last member judged dead, or -1 */
} TidesHotPrune;

extern bool tides_hot_prune_plan(Relation rel, uint64 tree, uint64 root_vid, TidesTupleBuf *buf,
								 TidesMemberJudge judge, void *arg, TidesHotPrune *p);
extern void tides_hot_prune_members(tides_batch *b, uint64 tree, uint64 root_vid, TidesHotPrune *p);
extern void tides_hot_prune_free(TidesHotPrune *p);
extern void tides_hot_prune_opt(Relation rel, uint64 tree, uint64 root_vid);

/* ---- vm.c: the visibility map for index-only scans */

extern void tides_vm_clear(Relation rel, uint64 vid);
extern void tides_vm_clear_chain(Relation rel, uint64 vid, uint64 root_vid);
extern void tides_vm_clear_range(Relation rel, uint64 first_vid, uint64 nvids);
extern bool tides_vm_block_visible_to_all(TidesTuple *t, TransactionId oldest_xmin);
extern bool tides_vm_mark_block(Relation rel, uint64 tree, BlockNumber blk, TransactionId oldest_xmin);

/* ---- vacuum.c */

extern void tides_relation_vacuum(Relation rel, struct VacuumParams *params,
								  BufferAccessStrategy bstrategy);
extern void tides_sync_before_freezing(void);

/* ---- index_build.c */

extern double tides_index_build_range_scan(Relation table_rel, Relation index_rel,
										   struct IndexInfo *index_info, bool allow_sync,
										   bool anyvisible, bool progress,
										   BlockNumber start_blockno, BlockNumber numblocks,
										   IndexBuildCallback callback, void *callback_state,
										   TableScanDesc scan);
extern void tides_index_validate_scan(Relation table_rel, Relation index_rel,
									  struct IndexInfo *index_info, Snapshot snapshot,
									  struct ValidateIndexState *state);

#endif
