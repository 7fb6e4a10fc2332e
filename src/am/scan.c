/*
 * scan.c -- sequential, TID-range, parallel, bitmap, sample and analyze
 * scans of tides tables.
 *
 * Rows are addressed by vid; TID (b, o) is vid b * 291 + o - 1, so a
 * "virtual block" is a range of 291 vids.  That is what lets block-based
 * machinery work unchanged: ANALYZE samples blocks, TABLESAMPLE SYSTEM picks
 * blocks, parallel scans hand out blocks, and a lossy bitmap page is a vid
 * range.  relation_size reports blocks up to the highest vid handed out.
 *
 * Predicate locks follow heap: a sequential or sample scan locks the whole
 * relation; bitmap scans lock the TIDs they return.
 */
#include "postgres.h"

#include <math.h>

#include "access/relscan.h"
#include "access/tableam.h"
#include "access/tsmapi.h"
#include "access/valid.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "commands/vacuum.h"
#include "common/pg_prng.h"
#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "am/tam.h"

typedef struct TamScanDescData
{
	TableScanDescData base;
	uint64		tree;
	TamCursor *cursor;
	/* TID range */
	uint64		lo_vid;
	uint64		hi_vid;			/* exclusive */
	/* parallel: the block being scanned */
	BlockNumber cur_block;
	bool		want_stubs;		/* cursors return stubs (tam_scan_next_root) */
	bool		bulk;			/* a sequential scan of a large table (scan_is_bulk) */
	GlobalVisState *vacant_test;	/* cursors use vacant ranges: what is dead to all */
	bool		ranged;			/* lo_vid/hi_vid set by tam_scan_set_block_range */
	bool		parallel_started;
	ParallelBlockTableScanWorkerData pbw;
	/* bitmap, sample, analyze: visible versions of the current block */
	TamTuple **page;
	HeapTuple  *page_heap;
	int			page_n;
	int			page_pos;
	int			page_cap;
	BlockNumber page_block;
	BlockNumber nblocks;		/* for sample scans */
	MemoryContext cxt;			/* the scan's own context (callbacks run in shorter ones) */
	MemoryContext page_cxt;
	TamTupleBuf fetchbuf;
	TamSeqReader *reader;		/* bitmap roots come in vid order (seqread.c) */
	/* analyze: row ids read per block (0: not decided yet), and what a row read counts for */
	int			analyze_window;
	double		analyze_scale;
} TamScanDescData;

typedef TamScanDescData *TamScanDesc;

/* the first vid of a (virtual) block; b may be one past MaxBlockNumber */
static uint64
block_first_vid(uint64 b)
{
	return (uint64) b * TRT_ROWS_PER_BLOCK;
}

/*
 * Where a sequential scan stops: the row ids handed out when it starts, as
 * heap's scans stop at the blocks the relation had (rows added later are
 * invisible to the scan's snapshot anyway; the cursor, which refreshes its
 * view, would otherwise chase them).
 */
static uint64
seqscan_end(TamScanDesc s)
{
	if ((s->base.rs_flags & SO_TYPE_SEQSCAN) && !s->ranged)
		return trt_vid_high_water(s->tree);
	return TRT_VID_MAX + 1;
}

/*
 * A sequential scan of a table whose tree has grown four times (and by a
 * megabyte) since this backend last planned against it: mostly dead
 * versions and deletions that a plan made now would price (the floor in
 * tam_relation_estimate_size) and a cached plan does not.  Invalidate the
 * relation at commit, so every backend makes its cached plans again -- a
 * prepared UPDATE of pgbench_branches then moves from this scan to the
 * primary key, as a statement planned each time already does.  Heap needs
 * nothing of the kind: pruning keeps its pages few.
 */
#define TAM_REPLAN_FACTOR 4.0
#define TAM_REPLAN_MIN_BYTES ((uint64) 1 << 20)

static void
replan_if_outgrown(Relation rel, uint32 flags)
{
	if ((flags & SO_TEMP_SNAPSHOT) || IsInParallelMode() || RecoveryInProgress())
		return;
	if (trt_rel_outgrew_plan(rel, TAM_REPLAN_FACTOR, TAM_REPLAN_MIN_BYTES))
		CacheInvalidateRelcache(rel);
}

/*
 * A sequential scan allowed a strategy (SO_ALLOW_STRAT, as heap's scans
 * that may use a ring of buffers: a query's scan, an index build's) of a
 * table larger than a quarter of the block cache
 * reads in bulk: what it reads from files stays out of the cache, so that
 * one pass over a large table neither evicts every other relation's
 * blocks nor pays an insertion per block for blocks nobody reads again
 * before they are evicted (heap's rule: larger than a quarter of
 * shared_buffers).
 */
static bool
scan_is_bulk(TamScanDesc s)
{
	return (s->base.rs_flags & SO_TYPE_SEQSCAN) && (s->base.rs_flags & SO_ALLOW_STRAT) &&
		trt_bulk_read_bytes(trt_rel_bytes_estimate(s->base.rs_rd));
}

TableScanDesc
tam_scan_begin(Relation rel, Snapshot snapshot, int nkeys, struct ScanKeyData *key,
				 ParallelTableScanDesc pscan, uint32 flags)
{
	TamScanDesc s = palloc0(sizeof(TamScanDescData));

	RelationIncrementReferenceCount(rel);
	s->base.rs_rd = rel;
	s->base.rs_snapshot = snapshot;
	s->base.rs_nkeys = nkeys;
	s->base.rs_flags = flags;
	s->base.rs_parallel = pscan;
	if (nkeys > 0)
	{
		s->base.rs_key = palloc(sizeof(ScanKeyData) * nkeys);
		memcpy(s->base.rs_key, key, sizeof(ScanKeyData) * nkeys);
	}
	s->tree = trt_rel_tree(rel);
	s->bulk = scan_is_bulk(s);
	s->lo_vid = 0;
	s->hi_vid = seqscan_end(s);
	s->cur_block = InvalidBlockNumber;
	s->page_block = InvalidBlockNumber;
	s->cxt = CurrentMemoryContext;
	s->page_cxt = AllocSetContextCreate(CurrentMemoryContext, "tides scan page", ALLOCSET_DEFAULT_SIZES);
	tam_tuple_buf_init(&s->fetchbuf, s->cxt);
	if (flags & (SO_TYPE_SEQSCAN | SO_TYPE_SAMPLESCAN))
		PredicateLockRelation(rel, snapshot);
	if (flags & SO_TYPE_SEQSCAN)
	{
		pgstat_count_heap_scan(rel);
		replan_if_outgrown(rel, flags);
	}
	return &s->base;
}

void
tam_scan_end(TableScanDesc sscan)
{
	TamScanDesc s = (TamScanDesc) sscan;

	tam_cursor_close(s->cursor);
	MemoryContextDelete(s->page_cxt);
	tam_tuple_buf_free(&s->fetchbuf);
	tam_seq_reader_free(s->reader);
	if (s->base.rs_key)
		pfree(s->base.rs_key);
	if (s->base.rs_flags & SO_TEMP_SNAPSHOT)
		UnregisterSnapshot(s->base.rs_snapshot);
	RelationDecrementReferenceCount(s->base.rs_rd);
	pfree(s);
}

void
tam_scan_rescan(TableScanDesc sscan, struct ScanKeyData *key, bool set_params, bool allow_strat,
				  bool allow_sync, bool allow_pagemode)
{
	TamScanDesc s = (TamScanDesc) sscan;

	if (key != NULL && s->base.rs_nkeys > 0)
		memcpy(s->base.rs_key, key, sizeof(ScanKeyData) * s->base.rs_nkeys);
	if (set_params)
	{
		if (allow_strat)
			s->base.rs_flags |= SO_ALLOW_STRAT;
		else
			s->base.rs_flags &= ~SO_ALLOW_STRAT;
		if (allow_sync)
			s->base.rs_flags |= SO_ALLOW_SYNC;
		else
			s->base.rs_flags &= ~SO_ALLOW_SYNC;
		if (allow_pagemode)
			s->base.rs_flags |= SO_ALLOW_PAGEMODE;
		else
			s->base.rs_flags &= ~SO_ALLOW_PAGEMODE;
		s->bulk = scan_is_bulk(s);
	}
	tam_cursor_close(s->cursor);
	s->cursor = NULL;
	if (!s->ranged && (s->base.rs_flags & SO_TYPE_SEQSCAN))
		s->hi_vid = seqscan_end(s);
	s->cur_block = InvalidBlockNumber;
	s->parallel_started = false;
	s->page_n = s->page_pos = 0;
	s->page_block = InvalidBlockNumber;
	MemoryContextReset(s->page_cxt);
	s->page = NULL;
	s->page_heap = NULL;
	s->page_cap = 0;
}

/* does the version pass the scan keys (catalog-style scans only)? */
static bool
passes_keys(TamScanDesc s, TamTuple *t)
{
	bool		ok;

	if (s->base.rs_nkeys == 0)
		return true;
	HeapKeyTest(&t->htup, RelationGetDescr(s->base.rs_rd), s->base.rs_nkeys, s->base.rs_key, ok);
	return ok;
}

void
tam_store_in_slot(TamTuple *t, TupleTableSlot *slot)
{
	/* the slot frees its tuple later, from its own context */
	MemoryContext old = MemoryContextSwitchTo(slot->tts_mcxt);
	HeapTuple	copy = tam_tuple_copy_heap(t);

	MemoryContextSwitchTo(old);
	ExecStoreHeapTuple(copy, slot, true);
	slot->tts_tableOid = t->htup.t_tableOid;
}

/* ---- parallel scans: blocks handed out by PostgreSQL's block allocator */

Size
tam_parallelscan_estimate(Relation rel)
{
	return table_block_parallelscan_estimate(rel);
}

/*
 * The leader sets up the shared scan before any worker starts: a parallel
 * plan's Gather, and a parallel CREATE INDEX (which runs no executor, so
 * the executor hook's tam_bulk_write_all does not see it).  The workers read
 * the engine, so this backend's rows of the table still waiting for it
 * (bulk.c) go there first -- before the table's size is taken, too.
 */
Size
tam_parallelscan_initialize(Relation rel, ParallelTableScanDesc pscan)
{
	tam_bulk_before_read(trt_rel_tree(rel), 0, UINT64_MAX);
	return table_block_parallelscan_initialize(rel, pscan);
}

void
tam_parallelscan_reinitialize(Relation rel, ParallelTableScanDesc pscan)
{
	table_block_parallelscan_reinitialize(rel, pscan);
}

/* next block of a parallel scan, or InvalidBlockNumber */
static BlockNumber
parallel_next_block(TamScanDesc s)
{
	ParallelBlockTableScanDesc pbscan = (ParallelBlockTableScanDesc) s->base.rs_parallel;
	ParallelBlockTableScanWorker pbw = &s->pbw;

	if (!s->parallel_started)
	{
		s->parallel_started = true;
		table_block_parallelscan_startblock_init(s->base.rs_rd, pbw, pbscan);
	}
	return table_block_parallelscan_nextpage(s->base.rs_rd, pbw, pbscan);
}

static bool open_next_range_in_cxt(TamScanDesc s);

/*
 * Sequential and TID-range scans under an MVCC snapshot jump over vacant
 * ranges and record new ones (src/runtime/vacant.c); other snapshots may
 * see what those ranges hold, and a hot standby cannot know them.
 */
static bool
uses_vacant_ranges(TamScanDesc s)
{
	return (s->base.rs_flags & (SO_TYPE_SEQSCAN | SO_TYPE_TIDRANGESCAN)) &&
		s->base.rs_snapshot != NULL && s->base.rs_snapshot->snapshot_type == SNAPSHOT_MVCC &&
		!s->want_stubs && !RecoveryInProgress();
}

static TamCursor *
open_cursor(TamScanDesc s, uint64 lo, uint64 hi)
{
	Relation	rel = s->base.rs_rd;

	s->vacant_test = NULL;
	if (!uses_vacant_ranges(s))
		return tam_cursor_open(s->tree, RelationGetRelid(rel), lo, hi, s->bulk);
	s->vacant_test = GlobalVisTestFor(rel);
	return tam_cursor_open_vacant(s->tree, RelationGetRelid(rel), lo, hi, s->bulk);
}

/* the cursor for the next unit of work; false when the scan is done */
static bool
open_next_range(TamScanDesc s)
{
	MemoryContext old = MemoryContextSwitchTo(s->cxt);
	bool		ok = open_next_range_in_cxt(s);

	MemoryContextSwitchTo(old);
	return ok;
}

static bool
open_next_range_in_cxt(TamScanDesc s)
{
	tam_cursor_close(s->cursor);
	s->cursor = NULL;
	if (s->base.rs_parallel == NULL)
	{
		if (s->cur_block != InvalidBlockNumber)
			return false;		/* the one range was done */
		s->cur_block = 0;
		s->cursor = open_cursor(s, s->lo_vid, s->hi_vid);
	}
	else
	{
		s->cur_block = parallel_next_block(s);
		if (s->cur_block == InvalidBlockNumber)
			return false;
		s->cursor = open_cursor(s, block_first_vid(s->cur_block),
								block_first_vid((uint64) s->cur_block + 1));
	}
	if (s->want_stubs)
		tam_cursor_include_stubs(s->cursor);
	return true;
}

static bool
next_visible(TamScanDesc s, ScanDirection dir, TupleTableSlot *slot)
{
	Snapshot	snap = s->base.rs_snapshot;
	Relation	rel = s->base.rs_rd;

	if (s->cursor == NULL && !open_next_range(s))
	{
		ExecClearTuple(slot);
		return false;
	}
	for (;;)
	{
		TamTuple *t;
		bool		visible;

		CHECK_FOR_INTERRUPTS();
		t = tam_cursor_next(s->cursor, dir);
		if (t == NULL)
		{
			if (s->base.rs_parallel == NULL || !open_next_range(s))
			{
				ExecClearTuple(slot);
				return false;
			}
			continue;
		}
		visible = tam_visible(t, snap);
		/* a version dead to all belongs to a vacant run; any other ends one */
		if (s->vacant_test != NULL && (visible || !tam_surely_dead(t, s->vacant_test, TAM_DEAD_NOW)))
			tam_cursor_note_live(s->cursor, t->vid);
		tam_ssi_conflict_out(visible, rel, t, snap);
		if (visible && passes_keys(s, t))
		{
			tam_store_in_slot(t, slot);
			pgstat_count_heap_getnext(rel);
			return true;
		}
	}
}

/*
 * The next version the scan reaches, visible or not, stubs included: every
 * key of the table once, in vid order (index builds, index_build.c).
 */
TamTuple *
tam_scan_next_version(TableScanDesc sscan)
{
	TamScanDesc s = (TamScanDesc) sscan;

	s->want_stubs = true;
	if (s->cursor == NULL && !open_next_range(s))
		return NULL;
	for (;;)
	{
		TamTuple *t = tam_cursor_next(s->cursor, ForwardScanDirection);

		if (t != NULL)
			return t;
		if (s->base.rs_parallel == NULL || !open_next_range(s))
			return NULL;
	}
}

/*
 * The next HOT chain root the scan reaches, visible or not: a version that
 * is not heap-only, or a redirect stub (index builds that walk each chain
 * from its root, see index_build.c).
 */
TamTuple *
tam_scan_next_root(TableScanDesc sscan)
{
	TamTuple *t;

	while ((t = tam_scan_next_version(sscan)) != NULL)
		if (TAM_IS_STUB(t) ? TAM_IS_REDIRECT(t) : !HeapTupleHeaderIsHeapOnly(t->htup.t_data))
			return t;
	return NULL;
}

/* limit a (non-parallel) scan to a range of virtual blocks */
void
tam_scan_set_block_range(TableScanDesc sscan, BlockNumber start, BlockNumber nblocks)
{
	TamScanDesc s = (TamScanDesc) sscan;

	s->ranged = true;
	s->lo_vid = block_first_vid(start);
	s->hi_vid = nblocks == InvalidBlockNumber ? TRT_VID_MAX + 1
		: block_first_vid((uint64) start + nblocks);
	tam_cursor_close(s->cursor);
	s->cursor = NULL;
	s->cur_block = InvalidBlockNumber;
}

bool
tam_scan_getnextslot(TableScanDesc sscan, ScanDirection direction, TupleTableSlot *slot)
{
	return next_visible((TamScanDesc) sscan, direction, slot);
}

void
tam_scan_set_tidrange(TableScanDesc sscan, ItemPointer mintid, ItemPointer maxtid)
{
	TamScanDesc s = (TamScanDesc) sscan;
	uint64		lo = 0,
				hi;

	/* offsets outside 1..291 are rounded inward, as heap would find no row there */
	if (ItemPointerGetOffsetNumberNoCheck(mintid) == 0)
		lo = block_first_vid(ItemPointerGetBlockNumberNoCheck(mintid));
	else if (!trt_tid_to_vid(mintid, &lo))
		lo = block_first_vid(ItemPointerGetBlockNumberNoCheck(mintid) + (uint64) 1);
	if (ItemPointerGetOffsetNumberNoCheck(maxtid) == 0)
		hi = block_first_vid(ItemPointerGetBlockNumberNoCheck(maxtid));
	else if (!trt_tid_to_vid(maxtid, &hi))
		hi = block_first_vid((uint64) ItemPointerGetBlockNumberNoCheck(maxtid) + 1);
	else
		hi = hi + 1;
	s->lo_vid = lo;
	s->hi_vid = Max(lo, hi);
	tam_cursor_close(s->cursor);
	s->cursor = NULL;
	s->cur_block = InvalidBlockNumber;
}

bool
tam_scan_getnextslot_tidrange(TableScanDesc sscan, ScanDirection direction, TupleTableSlot *slot)
{
	return next_visible((TamScanDesc) sscan, direction, slot);
}

/* ---- per-block collections (bitmap, sample, analyze) */

static void
page_reset(TamScanDesc s, BlockNumber block)
{
	MemoryContextReset(s->page_cxt);
	s->page = NULL;
	s->page_heap = NULL;
	s->page_cap = 0;
	s->page_n = s->page_pos = 0;
	s->page_block = block;
}

static void
page_add(TamScanDesc s, TamTuple *t)
{
	MemoryContext old = MemoryContextSwitchTo(s->page_cxt);
	Size		sz = MAXALIGN(sizeof(TamTuple)) + t->htup.t_len;
	TamTuple *copy = palloc(sz);

	if (s->page_n == s->page_cap)
	{
		s->page_cap = s->page_cap ? s->page_cap * 2 : 32;
		s->page = s->page ? repalloc(s->page, s->page_cap * sizeof(TamTuple *))
			: palloc(s->page_cap * sizeof(TamTuple *));
	}
	memcpy(copy, t, sz);
	copy->htup.t_data = TAM_TUPLE_DATA(copy);
	s->page[s->page_n++] = copy;
	MemoryContextSwitchTo(old);
}

/* collect all versions of a block (no visibility filter) */
static void
load_block_versions(TamScanDesc s, BlockNumber block)
{
	TamCursor *c;

	page_reset(s, block);
	c = tam_cursor_open(s->tree, RelationGetRelid(s->base.rs_rd),
						block_first_vid(block), block_first_vid((uint64) block + 1), false);
	{
		TamTuple *t;

		while ((t = tam_cursor_next(c, ForwardScanDirection)) != NULL)
			page_add(s, t);
	}
	tam_cursor_close(c);
}

/* the member of the chain rooted at vid that the scan sees, into the page */
static void
add_chain_member(TamScanDesc s, uint64 vid)
{
	ItemPointerData tid;
	TamTuple *t;

	trt_vid_to_tid(vid, &tid);
	if (s->reader == NULL)
		s->reader = tam_seq_reader_create(s->cxt);
	t = tam_hot_search(s->base.rs_rd, s->tree, &tid, s->base.rs_snapshot, &s->fetchbuf, NULL, NULL, true, true,
						 s->reader, NULL);
	if (t != NULL)
		page_add(s, t);
}

/*
 * A bitmap page names chain roots (index entries point at roots only), so
 * each offset, or for a lossy page each root in the block, is walked to the
 * member the snapshot sees -- which may live in another block.  Heap-only
 * versions in this block are reached from their own roots.
 */
bool
tam_scan_bitmap_next_block(TableScanDesc sscan, struct TBMIterateResult *tbmres)
{
	TamScanDesc s = (TamScanDesc) sscan;
	Snapshot	snap = s->base.rs_snapshot;
	Relation	rel = s->base.rs_rd;
	BlockNumber block = tbmres->blockno;

	page_reset(s, block);
	if ((uint64) block * TRT_ROWS_PER_BLOCK > trt_vid_high_water(s->tree))
		return false;
	if (tbmres->ntuples >= 0)
	{
		for (int i = 0; i < tbmres->ntuples; i++)
		{
			ItemPointerData tid;
			uint64		vid;

			ItemPointerSet(&tid, block, tbmres->offsets[i]);
			if (trt_tid_to_vid(&tid, &vid))
				add_chain_member(s, vid);
		}
	}
	else
	{
		TamCursor *c = tam_cursor_open(s->tree, RelationGetRelid(rel),
									   block_first_vid(block), block_first_vid((uint64) block + 1),
									   false);
		TamTuple *t;

		tam_cursor_include_stubs(c);
		while ((t = tam_cursor_next(c, ForwardScanDirection)) != NULL)
		{
			bool		visible;

			if (TAM_IS_STUB(t))
			{
				if (TAM_IS_REDIRECT(t))
					add_chain_member(s, t->vid);
				continue;
			}
			if (HeapTupleHeaderIsHeapOnly(t->htup.t_data))
				continue;
			if (HeapTupleHeaderIsHotUpdated(t->htup.t_data))
			{
				/* point reads: the cursor's position and tuple stay valid */
				add_chain_member(s, t->vid);
				continue;
			}
			visible = tam_visible(t, snap);
			tam_ssi_conflict_out(visible, rel, t, snap);
			if (visible)
			{
				PredicateLockTID(rel, &t->htup.t_self, snap, HeapTupleHeaderGetXmin(t->htup.t_data));
				page_add(s, t);
			}
		}
		tam_cursor_close(c);
	}
	return s->page_n > 0;
}

bool
tam_scan_bitmap_next_tuple(TableScanDesc sscan, struct TBMIterateResult *tbmres,
							 TupleTableSlot *slot)
{
	TamScanDesc s = (TamScanDesc) sscan;

	if (s->page_pos >= s->page_n)
		return false;
	tam_store_in_slot(s->page[s->page_pos++], slot);
	pgstat_count_heap_fetch(s->base.rs_rd);
	return true;
}

/* ---- TABLESAMPLE */

bool
tam_scan_sample_next_block(TableScanDesc sscan, struct SampleScanState *scanstate)
{
	TamScanDesc s = (TamScanDesc) sscan;
	TsmRoutine *tsm = scanstate->tsmroutine;
	BlockNumber block;

	if (s->page_block == InvalidBlockNumber && s->nblocks == 0)
		s->nblocks = (BlockNumber) ((trt_vid_high_water(s->tree) + TRT_ROWS_PER_BLOCK - 1) /
									TRT_ROWS_PER_BLOCK);
	if (tsm->NextSampleBlock)
		block = tsm->NextSampleBlock(scanstate, s->nblocks);
	else if (s->page_block == InvalidBlockNumber)
		block = s->nblocks > 0 ? 0 : InvalidBlockNumber;
	else
		block = s->page_block + 1 < s->nblocks ? s->page_block + 1 : InvalidBlockNumber;
	if (!BlockNumberIsValid(block))
	{
		page_reset(s, InvalidBlockNumber);
		s->nblocks = 0;
		return false;
	}
	load_block_versions(s, block);
	return true;
}

bool
tam_scan_sample_next_tuple(TableScanDesc sscan, struct SampleScanState *scanstate,
							 TupleTableSlot *slot)
{
	TamScanDesc s = (TamScanDesc) sscan;
	TsmRoutine *tsm = scanstate->tsmroutine;
	BlockNumber block = s->page_block;
	Snapshot	snap = s->base.rs_snapshot;

	for (;;)
	{
		OffsetNumber off;
		uint64		vid;
		TamTuple *t = NULL;

		CHECK_FOR_INTERRUPTS();
		off = tsm->NextSampleTuple(scanstate, block, TRT_ROWS_PER_BLOCK);
		if (!OffsetNumberIsValid(off))
		{
			ExecClearTuple(slot);
			return false;
		}
		vid = block_first_vid(block) + off - 1;
		/* versions of the block are sorted by vid */
		for (int i = 0; i < s->page_n; i++)
			if (s->page[i]->vid == vid)
			{
				t = s->page[i];
				break;
			}
		if (t == NULL)
			continue;
		{
			bool		visible = tam_visible(t, snap);

			tam_ssi_conflict_out(visible, s->base.rs_rd, t, snap);
			if (!visible)
				continue;
		}
		tam_store_in_slot(t, slot);
		pgstat_count_heap_getnext(s->base.rs_rd);
		return true;
	}
}

/* ---- ANALYZE
 *
 * ANALYZE samples blocks (as many as it wants rows, at most) and offers
 * every row of each to its reservoir.  A virtual block holds 291 row ids,
 * several heap pages' worth of rows, so a table of 24,000 blocks (7M rows)
 * had all its blocks sampled and every row read -- heap's ANALYZE of the same
 * rows reads a third of its pages -- and autovacuum's ANALYZE of a table
 * that keeps changing was a tenth of the server's CPU.  When the sampled
 * blocks would offer far more rows than the sample takes (ANALYZE_OVERSAMPLE
 * times), each block offers a window of contiguous row ids at a random
 * place in it instead, at least ANALYZE_WINDOW_MIN (a heap page's worth of
 * narrow rows), and every row read counts 291 / window times in the live
 * and dead counts, so that the totals ANALYZE derives from them (rows per
 * sampled block times blocks) stay unbiased.  Small tables, and all of
 * PostgreSQL's regression tables, are read whole as before.  Each window
 * gets a cursor bounded to it: one cursor sought from window to window
 * would, in a window of deleted rows, skip the engine's deletions up to the
 * next live row however far it lies -- past the whole deleted low end of a
 * queue table, once for every window inside it (ANALYZEs of 100 s).
 */
#define ANALYZE_OVERSAMPLE 20
#define ANALYZE_WINDOW_MIN 64

/* the rows ANALYZE will want: 300 per unit of the largest statistics target */
static double
analyze_target_rows(Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			target = default_statistics_target;

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && att->attstattarget > target)
			target = att->attstattarget;
	}
	return 300.0 * Max(target, 1);
}

static int
analyze_window(TamScanDesc s)
{
	double		nblocks = RelationGetNumberOfBlocks(s->base.rs_rd);
	double		targrows = analyze_target_rows(s->base.rs_rd);
	double		sampled = Min(nblocks, targrows);
	double		want = ceil(ANALYZE_OVERSAMPLE * targrows / Max(sampled, 1));

	if (sampled * TRT_ROWS_PER_BLOCK <= ANALYZE_OVERSAMPLE * targrows)
		return TRT_ROWS_PER_BLOCK;
	return (int) Min(TRT_ROWS_PER_BLOCK, Max(ANALYZE_WINDOW_MIN, want));
}

bool
tam_scan_analyze_next_block(TableScanDesc sscan, BlockNumber blockno,
							  BufferAccessStrategy bstrategy)
{
	TamScanDesc s = (TamScanDesc) sscan;
	uint64		lo = block_first_vid(blockno);

	if (s->analyze_window == 0)
	{
		s->analyze_window = analyze_window(s);
		s->analyze_scale = (double) TRT_ROWS_PER_BLOCK / s->analyze_window;
	}
	if (s->analyze_window < TRT_ROWS_PER_BLOCK)
		lo += pg_prng_uint64_range(&pg_global_prng_state, 0, TRT_ROWS_PER_BLOCK - s->analyze_window);
	tam_cursor_close(s->cursor);
	s->cursor = tam_cursor_open(s->tree, RelationGetRelid(s->base.rs_rd), lo, lo + s->analyze_window,
								false);
	return true;
}

bool
tam_scan_analyze_next_tuple(TableScanDesc sscan, TransactionId OldestXmin, double *liverows,
							  double *deadrows, TupleTableSlot *slot)
{
	TamScanDesc s = (TamScanDesc) sscan;
	TamTuple   *t;

	while ((t = tam_cursor_next(s->cursor, ForwardScanDirection)) != NULL)
	{
		TransactionId dead_after;
		bool		sample = false;

		switch (tam_satisfies_vacuum(t, OldestXmin, &dead_after))
		{
			case HEAPTUPLE_LIVE:
				sample = true;
				*liverows += s->analyze_scale;
				break;
			case HEAPTUPLE_DEAD:
			case HEAPTUPLE_RECENTLY_DEAD:
				*deadrows += s->analyze_scale;
				break;
			case HEAPTUPLE_INSERT_IN_PROGRESS:
				/* our own insertions count; others' will be counted when they commit */
				if (TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetXmin(t->htup.t_data)))
				{
					sample = true;
					*liverows += s->analyze_scale;
				}
				break;
			case HEAPTUPLE_DELETE_IN_PROGRESS:
				if (TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetUpdateXid(t->htup.t_data)))
					*deadrows += s->analyze_scale;
				else
				{
					sample = true;
					*liverows += s->analyze_scale;
				}
				break;
		}
		if (sample)
		{
			tam_store_in_slot(t, slot);
			return true;
		}
	}
	ExecClearTuple(slot);
	return false;
}
