/*
 * thread.h -- who the calling thread is, how wide a cache line is, and the
 * engine's helper threads: started with every signal blocked, with one
 * mutex and two conditions to sleep on.
 *
 * The engine runs inside processes that own their signals (a PostgreSQL
 * backend's interrupts, a test's SIGTERM): a signal must reach the thread
 * whose handlers expect it, never a helper (table/block_pipe.c,
 * table/block_fetch.c).
 */
#ifndef TIDES_UTIL_THREAD_H
#define TIDES_UTIL_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Bytes of a cache line: what one CPU takes from another when it writes.
 * Fields that different threads write often go on lines of their own
 * (db/db_impl.h, mem/memtable.h, util/counters.h).
 */
#define TIDES_LINE 64

/*
 * The calling thread's kernel id (gettid), cached: 0 until first asked, and
 * again in a forked child, which is another thread (a pthread_atfork
 * handler forgets it).  Initial-exec TLS: read at a fixed offset from the
 * thread pointer, not through __tls_get_addr, also when the engine is in a
 * shared library loaded at startup (the PostgreSQL extension).  Lock
 * holders record it (util/lock.h, with TIDES_ASSERTS); the statistics
 * counters pick their stripe by it (util/counters.h).
 */
extern __thread uint32_t tides_thread_id_cached __attribute__((tls_model("initial-exec")));
uint32_t	tides_thread_id_slow(void);

static inline uint32_t
tides_thread_id(void)
{
	uint32_t	id = tides_thread_id_cached;

	return id != 0 ? id : tides_thread_id_slow();
}

typedef struct tides_helper_sync
{
	pthread_mutex_t mu;
	pthread_cond_t to_helper;	/* the caller moved, or asks it to stop */
	pthread_cond_t to_caller;	/* the helper moved */
} tides_helper_sync;

/*
 * Initialize s and start fn(arg) in a thread with every signal blocked.
 * False if either failed (s is then left uninitialized).
 */
bool		tides_helper_start(pthread_t *thread, tides_helper_sync *s, void *(*fn) (void *),
							   void *arg);

/* after the helper has been joined */
void		tides_helper_sync_destroy(tides_helper_sync *s);

#endif
