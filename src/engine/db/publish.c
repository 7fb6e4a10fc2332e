/*
 * publish.c -- publication of writes: readers see a prefix of them.
 *
 * A write reserves a ticket under the write lock (write.c) and, once its
 * entries are in the memtable, marks the ticket's ring slot done; the
 * published prefix then moves past every done write in ticket order.  This
 * file holds that protocol, the waits for it, and the waits of no-wait
 * writes (tides_batch_no_wait), whose publication is left to others.
 */
#include <sched.h>

#include "db/db_impl.h"
#include "db/publish.h"

/*
 * Publication.  Readers see a prefix: published_seq is the last sequence
 * number of a run of writes that are all in the memtable.  A write is done
 * once its entries are linked; it is published when every write reserved
 * before it is done too.  Writers do not publish one after another: a
 * writer marks its ring slot done and then, if no one else is at it, moves
 * the published prefix past every done write in ticket order -- its own and
 * those of later writers that finished first.  So a writer that lost its
 * CPU between reserving and linking delays the visibility of later writes,
 * but when it is done one publisher releases all of them together; before,
 * each waited for the one in front of it to be scheduled, publish, and
 * wake it, one context switch after another (16 backends on 2 CPUs slept
 * a third of their time in that chain).
 *
 * No write stays unpublished with nobody awake to publish it.  A writer
 * marks itself done, then tries to take `publishing`; a holder, after
 * releasing it, looks again at the first unpublished slot and goes on
 * publishing if that is done.  Both steps are sequentially consistent, so
 * if the writer failed to take the flag, the holder sees its slot (or an
 * earlier one not yet done, whose writer will publish both).  So a writer
 * whose attempt failed may sleep: someone is bound to publish it and wake it.
 */
static inline unsigned
wait_slot_of(uint64_t ticket)
{
	return (unsigned) (ticket % TIDES_PUBLISH_SLOTS);
}

/*
 * Publish every done write from published_ticket on, unless someone else
 * is at it (returns false).
 */
bool
tides_publish_done(tides_shared *sh, bool external)
{
	if (atomic_load(&sh->publishing) || atomic_exchange(&sh->publishing, true))
		return false;
	for (;;)
	{
		uint64_t	p0 = atomic_load(&sh->published_ticket),
					p = p0;
		uint64_t	end_lsn = 0,
					last_seq = 0;

		while (tides_ticket_done(sh, p))
		{
			end_lsn = sh->publish_ring[p % TIDES_PUBLISH_RING].end_lsn;
			last_seq = sh->publish_ring[p % TIDES_PUBLISH_RING].last_seq;
			p++;
		}
		if (p > p0)
		{
			/* in log order: every write below ticket p, and only they, are in */
			TIDES_ASSERT(atomic_load(&sh->published_seq) <= last_seq);
			TIDES_ASSERT(atomic_load(&sh->published_lsn) < end_lsn);
			atomic_store_explicit(&sh->published_seq, last_seq, memory_order_release);
			if (!external)
				atomic_store_explicit(&sh->log.written_lsn, end_lsn, memory_order_release);
			atomic_store_explicit(&sh->published_lsn, end_lsn, memory_order_release);
			atomic_store_explicit(&sh->published_ticket, p, memory_order_release);
		}
		atomic_store(&sh->publishing, false);
		/* wake the writers just published, each wait slot once */
		for (uint64_t t = p0; t < p && t < p0 + TIDES_PUBLISH_SLOTS; t++)
		{
			unsigned	i = wait_slot_of(t);

			atomic_fetch_add(&sh->publish_slots[i].epoch, 1);
			if (atomic_load(&sh->publish_slots[i].waiters) > 0)
				tides_futex_wake_all(&sh->publish_slots[i].epoch);
		}
		/* a writer that finished meanwhile may have found the flag taken */
		if (!tides_ticket_done(sh, atomic_load(&sh->published_ticket)) ||
			atomic_exchange(&sh->publishing, true))
			return true;
	}
}

/* write `ticket` has its entries in: its ring slot says so */
void
tides_publish_mark_done(tides_shared *sh, uint64_t ticket, uint64_t end_lsn, uint64_t last_seq)
{
	TIDES_ASSERT(!tides_ticket_done(sh, ticket));
	sh->publish_ring[ticket % TIDES_PUBLISH_RING].end_lsn = end_lsn;
	sh->publish_ring[ticket % TIDES_PUBLISH_RING].last_seq = last_seq;
	atomic_store(&sh->publish_ring[ticket % TIDES_PUBLISH_RING].done, ticket + 1);
}

/*
 * Return once `ticket` (done, or another process's) is published.  While
 * the first unpublished write is done, try to publish; otherwise, or if
 * another process is publishing, spin briefly (the writers before it
 * usually only copy memory), then sleep on the wait slot of the ticket,
 * which the publisher wakes.  A slot shared by two tickets wakes both, and
 * the 1 ms timeout bounds any missed wake.
 */
void
tides_publish_await(tides_shared *sh, uint64_t ticket, bool external)
{
	unsigned	i = wait_slot_of(ticket);
	uint64_t	slept_at = 0;
	uint64_t	pt;

	for (int spins = 0; (pt = atomic_load_explicit(&sh->published_ticket, memory_order_acquire)) <= ticket; spins++)
	{
		unsigned	epoch;

		if (tides_ticket_done(sh, pt) && tides_publish_done(sh, external))
			continue;
		if (spins < 100)
		{
			tides_cpu_relax();
			continue;
		}
		if (slept_at == 0)
			slept_at = tides_now_us();
		atomic_fetch_add(&sh->publish_slots[i].waiters, 1);
		epoch = atomic_load(&sh->publish_slots[i].epoch);
		if (atomic_load(&sh->published_ticket) <= ticket)
			tides_futex_wait(&sh->publish_slots[i].epoch, epoch, 1000);
		atomic_fetch_sub(&sh->publish_slots[i].waiters, 1);
	}
	if (slept_at != 0)
	{
		tides_count(&sh->counters, publish_waits, 1);
		tides_count(&sh->counters, publish_wait_us, tides_now_us() - slept_at);
	}
}

/* mark write `ticket` done and return once it is published */
void
tides_publish_ticket(tides_shared *sh, uint64_t ticket, uint64_t end_lsn, uint64_t last_seq, bool external)
{
	tides_publish_mark_done(sh, ticket, end_lsn, last_seq);
	tides_publish_await(sh, ticket, external);
}

/*
 * No-wait writes (tides_batch_no_wait).  A writer that returns before the
 * writes ahead of it are published leaves its own publication to them: it
 * marks its slot done and makes one attempt, and the argument above (the
 * holder of `publishing` looks again after releasing it; an earlier writer
 * publishes every done write behind its own) still leaves nobody's write
 * unpublished.  What the caller no longer learns is whether a log write
 * ahead of its own failed: the handle's next waiting write reports that
 * (below, write_batch), as it reports a failure ahead of itself.
 *
 * The handle's own reads must see the write: every read point it takes
 * (tides_sv_acquire_at, tides_snapshot_acquire, tides_read_point) first
 * waits for own_point.  Other processes see it when it is published, and
 * one that depends on it -- the next holder of a lock the writer held --
 * waits with tides_await_point.
 */
void
tides_await_point(tides_db *db, uint64_t point)
{
	tides_shared *sh = db->sh;

	if (point == 0 || atomic_load_explicit(&sh->published_ticket, memory_order_acquire) >= point)
		return;
	tides_publish_await(sh, point - 1, sh->ropts.log_mode == TIDES_LOG_EXTERNAL);
}

uint64_t
tides_write_point(tides_db *db)
{
	if (db->own_point != 0 &&
		atomic_load_explicit(&db->sh->published_ticket, memory_order_acquire) >= db->own_point)
		db->own_point = 0;
	return db->own_point;
}

void
tides_await_own(tides_db *db)
{
	if (db->own_point != 0)
	{
		tides_await_point(db, db->own_point);
		db->own_point = 0;
	}
}

void
tides_await_reserved(tides_db *db)
{
	tides_shared *sh = db->sh;
	uint64_t	next;

	tides_lock_write(sh);
	next = sh->next_ticket;
	tides_spin_unlock(&sh->write_lock);
	tides_await_point(db, next);
}
