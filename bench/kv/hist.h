/*
 * hist.h -- per-op latency histogram (log-linear buckets, like HdrHistogram).
 *
 * Values are nanoseconds.  Each power of two is split into 32 linear
 * sub-buckets, so a reported percentile is within ~3% of the true value.
 * One histogram per thread (no locking); merge them at the end.
 */
#ifndef KV_HIST_H
#define KV_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 5
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS ((64 - HIST_SUB_BITS + 1) * HIST_SUB)

typedef struct hist
{
	uint64_t	count;
	uint64_t	sum;
	uint64_t	min;
	uint64_t	max;
	uint64_t	b[HIST_BUCKETS];
} hist;

void		hist_init(hist *h);
void		hist_merge(hist *dst, const hist *src);
/* value (ns) at quantile q in [0,1]; the upper edge of its bucket, capped at max */
uint64_t	hist_quantile(const hist *h, double q);

static inline unsigned
hist_index(uint64_t v)
{
	if (v < HIST_SUB)
		return (unsigned) v;
	unsigned	e = 63 - (unsigned) __builtin_clzll(v); /* >= HIST_SUB_BITS */
	unsigned	shift = e - HIST_SUB_BITS;
	unsigned	sub = (unsigned) (v >> shift) & (HIST_SUB - 1);

	return (shift + 1) * HIST_SUB + sub;
}

static inline void
hist_add(hist *h, uint64_t v)
{
	h->b[hist_index(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

#endif							/* KV_HIST_H */
