/*
 * iterator.h -- the internal iterator interface.
 *
 * Every source of entries (a memtable, a data block, an SSTable, a level, a
 * merge of them) is a tides_iiter over *internal keys* (see
 * util/dbformat.h): user key followed by an 8-byte trailer.  Entries come in
 * internal-key order.  Positioning functions never fail loudly: on an error
 * the iterator becomes invalid and records the error in it->err, which the
 * owner checks with tides_iiter_status() when the iterator runs dry.
 *
 * key() and value() stay valid until the iterator moves or is destroyed.
 * Contract (asserted below): key(), value(), next() and prev() only on a
 * valid iterator; seek(), first() and last() at any time.
 */
#ifndef TIDES_UTIL_ITERATOR_H
#define TIDES_UTIL_ITERATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/assert.h"
#include "util/status.h"

typedef struct tides_iiter tides_iiter;

typedef struct tides_iiter_ops
{
	void		(*seek) (tides_iiter *it, const uint8_t *ikey, size_t len);	/* first >= ikey */
	void		(*first) (tides_iiter *it);
	void		(*last) (tides_iiter *it);
	void		(*next) (tides_iiter *it);
	void		(*prev) (tides_iiter *it);
	bool		(*valid) (const tides_iiter *it);
	const uint8_t *(*key) (const tides_iiter *it, size_t *len);
	const uint8_t *(*value) (const tides_iiter *it, size_t *len);
	void		(*destroy) (tides_iiter *it);

	/*
	 * Optional (NULL: seek): seek for a reader that wants only the entries
	 * whose user key is stem || exactly suffix bytes.  Those are positioned
	 * and shown as seek would show them; other entries may be missing (a
	 * source whose stem filter proves it holds no wanted key yields none).
	 */
	void		(*seek_stem) (tides_iiter *it, const uint8_t *ikey, size_t len,
							  const uint8_t *stem, size_t stem_len, uint32_t suffix);
} tides_iiter_ops;

struct tides_iiter
{
	const tides_iiter_ops *ops;
	tides_error err;			/* first error met; code TIDES_OK if none */
};

static inline void
tides_iiter_base_init(tides_iiter *it, const tides_iiter_ops *ops)
{
	it->ops = ops;
	tides_error_clear(&it->err);
}

static inline void tides_iiter_seek(tides_iiter *it, const uint8_t *k, size_t n) { it->ops->seek(it, k, n); }

static inline void
tides_iiter_seek_stem(tides_iiter *it, const uint8_t *k, size_t n, const uint8_t *stem, size_t stem_len,
					  uint32_t suffix)
{
	if (it->ops->seek_stem != NULL)
		it->ops->seek_stem(it, k, n, stem, stem_len, suffix);
	else
		it->ops->seek(it, k, n);
}

static inline void tides_iiter_first(tides_iiter *it) { it->ops->first(it); }
static inline void tides_iiter_last(tides_iiter *it) { it->ops->last(it); }
static inline bool tides_iiter_valid(const tides_iiter *it) { return it->ops->valid(it); }

static inline void
tides_iiter_next(tides_iiter *it)
{
	TIDES_ASSERT(tides_iiter_valid(it));
	it->ops->next(it);
}

static inline void
tides_iiter_prev(tides_iiter *it)
{
	TIDES_ASSERT(tides_iiter_valid(it));
	it->ops->prev(it);
}

static inline const uint8_t *
tides_iiter_key(const tides_iiter *it, size_t *n)
{
	TIDES_ASSERT(tides_iiter_valid(it));
	return it->ops->key(it, n);
}

static inline const uint8_t *
tides_iiter_value(const tides_iiter *it, size_t *n)
{
	TIDES_ASSERT(tides_iiter_valid(it));
	return it->ops->value(it, n);
}
static inline tides_status tides_iiter_status(const tides_iiter *it) { return it->err.code; }

static inline void
tides_iiter_destroy(tides_iiter *it)
{
	if (it != NULL)
		it->ops->destroy(it);
}

/* an iterator with no entries that reports err (code may be TIDES_OK) */
tides_iiter *tides_iiter_empty(const tides_error *err);

#endif
