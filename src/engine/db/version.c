/*
 * version.c -- building, sorting and querying versions.
 */
#include "db/version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/dbformat.h"
#include "util/assert.h"
#include "util/sort.h"

tides_file_meta *
tides_file_meta_new(tides_shm_heap *heap, uint64_t number, uint64_t size,
					const uint8_t *smallest, size_t slen, const uint8_t *largest, size_t llen)
{
	tides_file_meta *f = tides_shm_alloc(heap, sizeof(*f) + slen + llen);

	if (f == NULL)
		return NULL;
	memset(f, 0, sizeof(*f));
	atomic_init(&f->refs, 0);
	atomic_init(&f->being_compacted, 0);
	f->number = number;
	f->size = size;
	f->smallest_len = (uint32_t) slen;
	f->largest_len = (uint32_t) llen;
	memcpy(f->keys, smallest, slen);
	memcpy(f->keys + slen, largest, llen);
	return f;
}

void
tides_file_ref(tides_file_meta *f)
{
	int32_t		old = atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);

	TIDES_ASSERT(old >= 0);
	(void) old;
}

void
tides_file_unref(tides_shm_heap *heap, tides_file_meta *f, tides_obsolete_fn obsolete, void *arg)
{
	int32_t		old = atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel);

	TIDES_ASSERT(old >= 1);		/* never below zero */
	if (old == 1)
	{
		/* the last version that listed it is gone; no compaction may be reading it */
		TIDES_ASSERT(atomic_load(&f->being_compacted) == 0);
		if (obsolete != NULL)
			obsolete(arg, f->number);
		tides_shm_free(heap, f);
	}
}

static int
cmp_smallest(const void *a, const void *b)
{
	const tides_file_meta *fa = *(tides_file_meta * const *) a;
	const tides_file_meta *fb = *(tides_file_meta * const *) b;
	int			r = tides_ikey_cmp(tides_file_smallest(fa), fa->smallest_len,
								   tides_file_smallest(fb), fb->smallest_len);

	if (r == 0)
		r = fa->number < fb->number ? -1 : (fa->number > fb->number);
	return r;
}

/* level 0: newest first; a flush always has a larger number than older flushes */
static int
cmp_newest(const void *a, const void *b)
{
	const tides_file_meta *fa = *(tides_file_meta * const *) a;
	const tides_file_meta *fb = *(tides_file_meta * const *) b;

	if (fa->max_seq != fb->max_seq)
		return fa->max_seq > fb->max_seq ? -1 : 1;
	return fa->number > fb->number ? -1 : (fa->number < fb->number);
}

tides_version *
tides_version_new(tides_shm_heap *heap, uint64_t number,
				  tides_file_meta **const files[TIDES_MAX_LEVELS],
				  const uint32_t nfiles[TIDES_MAX_LEVELS])
{
	size_t		total = 0;
	tides_version *v;
	tides_file_meta **slots;

	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		total += nfiles[l];
	v = tides_shm_alloc(heap, sizeof(*v) + total * sizeof(tides_file_meta *));
	if (v == NULL)
		return NULL;
	atomic_init(&v->refs, 1);
	v->number = number;
	slots = (tides_file_meta **) (v + 1);
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
	{
		v->nfiles[l] = nfiles[l];
		v->files[l] = slots;
		for (uint32_t i = 0; i < nfiles[l]; i++)
		{
			slots[i] = files[l][i];
			tides_file_ref(slots[i]);
		}
		if (nfiles[l] > 1)
			qsort(slots, nfiles[l], sizeof(*slots), l == 0 ? cmp_newest : cmp_smallest);
		slots += nfiles[l];
	}
	return v;
}

void
tides_version_ref(tides_version *v)
{
	int32_t		old = atomic_fetch_add_explicit(&v->refs, 1, memory_order_relaxed);

	TIDES_ASSERT(old >= 1);		/* only a live version gains references */
	(void) old;
}

void
tides_version_unref(tides_shm_heap *heap, tides_version *v, tides_obsolete_fn obsolete, void *arg)
{
	int32_t		old;

	if (v == NULL)
		return;
	old = atomic_fetch_sub_explicit(&v->refs, 1, memory_order_acq_rel);
	TIDES_ASSERT(old >= 1);		/* never below zero */
	if (old != 1)
		return;
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		for (uint32_t i = 0; i < v->nfiles[l]; i++)
			tides_file_unref(heap, v->files[l][i], obsolete, arg);
	tides_shm_free(heap, v);
}

uint64_t
tides_version_level_bytes(const tides_version *v, int level)
{
	uint64_t	sum = 0;

	for (uint32_t i = 0; i < v->nfiles[level]; i++)
		sum += v->files[level][i]->size;
	return sum;
}

uint32_t
tides_version_find_file(const tides_version *v, int level, const uint8_t *ikey, size_t iklen)
{
	uint32_t	lo = 0,
				hi = v->nfiles[level];

	TIDES_ASSERT(level > 0 && level < TIDES_MAX_LEVELS);	/* a sorted level */

	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo) / 2;
		const tides_file_meta *f = v->files[level][mid];

		if (tides_ikey_cmp(tides_file_largest(f), f->largest_len, ikey, iklen) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* user key of an internal key */
#define UK(p, n) (p), ((n) - TIDES_TRAILER)

static bool
file_overlaps(const tides_file_meta *f, const uint8_t *lo, size_t lolen,
			  const uint8_t *hi, size_t hilen)
{
	if (lo != NULL && tides_ukey_cmp(UK(tides_file_largest(f), f->largest_len), lo, lolen) < 0)
		return false;
	if (hi != NULL && tides_ukey_cmp(UK(tides_file_smallest(f), f->smallest_len), hi, hilen) > 0)
		return false;
	return true;
}

bool
tides_version_overlaps(const tides_version *v, int level, const uint8_t *lo, size_t lolen,
					   const uint8_t *hi, size_t hilen)
{
	if (level == 0)
	{
		for (uint32_t i = 0; i < v->nfiles[0]; i++)
			if (file_overlaps(v->files[0][i], lo, lolen, hi, hilen))
				return true;
		return false;
	}
	else
	{
		uint32_t	i = 0;

		if (lo != NULL)
		{
			/* first file whose largest user key >= lo */
			uint32_t	a = 0,
						b = v->nfiles[level];

			while (a < b)
			{
				uint32_t	mid = a + (b - a) / 2;
				const tides_file_meta *f = v->files[level][mid];

				if (tides_ukey_cmp(UK(tides_file_largest(f), f->largest_len), lo, lolen) < 0)
					a = mid + 1;
				else
					b = mid;
			}
			i = a;
		}
		return i < v->nfiles[level] && file_overlaps(v->files[level][i], lo, lolen, hi, hilen);
	}
}

tides_file_meta **
tides_version_overlapping(const tides_version *v, int level, const uint8_t *lo, size_t lolen,
						  const uint8_t *hi, size_t hilen, uint32_t *n)
{
	tides_file_meta **out = malloc((v->nfiles[level] + 1) * sizeof(*out));
	uint32_t	count = 0;
	uint8_t    *lo_copy = NULL,
			   *hi_copy = NULL;

	*n = 0;
	if (out == NULL)
		return NULL;
	for (uint32_t i = 0; i < v->nfiles[level]; i++)
	{
		tides_file_meta *f = v->files[level][i];

		if (!file_overlaps(f, lo, lolen, hi, hilen))
			continue;
		out[count++] = f;
		if (level == 0)
		{
			/* widen the range to this file and start over if it grew */
			const uint8_t *fs = tides_file_smallest(f);
			size_t		fslen = f->smallest_len - TIDES_TRAILER;
			const uint8_t *fl = tides_file_largest(f);
			size_t		fllen = f->largest_len - TIDES_TRAILER;
			bool		grew = false;

			if (lo != NULL && tides_ukey_cmp(fs, fslen, lo, lolen) < 0)
			{
				free(lo_copy);
				lo_copy = malloc(fslen ? fslen : 1);
				if (lo_copy == NULL)
					goto oom;
				memcpy(lo_copy, fs, fslen);
				lo = lo_copy;
				lolen = fslen;
				grew = true;
			}
			if (hi != NULL && tides_ukey_cmp(fl, fllen, hi, hilen) > 0)
			{
				free(hi_copy);
				hi_copy = malloc(fllen ? fllen : 1);
				if (hi_copy == NULL)
					goto oom;
				memcpy(hi_copy, fl, fllen);
				hi = hi_copy;
				hilen = fllen;
				grew = true;
			}
			if (grew)
			{
				count = 0;
				i = (uint32_t) -1;	/* restart the scan */
			}
		}
	}
	free(lo_copy);
	free(hi_copy);
	*n = count;
	return out;

oom:
	/* NULL, as when the result array itself could not be allocated */
	free(lo_copy);
	free(hi_copy);
	free(out);
	return NULL;
}

int
tides_version_check(const tides_version *v, void (*report) (void *arg, const char *problem),
					void *arg)
{
	int			problems = 0;
	char		msg[256];

	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
	{
		for (uint32_t i = 0; i < v->nfiles[l]; i++)
		{
			const tides_file_meta *f = v->files[l][i];

			if (tides_ikey_cmp(tides_file_smallest(f), f->smallest_len,
							   tides_file_largest(f), f->largest_len) > 0)
			{
				snprintf(msg, sizeof(msg), "file %06llu at level %d has smallest key > largest key",
						 (unsigned long long) f->number, l);
				if (report != NULL)
					report(arg, msg);
				problems++;
			}
			if (l > 0 && i > 0)
			{
				const tides_file_meta *p = v->files[l][i - 1];

				if (tides_ukey_cmp(UK(tides_file_largest(p), p->largest_len),
								   UK(tides_file_smallest(f), f->smallest_len)) >= 0)
				{
					snprintf(msg, sizeof(msg), "files %06llu and %06llu overlap at level %d",
							 (unsigned long long) p->number, (unsigned long long) f->number, l);
					if (report != NULL)
						report(arg, msg);
					problems++;
				}
			}
		}
	}
	return problems;
}

bool
tides_version_sound(const tides_version *v)
{
	uint64_t   *numbers;
	uint32_t	n = 0,
				total = 0;
	bool		ok = true;

	if (tides_version_check(v, NULL, NULL) != 0)
		return false;
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
	{
		total += v->nfiles[l];
		/* level 0 newest first (the order its files are read in) */
		for (uint32_t i = 1; l == 0 && i < v->nfiles[0]; i++)
			if (cmp_newest(&v->files[0][i - 1], &v->files[0][i]) >= 0)
				return false;
	}
	/* no file twice, in one level or two */
	numbers = malloc((total + 1) * sizeof(uint64_t));
	if (numbers == NULL)
		return true;			/* cannot tell; an assertion must not fail on memory */
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		for (uint32_t i = 0; i < v->nfiles[l]; i++)
			numbers[n++] = v->files[l][i]->number;
	qsort(numbers, n, sizeof(uint64_t), tides_cmp_u64);
	for (uint32_t i = 1; i < n && ok; i++)
		ok = numbers[i - 1] != numbers[i];
	free(numbers);
	return ok;
}
