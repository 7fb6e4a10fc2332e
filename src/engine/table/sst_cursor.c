/*
 * sst_cursor.c -- the three-level cursor of an SSTable and the table
 * iterator built on it.
 *
 * A table is a three-level structure: the top index (decoded once at open
 * and kept in process memory: one entry per partition), index partitions
 * and data blocks (both fetched through the block cache).  One cursor walks
 * all three levels for both iterators and point lookups (sst_reader.c);
 * each level is a tides_block_iter, and each cursor owns the buffers its
 * blocks live in, so moving within and between blocks allocates nothing
 * once the buffers have grown to the largest block seen.  A block is
 * reloaded only when the handle differs from the one already loaded.  A
 * cursor passing forward through many blocks may have them fetched ahead
 * (table/block_fetch.h).
 */
#include "table/sst_impl.h"

#include <stdlib.h>
#include <string.h>

#include "cache/block_cache.h"
#include "table/filter.h"

/*
 * Forward block changes in a row after which a fetchable cursor starts a
 * fetch: a pass, not a seek followed by a step or two.
 */
#define FETCH_AFTER_BLOCKS 2

typedef struct sst_iter
{
	tides_iiter base;
	sst_cursor	c;
	void		(*on_destroy) (void *arg, tides_sst *t);
	void	   *arg;
} sst_iter;

/* ---------------------------------------------------------------- cursor */

void
sst_cursor_init(sst_cursor *c, tides_sst *t, tides_read_mode mode, tides_error *err)
{
	c->t = t;
	c->mode = mode;
	c->err = err;
	tides_block_iter_init(&c->top, true, err);
	tides_block_iter_init(&c->part, true, err);
	tides_block_iter_init(&c->data, true, err);
	tides_buf_init(&c->part_buf);
	tides_buf_init(&c->data_buf);
	tides_buf_init(&c->filter_buf);
	tides_buf_init(&c->tmp);
	tides_buf_init(&c->key);
	tides_buf_init(&c->val);
	tides_buf_init(&c->gkey);
	c->okey = NULL;
	c->oklen = 0;
	c->part_off = c->data_off = UINT64_MAX;
	c->ahead = false;
	tides_readahead_init(&c->ra);
	c->fetchable = false;
	c->run = 0;
	c->fetch = NULL;
	tides_block_iter_reset(&c->top, t->top.data, t->top.len, t->fname, 0);
	tides_block_iter_reset(&c->part, NULL, 0, t->fname, 0);
	tides_block_iter_reset(&c->data, NULL, 0, t->fname, 0);
	/* the resets of the empty levels report "too short": not an error */
	tides_error_clear(err);
}

/* the reader moved other than forward, or is done: no fetch ahead */
static void
fetch_stop(sst_cursor *c)
{
	c->run = 0;
	if (c->fetch == NULL)
		return;
	tides_block_fetch_free(c->fetch);
	c->fetch = NULL;
}

/* the reader moved forward into the next block: fetch the ones after it? */
static void
fetch_consider(sst_cursor *c)
{
	if (!c->fetchable || c->fetch != NULL || ++c->run < FETCH_AFTER_BLOCKS)
		return;
	c->fetch = tides_block_fetch_new(&c->t->src, c->t->top.data, c->t->top.len,
									 c->top.key, c->top.klen, c->part.key, c->part.klen);
	if (c->fetch == NULL)
		c->fetchable = false;	/* no memory or no thread: read on without */
}

void
sst_cursor_free(sst_cursor *c)
{
	fetch_stop(c);
	tides_block_iter_free(&c->top);
	tides_block_iter_free(&c->part);
	tides_block_iter_free(&c->data);
	tides_buf_free(&c->part_buf);
	tides_buf_free(&c->data_buf);
	tides_buf_free(&c->filter_buf);
	tides_buf_free(&c->tmp);
	tides_buf_free(&c->key);
	tides_buf_free(&c->val);
	tides_buf_free(&c->gkey);
	tides_readahead_free(&c->ra);
}

static bool
bad_handle(sst_cursor *c, const tides_block_iter *it)
{
	if (c->err->code == TIDES_OK)
		tides_fail(c->err, TIDES_CORRUPTION, "bad block handle in index block at offset %llu of %s",
				   (unsigned long long) it->block_off, c->t->fname);
	return false;
}

/* load the index partition the top level points at */
bool
sst_load_part(sst_cursor *c)
{
	tides_block_handle h;
	const uint8_t *d;
	size_t		n;

	c->part.valid = false;
	c->data.valid = false;
	if (tides_handle_decode(c->top.val, c->top.val + c->top.vlen, &h) == NULL)
		return bad_handle(c, &c->top);
	if (h.offset == c->part_off)
		return true;
	c->part_off = UINT64_MAX;
	if (tides_read_block(&c->t->src, h, c->mode, &c->part_buf, &c->tmp, &d, &n, c->err) != TIDES_OK)
		return false;
	if (!tides_block_iter_reset(&c->part, d, n, c->t->fname, h.offset))
		return false;
	c->part_off = h.offset;
	return true;
}

/* load the data block the partition level points at */
bool
sst_load_data(sst_cursor *c)
{
	tides_block_handle h;
	const uint8_t *d;
	size_t		n;

	c->data.valid = false;
	if (tides_handle_decode(c->part.val, c->part.val + c->part.vlen, &h) == NULL)
		return bad_handle(c, &c->part);
	if (h.offset == c->data_off)
		return true;
	c->data_off = UINT64_MAX;
	if (c->fetch != NULL)
	{
		bool		hit = tides_block_fetch_take(c->fetch, h, &c->data_buf);

		tides_block_fetch_account(c->fetch);
		if (hit)
		{
			if (c->t->src.counters)
				tides_count(c->t->src.counters, blocks_fetched, 1);
			d = c->data_buf.data;
			n = c->data_buf.len;
			goto loaded;
		}
		/*
		 * Forward only, so not elsewhere: the helper stopped short (a
		 * failure of its own).  Read on here, without another helper.
		 */
		fetch_stop(c);
		c->fetchable = false;
	}
	if ((c->ahead ? tides_read_block_ahead(&c->t->src, h, &c->ra, &c->data_buf, &d, &n, c->err, NULL) :
		 tides_read_block(&c->t->src, h, c->mode, &c->data_buf, &c->tmp, &d, &n, c->err)) != TIDES_OK)
		return false;
loaded:
	if (!tides_block_iter_reset(&c->data, d, n, c->t->fname, h.offset))
		return false;
	c->data_off = h.offset;
	return true;
}

/* -- index level: top index + partitions, as one sorted list of data handles */

static void
idx_skip_forward(sst_cursor *c)
{
	while (!c->part.valid)
	{
		if (sst_failed(c) || !c->top.valid)
			return;
		tides_block_iter_next(&c->top);
		if (!c->top.valid || !sst_load_part(c))
			return;
		tides_block_iter_first(&c->part);
	}
}

static void
idx_skip_backward(sst_cursor *c)
{
	while (!c->part.valid)
	{
		if (sst_failed(c) || !c->top.valid)
			return;
		tides_block_iter_prev(&c->top);
		if (!c->top.valid || !sst_load_part(c))
			return;
		tides_block_iter_last(&c->part);
	}
}

/* position the partition level from the current top entry */
void
sst_idx_enter_seek(sst_cursor *c, const uint8_t *k, size_t n)
{
	if (!c->top.valid || !sst_load_part(c))
	{
		c->part.valid = false;
		return;
	}
	tides_block_iter_seek(&c->part, k, n);
	idx_skip_forward(c);
}

/* -- data level */

static void
data_skip_forward(sst_cursor *c)
{
	while (!c->data.valid)
	{
		if (sst_failed(c) || !c->part.valid)
			break;
		tides_block_iter_next(&c->part);
		idx_skip_forward(c);
		if (!c->part.valid || !sst_load_data(c))
			break;
		fetch_consider(c);
		tides_block_iter_first(&c->data);
	}
	/*
	 * Past the last block: a compaction keeps its finished inputs open, a
	 * merge its finished level-0 files -- without their buffers.
	 */
	if (!c->data.valid)
	{
		if (c->ahead)
			tides_readahead_free(&c->ra);
		fetch_stop(c);
	}
}

static void
data_skip_backward(sst_cursor *c)
{
	while (!c->data.valid)
	{
		if (sst_failed(c) || !c->part.valid)
			return;
		tides_block_iter_prev(&c->part);
		idx_skip_backward(c);
		if (!c->part.valid || !sst_load_data(c))
			return;
		tides_block_iter_last(&c->data);
	}
}

void
sst_data_enter_seek(sst_cursor *c, const uint8_t *k, size_t n)
{
	if (!c->part.valid || !sst_load_data(c))
	{
		c->data.valid = false;
		return;
	}
	tides_block_iter_seek(&c->data, k, n);
	data_skip_forward(c);
}

static void
cursor_seek(sst_cursor *c, const uint8_t *k, size_t n)
{
	fetch_stop(c);
	c->data.valid = false;
	tides_block_iter_seek(&c->top, k, n);
	sst_idx_enter_seek(c, k, n);
	sst_data_enter_seek(c, k, n);
}

static void
cursor_first(sst_cursor *c)
{
	fetch_stop(c);
	c->data.valid = c->part.valid = false;
	tides_block_iter_first(&c->top);
	if (!c->top.valid || !sst_load_part(c))
		return;
	tides_block_iter_first(&c->part);
	idx_skip_forward(c);
	if (!c->part.valid || !sst_load_data(c))
		return;
	tides_block_iter_first(&c->data);
	data_skip_forward(c);
}

static void
cursor_last(sst_cursor *c)
{
	fetch_stop(c);
	c->data.valid = c->part.valid = false;
	tides_block_iter_last(&c->top);
	if (!c->top.valid || !sst_load_part(c))
		return;
	tides_block_iter_last(&c->part);
	idx_skip_backward(c);
	if (!c->part.valid || !sst_load_data(c))
		return;
	tides_block_iter_last(&c->data);
	data_skip_backward(c);
}

static void
cursor_next(sst_cursor *c)
{
	if (!c->data.valid)
		return;
	tides_block_iter_next(&c->data);
	data_skip_forward(c);
}

static void
cursor_prev(sst_cursor *c)
{
	fetch_stop(c);
	if (!c->data.valid)
		return;
	tides_block_iter_prev(&c->data);
	data_skip_backward(c);
}

/* the current entry's key as reported: in place, or with the global seq */
void
sst_cursor_out(sst_cursor *c)
{
	if (c->t->gseq == 0 || !c->data.valid)
	{
		c->okey = c->data.key;
		c->oklen = c->data.klen;
		return;
	}
	tides_buf_reset(&c->gkey);
	tides_buf_append(&c->gkey, c->data.key, c->data.klen);
	if (c->gkey.oom)
	{
		c->data.valid = false;
		tides_fail(c->err, TIDES_NO_MEMORY, "out of memory reading %s", c->t->fname);
		return;
	}
	sst_patch_trailer(c->gkey.data, c->gkey.len, c->t->gseq);
	c->okey = c->gkey.data;
	c->oklen = c->gkey.len;
}

/* first entry >= target, in reported order */
void
sst_cursor_seek_reported(sst_cursor *c, const uint8_t *k, size_t n)
{
	cursor_seek(c, k, n);
	if (c->t->gseq != 0 && c->data.valid && c->t->gseq > tides_ikey_seq(k, n) &&
		tides_ukey_cmp(c->data.key, c->data.klen - TIDES_TRAILER, k, n - TIDES_TRAILER) == 0)
		cursor_next(c);
}

typedef struct probe_ctx
{
	uint64_t	h;
	bool		may;
} probe_ctx;

static void
probe_cb(void *arg, const tides_block_view *v)
{
	probe_ctx  *p = arg;

	p->may = tides_filter_may_match_view(v, p->h);
}

/*
 * May the partition under the current top entry hold the key hashed to h?
 * Probes the filter in place in the block cache when it is there (a few
 * cache lines), else reads it.  On error returns true with c->err set.
 */
bool
sst_filter_may_match(sst_cursor *c, uint64_t h)
{
	tides_block_handle ph,
				fh;
	const uint8_t *p;
	const uint8_t *d;
	size_t		len;
	probe_ctx	pc;

	p = tides_handle_decode(c->top.val, c->top.val + c->top.vlen, &ph);
	if (p == NULL || tides_handle_decode(p, c->top.val + c->top.vlen, &fh) == NULL)
	{
		bad_handle(c, &c->top);
		return true;
	}
	if (fh.size == 0)
		return true;
	pc.h = h;
	if (c->t->src.cache != NULL && c->mode != TIDES_READ_BYPASS &&
		tides_block_cache_visit(c->t->src.cache, c->t->src.file_number, fh.offset, probe_cb, &pc))
	{
		if (c->t->src.counters)
			tides_count(c->t->src.counters, cache_hits, 1);
		tides_process_io.cache_hits++;
		return pc.may;
	}
	if (tides_read_block(&c->t->src, fh, c->mode, &c->filter_buf, &c->tmp, &d, &len,
						 c->err) != TIDES_OK)
		return true;
	return tides_filter_may_match_hash(d, len, h);
}

/* --------------------------------------------------------------- iterator */

static void it_seek(tides_iiter *it, const uint8_t *k, size_t n) { sst_cursor *c = &((sst_iter *) it)->c; sst_cursor_seek_reported(c, k, n); sst_cursor_out(c); }
static void it_first(tides_iiter *it) { sst_cursor *c = &((sst_iter *) it)->c; cursor_first(c); sst_cursor_out(c); }
static void it_last(tides_iiter *it) { sst_cursor *c = &((sst_iter *) it)->c; cursor_last(c); sst_cursor_out(c); }
static void it_next(tides_iiter *it) { sst_cursor *c = &((sst_iter *) it)->c; cursor_next(c); sst_cursor_out(c); }
static void it_prev(tides_iiter *it) { sst_cursor *c = &((sst_iter *) it)->c; cursor_prev(c); sst_cursor_out(c); }
static bool it_valid(const tides_iiter *it) { return ((const sst_iter *) it)->c.data.valid; }

static const uint8_t *
it_key(const tides_iiter *it, size_t *n)
{
	const sst_iter *si = (const sst_iter *) it;

	*n = si->c.oklen;
	return si->c.okey;
}

static const uint8_t *
it_value(const tides_iiter *it, size_t *n)
{
	const sst_iter *si = (const sst_iter *) it;

	*n = si->c.data.vlen;
	return si->c.data.val;
}

static void
it_destroy(tides_iiter *it)
{
	sst_iter   *si = (sst_iter *) it;

	sst_cursor_free(&si->c);
	if (si->on_destroy)
		si->on_destroy(si->arg, si->c.t);
	free(si);
}

/* a table whose key runs and stem filter rule the stem out shows nothing */
static void
it_seek_stem(tides_iiter *it, const uint8_t *k, size_t n, const uint8_t *stem, size_t stem_len, uint32_t suffix)
{
	sst_cursor *c = &((sst_iter *) it)->c;

	if (!tides_sst_may_contain_stem(c->t, stem, stem_len, suffix))
	{
		c->data.valid = false;
		return;
	}
	it_seek(it, k, n);
}

static const tides_iiter_ops sst_iter_ops = {
	it_seek, it_first, it_last, it_next, it_prev, it_valid, it_key, it_value, it_destroy, it_seek_stem
};

tides_iiter *
tides_sst_iter_new(tides_sst *t, bool fill_cache)
{
	sst_iter   *si = malloc(sizeof(*si));

	if (si == NULL)
		return NULL;
	tides_iiter_base_init(&si->base, &sst_iter_ops);
	sst_cursor_init(&si->c, t, fill_cache ? TIDES_READ_FILL_CACHE : TIDES_READ_NO_FILL,
				&si->base.err);
	si->on_destroy = NULL;
	si->arg = NULL;
	return &si->base;
}

void
tides_sst_iter_read_ahead(tides_iiter *it)
{
	if (it->ops == &sst_iter_ops)
		((sst_iter *) it)->c.ahead = true;
}

void
tides_sst_iter_fetch_ahead(tides_iiter *it)
{
	if (it->ops == &sst_iter_ops)
		((sst_iter *) it)->c.fetchable = true;
}

void
tides_sst_iter_on_destroy(tides_iiter *it, void (*fn) (void *arg, tides_sst *t), void *arg)
{
	sst_iter   *si = (sst_iter *) it;

	si->on_destroy = fn;
	si->arg = arg;
}
