/*
 * write_pace.c -- back-pressure on writers: a write waits (TIDES_BUSY, its
 * caller retries) while every memtable is full or level 0 is at its stop
 * trigger, fails with the background work's own error once that work has
 * failed, and is paced -- slept by bytes, per process -- while level 0 is
 * past its slowdown trigger; stalls are counted for tides_stats().
 */
#include <unistd.h>

#include "db/db_impl.h"
#include "db/write_pace.h"

/*
 * Stall counters: a write answered TIDES_BUSY counts once in stall_count
 * however often its caller retries, and the time from that first answer to
 * the write's success goes to stall_us.  A caller that gave up (its next
 * write comes more than STALL_GAP_US after its last retry) is charged until
 * its last retry only.
 */
#define STALL_GAP_US 1000000

void
tides_write_note_stall(tides_db *db, tides_status s)
{
	tides_shared *sh = db->sh;
	uint64_t	now;

	if (s != TIDES_BUSY && db->stall_began_us == 0)
		return;
	now = tides_now_us();
	if (s == TIDES_BUSY)
	{
		if (db->stall_began_us == 0)
		{
			db->stall_began_us = now;
			tides_count(&sh->counters, stall_count, 1);
		}
		db->stall_last_us = now;
		return;
	}
	if (now - db->stall_last_us > STALL_GAP_US)
		now = db->stall_last_us;
	tides_count(&sh->counters, stall_us, now - db->stall_began_us);
	db->stall_began_us = 0;
}

/*
 * A writer that must wait for flush (every memtable full) or compaction
 * (level 0 at its stop trigger) gets TIDES_BUSY, and its caller retries,
 * while that work succeeds.  Once the work's last attempt has failed, the
 * wait could last until an operator frees space: the write fails now with
 * that failure's status and message (a full disk names the file, and is
 * SQLSTATE 53100 to PostgreSQL, as it is for heap).  Writes succeed again
 * once the work, retried by its worker, does.
 */
tides_status
tides_write_stall_or_fail(tides_db *db, const tides_error *failure, const char *why, const char *work)
{
	tides_shared *sh = db->sh;
	tides_error last;

	tides_spin_lock(&sh->failure_lock);
	last = *failure;
	tides_spin_unlock(&sh->failure_lock);
	if (last.code == TIDES_OK)
		return tides_fail(&db->err, TIDES_BUSY, "%s; waiting for %s", why, work);
	TIDES_ASSERT(last.code != TIDES_BUSY);
	return tides_fail(&db->err, last.code, "%s and the last %s failed: %s", why, work, last.msg);
}

/* a paced write sleeps at most this long, and not at all for less than the minimum */
#define PACE_MAX_SLEEP_US 100000
#define PACE_MIN_SLEEP_US 50
/* what oversleeping may save later writes */
#define PACE_MAX_CREDIT_US 1000

/*
 * Pace a write of `bytes` at `over` files past the slowdown trigger: the
 * writing process owes the bytes' time at the rate for `over`
 * (delayed_write_rate halved per file) and sleeps it off -- in one sleep of
 * at most PACE_MAX_SLEEP_US, the rest carried to its next writes (db->
 * pace_debt_us, per process; a debt under PACE_MIN_SLEEP_US waits for more,
 * and a sleep the system made longer than asked is credited).
 * So a writer goes at that rate whatever the size of its batches -- a
 * transaction of sixty one-entry writes pays for its bytes, not sixty
 * fixed delays (at 1 ms each, the insert benchmark's writers stopped for
 * seconds at a time) -- and the deeper level 0 gets, the slower writers
 * go, until compaction keeps up.  The debt is each process's own: one
 * clock shared by all writers let a large batch (VACUUM's) put the clock
 * seconds ahead, and every small write after it, whoever made it, waited
 * the longest sleep (ibench l.i1: DELETEs of 50 rows taking 2 s, no commit
 * for 10 s).  Several writers together go at that rate each; the halving
 * per file bounds them.  Level 0's stop trigger is the hard bound.
 */
static void
pace_write(tides_db *db, uint64_t bytes, uint32_t over)
{
	tides_shared *sh = db->sh;
	uint64_t	rate = over >= 63 ? 0 : db->opts.delayed_write_rate >> over;
	uint64_t	start,
				slept;
	int64_t		wait;

	db->pace_debt_us += rate == 0 ? PACE_MAX_SLEEP_US : (int64_t) (bytes * 1000000u / rate);
	if (db->pace_debt_us < PACE_MIN_SLEEP_US)
		return;
	wait = db->pace_debt_us < PACE_MAX_SLEEP_US ? db->pace_debt_us : PACE_MAX_SLEEP_US;
	tides_db_wakeup(db, TIDES_WORK_COMPACT);
	start = tides_now_us();
	usleep((useconds_t) wait);
	slept = tides_now_us() - start;
	/* a sleep longer than asked is credited, a little: the next bytes owe less */
	db->pace_debt_us -= (int64_t) slept;
	if (db->pace_debt_us < -PACE_MAX_CREDIT_US)
		db->pace_debt_us = -PACE_MAX_CREDIT_US;
	tides_count(&sh->counters, slowdown_count, 1);
	tides_count(&sh->counters, slowdown_us, slept);
}

/* bytes: the batch's, to pace at the slowdown trigger; 0: not paced (tides_batch_unpaced) */
tides_status
tides_write_backpressure(tides_db *db, uint64_t bytes)
{
	tides_shared *sh = db->sh;
	uint32_t	l0 = atomic_load_explicit(&sh->l0_files, memory_order_relaxed);
	/* both thresholds move up with an adaptive L0 trigger (compaction.c) */
	uint32_t	shift = atomic_load_explicit(&sh->l0_shift, memory_order_relaxed);

	if (l0 >= db->opts.level0_stop_trigger + shift)
	{
		tides_db_wakeup(db, TIDES_WORK_COMPACT);
		return tides_write_stall_or_fail(db, &sh->compact_failure, "level 0 has too many files", "compaction");
	}
	if (l0 < db->opts.level0_slowdown_trigger + shift || db->opts.delayed_write_rate == 0)
		db->pace_debt_us = 0;	/* compaction caught up: nothing is owed */
	else if (bytes > 0)
		pace_write(db, bytes, l0 - (db->opts.level0_slowdown_trigger + shift));
	return TIDES_OK;
}
