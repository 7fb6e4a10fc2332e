/*
 * row.h -- one row version being changed: where it lives, its stripe lock,
 * and its newest state.  Used by modify.c and tuple_lock.c.
 *
 * tides_row_lock_and_load() takes the stripe lock and reads the newest state;
 * while the lock is held nobody else can change the version, so a decision
 * taken on that state and the write that follows are atomic.  Never wait for
 * another transaction with the stripe lock held.
 */
#ifndef TIDES_ROW_H
#define TIDES_ROW_H

#include "am/tam.h"

typedef struct RowRef
{
	Relation	rel;
	uint64		tree;
	uint64		vid;
	ItemPointerData tid;
	LWLock	   *stripe;
	bool		locked;
	TidesTuple *t;
	TidesTupleBuf buf;
} RowRef;

extern void tides_row_open(RowRef *r, Relation rel, ItemPointer tid);
extern TidesTuple *tides_row_lock_and_load(RowRef *r);
extern void tides_row_unlock(RowRef *r);
extern void tides_row_close(RowRef *r);

/* write the row's new state, and optionally a second (new) version, in one batch */
extern void tides_row_write(RowRef *r, TidesTuple *t, uint64 new_vid, HeapTuple newtup,
							const TidesVersionMeta *newmeta);

/* did xmax change while we waited without the stripe lock? */
extern bool tides_xmax_changed(TidesTuple *t, TransactionId xwait, uint16 infomask);

/* after waiting for a plain xmax: hint it committed or invalid, as heap does */
extern void tides_update_xmax_hints(TidesTuple *t, TransactionId xwait);

extern void tides_fill_failure(TM_FailureData *tmfd, TidesTuple *t, TM_Result result);

#endif
