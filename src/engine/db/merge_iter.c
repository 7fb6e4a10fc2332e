/*
 * merge_iter.c -- heap-based merging iterator and the level iterator.
 *
 * The merge keeps a binary heap of its valid children: a min-heap on
 * internal keys while moving forward, a max-heap while moving backward.
 * Changing direction repositions every other child relative to the current
 * key (the LevelDB approach), then rebuilds the heap.
 */
#include "db/merge_iter.h"

#include "db/db_impl.h"

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

static void
mi_seek_stem(tides_iiter *it, const uint8_t *k, size_t n, const uint8_t *stem, size_t stem_len, uint32_t suffix)
{
	merge_iter *m = (merge_iter *) it;

	for (int i = 0; i < m->n; i++)
		tides_iiter_seek_stem(m->child[i], k, n, stem, stem_len, suffix);
	rebuild(m, DIR_FORWARD);
}

static const tides_iiter_ops merge_ops = {
	mi_seek, mi_first, mi_last, mi_next, mi_prev, mi_valid, mi_key, mi_value, mi_destroy, mi_seek_stem
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

tides_iiter *
tides_memtables_iter_new(tides_memtable *const *ms, uint32_t n)
{
	tides_iiter *children[TIDES_MAX_MEMTABLES];

	TIDES_ASSERT(n >= 1 && n <= TIDES_MAX_MEMTABLES);
	if (n == 1)
		return tides_memtable_iter_new(ms[0]);
	for (uint32_t i = 0; i < n; i++)
		if ((children[i] = tides_memtable_iter_new(ms[i])) == NULL)
		{
			while (i-- > 0)
				tides_iiter_destroy(children[i]);
			return NULL;
		}
	return tides_merge_iter_new(children, (int) n);
}

/* ---- level iterator */

/*
 * Bounds (lower/upper, the reader's user-key bounds) spare reads: a file
 * wholly past the upper bound in the direction of travel forward (its
 * smallest key at or above it), or wholly below the lower bound backward,
 * is not opened.  The level iterator is then positioned on that file's
 * first (last) entry *without reading it* (lazy): its key is the file's
 * smallest (largest) internal key from the metadata, exactly the entry a
 * real positioning would have found, so the merge above orders it where
 * it belongs and every iterator contract holds; only the value, or a step
 * from there, opens the file.  A reader that stops at its bounds never
 * does: an ascending unique key beyond the end of its tree, a scan that
 * ends inside a level, cost no block.
 */
typedef struct level_iter
{
	tides_iiter base;
	tides_table_cache *tc;
	const tides_version *v;
	int			level;
	bool		fill_cache;
	bool		fetch_ahead;
	const uint8_t *prefix;
	size_t		prefix_len;
	uint32_t	stem_suffix;	/* nonzero: prefix is a stem (tides_sst_may_contain_stem) */
	const uint8_t *lower;		/* the reader's user-key bounds, or NULL */
	size_t		lower_len;
	const uint8_t *upper;
	size_t		upper_len;
	uint32_t	index;			/* current file; nfiles = none */
	tides_iiter *file;			/* iterator of the current file, or NULL */
	int			lazy;			/* LAZY_*: on file index's first/last entry, unread */
} level_iter;

enum
{
	LAZY_NONE, LAZY_FIRST, LAZY_LAST
};

static uint32_t
level_count(const level_iter *li)
{
	return li->v->nfiles[li->level];
}

static const tides_file_meta *
file_at(const level_iter *li, uint32_t i)
{
	return li->v->files[li->level][i];
}

/* forward: file f holds no key below the upper bound (nor does any later file) */
static bool
past_upper(const level_iter *li, const tides_file_meta *f)
{
	return li->upper != NULL &&
		tides_ukey_cmp(tides_file_smallest(f), f->smallest_len - TIDES_TRAILER,
					   li->upper, li->upper_len) >= 0;
}

/* backward: file f holds no key at or above the lower bound (nor any earlier file) */
static bool
past_lower(const level_iter *li, const tides_file_meta *f)
{
	return li->lower != NULL &&
		tides_ukey_cmp(tides_file_largest(f), f->largest_len - TIDES_TRAILER,
					   li->lower, li->lower_len) < 0;
}

/*
 * open file i for real (or clear the position if i is out of range); with
 * use_prefix, a file whose prefix filter excludes the prefix is an empty one
 */
static void
open_file(level_iter *li, uint32_t i, bool use_prefix)
{
	tides_iiter_destroy(li->file);
	li->file = NULL;
	li->lazy = LAZY_NONE;
	li->index = i;
	if (i >= level_count(li))
		return;
	{
		const tides_file_meta *f = file_at(li, i);

		if (li->prefix != NULL && use_prefix)
		{
			tides_sst  *t;
			tides_error err;
			bool		may = true;

			tides_error_clear(&err);
			if (tides_table_cache_get(li->tc, f->number, f->size, &t, &err) == TIDES_OK)
			{
				may = li->stem_suffix > 0 ?
					tides_sst_may_contain_stem(t, li->prefix, li->prefix_len, li->stem_suffix) :
					tides_sst_may_contain_prefix(t, li->prefix, li->prefix_len);
				tides_table_cache_release(li->tc, t);
			}
			if (!may)
			{
				li->file = tides_iiter_empty(NULL);
				return;
			}
		}
		li->file = tides_table_cache_iter(li->tc, f->number, f->size, li->fill_cache);
		if (li->fetch_ahead && li->file != NULL)
			tides_sst_iter_fetch_ahead(li->file);
	}
}

/*
 * Go to file i's first entry (forward) or last entry (backward): lazily
 * when the file is past the bounds that way, else by opening it (the
 * caller then positions the file iterator).  True if it went lazily.
 */
static bool
enter_file(level_iter *li, uint32_t i, int lazy)
{
	if (i < level_count(li) &&
		(lazy == LAZY_FIRST ? past_upper(li, file_at(li, i)) : past_lower(li, file_at(li, i))))
	{
		tides_iiter_destroy(li->file);
		li->file = NULL;
		li->index = i;
		li->lazy = lazy;
		return true;
	}
	open_file(li, i, true);
	return false;
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
		if (enter_file(li, li->index + 1, LAZY_FIRST))
			return;
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
		if (enter_file(li, li->index - 1, LAZY_LAST))
			return;
		if (li->file != NULL)
			tides_iiter_last(li->file);
	}
}

/* a lazy position becomes a real one: the file opened, on the same entry */
static void
materialize(level_iter *li)
{
	int			lazy = li->lazy;

	/* the position stood for this file's entry: no filter may skip it */
	open_file(li, li->index, false);
	if (li->file == NULL)
		return;
	if (lazy == LAZY_FIRST)
	{
		tides_iiter_first(li->file);
		skip_forward(li);
	}
	else
	{
		tides_iiter_last(li->file);
		skip_backward(li);
	}
}

static void
li_seek(tides_iiter *it, const uint8_t *k, size_t n)
{
	level_iter *li = (level_iter *) it;
	uint32_t	i = tides_version_find_file(li->v, li->level, k, n);

	/* lazily only if the file's first entry is the answer: at or after k */
	if (i < level_count(li) && past_upper(li, file_at(li, i)) &&
		tides_ikey_cmp(tides_file_smallest(file_at(li, i)), file_at(li, i)->smallest_len, k, n) >= 0)
	{
		enter_file(li, i, LAZY_FIRST);
		return;
	}
	open_file(li, i, true);
	if (li->file != NULL)
		tides_iiter_seek(li->file, k, n);
	skip_forward(li);
}

static void
li_first(tides_iiter *it)
{
	level_iter *li = (level_iter *) it;

	if (enter_file(li, 0, LAZY_FIRST))
		return;
	if (li->file != NULL)
		tides_iiter_first(li->file);
	skip_forward(li);
}

static void
li_last(tides_iiter *it)
{
	level_iter *li = (level_iter *) it;
	uint32_t	n = level_count(li);

	if (enter_file(li, n ? n - 1 : 0, LAZY_LAST))
		return;
	if (li->file != NULL)
		tides_iiter_last(li->file);
	skip_backward(li);
}

static void
li_next(tides_iiter *it)
{
	level_iter *li = (level_iter *) it;

	if (li->lazy == LAZY_LAST)
	{
		/* after the last entry of file index: the next file's first */
		if (enter_file(li, li->index + 1, LAZY_FIRST))
			return;
		if (li->file != NULL)
			tides_iiter_first(li->file);
		skip_forward(li);
		return;
	}
	if (li->lazy == LAZY_FIRST)
		materialize(li);
	if (li->file == NULL || !tides_iiter_valid(li->file))
		return;
	tides_iiter_next(li->file);
	skip_forward(li);
}

static void
li_prev(tides_iiter *it)
{
	level_iter *li = (level_iter *) it;

	if (li->lazy == LAZY_FIRST)
	{
		/* before the first entry of file index: the previous file's last */
		if (li->index == 0)
		{
			li->lazy = LAZY_NONE;
			li->index = level_count(li);
			return;
		}
		if (enter_file(li, li->index - 1, LAZY_LAST))
			return;
		if (li->file != NULL)
			tides_iiter_last(li->file);
		skip_backward(li);
		return;
	}
	if (li->lazy == LAZY_LAST)
		materialize(li);
	if (li->file == NULL || !tides_iiter_valid(li->file))
		return;
	tides_iiter_prev(li->file);
	skip_backward(li);
}

static bool
li_valid(const tides_iiter *it)
{
	const level_iter *li = (const level_iter *) it;

	return li->lazy != LAZY_NONE || (li->file != NULL && tides_iiter_valid(li->file));
}

static const uint8_t *
li_key(const tides_iiter *it, size_t *n)
{
	const level_iter *li = (const level_iter *) it;

	if (li->lazy == LAZY_FIRST)
	{
		*n = file_at(li, li->index)->smallest_len;
		return tides_file_smallest(file_at(li, li->index));
	}
	if (li->lazy == LAZY_LAST)
	{
		*n = file_at(li, li->index)->largest_len;
		return tides_file_largest(file_at(li, li->index));
	}
	return tides_iiter_key(li->file, n);
}

static const uint8_t *
li_value(const tides_iiter *it, size_t *n)
{
	level_iter *li = (level_iter *) it;

	if (li->lazy != LAZY_NONE)
	{
		materialize(li);
		if (li->file == NULL || !tides_iiter_valid(li->file))
		{
			/* the file failed to open or read: no value; the error is reported */
			*n = 0;
			return (const uint8_t *) "";
		}
	}
	return tides_iiter_value(li->file, n);
}

static void
li_destroy(tides_iiter *it)
{
	level_iter *li = (level_iter *) it;

	tides_iiter_destroy(li->file);
	free(li);
}

/*
 * The keys stem || suffix bytes lie in the files from the one seek would
 * enter, as long as their key ranges reach the stem: the first of those
 * whose filter lets the stem through is entered and sought (the walk goes on
 * from there as after any seek); with none, the level shows nothing.  The
 * deepest level is sought plainly: it holds most keys, so a key looked for
 * is usually there, and its filter would cost a block read (on a store
 * larger than memory, a device read) to say so.
 */
static void
li_seek_stem(tides_iiter *it, const uint8_t *k, size_t n, const uint8_t *stem, size_t stem_len, uint32_t suffix)
{
	level_iter *li = (level_iter *) it;
	uint32_t	i;

	TIDES_ASSERT(n >= TIDES_TRAILER && tides_ukey_cmp(k, n - TIDES_TRAILER, stem, stem_len) >= 0);
	if (li->level == tides_version_last_level(li->v))
	{
		li_seek(it, k, n);
		return;
	}
	i = tides_version_find_file(li->v, li->level, k, n);
	for (; i < level_count(li) && tides_file_may_hold_prefix(file_at(li, i), stem, stem_len); i++)
	{
		if (!tides_file_may_hold_stem(li->tc, file_at(li, i), stem, stem_len, suffix))
			continue;
		open_file(li, i, false);
		if (li->file != NULL)
			tides_iiter_seek(li->file, k, n);
		skip_forward(li);
		return;
	}
	open_file(li, level_count(li), false);
}

static const tides_iiter_ops level_ops = {
	li_seek, li_first, li_last, li_next, li_prev, li_valid, li_key, li_value, li_destroy, li_seek_stem
};

tides_iiter *
tides_level_iter_new(tides_table_cache *tc, const tides_version *v, int level, bool fill_cache,
					 bool fetch_ahead, const uint8_t *prefix, size_t prefix_len, uint32_t stem_suffix,
					 const uint8_t *lower, size_t lower_len, const uint8_t *upper, size_t upper_len)
{
	level_iter *li = calloc(1, sizeof(*li));

	if (li == NULL)
		return NULL;
	tides_iiter_base_init(&li->base, &level_ops);
	li->tc = tc;
	li->v = v;
	li->level = level;
	li->fill_cache = fill_cache;
	li->fetch_ahead = fetch_ahead;
	li->prefix = prefix;
	li->prefix_len = prefix_len;
	li->stem_suffix = stem_suffix;
	li->lower = lower;
	li->lower_len = lower_len;
	li->upper = upper;
	li->upper_len = upper_len;
	li->index = level_count(li);
	li->file = NULL;
	return &li->base;
}

bool
tides_file_may_hold_prefix(const tides_file_meta *f, const uint8_t *stem, size_t len)
{
	const uint8_t *lo = tides_file_smallest(f);
	size_t		lolen = f->smallest_len - TIDES_TRAILER;

	/* keys with the prefix start at stem; the file's smallest key is at or below one of them */
	if (tides_ukey_cmp(tides_file_largest(f), f->largest_len - TIDES_TRAILER, stem, len) < 0)
		return false;
	return tides_ukey_cmp(lo, lolen, stem, len) < 0 || (lolen >= len && memcmp(lo, stem, len) == 0);
}

bool
tides_file_may_hold_stem(tides_table_cache *tc, const tides_file_meta *f, const uint8_t *stem, size_t len,
						 uint32_t suffix)
{
	tides_sst  *t;
	tides_error err;
	bool		may;

	if (!tides_file_may_hold_prefix(f, stem, len))
		return false;
	if (suffix == 0 || tides_table_cache_get(tc, f->number, f->size, &t, &err) != TIDES_OK)
		return true;
	may = tides_sst_may_contain_stem(t, stem, len, suffix);
	tides_table_cache_release(tc, t);
	return may;
}
