/*
 * row.h -- one row version being changed: where it lives, its stripe lock,
 * and its newest state.  Used by modify.c and tuple_lock.c.
 *
 * tam_row_lock_and_load() takes the stripe lock and reads the newest state;
 * while the lock is held nobody else can change the version, so a decision
 * taken on that state and the write that follows are atomic.  Never wait for
 * another transaction with the stripe lock held.
 */
#ifndef TAM_ROW_H
#define TAM_ROW_H

#include "am/tam.h"

typedef struct RowRef
{
	Relation	rel;
	uint64		tree;
	uint64		vid;
	ItemPointerData tid;
	LWLock	   *stripe;
	bool		locked;
	TamTuple *t;
	TamTupleBuf buf;
} RowRef;

extern void tam_row_open(RowRef *r, Relation rel, ItemPointer tid);
extern TamTuple *tam_row_lock_and_load(RowRef *r);
extern void tam_row_unlock(RowRef *r);
extern void tam_row_close(RowRef *r);

/* write the row's new state, and optionally a second (new) version, in one batch */
extern void tam_row_write(RowRef *r, TamTuple *t, uint64 new_vid, HeapTuple newtup,
							const TamVersionMeta *newmeta);

/* did xmax change while we waited without the stripe lock? */
extern bool tam_xmax_changed(TamTuple *t, TransactionId xwait, uint16 infomask);

/* after waiting for a plain xmax: hint it committed or invalid, as heap does */
extern void tam_update_xmax_hints(TamTuple *t, TransactionId xwait);

extern void tam_fill_failure(TM_FailureData *tmfd, TamTuple *t, TM_Result result);

#endif
