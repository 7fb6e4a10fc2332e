/*
 * publish.h -- publication of writes (publish.c).
 *
 * Every write has a ticket (write.c, under the write lock); tickets, log
 * positions and sequence numbers rise together.  published_ticket,
 * published_seq and published_lsn move only past a run of done writes, in
 * ticket order, so readers (who read at published_seq) see a prefix of the
 * writes and every batch whole.
 */
#ifndef TIDES_DB_PUBLISH_H
#define TIDES_DB_PUBLISH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "db/db_impl.h"

/* has write `ticket` marked itself done (its entries are in)? */
static inline bool
tides_ticket_done(tides_shared *sh, uint64_t ticket)
{
	return atomic_load_explicit(&sh->publish_ring[ticket % TIDES_PUBLISH_RING].done,
								memory_order_acquire) == ticket + 1;
}

/* write `ticket` has its entries in: mark its ring slot done */
void		tides_publish_mark_done(tides_shared *sh, uint64_t ticket, uint64_t end_lsn,
									uint64_t last_seq);

/*
 * Publish every done write from published_ticket on; false if another
 * process is at it (it will look again after it lets go).  external: the
 * application's log, whose written_lsn is not ours to move.
 */
bool		tides_publish_done(tides_shared *sh, bool external);

/* return once `ticket` is published, publishing what is done meanwhile */
void		tides_publish_await(tides_shared *sh, uint64_t ticket, bool external);

/* mark write `ticket` done and return once it is published */
void		tides_publish_ticket(tides_shared *sh, uint64_t ticket, uint64_t end_lsn,
								 uint64_t last_seq, bool external);

/* a read point of this handle must see its own no-wait writes: wait for them */
void		tides_await_own(tides_db *db);

#endif
