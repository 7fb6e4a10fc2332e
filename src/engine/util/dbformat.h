/*
 * dbformat.h -- internal keys.
 *
 * Inside the engine every entry is keyed by an internal key:
 *
 *     user key bytes | trailer (8 bytes, little-endian) = seq << 8 | type
 *
 * Internal keys order by user key (memcmp, shorter first on a common prefix),
 * then by sequence number DESCENDING, then type descending, so that the
 * newest version of a user key comes first.  A lookup for user key U as of
 * sequence S seeks to U | (S, TIDES_KT_SEEK) and takes the first entry whose
 * user key is U.
 *
 * Sequence numbers are 56 bits, assigned in log order, never reused.
 *
 * It lives in util/, the bottom of the engine, because mem/, table/ and db/
 * all speak it: no folder below db/ includes anything from db/.
 */
#ifndef TIDES_UTIL_DBFORMAT_H
#define TIDES_UTIL_DBFORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/coding.h"

typedef enum tides_key_type
{
	TIDES_KT_DELETE = 0,
	TIDES_KT_VALUE = 1
} tides_key_type;

#define TIDES_KT_SEEK TIDES_KT_VALUE	/* highest type: sorts first for a seq */
#define TIDES_MAX_SEQ ((((uint64_t) 1) << 56) - 1)
#define TIDES_TRAILER 8

static inline uint64_t
tides_pack_trailer(uint64_t seq, tides_key_type t)
{
	return (seq << 8) | (uint64_t) t;
}

static inline uint64_t
tides_ikey_trailer(const uint8_t *ikey, size_t len)
{
	return tides_get64(ikey + len - TIDES_TRAILER);
}

static inline uint64_t
tides_ikey_seq(const uint8_t *ikey, size_t len)
{
	return tides_ikey_trailer(ikey, len) >> 8;
}

static inline tides_key_type
tides_ikey_type(const uint8_t *ikey, size_t len)
{
	return (tides_key_type) (tides_ikey_trailer(ikey, len) & 0xff);
}

/* a well-formed internal key has a trailer and a known type */
static inline bool
tides_ikey_valid(const uint8_t *ikey, size_t len)
{
	return len >= TIDES_TRAILER && (ikey[len - TIDES_TRAILER] & 0xff) <= TIDES_KT_VALUE;
}

static inline int
tides_ukey_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t		n = alen < blen ? alen : blen;
	int			r = n ? memcmp(a, b, n) : 0;

	if (r != 0)
		return r;
	return alen < blen ? -1 : (alen > blen ? 1 : 0);
}

static inline int
tides_ikey_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	int			r = tides_ukey_cmp(a, alen - TIDES_TRAILER, b, blen - TIDES_TRAILER);

	if (r == 0)
	{
		uint64_t	ta = tides_ikey_trailer(a, alen);
		uint64_t	tb = tides_ikey_trailer(b, blen);

		r = ta > tb ? -1 : (ta < tb ? 1 : 0);
	}
	return r;
}

/* write U | trailer into out (which has room for ulen + 8 bytes) */
static inline size_t
tides_ikey_make(uint8_t *out, const void *ukey, size_t ulen, uint64_t seq, tides_key_type t)
{
	memcpy(out, ukey, ulen);
	tides_put64(out + ulen, tides_pack_trailer(seq, t));
	return ulen + TIDES_TRAILER;
}

#endif
