/*
 * table_writer.h -- writing output SSTables for flush and compaction: new
 * file numbers, cutting outputs at a target size, at the partitioner's
 * boundaries and around files that stay (all on user-key boundaries),
 * fsync before the file can be published, and cleanup on failure.
 *
 * Contract: the caller publishes w->outputs with a manifest edit; it may call
 * tides_table_writer_discard() only while no durable edit or installed
 * version names any of them (discard unlinks every output unconditionally).
 */
#ifndef TIDES_DB_TABLE_WRITER_H
#define TIDES_DB_TABLE_WRITER_H

#include "db/db_impl.h"

typedef struct tides_table_writer
{
	tides_db   *db;
	uint64_t	target_size;	/* 0: never cut (flush); else also at partitions */
	bool		ingest;			/* outputs for ingestion (tides_sst_builder_set_ingest) */
	bool		bottommost;		/* outputs take the bottommost compression */
	bool		helper;			/* ingest outputs: encode in a helper thread
								 * (tides_sst_builder_set_helper) */
	/*
	 * Also cut where the first range_prefix_len bytes of the user key change
	 * (one table's rows, one index: the next tree), once the file holds this
	 * many bytes (0: never).  A level's files then end where a large tree
	 * ends, so the next keys flushed above that tree's largest find room
	 * there (flush.c) instead of a file spanning the gap.
	 */
	uint64_t	prefix_cut_size;
	tides_sst_builder *builder;
	int			fd;
	uint64_t	number;
	char		name[1024];
	tides_buf	last_ukey;		/* user key of the last entry added */
	uint64_t	suffix_bound;	/* of the open file's keys so far (tides_file_meta) */
	bool		suffix_lost;	/* a key of the open file had no suffix */
	/*
	 * Files of the output level that stay (a compaction's kept files, in
	 * key order): no output spans one of them, and an entry inside one is
	 * refused.  Not owned.
	 */
	tides_file_meta **stays;
	uint32_t	nstays;
	uint32_t	next_stay;		/* the first of them not yet passed */
	tides_edit_file *outputs;	/* finished files */
	uint32_t	noutputs;
	uint64_t	bytes_written;
	tides_error err;
} tides_table_writer;

void		tides_table_writer_init(tides_table_writer *w, tides_db *db, uint64_t target_size);

/* add an entry (internal key order); may finish the current file first */
tides_status tides_table_writer_add(tides_table_writer *w, const uint8_t *ikey, size_t iklen,
									const uint8_t *val, size_t vlen);

/* finish the open file, if any */
tides_status tides_table_writer_finish(tides_table_writer *w);

/* delete every file written (after a failure, or if the result is unused) */
void		tides_table_writer_discard(tides_table_writer *w);

/* free memory (files stay) */
void		tides_table_writer_free(tides_table_writer *w);

/* emit callback for tides_compaction_run */
tides_status tides_table_writer_emit(void *arg, const uint8_t *ikey, size_t iklen,
									 const uint8_t *val, size_t vlen);

#endif
