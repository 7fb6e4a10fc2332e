/*
 * counters.c -- the engine's statistics: the stripes of the shared counters
 * and this process's block I/O counters (util/counters.h).
 */
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/assert.h"
#include "util/counters.h"

tides_io_stats tides_process_io;

__thread unsigned tides_counter_stripe_id __attribute__((tls_model("initial-exec")));

/* a forked child is another thread: its id picks its own stripe */
static void
forget_stripe(void)
{
	tides_counter_stripe_id = 0;
}

static void
register_forget_stripe(void)
{
	pthread_atfork(NULL, NULL, forget_stripe);
}

unsigned
tides_counter_stripe_slow(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	uint32_t	tid;

	pthread_once(&once, register_forget_stripe);
	tid = (uint32_t) syscall(SYS_gettid);
	tides_counter_stripe_id = 1 + tid % TIDES_COUNTER_STRIPES;
	return tides_counter_stripe_id;
}

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
