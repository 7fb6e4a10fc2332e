/*
 * version_edit.h -- a change to the engine's persistent state, as written to
 * the manifest.
 *
 * The manifest is a sequence of edits (log/log_format.h framing, type
 * TIDES_REC_EDIT); replaying them in order rebuilds the state.  A new
 * manifest starts with one edit that states everything (every file and every
 * list), so old manifests can be deleted.
 *
 * Payload: a sequence of (varint tag, fields) items:
 *
 *   1 replay_lsn        varint: log position recovery replays from
 *   2 next_file         varint: next file number to hand out
 *   3 last_seq          varint: highest sequence number used so far
 *   4 segment_size      varint: log segment size the log was written with
 *   5 add_file          u8 level, varints number size min_seq max_seq
 *                       entries deletions, slices smallest largest
 *   6 delete_file       u8 level, varint number
 *   7 skips             varint n, n x (varint from, varint to): log ranges
 *                       recovery jumps over (the whole list)
 *   8 dropped           varint n, n x (varint id, varint seq, slice prefix)
 *   9 pending_tags      varint n, n x varint tag, never 0 (the whole list)
 *  10 format            varint: the store format (TIDES_FORMAT_VERSION) the
 *                       manifest was written in; first in the first record
 *                       of every manifest; absent in stores older than the
 *                       field (format 1).  A larger value than the reader's
 *                       is TIDES_INVALID, checked before anything else.
 *  11 file_suffix       varint number, varint suffix_bound: of the file the
 *                       same edit adds (after its add_file); absent when the
 *                       bound is unknown (format 2)
 *
 * Lists (7, 8, 9) replace the previous list when present.
 */
#ifndef TIDES_DB_VERSION_EDIT_H
#define TIDES_DB_VERSION_EDIT_H

#include <stdbool.h>
#include <stdint.h>

#include "log/log.h"			/* tides_log_skip: the log owns what a skip is */
#include "tides_engine.h"
#include "util/buf.h"
#include "util/status.h"

#define TIDES_MAX_PREFIX_LEN 64

typedef struct tides_edit_file
{
	int			level;
	uint64_t	number;
	uint64_t	size;
	uint64_t	min_seq;
	uint64_t	max_seq;
	uint64_t	entries;
	uint64_t	deletions;
	uint8_t    *smallest;		/* malloc'd internal keys */
	size_t		smallest_len;
	uint8_t    *largest;
	size_t		largest_len;
	uint64_t	suffix_bound;	/* tides_file_meta.suffix_bound (0: unknown) */
} tides_edit_file;

typedef struct tides_dropped_prefix
{
	uint64_t	id;
	uint64_t	seq;			/* keys with seq <= this are gone */
	uint32_t	len;
	uint8_t		bytes[TIDES_MAX_PREFIX_LEN];
} tides_dropped_prefix;

typedef struct tides_edit
{
	bool		has_format,
				has_replay_lsn,
				has_next_file,
				has_last_seq,
				has_segment_size,
				has_skips,
				has_dropped,
				has_pending;
	uint64_t	format;
	uint64_t	replay_lsn;
	uint64_t	next_file;
	uint64_t	last_seq;
	uint64_t	segment_size;

	tides_edit_file *added;
	uint32_t	nadded;
	struct
	{
		int			level;
		uint64_t	number;
	}		   *deleted;
	uint32_t	ndeleted;

	tides_log_skip *skips;
	uint32_t	nskips;
	tides_dropped_prefix *dropped;
	uint32_t	ndropped;
	uint64_t   *pending;
	uint32_t	npending;

	/*
	 * In memory only (never encoded; 0 after decoding): dropped_seen of the
	 * files this edit creates -- the dropped-prefix ids the flush or
	 * compaction that wrote them had applied (tides_file_meta).
	 */
	uint64_t	dropped_seen;
	uint64_t	gc_horizon;		/* likewise: their gc_horizon (tides_file_meta) */
	uint64_t	written_us;		/* likewise: their written_us and by_compaction */
	bool		by_compaction;
} tides_edit;

void		tides_edit_init(tides_edit *e);
void		tides_edit_free(tides_edit *e);

tides_status tides_edit_add_file(tides_edit *e, const tides_edit_file *f);	/* copies keys */
tides_status tides_edit_delete_file(tides_edit *e, int level, uint64_t number);
tides_status tides_edit_set_skips(tides_edit *e, const tides_log_skip *s, uint32_t n);
tides_status tides_edit_set_dropped(tides_edit *e, const tides_dropped_prefix *d, uint32_t n);
tides_status tides_edit_set_pending(tides_edit *e, const uint64_t *tags, uint32_t n);

void		tides_edit_encode(const tides_edit *e, tides_buf *out);
tides_status tides_edit_decode(tides_edit *e, const uint8_t *p, size_t len, tides_error *err);

#endif
