/*
 * cursor.c -- a raw cursor over the versions of one tree, in vid order.
 *
 * Every scan (sequential, TID range, parallel, bitmap lossy pages, analyze,
 * vacuum, index builds) walks versions through this: an engine iterator
 * bounded to [tree|lo_vid, tree|hi_vid), whose entries are turned into
 * TamTuples in a reused buffer.  The cursor reads a consistent view of
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
};

TamCursor *
tam_cursor_open(uint64 tree, Oid relid, uint64 lo_vid, uint64 hi_vid)
{
	TamCursor *c = palloc0(sizeof(TamCursor));
	uint8		lower[TRT_ROW_KEY_LEN];
	uint8		upper[TRT_ROW_KEY_LEN];

	tam_bulk_before_read(tree, lo_vid, hi_vid);
	c->tree = tree;
	c->relid = relid;
	tam_tuple_buf_init(&c->buf, CurrentMemoryContext);
	trt_row_key(lower, tree, lo_vid);
	if (hi_vid > TRT_VID_MAX)
		trt_row_key(upper, tree + 1, 0);	/* to the end of the tree */
	else
		trt_row_key(upper, tree, hi_vid);
	c->w = trt_iter_open(lower, sizeof(lower), upper, sizeof(upper), "scan a table");
	return c;
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
		tides_iter_seek_for_prev(c->w->it, key, sizeof(key));
	else
		tides_iter_seek(c->w->it, key, sizeof(key));
	c->started = true;
	c->pending = true;
}

void
tam_cursor_close(TamCursor *c)
{
	if (c == NULL)
		return;
	trt_iter_free(c->w);
	tam_tuple_buf_free(&c->buf);
	pfree(c);
}
