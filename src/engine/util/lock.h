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
 * region (PostgreSQL does: a backend crash restarts all processes).  The
 * engine's lock order is stated in db/db_impl.h.
 *
 * Ownership (for assertions, util/assert.h).  With TIDES_ASSERTS a held
 * spinlock's word is its holder's thread id (tides_lock_self: the kernel's
 * tid, unique across processes) instead of 1, and a mutex records its
 * holder; so code can assert that it holds a lock or does not
 * (tides_spin_held, tides_mutex_held), taking a lock asserts the caller does
 * not hold it already (it would wait forever), and releasing one asserts the
 * caller holds it.  Without TIDES_ASSERTS the word is 1, the holder is not
 * recorded, and the *_held tests must not be used outside assertions.
 */
#ifndef TIDES_UTIL_LOCK_H
#define TIDES_UTIL_LOCK_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/assert.h"
#include "util/thread.h"

#ifdef TIDES_ASSERTS
/* what a held lock records: the holder's thread id */
static inline uint32_t
tides_lock_self(void)
{
	return tides_thread_id();
}
#else
static inline uint32_t
tides_lock_self(void)
{
	return 1;
}
#endif

typedef struct tides_spinlock
{
	atomic_uint v;				/* 0 free; else 1, or the holder (TIDES_ASSERTS) */
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

/* does the calling thread hold l?  (for assertions) */
static inline bool
tides_spin_held(tides_spinlock *l)
{
	return atomic_load_explicit(&l->v, memory_order_relaxed) == tides_lock_self();
}

/*
 * Test and test-and-set.  A compare-exchange rather than an exchange, so a
 * failed attempt never overwrites the holder recorded in the word.
 */
static inline bool
tides_spin_trylock(tides_spinlock *l)
{
	unsigned	expected = 0;

	return atomic_load_explicit(&l->v, memory_order_relaxed) == 0 &&
		atomic_compare_exchange_strong_explicit(&l->v, &expected, tides_lock_self(),
												memory_order_acquire, memory_order_relaxed);
}

static inline void
tides_spin_lock(tides_spinlock *l)
{
	unsigned	spins = 0;

	TIDES_ASSERT(!tides_spin_held(l));
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
	TIDES_ASSERT(tides_spin_held(l));
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
	atomic_uint holder;			/* tides_lock_self() of the holder (TIDES_ASSERTS), else 0 */
} tides_mutex;

void		tides_mutex_init(tides_mutex *m);

/* does the calling thread hold m?  (for assertions) */
static inline bool
tides_mutex_held(tides_mutex *m)
{
	return atomic_load_explicit(&m->holder, memory_order_relaxed) == tides_lock_self();
}

static inline void
tides_mutex_note_holder(tides_mutex *m, uint32_t holder)
{
#ifdef TIDES_ASSERTS
	atomic_store_explicit(&m->holder, holder, memory_order_relaxed);
#else
	(void) m;
	(void) holder;
#endif
}

static inline void
tides_mutex_lock(tides_mutex *m)
{
	TIDES_ASSERT(!tides_mutex_held(m));
	pthread_mutex_lock(&m->m);
	tides_mutex_note_holder(m, tides_lock_self());
}

static inline bool
tides_mutex_trylock(tides_mutex *m)
{
	if (pthread_mutex_trylock(&m->m) != 0)
		return false;
	tides_mutex_note_holder(m, tides_lock_self());
	return true;
}

static inline void
tides_mutex_unlock(tides_mutex *m)
{
	TIDES_ASSERT(tides_mutex_held(m));
	tides_mutex_note_holder(m, 0);
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
