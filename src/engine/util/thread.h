/*
 * thread.h -- the engine's helper threads: started with every signal
 * blocked, with one mutex and two conditions to sleep on.
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
