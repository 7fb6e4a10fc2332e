/*
 * db_iter.c -- the public iterator: user keys, newest visible version only.
 *
 * Underneath is a merge of every memtable of the pinned superversion, every
 * level-0 file, and one concatenating iterator per deeper level.  This layer
 * turns that stream of internal keys into user keys: it skips versions newer
 * than the read sequence number, hides keys whose newest visible version is
 * a deletion or lies under a dropped prefix, and enforces the bounds.
 *
 * Moving forward, the inner iterator sits on the entry being shown.  Moving
 * backward, it sits just before all entries of the shown key, whose key and
 * value are copied aside (entries of one key come newest first, so going
 * backward the newest visible one is the last seen).
 *
 * tides_iter_repin trades the pinned superversion for the current one
 * without moving the caller: the entry it stands on is copied aside
 * ("parked") and shown from the copy, and the next step is taken relative
 * to that key in the new view -- as if the walk had gone on in one, except
 * that without a snapshot the read point moves up to the present.
 */
#include <stdlib.h>
#include <string.h>

#include "db/db_impl.h"
#include "db/merge_iter.h"
#include "util/buf.h"
#include "util/testpoint.h"

enum
{
	DIR_FORWARD, DIR_BACKWARD
};

struct tides_iter
{
	tides_db   *db;
	tides_superversion *sv;
	tides_iiter *inner;
	uint64_t	seq;
	tides_buf	lower;
	tides_buf	upper;
	bool		has_lower;
	bool		has_upper;
	int			dir;
	bool		valid;
	tides_buf	saved_key;		/* user key (backward), or skip key (forward) */
	tides_buf	saved_value;
	tides_buf	scratch;
	tides_status status;
	bool		fill;			/* tides_iter_options.fill_cache */
	bool		fetch_ahead;	/* tides_iter_options.read_ahead */
	bool		lower_is_stem;	/* tides_iter_options.lower_is_stem */
	bool		has_snap;		/* seq is a snapshot's: a repin keeps it */
	bool		parked;			/* repinned on an entry: shown from park_key/value */
	tides_buf	park_key;
	tides_buf	park_value;
	uint64_t	park_seq;		/* the read point the parked entry was read at */
	/* dropped prefixes: the verdict for the leading bytes of the last key (hidden()) */
	const tides_superversion *drop_sv;	/* the cache is for this superversion */
	uint32_t	drop_len;		/* 0: prefixes differ in length, no cache */
	bool		drop_valid;
	uint8_t		drop_key[TIDES_MAX_PREFIX_LEN];
	bool		drop_any;		/* some dropped prefix equals drop_key */
	uint64_t	drop_seq;		/* the largest seq among those */
};

static void
buf_set(tides_buf *b, const void *p, size_t n)
{
	b->len = 0;
	tides_buf_append(b, p, n);
}

static inline const uint8_t *
inner_ukey(const tides_iter *it, size_t *n, uint64_t *seq, int *type)
{
	size_t		klen;
	const uint8_t *k = tides_iiter_key(it->inner, &klen);

	*n = klen - TIDES_TRAILER;
	*seq = tides_ikey_seq(k, klen);
	*type = tides_ikey_type(k, klen);
	return k;
}

static bool
above_upper(const tides_iter *it, const uint8_t *k, size_t n)
{
	return it->has_upper && tides_ukey_cmp(k, n, it->upper.data, it->upper.len) >= 0;
}

static bool
below_lower(const tides_iter *it, const uint8_t *k, size_t n)
{
	return it->has_lower && tides_ukey_cmp(k, n, it->lower.data, it->lower.len) < 0;
}

/*
 * Is this key version under a dropped prefix?  Checking every dropped prefix
 * for every key showed in scan profiles; keys arrive sorted, so runs share
 * their leading bytes, and when all dropped prefixes have one length (as the
 * PostgreSQL glue's tree ids do) the verdict for those bytes is computed once
 * per run: hidden iff some prefix equal to them was dropped at or after seq.
 */
static bool
hidden(tides_iter *it, const uint8_t *k, size_t n, uint64_t seq)
{
	const tides_superversion *sv = it->sv;

	if (sv->ndropped == 0)
		return false;
	if (it->drop_sv != sv)
	{
		it->drop_sv = sv;
		it->drop_valid = false;
		it->drop_len = sv->dropped[0].len;
		for (uint32_t i = 1; i < sv->ndropped; i++)
			if (sv->dropped[i].len != it->drop_len)
				it->drop_len = 0;
	}
	if (it->drop_len == 0 || n < it->drop_len)
		return tides_dropped_hides(sv->dropped, sv->ndropped, k, n, seq);
	if (!it->drop_valid || memcmp(k, it->drop_key, it->drop_len) != 0)
	{
		memcpy(it->drop_key, k, it->drop_len);
		it->drop_any = false;
		it->drop_seq = 0;
		for (uint32_t i = 0; i < sv->ndropped; i++)
			if (memcmp(k, sv->dropped[i].bytes, it->drop_len) == 0)
			{
				it->drop_any = true;
				if (sv->dropped[i].seq > it->drop_seq)
					it->drop_seq = sv->dropped[i].seq;
			}
		it->drop_valid = true;
	}
	return it->drop_any && seq <= it->drop_seq;
}

static void
stop(tides_iter *it)
{
	it->valid = false;
	if (it->status == TIDES_OK && tides_iiter_status(it->inner) != TIDES_OK)
	{
		it->status = tides_iiter_status(it->inner);
		it->db->err = it->inner->err;
	}
}

/* forward: from the inner position, find the next visible user key */
static void
find_next_user_entry(tides_iter *it, bool skipping)
{
	while (tides_iiter_valid(it->inner))
	{
		size_t		n;
		uint64_t	seq;
		int			type;
		const uint8_t *k = inner_ukey(it, &n, &seq, &type);

		if (above_upper(it, k, n))
			break;
		if (seq <= it->seq)
		{
			if (type == TIDES_KT_DELETE || hidden(it, k, n, seq))
			{
				/* every older version of this key is hidden too */
				buf_set(&it->saved_key, k, n);
				skipping = true;
			}
			else if (!skipping ||
					 tides_ukey_cmp(k, n, it->saved_key.data, it->saved_key.len) > 0)
			{
				it->valid = true;
				it->saved_key.len = 0;
				return;
			}
		}
		tides_iiter_next(it->inner);
	}
	it->saved_key.len = 0;
	stop(it);
}

/* backward: collect the newest visible version of the previous user key */
static void
find_prev_user_entry(tides_iter *it)
{
	int			value_type = TIDES_KT_DELETE;

	while (tides_iiter_valid(it->inner))
	{
		size_t		n;
		uint64_t	seq;
		int			type;
		const uint8_t *k = inner_ukey(it, &n, &seq, &type);

		/*
		 * Keys at or above the upper bound are never shown.  Positioning
		 * normally starts below them, but a prefix-filtered level that
		 * skipped the files above the bound can leave the inner iterator
		 * beyond it (tides_iter_last's seek found nothing there).
		 */
		if (value_type == TIDES_KT_DELETE && above_upper(it, k, n))
		{
			tides_iiter_prev(it->inner);
			continue;
		}
		if (seq <= it->seq)
		{
			if (value_type != TIDES_KT_DELETE &&
				tides_ukey_cmp(k, n, it->saved_key.data, it->saved_key.len) < 0)
				break;			/* passed all entries of the candidate */
			if (below_lower(it, k, n))
				break;
			value_type = (type == TIDES_KT_DELETE || hidden(it, k, n, seq)) ? TIDES_KT_DELETE : type;
			if (value_type == TIDES_KT_DELETE)
			{
				it->saved_key.len = 0;
				it->saved_value.len = 0;
			}
			else
			{
				size_t		vlen;
				const uint8_t *v = tides_iiter_value(it->inner, &vlen);

				buf_set(&it->saved_key, k, n);
				buf_set(&it->saved_value, v, vlen);
			}
		}
		tides_iiter_prev(it->inner);
	}
	if (value_type == TIDES_KT_DELETE)
	{
		it->saved_key.len = 0;
		it->saved_value.len = 0;
		it->dir = DIR_FORWARD;
		stop(it);
	}
	else
		it->valid = true;
}

/* seek the merge to ukey; with stem_suffix, as a reader of ukey's stem keys only */
static void
seek_internal(tides_iter *it, const uint8_t *ukey, size_t n, uint32_t stem_suffix)
{
	tides_buf  *s = &it->scratch;

	s->len = 0;
	tides_buf_reserve(s, n + TIDES_TRAILER);
	s->len = tides_ikey_make(s->data, ukey, n, it->seq, TIDES_KT_SEEK);
	if (stem_suffix > 0)
		tides_iiter_seek_stem(it->inner, s->data, s->len, ukey, n, stem_suffix);
	else
		tides_iiter_seek(it->inner, s->data, s->len);
}

static void
seek_forward(tides_iter *it, const void *key, size_t klen, uint32_t stem_suffix)
{
	it->parked = false;
	it->dir = DIR_FORWARD;
	it->valid = false;
	it->saved_value.len = 0;
	if (below_lower(it, key, klen))
	{
		key = it->lower.data;
		klen = it->lower.len;
		stem_suffix = 0;
	}
	seek_internal(it, key, klen, klen > 0 ? stem_suffix : 0);
	find_next_user_entry(it, false);
}

void
tides_iter_seek(tides_iter *it, const void *key, size_t klen)
{
	seek_forward(it, key, klen, 0);
}

void
tides_iter_seek_stem(tides_iter *it, const void *stem, size_t len)
{
	seek_forward(it, stem, len, it->db->opts.filter_stem_suffix);
}

void
tides_iter_first(tides_iter *it)
{
	it->parked = false;
	it->dir = DIR_FORWARD;
	it->valid = false;
	it->saved_value.len = 0;
	if (it->has_lower)
		seek_internal(it, it->lower.data, it->lower.len, 0);
	else
		tides_iiter_first(it->inner);
	find_next_user_entry(it, false);
}

void
tides_iter_last(tides_iter *it)
{
	it->parked = false;
	it->dir = DIR_BACKWARD;
	it->valid = false;
	it->saved_value.len = 0;
	if (it->has_upper)
	{
		/* position before the first entry >= upper */
		tides_buf  *s = &it->scratch;

		s->len = 0;
		tides_buf_reserve(s, it->upper.len + TIDES_TRAILER);
		s->len = tides_ikey_make(s->data, it->upper.data, it->upper.len, TIDES_MAX_SEQ, TIDES_KT_SEEK);
		tides_iiter_seek(it->inner, s->data, s->len);
		if (tides_iiter_valid(it->inner))
			tides_iiter_prev(it->inner);
		else if (tides_iiter_status(it->inner) == TIDES_OK)
			tides_iiter_last(it->inner);
	}
	else
		tides_iiter_last(it->inner);
	find_prev_user_entry(it);
}

void
tides_iter_seek_for_prev(tides_iter *it, const void *key, size_t klen)
{
	tides_iter_seek(it, key, klen);
	if (it->valid)
	{
		size_t		n;
		const void *k = tides_iter_key(it, &n);

		if (tides_ukey_cmp(k, n, key, klen) == 0)
			return;
		tides_iter_prev(it);
	}
	else if (it->status == TIDES_OK)
		tides_iter_last(it);
}

/*
 * Leave the parked entry for the new view: land on its key if it is still
 * there (the step then moves on from it), else already past it.
 */
static bool
unpark(tides_iter *it, bool backward)
{
	size_t		n;
	const void *k;

	TIDES_ASSERT(it->parked);
	it->parked = false;
	if (backward)
		tides_iter_seek_for_prev(it, it->park_key.data, it->park_key.len);
	else
		tides_iter_seek(it, it->park_key.data, it->park_key.len);
	if (!it->valid)
		return false;
	k = tides_iter_key(it, &n);
	return tides_ukey_cmp(k, n, it->park_key.data, it->park_key.len) == 0;
}

void
tides_iter_next(tides_iter *it)
{
	TIDES_ASSERT(it->valid);
	if (it->parked && !unpark(it, false))
		return;
	if (it->dir == DIR_BACKWARD)
	{
		/* inner is before the entries of saved_key: step onto them, then past */
		it->dir = DIR_FORWARD;
		if (!tides_iiter_valid(it->inner))
		{
			if (tides_iiter_status(it->inner) != TIDES_OK)
			{
				stop(it);
				return;
			}
			tides_iiter_first(it->inner);
		}
		else
			tides_iiter_next(it->inner);
		it->saved_value.len = 0;
		find_next_user_entry(it, true);
		return;
	}
	{
		size_t		n;
		uint64_t	seq;
		int			type;
		const uint8_t *k = inner_ukey(it, &n, &seq, &type);

		buf_set(&it->saved_key, k, n);
	}
	tides_iiter_next(it->inner);
	find_next_user_entry(it, true);
}

void
tides_iter_prev(tides_iter *it)
{
	TIDES_ASSERT(it->valid);
	if (it->parked && !unpark(it, true))
		return;
	if (it->dir == DIR_FORWARD)
	{
		/* step the inner iterator back before every entry of the current key */
		size_t		n;
		uint64_t	seq;
		int			type;
		const uint8_t *k = inner_ukey(it, &n, &seq, &type);

		buf_set(&it->saved_key, k, n);
		for (;;)
		{
			tides_iiter_prev(it->inner);
			if (!tides_iiter_valid(it->inner))
			{
				it->saved_key.len = 0;
				it->saved_value.len = 0;
				stop(it);
				return;
			}
			k = inner_ukey(it, &n, &seq, &type);
			if (tides_ukey_cmp(k, n, it->saved_key.data, it->saved_key.len) < 0)
				break;
		}
		it->dir = DIR_BACKWARD;
	}
	find_prev_user_entry(it);
}

bool
tides_iter_valid(const tides_iter *it)
{
	return it->valid;
}

const void *
tides_iter_key(const tides_iter *it, size_t *klen)
{
	TIDES_ASSERT(it->valid);
	if (it->parked)
	{
		*klen = it->park_key.len;
		return it->park_key.data;
	}
	if (it->dir == DIR_FORWARD)
	{
		size_t		n;
		const uint8_t *k = tides_iiter_key(it->inner, &n);

		*klen = n - TIDES_TRAILER;
		return k;
	}
	*klen = it->saved_key.len;
	return it->saved_key.data;
}

const void *
tides_iter_value(const tides_iter *it, size_t *vlen)
{
	TIDES_ASSERT(it->valid);
	if (it->parked)
	{
		*vlen = it->park_value.len;
		return it->park_value.data;
	}
	if (it->dir == DIR_FORWARD)
		return tides_iiter_value(it->inner, vlen);
	*vlen = it->saved_value.len;
	return it->saved_value.data;
}

uint64_t
tides_iter_read_point(const tides_iter *it)
{
	return it->parked ? it->park_seq : it->seq;
}

tides_status
tides_iter_status(const tides_iter *it)
{
	if (it->status != TIDES_OK)
		return it->status;
	if (it->saved_key.oom || it->saved_value.oom || it->scratch.oom ||
		it->park_key.oom || it->park_value.oom)
		return TIDES_NO_MEMORY;
	return TIDES_OK;
}

/* the common prefix of the bounds, if at least prefix_len long */
static const uint8_t *
bound_prefix(const tides_iter *it, size_t prefix_len)
{
	if (prefix_len == 0 || !it->has_lower || !it->has_upper ||
		it->lower.len < prefix_len || it->upper.len < prefix_len ||
		memcmp(it->lower.data, it->upper.data, prefix_len) != 0)
		return NULL;
	return it->lower.data;
}

/*
 * The merge over a superversion, for reads at seq: every memtable, the
 * level-0 files that may hold entries at or below seq (and, with a
 * prefix-bounded range, the key prefix), one iterator per deeper level.
 * NULL when out of memory.
 */
static tides_iiter *
build_inner(tides_iter *it, tides_superversion *sv, uint64_t seq)
{
	tides_db   *db = it->db;
	tides_version *v = sv->version;
	size_t		plen = db->opts.prefix_len;
	const uint8_t *prefix = bound_prefix(it, plen);
	uint32_t	stem = 0;		/* nonzero: prefix is a stem of keys this much longer */
	tides_iiter **children;
	tides_iiter *inner;
	int			n = 0;

	/* a stem is the stronger filter: it names the keys wanted exactly */
	if (it->lower_is_stem && it->has_lower && it->lower.len > 0 && db->opts.filter_stem_suffix > 0)
	{
		prefix = it->lower.data;
		plen = it->lower.len;
		stem = db->opts.filter_stem_suffix;
	}
	children = calloc(sv->nmem + v->nfiles[0] + TIDES_MAX_LEVELS + 1, sizeof(*children));
	if (children == NULL)
		return NULL;
	for (uint32_t i = 0; i < sv->nmem; i++)
		children[n++] = tides_memtable_iter_new(sv->mems[i]);
	for (uint32_t i = 0; i < v->nfiles[0]; i++)
	{
		const tides_file_meta *f = v->files[0][i];

		if (f->min_seq > seq)
			continue;
		/* wholly outside the bounds: nothing to show, no block read */
		if ((it->has_upper &&
			 tides_ukey_cmp(tides_file_smallest(f), f->smallest_len - TIDES_TRAILER,
							it->upper.data, it->upper.len) >= 0) ||
			(it->has_lower &&
			 tides_ukey_cmp(tides_file_largest(f), f->largest_len - TIDES_TRAILER,
							it->lower.data, it->lower.len) < 0))
			continue;
		if (prefix != NULL)
		{
			tides_sst  *t;
			tides_error err;
			bool		may = true;

			if (tides_table_cache_get(db->tcache, f->number, f->size, &t, &err) == TIDES_OK)
			{
				may = stem > 0 ? tides_sst_may_contain_stem(t, prefix, plen, stem) :
					tides_sst_may_contain_prefix(t, prefix, plen);
				tides_table_cache_release(db->tcache, t);
			}
			if (!may)
				continue;
		}
		children[n] = tides_table_cache_iter(db->tcache, f->number, f->size, it->fill);
		if (children[n] != NULL && it->fetch_ahead)
			tides_sst_iter_fetch_ahead(children[n]);
		n++;
	}
	for (int l = 1; l < TIDES_MAX_LEVELS; l++)
		if (v->nfiles[l] > 0)
			children[n++] = tides_level_iter_new(db->tcache, v, l, it->fill, it->fetch_ahead, prefix, prefix ? plen : 0, stem,
												 it->has_lower ? it->lower.data : NULL, it->lower.len,
												 it->has_upper ? it->upper.data : NULL, it->upper.len);
	for (int i = 0; i < n; i++)
		if (children[i] == NULL)
		{
			for (int j = 0; j < n; j++)
				tides_iiter_destroy(children[j]);
			free(children);
			return NULL;
		}
	inner = tides_merge_iter_new(children, n);
	free(children);
	return inner;
}

tides_iter *
tides_iter_new(tides_db *db, const tides_iter_options *opts)
{
	tides_shared *sh = db->sh;
	tides_iter *it;

	if (atomic_load(&sh->state) != TIDES_STATE_OPEN)
		return NULL;
	it = calloc(1, sizeof(*it));
	if (it == NULL)
		return NULL;
	it->db = db;
	it->fill = opts ? opts->fill_cache : true;
	it->fetch_ahead = opts && opts->read_ahead;
	it->lower_is_stem = opts && opts->lower_is_stem;
	tides_buf_init(&it->lower);
	tides_buf_init(&it->upper);
	tides_buf_init(&it->saved_key);
	tides_buf_init(&it->saved_value);
	tides_buf_init(&it->scratch);
	tides_buf_init(&it->park_key);
	tides_buf_init(&it->park_value);
	if (opts && opts->lower)
	{
		buf_set(&it->lower, opts->lower, opts->lower_len);
		it->has_lower = true;
	}
	if (opts && opts->upper)
	{
		buf_set(&it->upper, opts->upper, opts->upper_len);
		it->has_upper = true;
	}
	/* the read point: seq and superversion taken together (superversion.c) */
	if (opts && opts->snap)
	{
		it->seq = opts->snap->seq;
		it->has_snap = true;
		it->sv = tides_sv_acquire(db);
	}
	else
		it->sv = tides_sv_acquire_at(db, &it->seq);
	TIDES_TEST_POINT("iter.pinned", db);
	it->inner = build_inner(it, it->sv, it->seq);
	if (it->inner == NULL)
	{
		tides_sv_release(db, it->sv);
		tides_buf_free(&it->lower);
		tides_buf_free(&it->upper);
		free(it);
		return NULL;
	}
	it->dir = DIR_FORWARD;
	return it;
}

tides_status
tides_iter_repin(tides_iter *it)
{
	tides_db   *db = it->db;
	tides_superversion *sv;
	tides_iiter *inner;
	uint64_t	seq = it->seq;

	if (atomic_load(&db->sh->state) != TIDES_STATE_OPEN)
		return TIDES_UNAVAILABLE;
	sv = it->has_snap ? tides_sv_acquire(db) : tides_sv_acquire_at(db, &seq);
	if (sv == it->sv)
	{
		/* pinned by it already, so the same one: nothing to let go of */
		tides_sv_release(db, sv);
		return TIDES_OK;
	}
	inner = build_inner(it, sv, seq);
	if (inner != NULL && it->valid && !it->parked)
	{
		size_t		kl,
					vl;
		const void *k = tides_iter_key(it, &kl);
		const void *v = tides_iter_value(it, &vl);

		buf_set(&it->park_key, k, kl);
		buf_set(&it->park_value, v, vl);
		it->park_seq = tides_iter_read_point(it);
		it->parked = !it->park_key.oom && !it->park_value.oom;
		if (!it->parked)
		{
			tides_iiter_destroy(inner);
			inner = NULL;
		}
	}
	if (inner == NULL)
	{
		/* nothing changed: the old pins stay */
		tides_sv_release(db, sv);
		return TIDES_NO_MEMORY;
	}
	tides_iiter_destroy(it->inner);
	tides_sv_release(db, it->sv);
	it->inner = inner;
	it->sv = sv;
	it->seq = seq;
	it->drop_sv = NULL;
	it->dir = DIR_FORWARD;
	it->saved_key.len = 0;
	it->saved_value.len = 0;
	TIDES_ASSERT(!it->valid || it->parked);
	return TIDES_OK;
}

void
tides_iter_free(tides_iter *it)
{
	if (it == NULL)
		return;
	tides_iiter_destroy(it->inner);
	tides_sv_release(it->db, it->sv);
	tides_buf_free(&it->lower);
	tides_buf_free(&it->upper);
	tides_buf_free(&it->saved_key);
	tides_buf_free(&it->saved_value);
	tides_buf_free(&it->scratch);
	tides_buf_free(&it->park_key);
	tides_buf_free(&it->park_value);
	free(it);
}
