/*
 * version.h -- the set of SSTables that make up the store at one moment.
 *
 * A version lists, per level, the files it contains: level 0 newest first
 * (files may overlap), levels 1.. sorted by smallest key and pairwise
 * disjoint by user key.  Versions and file descriptors live in the shared
 * metadata heap and are reference counted:
 *
 *   - a version holds one reference on each of its files;
 *   - the current version and every superversion hold one on the version;
 *   - when a file's count drops to zero no version lists it any more, so it
 *     is obsolete: its number goes to the obsolete list and the maintenance
 *     work deletes it (tides_maint_work).
 *
 * Versions are immutable once built; a new one is made by applying an edit
 * (db/version_edit.h) to the current one, under the engine's version mutex.
 */
#ifndef TIDES_DB_VERSION_H
#define TIDES_DB_VERSION_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "tides_engine.h"
#include "util/shm_heap.h"

typedef struct tides_file_meta
{
	_Atomic int32_t refs;
	_Atomic int32_t being_compacted;

	/*
	 * Dropped prefixes (db/maint.c, "dropped prefixes and marked files").
	 * Both fields live in the descriptor, which a trivial move and every
	 * later version share, so they survive new versions; both are written
	 * and read under version_mutex only.  Neither is in the manifest:
	 * recovery starts every file at 0 and recomputes them from the dropped
	 * list.
	 *
	 * marked: the file may hold keys a listed dropped prefix hides, and no
	 * cheaper way (deleting the whole file) applies, or tides_mark_retired
	 * found every key of it retired: compaction picks it first and
	 * rewrites it.  It stays set until the file leaves the store.
	 * dropped_seen: no prefix with id below this hides any key of the file
	 * (the job that wrote it discarded them, or a check found none), unless
	 * marked.
	 */
	int32_t		marked;
	uint64_t	dropped_seen;

	/*
	 * Deletion-heavy files (db/compaction.c, want()): 0 if unknown (written
	 * by a flush or a compaction above the bottom of its range, or loaded
	 * at recovery); else the file was written at the bottom of its range
	 * keeping only versions and deletions snapshots up to this seq's
	 * successors needed (UINT64_MAX: no snapshot, nothing was kept for
	 * one).  Memory only, like marked.
	 */
	uint64_t	gc_horizon;

	/*
	 * When the flush or compaction that wrote the file installed it (wall
	 * clock, microseconds; 0: found at recovery) and whether it was a
	 * compaction; a trivial move keeps both.  Memory only, for
	 * tides_get_range_info.
	 */
	uint64_t	written_us;
	bool		by_compaction;

	/*
	 * One past the largest suffix among the file's keys (tides_key_suffix),
	 * or 0: unknown (a key shorter than the suffix, no suffix configured, a
	 * file from a store of format 1).  In the manifest; set when the
	 * descriptor is made, read by tides_mark_retired.
	 */
	uint64_t	suffix_bound;
	uint64_t	number;
	uint64_t	size;
	uint64_t	min_seq;
	uint64_t	max_seq;
	uint64_t	entries;
	uint64_t	deletions;
	uint32_t	smallest_len;	/* internal keys */
	uint32_t	largest_len;
	uint8_t		keys[];			/* smallest, then largest */
} tides_file_meta;

/*
 * A key's suffix: its last n bytes (filter_stem_suffix, 1 to 7 of them) as
 * a big-endian number -- a row id or a TID at the end of a key.  false if
 * there is none.
 */
#define TIDES_MAX_TRACKED_SUFFIX 7

static inline bool
tides_key_suffix(const uint8_t *ukey, size_t ulen, uint32_t n, uint64_t *v)
{
	uint64_t	x = 0;

	if (n == 0 || n > TIDES_MAX_TRACKED_SUFFIX || ulen < n)
		return false;
	for (size_t i = ulen - n; i < ulen; i++)
		x = (x << 8) | ukey[i];
	*v = x;
	return true;
}

static inline const uint8_t *
tides_file_smallest(const tides_file_meta *f)
{
	return f->keys;
}

static inline const uint8_t *
tides_file_largest(const tides_file_meta *f)
{
	return f->keys + f->smallest_len;
}

typedef struct tides_version
{
	_Atomic int32_t refs;
	uint64_t	number;
	uint32_t	nfiles[TIDES_MAX_LEVELS];
	tides_file_meta **files[TIDES_MAX_LEVELS];
} tides_version;

/* callback for a file whose last reference went away */
typedef void (*tides_obsolete_fn) (void *arg, uint64_t file_number);

tides_file_meta *tides_file_meta_new(tides_shm_heap *heap, uint64_t number, uint64_t size,
									 const uint8_t *smallest, size_t slen,
									 const uint8_t *largest, size_t llen);
void		tides_file_ref(tides_file_meta *f);
void		tides_file_unref(tides_shm_heap *heap, tides_file_meta *f,
							 tides_obsolete_fn obsolete, void *arg);

/*
 * Build a version from per-level arrays of files (each array in any order;
 * they are sorted here).  Takes a reference on every file.  NULL when the
 * heap is exhausted.
 */
tides_version *tides_version_new(tides_shm_heap *heap, uint64_t number,
								 tides_file_meta **const files[TIDES_MAX_LEVELS],
								 const uint32_t nfiles[TIDES_MAX_LEVELS]);
void		tides_version_ref(tides_version *v);
void		tides_version_unref(tides_shm_heap *heap, tides_version *v,
								tides_obsolete_fn obsolete, void *arg);

uint64_t	tides_version_level_bytes(const tides_version *v, int level);

/* the deepest level holding a file (0 when only level 0 does, or none) */
static inline int
tides_version_last_level(const tides_version *v)
{
	int			last = TIDES_MAX_LEVELS - 1;

	while (last > 0 && v->nfiles[last] == 0)
		last--;
	return last;
}

/* index of the first file in a sorted level whose largest key >= ikey */
uint32_t	tides_version_find_file(const tides_version *v, int level,
									const uint8_t *ikey, size_t iklen);

/* does any file of the level overlap user keys [lo, hi] (NULL: unbounded)? */
bool		tides_version_overlaps(const tides_version *v, int level,
								   const uint8_t *lo, size_t lolen,
								   const uint8_t *hi, size_t hilen);

/*
 * Files of a level overlapping user-key range [lo, hi]; for level 0 the
 * range grows to cover every overlapping file transitively.  Returns a
 * malloc'd array (caller frees) and its length.
 */
tides_file_meta **tides_version_overlapping(const tides_version *v, int level,
											const uint8_t *lo, size_t lolen,
											const uint8_t *hi, size_t hilen,
											uint32_t *n);

/* check the level invariants; calls report (if not NULL) for each violation */
int			tides_version_check(const tides_version *v,
								void (*report) (void *arg, const char *problem), void *arg);

/*
 * For assertions: the level invariants hold (tides_version_check), level 0
 * is newest first, and no file number appears twice.  O(n log n).
 */
bool		tides_version_sound(const tides_version *v);

#endif
