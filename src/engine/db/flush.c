/*
 * flush.c -- writing the oldest sealed memtables to a level-0 SSTable, and
 * the keys above everything their tree has in the files to files placed
 * below level 0 (flush_place.h).
 *
 * Flushes run one at a time and oldest first, so the log position recovery
 * must replay from is always the start of the oldest unflushed memtable.
 * The manifest edit that adds the files also moves that position and records
 * which batch tags were still open at the end of the flushed memtables, all
 * in one atomic append.  A memtable's arena is reused only after the last
 * reader of an older superversion lets go of it.
 *
 * Merged flushes (memtables_per_flush > 1).  A write into a memtable of
 * 64 MB searches a skiplist of about a million nodes, nearly every one a
 * cache miss below its top levels; in a memtable of 16 MB the search is a
 * level shorter and its upper levels stay in the CPU's caches.  But four
 * small memtables flushed one by one make four small level-0 files, which
 * level 0 then merges among themselves before they go down: the bytes
 * compaction wrote per row grew by half
 * (bench/results/2026-12-06-0100-merged-flushes.md).  So a flush waits until
 * memtables_per_flush memtables are sealed and writes them, merged, as one
 * file -- the file one large memtable made.  They are consecutive (the
 * oldest sealed ones), so the replay position moves to the end of the last,
 * and the versions of a key in several of them meet in the merge as in a
 * compaction.  Waiting is for efficiency only; a flush is due at once when
 * someone asked for it (a seal asked for: checkpoints, tides_flush(),
 * ingestion, recovery), when no memtable is free (a writer would stall), or
 * when a log sync failed (only a flush makes those writes durable).
 */
#include <stdlib.h>
#include <string.h>

#include "db/compaction.h"
#include "db/compaction_iter.h"
#include "db/db_impl.h"
#include "db/flush_place.h"
#include "db/merge_iter.h"
#include "db/table_writer.h"

static bool
deeper_always(void *arg, const uint8_t *ukey, size_t n)
{
	return true;				/* level 0 is never the bottom */
}

/* where the flush's entries go: level 0, or the placed files (flush_place.h) */
typedef struct flush_out
{
	tides_table_writer *l0;
	tides_table_writer *placed;
	tides_place_plan *plan;
} flush_out;

static tides_status
flush_emit(void *arg, const uint8_t *ikey, size_t iklen, const uint8_t *val, size_t vlen)
{
	flush_out  *o = arg;
	bool		new_run;
	tides_status s;

	if (!tides_place_route(o->plan, ikey, iklen - TIDES_TRAILER, &new_run))
		return tides_table_writer_add(o->l0, ikey, iklen, val, vlen);
	/* a placed file holds the keys of one run: its range meets no other tree's */
	if (new_run && (s = tides_table_writer_finish(o->placed)) != TIDES_OK)
		return s;
	return tides_table_writer_add(o->placed, ikey, iklen, val, vlen);
}

/*
 * The levels of the placed files (version_mutex held): from the last level
 * up to the base level, the deepest where each fits; else level 0.
 */
static tides_status
place_outputs(tides_db *db, tides_edit *e, tides_table_writer *pw, uint32_t *files, uint64_t *bytes)
{
	tides_shared *sh = db->sh;
	uint64_t	target[TIDES_MAX_LEVELS];
	int			base = tides_compaction_targets(db, sh->current, target);
	tides_status s = TIDES_OK;

	*files = 0;
	*bytes = 0;
	for (uint32_t i = 0; i < pw->noutputs && s == TIDES_OK; i++)
	{
		tides_edit_file *f = &pw->outputs[i];
		const uint8_t *lo = f->smallest,
				   *hi = f->largest;
		size_t		lolen = f->smallest_len - TIDES_TRAILER,
					hilen = f->largest_len - TIDES_TRAILER;

		f->level = 0;
		for (int l = TIDES_MAX_LEVELS - 1; l >= base && l >= 1; l--)
			if (tides_compaction_level_free(sh, sh->current, l, lo, lolen, hi, hilen))
			{
				f->level = l;
				(*files)++;
				*bytes += f->size;
				break;
			}
		s = tides_edit_add_file(e, f);
	}
	return s;
}

/* skips wholly below the replay position are no longer needed */
static uint32_t
live_skips(const tides_shared *sh, uint64_t replay_lsn, tides_log_skip *out)
{
	uint32_t	n = 0;

	for (uint32_t i = 0; i < sh->nskips; i++)
		if (sh->skips[i].to > replay_lsn)
			out[n++] = sh->skips[i];
	return n;
}

/* the sealed memtable with this id, or NULL */
static tides_memtable *
sealed_with_id(tides_shared *sh, uint64_t id)
{
	for (uint32_t i = 0; i < sh->nmemtables; i++)
	{
		tides_memtable *m = &sh->memtables[i];

		if (atomic_load(&m->state) == TIDES_MEM_SEALED && m->id == id)
			return m;
	}
	return NULL;
}

/*
 * Sealed memtables, oldest first, from the oldest, into ms (at most
 * memtables_per_flush); returns how many.  Sealed ids are consecutive: every
 * memtable is sealed before the next one's writes begin, and flushes take
 * the oldest.
 */
static uint32_t
sealed_run(tides_db *db, tides_memtable **ms)
{
	tides_shared *sh = db->sh;
	uint32_t	n = 0;
	tides_memtable *m = tides_oldest_sealed(sh);

	for (; m != NULL && n < db->opts.memtables_per_flush; m = sealed_with_id(sh, m->id + 1))
		ms[n++] = m;
	return n;
}

static bool
flush_due_for(tides_db *db, tides_memtable *const *ms, uint32_t n)
{
	tides_shared *sh = db->sh;

	return n > 0 &&
		(n >= db->opts.memtables_per_flush ||
		 ms[0]->id < atomic_load(&sh->flush_asked_below) ||
		 atomic_load(&sh->sync_poisoned_lsn) > sh->replay_lsn ||
		 tides_free_memtable(sh) == NULL);
}

bool
tides_flush_due(tides_db *db)
{
	tides_memtable *ms[TIDES_MAX_MEMTABLES];

	return flush_due_for(db, ms, sealed_run(db, ms));
}

/*
 * Is every write into m done and published?  A writer leaves `writers`
 * before it publishes, and a snapshot taken in between reads at a sequence
 * number below some of m's entries.  If the flush ran then, it would not
 * know that snapshot and could drop the older version the snapshot (or a
 * reader at that sequence number that pins the next superversion) needs.
 */
static bool
memtable_settled(tides_shared *sh, tides_memtable *m)
{
	TIDES_ASSERT(atomic_load(&m->state) == TIDES_MEM_SEALED);
	return atomic_load_explicit(&m->writers, memory_order_acquire) == 0 &&
		atomic_load_explicit(&sh->published_seq, memory_order_acquire) >= m->last_seq;
}

tides_status
tides_flush_work(tides_db *db, bool *did)
{
	tides_shared *sh = db->sh;
	tides_memtable *ms[TIDES_MAX_MEMTABLES];
	tides_memtable *m;			/* the last (newest) of them */
	uint32_t	n;
	uint64_t	ext_max = 0;
	tides_table_writer w,
				pw;
	tides_place_plan plan;
	flush_out	out;
	uint32_t	placed_files = 0;
	uint64_t	placed_bytes = 0;
	tides_compaction_rules rules;
	tides_compaction_counts counts;
	tides_dropped_prefix *dropped = NULL;
	uint64_t   *snaps = NULL;
	uint64_t   *pending = NULL;
	uint32_t	npending = 0;
	tides_iiter *it;
	tides_edit	e;
	tides_status s = TIDES_OK;
	tides_log_skip skips[TIDES_MAX_SKIPS];
	bool		written = false;
	bool		dropped_oom = false;
	uint64_t	dropped_seen;

	*did = false;
	if (atomic_load(&sh->state) != TIDES_STATE_OPEN)
		return TIDES_OK;
	if (!tides_trylock_flush(sh))
		return TIDES_OK;
	/* due, and the settled prefix of the run: a write still linking into a later one waits */
	n = sealed_run(db, ms);
	if (!flush_due_for(db, ms, n))
		n = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!memtable_settled(sh, ms[i]))
			n = i;
	if (n == 0)
	{
		tides_mutex_unlock(&sh->flush_mutex);
		return TIDES_OK;
	}
	m = ms[n - 1];
	/* the write-ahead rule (tides_set_log_sync): the application's log is durable first */
	for (uint32_t i = 0; i < n; i++)
	{
		uint64_t	x = atomic_load(&ms[i]->ext_max);

		ext_max = x > ext_max ? x : ext_max;
	}
	if (ext_max > 0)
	{
		if (db->log_sync == NULL)
		{
			tides_mutex_unlock(&sh->flush_mutex);
			return tides_fail(&db->err, TIDES_INVALID,
							  "a flush of logged batches needs tides_set_log_sync");
		}
		db->log_sync(db->log_sync_arg, ext_max);
	}

	memset(&rules, 0, sizeof(rules));
	memset(&counts, 0, sizeof(counts));
	snaps = tides_snapshot_list(db, &rules.nsnapshots);
	rules.snapshots = snaps;
	rules.filter_horizon = UINT64_MAX;
	rules.filter = db->filter;
	rules.filter_arg = db->filter_arg;
	rules.deeper_may_hold = deeper_always;
	/* the output holds no key of a prefix listed now (maint.c checks later ones) */
	dropped_oom = !tides_dropped_take(sh, &dropped, &rules.ndropped, &dropped_seen);
	rules.dropped = dropped;

	memset(&plan, 0, sizeof(plan));
	tides_table_writer_init(&w, db, 0);
	tides_table_writer_init(&pw, db, db->opts.target_file_size);
	pw.bottommost = true;		/* nearly always the last level */
	out.l0 = &w;
	out.placed = &pw;
	out.plan = &plan;
	it = tides_memtables_iter_new(ms, n);
	if (it == NULL || snaps == NULL || dropped_oom || tides_place_plan_make(db, ms, n, &plan) != TIDES_OK)
		s = tides_fail(&w.err, TIDES_NO_MEMORY, "out of memory starting a flush");
	else
	{
		tides_iiter_first(it);
		s = tides_compaction_run(it, &rules, flush_emit, &out, &counts, &w.err);
		if (s != TIDES_OK && w.err.code == TIDES_OK)
			w.err = pw.err;		/* the placed output failed */
		if (s == TIDES_OK)
			tides_count(&sh->counters, filtered_dropped, counts.filtered_dropped);
	}
	tides_iiter_destroy(it);
	if (s == TIDES_OK)
		s = tides_table_writer_finish(&w);
	if (s == TIDES_OK && (s = tides_table_writer_finish(&pw)) != TIDES_OK)
		w.err = pw.err;

	if (s == TIDES_OK)
	{
		tides_lock_version(sh);
		tides_edit_init(&e);
		e.dropped_seen = dropped_seen;
		e.written_us = tides_wall_us();
		/* a flush writes one file (no size target at level 0), or none */
		TIDES_ASSERT(w.noutputs <= 1);
		/* oldest first: the replay position moves to the end of the last of them */
		TIDES_ASSERT(ms[0]->first_lsn >= sh->replay_lsn);
		for (uint32_t i = 0; i < n; i++)
		{
			TIDES_ASSERT(ms[i]->end_lsn >= ms[i]->first_lsn);
			TIDES_ASSERT(i == 0 || (ms[i]->id == ms[i - 1]->id + 1 &&
									ms[i]->first_lsn == ms[i - 1]->end_lsn));
		}
		if (w.noutputs == 1)
		{
			w.outputs[0].level = 0;
			s = tides_edit_add_file(&e, &w.outputs[0]);
		}
		if (s == TIDES_OK)
			s = place_outputs(db, &e, &pw, &placed_files, &placed_bytes);
		e.has_replay_lsn = true;
		e.replay_lsn = m->end_lsn;
		e.has_last_seq = true;
		e.last_seq = m->last_seq;
		pending = tides_tags_pending_at(db, m->end_lsn, &npending);
		if (pending == NULL)
			s = TIDES_NO_MEMORY;
		if (s == TIDES_OK)
			s = tides_edit_set_pending(&e, pending, npending);
		if (s == TIDES_OK)
			s = tides_edit_set_skips(&e, skips, live_skips(sh, m->end_lsn, skips));
		/* all or nothing: on success the n memtables have left the read path (FLUSHED) */
		if (s == TIDES_OK)
			s = tides_manifest_apply(db, &e, ms, n, &written, &w.err);
		else
			tides_fail(&w.err, s, "out of memory recording a flush");
		tides_mutex_unlock(&sh->version_mutex);
		tides_edit_free(&e);
	}
	if (s == TIDES_OK)
	{
		tides_tags_forget_settled(db, m->end_lsn);
		tides_count(&sh->counters, flushes, 1);
		tides_count(&sh->counters, flush_bytes_written, w.bytes_written + pw.bytes_written);
		if (w.noutputs == 1)
			tides_count(&sh->counters, flush_entries_written, w.outputs[0].entries);
		for (uint32_t i = 0; i < pw.noutputs; i++)
			tides_count(&sh->counters, flush_entries_written, pw.outputs[i].entries);
		tides_count(&sh->counters, flush_placed_files, placed_files);
		tides_count(&sh->counters, flush_placed_bytes, placed_bytes);
		tides_note_work(sh, &sh->flush_failure, NULL);
		*did = true;
	}
	else
	{
		/*
		 * The memtable stays sealed and a later flush writes it again.  The
		 * output may go only if no manifest record naming it can be
		 * durable; otherwise it stays (an orphan that recovery deletes if
		 * the record did not survive).
		 */
		if (!written)
		{
			tides_table_writer_discard(&w);
			tides_table_writer_discard(&pw);
		}
		if (w.err.code == TIDES_OK)
			tides_fail(&w.err, s, "flush failed");
		tides_note_work(sh, &sh->flush_failure, &w.err);
		tides_db_fail(db, &w.err);
	}
	tides_table_writer_free(&w);
	tides_table_writer_free(&pw);
	tides_place_plan_free(&plan);
	tides_mutex_unlock(&sh->flush_mutex);
	free(snaps);
	free(dropped);
	free(pending);
	if (*did)
	{
		if (atomic_load(&sh->l0_files) >= db->opts.level0_compaction_trigger)
			tides_db_wakeup(db, TIDES_WORK_COMPACT);
		tides_db_wakeup(db, TIDES_WORK_MAINT);
	}
	return s;
}
