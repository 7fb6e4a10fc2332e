/*
 * merge_iter.c -- heap-based merging iterator and the level iterator.
 *
 * The merge keeps a binary heap of its valid children: a min-heap on
 * internal keys while moving forward, a max-heap while moving backward.
 * Changing direction repositions every other child relative to the current
 * key (the LevelDB approach), then rebuilds the heap.
 */
#include "db/merge_iter.h"

#include <stdlib.h>
#include <string.h>

#include "util/dbformat.h"
#include "util/assert.h"
#include "util/buf.h"

enum
{
	DIR_FORWARD, DIR_BACKWARD
};

typedef struct merge_iter
{
	tides_iiter base;
	tides_iiter **child;
	int			n;
	int		   *heap;			/* child indexes */
	int			hn;
	int			dir;
} merge_iter;

static int
child_cmp(const merge_iter *m, int a, int b)
{
	size_t		la,
				lb;
	const uint8_t *ka = tides_iiter_key(m->child[a], &la);
	const uint8_t *kb = tides_iiter_key(m->child[b], &lb);
	int			r = tides_ikey_cmp(ka, la, kb, lb);

	return m->dir == DIR_FORWARD ? r : -r;
}

static void
sift_down(merge_iter *m, int i)
{
	for (;;)
	{
		int			l = 2 * i + 1,
					r = l + 1,
					best = i;

		if (l < m->hn && child_cmp(m, m->heap[l], m->heap[best]) < 0)
			best = l;
		if (r < m->hn && child_cmp(m, m->heap[r], m->heap[best]) < 0)
			best = r;
		if (best == i)
			return;
		{
			int			t = m->heap[i];

			m->heap[i] = m->heap[best];
			m->heap[best] = t;
		}
		i = best;
	}
}

/* for assertions: is the top no greater than its children (heap order)? */
static bool
top_is_least(const merge_iter *m)
{
	return (m->hn < 2 || child_cmp(m, m->heap[0], m->heap[1]) <= 0) &&
		(m->hn < 3 || child_cmp(m, m->heap[0], m->heap[2]) <= 0);
}

static void
note_error(merge_iter *m, tides_iiter *c)
{
	if (c->err.code != TIDES_OK && m->base.err.code == TIDES_OK)
		m->base.err = c->err;
}

static void
rebuild(merge_iter *m, int dir)
{
	m->dir = dir;
	m->hn = 0;
	for (int i = 0; i < m->n; i++)
	{
		if (tides_iiter_valid(m->child[i]))
			m->heap[m->hn++] = i;
		else
			note_error(m, m->child[i]);
	}
	for (int i = m->hn / 2 - 1; i >= 0; i--)
		sift_down(m, i);
	TIDES_ASSERT(m->hn <= m->n && top_is_least(m));
}

/* after the top child moved: drop it if exhausted, else restore the heap */
static void
fix_top(merge_iter *m)
{
	tides_iiter *c = m->child[m->heap[0]];

	if (!tides_iiter_valid(c))
	{
		note_error(m, c);
		m->heap[0] = m->heap[--m->hn];
	}
	if (m->hn > 0)
		sift_down(m, 0);
	TIDES_ASSERT(top_is_least(m));
}

static void
mi_seek(tides_iiter *it, const uint8_t *k, size_t n)
{
	merge_iter *m = (merge_iter *) it;

	for (int i = 0; i < m->n; i++)
		tides_iiter_seek(m->child[i], k, n);
	rebuild(m, DIR_FORWARD);
}

static void
mi_first(tides_iiter *it)
{
	merge_iter *m = (merge_iter *) it;

	for (int i = 0; i < m->n; i++)
		tides_iiter_first(m->child[i]);
	rebuild(m, DIR_FORWARD);
}

static void
mi_last(tides_iiter *it)
{
	merge_iter *m = (merge_iter *) it;

	for (int i = 0; i < m->n; i++)
		tides_iiter_last(m->child[i]);
	rebuild(m, DIR_BACKWARD);
}

static bool
mi_valid(const tides_iiter *it)
{
	const merge_iter *m = (const merge_iter *) it;

	return m->hn > 0 && m->base.err.code == TIDES_OK;
}

static void
mi_next(tides_iiter *it)
{
	merge_iter *m = (merge_iter *) it;
	int			cur = m->heap[0];

	if (m->dir != DIR_FORWARD)
	{
		/* put every other child on the first entry after the current key */
		size_t		klen;
		const uint8_t *k = tides_iiter_key(m->child[cur], &klen);
		tides_buf	key;

		tides_buf_init(&key);
		tides_buf_append(&key, k, klen);
		for (int i = 0; i < m->n; i++)
		{
			tides_iiter *c = m->child[i];

			if (i == cur)
				continue;
			tides_iiter_seek(c, key.data, key.len);
			if (tides_iiter_valid(c))
			{
				size_t		cl;
				const uint8_t *ck = tides_iiter_key(c, &cl);

				if (tides_ikey_cmp(ck, cl, key.data, key.len) == 0)
					tides_iiter_next(c);
			}
		}
		tides_buf_free(&key);
		tides_iiter_next(m->child[cur]);
		rebuild(m, DIR_FORWARD);
		return;
	}
	tides_iiter_next(m->child[cur]);
	fix_top(m);
}

static void
mi_prev(tides_iiter *it)
{
	merge_iter *m = (merge_iter *) it;
	int			cur = m->heap[0];

	if (m->dir != DIR_BACKWARD)
	{
		/* put every other child on the last entry before the current key */
		size_t		klen;
		const uint8_t *k = tides_iiter_key(m->child[cur], &klen);
		tides_buf	key;

		tides_buf_init(&key);
		tides_buf_append(&key, k, klen);
		for (int i = 0; i < m->n; i++)
		{
			tides_iiter *c = m->child[i];

			if (i == cur)
				continue;
			tides_iiter_seek(c, key.data, key.len);
			if (tides_iiter_valid(c))
				tides_iiter_prev(c);
			else if (tides_iiter_status(c) == TIDES_OK)
				tides_iiter_last(c);
		}
		tides_buf_free(&key);
		tides_iiter_prev(m->child[cur]);
		rebuild(m, DIR_BACKWARD);
		return;
	}
	tides_iiter_prev(m->child[cur]);
	fix_top(m);
}

static const uint8_t *
mi_key(const tides_iiter *it, size_t *n)
{
	const merge_iter *m = (const merge_iter *) it;

	return tides_iiter_key(m->child[m->heap[0]], n);
}

static const uint8_t *
mi_value(const tides_iiter *it, size_t *n)
{
	const merge_iter *m = (const merge_iter *) it;

	return tides_iiter_value(m->child[m->heap[0]], n);
}

static void
mi_destroy(tides_iiter *it)
{
	merge_iter *m = (merge_iter *) it;

	for (int i = 0; i < m->n; i++)
		tides_iiter_destroy(m->child[i]);
	free(m->child);
	free(m->heap);
	free(m);
}

static const tides_iiter_ops merge_ops = {
	mi_seek, mi_first, mi_last, mi_next, mi_prev, mi_valid, mi_key, mi_value, mi_destroy
};

tides_iiter *
tides_merge_iter_new(tides_iiter **children, int n)
{
	merge_iter *m = calloc(1, sizeof(*m));

	if (m == NULL || (m->child = malloc((n + 1) * sizeof(*children))) == NULL ||
		(m->heap = malloc((n + 1) * sizeof(int))) == NULL)
	{
		if (m)
			free(m->child);
		free(m);
		for (int i = 0; i < n; i++)
			tides_iiter_destroy(children[i]);
		return NULL;
	}
	tides_iiter_base_init(&m->base, &merge_ops);
	memcpy(m->child, children, n * sizeof(*children));
	m->n = n;
	m->hn = 0;
	m->dir = DIR_FORWARD;
	return &m->base;
}

/* ---- level iterator */

typedef struct level_iter
{
	tides_iiter base;
	tides_table_cache *tc;
	const tides_version *v;
	int			level;
	bool		fill_cache;
	const uint8_t *prefix;
	size_t		prefix_len;
	uint32_t	index;			/* current file; nfiles = none */
	tides_iiter *file;			/* iterator of the current file, or NULL */
} level_iter;

static uint32_t
level_count(const level_iter *li)
{
	return li->v->nfiles[li->level];
}

/* open file i (or clear the position if i is out of range) */
static void
open_file(level_iter *li, uint32_t i)
{
	tides_iiter_destroy(li->file);
	li->file = NULL;
	li->index = i;
	if (i >= level_count(li))
		return;
	{
		const tides_file_meta *f = li->v->files[li->level][i];

		if (li->prefix != NULL)
		{
			tides_sst  *t;
			tides_error err;
			bool		may = true;

			tides_error_clear(&err);
			if (tides_table_cache_get(li->tc, f->number, f->size, &t, &err) == TIDES_OK)
			{
				may = tides_sst_may_contain_prefix(t, li->prefix, li->prefix_len);
				tides_table_cache_release(li->tc, t);
			}
			if (!may)
			{
				li->file = tides_iiter_empty(NULL);
				return;
			}
		}
		li->file = tides_table_cache_iter(li->tc, f->number, f->size, li->fill_cache);
	}
}

/* the file iterator failed: take its error and stop */
static bool
check_file_error(level_iter *li)
{
	if (li->file != NULL && tides_iiter_status(li->file) != TIDES_OK)
	{
		li->base.err = li->file->err;
		tides_iiter_destroy(li->file);
		li->file = NULL;
		li->index = level_count(li);
		return true;
	}
	return false;
}

static void
skip_forward(level_iter *li)
{
	while (li->file != NULL && !tides_iiter_valid(li->file))
	{
		if (check_file_error(li))
			return;
		open_file(li, li->index + 1);
		if (li->file != NULL)
			tides_iiter_first(li->file);
	}
}

static void
skip_backward(level_iter *li)
{
	while (li->file != NULL && !tides_iiter_valid(li->file))
	{
		if (check_file_error(li))
			return;
		if (li->index == 0)
		{
			tides_iiter_destroy(li->file);
			li->file = NULL;
			li->index = level_count(li);
			return;
		}
		open_file(li, li->index - 1);
		if (li->file != NULL)
			tides_iiter_last(li->file);
	}
}

static void
li_seek(tides_iiter *it, const uint8_t *k, size_t n)
{
	level_iter *li = (level_iter *) it;

	open_file(li, tides_version_find_file(li->v, li->level, k, n));
	if (li->file != NULL)
		tides_iiter_seek(li->file, k, n);
	skip_forward(li);
}

static void
li_first(tides_iiter *it)
{
	level_iter *li = (level_iter *) it;

	open_file(li, 0);
	if (li->file != NULL)
		tides_iiter_first(li->file);
	skip_forward(li);
}

static void
li_last(tides_iiter *it)
{
	level_iter *li = (level_iter *) it;
	uint32_t	n = level_count(li);

	open_file(li, n ? n - 1 : 0);
	if (li->file != NULL)
		tides_iiter_last(li->file);
	skip_backward(li);
}

static void
li_next(tides_iiter *it)
{
	level_iter *li = (level_iter *) it;

	tides_iiter_next(li->file);
	skip_forward(li);
}

static void
li_prev(tides_iiter *it)
{
	level_iter *li = (level_iter *) it;

	tides_iiter_prev(li->file);
	skip_backward(li);
}

static bool
li_valid(const tides_iiter *it)
{
	const level_iter *li = (const level_iter *) it;

	return li->file != NULL && tides_iiter_valid(li->file);
}

static const uint8_t *
li_key(const tides_iiter *it, size_t *n)
{
	return tides_iiter_key(((const level_iter *) it)->file, n);
}

static const uint8_t *
li_value(const tides_iiter *it, size_t *n)
{
	return tides_iiter_value(((const level_iter *) it)->file, n);
}

static void
li_destroy(tides_iiter *it)
{
	level_iter *li = (level_iter *) it;

	tides_iiter_destroy(li->file);
	free(li);
}

static const tides_iiter_ops level_ops = {
	li_seek, li_first, li_last, li_next, li_prev, li_valid, li_key, li_value, li_destroy
};

tides_iiter *
tides_level_iter_new(tides_table_cache *tc, const tides_version *v, int level, bool fill_cache,
					 const uint8_t *prefix, size_t prefix_len)
{
	level_iter *li = calloc(1, sizeof(*li));

	if (li == NULL)
		return NULL;
	tides_iiter_base_init(&li->base, &level_ops);
	li->tc = tc;
	li->v = v;
	li->level = level;
	li->fill_cache = fill_cache;
	li->prefix = prefix;
	li->prefix_len = prefix_len;
	li->index = level_count(li);
	li->file = NULL;
	return &li->base;
}
