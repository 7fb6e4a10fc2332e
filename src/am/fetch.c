/*
 * fetch.c -- reading single versions by TID: index scans, EvalPlanQual
 * re-fetches, TID scans, and the index AM's questions about dead entries.
 *
 * An index TID names the root of a HOT chain: an index fetch walks the
 * chain to the member its snapshot sees (tam_hot_search, hot.c), and "all
 * dead" means every member is dead to everyone (or already removed by
 * VACUUM).  A fetch by a version's own TID (EvalPlanQual, TID scans) reads
 * exactly that version.
 */
#include "postgres.h"

#include "access/heapam_xlog.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "executor/tuptable.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/snapmgr.h"

#include "am/tam.h"

typedef struct TamIndexFetchData
{
	TrtIndexFetch head;			/* base, and what the index AM may set */
	uint64		tree;
	TamTupleBuf buf;
	TamSeqReader *reader;		/* for TIDs that come in vid order */
	Buffer		vmbuf;			/* visibility map page (tam_hot_search) */
} TamIndexFetchData;

IndexFetchTableData *
tam_index_fetch_begin(Relation rel)
{
	TamIndexFetchData *f = palloc0(sizeof(TamIndexFetchData));

	f->head.base.rel = rel;
	f->head.kills_logged = false;
	f->head.deleted_by = NULL;
	f->tree = trt_rel_tree(rel);
	tam_tuple_buf_init(&f->buf, CurrentMemoryContext);
	f->reader = tam_seq_reader_create(CurrentMemoryContext);
	f->vmbuf = InvalidBuffer;
	return &f->head.base;
}

void
tam_index_fetch_reset(IndexFetchTableData *scan)
{
}

void
tam_index_fetch_end(IndexFetchTableData *scan)
{
	TamIndexFetchData *f = (TamIndexFetchData *) scan;

	tam_tuple_buf_free(&f->buf);
	tam_seq_reader_free(f->reader);
	if (BufferIsValid(f->vmbuf))
		ReleaseBuffer(f->vmbuf);
	pfree(f);
}

static TamTuple *
fetch(uint64 tree, Relation rel, ItemPointer tid, TamTupleBuf *buf)
{
	uint64		vid;

	if (!trt_tid_to_vid(tid, &vid))
		return NULL;
	return tam_fetch_version(tree, vid, RelationGetRelid(rel), buf);
}

bool
tam_index_fetch_tuple(IndexFetchTableData *scan, ItemPointer tid, Snapshot snapshot,
						TupleTableSlot *slot, bool *call_again, bool *all_dead)
{
	TamIndexFetchData *f = (TamIndexFetchData *) scan;
	Relation	rel = f->head.base.rel;
	TamTuple *t;

	t = tam_hot_search(rel, f->tree, tid, snapshot, &f->buf, all_dead, &f->head,
					   !*call_again, true, f->reader, &f->vmbuf);
	if (t == NULL)
	{
		/* the end of the chain (a removed root reads as dead: TIDs are never reused) */
		*call_again = false;
		return false;
	}
	/* only a non-MVCC snapshot can see more than one member of a chain */
	*call_again = !IsMVCCSnapshot(snapshot);
	tam_store_in_slot(t, slot);
	return true;
}

bool
tam_tuple_fetch_row_version(Relation rel, ItemPointer tid, Snapshot snapshot, TupleTableSlot *slot)
{
	TamTupleBuf buf;
	TamTuple *t;
	bool		visible = false;

	tam_tuple_buf_init(&buf, CurrentMemoryContext);
	t = fetch(trt_rel_tree(rel), rel, tid, &buf);
	if (t != NULL)
	{
		visible = tam_visible(t, snapshot);
		tam_ssi_conflict_out(visible, rel, t, snapshot);
		if (visible)
		{
			PredicateLockTID(rel, &t->htup.t_self, snapshot, HeapTupleHeaderGetXmin(t->htup.t_data));
			tam_store_in_slot(t, slot);
		}
	}
	tam_tuple_buf_free(&buf);
	return visible;
}

bool
tam_tuple_tid_valid(TableScanDesc scan, ItemPointer tid)
{
	uint64		vid;

	return ItemPointerIsValid(tid) && trt_tid_to_vid(tid, &vid) &&
		vid < trt_vid_high_water(trt_rel_tree(scan->rs_rd));
}

void
tam_tuple_get_latest_tid(TableScanDesc scan, ItemPointer tid)
{
	Relation	rel = scan->rs_rd;
	Snapshot	snapshot = scan->rs_snapshot;
	uint64		tree = trt_rel_tree(rel);
	ItemPointerData ctid = *tid;
	TransactionId prior_xmax = InvalidTransactionId;
	TamTupleBuf buf;

	tam_tuple_buf_init(&buf, CurrentMemoryContext);
	for (;;)
	{
		TamTuple *t = fetch(tree, rel, &ctid, &buf);
		bool		visible;

		if (t == NULL)
			break;
		if (TransactionIdIsValid(prior_xmax) &&
			!TransactionIdEquals(prior_xmax, HeapTupleHeaderGetXmin(t->htup.t_data)))
			break;
		visible = tam_visible(t, snapshot);
		tam_ssi_conflict_out(visible, rel, t, snapshot);
		if (visible)
			*tid = ctid;
		if ((t->htup.t_data->t_infomask & HEAP_XMAX_INVALID) ||
			HeapTupleHeaderIsOnlyLocked(t->htup.t_data) ||
			HeapTupleHeaderIndicatesMovedPartitions(t->htup.t_data) ||
			ItemPointerEquals(&t->htup.t_self, &t->htup.t_data->t_ctid))
			break;
		ctid = t->htup.t_data->t_ctid;
		prior_xmax = HeapTupleHeaderGetUpdateXid(t->htup.t_data);
	}
	tam_tuple_buf_free(&buf);
}

bool
tam_tuple_satisfies_snapshot(Relation rel, TupleTableSlot *slot, Snapshot snapshot)
{
	TamTupleBuf buf;
	TamTuple *t;
	bool		visible = false;

	tam_tuple_buf_init(&buf, CurrentMemoryContext);
	/* the slot holds a copy: judge the version as it is now */
	t = fetch(trt_rel_tree(rel), rel, &slot->tts_tid, &buf);
	if (t != NULL)
		visible = tam_visible(t, snapshot);
	tam_tuple_buf_free(&buf);
	return visible;
}

/* bottom-up deletion: promising entries first, then in the index AM's order */
static int
bottomup_order(const void *a, const void *b, void *arg)
{
	const TM_IndexDelete *x = a,
			   *y = b;
	const TM_IndexStatus *status = arg;
	bool		px = status[x->id].promising,
				py = status[y->id].promising;

	if (px != py)
		return px ? -1 : 1;
	return x->id - y->id;
}

/*
 * Judging an entry costs tides a point read of its row (heap reads a block
 * it often has already), so the reads go where the index AM says they pay:
 *
 *   - Simple deletion: only the entries the index AM knows are deletable
 *     (LP_DEAD), for the xid a standby must wait for; they stay deletable.
 *     The "extra" entries heap checks in passing on the same blocks would
 *     each be a read here: they are left alone.
 *   - Bottom-up deletion: promising entries (duplicates left by updates)
 *     first, stopping once the freed space reaches the index AM's target or
 *     after BOTTOMUP_MAX_READS reads; the array shrinks to the entries
 *     judged, as heap's does to the blocks it visited.  Judging every entry
 *     of a page was 9% of the CPU of updates of an indexed column.
 */
#define BOTTOMUP_MAX_READS 64

TransactionId
tam_index_delete_tuples(Relation rel, TM_IndexDeleteOp *delstate)
{
	uint64		tree = trt_rel_tree(rel);
	GlobalVisState *vistest = GlobalVisTestFor(rel);
	TransactionId latest_removed = InvalidTransactionId;
	int			freed = 0;
	int			n = 0;

	if (delstate->bottomup)
		qsort_arg(delstate->deltids, delstate->ndeltids, sizeof(TM_IndexDelete), bottomup_order,
				  delstate->status);
	for (int i = 0; i < delstate->ndeltids; i++)
	{
		TM_IndexDelete *d = &delstate->deltids[i];
		TM_IndexStatus *st = &delstate->status[d->id];
		uint64		vid;
		bool		dead;

		if (!delstate->bottomup && !st->knowndeletable)
			continue;
		if (delstate->bottomup && (n >= BOTTOMUP_MAX_READS || freed >= delstate->bottomupfreespace))
			break;
		n++;
		dead = trt_tid_to_vid(&d->tid, &vid) &&
			tam_hot_chain_dead(rel, tree, vid, vistest, &latest_removed);
		if (delstate->bottomup)
		{
			st->knowndeletable = dead;
			if (dead)
				freed += st->freespace;
		}
	}
	if (delstate->bottomup)
		delstate->ndeltids = n;
	return latest_removed;
}
