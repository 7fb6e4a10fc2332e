/*
 * sst.h -- sorted string tables: immutable files of internal-key/value
 * entries in internal-key order, written once by flush or compaction.
 *
 * File layout (all integers little-endian; every block is followed by a
 * 5-byte trailer: compression type (1 byte) and the masked crc32c of the
 * stored block bytes plus the type byte):
 *
 *   data block 0 .. data block n-1      entries with shared-prefix key
 *                                       compression and restart points
 *   filter partition 0 .. p-1           bloom filter of the user keys (and
 *                                       key prefixes) of the data blocks that
 *                                       index partition i covers
 *   index partition 0 .. p-1            one entry per data block: a separator
 *                                       key >= its last key -> block handle
 *   top index                           one entry per partition: separator ->
 *                                       (index partition handle, filter
 *                                       partition handle)
 *   properties                          counts, key range, seq range, sizes
 *   footer (fixed size)                 handles of top index and properties,
 *                                       format version, magic, crc32c
 *
 * The precise byte formats are documented in src/engine/table/README.md.
 *
 * A reader (tides_sst) belongs to one process: it holds the file descriptor,
 * the decoded top index and properties.  Data, index and filter blocks are
 * read through the shared block cache (cache/block_cache.h), keyed by
 * (file number, block offset), and always verified against their checksum
 * when read from the file.  Every error message names the file.
 */
#ifndef TIDES_TABLE_SST_H
#define TIDES_TABLE_SST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tides_engine.h"
#include "util/counters.h"
#include "util/iterator.h"
#include "util/status.h"

typedef struct tides_block_cache tides_block_cache;

/* what a reader or builder needs from its surroundings */
typedef struct tides_table_env
{
	tides_vfs  *vfs;
	tides_block_cache *cache;	/* may be NULL: no caching */
	tides_counters *counters;	/* may be NULL */
	uint32_t	block_size;
	uint32_t	restart_interval;
	uint32_t	bloom_bits_per_key;
	uint32_t	prefix_len;		/* 0: no prefix filter */
	uint32_t	stem_suffix;	/* 0: no stem filter (filter.h) */
	uint32_t	range_prefix_len;	/* 0: no key ranges (README "Key ranges") */
	tides_compression compression;
	int			compression_level;
	tides_compression bottommost_compression;	/* files written with bottommost set */
	int			bottommost_compression_level;
} tides_table_env;

/* properties stored in every table */
typedef struct tides_sst_props
{
	uint64_t	num_entries;
	uint64_t	num_deletions;
	uint64_t	num_data_blocks;
	uint64_t	raw_key_bytes;
	uint64_t	raw_value_bytes;
	uint64_t	data_bytes;		/* stored (compressed) data block bytes */
	uint64_t	file_size;
	uint64_t	min_seq;
	uint64_t	max_seq;
	uint32_t	prefix_len;		/* prefix filter length the table was built with */
	uint32_t	stem_suffix;	/* its stem filter's suffix length (0: none) */
	uint32_t	num_partitions; /* index (and filter) partitions */
	/* smallest and largest internal keys, malloc'd by the reader/builder */
	uint8_t    *smallest;
	size_t		smallest_len;
	uint8_t    *largest;
	size_t		largest_len;
} tides_sst_props;

void		tides_sst_props_free(tides_sst_props *p);

/* ---- writing */

typedef struct tides_sst_builder tides_sst_builder;

/* fd is open for writing and empty; fname is used in error messages */
tides_sst_builder *tides_sst_builder_new(const tides_table_env *env, int fd,
										 const char *fname);

/*
 * Build a table for ingestion (db/ingest.c): its entries carry sequence
 * number 0, and its properties a global sequence number (0 until
 * tides_sst_set_global_seq assigns it) that readers report as every
 * entry's.  Call before the first add.
 */
void		tides_sst_builder_set_ingest(tides_sst_builder *b);

/*
 * Encode the data blocks in a helper thread of this process, ahead of the
 * builder (table/block_pipe.h); before the first entry.  For a builder that
 * is its process's only CPU-heavy work.  False if no helper could be
 * started: the builder then encodes them itself, as without the call.
 */
bool		tides_sst_builder_set_helper(tides_sst_builder *b);

/* entries must arrive in strictly increasing internal-key order */
tides_status tides_sst_builder_add(tides_sst_builder *b,
								   const uint8_t *ikey, size_t iklen,
								   const uint8_t *val, size_t vlen,
								   tides_error *err);

/* bytes the file will have if finished now (approximately) */
uint64_t	tides_sst_builder_size(const tides_sst_builder *b);
uint64_t	tides_sst_builder_entries(const tides_sst_builder *b);

/*
 * Write filters, indexes, properties and footer.  Does NOT fsync (the caller
 * does, before it publishes the file).  props receives copies (caller frees
 * with tides_sst_props_free).
 */
tides_status tides_sst_builder_finish(tides_sst_builder *b, tides_sst_props *props,
									  tides_error *err);

/* free the builder (after finish, or to abandon a half-written file) */
void		tides_sst_builder_free(tides_sst_builder *b);

/* ---- reading */

typedef struct tides_sst tides_sst;

/*
 * Open a finished table.  Reads and checks the footer, top index and
 * properties; corruption there fails the open.  Takes ownership of fd (closed
 * by tides_sst_close, also on failure).
 */
tides_status tides_sst_open(const tides_table_env *env, int fd, uint64_t file_number,
							uint64_t file_size, const char *fname,
							tides_sst **out, tides_error *err);
void		tides_sst_close(tides_sst *t);

const tides_sst_props *tides_sst_properties(const tides_sst *t);
uint64_t	tides_sst_file_number(const tides_sst *t);

/*
 * Point lookup: find the first entry whose internal key is >= ikey.  If the
 * key runs (README "Key ranges") or the filters prove the user key absent,
 * returns TIDES_NOT_FOUND without reading a data block.  Otherwise calls
 * found(arg, key, klen, val, vlen) with that entry (whatever its user key)
 * and returns TIDES_OK; returns TIDES_NOT_FOUND when no entry is >= ikey.
 * found's pointers are valid only during the call.
 */
typedef void (*tides_sst_found_fn) (void *arg, const uint8_t *ikey, size_t iklen,
									const uint8_t *val, size_t vlen);

tides_status tides_sst_get(tides_sst *t, const uint8_t *ikey, size_t iklen,
						   tides_sst_found_fn found, void *arg, tides_error *err);

/*
 * The same, asking the filters only if use_filter (the key runs, in process
 * memory, always): a lookup that expects to find its key in this table (the
 * last level, below which nothing can hold it) saves the filter block the
 * answer "may be there" would cost.
 */
tides_status tides_sst_get_filtered(tides_sst *t, const uint8_t *ikey, size_t iklen, bool use_filter,
									tides_sst_found_fn found, void *arg, tides_error *err);

/*
 * Ask for the data block a lookup of ikey (a user key at the latest read
 * point) would read to be read ahead through the vfs's will_need, unless it
 * is in the block cache (tides_prefetch).  Rules the table out as the get
 * does (key runs; filters if use_filter); an index partition it needs is
 * read through the cache.  Returns true when the lookup would end in this
 * table -- the block was asked for (*asked), or is cached and holds the key,
 * or a read failed (the get will report it) -- and false when it would go
 * on to the tables below.
 */
bool		tides_sst_prefetch(tides_sst *t, const uint8_t *ikey, size_t iklen, bool use_filter,
							   bool *asked);

/*
 * The most runs whose key ranges a table records (range_prefix_len); the
 * last one recorded extends to the table's end.
 */
#define TIDES_SST_MAX_RANGES 64

/*
 * may the table hold keys starting with this prefix?  False when the key
 * ranges of its runs leave no room for one, or its prefix filter (of
 * exactly this length) proves none is there.
 */
bool		tides_sst_may_contain_prefix(tides_sst *t, const uint8_t *prefix, size_t len);

/*
 * may the table hold a key that is stem followed by exactly suffix bytes?
 * False when the key ranges of its runs leave no room for a key starting
 * with stem, or the table was built with a stem filter (filter.h) of that
 * suffix length and the filter proves none is there.
 */
bool		tides_sst_may_contain_stem(tides_sst *t, const uint8_t *stem, size_t len,
									   uint32_t suffix);

/* iterator over all entries (internal keys); owns no reference to t's life */
tides_iiter *tides_sst_iter_new(tides_sst *t, bool fill_cache);

/*
 * Have an iterator read its data blocks through a readahead window
 * (format.h), not the block cache: for one pass in key order over the whole
 * table (a compaction's input).  Anything but a table's iterator (the empty
 * one of a failed open) is left alone.
 */
void		tides_sst_iter_read_ahead(tides_iiter *it);

/*
 * Have an iterator, once it moves forward from block to block, leave the
 * reading and decoding of the data blocks after its own to a helper thread
 * (table/block_fetch.h): for a pass over much of the table in the
 * foreground (a bulk read).  A seek or a backward move ends the fetch until
 * the next forward run.  Anything but a table's iterator is left alone.
 */
void		tides_sst_iter_fetch_ahead(tides_iiter *it);

/*
 * Have an iterator from tides_sst_iter_new call fn(arg, t) when it is
 * destroyed (after it stopped using t); the table cache drops its pin so.
 */
void		tides_sst_iter_on_destroy(tides_iiter *it, void (*fn) (void *arg, tides_sst *t),
									  void *arg);

/*
 * Assign the global sequence number of a finished ingested table (fd open
 * for reading and writing, file_size its size): rewrites the properties
 * block and its trailer in place, nothing else; does not fsync.
 * TIDES_INVALID if the table was not built for ingestion.
 */
tides_status tides_sst_set_global_seq(const tides_table_env *env, int fd, uint64_t file_size,
									  uint64_t seq, const char *fname, tides_error *err);

/* the global sequence number of an ingested table (0: not ingested, or not yet installed) */
uint64_t	tides_sst_global_seq(const tides_sst *t);

/* read and checksum every block; TIDES_OK or the first problem */
tides_status tides_sst_verify(tides_sst *t, tides_error *err);

/* approximate file offset where ikey would be (for size estimates) */
uint64_t	tides_sst_approximate_offset(tides_sst *t, const uint8_t *ikey, size_t iklen);

#endif
