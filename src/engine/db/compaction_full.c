/*
 * compaction_full.c -- a full (manual) compaction: what a user expects of
 * "compact now" (RocksDB's CompactRange over the whole key space).
 *
 * Background compaction works only where a level is over its target or a
 * file is marked, so obsolete data -- versions shadowed by newer ones,
 * deletions and what they delete -- can sit in a store indefinitely: in
 * level 0 below its trigger, in a level under its target, or in bottom
 * files nothing is merged into.  A full compaction pushes everything down,
 * level by level, to the last level, where deletions meet the versions
 * they shadow and both go (as far as no snapshot needs them), and then
 * rewrites the last-level files that still hold deletions or keys of
 * dropped prefixes -- every one of them when a filter is installed.
 *
 * It is a sequence of ordinary compactions, chosen here and run by the
 * same code as background ones (compaction.c), so they reserve inputs and
 * output ranges the same way and run beside background compactions.  The
 * caller drives it one compaction per call (the engine owns no threads and
 * never waits without bound): tides_full_compaction_step returns
 * done = false, did = false when what it needs next is being compacted by
 * someone else; the caller waits and calls again.
 *
 * What it covers is fixed when it begins: files holding entries up to the
 * published seq then (min_seq <= seq), and last-level files that existed
 * when it reached the last level (number below first_new_file).  Data
 * written later may be compacted along, but is not waited for, so the
 * passes end even while writers keep writing.  Levels are passed once each,
 * top down: a level is done when no covered file is left in it.  Background
 * compactions can move covered data only downwards, never into a level
 * already passed (level 0 excepted: a memtable sealed before the full
 * compaction began but flushed after it holds older entries; it is not
 * covered -- flush first, as tides_compact() in SQL callers do).
 */
#include <stdlib.h>
#include <string.h>

#include "db/compaction.h"
#include "db/db_impl.h"

void
tides_full_compaction_begin(tides_db *db, tides_full_compaction *fc)
{
	memset(fc, 0, sizeof(*fc));
	fc->seq = atomic_load(&db->sh->published_seq);
	fc->level = 0;
}

/*
 * May a rewrite in place of last-level file f free something?  With a
 * filter (tides_set_filter) installed, any file may hold keys it now drops
 * (RocksDB's manual compaction rewrites the bottommost level then too).
 */
static bool
bottom_garbage(const tides_db *db, const tides_file_meta *f, uint64_t horizon)
{
	/* deletions every snapshot sees go at the bottom, with what they shadow */
	return (f->deletions > 0 && f->min_seq <= horizon) || f->marked || db->filter != NULL;
}

/*
 * version_mutex held: the next compaction of the full compaction, reserved
 * in c.  1: found; 0: none now (busy, or no free slot); 2: finished;
 * -1: out of memory.
 */
static int
pick_full(tides_db *db, tides_full_compaction *fc, tides_compaction *c)
{
	tides_shared *sh = db->sh;
	tides_version *v = sh->current;
	uint64_t	target[TIDES_MAX_LEVELS];
	int			base = tides_compaction_targets(db, v, target);
	int			slot = tides_compaction_free_slot(sh);
	int			r;

	TIDES_ASSERT(tides_mutex_held(&sh->version_mutex));
	if (slot < 0)
		return 0;
	while (fc->level < TIDES_MAX_LEVELS)
	{
		int			l = fc->level;
		bool		covered = false;

		if (l == 0)
		{
			for (uint32_t i = 0; i < v->nfiles[0]; i++)
				covered |= v->files[0][i]->min_seq <= fc->seq;
			if (covered)
			{
				/* all of level 0 together, as always */
				if (tides_compaction_busy(v->files[0], v->nfiles[0]))
					return 0;
				tides_compaction_reset(c, v, 0);
				if ((r = tides_compaction_take_l0(db, c, base)) != 1)
				{
					tides_compaction_reset(c, NULL, 0);
					return r;
				}
				tides_compaction_reserve(db, c, slot);
				return 1;
			}
		}
		else
		{
			uint64_t	horizon = l == LAST_LEVEL ? tides_oldest_snapshot(db) : 0;

			if (l == LAST_LEVEL && fc->first_new_file == 0)
				fc->first_new_file = atomic_load(&sh->next_file_number);
			for (uint32_t i = 0; i < v->nfiles[l]; i++)
			{
				tides_file_meta *f = v->files[l][i];

				if (l < LAST_LEVEL ? f->min_seq > fc->seq
					: f->number >= fc->first_new_file || !bottom_garbage(db, f, horizon))
					continue;
				covered = true;
				if (atomic_load(&f->being_compacted))
					continue;
				tides_compaction_reset(c, v, l);
				/* the last level in place (nothing is below), others one level down */
				if ((r = tides_compaction_take_file(db, c, f, l == LAST_LEVEL)) < 0)
					return -1;
				if (r == 1)
				{
					tides_compaction_reserve(db, c, slot);
					return 1;
				}
				tides_compaction_reset(c, NULL, 0);
			}
			if (covered)
				return 0;		/* all of them busy: wait for the others */
		}
		fc->level++;
	}
	return 2;
}

tides_status
tides_full_compaction_step(tides_db *db, tides_full_compaction *fc, bool *done, bool *did)
{
	tides_shared *sh = db->sh;
	tides_compaction c;
	int			r;

	*done = false;
	*did = false;
	if (atomic_load(&sh->state) != TIDES_STATE_OPEN)
		return tides_fail(&db->err, TIDES_UNAVAILABLE, "engine is not open");
	if (fc->level >= TIDES_MAX_LEVELS)
	{
		*done = true;
		return TIDES_OK;
	}
	tides_compaction_reset(&c, NULL, 0);
	tides_lock_version(sh);
	r = pick_full(db, fc, &c);
	tides_mutex_unlock(&sh->version_mutex);
	if (r < 0)
		return tides_fail(&db->err, TIDES_NO_MEMORY, "out of memory choosing a compaction");
	if (r == 2)
	{
		*done = true;
		return TIDES_OK;
	}
	if (r == 0)
		return TIDES_OK;
	return tides_compaction_execute(db, &c, did);
}
