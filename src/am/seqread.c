/*
 * seqread.c -- root reads of index and bitmap fetches that come in vid order.
 *
 * An index whose order follows the table's (a key loaded in order, a
 * serial, a timestamp) hands the fetch its TIDs in ascending vid order,
 * mostly consecutive; a bitmap heap scan always does.  A point read
 * searches every memtable and level from the top for each row; an engine
 * iterator that stands just before the next vid reaches it in one step.  So
 * once SEQ_RUN reads in a row were each at most SEQ_WINDOW vids ahead of the
 * one before, the reader opens an iterator over the table's tree and steps
 * it forward for as long as the vids keep coming that way; any other vid is
 * left to a point read (the reader answers NULL: "don't know").
 *
 * Why a view older than the row may be read (tam_hot_search uses a reader
 * only for MVCC snapshots, and only for the first read of a walk that
 * starts at the root): the iterator is opened after the scan's snapshot was
 * taken, so it holds every write of every transaction that snapshot sees as
 * committed -- each wrote its rows before committing -- and whatever it
 * lacks was written by transactions the snapshot does not see, so it cannot
 * change what the snapshot sees (a later xmax of an invisible transaction
 * leaves the version visible; the transaction's own later commands are past
 * the snapshot's command id).  Versions pruned or vacuumed away since were
 * dead to this snapshot too.  A vid the iterator does not hold may belong
 * to a newer row, so the reader answers NULL and the caller reads the
 * engine.  A walk that restarts because a prune cut the chain it followed
 * reads the engine, not this view again.
 *
 * The iterator is a TrtIter, replaced every TRT_ITER_REFRESH_MS as scans'
 * are (src/runtime/iterators.c), so that it pins no memtable for long; the
 * fresh one is opened later than the snapshot as well.
 *
 * Just before it opens an iterator (and after the snapshot), the reader
 * copies the visibility map page of the vid it was asked for.  A version
 * the view holds in a block the copy has all-visible was read after the
 * bit was seen set, which is what tam_hint_all_visible asks; the map page
 * as it is when the version is read would not do, as VACUUM may have
 * removed a version this older view still holds and set the bit since.
 */
#include "postgres.h"

#include "utils/snapmgr.h"

#include "am/tam.h"

#define SEQ_RUN 2				/* in-order reads before an iterator opens */
#define SEQ_WINDOW 16			/* how far ahead (in vids) still counts as in order */

struct TamSeqReader
{
	MemoryContext cxt;			/* the reader's, which its iterator shares */
	TrtIter    *w;				/* NULL until the vids came in order */
	uint64		tree;
	uint64		last_vid;		/* the vid asked for last (0: none yet) */
	int			run;			/* reads in a row a little ahead of the one before */
	TamVmCopy  *vm;				/* the map page copied before the iterator opened */
};

TamSeqReader *
tam_seq_reader_create(MemoryContext cxt)
{
	TamSeqReader *r = MemoryContextAllocZero(cxt, sizeof(TamSeqReader));

	r->cxt = cxt;
	return r;
}

static void
close_iterator(TamSeqReader *r)
{
	trt_iter_free(r->w);
	r->w = NULL;
}

void
tam_seq_reader_free(TamSeqReader *r)
{
	if (r == NULL)
		return;
	close_iterator(r);
	if (r->vm != NULL)
		pfree(r->vm);
	pfree(r);
}

/* before a view opens: copy the map page of vid (see the file comment) */
static void
copy_map(TamSeqReader *r, Relation rel, Snapshot snapshot, uint64 vid)
{
	if (r->vm == NULL)
		r->vm = MemoryContextAlloc(r->cxt, sizeof(TamVmCopy));
	if (snapshot->takenDuringRecovery)
		r->vm->page = InvalidBlockNumber;
	else
		tam_vm_copy_page(rel, vid, r->vm);
}

static void
open_iterator(TamSeqReader *r, uint64 tree)
{
	uint8		lower[TRT_ROW_KEY_LEN];
	uint8		upper[TRT_ROW_KEY_LEN];
	MemoryContext old;

	trt_row_key(lower, tree, 0);
	trt_row_key(upper, tree + 1, 0);
	/* reads come in short-lived contexts; the iterator lives as long as the reader */
	old = MemoryContextSwitchTo(r->cxt);
	r->w = trt_iter_open(lower, sizeof(lower), upper, sizeof(upper), "read a table");
	MemoryContextSwitchTo(old);
	r->tree = tree;
}

/* the vid the iterator stands on, or 0 if it stands on none */
static uint64
current_vid(TamSeqReader *r)
{
	size_t		klen;
	const uint8 *k;

	if (!tides_iter_valid(r->w->it))
	{
		trt_iter_check(r->w);
		return 0;
	}
	k = tides_iter_key(r->w->it, &klen);
	return klen == TRT_ROW_KEY_LEN ? trt_row_key_vid(k) : 0;
}

TamTuple *
tam_seq_reader_read(TamSeqReader *r, Relation rel, uint64 tree, uint64 vid, Snapshot snapshot,
					TamTupleBuf *buf)
{
	bool		in_order = r->last_vid != 0 && vid > r->last_vid && vid - r->last_vid <= SEQ_WINDOW;
	uint64		cur;
	const void *val;
	size_t		vlen;
	TamTuple   *t;

	r->run = in_order ? r->run + 1 : 0;
	r->last_vid = vid;
	if (r->run < SEQ_RUN)
		return NULL;
	if (r->w != NULL && r->tree != tree)
		close_iterator(r);
	Assert(snapshot->snapshot_type == SNAPSHOT_MVCC);
	if (r->w == NULL)
	{
		copy_map(r, rel, snapshot, vid);
		open_iterator(r, tree);
		cur = 0;
	}
	else if (trt_iter_refresh_due(r->w))
	{
		copy_map(r, rel, snapshot, vid);
		trt_iter_reopen(r->w);
		cur = 0;
	}
	else
		cur = current_vid(r);

	if (cur != 0 && cur < vid && vid - cur <= SEQ_WINDOW)
	{
		while (cur != 0 && cur < vid)
		{
			tides_iter_next(r->w->it);
			cur = current_vid(r);
		}
	}
	else if (cur != vid)
	{
		uint8		key[TRT_ROW_KEY_LEN];

		trt_row_key(key, tree, vid);
		tides_iter_seek(r->w->it, key, sizeof(key));
		cur = current_vid(r);
	}
	if (cur != vid)
		return NULL;			/* not in this view: maybe newer than it */
	val = tides_iter_value(r->w->it, &vlen);
	/* a DELETE or UPDATE locks and reads this row next: trt_read_row */
	trt_iter_remember(r->w);
	t = tam_tuple_from_value((const char *) val, vlen, vid, RelationGetRelid(rel), buf);
	if (t != NULL && !TAM_IS_STUB(t) && tam_vm_copy_all_visible(r->vm, vid))
		tam_hint_all_visible(t, snapshot);
	return t;
}
