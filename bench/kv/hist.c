/*
 * hist.c -- latency histogram, see hist.h.
 */
#include "hist.h"

#include <string.h>

void
hist_init(hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void
hist_merge(hist *dst, const hist *src)
{
	for (unsigned i = 0; i < HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

/* largest value that falls into bucket i */
static uint64_t
bucket_upper(unsigned i)
{
	if (i < HIST_SUB)
		return i;
	unsigned	shift = i / HIST_SUB - 1;
	uint64_t	sub = i % HIST_SUB;
	uint64_t	lo = (HIST_SUB + sub) << shift;

	return lo + ((uint64_t) 1 << shift) - 1;
}

uint64_t
hist_quantile(const hist *h, double q)
{
	if (h->count == 0)
		return 0;
	uint64_t	rank = (uint64_t) (q * (double) h->count + 0.5);

	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	uint64_t	seen = 0;

	for (unsigned i = 0; i < HIST_BUCKETS; i++)
	{
		seen += h->b[i];
		if (seen >= rank)
		{
			uint64_t	v = bucket_upper(i);

			if (v > h->max)
				v = h->max;
			if (v < h->min)
				v = h->min;
			return v;
		}
	}
	return h->max;
}
