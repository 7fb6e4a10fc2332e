/*
 * shm_heap.h -- a small allocator for metadata inside the shared region.
 *
 * The engine's metadata (versions, file descriptors of SSTables, key
 * boundaries, the pending-tag table) is allocated here rather than with
 * malloc, because every attached process must see it.  Memory is handed out
 * in power-of-two size classes from 32 bytes to 1 MiB; freed chunks go back
 * to their class's free list and are reused for the same class only, so the
 * heap's footprint is bounded by the peak use of each class.  A spinlock
 * protects it: allocation is a few pointer moves.
 *
 * Pointers returned are plain addresses in the shared region: valid in every
 * process, because every process maps the region at the same address.
 */
#ifndef TIDES_UTIL_SHM_HEAP_H
#define TIDES_UTIL_SHM_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "util/lock.h"

#define TIDES_SHM_CLASSES 16	/* 32 B .. 1 MiB */

typedef struct tides_shm_heap
{
	tides_spinlock lock;
	uint8_t    *start;
	uint8_t    *top;			/* next unused byte */
	uint8_t    *end;
	void	   *free_list[TIDES_SHM_CLASSES];
	uint64_t	bytes_in_use;
	uint64_t	peak_in_use;
	uint64_t	limit;			/* 0, or a cap on bytes_in_use (tests) */
} tides_shm_heap;

void		tides_shm_heap_init(tides_shm_heap *h, void *mem, size_t size);

/* NULL when the heap is exhausted or n > 1 MiB - header */
void	   *tides_shm_alloc(tides_shm_heap *h, size_t n);
void	   *tides_shm_alloc_zero(tides_shm_heap *h, size_t n);
void		tides_shm_free(tides_shm_heap *h, void *p);

/*
 * For tests: make allocations fail once bytes_in_use would pass `limit`
 * (0: no limit), to exhaust the heap at an exact point.
 */
void		tides_shm_heap_set_limit(tides_shm_heap *h, uint64_t limit);

/* largest request tides_shm_alloc can satisfy */
#define TIDES_SHM_MAX_ALLOC ((size_t) (1u << 20) - 16)

#endif
