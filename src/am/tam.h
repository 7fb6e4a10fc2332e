/*
 * tam.h -- the table access method "tides": stored row versions,
 * visibility, and the entry points of the TableAmRoutine.
 *
 * A row version is stored under key (tree, vid) as:
 *
 *     TamVersionMeta (32 bytes) | heap tuple (HeapTupleHeaderData + data)
 *
 * The heap tuple part keeps PostgreSQL's own layout, so xmin, xmax, t_cid
 * (our cmin), t_ctid (successor, or self, or a speculative token) and the
 * infomask bits mean what they mean for heap, and slots and system columns
 * work unchanged.  The meta part adds what heap keeps elsewhere or not at
 * all: cmax (heap folds cmin/cmax into a combo id; we keep both), and for
 * xmin and xmax the incarnation and top-level xid of the writer, which decide
 * whether a transaction PostgreSQL forgot in a crash wrote them (see
 * src/runtime/incarnation.c).
 *
 * Nothing is rewritten in place: deleting, updating or locking a version
 * writes the whole version again under the same key with the new xmax (the
 * engine keeps the newest), under the row's stripe lock, so reading the
 * newest state and writing the next one is atomic for all writers.
 */
#ifndef TAM_H
#define TAM_H

#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/multixact.h"
#include "access/tableam.h"
#include "storage/lmgr.h"
#include "utils/snapmgr.h"
#include "utils/snapshot.h"

#include "runtime/trt.h"

typedef struct TamVersionMeta
{
	uint32		cmax;
	uint32		xmin_inc;
	TransactionId xmin_top;
	uint32		xmax_inc;
	TransactionId xmax_top;
	uint16		flags;
	uint16		hot_depth;		/* HOT updates from the chain's root to this version */
	uint64		link;			/* heap-only version: its root; stub: see below */
} TamVersionMeta;

#define TAM_META_SIZE sizeof(TamVersionMeta)

/*
 * flags.  A stub is a key whose value is only a meta header, standing where
 * a version was (heap's non-normal line pointers):
 *   REDIRECT  the root of a HOT chain whose first versions were pruned;
 *             link is the first remaining version (LP_REDIRECT)
 *   DEAD      a removed version whose index entries may still exist; goes
 *             once VACUUM has removed them (LP_DEAD)
 */
#define TAM_VF_NONE		0x0000
#define TAM_VF_REDIRECT	0x0001
#define TAM_VF_DEAD		0x0002
#define TAM_VF_STUB		(TAM_VF_REDIRECT | TAM_VF_DEAD)
/* the xmax was written by its updater (delete or update), not a locker */
#define TAM_VF_XMAX_BY_UPDATER 0x0004

/* HOT chains are cut after this many HOT updates (see hot.c) */
#define TAM_MAX_HOT_DEPTH 32
/* a reader that walks this many chain members prunes the chain (hot.c) */
#define TAM_PRUNE_WALK 4

/* a row version in backend memory */
typedef struct TamTuple
{
	TamVersionMeta meta;
	uint64		vid;
	uint16		stored_infomask;	/* t_infomask as read, before in-memory hints */
	HeapTupleData htup;			/* t_data points at data[] */
	/* MAXALIGN'd heap tuple bytes follow */
} TamTuple;

#define TAM_TUPLE_DATA(t) ((HeapTupleHeader) ((char *) (t) + MAXALIGN(sizeof(TamTuple))))

/* a stub (meta only, no heap tuple: htup.t_data is NULL) */
#define TAM_IS_STUB(t) (((t)->meta.flags & TAM_VF_STUB) != 0)
#define TAM_IS_REDIRECT(t) (((t)->meta.flags & TAM_VF_REDIRECT) != 0)

/* the vid of the root of the HOT chain a version belongs to */
static inline uint64
tam_root_vid(const TamTuple *t)
{
	return HeapTupleHeaderIsHeapOnly(t->htup.t_data) ? t->meta.link : t->vid;
}

/* cmin of a version inserted by the current transaction (t_cid may be a combo id) */
static inline CommandId
tam_cmin(const TamTuple *t)
{
	return HeapTupleHeaderGetCmin(t->htup.t_data);
}

/* ---- handler.c */

/* the TableAmRoutine of "tides" (registered with the runtime by src/module) */
extern const TableAmRoutine *tam_routine(void);

/* ---- tuple.c */

/*
 * A reusable buffer for one TamTuple, allocated in a fixed memory context
 * (callers in executor callbacks run in short-lived contexts; the buffer
 * must live as long as its owner).
 */
typedef struct TamTupleBuf
{
	TamTuple *t;
	Size		size;
	MemoryContext cxt;
} TamTupleBuf;

static inline void
tam_tuple_buf_init(TamTupleBuf *b, MemoryContext cxt)
{
	b->t = NULL;
	b->size = 0;
	b->cxt = cxt;
}

static inline void
tam_tuple_buf_free(TamTupleBuf *b)
{
	if (b->t)
		pfree(b->t);
	b->t = NULL;
	b->size = 0;
}

/* turn a stored value into a TamTuple in the buffer */
extern TamTuple *tam_tuple_from_value(const char *val, size_t vlen, uint64 vid, Oid relid,
										  TamTupleBuf *buf);

/* read the newest state of a version; NULL if absent or a stub */
extern TamTuple *tam_fetch_version(uint64 tree, uint64 vid, Oid relid, TamTupleBuf *buf);
/* the same, returning stubs too */
extern TamTuple *tam_fetch_entry(uint64 tree, uint64 vid, Oid relid, TamTupleBuf *buf);

/* add a stub (flags TAM_VF_REDIRECT with its target, or TAM_VF_DEAD) to a batch */
/* a redirect stub keeps its target's hot_depth in its own (hot.c: the chain-length limit) */
extern void tam_batch_add_stub(tides_batch *b, uint64 tree, uint64 vid, uint16 flags, uint64 link,
								 uint16 target_depth);

/* add (tree, vid) -> tuple to a batch */
extern void tam_batch_add_version(tides_batch *b, uint64 tree, uint64 vid,
									const TamVersionMeta *meta, HeapTupleHeader data, uint32 len);
/* the same into a load that is not logged (trt_ingest_put) */
extern void tam_ingest_add_version(TrtIngest *ti, uint64 tree, uint64 vid,
									 const TamVersionMeta *meta, HeapTupleHeader data, uint32 len);

/* meta for a version being written by the current transaction */
extern void tam_meta_init_insert(TamVersionMeta *m);
extern void tam_meta_set_xmax_writer(TamVersionMeta *m, bool is_update);

/* a palloc'd copy as a plain HeapTuple (for slots that must own it) */
extern HeapTuple tam_tuple_copy_heap(const TamTuple *t);

/* ---- visibility.c */

extern bool tam_visible(TamTuple *t, Snapshot snapshot);
extern void tam_hint_all_visible(TamTuple *t, Snapshot snapshot);
extern TM_Result tam_satisfies_update(TamTuple *t, CommandId curcid);
extern HTSV_Result tam_satisfies_vacuum(TamTuple *t, TransactionId oldest_xmin,
										  TransactionId *dead_after);
/*
 * What must hold of a deletion before it counts as dead for good
 * (tam_surely_dead), by what could outlive it in a crash.
 */
typedef enum TamDeadRule
{
	TAM_DEAD_NOW,				/* temporary or unlogged: no crash to outlive */
	TAM_DEAD_LOGGED,			/* the consequence goes to the tides log after it */
	TAM_DEAD_DURABLE			/* the consequence may reach the disk first */
} TamDeadRule;

extern bool tam_surely_dead(TamTuple *t, GlobalVisState *vistest, TamDeadRule rule);
extern bool tam_dead_settled(HTSV_Result r, TransactionId dead_after, GlobalVisState *vistest,
							 TamDeadRule rule);
extern TamDeadRule tam_dead_rule(Relation rel, bool logged);
extern bool tam_is_only_locked(TamTuple *t);
/*
 * Was t deleted or updated (not only locked)?  Its updater; the command, if
 * that is the current transaction (else InvalidCommandId); whether it is
 * known to have committed.
 */
extern bool tam_deletion(TamTuple *t, TransactionId *updater, CommandId *cid, bool *committed);
extern void tam_ssi_conflict_out(bool visible, Relation rel, TamTuple *t, Snapshot snapshot);

/* ---- modify.c */

extern void tam_tuple_insert(Relation rel, TupleTableSlot *slot, CommandId cid,
							   int options, BulkInsertState bistate);
extern void tam_tuple_insert_speculative(Relation rel, TupleTableSlot *slot, CommandId cid,
										   int options, BulkInsertState bistate,
										   uint32 specToken);
extern void tam_tuple_complete_speculative(Relation rel, TupleTableSlot *slot,
											 uint32 specToken, bool succeeded);
extern void tam_multi_insert(Relation rel, TupleTableSlot **slots, int nslots,
							   CommandId cid, int options, BulkInsertState bistate);
extern TM_Result tam_tuple_delete(Relation rel, ItemPointer tid, CommandId cid,
									Snapshot snapshot, Snapshot crosscheck, bool wait,
									TM_FailureData *tmfd, bool changingPart);
extern TM_Result tam_tuple_update(Relation rel, ItemPointer otid, TupleTableSlot *slot,
									CommandId cid, Snapshot snapshot, Snapshot crosscheck,
									bool wait, TM_FailureData *tmfd, LockTupleMode *lockmode,
									bool *update_indexes);
extern TM_Result tam_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot,
								  TupleTableSlot *slot, CommandId cid, LockTupleMode mode,
								  LockWaitPolicy wait_policy, uint8 flags,
								  TM_FailureData *tmfd);

/* ---- bulk.c: loads as table files */

typedef struct TamBulk TamBulk;

/* the bulk state of a relation a load may write as files; NULL: write as before */
extern TamBulk *tam_bulk_get(Relation rel);
/* row ids for n new rows */
extern uint64 tam_bulk_vids(TamBulk *bk, Relation rel, uint32 n);
/* a new row, with a row id from tam_bulk_vids */
extern void tam_bulk_add(TamBulk *bk, Relation rel, uint64 vid, const TamVersionMeta *meta,
						 HeapTupleHeader data, uint32 len);
/* the end of a statement's bulk insert (finish_bulk_insert) */
extern void tam_bulk_finish(Relation rel);
/* before this backend reads row ids [lo, hi) of a tree */
extern void tam_bulk_before_read(uint64 tree, uint64 lo_vid, uint64 hi_vid);
/* everything waiting, before a parallel plan */
extern void tam_bulk_write_all(void);
/* a tree's storage is truncated: its waiting rows go */
extern void tam_bulk_drop_tree(uint64 tree);
/* the transaction callback (src/module calls it before the others) */
extern void tam_bulk_xact_callback(XactEvent event);

/* ---- xmax.c: row locks and the xmax they leave behind */

extern void tam_compute_new_xmax(TransactionId xmax, uint16 old_infomask, uint16 old_infomask2,
								   TransactionId add_to_xmax, LockTupleMode mode, bool is_update,
								   TransactionId *result_xmax, uint16 *result_infomask,
								   uint16 *result_infomask2);
extern bool tam_xmax_conflicts(TamTuple *t, LockTupleMode mode, bool *current_is_member);
extern bool tam_wait_for_xmax(Relation rel, TamTuple *t, LockTupleMode mode,
								LockWaitPolicy policy, XLTW_Oper oper, int *remain);
extern LockTupleMode tam_lock_mode_of_xmax(TamTuple *t, bool *is_update);
extern bool tam_acquire_tuplock(Relation rel, ItemPointer tid, LockTupleMode mode,
								  LockWaitPolicy policy, bool *have);
extern void tam_release_tuplock(Relation rel, ItemPointer tid, LockTupleMode mode, bool *have);
extern void tam_inherited_xmax_bits(TransactionId xmax, uint16 old_infomask,
									  uint16 *infomask, uint16 *infomask2);
/* what an xmax stands for: a plain one's status, a status's tuple lock mode, its heavyweight lock */
extern MultiXactStatus tam_status_of_plain_xmax(uint16 infomask, uint16 infomask2);
extern LockTupleMode tam_mode_of_status(MultiXactStatus st);
extern LOCKMODE tam_hwlock_of_mode(LockTupleMode mode);

/* ---- scan.c */

extern TableScanDesc tam_scan_begin(Relation rel, Snapshot snapshot, int nkeys,
									  struct ScanKeyData *key, ParallelTableScanDesc pscan,
									  uint32 flags);
extern void tam_scan_end(TableScanDesc scan);
extern void tam_scan_rescan(TableScanDesc scan, struct ScanKeyData *key, bool set_params,
							  bool allow_strat, bool allow_sync, bool allow_pagemode);
extern bool tam_scan_getnextslot(TableScanDesc scan, ScanDirection direction,
								   TupleTableSlot *slot);
extern void tam_scan_set_tidrange(TableScanDesc scan, ItemPointer mintid, ItemPointer maxtid);
extern bool tam_scan_getnextslot_tidrange(TableScanDesc scan, ScanDirection direction,
											TupleTableSlot *slot);
extern Size tam_parallelscan_estimate(Relation rel);
extern Size tam_parallelscan_initialize(Relation rel, ParallelTableScanDesc pscan);
extern void tam_parallelscan_reinitialize(Relation rel, ParallelTableScanDesc pscan);
extern bool tam_scan_bitmap_next_block(TableScanDesc scan, struct TBMIterateResult *tbmres);
extern bool tam_scan_bitmap_next_tuple(TableScanDesc scan, struct TBMIterateResult *tbmres,
										 TupleTableSlot *slot);
extern bool tam_scan_sample_next_block(TableScanDesc scan, struct SampleScanState *scanstate);
extern bool tam_scan_sample_next_tuple(TableScanDesc scan, struct SampleScanState *scanstate,
										 TupleTableSlot *slot);
extern bool tam_scan_analyze_next_block(TableScanDesc scan, BlockNumber blockno,
										  BufferAccessStrategy bstrategy);
extern bool tam_scan_analyze_next_tuple(TableScanDesc scan, TransactionId OldestXmin,
										  double *liverows, double *deadrows,
										  TupleTableSlot *slot);

extern TamTuple *tam_scan_next_version(TableScanDesc sscan);
extern TamTuple *tam_scan_next_root(TableScanDesc sscan);
extern void tam_scan_set_block_range(TableScanDesc sscan, BlockNumber start, BlockNumber nblocks);

/* root reads that come in vid order, through one engine iterator (seqread.c) */
typedef struct TamSeqReader TamSeqReader;
extern TamSeqReader *tam_seq_reader_create(MemoryContext cxt);
/* vid's entry, or NULL: not in the reader's view, or not read in order (read the engine) */
extern TamTuple *tam_seq_reader_read(TamSeqReader *r, Relation rel, uint64 tree, uint64 vid,
										 Snapshot snapshot, TamTupleBuf *buf);
extern void tam_seq_reader_free(TamSeqReader *r);

/* a raw cursor over one tree's versions, used by scans, vacuum, builds */
typedef struct TamCursor TamCursor;

/* bulk: a read of a large table, which leaves the block cache as it was (trt_iter_open_bulk) */
extern TamCursor *tam_cursor_open(uint64 tree, Oid relid, uint64 lo_vid, uint64 hi_vid, bool bulk);
/* for MVCC scans: jumps over vacant ranges, records new ones (cursor.c) */
extern TamCursor *tam_cursor_open_vacant(uint64 tree, Oid relid, uint64 lo_vid, uint64 hi_vid,
										 bool bulk);
extern void tam_cursor_note_live(TamCursor *c, uint64 vid);
/* also return stubs (VACUUM, the visibility map, lossy bitmap pages) */
extern void tam_cursor_include_stubs(TamCursor *c);
extern TamTuple *tam_cursor_next(TamCursor *c, ScanDirection dir);
extern void tam_cursor_seek(TamCursor *c, uint64 vid, ScanDirection dir);
/* the read point of the view the version last returned came from (tides_iter_read_point) */
extern uint64 tam_cursor_read_point(TamCursor *c);
extern void tam_cursor_close(TamCursor *c);

/* ---- fetch.c */

extern IndexFetchTableData *tam_index_fetch_begin(Relation rel);
extern void tam_index_fetch_reset(IndexFetchTableData *scan);
extern void tam_index_fetch_end(IndexFetchTableData *scan);
extern bool tam_index_fetch_tuple(IndexFetchTableData *scan, ItemPointer tid,
									Snapshot snapshot, TupleTableSlot *slot,
									bool *call_again, bool *all_dead);
extern bool tam_tuple_fetch_row_version(Relation rel, ItemPointer tid, Snapshot snapshot,
										  TupleTableSlot *slot);
extern bool tam_tuple_tid_valid(TableScanDesc scan, ItemPointer tid);
extern void tam_tuple_get_latest_tid(TableScanDesc scan, ItemPointer tid);
extern bool tam_tuple_satisfies_snapshot(Relation rel, TupleTableSlot *slot, Snapshot snapshot);
extern TransactionId tam_index_delete_tuples(Relation rel, TM_IndexDeleteOp *delstate);

/* store a version into a slot (copying) */
extern void tam_store_in_slot(TamTuple *t, TupleTableSlot *slot);

/* ---- ddl.c */

extern void tam_relation_set_new_filenode(Relation rel, const RelFileNode *newrnode,
											char persistence, TransactionId *freezeXid,
											MultiXactId *minmulti);
extern void tam_relation_nontransactional_truncate(Relation rel);
extern void tam_relation_copy_data(Relation rel, const RelFileNode *newrnode);
extern void tam_relation_copy_for_cluster(Relation OldTable, Relation NewTable,
											Relation OldIndex, bool use_sort,
											TransactionId OldestXmin, TransactionId *xid_cutoff,
											MultiXactId *multi_cutoff, double *num_tuples,
											double *tups_vacuumed, double *tups_recently_dead);
extern uint64 tam_relation_size(Relation rel, ForkNumber forkNumber);
extern bool tam_relation_needs_toast_table(Relation rel);
extern Oid	tam_relation_toast_am(Relation rel);
extern void tam_relation_estimate_size(Relation rel, int32 *attr_widths, BlockNumber *pages,
										 double *tuples, double *allvisfrac);

/* ---- hot.c: heap-only versions and their chains */

extern TamTuple *tam_hot_search(Relation rel, uint64 tree, ItemPointer tid, Snapshot snapshot,
									TamTupleBuf *buf, bool *all_dead, TrtIndexFetch *asker,
									bool first_call, bool may_prune, TamSeqReader *reader,
									Buffer *vmbuf);
extern bool tam_hot_update_allowed(Relation rel, Bitmapset *hot_attrs, TamTuple *old,
									 HeapTuple newtup);
extern bool tam_hot_chain_dead(Relation rel, uint64 tree, uint64 root_vid, GlobalVisState *vistest,
								 TransactionId *latest_removed);

/* pruning a chain: what VACUUM (against OldestXmin) and readers (on access) share */
typedef enum TamMemberFate
{
	TAM_MEMBER_DEAD,			/* dead to everyone */
	TAM_MEMBER_RECENTLY_DEAD, /* deleted, but someone may still see it */
	TAM_MEMBER_STAYS			/* anything else: it and every later member stay */
} TamMemberFate;

typedef TamMemberFate (*TamMemberJudge) (TamTuple *t, void *arg);

typedef struct TamHotPrune
{
	bool		root_is_stub;	/* the root is already a redirect */
	uint64		old_target;		/* ... to this member */
	uint64	   *chain;			/* members walked, from the root (or its target) */
	TransactionId *updaters;	/* each one's updater */
	uint16	   *depths;			/* each one's hot_depth */
	int			n;
	int			latestdead;		/* last member judged dead, or -1 */
} TamHotPrune;

extern bool tam_hot_prune_plan(Relation rel, uint64 tree, uint64 root_vid, TamTupleBuf *buf,
								 TamMemberJudge judge, void *arg, TamHotPrune *p);
extern void tam_hot_prune_members(tides_batch *b, uint64 tree, uint64 root_vid, TamHotPrune *p);
extern void tam_hot_prune_free(TamHotPrune *p);
extern void tam_hot_prune_opt(Relation rel, uint64 tree, uint64 root_vid);

/* ---- vm.c: the visibility map for index-only scans */

extern bool tam_vm_all_visible(Relation rel, uint64 vid, Buffer *vmbuf);
/* a copy of one visibility map page's bits (page Invalid: none) */
typedef struct TamVmCopy
{
	BlockNumber page;
	uint8		bits[BLCKSZ - MAXALIGN(SizeOfPageHeaderData)];
} TamVmCopy;
extern void tam_vm_copy_page(Relation rel, uint64 vid, TamVmCopy *copy);
extern bool tam_vm_copy_all_visible(const TamVmCopy *copy, uint64 vid);
extern void tam_vm_clear(Relation rel, uint64 vid);
extern void tam_vm_clear_chain(Relation rel, uint64 vid, uint64 root_vid);
extern void tam_vm_clear_range(Relation rel, uint64 first_vid, uint64 nvids);
extern bool tam_vm_block_visible_to_all(TamTuple *t, TransactionId oldest_xmin);
extern bool tam_vm_mark_block(Relation rel, uint64 tree, BlockNumber blk, TransactionId oldest_xmin,
							  uint64 judged_at);

/* ---- vacuum.c */

extern void tam_relation_vacuum(Relation rel, struct VacuumParams *params,
								  BufferAccessStrategy bstrategy);
extern void tam_sync_before_freezing(void);

/* ---- index_build.c */

extern double tam_index_build_range_scan(Relation table_rel, Relation index_rel,
										   struct IndexInfo *index_info, bool allow_sync,
										   bool anyvisible, bool progress,
										   BlockNumber start_blockno, BlockNumber numblocks,
										   IndexBuildCallback callback, void *callback_state,
										   TableScanDesc scan);
extern void tam_index_validate_scan(Relation table_rel, Relation index_rel,
									  struct IndexInfo *index_info, Snapshot snapshot,
									  struct ValidateIndexState *state);

#endif
