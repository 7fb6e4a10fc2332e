/*
 * row.c -- reading and writing one row version under its stripe lock
 * (see row.h).
 */
#include "postgres.h"

#include "access/xact.h"
#include "storage/lwlock.h"

#include "am/row.h"


void
tam_row_open(RowRef *r, Relation rel, ItemPointer tid)
{
	memset(r, 0, sizeof(*r));
	r->rel = rel;
	r->tree = trt_rel_tree(rel);
	r->tid = *tid;
	if (!trt_tid_to_vid(tid, &r->vid))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("tides: invalid tuple identifier (%u,%u)",
						ItemPointerGetBlockNumberNoCheck(tid), ItemPointerGetOffsetNumberNoCheck(tid))));
	r->stripe = trt_row_lock(r->tree, r->vid);
	tam_tuple_buf_init(&r->buf, CurrentMemoryContext);
}

/* take the stripe lock and read the newest state (NULL: the version is gone) */
TamTuple *
tam_row_lock_and_load(RowRef *r)
{
	Assert(!r->locked);
	LWLockAcquire(r->stripe, LW_EXCLUSIVE);
	trt_row_lock_acquired(r->stripe);
	r->locked = true;
	r->t = tam_fetch_version(r->tree, r->vid, RelationGetRelid(r->rel), &r->buf);
	return r->t;
}

void
tam_row_unlock(RowRef *r)
{
	if (r->locked)
		LWLockRelease(r->stripe);
	r->locked = false;
}

void
tam_row_close(RowRef *r)
{
	tam_row_unlock(r);
	tam_tuple_buf_free(&r->buf);
}

/* did the xmax change while we waited without the stripe lock? */
bool
tam_xmax_changed(TamTuple *t, TransactionId xwait, uint16 infomask)
{
	const uint16 interesting = HEAP_XMAX_IS_MULTI | HEAP_XMAX_LOCK_ONLY | HEAP_LOCK_MASK;

	return t == NULL ||
		(t->htup.t_data->t_infomask & interesting) != (infomask & interesting) ||
		!TransactionIdEquals(HeapTupleHeaderGetRawXmax(t->htup.t_data), xwait);
}

/* after waiting for a plain xmax: hint it committed or invalid, as heap does */
void
tam_update_xmax_hints(TamTuple *t, TransactionId xwait)
{
	HeapTupleHeader h = t->htup.t_data;

	if (h->t_infomask & (HEAP_XMAX_COMMITTED | HEAP_XMAX_INVALID))
		return;
	if (!HEAP_XMAX_IS_LOCKED_ONLY(h->t_infomask) && TransactionIdDidCommit(xwait))
		h->t_infomask |= HEAP_XMAX_COMMITTED;
	else
		h->t_infomask |= HEAP_XMAX_INVALID;
}

void
tam_fill_failure(TM_FailureData *tmfd, TamTuple *t, TM_Result result)
{
	tmfd->ctid = t->htup.t_data->t_ctid;
	tmfd->xmax = HeapTupleHeaderGetUpdateXid(t->htup.t_data);
	tmfd->cmax = result == TM_SelfModified ? t->meta.cmax : InvalidCommandId;
}

/* write the row's new state (and optionally a second version) in one batch */
void
tam_row_write(RowRef *r, TamTuple *t, uint64 new_vid, HeapTuple newtup, const TamVersionMeta *newmeta)
{
	tides_batch *b = trt_local_batch();
	const uint16 xmin_hints = HEAP_XMIN_COMMITTED | HEAP_XMIN_INVALID;

	/* read-decide-write: the state decided on was read under the stripe lock */
	Assert(r->locked && LWLockHeldByMeInMode(r->stripe, LW_EXCLUSIVE));

	/*
	 * Visibility checks set xmin hints in memory only: a "committed" hint may
	 * be persisted only once the commit is durable (D5), so keep what was stored.
	 */
	t->htup.t_data->t_infomask = (t->htup.t_data->t_infomask & ~xmin_hints) |
		(t->stored_infomask & xmin_hints);
	tam_batch_add_version(b, r->tree, r->vid, &t->meta, t->htup.t_data, t->htup.t_len);
	if (newtup != NULL)
		tam_batch_add_version(b, r->tree, new_vid, newmeta, newtup->t_data, newtup->t_len);
	trt_xact_tag_batch(b);

	/*
	 * A HOT update changes nothing any other reader needs at once (section
	 * 3 of the README): the next writer of the row takes this stripe and
	 * waits for the write there, a snapshot sees the new version only once
	 * our seal is published, and a unique or exclusion check finds the same
	 * live key either way.  Under SSI a reader must see our xmax to
	 * note its rw-conflict, so there it waits as every other write does.
	 */
	if (newtup != NULL && HeapTupleIsHeapOnly(newtup) && !IsolationIsSerializable())
		trt_write_under_stripe(b, r->stripe);
	else
		trt_write_batch(b);
}
