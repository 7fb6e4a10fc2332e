/*
 * counters.h -- engine-wide statistics in the shared region.
 *
 * Relaxed atomic adds: the numbers are for reporting and tuning, never for
 * control decisions.  tides_get_stats() sums them up.
 *
 * Every write and nearly every read bumps a few of them, so one set shared
 * by all would be a handful of cache lines every writing or reading thread
 * takes in turn: two threads putting keys spent a fifth of their write path
 * waiting for the lines of `writes`, `keys_written` and `user_bytes_written`
 * (bench/results/2026-12-07-0830-where-cpu-goes.md).  So the counters come
 * in TIDES_COUNTER_STRIPES sets, each on lines of its own, and a thread adds
 * to the set its thread id picks: threads with ids in a row (a process's
 * threads, backends forked one after another) never share one.  A reader
 * adds the sets up; a sum read while threads add is, as before, some mix of
 * before and after.
 */
#ifndef TIDES_UTIL_COUNTERS_H
#define TIDES_UTIL_COUNTERS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "tides_engine.h"
#include "util/thread.h"

typedef struct tides_counter_set
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
	atomic_uint_fast64_t filtered_dropped;
} tides_counter_set;

#define TIDES_COUNTER_STRIPES 32

typedef struct tides_counters
{
	struct
	{
		_Alignas(TIDES_LINE) tides_counter_set set;
	}			stripe[TIDES_COUNTER_STRIPES];
} tides_counters;

/* the calling thread's set of c */
static inline tides_counter_set *
tides_counters_mine(tides_counters *c)
{
	return &c->stripe[tides_thread_id() % TIDES_COUNTER_STRIPES].set;
}

/* the sum of one counter (field offset off) over every stripe */
uint64_t	tides_counter_sum_at(const tides_counters *c, size_t off);

#define tides_counter_sum(c, field) \
	tides_counter_sum_at((c), offsetof(tides_counter_set, field))

/*
 * This process's block I/O (tides_get_process_io): plain counters, bumped
 * wherever the shared cache_hits and bytes_read are, in the caller's thread
 * only (a helper's reads are counted by the reader it serves:
 * table/block_fetch.h).
 */
extern tides_io_stats tides_process_io;

#define tides_count(c, field, n) \
	atomic_fetch_add_explicit(&tides_counters_mine(c)->field, (uint64_t) (n), memory_order_relaxed)

#endif
