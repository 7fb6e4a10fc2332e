/*
 * compaction.h -- what compaction.c shares with compaction_full.c,
 * compaction_l0.c and compaction_small.c: the description of one
 * compaction, and the picking, reservation and running steps both the
 * background picker and a full (manual) compaction use.
 * Everything here except tides_compaction_execute runs with version_mutex
 * held.
 */
#ifndef TIDES_DB_COMPACTION_H
#define TIDES_DB_COMPACTION_H

#include <stdbool.h>
#include <stdint.h>

#include "db/db_impl.h"

#define LAST_LEVEL (TIDES_MAX_LEVELS - 1)

typedef struct tides_compaction
{
	int			level;			/* input level */
	int			output_level;	/* == level: a file rewritten in place */
	tides_version *v;			/* referenced once reserved */
	tides_file_meta **in[2];	/* inputs at level and output_level */
	uint32_t	nin[2];
	/*
	 * Output-level files in the inputs' range that hold none of level's
	 * keys: reserved with the inputs, but left as they are (execute moves
	 * them here from in[1] before running; the outputs are cut around them).
	 */
	tides_file_meta **kept;
	uint32_t	nkept;
	double		score;
	int			slot;			/* its claim in sh->running, -1: none */
	bool		rewrite;		/* never a trivial move (marked input, or in place) */
	uint64_t	dropped_seen;	/* dropped ids below this were applied (run) */
	uint64_t	gc_horizon;		/* for the outputs (tides_file_meta.gc_horizon; run) */
	uint64_t	entries_read;	/* input entries merged (run) */
} tides_compaction;

/*
 * May a new file of user keys [lo, hi] go into `level` (>= 1)?  None of
 * the level's files overlaps them and no running compaction writes there
 * over them.  The caller vouches for the levels above and below: none
 * holds a key of [lo, hi] that the file's versions must stay below or
 * above (ingest.c, flush.c).
 */
bool		tides_compaction_level_free(const tides_shared *sh, const tides_version *v, int level,
										const uint8_t *lo, size_t lolen, const uint8_t *hi,
										size_t hilen);

/* targets per level of version v; returns the base level */
int			tides_compaction_targets(const tides_db *db, const tides_version *v,
									 uint64_t target[TIDES_MAX_LEVELS]);

/*
 * What level 0 asks for in v (compaction_l0.c): nothing, to go down as a
 * whole, or (option level0_tiered) the merge of files [first, first +
 * nfiles) of its newest-first list into one run in place.  score >= 1
 * unless kind is NONE.
 */
typedef struct tides_l0_plan
{
	enum
	{
		TIDES_L0_NONE, TIDES_L0_DOWN, TIDES_L0_MERGE
	}			kind;
	uint32_t	first;
	uint32_t	nfiles;
	double		score;
} tides_l0_plan;

tides_l0_plan tides_compaction_l0_plan(const tides_db *db, const tides_version *v, int base);

/* level 0's compaction trigger for v (adapted to the base level's size) */
uint32_t	tides_compaction_l0_trigger(const tides_db *db, const tides_version *v, int base);

/* how far that raised it above the configured trigger: the back-pressure thresholds move as far */
uint32_t	tides_compaction_l0_shift(const tides_db *db, const tides_version *v);

/*
 * A run of small files of one tree, consecutive in a level at the bottom of
 * their range, to merge in place (compaction_small.c): c set up with its
 * inputs.  1: found; 0: none; -1: out of memory.
 */
int			tides_compaction_pick_small(tides_db *db, tides_version *v, tides_compaction *c);

/* is one of the files an input of a running compaction? */
bool		tides_compaction_busy(tides_file_meta **files, uint32_t n);

/* an empty candidate for level (nothing allocated) */
void		tides_compaction_reset(tides_compaction *c, tides_version *v, int level);

/*
 * c->in[0], level and output_level set: add the overlapping output-level
 * files.  False (in[1] freed) if it cannot run now: a busy input, a
 * conflicting claim, out of memory.
 */
bool		tides_compaction_complete(tides_db *db, tides_compaction *c);

/*
 * c, reset for level 0 of its version, takes all of level 0 (its files
 * overlap: it goes as a whole) into the level its keys go to; `base` is the
 * base level.  c, reset for level l, takes file f alone: rewritten in place
 * (the bottom of its range) or pushed to level l + 1 with what overlaps it
 * there.  Both: 1 if it can run now; 0 if not (nothing left allocated);
 * -1 out of memory.
 */
int			tides_compaction_take_l0(tides_db *db, tides_compaction *c, int base);
int			tides_compaction_take_file(tides_db *db, tides_compaction *c, tides_file_meta *f,
									   bool in_place);

/* would c collide with a running compaction's output claim? */
bool		tides_compaction_conflicts(const tides_shared *sh, const tides_compaction *c);

/* where level 0's files may go (the base, or a level above it holding their keys) */
int			tides_compaction_l0_output(const tides_version *v, int base, tides_file_meta **files,
									   uint32_t n);

/*
 * Does a level below `level` hold keys of f's range, or is a running
 * compaction writing below it there?  If not, f is at the bottom of its
 * range and may be rewritten in place.
 */
bool		tides_compaction_deeper_data(const tides_shared *sh, const tides_version *v, int level,
										 const tides_file_meta *f);

/*
 * Choose a compaction (compaction_pick.c).  With `reserve`, mark its
 * inputs, claim its output range and advance the round-robin cursor; without
 * (a question whether there is work), leave everything as it was and hold
 * nothing.  False: nothing to do now.
 */
bool		tides_compaction_pick(tides_db *db, tides_compaction *c, bool reserve);

/* a free slot in sh->running, or -1 */
int			tides_compaction_free_slot(const tides_shared *sh);

/* mark c's inputs, claim its output range in `slot`, reference its version */
void		tides_compaction_reserve(tides_db *db, tides_compaction *c, int slot);

/*
 * Without version_mutex: run a reserved compaction (or trivial move),
 * install it, release its reservation and free c.  *did: installed.
 */
tides_status tides_compaction_execute(tides_db *db, tides_compaction *c, bool *did);

#endif
