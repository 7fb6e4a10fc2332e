/*
 * merge_iter.h -- merge several internal iterators into one ordered stream,
 * and concatenate the files of one sorted level.
 *
 * Both yield internal keys in tides_ikey_cmp order and support seek, first,
 * last, next and prev (a direction change repositions every child, as in
 * LevelDB).  The merge allocates only on a direction change; the level
 * iterator opens a file iterator (through the table cache) each time it
 * enters a file.  They never fail loudly: the first child error ends
 * validity and is reported through tides_iiter_status() (util/iterator.h).
 */
#ifndef TIDES_DB_MERGE_ITER_H
#define TIDES_DB_MERGE_ITER_H

#include "db/version.h"
#include "mem/memtable.h"
#include "table/table_cache.h"
#include "util/iterator.h"

/*
 * Takes ownership of the children (destroyed with the merge).  Children
 * never yield equal internal keys.  The first error of any child ends the
 * merge's validity and is reported in its err.
 */
tides_iiter *tides_merge_iter_new(tides_iiter **children, int n);

/*
 * The entries of n memtables (n >= 1; the caller keeps them referenced):
 * the memtable's own iterator for one, their merge for more.  NULL when out
 * of memory.
 */
tides_iiter *tides_memtables_iter_new(tides_memtable *const *ms, uint32_t n);

/*
 * Iterator over the files of a sorted level (1 and deeper) of version v,
 * opening each file through tc only when reached.  If prefix is non-NULL,
 * files whose prefix filter excludes it are skipped; with stem_suffix > 0,
 * prefix is a stem instead and files whose stem filter excludes every key
 * prefix || stem_suffix bytes are skipped.  lower/upper (user
 * keys, inclusive/exclusive, each may be NULL) are the reader's bounds:
 * files wholly outside them in the direction of travel are not opened, and
 * the level ends there (the reader never shows keys outside its bounds;
 * they must stay valid for the iterator's lifetime).  fill_cache and
 * fetch_ahead are the files' iterators' (table/sst.h).  The caller keeps v
 * referenced for the iterator's lifetime.
 */
tides_iiter *tides_level_iter_new(tides_table_cache *tc, const tides_version *v, int level,
								  bool fill_cache, bool fetch_ahead,
								  const uint8_t *prefix, size_t prefix_len,
								  uint32_t stem_suffix,
								  const uint8_t *lower, size_t lower_len,
								  const uint8_t *upper, size_t upper_len);

/* may file f hold a key starting with stem, by its key range alone? */
bool		tides_file_may_hold_prefix(const tides_file_meta *f, const uint8_t *stem, size_t len);

/*
 * may file f hold a key stem || exactly suffix bytes?  Its key range, then
 * (suffix > 0) its key runs and stem filter, read through tc; true when the
 * file cannot be opened (the reader that opens it reports why)
 */
bool		tides_file_may_hold_stem(tides_table_cache *tc, const tides_file_meta *f,
									 const uint8_t *stem, size_t len, uint32_t suffix);

#endif
