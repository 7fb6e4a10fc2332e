/*
 * row.c -- reading and writing one row version under its stripe lock
 * (see row.h).
 */
#include "postgres.h"

#include "storage/lwlock.h"

#include "am/row.h"


void
tides_row_open(RowRef *r, Relation rel, ItemPointer tid)
{
	memset(r, 0, sizeof(*r));
	r->rel = rel;
	r->tree = tides_rel_tree(rel);
	r->tid = *tid;
	if (!tides_tid_to_vid(tid, &r->vid))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("tides: invalid tuple identifier (%u,%u)",
						ItemPointerGetBlockNumberNoCheck(tid), ItemPointerGetOffsetNumberNoCheck(tid))));
	r->stripe = tides_row_lock(r->tree, r->vid);
	tides_tuple_buf_init(&r->buf, CurrentMemoryContext);
}

/* take the stripe lock and read the newest state (NULL: the version is gone) */
TidesTuple *
tides_row_lock_and_load(RowRef *r)
{
	Assert(!r->locked);
	LWLockAcquire(r->stripe, LW_EXCLUSIVE);
	r->locked = true;
	r->t = tides_fetch_version(r->tree, r->vid, RelationGetRelid(r->rel), &r->buf);
	return r->t;
}

void
tides_row_unlock(RowRef *r)
{
	if (r->locked)
		LWLockRelease(r->stripe);
	r->locked = false;
}

void
tides_row_close(RowRef *r)
{
	tides_row_unlock(r);
	tides_tuple_buf_free(&r->buf);
}

/* did the xmax change while we waited without the stripe lock? */
bool
tides_xmax_changed(TidesTuple *t, TransactionId xwait, uint16 infomask)
{
	const uint16 interesting = HEAP_XMAX_IS_MULTI | HEAP_XMAX_LOCK_ONLY | HEAP_LOCK_MASK;

	return t == NULL ||
		(t->htup.t_data->t_infomask & interesting) != (infomask & interesting) ||
		!TransactionIdEquals(HeapTupleHeaderGetRawXmax(t->htup.t_data), xwait);
}

/* after waiting for a plain xmax: hint it committed or invalid, as heap does */
void
tides_update_xmax_hints(TidesTuple *t, TransactionId xwait)
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
tides_fill_failure(TM_FailureData *tmfd, TidesTuple *t, TM_Result result)
{
	tmfd->ctid = t->htup.t_data->t_ctid;
	tmfd->xmax = HeapTupleHeaderGetUpdateXid(t->htup.t_data);
	tmfd->cmax = result == TM_SelfModified ? t->meta.cmax : InvalidCommandId;
}

/* write the row's new state (and optionally a second version) in one batch */
void
tides_row_write(RowRef *r, TidesTuple *t, uint64 new_vid, HeapTuple newtup, const TidesVersionMeta *newmeta)
{
	tides_batch *b = tides_local_batch();
	const uint16 xmin_hints = HEAP_XMIN_COMMITTED | HEAP_XMIN_INVALID;

	/*
	 * Visibility checks set xmin hints in memory only: a "committed" hint may
	 * be persisted only once the commit is durable (D5), so keep what was stored.
	 */
	t->htup.t_data->t_infomask = (t->htup.t_data->t_infomask & ~xmin_hints) |
		(t->stored_infomask & xmin_hints);
	tides_batch_add_version(b, r->tree, r->vid, &t->meta, t->htup.t_data, t->htup.t_len);
	if (newtup != NULL)
		tides_batch_add_version(b, r->tree, new_vid, newmeta, newtup->t_data, newtup->t_len);
	tides_xact_tag_batch(b);
	tides_write_batch(b);
}
