/*
 * cursor.c -- a raw cursor over the versions of one tree, in vid order.
 *
 * Every scan (sequential, TID range, parallel, bitmap lossy pages, analyze,
 * vacuum, index builds) walks versions through this: an engine iterator
 * bounded to [tree|lo_vid, tree|hi_vid), whose entries are turned into
 * TamTuples in a reused buffer.  The cursor reads the engine as of its
 * creation (a consistent view); visibility is the caller's business.
 * Stubs (redirects and dead items, see am/tam.h) are skipped unless the
 * caller asks for them.
 *
 * An engine iterator pins the memtables it reads, and a memtable slot is
 * reused only when nothing pins it: a scan that ran for minutes on one
 * iterator would stall every writer once the other slots filled.  So a
 * cursor that has lived longer than CURSOR_REFRESH_MS trades its iterator
 * for a fresh one positioned after the last entry it returned.  Its view is
 * then no longer one instant of the engine -- as heap's scans, which read
 * each page as it is when they reach it; visibility comes from the caller's
 * snapshot either way.
 */
#include "postgres.h"

#include "utils/timestamp.h"

#include "am/tam.h"

#define CURSOR_REFRESH_MS 200
#define CURSOR_CLOCK_EVERY 256	/* steps between looks at the clock */

struct TamCursor
{
	tides_iter *it;
	TimestampTz opened_at;
	uint32		steps;
	uint64		tree;
	Oid			relid;
	uint8		lower[TRT_ROW_KEY_LEN];
	uint8		upper[TRT_ROW_KEY_LEN];
	bool		started;
	bool		pending;		/* the iterator is on the next entry to return */
	bool		stubs;			/* return stubs too */
	TamTupleBuf buf;
};

static void
open_iterator(TamCursor *c)
{
	c->it = trt_open_range_iter(trt_engine(), c->lower, sizeof(c->lower), c->upper,
								  sizeof(c->upper), true);
	c->opened_at = GetCurrentTimestamp();
}

/* a fresh iterator, positioned so that the next step returns what follows */
static void
refresh(TamCursor *c, ScanDirection dir)
{
	uint8		key[TRT_ROW_KEY_LEN];
	size_t		klen;
	const void *k = tides_iter_key(c->it, &klen);
	const void *now;
	size_t		nlen;

	Assert(klen == sizeof(key));
	memcpy(key, k, sizeof(key));
	trt_close_iter(c->it);
	open_iterator(c);
	if (ScanDirectionIsBackward(dir))
		tides_iter_seek_for_prev(c->it, key, sizeof(key));
	else
		tides_iter_seek(c->it, key, sizeof(key));
	/* on the key itself: step past it as usual; else already on the next one */
	now = tides_iter_valid(c->it) ? tides_iter_key(c->it, &nlen) : NULL;
	c->pending = now == NULL || nlen != sizeof(key) || memcmp(now, key, sizeof(key)) != 0;
}

TamCursor *
tam_cursor_open(uint64 tree, Oid relid, uint64 lo_vid, uint64 hi_vid)
{
	TamCursor *c = palloc0(sizeof(TamCursor));

	c->tree = tree;
	c->relid = relid;
	tam_tuple_buf_init(&c->buf, CurrentMemoryContext);
	trt_row_key(c->lower, tree, lo_vid);
	if (hi_vid > TRT_VID_MAX)
		trt_row_key(c->upper, tree + 1, 0);	/* to the end of the tree */
	else
		trt_row_key(c->upper, tree, hi_vid);
	open_iterator(c);
	return c;
}

static TamTuple *
current(TamCursor *c)
{
	size_t		klen,
				vlen;
	const uint8 *k;
	const char *v;

	if (!tides_iter_valid(c->it))
	{
		tides_status s = tides_iter_status(c->it);

		if (s != TIDES_OK)
			trt_engine_error(s, "scan a table");
		return NULL;
	}
	k = tides_iter_key(c->it, &klen);
	v = tides_iter_value(c->it, &vlen);
	if (klen != TRT_ROW_KEY_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("tides: unexpected key of %zu bytes in relation %u", klen, c->relid)));
	return tam_tuple_from_value(v, vlen, trt_row_key_vid(k), c->relid, &c->buf);
}

static TamTuple *
step(TamCursor *c, ScanDirection dir)
{
	if (c->started && !c->pending && ++c->steps % CURSOR_CLOCK_EVERY == 0 &&
		tides_iter_valid(c->it) &&
		TimestampDifferenceExceeds(c->opened_at, GetCurrentTimestamp(), CURSOR_REFRESH_MS))
		refresh(c, dir);
	if (c->pending)
	{
		c->pending = false;
		return current(c);
	}
	if (!c->started)
	{
		c->started = true;
		if (ScanDirectionIsBackward(dir))
			tides_iter_last(c->it);
		else
			tides_iter_first(c->it);
	}
	else if (ScanDirectionIsBackward(dir))
	{
		if (tides_iter_valid(c->it))
			tides_iter_prev(c->it);
		else
			tides_iter_last(c->it);	/* ran off the end going forward: come back */
	}
	else
	{
		if (tides_iter_valid(c->it))
			tides_iter_next(c->it);
		else
			tides_iter_first(c->it);
	}
	return current(c);
}

TamTuple *
tam_cursor_next(TamCursor *c, ScanDirection dir)
{
	TamTuple *t;

	while ((t = step(c, dir)) != NULL && TAM_IS_STUB(t) && !c->stubs)
		;
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
	uint8		key[TRT_ROW_KEY_LEN];

	trt_row_key(key, c->tree, vid);
	if (ScanDirectionIsBackward(dir))
		tides_iter_seek_for_prev(c->it, key, sizeof(key));
	else
		tides_iter_seek(c->it, key, sizeof(key));
	c->started = true;
	c->pending = true;
}

void
tam_cursor_close(TamCursor *c)
{
	if (c == NULL)
		return;
	trt_close_iter(c->it);
	tam_tuple_buf_free(&c->buf);
	pfree(c);
}
