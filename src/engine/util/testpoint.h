/*
 * testpoint.h -- named points where a test can run code inside the engine.
 *
 * Some races cannot be provoked from outside: a reader must be stopped
 * exactly after it chose what it reads and before it reads, while other
 * work runs.  At such points the engine calls tides_test_point_hook (a
 * process-local function pointer, NULL unless a test set it), with the
 * point's name and the calling handle.  In production the cost is one load
 * and an untaken branch.  The hook may call back into the engine through
 * another handle; the engine holds no lock at any test point.
 *
 * Points:
 *   "read.pinned"   tides_get/tides_get_into: the superversion is pinned and
 *                   the read sequence number taken, nothing read yet
 *   "iter.pinned"   tides_iter_new: the same for an iterator
 *   "compaction.progress"  a compaction has just published its progress
 *                   (every TIDES_PROGRESS_EVERY input entries)
 *   "write.reserved" tides_write: the batch has its ticket, sequence numbers
 *                   and log position, and nothing is written yet: every
 *                   later write waits for it to be published
 *   "switch.chosen" a memtable switch has chosen its fresh slot and paused
 *                   writers, and dropped the write lock; the slot is not
 *                   active yet (db/write.c, switch_memtable)
 */
#ifndef TIDES_UTIL_TESTPOINT_H
#define TIDES_UTIL_TESTPOINT_H

typedef void (*tides_test_point_fn) (const char *point, void *db);

extern tides_test_point_fn tides_test_point_hook;

#define TIDES_TEST_POINT(name, db) \
	do { \
		if (__builtin_expect(tides_test_point_hook != 0, 0)) \
			tides_test_point_hook((name), (db)); \
	} while (0)

#endif
