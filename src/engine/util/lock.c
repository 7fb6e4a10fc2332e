/*
 * lock.c -- initialisation of the process-shared pthread primitives.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "util/lock.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void
tides_futex_wait(atomic_uint *word, unsigned seen, unsigned timeout_us)
{
	struct timespec ts = {timeout_us / 1000000, (long) (timeout_us % 1000000) * 1000};

	/* not FUTEX_PRIVATE: the word is shared between processes */
	syscall(SYS_futex, (unsigned *) word, FUTEX_WAIT, seen, &ts, NULL, 0);
}

void
tides_futex_wake_all(atomic_uint *word)
{
	syscall(SYS_futex, (unsigned *) word, FUTEX_WAKE, 0x7fffffff, NULL, NULL, 0);
}

void
tides_mutex_init(tides_mutex *m)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_mutex_init(&m->m, &a);
	pthread_mutexattr_destroy(&a);
	atomic_init(&m->holder, 0);
}

void
tides_rwlock_init(tides_rwlock *l)
{
	pthread_rwlockattr_t a;

	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	/* glibc readers would otherwise starve a writer installing a new state */
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&l->l, &a);
	pthread_rwlockattr_destroy(&a);
}
