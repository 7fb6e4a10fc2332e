/*
 * counters.h -- engine-wide statistics in the shared region.
 *
 * Relaxed atomic adds: the numbers are for reporting and tuning, never for
 * control decisions.  tides_get_stats() copies them out.
 */
#ifndef TIDES_UTIL_COUNTERS_H
#define TIDES_UTIL_COUNTERS_H

#include <stdatomic.h>
#include <stdint.h>

#include "tides_engine.h"

typedef struct tides_counters
{
	atomic_uint_fast64_t log_bytes_written;
	atomic_uint_fast64_t log_syncs;
	atomic_uint_fast64_t flush_bytes_written;
	atomic_uint_fast64_t flushes;
	atomic_uint_fast64_t compaction_bytes_read;
	atomic_uint_fast64_t compaction_bytes_written;
	atomic_uint_fast64_t compactions;
	atomic_uint_fast64_t trivial_moves;
	atomic_uint_fast64_t bytes_read;
	atomic_uint_fast64_t cache_hits;
	atomic_uint_fast64_t cache_misses;
	atomic_uint_fast64_t bloom_useful;
	atomic_uint_fast64_t stall_count;
	atomic_uint_fast64_t slowdown_count;
	atomic_uint_fast64_t slowdown_us;
	atomic_uint_fast64_t keys_written;
	atomic_uint_fast64_t user_bytes_written;
	atomic_uint_fast64_t ingested_files;
	atomic_uint_fast64_t ingested_bytes;
	atomic_uint_fast64_t bloom_checked;
	atomic_uint_fast64_t stall_us;
	atomic_uint_fast64_t flush_entries_written;
	atomic_uint_fast64_t compaction_entries_read;
	atomic_uint_fast64_t compaction_entries_written;
	atomic_uint_fast64_t reads_unchanged;
	atomic_uint_fast64_t reads_changed;
	atomic_uint_fast64_t ranges_unchanged;
	atomic_uint_fast64_t ranges_changed;
	atomic_uint_fast64_t flush_placed_files;
	atomic_uint_fast64_t flush_placed_bytes;
	atomic_uint_fast64_t stem_probes_absent;
	atomic_uint_fast64_t stem_probes_maybe;
	atomic_uint_fast64_t publish_waits;
	atomic_uint_fast64_t publish_wait_us;
	atomic_uint_fast64_t log_sync_requests;
	atomic_uint_fast64_t blocks_fetched;
	atomic_uint_fast64_t blocks_prefetched;
	atomic_uint_fast64_t writes;
	atomic_uint_fast64_t memtable_discards;
} tides_counters;

/*
 * This process's block I/O (tides_get_process_io): plain counters, bumped
 * wherever the shared cache_hits and bytes_read are, in the caller's thread
 * only (a helper's reads are counted by the reader it serves:
 * table/block_fetch.h).
 */
extern tides_io_stats tides_process_io;

#define tides_count(c, field, n) \
	atomic_fetch_add_explicit(&(c)->field, (uint64_t) (n), memory_order_relaxed)

#endif
