/*
 * tidx_scan.h -- the state of a tides_btree index scan, shared by
 * tidx_scan.c (serial scans, batches) and tidx_parallel.c (parallel scans).
 * Nothing else includes it: the rest of the extension sees tidx.h.
 */
#ifndef TIDX_SCAN_H
#define TIDX_SCAN_H

#include "access/relscan.h"

#include "index/tidx.h"

/* entries killed at once (tidx_delete_keys) */
#define KILL_BATCH 128
/* entries a participant of a parallel scan claims, or a batch holds, at once */
#define TIDX_CHUNK 64

typedef enum PosState
{
	POS_START,					/* nothing read since rescan */
	POS_ON,						/* on an entry of interval cur */
	POS_END_FWD,				/* ran off the end going forward */
	POS_END_BWD					/* ran off the start going backward */
} PosState;

typedef struct TidxScan
{
	TidxDesc	d;
	MemoryContext cxt;			/* per-rescan state (reset by rescan) */
	MemoryContext filtercxt;	/* evaluating scan keys on one entry */
	TrtIter   *iter;
	/*
	 * An index-only or bitmap scan acts on entries without reading their
	 * rows when the visibility map says a block is all-visible: its view is
	 * held (runtime/held_views.c) from before the iterator opens to the end
	 * of the scan or the next rescan; 0 when none is.
	 */
	uint64		held_view;
	/*
	 * The table's low mark at rescan (runtime/low_marks.c): entries of
	 * row ids below it are of retired rows, stepped over unfetched.  A
	 * later, higher mark only means more entries are fetched and found dead.
	 */
	uint64		retired_below;
	bool		qual_ok;
	int			nintervals;
	TidxKeyRange *iv;
	int			nfilter;
	TidxFilterKey *filter;
	bool		counted;

	PosState	state;
	int			cur;
	uint8	   *curkey;			/* copy of the current entry's key */
	int			curkeylen;
	int			curkeycap;

	PosState	mark_state;
	int			mark_cur;
	uint8	   *markkey;
	int			markkeylen;
	int			markkeycap;

	char	   *itupbuf;		/* aligned copy of the current IndexTuple */
	Size		itupcap;

	bool		can_kill;
	Relation	heap;			/* whose horizon a kill reports (can_kill) */
	int			nkill;
	uint8	   *killkeys[KILL_BATCH];
	size_t		killlens[KILL_BATCH];

	/*
	 * Scan hints (tidx_hint.c): a forward scan from the start of a unique
	 * index seeks past the run of deleted entries the last one found, and
	 * records where its own first key was.
	 */
	bool		hint_ok;		/* this rescan may use and set a hint */
	uint64		hint_gen;		/* the hint generation before the iterator opened */
	bool		hint_pending;	/* the first key after hint_start is to be recorded */
	uint8		hint_start[TIDX_HINT_KEY_MAX];	/* where the first interval was entered */
	int			hint_startlen;
	uint64		snap_xmin;		/* tidx_hint_snapshot_xmin of the scan's snapshot */

	/*
	 * Dead runs (tidx_hint.c): while every entry this scan handed out since
	 * hint_start led to versions deleted by committed transactions (the
	 * table's fetch reports each into fetched_deleted_by), the newest
	 * deleter of them; at the first entry that did not, the scan records
	 * the run as a hint.
	 */
	bool		run_ok;			/* this rescan may record a dead run */
	bool		run_open;
	TransactionId run_deleted_by;	/* FrozenTransactionId: none yet */
	TransactionId fetched_deleted_by;

	/*
	 * A parallel scan, or a batched serial one: the entries of the chunk
	 * this participant claimed (or the batch read) last, returned in order
	 * from chunkpos (both made by the first chunk; other scans have none).
	 */
	MemoryContext chunkcxt;
	struct TidxChunk *chunk;
	int			nchunk;
	int			chunkpos;
	bool		batch_ok;		/* this rescan reads in batches */
	bool		batch_last;		/* the chunk is the scan's last (forward) */
} TidxScan;

/*
 * keys, intervals and, for index-only scans, tuples of a chunk (in
 * chunkcxt)
 */
typedef struct TidxChunk
{
	uint8	   *keys[TIDX_CHUNK];
	int			lens[TIDX_CHUNK];
	int			curs[TIDX_CHUNK];
	IndexTuple	itups[TIDX_CHUNK];
} TidxChunk;

/* make (k, klen) the scan's current key (a copy) */
extern void tidx_save_current_key(TidxScan *so, const uint8 *k, size_t klen);

/*
 * Copy up to TIDX_CHUNK entries, from the scan's position on, into
 * so->chunk; the position ends on the last one copied (or at the end).
 */
extern void tidx_fill_chunk(IndexScanDesc scan, ScanDirection dir);

/* a parallel scan: claim the next chunk into so->chunk; false when none is left */
extern bool tidx_claim_chunk(IndexScanDesc scan, ScanDirection dir);

#endif							/* TIDX_SCAN_H */
