/*
 * tidx_parallel.c -- parallel index and index-only scans of tides_btree.
 *
 * Participants of a parallel scan (amcanparallel) claim the entries that
 * pass the scan keys in chunks, in scan order, as nbtree's claim pages: the
 * shared area says where the unclaimed entries start -- the position state,
 * interval and key of the last entry claimed, what a serial scan keeps in
 * state, cur and curkey -- and one participant at a time moves it on.  A
 * participant seizes the area (sleeping while another advances it), loads
 * that position, walks up to TIDX_CHUNK entries on from it with its own
 * iterator (tidx_fill_chunk, as a serial scan goes on from its current key),
 * copies them out, stores the position it reached and lets go; then it
 * returns its copies one by one.  So every entry goes to one participant,
 * and each participant's entries come in scan order (Gather Merge relies on
 * it).
 *
 * Each participant opened its iterator at its own rescan, so they read the
 * index at different moments, as a serial scan's refreshed iterator does
 * (TrtIter): an entry one view has and another lacks belongs to a row the
 * query's snapshot cannot see -- entries go only when their rows are dead to
 * everyone, and one written after another participant's view began points
 * at a row whose inserter the snapshot does not see.
 */
#include "postgres.h"

#include "access/relscan.h"
#include "pgstat.h"
#include "storage/condition_variable.h"
#include "storage/spin.h"

#include "index/tidx.h"
#include "index/tidx_scan.h"

typedef struct TidxParallel
{
	slock_t		mutex;
	bool		advancing;		/* a participant is claiming a chunk */
	ConditionVariable cv;		/* broadcast when it is done */
	/* where the unclaimed entries start (PosState, interval, last key claimed) */
	int			state;
	int			cur;
	int			keylen;
	uint8		key[FLEXIBLE_ARRAY_MEMBER];	/* TIDX_MAX_KEY_LEN bytes */
} TidxParallel;

static TidxParallel *
parallel_area(IndexScanDesc scan)
{
	return (TidxParallel *) OffsetToPointer(scan->parallel_scan, scan->parallel_scan->ps_offset);
}

Size
tidx_estimateparallelscan(void)
{
	return add_size(offsetof(TidxParallel, key), TIDX_MAX_KEY_LEN);
}

static void
parallel_reset(TidxParallel *p)
{
	p->advancing = false;
	p->state = POS_START;
	p->cur = 0;
	p->keylen = 0;
}

void
tidx_initparallelscan(void *target)
{
	TidxParallel *p = (TidxParallel *) target;

	SpinLockInit(&p->mutex);
	ConditionVariableInit(&p->cv);
	parallel_reset(p);
}

/* the leader, before the participants rescan */
void
tidx_parallelrescan(IndexScanDesc scan)
{
	TidxParallel *p = parallel_area(scan);

	SpinLockAcquire(&p->mutex);
	parallel_reset(p);
	SpinLockRelease(&p->mutex);
}

/*
 * Claim the next chunk of the scan into so->chunk: false when nothing is
 * left.  An error while advancing ends the whole parallel query, as in
 * nbtree, so the area is not given back then.
 */
bool
tidx_claim_chunk(IndexScanDesc scan, ScanDirection dir)
{
	TidxScan   *so = (TidxScan *) scan->opaque;
	TidxParallel *p = parallel_area(scan);

	for (;;)
	{
		bool		mine;

		SpinLockAcquire(&p->mutex);
		mine = !p->advancing;
		p->advancing = true;
		SpinLockRelease(&p->mutex);
		if (mine)
			break;
		ConditionVariableSleep(&p->cv, PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();

	/* the area is this participant's until it stores the new position */
	so->state = (PosState) p->state;
	so->cur = p->cur;
	if (so->state == POS_ON)
		tidx_save_current_key(so, p->key, p->keylen);
	tidx_fill_chunk(scan, dir);
	Assert(so->state != POS_ON || so->curkeylen <= TIDX_MAX_KEY_LEN);
	p->state = so->state;
	p->cur = so->cur;
	if (so->state == POS_ON)
	{
		memcpy(p->key, so->curkey, so->curkeylen);
		p->keylen = so->curkeylen;
	}
	SpinLockAcquire(&p->mutex);
	p->advancing = false;
	SpinLockRelease(&p->mutex);
	ConditionVariableBroadcast(&p->cv);
	return so->nchunk > 0;
}

