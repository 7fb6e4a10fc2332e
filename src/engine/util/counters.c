/*
 * counters.c -- the engine's statistics: the stripes of the shared counters
 * and this process's block I/O counters (util/counters.h).
 */
#include "util/assert.h"
#include "util/counters.h"

tides_io_stats tides_process_io;

uint64_t
tides_counter_sum_at(const tides_counters *c, size_t off)
{
	uint64_t	sum = 0;

	TIDES_ASSERT(off + sizeof(atomic_uint_fast64_t) <= sizeof(tides_counter_set));
	for (int i = 0; i < TIDES_COUNTER_STRIPES; i++)
	{
		const atomic_uint_fast64_t *v = (const atomic_uint_fast64_t *)
			((const char *) &c->stripe[i].set + off);

		sum += atomic_load_explicit(v, memory_order_relaxed);
	}
	return sum;
}

void
tides_get_process_io(tides_io_stats *io)
{
	*io = tides_process_io;
}
