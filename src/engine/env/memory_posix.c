/*
 * memory_posix.c -- tides_mem_discard on Linux.
 *
 * MADV_REMOVE, not MADV_DONTNEED: the region is shared memory (PostgreSQL's
 * main segment, or the test harness's MAP_SHARED | MAP_ANONYMOUS mapping),
 * and MADV_DONTNEED there only drops this process's page table entries --
 * the pages stay in the shared memory object, and other processes still see
 * the old bytes.  MADV_REMOVE frees the pages themselves (a hole punched in
 * the shmem or hugetlbfs object behind the mapping), and later accesses, by
 * any process, fault in zeroed pages.  On a private mapping it fails with
 * EINVAL and changes nothing, which is what tides_mem_discard promises.
 */
#include "env/memory.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

bool
tides_mem_discard(void *addr, size_t len)
{
	uintptr_t	page = (uintptr_t) sysconf(_SC_PAGESIZE);
	uintptr_t	lo = ((uintptr_t) addr + page - 1) & ~(page - 1);
	uintptr_t	hi = ((uintptr_t) addr + len) & ~(page - 1);

	if (hi <= lo)
		return true;			/* no whole page: nothing to give back */
#ifdef MADV_REMOVE
	return madvise((void *) lo, hi - lo, MADV_REMOVE) == 0;
#else
	return false;
#endif
}

/*
 * One system call instead of a fault per page: on the 2-vCPU VMs we measure
 * on, a write fault on a shared page costs 11-12 us, populating it 1 us and
 * the first touch after that 5 us (the hypervisor's share).
 */
void
tides_mem_populate(void *addr, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t	page = (uintptr_t) sysconf(_SC_PAGESIZE);
	uintptr_t	lo = (uintptr_t) addr & ~(page - 1);
	uintptr_t	hi = ((uintptr_t) addr + len + page - 1) & ~(page - 1);

	if (hi > lo)
		(void) madvise((void *) lo, hi - lo, MADV_POPULATE_WRITE);
#else
	(void) addr;
	(void) len;
#endif
}
