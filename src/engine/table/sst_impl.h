/*
 * sst_impl.h -- the SSTable reader's insides, shared by sst_cursor.c (the
 * three-level cursor and the table iterator), sst_reader.c (open, close,
 * point lookups, filters) and sst_verify.c.  Nothing outside table/
 * includes it: the rest of the engine sees table/sst.h.
 */
#ifndef TIDES_TABLE_SST_IMPL_H
#define TIDES_TABLE_SST_IMPL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "table/sst.h"
#include "table/block.h"
#include "table/block_fetch.h"
#include "table/format.h"
#include "util/dbformat.h"

/*
 * A walk over the three levels: the top index (in t->top), an index
 * partition and a data block, each a tides_block_iter over a buffer the
 * cursor owns.  data.valid is the cursor's position; errors land in *err
 * and stop it (sst_failed).
 */
typedef struct sst_cursor
{
	tides_sst  *t;
	tides_read_mode mode;
	tides_error *err;
	tides_block_iter top;
	tides_block_iter part;
	tides_block_iter data;
	tides_buf	part_buf;
	tides_buf	data_buf;
	tides_buf	filter_buf;
	tides_buf	tmp;
	tides_buf	key;
	tides_buf	val;
	tides_buf	gkey;			/* an ingested table's entry key, with its global seq */
	const uint8_t *okey;		/* the current entry's key as reported (sst_cursor_out) */
	size_t		oklen;
	uint64_t	part_off;		/* offset of the loaded partition, or UINT64_MAX */
	uint64_t	data_off;
	bool		ahead;			/* data blocks through ra (tides_sst_iter_read_ahead) */
	tides_readahead ra;
	bool		fetchable;		/* may fetch ahead (tides_sst_iter_fetch_ahead) */
	uint32_t	run;			/* data blocks entered forward in a row */
	tides_block_fetch *fetch;	/* the blocks after the current one, or NULL */
} sst_cursor;

/* a run's first and last user keys */
typedef struct sst_range
{
	const uint8_t *first;
	const uint8_t *last;
	uint32_t	first_len;
	uint32_t	last_len;
} sst_range;

struct tides_sst
{
	tides_block_source src;
	char	   *fname;
	tides_sst_props props;
	tides_props_ext ext;
	tides_buf	top;			/* top index block contents */
	uint64_t	top_off;		/* where the top index starts: past every data block */
	uint64_t	gseq;			/* ingested: every entry's sequence number (else 0) */
	bool		has_filter;
	/* the key ranges of its runs (README "Key ranges"); none: nranges 0 */
	uint32_t	nranges;
	sst_range  *ranges;			/* and the keys they point to, in one allocation */
	atomic_flag busy;			/* guards scratch */
	sst_cursor	scratch;
	tides_error scratch_err;
};

static inline bool
sst_failed(const sst_cursor *c)
{
	return c->err->code != TIDES_OK;
}

/*
 * Ingested tables (tides_sst_builder_set_ingest): entries are stored with
 * sequence number 0 and reported with the table's global sequence number
 * G, so everything above the reader -- reads, merges, compaction, which
 * then writes G into its outputs -- sees each entry at G.  Within the table
 * the user keys are distinct and every entry has the same sequence number,
 * so stored order is reported order; only a seek for an older sequence
 * number S < G must pass an entry with the target's user key, which it
 * lands on in stored order ((U, 0) >= (U, S)) but which sorts before the
 * target as (U, G).
 */
static inline void
sst_patch_trailer(uint8_t *ikey, size_t n, uint64_t gseq)
{
	tides_put64(ikey + n - TIDES_TRAILER,
				tides_pack_trailer(gseq, tides_ikey_type(ikey, n)));
}

void		sst_cursor_init(sst_cursor *c, tides_sst *t, tides_read_mode mode, tides_error *err);
void		sst_cursor_free(sst_cursor *c);

/* load the block the level above points at; false (maybe with c->err set) if it could not */
bool		sst_load_part(sst_cursor *c);
bool		sst_load_data(sst_cursor *c);

/* position the partition (data) level at the first entry >= k, from the level above */
void		sst_idx_enter_seek(sst_cursor *c, const uint8_t *k, size_t n);
void		sst_data_enter_seek(sst_cursor *c, const uint8_t *k, size_t n);

/* first entry >= target in reported order; then sst_cursor_out sets okey/oklen */
void		sst_cursor_seek_reported(sst_cursor *c, const uint8_t *k, size_t n);
void		sst_cursor_out(sst_cursor *c);

/* may the partition under the current top entry hold the key hashed to h (errors: true) */
bool		sst_filter_may_match(sst_cursor *c, uint64_t h);

#endif							/* TIDES_TABLE_SST_IMPL_H */
