/*
 * log.h -- the engine's write-ahead log: numbered segment files of fixed
 * size, one stream for the whole engine, written concurrently by all
 * processes.
 *
 * Positions (LSNs) are byte offsets in the stream: segment = lsn / size,
 * offset in segment = lsn % size.  A record never crosses a segment; a writer
 * that does not fit pads the rest of the segment (a PAD record, or nothing if
 * fewer than 20 bytes remain) and starts at the next segment.
 *
 * Space is reserved under the engine's write lock (db/write.c), then each
 * writer copies its own record into the segment without locks: through the
 * segment's shared mapping when the vfs offers one (vfs->map: a memcpy into
 * the page cache, no system call; see tides_log_write), else by pwrite().
 * Either way the bytes are in the kernel when the write returns, so they
 * outlive the process that wrote them.  Records are published in
 * position order: written_lsn (all bytes below were handed to the kernel)
 * only advances past a record when every earlier record has been written.
 *
 * Segments are prepared ahead of use (renamed from a recycled segment or
 * created and allocated to full size, and zero-filled when zero_fill is set:
 * by handles in full sync mode) by tides_log_prepare(),
 * called from maintenance work and, if the writers get there first, by the
 * writer itself; positions inside a prepared segment never need new disk
 * blocks, so a log write cannot fail with ENOSPC.
 *
 * Group commit: tides_log_sync() takes the sync mutex; whoever holds it
 * fsyncs every segment up to the current written_lsn, so one fsync covers
 * all callers that queued behind it.
 */
#ifndef TIDES_LOG_LOG_H
#define TIDES_LOG_LOG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "log/log_format.h"
#include "tides_engine.h"
#include "util/counters.h"
#include "util/lock.h"
#include "util/status.h"

typedef struct tides_log_shared
{
	uint64_t	segment_size;
	_Atomic uint64_t written_lsn;	/* everything below reached the kernel */
	_Atomic uint64_t durable_lsn;	/* everything below was fsynced */
	_Atomic uint64_t oldest_segment;	/* lowest segment file that exists */
	_Atomic uint64_t ready_segment; /* highest segment prepared (+1; 0 = none) */
	tides_mutex sync_mutex;
	tides_mutex prepare_mutex;
} tides_log_shared;

/* per-process state: the directory and a few open segment descriptors */
#define TIDES_LOG_FDS 4

typedef struct tides_log
{
	tides_log_shared *sh;
	tides_vfs  *vfs;
	tides_counters *counters;
	const char *dir;
	struct
	{
		uint64_t	segment;
		int			fd;
		uint64_t	used;		/* LRU clock */
		uint8_t    *map;		/* the whole segment, mapped for writes (NULL: not yet) */
		bool		unmappable; /* map refused or the file too short: pwrite */
	}			fds[TIDES_LOG_FDS];
	uint64_t	clock;
	bool		zero_fill;		/* new segments written with zeros, not only allocated */
} tides_log;

void		tides_log_shared_init(tides_log_shared *sh, uint64_t segment_size);
void		tides_log_attach(tides_log *log, tides_log_shared *sh, tides_vfs *vfs,
							 tides_counters *counters, const char *dir);
void		tides_log_detach(tides_log *log);

/* "<dir>/%012llu.log" */
void		tides_log_segment_name(char *buf, size_t cap, const char *dir, uint64_t segment);

static inline uint64_t
tides_log_segment_of(const tides_log_shared *sh, uint64_t lsn)
{
	return lsn / sh->segment_size;
}

/* is segment `seg` prepared (ready to be written)? */
static inline bool
tides_log_segment_ready(const tides_log_shared *sh, uint64_t seg)
{
	return atomic_load_explicit(&sh->ready_segment, memory_order_acquire) > seg;
}

/*
 * Make sure segments up to `upto` exist at full size; recycle segments below
 * `recycle_below` (fully replayed ones) instead of creating new files, and
 * delete recyclable ones beyond a small spare pool.
 */
tides_status tides_log_prepare(tides_log *log, uint64_t upto, uint64_t recycle_below,
							   tides_error *err);

/* write a sealed record (header included) at lsn */
tides_status tides_log_write(tides_log *log, uint64_t lsn, const uint8_t *rec, size_t len,
							 tides_error *err);

/* write a PAD record (or nothing, if too little room) from lsn to segment end */
tides_status tides_log_write_pad(tides_log *log, uint64_t lsn, tides_error *err);

/* fsync everything up to at least lsn (group commit) */
tides_status tides_log_sync(tides_log *log, uint64_t lsn, tides_error *err);

/*
 * A skip: stream positions [from, to) that hold no records and that replay
 * jumps over.  Recovery records one when it moves new writes past a damaged
 * or torn tail to the next segment boundary instead of repairing it in
 * place (db/recovery.c, repair_log in db/write.c); the manifest persists the
 * list (db/version_edit.h, item 7).
 */
typedef struct tides_log_skip
{
	uint64_t	from;
	uint64_t	to;
} tides_log_skip;

/*
 * Recovery read: walk records from `from`, following skips (sorted list of
 * [from, to) ranges to jump over), calling fn for each BATCH record.
 * Returns the position where the valid log ends (*end) and whether it ended
 * on a damaged record rather than a clean end (*damaged).
 */
typedef tides_status (*tides_log_record_fn) (void *arg, uint64_t lsn, const uint8_t *payload,
											 uint32_t len);

tides_status tides_log_replay(tides_log *log, uint64_t from, const tides_log_skip *skips,
							  uint32_t nskips, tides_log_record_fn fn, void *arg,
							  uint64_t *end, bool *damaged, tides_error *err);

/*
 * After a replay that ended at `end`: find the BATCH records that lie after
 * it -- later in end's segment and in every existing segment up to
 * last_segment, outside the skips -- whose header (at their own position)
 * and checksum are valid.  fn receives each (header, payload) and returns
 * true to stop the scan.  Recovery uses it to tell a torn tail from damage
 * in the middle of the log (see db/recovery.c).  Reads every byte after `end`.
 */
typedef bool (*tides_log_found_fn) (void *arg, uint64_t lsn, const uint8_t *hdr,
									const uint8_t *payload, uint32_t len);

tides_status tides_log_scan_after(tides_log *log, uint64_t end, uint64_t last_segment,
								  const tides_log_skip *skips, uint32_t nskips,
								  tides_log_found_fn fn, void *arg, tides_error *err);

/*
 * fsync every existing segment holding positions [from, to) outside the
 * skips (recovery: what the replay read, before durable_lsn claims it).
 */
tides_status tides_log_sync_range(tides_log *log, uint64_t from, uint64_t to,
								  const tides_log_skip *skips, uint32_t nskips, tides_error *err);

#endif
