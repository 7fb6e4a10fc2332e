/*
 * compaction_pick.c -- choosing the next compaction (tides_compaction_pick),
 * with version_mutex held.
 *
 * A level's score is its size over its target (level 0: file count over
 * the trigger; a level above the base that still holds files -- the base
 * moved down when the last level shrank -- scores 1e9, so it is pushed
 * down first); the highest score >= 1 is compacted.
 *
 * Marked files.  A file that may hold keys hidden by a dropped prefix is
 * marked (db/maint.c).  The pick takes marked files before score-based work
 * -- unless level 0 has reached the slowdown trigger: writers waiting on it
 * come first -- under the same reservation rules.  A marked file goes to
 * the next level as usual (level 0: all of it, as always), but it is never
 * a trivial move: the point is to rewrite it without the hidden keys.  A
 * marked file at the bottom of its key range (the last level, or a level at
 * or below the base with nothing deeper in its range, and no compaction
 * writing deeper there) is rewritten in place: output level = its own
 * level, dropping hidden keys and the tombstones nothing below needs.
 * Without that, the last level is never an input on its own, and a dropped
 * table's bytes in a file shared with live keys could stay forever.
 *
 * Deletion-heavy files.  When neither a mark nor a score asks for work, a
 * file (below level 0) with at least a third of its entries deletions is
 * pushed down to meet what its deletions shadow, or, at the bottom of its
 * range, rewritten in place when that can drop something (want()).
 */
#include <stdlib.h>
#include <string.h>

#include "db/compaction.h"
#include "db/db_impl.h"

/* what a file asks of compaction */
enum
{
	WANT_NONE,
	WANT_DOWN,					/* to the next level, with what overlaps it there */
	WANT_IN_PLACE				/* rewritten where it is: nothing below holds its keys */
};

/* which files pick_marked looks for */
enum
{
	FOR_DROPPED,				/* marked: may hold keys of a dropped prefix */
	FOR_DELETIONS				/* deletion-heavy, where a rewrite can drop them */
};

static bool
at_bottom(const tides_shared *sh, const tides_version *v, int base, int l, const tides_file_meta *f)
{
	return l == LAST_LEVEL || (l >= base && !tides_compaction_deeper_data(sh, v, l, f));
}

/*
 * A deletion-heavy file: at least a third of its entries are deletions
 * (RocksDB's deletion-triggered compaction, over the whole file).  VACUUM
 * writes one per dead row version; they free nothing until a compaction
 * brings them together with the versions they shadow, or finds nothing
 * below them and drops them (with those versions) at the bottom.  A third,
 * not a half: a file holding deletions together with the versions they
 * delete (a flush keeps both when a snapshot needs the versions) has just
 * under half, and is the one whose rewrite frees the most.
 */
#define DELETION_HEAVY(f) ((f)->deletions > 0 && (f)->deletions * 3 >= (f)->entries)

static int
want(tides_db *db, const tides_version *v, int base, int kind, int l, const tides_file_meta *f,
	 uint64_t *horizon)
{
	const tides_shared *sh = db->sh;

	if (kind == FOR_DROPPED)
	{
		if (!f->marked)
			return WANT_NONE;
		return at_bottom(sh, v, base, l, f) ? WANT_IN_PLACE : WANT_DOWN;
	}
	/* level 0 is compacted as a whole by its file count anyway */
	if (l == 0 || !DELETION_HEAVY(f))
		return WANT_NONE;
	if (!at_bottom(sh, v, base, l, f))
		return WANT_DOWN;

	/*
	 * In place, only deletions and shadowed versions that every snapshot
	 * sees (seq <= the oldest snapshot, or the published seq without one)
	 * go.  A file no bottom compaction wrote (gc_horizon 0: flushed, moved,
	 * or loaded at recovery) is worth it if some entry is that old; one a
	 * bottom compaction wrote kept only what its snapshots needed, and is
	 * worth rewriting again only once every entry is that old -- otherwise
	 * a snapshot held open would have compaction rewrite the same file
	 * forever.
	 */
	if (*horizon == 0)
		*horizon = tides_oldest_snapshot(db) + 1;	/* + 1: 0 means "not yet read" */
	if (f->gc_horizon == 0)
		return *horizon - 1 >= f->min_seq ? WANT_IN_PLACE : WANT_NONE;
	return f->gc_horizon < f->max_seq && *horizon - 1 >= f->max_seq ? WANT_IN_PLACE : WANT_NONE;
}

/*
 * version_mutex held: a compaction for a file marked for it (kind
 * FOR_DROPPED) or a deletion-heavy one (FOR_DELETIONS), if one can run now.
 * 1: found; 0: none; -1: out of memory.
 */
static int
pick_marked(tides_db *db, tides_version *v, int base, int kind, tides_compaction *c)
{
	uint64_t	horizon = 0;

	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		for (uint32_t i = 0; i < v->nfiles[l]; i++)
		{
			tides_file_meta *f = v->files[l][i];
			int			w,
						r;

			if (atomic_load(&f->being_compacted) ||
				(w = want(db, v, base, kind, l, f, &horizon)) == WANT_NONE)
				continue;
			tides_compaction_reset(c, v, l);
			if (l == 0)
			{
				/* level 0 goes as a whole, as always (its files overlap) */
				if (tides_compaction_busy(v->files[0], v->nfiles[0]))
					break;
				if ((r = tides_compaction_take_l0(db, c, base)) != 0)
					return r;
				break;
			}
			/* in place at the bottom of its range, else one level down */
			if ((r = tides_compaction_take_file(db, c, f, w == WANT_IN_PLACE)) != 0)
				return r;
		}
	return 0;
}

/*
 * version_mutex held: the score-based choice (levels by descending score
 * >= 1).  With `reserve`, advance the round-robin cursor of the level
 * chosen.
 */
static bool
pick_scored(tides_db *db, tides_version *v, int base, const uint64_t target[TIDES_MAX_LEVELS],
			tides_compaction *c, bool reserve)
{
	tides_shared *sh = db->sh;
	double		score[TIDES_MAX_LEVELS];
	int			order[TIDES_MAX_LEVELS];
	int			norder = 0;
	bool		found = false;
	tides_l0_plan l0 = tides_compaction_l0_plan(db, v, base);

	score[0] = l0.score;
	for (int l = 1; l < LAST_LEVEL; l++)
	{
		uint64_t	bytes = tides_version_level_bytes(v, l);

		if (l < base)
			score[l] = bytes > 0 ? 1e9 : 0;	/* above the base level: push down */
		else
			score[l] = (double) bytes / (double) target[l];
	}
	score[LAST_LEVEL] = 0;
	/* candidate levels by descending score */
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		if (score[l] >= 1.0)
		{
			int			k = norder++;

			while (k > 0 && score[order[k - 1]] < score[l])
			{
				order[k] = order[k - 1];
				k--;
			}
			order[k] = l;
		}

	for (int k = 0; k < norder && !found; k++)
	{
		int			l = order[k];

		tides_compaction_reset(c, v, l);
		c->score = score[l];
		if (l == 0 && l0.kind == TIDES_L0_MERGE)
		{
			/*
			 * Consecutive runs into one, in place.  No claim to check:
			 * level 0 may overlap, the files are unmarked, and a move down
			 * of level 0 waits while any of its files is busy.
			 */
			c->nin[0] = l0.nfiles;
			c->in[0] = malloc(l0.nfiles * sizeof(tides_file_meta *));
			if (c->in[0] == NULL)
				break;
			memcpy(c->in[0], v->files[0] + l0.first, l0.nfiles * sizeof(tides_file_meta *));
			c->output_level = 0;
			found = true;
		}
		else if (l == 0)
		{
			/* every level-0 file: they may overlap, and must stay ordered */
			if (tides_compaction_busy(v->files[0], v->nfiles[0]))
				continue;
			c->nin[0] = v->nfiles[0];
			c->in[0] = malloc((v->nfiles[0] + 1) * sizeof(tides_file_meta *));
			if (c->in[0] == NULL)
				break;
			memcpy(c->in[0], v->files[0], v->nfiles[0] * sizeof(tides_file_meta *));
			c->output_level = tides_compaction_l0_output(v, base, c->in[0], c->nin[0]);
			found = tides_compaction_complete(db, c);
		}
		else
		{
			uint32_t	n = v->nfiles[l];
			uint32_t	start = sh->compact_cursor[l] % n;

			c->output_level = l + 1;
			c->in[0] = malloc(sizeof(tides_file_meta *));
			if (c->in[0] == NULL)
				break;
			c->nin[0] = 1;
			/* round robin from the cursor; a busy file or range: try the next */
			for (uint32_t i = 0; i < n && !found; i++)
			{
				tides_file_meta *f = v->files[l][(start + i) % n];

				if (atomic_load(&f->being_compacted))
					continue;
				c->in[0][0] = f;
				found = tides_compaction_complete(db, c);
				if (found && reserve)
					sh->compact_cursor[l] = start + i + 1;
			}
		}
		if (!found)
		{
			free(c->in[0]);
			c->in[0] = NULL;
		}
	}
	return found;
}

/* version_mutex held (compaction.h) */
bool
tides_compaction_pick(tides_db *db, tides_compaction *c, bool reserve)
{
	tides_shared *sh = db->sh;
	tides_version *v = sh->current;
	uint64_t	target[TIDES_MAX_LEVELS];
	int			base = tides_compaction_targets(db, v, target);
	int			slot = -1;
	int			marked = 0;
	bool		found = false;
	bool		l0_urgent = v->nfiles[0] >= db->opts.level0_slowdown_trigger +
		atomic_load_explicit(&sh->l0_shift, memory_order_relaxed);

	TIDES_ASSERT(tides_mutex_held(&sh->version_mutex));
	tides_compaction_reset(c, NULL, 0);
	if (reserve && (slot = tides_compaction_free_slot(sh)) < 0)
		return false;			/* as many running as we can track */

	/*
	 * Files marked for a dropped prefix first, unless writers are being
	 * slowed down by level 0; then the levels by score; then runs of small
	 * files (compaction_small.c) and deletion-heavy files (after the
	 * scores, as RocksDB's marked files: they make reads cheaper or free
	 * space, but nobody waits for them).
	 */
	if (!l0_urgent)
		found = (marked = pick_marked(db, v, base, FOR_DROPPED, c)) > 0;
	if (!found && marked == 0)
		found = pick_scored(db, v, base, target, c, reserve);
	if (!found && marked == 0)
		found = (marked = tides_compaction_pick_small(db, v, c)) > 0;
	if (!found && marked == 0)
		found = (marked = pick_marked(db, v, base, FOR_DELETIONS, c)) > 0;
	if (!found && marked == 0 && l0_urgent)
		found = pick_marked(db, v, base, FOR_DROPPED, c) > 0;
	if (!found)
	{
		tides_compaction_reset(c, NULL, 0);
		return false;
	}
	if (!reserve)
	{
		free(c->in[0]);
		free(c->in[1]);
		tides_compaction_reset(c, NULL, 0);
		return true;
	}
	tides_compaction_reserve(db, c, slot);
	return true;
}
