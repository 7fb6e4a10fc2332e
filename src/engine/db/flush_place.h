/*
 * flush_place.h -- the keys a flush may place below level 0.
 *
 * A tree filled in key order (a table's rows under an ascending id, its
 * primary key) adds to each memtable keys above every key that tree has in
 * the store's files.  No file holds a key of their range, so they need no
 * merging with anything: written into files of their own, they may go into
 * the deepest level where no file overlaps them, as ingested files do
 * (db/ingest.c) -- usually the last level, where compaction never rewrites
 * them.  Level 0 takes the rest of the memtable, as before.  A PK-order load
 * then costs no compaction at all, and an insert-at-the-end, delete-at-the-
 * start table leaves only its deletions and its secondary indexes to merge.
 *
 * A run is the keys of the memtable that share their first range_prefix_len
 * bytes (a tree; the feature is off when that is 0).  The plan, made before
 * the flush writes anything, holds for each run with at least
 * tides_place_min() bytes above it the largest key its prefix has in the
 * files of the version current then ("above"; none if it has none).  The
 * flush sends a user key to the placed output when its run is planned and
 * the key sorts after "above": a suffix of the run, so each placed file holds
 * keys of one run only (flush.c cuts there), and all versions of a user key
 * go the same way.  A run is planned only if some level could take its keys
 * when planned (not while level 0 moving down claims the base level), so
 * that placed files rarely end up in level 0 beside the flush's own.
 *
 * Why no file can hold such a key when the flush installs them: the files
 * of the version the plan read gain no keys before the flush's edit -- flushes
 * run one at a time (flush_mutex), compaction only rewrites keys its inputs
 * hold, and an ingestion overlapping a memtable's keys is refused until that
 * memtable is flushed (db/ingest.c).  Newer memtables hold newer versions;
 * wherever the placed file goes, they stay above it.  The level is chosen
 * under version_mutex at the install (tides_compaction_level_free): one of
 * the levels from the base level down, whose files do not overlap the
 * file's range and where no running compaction writes over it; level 0 if
 * there is none (keys disjoint from every other file's, so any place reads
 * right).  Never a level above the base level: level 0's own move down
 * would then stop there.
 */
#ifndef TIDES_DB_FLUSH_PLACE_H
#define TIDES_DB_FLUSH_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db/db_impl.h"

typedef struct tides_place_run
{
	uint8_t    *prefix;			/* the run's first range_prefix_len key bytes */
	size_t		plen;
	uint8_t    *above;			/* largest user key of the prefix in the files; NULL: none */
	size_t		above_len;
	uint64_t	bytes;			/* memtable bytes of its keys above `above` */
	uint8_t    *lo;				/* the first and last of those keys */
	size_t		lo_len;
	uint8_t    *hi;
	size_t		hi_len;
} tides_place_run;

typedef struct tides_place_plan
{
	tides_place_run *runs;		/* in key order */
	uint32_t	nruns;
	size_t		prefix_len;		/* range_prefix_len when planned */
	uint32_t	next;			/* routing: the first run not yet passed */
	int32_t		last;			/* routing: the run of the last key placed, -1: none */
} tides_place_plan;

/* a run is placed when at least this many of its memtable bytes lie above its files' keys */
uint64_t	tides_place_min(const tides_db *db);

/*
 * Plan the flush of memtables ms[0..n) (sealed, every write into them
 * published; consecutive, oldest first).
 * An empty plan when range_prefix_len is 0.  A run whose files cannot be
 * read is not planned (its keys go to level 0).  TIDES_NO_MEMORY only.
 */
tides_status tides_place_plan_make(tides_db *db, tides_memtable *const *ms, uint32_t n,
								   tides_place_plan *p);

/*
 * Does user key ukey (flush order: each key once per version, ascending)
 * go to the placed output?  *new_run: it does, and the previous key placed
 * belonged to another run (the placed file so far is to be finished).
 */
bool		tides_place_route(tides_place_plan *p, const uint8_t *ukey, size_t ulen, bool *new_run);

void		tides_place_plan_free(tides_place_plan *p);

#endif
