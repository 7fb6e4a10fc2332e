/*
 * cursor.c -- a raw cursor over the versions of one tree, in vid order.
 *
 * Every scan (sequential, TID range, parallel, bitmap lossy pages, analyze,
 * vacuum, index builds) walks versions through this: an engine iterator
 * bounded to [tree|lo_vid, tree|hi_vid) -- never below the tree's low mark,
 * under which every row id is retired (src/runtime/low_marks.c) -- whose
 * entries are turned into TamTuples in a reused buffer.  The cursor reads a consistent view of
 * the engine (until a refresh, below); visibility is the caller's business.
 * Stubs (redirects and dead items, see am/tam.h) are skipped unless the
 * caller asks for them.
 *
 * The cursor steps a TrtIter (src/runtime/iterators.c), which trades its
 * engine iterator for a fresh one every TRT_ITER_REFRESH_MS, positioned
 * after the last entry it returned, so that a scan that runs for minutes
 * pins no memtable for long.  Its view is then no longer one instant of the
 * engine -- as heap's scans, which read each page as it is when they reach
 * it; visibility comes from the caller's snapshot either way.
 *
 * A cursor opened with tam_cursor_open_vacant (sequential scans under an
 * MVCC snapshot) seeks past the tree's vacant ranges (src/runtime/vacant.c)
 * instead of stepping through them, and records new ones: going forward
 * from where it began, it keeps the first vid of the current run of vids
 * holding nothing a snapshot can see -- stubs, absent vids and the versions
 * its caller did not report as possibly alive (tam_cursor_note_live) --
 * and when a live version or the end closes a run that known ranges do not
 * mostly cover, it records the run, cut at the settled mark it read before
 * its first engine view.
 */
#include "postgres.h"

#include "am/tam.h"

struct TamCursor
{
	TrtIter    *w;
	uint64		tree;
	Oid			relid;
	bool		started;
	bool		pending;		/* the iterator is on the next entry to return */
	bool		stubs;			/* return stubs too */
	TamTupleBuf buf;
	uint64		lo_vid;
	uint64		hi_vid;			/* exclusive */
	/* vacant ranges (tam_cursor_open_vacant) */
	bool		recording;		/* stepping forward from lo_vid: runs are exact */
	int			nvacant;
	TrtVidRange vacant[TRT_VACANT_RANGES];
	uint64		settled;		/* trt_vids_settled_below before the first view */
	uint64		run_lo;			/* where the current run of vacant vids began */
	uint64		jumps;			/* seeks past a vacant range, counted at close */
};

/* a run is recorded when at least this many of its vids are in no known range */
#define TAM_VACANT_MIN_NEW 32

TamCursor *
tam_cursor_open(uint64 tree, Oid relid, uint64 lo_vid, uint64 hi_vid, bool bulk)
{
	TamCursor *c = palloc0(sizeof(TamCursor));
	uint8		lower[TRT_ROW_KEY_LEN];
	uint8		upper[TRT_ROW_KEY_LEN];

	/*
	 * Retired row ids hold nothing anyone may see (src/runtime/low_marks.c):
	 * no scan walks the dead versions compaction has not dropped yet -- nor
	 * ANALYZE, which would count them dead for good.
	 */
	hi_vid = Min(hi_vid, TRT_VID_MAX + 1);
	lo_vid = Max(lo_vid, Min(trt_tree_low_mark(tree), hi_vid));
	tam_bulk_before_read(tree, lo_vid, hi_vid);
	c->tree = tree;
	c->relid = relid;
	c->lo_vid = lo_vid;
	c->hi_vid = hi_vid;
	tam_tuple_buf_init(&c->buf, CurrentMemoryContext);
	trt_row_key(lower, tree, lo_vid);
	if (hi_vid > TRT_VID_MAX)
		trt_row_key(upper, tree + 1, 0);	/* to the end of the tree */
	else
		trt_row_key(upper, tree, hi_vid);
	c->w = bulk ? trt_iter_open_bulk(lower, sizeof(lower), upper, sizeof(upper), "scan a table") :
		trt_iter_open(lower, sizeof(lower), upper, sizeof(upper), "scan a table");
	return c;
}

/*
 * A cursor for a scan under an MVCC snapshot: it jumps over vacant ranges
 * and records new ones, for which its caller must report every version it
 * gets that is not dead to all (tam_cursor_note_live).
 */
TamCursor *
tam_cursor_open_vacant(uint64 tree, Oid relid, uint64 lo_vid, uint64 hi_vid, bool bulk)
{
	uint64		settled;
	TrtVidRange vacant[TRT_VACANT_RANGES];
	int			n;
	TamCursor  *c;

	Assert(!RecoveryInProgress());
	/* before the engine view: rows below it that the view lacks never come */
	settled = trt_vids_settled_below(tree);
	n = trt_vacant_load(tree, vacant);
	c = tam_cursor_open(tree, relid, lo_vid, hi_vid, bulk);
	c->recording = true;
	c->settled = settled;
	c->run_lo = c->lo_vid;
	c->nvacant = n;
	memcpy(c->vacant, vacant, n * sizeof(TrtVidRange));
	return c;
}

/* the vid of the entry the iterator is on */
static uint64
current_vid(TamCursor *c)
{
	size_t		klen;
	const uint8 *k = tides_iter_key(c->w->it, &klen);

	return klen == TRT_ROW_KEY_LEN ? trt_row_key_vid(k) : 0;
}

/* the known vacant range holding vid, or NULL */
static const TrtVidRange *
vacant_at(TamCursor *c, uint64 vid)
{
	for (int i = 0; i < c->nvacant; i++)
		if (c->vacant[i].lo <= vid && vid < c->vacant[i].hi)
			return &c->vacant[i];
	return NULL;
}

static void position_at(TamCursor *c, uint64 vid, ScanDirection dir);

/* if the next step would enter a vacant range, seek past it instead */
static void
jump_vacant(TamCursor *c, ScanDirection dir)
{
	const TrtVidRange *r;
	uint64		next;

	if (c->nvacant == 0 || c->pending)
		return;
	if (c->started && !tides_iter_valid(c->w->it))
		return;
	if (ScanDirectionIsBackward(dir))
	{
		if (!c->started)
			next = c->hi_vid - 1;
		else if ((next = current_vid(c)) == 0)
			return;
		else
			next--;
		/* a range from vid 0 has nothing before it to seek to: step through */
		if ((r = vacant_at(c, next)) != NULL && r->lo > 0)
		{
			position_at(c, r->lo - 1, dir);
			c->jumps++;
		}
		return;
	}
	next = c->started ? current_vid(c) + 1 : c->lo_vid;
	if ((r = vacant_at(c, next)) != NULL)
	{
		/* past hi_vid the iterator's bound leaves it invalid: the end */
		position_at(c, r->hi, dir);
		c->jumps++;
	}
}

/* vids of [lo, hi) in known ranges */
static uint64
covered(TamCursor *c, uint64 lo, uint64 hi)
{
	uint64		n = 0;

	for (int i = 0; i < c->nvacant; i++)
	{
		uint64		a = Max(lo, c->vacant[i].lo),
					b = Min(hi, c->vacant[i].hi);

		if (a < b)
			n += b - a;
	}
	return n;
}

/* the run of vacant vids from run_lo ends at end (exclusive) */
static void
close_run(TamCursor *c, uint64 end)
{
	uint64		hi = Min(end, c->settled);

	if (hi > c->run_lo && hi - c->run_lo - covered(c, c->run_lo, hi) >= TAM_VACANT_MIN_NEW)
		trt_vacant_add(c->tree, c->run_lo, hi);
}

/*
 * The caller's judgement of the version the cursor last returned: it may
 * be visible to some snapshot now or later (not dead to all).
 */
void
tam_cursor_note_live(TamCursor *c, uint64 vid)
{
	if (!c->recording)
		return;
	Assert(vid >= c->run_lo);
	close_run(c, vid);
	c->run_lo = vid + 1;
}

static TamTuple *
current(TamCursor *c)
{
	size_t		klen,
				vlen;
	const uint8 *k;
	const char *v;

	if (!tides_iter_valid(c->w->it))
	{
		trt_iter_check(c->w);
		return NULL;
	}
	k = tides_iter_key(c->w->it, &klen);
	v = tides_iter_value(c->w->it, &vlen);
	if (klen != TRT_ROW_KEY_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("tides: unexpected key of %zu bytes in relation %u", klen, c->relid)));
	return tam_tuple_from_value(v, vlen, trt_row_key_vid(k), c->relid, &c->buf);
}

static TamTuple *
step(TamCursor *c, ScanDirection dir)
{
	tides_iter *it = c->w->it;

	if (c->pending)
	{
		c->pending = false;
		return current(c);
	}
	if (!c->started)
	{
		c->started = true;
		if (ScanDirectionIsBackward(dir))
			tides_iter_last(it);
		else
			tides_iter_first(it);
	}
	else if (ScanDirectionIsBackward(dir))
	{
		if (tides_iter_valid(it))
			trt_iter_prev(c->w);
		else
			tides_iter_last(it);	/* ran off the end going forward: come back */
	}
	else
	{
		if (tides_iter_valid(it))
			trt_iter_next(c->w);
		else
			tides_iter_first(it);
	}
	return current(c);
}

TamTuple *
tam_cursor_next(TamCursor *c, ScanDirection dir)
{
	TamTuple *t;

	if (ScanDirectionIsBackward(dir))
		c->recording = false;
	do
	{
		jump_vacant(c, dir);
		t = step(c, dir);
	} while (t != NULL && TAM_IS_STUB(t) && !c->stubs);
	if (t == NULL && c->recording)
	{
		close_run(c, c->hi_vid);
		c->recording = false;
	}
	return t;
}

void
tam_cursor_include_stubs(TamCursor *c)
{
	c->stubs = true;
}

/* position so that the next tam_cursor_next(dir) returns vid (or the next one in dir) */
void
tam_cursor_seek(TamCursor *c, uint64 vid, ScanDirection dir)
{
	/* the run before vid was not walked */
	c->recording = false;
	position_at(c, vid, dir);
}

static void
position_at(TamCursor *c, uint64 vid, ScanDirection dir)
{
	uint8		key[TRT_ROW_KEY_LEN];

	trt_row_key(key, c->tree, vid);
	if (ScanDirectionIsBackward(dir))
		tides_iter_seek_for_prev(c->w->it, key, sizeof(key));
	else
		tides_iter_seek(c->w->it, key, sizeof(key));
	c->started = true;
	c->pending = true;
}

uint64
tam_cursor_read_point(TamCursor *c)
{
	Assert(c->started && !c->pending && tides_iter_valid(c->w->it));
	return tides_iter_read_point(c->w->it);
}

void
tam_cursor_close(TamCursor *c)
{
	if (c == NULL)
		return;
	if (c->jumps > 0)
		trt_vacant_count_jumps(c->jumps);
	trt_iter_free(c->w);
	tam_tuple_buf_free(&c->buf);
	pfree(c);
}
