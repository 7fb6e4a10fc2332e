/*
 * lock.h -- process-shared synchronisation primitives.
 *
 * Everything here lives in the shared region and works across processes:
 *   tides_spinlock  test-and-test-and-set, for critical sections of a few
 *                   dozen instructions that never do I/O or allocation;
 *   tides_mutex     a pthread mutex with PTHREAD_PROCESS_SHARED, for longer
 *                   sections (manifest writes, group-commit fsync);
 *   tides_rwlock    a pthread rwlock with PTHREAD_PROCESS_SHARED that prefers
 *                   writers, for the current-state pointer readers pin.
 *
 * The engine's rule: no lock is held across a call back into the caller, and
 * only tides_mutex may be held across I/O.  A process that dies holding a
 * lock leaves it held; the embedding program must then reinitialise the
 * region (PostgreSQL does: a backend crash restarts all processes).
 */
#ifndef TIDES_UTIL_LOCK_H
#define TIDES_UTIL_LOCK_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct tides_spinlock
{
	atomic_uint v;
} tides_spinlock;

static inline void
tides_spin_init(tides_spinlock *l)
{
	atomic_init(&l->v, 0);
}

/*
 * Tell the CPU we are spinning: on x86 "pause" (saves power and avoids the
 * memory-order mis-speculation penalty when the lock word changes), on
 * ARMv8 "yield".  Elsewhere a compiler barrier, so a spin loop at least
 * reloads what it waits for.  The only place the engine spells an
 * architecture-specific instruction.
 */
static inline void
tides_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

static inline bool
tides_spin_trylock(tides_spinlock *l)
{
	return atomic_load_explicit(&l->v, memory_order_relaxed) == 0 &&
		atomic_exchange_explicit(&l->v, 1, memory_order_acquire) == 0;
}

static inline void
tides_spin_lock(tides_spinlock *l)
{
	unsigned	spins = 0;

	while (!tides_spin_trylock(l))
	{
		if (++spins < 64)
			tides_cpu_relax();
		else
		{
			sched_yield();
			spins = 0;
		}
	}
}

static inline void
tides_spin_unlock(tides_spinlock *l)
{
	atomic_store_explicit(&l->v, 0, memory_order_release);
}

/*
 * Futex waits on a 32-bit word in the shared region (Linux, process-shared):
 * sleep until the word differs from `seen`, a wake, or timeout_us passes.
 */
void		tides_futex_wait(atomic_uint *word, unsigned seen, unsigned timeout_us);
void		tides_futex_wake_all(atomic_uint *word);

typedef struct tides_mutex
{
	pthread_mutex_t m;
} tides_mutex;

void		tides_mutex_init(tides_mutex *m);

static inline void
tides_mutex_lock(tides_mutex *m)
{
	pthread_mutex_lock(&m->m);
}

static inline bool
tides_mutex_trylock(tides_mutex *m)
{
	return pthread_mutex_trylock(&m->m) == 0;
}

static inline void
tides_mutex_unlock(tides_mutex *m)
{
	pthread_mutex_unlock(&m->m);
}

typedef struct tides_rwlock
{
	pthread_rwlock_t l;
} tides_rwlock;

void		tides_rwlock_init(tides_rwlock *l);

static inline void
tides_rwlock_rdlock(tides_rwlock *l)
{
	pthread_rwlock_rdlock(&l->l);
}

static inline void
tides_rwlock_wrlock(tides_rwlock *l)
{
	pthread_rwlock_wrlock(&l->l);
}

static inline void
tides_rwlock_unlock(tides_rwlock *l)
{
	pthread_rwlock_unlock(&l->l);
}

#endif
