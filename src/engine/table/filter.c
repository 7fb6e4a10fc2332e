/*
 * filter.c -- building and probing bloom filters.
 *
 * The builder only records 64-bit hashes while keys stream in; the bit
 * array is sized and filled at finish, when the number of distinct keys of
 * the partition is known, so every partition gets exactly bits_per_key bits
 * per key whatever its size.
 */
#include "table/filter.h"

#include <math.h>
#include <string.h>

#include "util/assert.h"
#include "util/hash.h"

#define MAX_PROBES 30

int
tides_filter_num_probes(uint32_t bits_per_key)
{
	int			k = (int) lround(bits_per_key * 0.69);

	if (k < 1)
		k = 1;
	if (k > MAX_PROBES)
		k = MAX_PROBES;
	return k;
}

void
tides_filter_builder_init(tides_filter_builder *fb, uint32_t bits_per_key, uint32_t prefix_len,
						  uint32_t stem_suffix)
{
	tides_buf_init(&fb->hashes);
	fb->bits_per_key = bits_per_key;
	fb->prefix_len = prefix_len;
	fb->stem_suffix = stem_suffix;
	fb->have_key = fb->have_prefix = fb->have_stem = false;
	fb->last_key_hash = fb->last_prefix_hash = fb->last_stem_hash = 0;
	tides_buf_init(&fb->prev);
	fb->prev_valid = false;
}

void
tides_filter_builder_free(tides_filter_builder *fb)
{
	tides_buf_free(&fb->hashes);
	tides_buf_free(&fb->prev);
}

static inline void
push_hash(tides_filter_builder *fb, uint64_t h)
{
	if (!tides_buf_reserve(&fb->hashes, sizeof(h)))
		return;
	memcpy(fb->hashes.data + fb->hashes.len, &h, sizeof(h));
	fb->hashes.len += sizeof(h);
}

/* do the previous key and this one share their first n bytes (n <= len)? */
static inline bool
same_as_prev(const tides_filter_builder *fb, const uint8_t *ukey, size_t n)
{
	return fb->prev_valid && fb->prev.len >= n && memcmp(fb->prev.data, ukey, n) == 0;
}

void
tides_filter_builder_add(tides_filter_builder *fb, const uint8_t *ukey, size_t len)
{
	uint64_t	h;

	/*
	 * Equal bytes hash equally: a key, prefix or stem equal to the previous
	 * key's is not hashed again (it would be found equal to the last hash
	 * and skipped).  Saves most prefix and stem hashes: neighbours share them.
	 */
	if (same_as_prev(fb, ukey, len) && fb->prev.len == len)
		return;					/* another version of the same key: nothing new */
	h = tides_filter_hash(ukey, len);
	/* versions of one user key arrive together: add the key once */
	if (!fb->have_key || h != fb->last_key_hash)
	{
		push_hash(fb, h);
		fb->last_key_hash = h;
		fb->have_key = true;
	}
	if (fb->prefix_len > 0 && len >= fb->prefix_len &&
		!(fb->have_prefix && len > fb->prefix_len && same_as_prev(fb, ukey, fb->prefix_len)))
	{
		uint64_t	ph = len == fb->prefix_len ? h : tides_filter_hash(ukey, fb->prefix_len);

		if (!fb->have_prefix || ph != fb->last_prefix_hash)
		{
			/* a key exactly prefix_len long was just added as a whole key */
			if (ph != h)
				push_hash(fb, ph);
			fb->last_prefix_hash = ph;
			fb->have_prefix = true;
		}
	}
	if (fb->stem_suffix > 0 && len > fb->stem_suffix &&
		!(fb->have_stem && fb->prev.len == len && same_as_prev(fb, ukey, len - fb->stem_suffix)))
	{
		uint64_t	sh = tides_filter_hash(ukey, len - fb->stem_suffix);

		/* a stem equal to the prefix just added hashes the same: once is enough */
		if ((!fb->have_stem || sh != fb->last_stem_hash) &&
			!(fb->have_prefix && sh == fb->last_prefix_hash))
			push_hash(fb, sh);
		fb->last_stem_hash = sh;
		fb->have_stem = true;
	}
	/* remember the key; without memory, hash everything next time */
	tides_buf_reset(&fb->prev);
	tides_buf_append(&fb->prev, ukey, len);
	fb->prev_valid = !fb->prev.oom;
}

void
tides_filter_builder_finish(tides_filter_builder *fb, tides_buf *out)
{
	size_t		n = tides_filter_builder_count(fb);
	uint64_t	nbits = (uint64_t) n * fb->bits_per_key;
	size_t		nbytes;
	int			k = tides_filter_num_probes(fb->bits_per_key);
	uint8_t    *bits;

	/* tiny filters have a very high false-positive rate; keep a floor */
	if (nbits < 64)
		nbits = 64;
	nbytes = (size_t) ((nbits + 7) / 8);
	nbits = (uint64_t) nbytes * 8;
	/* readers treat any other probe count as "may match" (table/README.md) */
	TIDES_ASSERT(k >= 1 && k <= MAX_PROBES);

	if (!tides_buf_reserve(out, nbytes + 1))
		return;
	bits = out->data + out->len;
	memset(bits, 0, nbytes);
	for (size_t i = 0; i < n; i++)
	{
		uint64_t	h;
		uint32_t	h1,
					h2;

		memcpy(&h, fb->hashes.data + i * sizeof(h), sizeof(h));
		h1 = (uint32_t) h;
		h2 = (uint32_t) (h >> 32);
		for (int j = 0; j < k; j++)
		{
			uint64_t	bit = ((uint64_t) h1 * nbits) >> 32;

			TIDES_ASSERT(bit < nbits);
			bits[bit >> 3] |= (uint8_t) (1u << (bit & 7));
			h1 += h2;
		}
	}
	bits[nbytes] = (uint8_t) k;
	out->len += nbytes + 1;

	tides_buf_reset(&fb->hashes);
	fb->have_key = fb->have_prefix = fb->have_stem = false;
	fb->prev_valid = false;
}

bool
tides_filter_may_match_hash(const uint8_t *filter, size_t len, uint64_t h)
{
	size_t		nbytes;
	uint64_t	nbits;
	int			k;
	uint32_t	h1 = (uint32_t) h;
	uint32_t	h2 = (uint32_t) (h >> 32);

	if (len < 2)
		return true;
	nbytes = len - 1;
	nbits = (uint64_t) nbytes * 8;
	k = filter[nbytes];
	if (k < 1 || k > MAX_PROBES || nbits > UINT32_MAX)
		return true;
	for (int j = 0; j < k; j++)
	{
		uint64_t	bit = ((uint64_t) h1 * nbits) >> 32;

		if ((filter[bit >> 3] & (1u << (bit & 7))) == 0)
			return false;
		h1 += h2;
	}
	return true;
}

/*
 * Probing in place touches k cache lines instead of copying the whole
 * filter; bytes may be torn (the caller validates the visit), but every
 * index is bounded by the view's length.
 */
bool
tides_filter_may_match_view(const tides_block_view *v, uint64_t h)
{
	size_t		nbytes;
	uint64_t	nbits;
	int			k;
	uint32_t	h1 = (uint32_t) h;
	uint32_t	h2 = (uint32_t) (h >> 32);

	if (v->len < 2)
		return true;
	nbytes = v->len - 1;
	nbits = (uint64_t) nbytes * 8;
	k = tides_block_view_byte(v, nbytes);
	if (k < 1 || k > MAX_PROBES || nbits > UINT32_MAX)
		return true;
	for (int j = 0; j < k; j++)
	{
		uint64_t	bit = ((uint64_t) h1 * nbits) >> 32;

		if ((tides_block_view_byte(v, bit >> 3) & (1u << (bit & 7))) == 0)
			return false;
		h1 += h2;
	}
	return true;
}
