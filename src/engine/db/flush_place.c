/*
 * flush_place.c -- the placement plan of flush_place.h.
 */
#include "db/flush_place.h"

#include <stdlib.h>
#include <string.h>

#include "db/compaction.h"
#include "db/merge_iter.h"
#include "table/table_cache.h"
#include "util/buf.h"

uint64_t
tides_place_min(const tides_db *db)
{
	uint64_t	m = db->opts.memtable_size / 64;

	return m > 1024 ? m : 1024;
}

static size_t
prefix_len(const tides_db *db, size_t ulen)
{
	size_t		p = db->opts.range_prefix_len;

	return ulen < p ? ulen : p;
}

/* the smallest key above every key starting with prefix; false: none (all 0xff) */
static bool
prefix_end(const uint8_t *prefix, size_t plen, tides_buf *out)
{
	size_t		n = plen;

	while (n > 0 && prefix[n - 1] == 0xff)
		n--;
	if (n == 0)
		return false;
	tides_buf_reset(out);
	tides_buf_append(out, prefix, n);
	if (out->oom)
		return false;
	out->data[n - 1]++;
	return true;
}

/*
 * The largest user key with the prefix in file f, into *best if it is
 * larger than what *best holds (*have).  False if the file cannot be read.
 */
static bool
largest_in_file(tides_db *db, const tides_file_meta *f, const uint8_t *prefix, size_t plen,
				const tides_buf *end, bool bounded, tides_buf *best, bool *have, tides_buf *scratch)
{
	tides_iiter *it = tides_table_cache_iter(db->tcache, f->number, f->size, false);
	bool		ok;

	if (it == NULL)
		return false;
	if (bounded)
	{
		tides_buf_reset(scratch);
		tides_buf_append(scratch, end->data, end->len);
		tides_buf_put64(scratch, tides_pack_trailer(TIDES_MAX_SEQ, TIDES_KT_SEEK));
		if (scratch->oom)
		{
			tides_iiter_destroy(it);
			return false;
		}
		/* the last entry before the first key >= end */
		tides_iiter_seek(it, scratch->data, scratch->len);
		if (tides_iiter_valid(it))
			tides_iiter_prev(it);
		else if (tides_iiter_status(it) == TIDES_OK)
			tides_iiter_last(it);
	}
	else
		tides_iiter_last(it);
	if (tides_iiter_valid(it))
	{
		size_t		klen;
		const uint8_t *k = tides_iiter_key(it, &klen);
		size_t		ulen = klen - TIDES_TRAILER;

		if (ulen >= plen && memcmp(k, prefix, plen) == 0 &&
			(!*have || tides_ukey_cmp(k, ulen, best->data, best->len) > 0))
		{
			tides_buf_reset(best);
			tides_buf_append(best, k, ulen);
			*have = true;
		}
	}
	ok = tides_iiter_status(it) == TIDES_OK && !best->oom;
	tides_iiter_destroy(it);
	return ok;
}

/* the largest user key with the prefix in any file of v; false if unknown */
static bool
largest_in_version(tides_db *db, const tides_version *v, const uint8_t *prefix, size_t plen,
				   tides_buf *best, bool *have)
{
	tides_buf	end,
				scratch;
	bool		bounded,
				ok = true;

	tides_buf_init(&end);
	tides_buf_init(&scratch);
	*have = false;
	bounded = prefix_end(prefix, plen, &end);
	if (end.oom)
		ok = false;
	for (int l = 0; l < TIDES_MAX_LEVELS && ok; l++)
	{
		/* level 0: every file whose bounds meet the prefix; deeper: the last such file */
		for (uint32_t i = v->nfiles[l]; i-- > 0 && ok;)
		{
			const tides_file_meta *f = v->files[l][i];
			const uint8_t *lo = tides_file_smallest(f),
					   *hi = tides_file_largest(f);
			size_t		lolen = f->smallest_len - TIDES_TRAILER,
						hilen = f->largest_len - TIDES_TRAILER;

			if (tides_ukey_cmp(hi, hilen, prefix, plen) < 0 ||
				(bounded && tides_ukey_cmp(lo, lolen, end.data, end.len) >= 0))
				continue;
			ok = largest_in_file(db, f, prefix, plen, &end, bounded, best, have, &scratch);
			if (l > 0)
				break;
		}
	}
	tides_buf_free(&end);
	tides_buf_free(&scratch);
	return ok;
}

static void
free_run(tides_place_run *r)
{
	free(r->prefix);
	free(r->above);
	free(r->lo);
	free(r->hi);
}

static tides_status
add_run(tides_place_plan *p, const uint8_t *prefix, size_t plen, const tides_buf *above, bool have,
		uint64_t bytes, const tides_buf *lo, const tides_buf *hi)
{
	tides_place_run *runs = realloc(p->runs, (p->nruns + 1) * sizeof(*runs));
	tides_place_run *r;

	if (runs == NULL)
		return TIDES_NO_MEMORY;
	p->runs = runs;
	r = &runs[p->nruns];
	memset(r, 0, sizeof(*r));
	r->prefix = malloc(plen + 1);
	r->above = have ? malloc(above->len + 1) : NULL;
	r->lo = malloc(lo->len + 1);
	r->hi = malloc(hi->len + 1);
	if (r->prefix == NULL || (have && r->above == NULL) || r->lo == NULL || r->hi == NULL)
	{
		free(r->prefix);
		free(r->above);
		free(r->lo);
		free(r->hi);
		return TIDES_NO_MEMORY;
	}
	memcpy(r->lo, lo->data, lo->len);
	r->lo_len = lo->len;
	memcpy(r->hi, hi->data, hi->len);
	r->hi_len = hi->len;
	memcpy(r->prefix, prefix, plen);
	r->plen = plen;
	if (have)
	{
		memcpy(r->above, above->data, above->len);
		r->above_len = above->len;
	}
	r->bytes = bytes;
	p->nruns++;
	return TIDES_OK;
}

/*
 * Keep the runs that some level from the base level down could take now
 * (flush_place.h): while level 0 moves down into the base level, that
 * compaction claims the base level over level 0's whole range, and a
 * placed file would have to go to level 0 beside the flush's own file.
 */
static void
keep_placeable(tides_db *db, tides_place_plan *p)
{
	tides_shared *sh = db->sh;
	uint64_t	target[TIDES_MAX_LEVELS];
	uint32_t	n = 0;
	int			base;

	tides_lock_version(sh);
	base = tides_compaction_targets(db, sh->current, target);
	for (uint32_t i = 0; i < p->nruns; i++)
	{
		tides_place_run *r = &p->runs[i];
		bool		fits = false;

		for (int l = TIDES_MAX_LEVELS - 1; l >= base && l >= 1 && !fits; l--)
			fits = tides_compaction_level_free(sh, sh->current, l, r->lo, r->lo_len, r->hi, r->hi_len);
		if (fits)
			p->runs[n++] = *r;
		else
			free_run(r);
	}
	tides_mutex_unlock(&sh->version_mutex);
	p->nruns = n;
}

/*
 * Move it to the first entry whose user key sorts after key (which it is
 * at or below): past the keys of a run that the files already reach, which
 * the plan does not count, with one seek instead of a step per entry -- for
 * a tree of random keys (a secondary index, deletions) that is nearly all of
 * its run.  On no memory, one step: the walk goes on from there.
 */
static void
skip_through(tides_iiter *it, const tides_buf *key, tides_buf *scratch)
{
	tides_buf_reset(scratch);
	tides_buf_append(scratch, key->data, key->len);
	/* seq 0 and the lowest type sort last among key's versions */
	tides_buf_put64(scratch, tides_pack_trailer(0, TIDES_KT_DELETE));
	if (scratch->oom)
	{
		tides_iiter_next(it);
		return;
	}
	tides_iiter_seek(it, scratch->data, scratch->len);
	while (tides_iiter_valid(it))
	{
		size_t		klen;
		const uint8_t *k = tides_iiter_key(it, &klen);

		if (tides_ukey_cmp(k, klen - TIDES_TRAILER, key->data, key->len) > 0)
			break;
		tides_iiter_next(it);
	}
}

/*
 * The runs of memtables ms[0..n) against the files of sv's version, into p
 * (prefix_len set, no runs yet).  skip: seek past what the files reach
 * (skip_through) instead of stepping through it; the plan is the same.
 */
static tides_status
plan_runs(tides_db *db, tides_memtable *const *ms, uint32_t n, const tides_superversion *sv, bool skip,
		  tides_place_plan *p)
{
	tides_iiter *it;
	tides_buf	prefix,
				above,
				lo,
				hi,
				scratch;
	bool		in_run = false,
				known = false,
				have = false;
	uint64_t	bytes = 0,
				min = tides_place_min(db);
	tides_status s = TIDES_OK;

	if ((it = tides_memtables_iter_new(ms, n)) == NULL)
		return TIDES_NO_MEMORY;
	tides_buf_init(&prefix);
	tides_buf_init(&above);
	tides_buf_init(&lo);
	tides_buf_init(&hi);
	tides_buf_init(&scratch);
	tides_iiter_first(it);
	while (tides_iiter_valid(it) && s == TIDES_OK)
	{
		size_t		klen,
					vlen;
		const uint8_t *k = tides_iiter_key(it, &klen);
		size_t		ulen = klen - TIDES_TRAILER;
		size_t		plen = prefix_len(db, ulen);

		(void) tides_iiter_value(it, &vlen);
		if (!in_run || plen != prefix.len || memcmp(k, prefix.data, plen) != 0)
		{
			if (in_run && known && bytes >= min)
				s = add_run(p, prefix.data, prefix.len, &above, have, bytes, &lo, &hi);
			tides_buf_reset(&prefix);
			tides_buf_append(&prefix, k, plen);
			in_run = true;
			bytes = 0;
			known = largest_in_version(db, sv->version, k, plen, &above, &have);
			if (skip && known && have && tides_ukey_cmp(k, ulen, above.data, above.len) <= 0)
			{
				/* above is in this run: the walk goes on past it, in this run or the next */
				skip_through(it, &above, &scratch);
				continue;
			}
		}
		if (known && (!have || tides_ukey_cmp(k, ulen, above.data, above.len) > 0))
		{
			if (bytes == 0)
			{
				tides_buf_reset(&lo);
				tides_buf_append(&lo, k, ulen);
			}
			tides_buf_reset(&hi);
			tides_buf_append(&hi, k, ulen);
			bytes += klen + vlen;
		}
		tides_iiter_next(it);
	}
	if (s == TIDES_OK && in_run && known && bytes >= min)
		s = add_run(p, prefix.data, prefix.len, &above, have, bytes, &lo, &hi);
	if (s == TIDES_OK && (prefix.oom || above.oom || lo.oom || hi.oom))
		s = TIDES_NO_MEMORY;
	tides_iiter_destroy(it);
	tides_buf_free(&prefix);
	tides_buf_free(&above);
	tides_buf_free(&lo);
	tides_buf_free(&hi);
	tides_buf_free(&scratch);
	return s;
}

#ifdef TIDES_ASSERTS
/* the skipping walk planned what stepping through every key plans */
static bool
same_as_full_walk(tides_db *db, tides_memtable *const *ms, uint32_t n, const tides_superversion *sv,
				  const tides_place_plan *p)
{
	tides_place_plan q;
	bool		same;

	memset(&q, 0, sizeof(q));
	q.last = -1;
	q.prefix_len = p->prefix_len;
	if (plan_runs(db, ms, n, sv, false, &q) != TIDES_OK)
		return true;			/* no memory for the check */
	same = q.nruns == p->nruns;
	for (uint32_t i = 0; same && i < p->nruns; i++)
	{
		const tides_place_run *a = &p->runs[i],
				   *b = &q.runs[i];

		same = tides_ukey_cmp(a->prefix, a->plen, b->prefix, b->plen) == 0 &&
			(a->above == NULL) == (b->above == NULL) &&
			(a->above == NULL || tides_ukey_cmp(a->above, a->above_len, b->above, b->above_len) == 0) &&
			a->bytes == b->bytes && tides_ukey_cmp(a->lo, a->lo_len, b->lo, b->lo_len) == 0 &&
			tides_ukey_cmp(a->hi, a->hi_len, b->hi, b->hi_len) == 0;
	}
	tides_place_plan_free(&q);
	return same;
}
#endif

tides_status
tides_place_plan_make(tides_db *db, tides_memtable *const *ms, uint32_t n, tides_place_plan *p)
{
	tides_superversion *sv;
	tides_status s;

	memset(p, 0, sizeof(*p));
	p->last = -1;
	p->prefix_len = db->opts.range_prefix_len;
	if (p->prefix_len == 0)
		return TIDES_OK;
	sv = tides_sv_acquire(db);
	s = plan_runs(db, ms, n, sv, true, p);
#ifdef TIDES_ASSERTS
	TIDES_ASSERT(s != TIDES_OK || same_as_full_walk(db, ms, n, sv, p));
#endif
	tides_sv_release(db, sv);
	if (s == TIDES_OK && p->nruns > 0)
		keep_placeable(db, p);
	if (s != TIDES_OK)
		tides_place_plan_free(p);
	return s;
}

bool
tides_place_route(tides_place_plan *p, const uint8_t *ukey, size_t ulen, bool *new_run)
{
	size_t		kplen = ulen < p->prefix_len ? ulen : p->prefix_len;

	*new_run = false;
	while (p->next < p->nruns)
	{
		const tides_place_run *r = &p->runs[p->next];
		int			c = tides_ukey_cmp(ukey, kplen, r->prefix, r->plen);

		if (c < 0)
			return false;		/* before the next planned run */
		if (c > 0)
		{
			p->next++;			/* past this run */
			continue;
		}
		/* in this run: placed when above its files' keys */
		if (r->above != NULL && tides_ukey_cmp(ukey, ulen, r->above, r->above_len) <= 0)
			return false;
		*new_run = p->last >= 0 && (uint32_t) p->last != p->next;
		p->last = (int32_t) p->next;
		return true;
	}
	return false;
}

void
tides_place_plan_free(tides_place_plan *p)
{
	for (uint32_t i = 0; i < p->nruns; i++)
		free_run(&p->runs[i]);
	free(p->runs);
	memset(p, 0, sizeof(*p));
	p->last = -1;
}
