/*
 * memory.h -- giving memory of the shared region back to the operating
 * system, and mapping it in ahead of use.
 *
 * The region is mapped by whoever hosts the engine (tides_region_init); the
 * engine never maps or unmaps it.  What it may do is tell the kernel that a
 * range's contents are no longer needed, so that the pages stop counting
 * against the host's memory (and a cgroup's limit) until they are touched
 * again.  Used for the arenas of memtables that stayed free a while
 * (db/maint.c, "Idle memtables").  Or that it is about to write a range, so
 * that the kernel maps it in one call rather than a fault per page.
 */
#ifndef TIDES_ENV_MEMORY_H
#define TIDES_ENV_MEMORY_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Free the pages inside [addr, addr + len); afterwards a freed page reads as
 * zero, in every process that maps it.  Pages only partly inside the range
 * keep their bytes (with huge pages, that may be most of a small range).
 * False if the mapping does not support it (a private mapping, for
 * instance): then nothing changed.  The caller guarantees nobody reads or
 * writes the range meanwhile.
 */
bool		tides_mem_discard(void *addr, size_t len);

/*
 * Map the pages of [addr, addr + len) writable into this process's page
 * tables now, allocating those not yet backed, as writes to them would one
 * page fault at a time.  A hint: where the kernel cannot (before Linux 5.14,
 * or a range it refuses) nothing happens and later writes fault as usual.
 * Used on a writer's piece of a memtable's arena (db/write.c).
 */
void		tides_mem_populate(void *addr, size_t len);

#endif							/* TIDES_ENV_MEMORY_H */
