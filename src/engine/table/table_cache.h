/*
 * table_cache.h -- the per-process cache of open SSTable readers.
 *
 * PostgreSQL limits descriptors per backend (max_files_per_process), and
 * every backend may read any table, so each process keeps at most
 * max_open_files readers open, evicting the least recently used one that is
 * not in use.  Tables are identified by file number; numbers are never
 * reused, so a cached reader can never refer to the wrong file.
 *
 * tides_table_cache_get() returns a reader with a pin; release it with
 * tides_table_cache_release().  Iterators returned by
 * tides_table_cache_iter() hold their pin until destroyed.
 */
#ifndef TIDES_TABLE_TABLE_CACHE_H
#define TIDES_TABLE_TABLE_CACHE_H

#include "table/sst.h"

typedef struct tides_table_cache tides_table_cache;

/* dir: directory of the table files, named "%06llu.sst" */
tides_table_cache *tides_table_cache_new(const tides_table_env *env, const char *dir,
										 uint32_t max_open);
void		tides_table_cache_free(tides_table_cache *tc);

tides_status tides_table_cache_get(tides_table_cache *tc, uint64_t file_number,
								   uint64_t file_size, tides_sst **out, tides_error *err);
void		tides_table_cache_release(tides_table_cache *tc, tides_sst *t);

/* iterator over one table; on open failure an empty iterator carrying the error */
tides_iiter *tides_table_cache_iter(tides_table_cache *tc, uint64_t file_number,
									uint64_t file_size, bool fill_cache);

/*
 * close the cached reader of a file (after it was deleted) if unpinned; a
 * pinned one is closed by its last release and never handed out again
 */
void		tides_table_cache_evict(tides_table_cache *tc, uint64_t file_number);

/* close every unpinned reader (after files were deleted, to free disk space) */
void		tides_table_cache_evict_all(tides_table_cache *tc);

/* readers currently open, including pinned ones evicted (for tests, stats) */
uint32_t	tides_table_cache_open_count(tides_table_cache *tc);

/* file name for a table number, into buf of at least 32 bytes */
void		tides_sst_file_name(char *buf, size_t cap, uint64_t file_number);

#endif
