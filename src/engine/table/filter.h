/*
 * filter.h -- bloom filters over user keys and user-key prefixes.
 *
 * One filter is built per filter partition (the data blocks that one index
 * partition covers), so a point lookup only ever touches one small filter
 * block, which stays cheap to copy out of the shared block cache.
 *
 * Each filter holds the whole user key of every entry and, when prefix_len
 * is nonzero, the first prefix_len bytes of every user key at least that
 * long, and, when stem_suffix is nonzero, the stem of every user key longer
 * than stem_suffix bytes: the key without its last stem_suffix bytes (for
 * keys that end in a fixed-size suffix, such as an index entry's row id, the
 * stem is the part a uniqueness check looks for).  All go into the same bit
 * array with the same hash: a lookup probes a whole key, a prefix or a stem,
 * and an accidental match between kinds is merely a false positive.
 * Consecutive duplicates (the versions of one user key, the keys sharing one
 * prefix or one stem) are added once.
 *
 * Format: nbytes of bit array, then one byte k (number of probes).  Probes
 * use double hashing of tides_hash64(key, seed 0): with h1 the low and h2 the
 * high 32 bits, probe i tests bit ((h1 + i*h2) mod 2^32) * nbits >> 32.  A k
 * above 30 is reserved for future formats and always answers "may match",
 * as does an empty filter, so that an unknown filter never hides a key.
 *
 * k = round(bits_per_key * 0.69) clamped to 1..30, which minimises the
 * false-positive rate ((1 - e^(-k/b))^k, ~0.8% at 10 bits per key).
 */
#ifndef TIDES_TABLE_FILTER_H
#define TIDES_TABLE_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/block_cache.h"
#include "util/buf.h"
#include "util/hash.h"

typedef struct tides_filter_builder
{
	tides_buf	hashes;			/* uint64_t per distinct key or prefix */
	uint32_t	bits_per_key;
	uint32_t	prefix_len;
	uint32_t	stem_suffix;
	uint64_t	last_key_hash;
	uint64_t	last_prefix_hash;
	uint64_t	last_stem_hash;
	bool		have_key;
	bool		have_prefix;
	bool		have_stem;
	tides_buf	prev;			/* the previous key (prev_valid) */
	bool		prev_valid;
} tides_filter_builder;

void		tides_filter_builder_init(tides_filter_builder *fb, uint32_t bits_per_key,
									  uint32_t prefix_len, uint32_t stem_suffix);
void		tides_filter_builder_free(tides_filter_builder *fb);

/* add a user key (and its prefix and stem); keys arrive in order */
void		tides_filter_builder_add(tides_filter_builder *fb, const uint8_t *ukey, size_t len);

/* number of hashes collected since the last finish */
static inline size_t
tides_filter_builder_count(const tides_filter_builder *fb)
{
	return fb->hashes.len / sizeof(uint64_t);
}

/* append the filter of everything added so far to out, and start afresh */
void		tides_filter_builder_finish(tides_filter_builder *fb, tides_buf *out);

static inline uint64_t
tides_filter_hash(const uint8_t *key, size_t len)
{
	return tides_hash64(key, len, 0);
}

/* false only if the filter proves the hash's key absent */
bool		tides_filter_may_match_hash(const uint8_t *filter, size_t len, uint64_t h);

static inline bool
tides_filter_may_match(const uint8_t *filter, size_t len, const uint8_t *key, size_t klen)
{
	return tides_filter_may_match_hash(filter, len, tides_filter_hash(key, klen));
}

/* the same, probing a filter in place in the block cache */
bool		tides_filter_may_match_view(const tides_block_view *v, uint64_t h);

/* number of probes for a bits-per-key setting */
int			tides_filter_num_probes(uint32_t bits_per_key);

#endif
