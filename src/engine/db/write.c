/*
 * write.c -- the write path: reserve, log, insert, publish; group commit;
 * memtable switches; and what happens when the log cannot be written.
 *
 * A write takes the write lock once, for a few dozen instructions: it
 * assigns the batch its sequence numbers and its log position and reserves
 * its memtable bytes and its publication ticket.  Outside the lock it
 * pwrite()s its record, links its entries into the skiplist, marks itself
 * done and returns once it is published: once every earlier write is done
 * too, whichever writer gets there first advances published_seq /
 * published_lsn past all done writes (publish.c).  Readers use
 * published_seq, so a batch becomes visible all at once and in log order.
 * A no-wait batch returns once it is done, its publication left to others.
 *
 * Memtable bytes come from a piece of the arena each handle takes for
 * itself (PIECE_BYTES at a time, under the same lock), not from the end of
 * the arena batch after batch: then every arena page is written by one
 * process, and only that process takes the write faults that map it (a
 * shared page must be faulted into each process that touches it, 11-12 us
 * a fault on our VMs; with four writers interleaving their entries, every
 * page cost four).  The new piece is populated with one system call before
 * the entries are copied in (tides_mem_populate).  Readers still touch
 * every page they walk, but read faults map pages around the one missed.
 * A memtable is full when no piece fits, so up to a piece per writing
 * handle is left unused.
 *
 * Failure of a log write (EIO; ENOSPC cannot happen inside a prepared
 * segment) leaves a hole in the log that recovery would stop at, losing
 * every later record.  The failed writer marks the log broken at its
 * position; writers whose records lie after the hole report an error (their
 * batches are not acknowledged) and the next writer repairs the log: it
 * moves the stream to the next segment and records the range as a skip in
 * the manifest before any further write is acknowledged.
 *
 * Failure of an fsync leaves it unknown which bytes reached the disk, and a
 * retried fsync may succeed without having written them (the kernel can
 * drop dirty pages after an error).  So after a failed fsync, tides_sync()
 * keeps failing until the memtable holding those records has been flushed to
 * an SSTable, which makes them durable by another path.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db_impl.h"
#include "db/publish.h"
#include "db/write_batch.h"
#include "db/write_pace.h"
#include "env/memory.h"
#include "util/testpoint.h"

tides_status
tides_log_ensure_ready(tides_db *db, uint64_t segment, tides_error *err)
{
	tides_shared *sh = db->sh;
	uint64_t	recycle_below = tides_log_segment_of(&sh->log, sh->replay_lsn);

	if (tides_log_segment_ready(&sh->log, segment))
		return TIDES_OK;
	return tides_log_prepare(&db->log, segment, recycle_below, err);
}

tides_memtable *
tides_oldest_sealed(tides_shared *sh)
{
	tides_memtable *best = NULL;

	for (uint32_t i = 0; i < sh->nmemtables; i++)
	{
		tides_memtable *m = &sh->memtables[i];

		if (atomic_load(&m->state) == TIDES_MEM_SEALED && (best == NULL || m->id < best->id))
			best = m;
	}
	return best;
}

/* one whose pages are kept if there is one, else one whose pages were given back */
tides_memtable *
tides_free_memtable(tides_shared *sh)
{
	tides_memtable *discarded = NULL;

	for (uint32_t i = 0; i < sh->nmemtables; i++)
	{
		tides_memtable *m = &sh->memtables[i];

		if (atomic_load(&m->state) != TIDES_MEM_FREE || atomic_load(&m->refs) != 0)
			continue;
		switch (atomic_load(&m->pages))
		{
			case TIDES_PAGES_KEPT:
				return m;
			case TIDES_PAGES_DISCARDED:
				if (discarded == NULL)
					discarded = m;
				break;
			default:
				break;			/* being discarded: not yours */
		}
	}
	return discarded;
}

/*
 * Seal the active memtable and install a fresh one.  Called with the write
 * lock held and writers_paused set by the caller; returns with the lock
 * released.  The new memtable joins the superversion before it becomes
 * active, so a reader can always find every published entry.
 *
 * The superversion's memory is taken first: if the metadata heap is
 * exhausted nothing changes (the old memtable stays active and the caller
 * gets the error).  Activating the fresh memtable without its superversion
 * would send published writes where no reader looks.
 */
static tides_status
switch_memtable(tides_db *db, tides_memtable *fresh)
{
	tides_shared *sh = db->sh;
	tides_memtable *old = sh->active;
	tides_superversion *sv;

	TIDES_ASSERT(tides_spin_held(&sh->write_lock) && sh->writers_paused);
	TIDES_ASSERT(atomic_load(&fresh->state) == TIDES_MEM_FREE && atomic_load(&fresh->refs) == 0);
	/* writers are paused: the active memtable and next_lsn stay as they are */
	tides_spin_unlock(&sh->write_lock);
	TIDES_TEST_POINT("switch.chosen", db);
	tides_lock_version(sh);
	sv = tides_sv_alloc(db, sh->ndropped);
	if (sv == NULL)
	{
		tides_mutex_unlock(&sh->version_mutex);
		tides_lock_write(sh);
		sh->writers_paused = false;
		tides_spin_unlock(&sh->write_lock);
		tides_db_wakeup(db, TIDES_WORK_FLUSH);
		return TIDES_NO_MEMORY;
	}

	tides_lock_write(sh);
	TIDES_ASSERT(sh->active == old);	/* paused writers cannot have switched it */
	if (old != NULL)
		tides_memtable_seal(old, sh->next_lsn, sh->last_seq);
	tides_memtable_activate(fresh, sh->next_mem_id++, sh->next_lsn, sh->last_seq + 1);
	tides_spin_unlock(&sh->write_lock);
	tides_sv_publish(db, sv);
	tides_mutex_unlock(&sh->version_mutex);

	tides_lock_write(sh);
	sh->active = fresh;
	sh->writers_paused = false;
	tides_spin_unlock(&sh->write_lock);
	tides_db_wakeup(db, TIDES_WORK_FLUSH);
	return TIDES_OK;
}

/* nothing reserved in m yet (write lock held) */
static bool
memtable_is_empty(const tides_memtable *m)
{
	return atomic_load(&m->entries) == 0 &&
		atomic_load(&m->used) == tides_memtable_base_bytes(m->arena_size);
}

/*
 * Seal the active memtable and activate a fresh one in its place, unless
 * nothing was reserved in it.  *id is the id of the memtable that was
 * active, *sealed whether it was sealed.  BUSY (nothing changed) when no
 * memtable is free.
 */
static tides_status
seal_active(tides_db *db, bool *sealed, uint64_t *id)
{
	tides_shared *sh = db->sh;
	tides_memtable *fresh;

	for (;;)
	{
		tides_lock_write(sh);
		if (sh->writers_paused)
		{
			tides_spin_unlock(&sh->write_lock);
			sched_yield();
			continue;
		}
		*id = sh->active->id;
		*sealed = false;
		if (memtable_is_empty(sh->active))
		{
			tides_spin_unlock(&sh->write_lock);
			return TIDES_OK;
		}
		fresh = tides_free_memtable(sh);
		if (fresh == NULL)
		{
			tides_spin_unlock(&sh->write_lock);
			tides_db_wakeup(db, TIDES_WORK_FLUSH);
			return TIDES_BUSY;
		}
		*sealed = true;
		sh->writers_paused = true;
		return switch_memtable(db, fresh);
	}
}

/*
 * A seal asked for (not one of a full memtable): every memtable below id is
 * flushed without waiting for memtables_per_flush sealed ones.
 */
static void
ask_flush_below(tides_shared *sh, uint64_t id)
{
	uint64_t	cur = atomic_load(&sh->flush_asked_below);

	while (cur < id && !atomic_compare_exchange_weak(&sh->flush_asked_below, &cur, id))
		;
}

tides_status
tides_seal_memtable(tides_db *db)
{
	bool		sealed;
	uint64_t	id;
	tides_status s = seal_active(db, &sealed, &id);

	if (s == TIDES_OK)
		ask_flush_below(db->sh, sealed ? id + 1 : id);
	return s;
}

/*
 * Move the log past a failed write: wait until every reserved record is
 * published, jump to the next segment, and make the skip durable in the
 * manifest.  Called with the write lock held and writers_paused set;
 * returns with it released.
 */
static tides_status
repair_log(tides_db *db)
{
	tides_shared *sh = db->sh;
	uint64_t	size = sh->log.segment_size;
	uint64_t	reserved_end = sh->next_lsn;
	uint64_t	broken = sh->log_broken_lsn;
	uint64_t	restart = (reserved_end / size + 1) * size;
	tides_error err;
	tides_status s;
	tides_edit	e;

	TIDES_ASSERT(tides_spin_held(&sh->write_lock) && sh->writers_paused);
	TIDES_ASSERT(broken != 0 && broken < reserved_end && reserved_end < restart);
	tides_error_clear(&err);
	tides_spin_unlock(&sh->write_lock);
	/* every reserved write published, and past its check of log_broken_lsn */
	while (atomic_load_explicit(&sh->inflight, memory_order_acquire) > 0)
		sched_yield();
	/* a no-wait write stops counting before it is published: by another */
	while (atomic_load_explicit(&sh->published_ticket, memory_order_acquire) != sh->next_ticket)
		sched_yield();
	TIDES_ASSERT(atomic_load(&sh->published_lsn) == reserved_end);

	s = tides_log_ensure_ready(db, restart / size, &err);
	tides_lock_version(sh);
	if (s == TIDES_OK && sh->nskips >= TIDES_MAX_SKIPS)
		s = tides_fail(&err, TIDES_IO_ERROR, "too many log repairs pending; flush needed");
	if (s == TIDES_OK)
	{
		tides_log_skip skips[TIDES_MAX_SKIPS];
		uint32_t	n = sh->nskips;

		memcpy(skips, sh->skips, n * sizeof(skips[0]));
		skips[n].from = broken;
		skips[n].to = restart;
		n++;
		tides_edit_init(&e);
		s = tides_edit_set_skips(&e, skips, n);
		if (s == TIDES_OK)
			s = tides_manifest_apply(db, &e, NULL, 0, NULL, &err);
		tides_edit_free(&e);
	}
	tides_mutex_unlock(&sh->version_mutex);

	tides_lock_write(sh);
	if (s == TIDES_OK)
	{
		sh->next_lsn = restart;
		atomic_store(&sh->published_lsn, restart);
		/* no writer waits: every reserved record was published, and writers are paused */
		atomic_store(&sh->log.written_lsn, restart);
		/* before the flag goes: a handle's waiting write checks the flag, then this */
		atomic_fetch_add(&sh->log_repairs, 1);
		sh->log_broken_lsn = 0;
	}
	sh->writers_paused = false;
	tides_spin_unlock(&sh->write_lock);
	if (s != TIDES_OK)
		tides_db_fail(db, &err);
	return s;
}

/*
 * Per-write scratch for inserting a decoded batch into the memtable: its
 * entries go in groups (tides_memtable_add_group), so that the searches of
 * a group's random keys -- a row's index entries, VACUUM's deletions --
 * wait for their cache misses together.
 */
typedef struct insert_ctx
{
	tides_db   *db;
	tides_mem_group group;		/* of the memtable receiving the entries */
	uint64_t	off;
	const uint32_t *heights;
	uint32_t	i;
} insert_ctx;

/*
 * The splice for key in memtable m (db_impl.h, tides_splice_slot): the slot
 * of key's prefix in m, or else a fresh one in the place of a slot of an
 * older memtable or of the one used longest ago.
 */
#define SPLICE_PROBE 8

/* the bytes of key that name its slot */
static size_t
splice_prefix_len(const tides_db *db, size_t klen)
{
	size_t		plen = db->opts.range_prefix_len;

	if (plen > TIDES_SPLICE_PREFIX)
		plen = TIDES_SPLICE_PREFIX;
	return plen > klen ? klen : plen;
}

/* the slot of key's prefix in memtable m, or NULL */
static tides_splice_slot *
splice_slot(tides_db *db, const tides_memtable *m, const uint8_t *key, size_t klen)
{
	size_t		plen = splice_prefix_len(db, klen);

	for (int i = 0; i < TIDES_SPLICE_SLOTS; i++)
	{
		tides_splice_slot *s = &db->splices[i];

		/* mem: 0 marks an empty slot; memtable ids start at 0 */
		if (s->mem == m->id + 1 && s->plen == plen && memcmp(s->prefix, key, plen) == 0)
			return s;
	}
	return NULL;
}

static tides_skip_splice *
splice_for(tides_db *db, const tides_memtable *m, const uint8_t *key, size_t klen)
{
	uint64_t	mem = m->id + 1;
	tides_splice_slot *s = splice_slot(db, m, key, klen);
	tides_splice_slot *victim = NULL;

	db->splice_uses++;
	if (s != NULL)
	{
		/*
		 * Pairs that did not hold the last key (random keys: an index) went
		 * cold since; checking them level by level costs more than a search
		 * from the head, whose upper levels are hot.  Start from the head,
		 * but every SPLICE_PROBE inserts look at the level-0 pair first
		 * (keys of the tree may come in order again).
		 */
		if (!s->sp.near)
		{
			if (db->splice_uses % SPLICE_PROBE != 0)
				tides_skip_splice_init(&s->sp);
			else
				s->sp.quick = true;
		}
		s->used = db->splice_uses;
		return &s->sp;
	}
	for (int i = 0; i < TIDES_SPLICE_SLOTS; i++)
	{
		s = &db->splices[i];
		if (victim == NULL || (victim->mem == mem && (s->mem != mem || s->used < victim->used)))
			victim = s;
	}
	victim->mem = mem;
	victim->used = db->splice_uses;
	victim->plen = (uint32_t) splice_prefix_len(db, klen);
	memcpy(victim->prefix, key, victim->plen);
	tides_skip_splice_init(&victim->sp);
	return &victim->sp;
}

/* tides_batch_decode callback; keys and values point into the batch, alive until the write returns */
static tides_status
insert_entry(void *arg, uint64_t seq, int type, const uint8_t *key, size_t klen,
			 const uint8_t *val, size_t vlen)
{
	insert_ctx *c = arg;
	uint32_t	h = c->heights[c->i++];
	tides_mem_put p = {
		.off = c->off, .height = h, .seq = seq, .type = type, .ukey = key, .ukey_len = klen,
		.val = val, .vlen = vlen, .sp = splice_for(c->db, c->group.m, key, klen)
	};

	tides_mem_group_put(&c->group, &p);
	c->off += tides_memtable_entry_size(h, klen, vlen);
	return TIDES_OK;
}

/* memtable bytes for the batch at the drawn heights */
static uint64_t
batch_arena_bytes(const tides_batch *b, const uint32_t *heights)
{
	uint64_t	extra = 0;

	for (uint32_t i = 0; i < b->count; i++)
		extra += (uint64_t) (heights[i] - 1) * sizeof(uint32_t);
	/* node sizes round up to 8 per node; arena_bytes already includes that */
	return b->arena_bytes + extra + 8 * (uint64_t) b->count;
}

/*
 * One write in flight (tides_write): what the batch needs, and what
 * reserve_write assigns it under the write lock for the phases after it.
 */
typedef struct write_op
{
	tides_batch *b;
	size_t		rec_len;		/* record header + payload */
	const uint32_t *heights;	/* skiplist height of each entry */
	uint64_t	bytes;			/* memtable bytes at those heights */
	uint64_t	tag;
	bool		seal;
	bool		external;		/* EXTERNAL log mode: no engine log record */
	tides_append_fn append;		/* external: logs the batch (may be NULL) */
	void	   *append_arg;
	/* assigned by reserve_write */
	tides_memtable *mt;			/* the memtable receiving the entries */
	uint64_t	off;			/* its reserved bytes start here */
	uint64_t	start;			/* the stream position before any pad */
	uint64_t	pos;			/* the record's position */
	uint64_t	pad_at;			/* 0, or where a PAD record goes */
	uint64_t	seq0;			/* sequence number of entry 0 */
	uint64_t	ticket;			/* order of publication */
	uint64_t	populate;		/* bytes of a new piece at off to populate, or 0 */
	bool		no_wait;		/* return before publication (tides_batch_no_wait) */
	uint64_t	repairs;		/* log_repairs at the reservation */
	uint64_t	durable;		/* what the record claims was durable */
	bool		prepare_next;	/* the next segment is not prepared yet */
} write_op;

/* the arena a handle takes for itself at a time: 64 KiB, less in small memtables */
#define PIECE_BYTES(arena_size) ((arena_size) / 256 < 65536 ? ((arena_size) / 256 + 7) / 8 * 8 : 65536)

/* do this handle's piece of mt hold `bytes` more (write lock held)? */
static bool
piece_fits(const tides_db *db, const tides_memtable *mt, uint64_t bytes)
{
	return db->piece_mem == mt && db->piece_mem_id == mt->id &&
		db->piece_end - db->piece_off >= bytes;
}

/* may a write of `bytes` go into mt (write lock held)? */
static bool
memtable_has_room(const tides_db *db, const tides_memtable *mt, uint64_t bytes)
{
	return piece_fits(db, mt, bytes) || atomic_load(&mt->used) + bytes <= mt->arena_size;
}

/* the reservation itself (write lock held): sequence numbers, position, memtable bytes */
static void
reserve_space(tides_db *db, write_op *w, tides_memtable *mt, uint64_t pos)
{
	tides_shared *sh = db->sh;

	TIDES_ASSERT(atomic_load(&mt->state) == TIDES_MEM_ACTIVE);
	TIDES_ASSERT(sh->next_ticket - atomic_load(&sh->published_ticket) < TIDES_PUBLISH_RING);
	w->pos = pos;
	w->ticket = sh->next_ticket++;
	atomic_fetch_add(&sh->inflight, 1);
	w->seq0 = sh->last_seq + 1;
	sh->last_seq += w->b->count;
	sh->next_lsn = pos + w->rec_len;
	w->mt = mt;
	w->populate = 0;
	w->repairs = atomic_load(&sh->log_repairs);
	if (!piece_fits(db, mt, w->bytes))
	{
		/* a new piece: what this write needs, at least PIECE_BYTES where they fit */
		uint64_t	used = atomic_load(&mt->used);
		uint64_t	take = w->bytes > PIECE_BYTES(mt->arena_size) ? w->bytes : PIECE_BYTES(mt->arena_size);

		if (used + take > mt->arena_size)
			take = mt->arena_size - used;
		TIDES_ASSERT(take >= w->bytes);	/* memtable_has_room, same lock */
		db->piece_mem = mt;
		db->piece_mem_id = mt->id;
		db->piece_off = used;
		db->piece_end = used + take;
		atomic_store(&mt->used, used + take);
		w->populate = take;
	}
	w->off = db->piece_off;
	db->piece_off += w->bytes;
	/* a plain add: every writer of placed holds the write lock */
	atomic_store_explicit(&mt->placed, atomic_load_explicit(&mt->placed, memory_order_relaxed) + w->bytes,
						  memory_order_relaxed);
	TIDES_ASSERT(db->piece_off <= db->piece_end && db->piece_end <= atomic_load(&mt->used));
	TIDES_ASSERT(atomic_load(&mt->used) <= mt->arena_size);
	atomic_fetch_add(&mt->writers, 1);
}

/*
 * Reserve: under the write lock, wait out a memtable switch or log repair,
 * repair a broken log, switch a full memtable, make sure the segment is
 * prepared, register the tag, then assign sequence numbers, log position and
 * memtable bytes.  On TIDES_OK the write lock is released and w->mt->writers
 * is raised (the memtable cannot be flushed until insert_write lowers it);
 * otherwise nothing was reserved and db->err says why.
 */
static tides_status
reserve_write(tides_db *db, write_op *w)
{
	tides_shared *sh = db->sh;
	uint64_t	seg_size = sh->log.segment_size;
	tides_error err;
	tides_status s;

	tides_error_clear(&err);
	for (;;)
	{
		tides_memtable *mt;
		uint64_t	pos;

		tides_lock_write(sh);
		if (sh->writers_paused)
		{
			tides_spin_unlock(&sh->write_lock);
			sched_yield();
			continue;
		}
		if (sh->next_ticket - atomic_load(&sh->published_ticket) >= TIDES_PUBLISH_RING)
		{
			/* as many writes in flight as the ring holds: wait for publication */
			tides_spin_unlock(&sh->write_lock);
			sched_yield();
			continue;
		}
		if (sh->writes_closed)
		{
			tides_spin_unlock(&sh->write_lock);
			return tides_fail(&db->err, TIDES_UNAVAILABLE, "the engine is closed for writes");
		}
		if (sh->log_broken_lsn != 0 && !w->external)
		{
			sh->writers_paused = true;
			s = repair_log(db);
			if (s != TIDES_OK)
				return s;
			continue;
		}
		mt = sh->active;
		if (!memtable_has_room(db, mt, w->bytes))
		{
			tides_memtable *fresh = tides_free_memtable(sh);

			if (fresh == NULL)
			{
				tides_spin_unlock(&sh->write_lock);
				tides_db_wakeup(db, TIDES_WORK_FLUSH);
				return tides_write_stall_or_fail(db, &sh->flush_failure, "all memtables are full", "flush");
			}
			sh->writers_paused = true;
			s = switch_memtable(db, fresh);
			if (s != TIDES_OK)
				return tides_fail(&db->err, s, "out of shared memory installing a memtable");
			continue;
		}
		w->start = pos = sh->next_lsn;
		w->pad_at = 0;
		if (w->external)
		{
			/*
			 * No log file: the position only orders publication.  Nothing
			 * was written to the engine's log, so nothing can be broken
			 * and no segment needs preparing.
			 */
			reserve_space(db, w, mt, pos);
			tides_spin_unlock(&sh->write_lock);
			return TIDES_OK;
		}
		if (w->rec_len > seg_size - pos % seg_size)
		{
			w->pad_at = pos;
			pos = (pos / seg_size + 1) * seg_size;
		}
		if (!tides_log_segment_ready(&sh->log, pos / seg_size))
		{
			tides_spin_unlock(&sh->write_lock);
			s = tides_log_ensure_ready(db, pos / seg_size, &err);
			if (s != TIDES_OK)
			{
				tides_db_fail(db, &err);
				return s;
			}
			continue;
		}
		/*
		 * Register the tag only now, when nothing can turn the write away
		 * any more: a tag registered by a write that then returned
		 * TIDES_BUSY would have no records, yet every later flush would
		 * record it pending and recovery would report it unsealed.  Under
		 * the write lock no memtable can be sealed between this and the
		 * reservation below, so the flush of the memtable that receives
		 * the record sees the tag (with its exact first position).
		 */
		if (w->tag != 0 && tides_tags_note(db, w->tag, pos, false, 0) != TIDES_OK)
		{
			tides_spin_unlock(&sh->write_lock);
			/* settled tags leave the table when their memtable is flushed */
			tides_seal_memtable(db);
			tides_db_wakeup(db, TIDES_WORK_FLUSH);
			return tides_fail(&db->err, TIDES_BUSY, "too many open batch tags");
		}
		/*
		 * What this record will claim was durable when it was written (see
		 * log_format.h); never past a failed write, which is a hole until
		 * repair_log records it as a skip.
		 */
		w->durable = atomic_load_explicit(&sh->log.durable_lsn, memory_order_acquire);
		if (sh->log_broken_lsn != 0 && sh->log_broken_lsn < w->durable)
			w->durable = sh->log_broken_lsn;
		w->prepare_next = !tides_log_segment_ready(&sh->log, pos / seg_size + 1);
		/* a record never crosses a segment; positions only grow */
		TIDES_ASSERT(pos >= w->start && pos % seg_size + w->rec_len <= seg_size);
		reserve_space(db, w, mt, pos);
		tides_spin_unlock(&sh->write_lock);
		return TIDES_OK;
	}
}

/*
 * Log and insert, without locks: write the record (after a PAD if it moved
 * to the next segment), then link its entries into the reserved memtable
 * bytes -- unless the log write failed, so that the batch stays invisible.
 * Lowers the memtable's writer count either way.
 */
static tides_status
log_and_insert(tides_db *db, write_op *w, tides_error *err)
{
	tides_batch *b = w->b;
	tides_status s = TIDES_OK;

	tides_batch_set_seq(b, w->seq0);
	if (w->external)
	{
		size_t		len;
		const uint8_t *payload = tides_batch_payload(b, &len);

		/* the application's log, in the place of ours; it cannot fail */
		if (w->append != NULL)
		{
			uint64_t	end = w->append(w->append_arg, payload, len);
			uint64_t	cur = atomic_load(&w->mt->ext_max);

			/* flush makes the log durable up to here first (the write-ahead rule) */
			while (end > cur && !atomic_compare_exchange_weak(&w->mt->ext_max, &cur, end))
				;
		}
	}
	else
	{
		tides_rec_seal_durable(b->rep.data, (uint32_t) (w->rec_len - TIDES_REC_HEADER), w->pos,
							   TIDES_REC_BATCH, w->durable);
		if (w->pad_at != 0)
			s = tides_log_write_pad(&db->log, w->pad_at, err);
		if (s == TIDES_OK)
			s = tides_log_write(&db->log, w->pos, b->rep.data, w->rec_len, err);
	}
	if (s == TIDES_OK)
	{
		insert_ctx	ic;
		tides_batch_header bh;
		const uint8_t *payload;
		size_t		payload_len;
		tides_status ds;

		/* a new piece of the arena: its pages into our page tables at once */
		if (w->populate != 0)
			tides_mem_populate(w->mt->arena + w->off, w->populate);
		ic.db = db;
		tides_mem_group_init(&ic.group, w->mt);
		ic.off = w->off;
		ic.heights = w->heights;
		ic.i = 0;
		payload = tides_batch_payload(b, &payload_len);
		ds = tides_batch_decode(payload, payload_len, &bh, insert_entry, &ic, NULL);
		tides_mem_group_finish(&ic.group);
		/* our own encoding: every entry decodes, within the reserved bytes */
		TIDES_ASSERT(ds == TIDES_OK && ic.i == b->count && bh.count == b->count);
		(void) ds;
		TIDES_ASSERT(ic.off <= w->off + w->bytes);
		/* a seal counts only once its record is in the log, and before flush can look */
		if (w->tag != 0 && w->seal)
			tides_tags_note(db, w->tag, w->pos, true, w->mt->first_lsn);
	}
	atomic_fetch_sub_explicit(&w->mt->writers, 1, memory_order_release);
	return s;
}

/*
 * Publish (publish.c); a failed log write (`failed`) first marks
 * the log broken at its start.  Returns where the log is broken (0: it is
 * not), read once this write is published -- so after every failed write
 * before it has marked the log (a no-wait write reads it once it is done:
 * its handle's next waiting write makes up for that) -- and before the write
 * stops counting as in flight: a repair, which clears log_broken_lsn, waits
 * for that, or this batch, inside the range the repair skips, would be
 * acknowledged although recovery never replays it.
 */
static uint64_t
publish_write(tides_shared *sh, const write_op *w, bool failed)
{
	uint64_t	broken;

	if (failed)
	{
		tides_lock_write(sh);
		if (sh->log_broken_lsn == 0)
			sh->log_broken_lsn = w->start;
		tides_spin_unlock(&sh->write_lock);
	}
	if (w->no_wait && !failed)
	{
		tides_publish_mark_done(sh, w->ticket, w->pos + w->rec_len, w->seq0 + w->b->count - 1);
		if (tides_ticket_done(sh, atomic_load_explicit(&sh->published_ticket, memory_order_acquire)))
			(void) tides_publish_done(sh, w->external);
	}
	else
	{
		tides_publish_ticket(sh, w->ticket, w->pos + w->rec_len, w->seq0 + w->b->count - 1, w->external);
		TIDES_ASSERT(atomic_load(&sh->published_lsn) >= w->pos + w->rec_len);
	}
	broken = atomic_load(&sh->log_broken_lsn);
	atomic_fetch_sub_explicit(&sh->inflight, 1, memory_order_release);
	return broken;
}

/*
 * Before the reservation: walk the active memtable's skiplist to where each
 * entry of a small batch will go, so that the walk that links it -- after
 * the ticket is taken and before the write is published, where a writer
 * losing its CPU holds back every later one -- finds its nodes in cache.
 * Not for a key that will go next to the last one this handle linked in its
 * tree (keys in order: a table's rows, an ascending primary key): its insert
 * starts from that splice and touches only nodes in cache already, and a
 * search from the head would cost several times the insert.
 */
#define WARM_MAX_ENTRIES TIDES_SKIP_GROUP
#define WARM_KEY_MAX 256

typedef struct warm_ctx
{
	tides_db   *db;
	const tides_memtable *m;
	int			n;
	uint8_t		ikeys[WARM_MAX_ENTRIES][WARM_KEY_MAX];
	const uint8_t *keys[WARM_MAX_ENTRIES];
	size_t		klens[WARM_MAX_ENTRIES];
} warm_ctx;

static tides_status
warm_entry(void *arg, uint64_t seq, int type, const uint8_t *key, size_t klen,
		   const uint8_t *val, size_t vlen)
{
	warm_ctx   *c = arg;
	uint8_t    *ikey = c->ikeys[c->n];

	(void) seq;
	(void) type;
	(void) val;
	(void) vlen;
	if (klen + TIDES_TRAILER <= WARM_KEY_MAX)
	{
		tides_splice_slot *s = splice_slot(c->db, c->m, key, klen);

		/* the newest version's place: where an entry of a higher seq goes */
		tides_ikey_make(ikey, key, klen, TIDES_MAX_SEQ, TIDES_KT_SEEK);
		/* splice_for keeps a slot's pairs only if they held the last key */
		if (s == NULL || !s->sp.near ||
			!tides_skip_splice_holds(&c->m->list, &s->sp, ikey, klen + TIDES_TRAILER))
		{
			c->keys[c->n] = ikey;
			c->klens[c->n++] = klen + TIDES_TRAILER;
		}
	}
	return TIDES_OK;
}

static void
warm_places(tides_db *db, const tides_batch *b)
{
	tides_superversion *sv;
	tides_batch_header bh;
	const uint8_t *payload;
	size_t		len;

	if (b->count == 0 || b->count > WARM_MAX_ENTRIES)
		return;
	sv = tides_sv_acquire(db);
	payload = tides_batch_payload(b, &len);
	if (sv->nmem > 0 && atomic_load(&sv->mems[0]->state) == TIDES_MEM_ACTIVE)
	{
		warm_ctx	c;
		tides_skip_splice found[WARM_MAX_ENTRIES];

		c.db = db;
		c.m = sv->mems[0];
		c.n = 0;
		(void) tides_batch_decode(payload, len, &bh, warm_entry, &c, NULL);
		/* the places are found again when linked; this walk only brings their nodes into cache */
		tides_skip_find_group(&c.m->list, c.n, c.keys, c.klens, found);
	}
	tides_sv_release(db, sv);
}

/*
 * The write path: check the batch and draw its heights; back-pressure;
 * reserve; log and insert; publish; acknowledge (counters, and the group
 * commit fsync in FULL mode).  w arrives with b, external and append set.
 * See the comment at the top of this file.
 */
static tides_status
write_batch(tides_db *db, write_op *w, uint64_t *lsn_out)
{
	tides_shared *sh = db->sh;
	tides_batch *b = w->b;
	uint32_t	heights_buf[64];
	uint32_t   *heights = heights_buf;
	uint64_t	broken;
	bool		syncs;
	tides_error err;
	tides_status s;

	w->rec_len = b->rep.len;
	if (atomic_load(&sh->state) != TIDES_STATE_OPEN)
		return tides_fail(&db->err, TIDES_UNAVAILABLE, "engine is not open");
	if (w->external != (sh->ropts.log_mode == TIDES_LOG_EXTERNAL))
		return tides_fail(&db->err, TIDES_INVALID, w->external ?
						  "tides_write_external needs a store opened with the external log" :
						  "a store opened with the external log takes tides_write_external");
	if (b->rep.oom)
		return tides_fail(&db->err, TIDES_NO_MEMORY, "write batch ran out of memory");
	w->tag = tides_batch_tag_of(b);
	w->seal = tides_batch_seals(b);
	if (w->external && w->tag != 0)
		return tides_fail(&db->err, TIDES_INVALID, "batch tags need the engine's own log");
	/* an empty batch matters only if it carries a tag (typically a seal) */
	if (b->count == 0 && w->tag == 0)
	{
		/* nothing to wait for beyond what is published (its line is read only here) */
		if (lsn_out)
			*lsn_out = atomic_load(&sh->published_lsn);
		return TIDES_OK;
	}
	if (w->rec_len > sh->log.segment_size / 2)
		return tides_fail(&db->err, TIDES_INVALID,
						  "write batch of %zu bytes exceeds half a log segment", w->rec_len);

	if (b->count > 64)
	{
		heights = malloc(b->count * sizeof(uint32_t));
		if (heights == NULL)
			return tides_fail(&db->err, TIDES_NO_MEMORY, "out of memory");
	}
	for (uint32_t i = 0; i < b->count; i++)
		heights[i] = tides_skip_random_height(tides_rand_next(&db->rnd));
	w->heights = heights;
	w->bytes = batch_arena_bytes(b, heights);
	if (w->bytes + tides_memtable_base_bytes(sh->ropts.memtable_size) > sh->ropts.memtable_size)
	{
		s = tides_fail(&db->err, TIDES_INVALID, "write batch of %zu bytes exceeds a memtable",
					   w->rec_len);
		goto out;
	}

	s = tides_write_backpressure(db, b->unpaced ? 0 : w->bytes);
	if (s != TIDES_OK)
		goto out;				/* db->err says why */
	/* a write that is synced before it returns waits for its publication anyway */
	syncs = !w->external && db->opts.sync_mode == TIDES_SYNC_FULL && (w->tag == 0 || w->seal) &&
		!b->defer_sync;
	w->no_wait = b->no_wait && !syncs;
	warm_places(db, b);
	s = reserve_write(db, w);
	if (s != TIDES_OK)
		goto out;
	TIDES_TEST_POINT("write.reserved", db);
	if (w->prepare_next)
		tides_db_wakeup(db, TIDES_WORK_MAINT);

	tides_error_clear(&err);
	s = log_and_insert(db, w, &err);
	broken = publish_write(sh, w, s != TIDES_OK);
	if (s != TIDES_OK)
	{
		tides_db_fail(db, &err);
		goto out;
	}
	if (broken != 0 && broken < w->pos)
	{
		s = tides_fail(&db->err, TIDES_IO_ERROR,
					   "log write at position %llu failed; this batch follows it and is not durable",
					   (unsigned long long) broken);
		goto out;
	}
	if (w->no_wait)
	{
		if (!db->no_wait_pending)
		{
			db->no_wait_pending = true;
			db->no_wait_repairs = w->repairs;
		}
		db->own_point = w->ticket + 1;
	}
	else
	{
		/* published, and every earlier write with it: this handle's own too */
		db->own_point = 0;
		if (db->no_wait_pending)
		{
			/*
			 * A failure ahead of an earlier no-wait write of ours shows as
			 * broken < w->pos above while it is not repaired; once repaired,
			 * only the count tells (the write may lie in the skipped range).
			 */
			db->no_wait_pending = false;
			if (atomic_load(&sh->log_repairs) != db->no_wait_repairs)
			{
				s = tides_fail(&db->err, TIDES_IO_ERROR,
							   "the log was repaired after an earlier write of this handle, "
							   "which may not be durable");
				goto out;
			}
		}
	}

	/* acknowledge */
	tides_count(&sh->counters, writes, 1);
	tides_count(&sh->counters, keys_written, b->count);
	tides_count(&sh->counters, user_bytes_written, w->rec_len - TIDES_REC_HEADER);
	if (lsn_out)
		*lsn_out = w->pos + w->rec_len;
	if (!w->external && db->opts.sync_mode == TIDES_SYNC_FULL && (w->tag == 0 || w->seal) &&
		!b->defer_sync)
		s = tides_sync(db, w->pos + w->rec_len, false);
out:
	if (heights != heights_buf)
		free(heights);
	tides_write_note_stall(db, s);
	return s;
}

tides_status
tides_write(tides_db *db, tides_batch *b, uint64_t *lsn_out)
{
	write_op	w;

	memset(&w, 0, sizeof(w));
	w.b = b;
	return write_batch(db, &w, lsn_out);
}

tides_status
tides_write_external(tides_db *db, tides_batch *b, tides_append_fn append, void *arg)
{
	write_op	w;

	memset(&w, 0, sizeof(w));
	w.b = b;
	w.external = true;
	w.append = append;
	w.append_arg = arg;
	return write_batch(db, &w, NULL);
}

void
tides_close_writes(tides_db *db)
{
	tides_shared *sh = db->sh;

	tides_lock_write(sh);
	sh->writes_closed = true;
	tides_spin_unlock(&sh->write_lock);
}

/*
 * The barrier seals the active memtable under the write lock, so every
 * reservation made before it -- and with it every batch whose append()
 * has returned -- lies in a memtable whose id is below the ticket.
 * Memtables are flushed oldest first; the ticket has passed when none of
 * them is still active or sealed.
 */
tides_status
tides_flush_barrier(tides_db *db, uint64_t *ticket)
{
	bool		sealed;
	uint64_t	id;
	tides_status s = seal_active(db, &sealed, &id);

	if (s == TIDES_BUSY)
		return tides_fail(&db->err, s, "all memtables are full; waiting for flush");
	if (s != TIDES_OK)
		return tides_fail(&db->err, s, "out of shared memory installing a memtable");
	/* an empty active memtable holds nothing: everything lies below it */
	*ticket = sealed ? id + 1 : id;
	ask_flush_below(db->sh, *ticket);
	return TIDES_OK;
}

bool
tides_flush_barrier_passed(tides_db *db, uint64_t ticket)
{
	tides_shared *sh = db->sh;

	for (uint32_t i = 0; i < sh->nmemtables; i++)
	{
		tides_memtable *m = &sh->memtables[i];
		int			state = atomic_load(&m->state);

		if ((state == TIDES_MEM_ACTIVE || state == TIDES_MEM_SEALED) && m->id < ticket)
		{
			if (state == TIDES_MEM_SEALED)
				tides_db_wakeup(db, TIDES_WORK_FLUSH);
			return false;
		}
	}
	return true;
}

tides_status
tides_sync(tides_db *db, uint64_t lsn, bool force)
{
	tides_shared *sh = db->sh;
	tides_error err;
	tides_status s;

	if (sh->ropts.log_mode == TIDES_LOG_EXTERNAL)
		return TIDES_OK;		/* no log of ours: the application's log holds the writes */
	if (lsn == 0)
		lsn = atomic_load(&sh->published_lsn);
	if (db->opts.sync_mode != TIDES_SYNC_FULL && !force)
		return TIDES_OK;		/* the bytes reached the kernel in tides_write */
	if (atomic_load(&sh->sync_poisoned_lsn) > sh->replay_lsn)
	{
		/*
		 * Only a flush past the poisoned position lifts this.  The seal made
		 * when the fsync failed may have been refused (no free memtable), or
		 * the poisoned records may have reached the memtable after it: while
		 * no sealed memtable waits for the flush worker, seal again.
		 */
		if (tides_oldest_sealed(sh) == NULL)
		{
			(void) tides_seal_memtable(db);
			tides_db_wakeup(db, TIDES_WORK_FLUSH);
		}
		return tides_fail(&db->err, TIDES_IO_ERROR,
						  "an earlier log fsync failed; commits wait until the memtable is flushed");
	}
	tides_error_clear(&err);
	tides_count(&sh->counters, log_sync_requests, 1);
	s = tides_log_sync(&db->log, lsn, &err);
	if (s != TIDES_OK)
	{
		/* see the file comment: make the unsynced records durable by a flush */
		uint64_t	written = atomic_load(&sh->log.written_lsn);
		uint64_t	cur = atomic_load(&sh->sync_poisoned_lsn);

		while (cur < written && !atomic_compare_exchange_weak(&sh->sync_poisoned_lsn, &cur, written))
			;
		tides_seal_memtable(db);
		tides_db_wakeup(db, TIDES_WORK_FLUSH);
		return tides_db_fail(db, &err);
	}
	return TIDES_OK;
}

uint64_t
tides_durable_lsn(tides_db *db)
{
	return atomic_load(&db->sh->log.durable_lsn);
}

tides_status
tides_sync_work(tides_db *db, bool *did)
{
	tides_shared *sh = db->sh;
	uint64_t	now = tides_now_us();
	uint64_t	last = atomic_load(&sh->last_interval_sync_us);
	tides_status s = TIDES_OK;

	*did = false;
	if (db->opts.sync_mode != TIDES_SYNC_INTERVAL || sh->ropts.log_mode == TIDES_LOG_EXTERNAL)
		return TIDES_OK;
	if (now - last < (uint64_t) db->opts.sync_interval_ms * 1000)
		return TIDES_OK;
	if (!atomic_compare_exchange_strong(&sh->last_interval_sync_us, &last, now))
		return TIDES_OK;
	if (atomic_load(&sh->log.durable_lsn) < atomic_load(&sh->log.written_lsn))
	{
		s = tides_sync(db, 0, true);
		*did = (s == TIDES_OK);
	}
	return s;
}
