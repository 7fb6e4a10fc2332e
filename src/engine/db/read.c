/*
 * read.c -- point reads: memtables newest first, then level 0 newest first,
 * then one binary-searched file per deeper level.  The first entry found for
 * the key (at or below the read sequence number) decides.
 */
#include <stdlib.h>
#include <string.h>

#include "db/db_impl.h"
#include "db/publish.h"
#include "db/merge_iter.h"
#include "util/testpoint.h"

typedef struct get_state
{
	const uint8_t *ukey;
	size_t		klen;
	bool		found;			/* an entry for the key was met */
	int			type;
	uint64_t	seq;
	/* where the value goes */
	void	  **out;			/* tides_get: malloc a copy */
	void	   *buf;			/* tides_get_into */
	size_t		cap;
	size_t	   *vlen;
	tides_status copy_status;
} get_state;

static void
deliver(get_state *g, const uint8_t *val, size_t vlen)
{
	*g->vlen = vlen;
	if (g->out != NULL)
	{
		void	   *p = malloc(vlen ? vlen : 1);

		if (p == NULL)
		{
			g->copy_status = TIDES_NO_MEMORY;
			return;
		}
		memcpy(p, val, vlen);
		*g->out = p;
	}
	else if (vlen <= g->cap)
		memcpy(g->buf, val, vlen);
	else
		g->copy_status = TIDES_INVALID;
}

static void
sst_found(void *arg, const uint8_t *ikey, size_t iklen, const uint8_t *val, size_t vlen)
{
	get_state  *g = arg;

	if (tides_ukey_cmp(ikey, iklen - TIDES_TRAILER, g->ukey, g->klen) != 0)
		return;
	g->found = true;
	g->type = tides_ikey_type(ikey, iklen);
	g->seq = tides_ikey_seq(ikey, iklen);
	if (g->type == TIDES_KT_VALUE)
		deliver(g, val, vlen);
}

static bool
file_may_hold(const tides_file_meta *f, const uint8_t *ukey, size_t klen)
{
	return tides_ukey_cmp(tides_file_smallest(f), f->smallest_len - TIDES_TRAILER, ukey, klen) <= 0 &&
		tides_ukey_cmp(tides_file_largest(f), f->largest_len - TIDES_TRAILER, ukey, klen) >= 0;
}

/* may the file hold a user key in [lower, upper)? */
static bool
file_overlaps_range(const tides_file_meta *f, const uint8_t *lower, size_t llen,
					const uint8_t *upper, size_t ulen)
{
	return tides_ukey_cmp(tides_file_largest(f), f->largest_len - TIDES_TRAILER, lower, llen) >= 0 &&
		tides_ukey_cmp(tides_file_smallest(f), f->smallest_len - TIDES_TRAILER, upper, ulen) < 0;
}

static tides_status
search_file(tides_db *db, const tides_file_meta *f, const uint8_t *ikey, size_t iklen,
			bool use_filter, get_state *g, tides_error *err)
{
	tides_sst  *t;
	tides_status s = tides_table_cache_get(db->tcache, f->number, f->size, &t, err);

	if (s != TIDES_OK)
		return s;
	s = tides_sst_get_filtered(t, ikey, iklen, use_filter, sst_found, g, err);
	tides_table_cache_release(db->tcache, t);
	return s == TIDES_NOT_FOUND ? TIDES_OK : s;
}

static tides_status
get_internal(tides_db *db, const tides_snapshot *snap, const void *key, size_t klen, get_state *g)
{
	tides_shared *sh = db->sh;
	uint64_t	seq;
	tides_superversion *sv;
	uint8_t		stackkey[256];
	uint8_t    *ikey = stackkey;
	size_t		iklen = klen + TIDES_TRAILER;
	tides_error err;
	tides_status s = TIDES_OK;
	int			last;

	if (atomic_load(&sh->state) != TIDES_STATE_OPEN)
		return tides_fail(&db->err, TIDES_UNAVAILABLE, "engine is not open");
	if (klen == 0 || klen > TIDES_MAX_KEY_LEN)
		return tides_fail(&db->err, TIDES_INVALID, "bad key length %zu", klen);
	tides_error_clear(&err);
	if (iklen > sizeof(stackkey) && (ikey = malloc(iklen)) == NULL)
		return tides_fail(&db->err, TIDES_NO_MEMORY, "out of memory");
	/* the read point: seq and superversion taken together (superversion.c) */
	if (snap != NULL)
	{
		seq = snap->seq;
		sv = tides_sv_acquire(db);
	}
	else
		sv = tides_sv_acquire_at(db, &seq);
	TIDES_TEST_POINT("read.pinned", db);
	tides_ikey_make(ikey, key, klen, seq, TIDES_KT_SEEK);
	g->ukey = key;
	g->klen = klen;
	g->found = false;
	g->copy_status = TIDES_OK;

	for (uint32_t i = 0; i < sv->nmem && !g->found; i++)
	{
		const uint8_t *v;
		size_t		vlen;

		if (tides_memtable_get(sv->mems[i], key, klen, seq, &g->type, &g->seq, &v, &vlen))
		{
			g->found = true;
			if (g->type == TIDES_KT_VALUE)
				deliver(g, v, vlen);
		}
	}
	for (uint32_t i = 0; !g->found && s == TIDES_OK && i < sv->version->nfiles[0]; i++)
	{
		const tides_file_meta *f = sv->version->files[0][i];

		if (f->min_seq <= seq && file_may_hold(f, key, klen))
			s = search_file(db, f, ikey, iklen, true, g, &err);
	}
	/*
	 * The last level's file is the last place the key can be: a read that
	 * reached it mostly finds its key there (rows are read by the row ids
	 * an index gave), so its filter block would only add a read to "may be
	 * there"; a key not there costs an index and a data block instead.
	 */
	last = tides_version_last_level(sv->version);
	for (int l = 1; !g->found && s == TIDES_OK && l <= last; l++)
	{
		uint32_t	i = tides_version_find_file(sv->version, l, ikey, iklen);

		if (i < sv->version->nfiles[l] && file_may_hold(sv->version->files[l][i], key, klen))
			s = search_file(db, sv->version->files[l][i], ikey, iklen, l < last, g, &err);
	}
	if (g->found && tides_dropped_hides(sv->dropped, sv->ndropped, key, klen, g->seq))
	{
		if (g->type == TIDES_KT_VALUE && g->out != NULL && g->copy_status == TIDES_OK)
		{
			free(*g->out);
			*g->out = NULL;		/* the caller may free() it on NOT_FOUND too */
		}
		*g->vlen = 0;
		g->type = TIDES_KT_DELETE;
	}
	tides_sv_release(db, sv);
	if (ikey != stackkey)
		free(ikey);
	if (s != TIDES_OK)
		return tides_db_fail(db, &err);
	if (!g->found || g->type == TIDES_KT_DELETE)
		return TIDES_NOT_FOUND;
	if (g->copy_status != TIDES_OK)
		return tides_fail(&db->err, g->copy_status, g->copy_status == TIDES_INVALID ?
						  "value of %zu bytes does not fit the buffer" : "out of memory (%zu bytes)",
						  *g->vlen);
	return TIDES_OK;
}

tides_status
tides_get(tides_db *db, const tides_snapshot *snap, const void *key, size_t klen,
		  void **val, size_t *vlen)
{
	get_state	g = {.out = val, .vlen = vlen};

	*val = NULL;
	*vlen = 0;
	return get_internal(db, snap, key, klen, &g);
}

tides_status
tides_get_into(tides_db *db, const tides_snapshot *snap, const void *key, size_t klen,
			   void *buf, size_t cap, size_t *vlen)
{
	get_state	g = {.buf = buf, .cap = cap, .vlen = vlen};

	*vlen = 0;
	return get_internal(db, snap, key, klen, &g);
}

/*
 * Prefetch: the walk of get_internal without reading a data block.  The
 * search for a key ends at the first memtable entry, or at the first file
 * whose block for it was asked for or is cached with the key in it
 * (tides_sst_prefetch); a key found nowhere costs its last-level block,
 * as its get would.  A stem's walk is a stem seek's (db_iter.c): every
 * file whose key range and stem filter may hold the stem, down to the last
 * level (sought without its filter), each asked for the block the seek
 * lands in.
 */
static bool
prefetch_in_file(tides_db *db, const tides_file_meta *f, const uint8_t *ikey, size_t iklen,
				 bool use_filter, size_t *asked)
{
	tides_sst  *t;
	tides_error err;
	bool		ends,
				did;

	tides_error_clear(&err);
	if (tides_table_cache_get(db->tcache, f->number, f->size, &t, &err) != TIDES_OK)
		return true;			/* the get will report it */
	ends = tides_sst_prefetch(t, ikey, iklen, use_filter, &did);
	tides_table_cache_release(db->tcache, t);
	*asked += did;
	return ends;
}

static void
prefetch_key(tides_db *db, const tides_superversion *sv, uint64_t seq, const uint8_t *key,
			 size_t klen, const uint8_t *ikey, size_t iklen, size_t *asked)
{
	const tides_version *v = sv->version;
	int			last = tides_version_last_level(v);

	for (uint32_t i = 0; i < sv->nmem; i++)
	{
		int			type;
		uint64_t	eseq;
		const uint8_t *val;
		size_t		vlen;

		if (tides_memtable_get(sv->mems[i], key, klen, seq, &type, &eseq, &val, &vlen))
			return;
	}
	for (uint32_t i = 0; i < v->nfiles[0]; i++)
		if (v->files[0][i]->min_seq <= seq && file_may_hold(v->files[0][i], key, klen) &&
			prefetch_in_file(db, v->files[0][i], ikey, iklen, true, asked))
			return;
	for (int l = 1; l <= last; l++)
	{
		uint32_t	i = tides_version_find_file(v, l, ikey, iklen);

		if (i < v->nfiles[l] && file_may_hold(v->files[l][i], key, klen) &&
			prefetch_in_file(db, v->files[l][i], ikey, iklen, l < last, asked))
			return;
	}
}

static void
prefetch_stem(tides_db *db, const tides_superversion *sv, uint64_t seq, const uint8_t *stem,
			  size_t len, const uint8_t *ikey, size_t iklen, size_t *asked)
{
	const tides_version *v = sv->version;
	int			last = tides_version_last_level(v);
	uint32_t	suffix = db->opts.filter_stem_suffix;

	for (uint32_t i = 0; i < v->nfiles[0]; i++)
		if (v->files[0][i]->min_seq <= seq &&
			tides_file_may_hold_stem(db->tcache, v->files[0][i], stem, len, suffix))
			(void) prefetch_in_file(db, v->files[0][i], ikey, iklen, false, asked);
	for (int l = 1; l <= last; l++)
	{
		uint32_t	i = tides_version_find_file(v, l, ikey, iklen);

		if (i < v->nfiles[l] &&
			tides_file_may_hold_stem(db->tcache, v->files[l][i], stem, len, l < last ? suffix : 0))
			(void) prefetch_in_file(db, v->files[l][i], ikey, iklen, false, asked);
	}
}

static size_t
prefetch(tides_db *db, const void *const *keys, const size_t *lens, size_t n, bool stems)
{
	uint8_t		ikey[256];
	tides_superversion *sv;
	uint64_t	seq;
	size_t		asked = 0;

	if (atomic_load(&db->sh->state) != TIDES_STATE_OPEN)
		return 0;
	sv = tides_sv_acquire_at(db, &seq);
	for (size_t k = 0; k < n; k++)
	{
		if (lens[k] == 0 || lens[k] + TIDES_TRAILER > sizeof(ikey))
			continue;			/* no key that long is worth a hint (a row's key is 14 bytes) */
		tides_ikey_make(ikey, keys[k], lens[k], seq, TIDES_KT_SEEK);
		if (stems)
			prefetch_stem(db, sv, seq, keys[k], lens[k], ikey, lens[k] + TIDES_TRAILER, &asked);
		else
			prefetch_key(db, sv, seq, keys[k], lens[k], ikey, lens[k] + TIDES_TRAILER, &asked);
	}
	tides_sv_release(db, sv);
	return asked;
}

size_t
tides_prefetch(tides_db *db, const void *const *keys, const size_t *lens, size_t n)
{
	return prefetch(db, keys, lens, n, false);
}

size_t
tides_prefetch_stems(tides_db *db, const void *const *stems, const size_t *lens, size_t n)
{
	return prefetch(db, stems, lens, n, true);
}

uint64_t
tides_read_point(tides_db *db)
{
	tides_await_own(db);
	return atomic_load_explicit(&db->sh->published_seq, memory_order_acquire);
}

/*
 * Why the answer "unchanged" is right.  The superversion and seq are pinned
 * together, so every entry published up to seq is in one of its memtables
 * or files.  An entry for key newer than since is therefore (a) in a
 * memtable, where the newest entry for key (first found, newest memtable
 * first, as get_internal decides) has a seq above since; or (b) in a file
 * whose key range holds key and whose max_seq is above since -- checked
 * without reading it, so such a file answers "changed" whether or not it
 * holds key.  A memtable entry at or below since is the newest entry there
 * is (files only hold older ones), so the files need no look.  A dropped
 * prefix hides entries up to its seq without writing one, and its trace in
 * the superversion goes once reclaimed, so any drop at or after since (its
 * seq is the last seq assigned when it was made, so at least the read point
 * of a read before it) answers "changed" whatever it covers: drops are rare,
 * and the caller just reads again.
 */
/*
 * The superversion a since-question reads, pinned with its seq; *dropped:
 * a prefix was dropped at or after since, which answers "changed".  NULL
 * (with the error set) when the engine is not open.
 */
static tides_superversion *
since_begin(tides_db *db, uint64_t since, uint64_t *seq, bool *dropped)
{
	tides_superversion *sv;

	if (atomic_load(&db->sh->state) != TIDES_STATE_OPEN)
	{
		tides_fail(&db->err, TIDES_UNAVAILABLE, "engine is not open");
		return NULL;
	}
	sv = tides_sv_acquire_at(db, seq);
	TIDES_ASSERT(since <= *seq);	/* a read point of this engine, taken earlier */
	*dropped = atomic_load(&db->sh->drop_end) > since;
	return sv;
}

/* its end: the answer counted, the superversion and a malloc'd search key let go */
static void
since_end(tides_db *db, tides_superversion *sv, uint8_t *ikey, const uint8_t *stackkey,
		  bool range, bool changed)
{
	tides_counter_set *c = tides_counters_mine(&db->sh->counters);

	atomic_fetch_add_explicit(range ? (changed ? &c->ranges_changed : &c->ranges_unchanged) :
							  (changed ? &c->reads_changed : &c->reads_unchanged),
							  1, memory_order_relaxed);
	if (ikey != stackkey)
		free(ikey);
	tides_sv_release(db, sv);
}

tides_status
tides_changed_since(tides_db *db, const void *key, size_t klen, uint64_t since, bool *changed)
{
	tides_superversion *sv;
	tides_version *v;
	uint64_t	seq;
	uint8_t		stackkey[256];
	uint8_t    *ikey = stackkey;
	bool		decided = false;

	*changed = true;
	if (klen == 0 || klen > TIDES_MAX_KEY_LEN)
		return tides_fail(&db->err, TIDES_INVALID, "bad key length %zu", klen);
	if ((sv = since_begin(db, since, &seq, &decided)) == NULL)
		return TIDES_UNAVAILABLE;
	v = sv->version;
	for (uint32_t i = 0; i < sv->nmem && !decided; i++)
	{
		int			type;
		uint64_t	eseq;
		const uint8_t *val;
		size_t		vlen;

		if (tides_memtable_get(sv->mems[i], key, klen, seq, &type, &eseq, &val, &vlen))
		{
			*changed = eseq > since;
			decided = true;
		}
	}
	for (uint32_t i = 0; i < v->nfiles[0] && !decided; i++)
	{
		const tides_file_meta *f = v->files[0][i];

		if (f->min_seq <= seq && f->max_seq > since && file_may_hold(f, key, klen))
			decided = true;
	}
	/* without memory for the search key: "changed" (the caller reads again) */
	if (!decided && klen + TIDES_TRAILER > sizeof(stackkey) &&
		(ikey = malloc(klen + TIDES_TRAILER)) == NULL)
		decided = true;
	if (!decided)
		tides_ikey_make(ikey, key, klen, seq, TIDES_KT_SEEK);
	for (int l = 1; l < TIDES_MAX_LEVELS && !decided; l++)
	{
		uint32_t	i = tides_version_find_file(v, l, ikey, klen + TIDES_TRAILER);

		if (i < v->nfiles[l] && v->files[l][i]->max_seq > since &&
			file_may_hold(v->files[l][i], key, klen))
			decided = true;
	}
	if (!decided)
		*changed = false;		/* no memtable entry, no file newer than since */
	since_end(db, sv, ikey, stackkey, false, *changed);
	return TIDES_OK;
}

/*
 * As tides_changed_since, for a range: a memtable answers with its entries
 * in the range (any above since, whatever the superversion's seq: a write
 * after the pin is a change too), a file of any level by its key range and
 * max_seq alone.  An entry above since that a compaction dropped was
 * shadowed by a newer one, which keeps its file's max_seq above since, or
 * was a deletion dropped together with what it deleted, which leaves the
 * range as it was at since -- the answer's meaning.
 */
#define RANGE_MAX_MEM_STEPS 4096

tides_status
tides_range_changed_since(tides_db *db, const void *lower, size_t llen, const void *upper,
						  size_t ulen, uint64_t since, bool *changed)
{
	tides_superversion *sv;
	tides_version *v;
	uint64_t	seq;
	uint8_t		stackkey[256];
	uint8_t    *ikey = stackkey;
	bool		decided = false;

	*changed = true;
	if (llen == 0 || llen > TIDES_MAX_KEY_LEN || ulen == 0 || ulen > TIDES_MAX_KEY_LEN)
		return tides_fail(&db->err, TIDES_INVALID, "bad key lengths %zu, %zu", llen, ulen);
	if (tides_ukey_cmp(lower, llen, upper, ulen) >= 0)
	{
		*changed = false;		/* an empty range */
		return TIDES_OK;
	}
	if ((sv = since_begin(db, since, &seq, &decided)) == NULL)
		return TIDES_UNAVAILABLE;
	v = sv->version;
	for (uint32_t i = 0; i < sv->nmem && !decided; i++)
		decided = tides_memtable_newer_in_range(sv->mems[i], lower, llen, upper, ulen, since,
												RANGE_MAX_MEM_STEPS);
	for (uint32_t i = 0; i < v->nfiles[0] && !decided; i++)
	{
		const tides_file_meta *f = v->files[0][i];

		decided = f->max_seq > since && file_overlaps_range(f, lower, llen, upper, ulen);
	}
	if (!decided && llen + TIDES_TRAILER > sizeof(stackkey) &&
		(ikey = malloc(llen + TIDES_TRAILER)) == NULL)
		decided = true;			/* no memory for the search key: "changed" */
	if (!decided)
		tides_ikey_make(ikey, lower, llen, TIDES_MAX_SEQ, TIDES_KT_SEEK);
	for (int l = 1; l < TIDES_MAX_LEVELS && !decided; l++)
	{
		/* the level's files from the first that reaches lower, while they start below upper */
		for (uint32_t i = tides_version_find_file(v, l, ikey, llen + TIDES_TRAILER);
			 i < v->nfiles[l] && !decided; i++)
		{
			const tides_file_meta *f = v->files[l][i];

			if (!file_overlaps_range(f, lower, llen, upper, ulen))
				break;
			decided = f->max_seq > since;
		}
	}
	*changed = decided;
	since_end(db, sv, ikey, stackkey, true, decided);
	return TIDES_OK;
}

/*
 * Why "absent" is right.  Every entry whose write returned before the call
 * is in a memtable or a file of the current superversion (a flush installs
 * the file before the memtable leaves).  A memtable answers for every key
 * with the prefix, whatever its seq; a file is ruled out by its key range
 * or its stem filter, which hold every key it has, tombstones included.
 * Drops only hide entries, so they cannot make "absent" wrong.
 */
tides_status
tides_stem_absent(tides_db *db, const void *stem, size_t len, bool *absent)
{
	tides_superversion *sv;
	tides_version *v;
	uint32_t	suffix = db->opts.filter_stem_suffix;
	uint8_t		stackkey[256];
	uint8_t    *ikey = stackkey;
	bool		may = false;

	*absent = false;
	if (atomic_load(&db->sh->state) != TIDES_STATE_OPEN)
		return tides_fail(&db->err, TIDES_UNAVAILABLE, "engine is not open");
	if (len == 0 || len > TIDES_MAX_KEY_LEN)
		return tides_fail(&db->err, TIDES_INVALID, "bad key length %zu", len);
	sv = tides_sv_acquire(db);
	v = sv->version;
	if (sv->nmem > 0)
	{
		uint64_t	h = tides_memtable_stem_hash(stem, len);

		for (uint32_t i = 0; i < sv->nmem; i++)
			tides_memtable_prefetch_stem(sv->mems[i], h);
		for (uint32_t i = 0; i < sv->nmem && !may; i++)
			may = tides_memtable_may_hold_stem(sv->mems[i], stem, len, suffix, h);
	}
	for (uint32_t i = 0; i < v->nfiles[0] && !may; i++)
		may = tides_file_may_hold_stem(db->tcache, v->files[0][i], stem, len, suffix);
	if (!may && len + TIDES_TRAILER > sizeof(stackkey) && (ikey = malloc(len + TIDES_TRAILER)) == NULL)
		may = true;				/* no memory for the search key: "maybe" */
	if (!may)
		tides_ikey_make(ikey, stem, len, TIDES_MAX_SEQ, TIDES_KT_SEEK);
	for (int l = 1; l < TIDES_MAX_LEVELS && !may; l++)
	{
		/* the first file whose largest key reaches stem, and any after it that the run reaches */
		for (uint32_t i = tides_version_find_file(v, l, ikey, len + TIDES_TRAILER);
			 i < v->nfiles[l] && !may && tides_file_may_hold_prefix(v->files[l][i], stem, len); i++)
			may = tides_file_may_hold_stem(db->tcache, v->files[l][i], stem, len, suffix);
	}
	*absent = !may;
	if (*absent)
		tides_count(&db->sh->counters, stem_probes_absent, 1);
	else
		tides_count(&db->sh->counters, stem_probes_maybe, 1);
	if (ikey != stackkey)
		free(ikey);
	tides_sv_release(db, sv);
	return TIDES_OK;
}
