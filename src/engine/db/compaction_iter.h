/*
 * compaction_iter.h -- what survives a flush or a compaction.
 *
 * Input is a stream of internal keys in order (all versions of a user key
 * together, newest first).  For each user key the versions are grouped into
 * snapshot stripes: the versions a given live snapshot could read.  Only the
 * newest version of each stripe survives.  A deletion that is the newest
 * version visible to every snapshot disappears entirely when no deeper level
 * can hold the key (bottommost); so do all versions under a dropped prefix.
 * The caller's filter sees the newest version of a key when every snapshot
 * reads that version, and may keep, drop (as a deletion) or rewrite it.
 */
#ifndef TIDES_DB_COMPACTION_ITER_H
#define TIDES_DB_COMPACTION_ITER_H

#include <stdbool.h>
#include <stdint.h>

#include "db/version_edit.h"
#include "tides_engine.h"
#include "util/iterator.h"

typedef struct tides_compaction_rules
{
	const uint64_t *snapshots;	/* sorted ascending, may be empty */
	uint32_t	nsnapshots;
	uint64_t	filter_horizon; /* filter only versions with seq <= this */
	const tides_dropped_prefix *dropped;
	uint32_t	ndropped;
	tides_filter_fn filter;
	void	   *filter_arg;
	/* may a deeper level hold this user key?  NULL: never (bottommost) */
	bool		(*deeper_may_hold) (void *arg, const uint8_t *ukey, size_t n);
	void	   *deeper_arg;
	/* called every TIDES_PROGRESS_EVERY input entries with the count so far; may be NULL */
	void		(*progress) (void *arg, uint64_t input_entries);
	void	   *progress_arg;
} tides_compaction_rules;

#define TIDES_PROGRESS_EVERY 1024

/* receives each surviving entry; a non-OK status stops the walk */
typedef tides_status (*tides_emit_fn) (void *arg, const uint8_t *ikey, size_t iklen,
									   const uint8_t *val, size_t vlen);

typedef struct tides_compaction_counts
{
	uint64_t	input_entries;
	uint64_t	dropped_shadowed;
	uint64_t	dropped_deletions;
	uint64_t	dropped_prefix;
	uint64_t	filtered_dropped;
	uint64_t	filtered_changed;
} tides_compaction_counts;

/*
 * Run the input from its current position to its end, or until emit returns
 * a non-OK status.  (emit is not told about user-key boundaries: a table
 * writer that cuts outputs tracks the last user key itself, see
 * tides_table_writer_add.)
 */
tides_status tides_compaction_run(tides_iiter *input, const tides_compaction_rules *rules,
								  tides_emit_fn emit, void *arg,
								  tides_compaction_counts *counts, tides_error *err);

#endif
