/*
 * write_pace.h -- back-pressure on writers (write_pace.c): what a write
 * does when flush or compaction falls behind, and how stalls are counted.
 */
#ifndef TIDES_DB_WRITE_PACE_H
#define TIDES_DB_WRITE_PACE_H

#include <stdint.h>

#include "db/db_impl.h"

/*
 * Before a write of `bytes` (0: a batch that is never paced): TIDES_BUSY
 * (retry) or the last failure of compaction when level 0 is at its stop
 * trigger; else TIDES_OK, after sleeping off this process's pacing debt when
 * level 0 is past its slowdown trigger.
 */
tides_status tides_write_backpressure(tides_db *db, uint64_t bytes);

/*
 * A write that must wait for `work` (flush, compaction) because of `why`:
 * TIDES_BUSY while the work has not failed, else the work's last failure
 * (status and message).  Sets db->err.
 */
tides_status tides_write_stall_or_fail(tides_db *db, const tides_error *failure, const char *why,
									   const char *work);

/* after each attempt at a write, with its status: stall_count and stall_us */
void		tides_write_note_stall(tides_db *db, tides_status s);

#endif							/* TIDES_DB_WRITE_PACE_H */
