/*
 * block.c -- the block iterator: binary search over restart points, then a
 * linear scan; backward steps rescan from the preceding restart point (at
 * most restart_interval entries), as LevelDB does, because entries can only
 * be decoded forward.
 */
#include "table/block.h"

#include <string.h>

#include "util/dbformat.h"

void
tides_block_iter_init(tides_block_iter *it, bool ikey, tides_error *err)
{
	memset(it, 0, sizeof(*it));
	tides_buf_init(&it->keybuf);
	it->ikey = ikey;
	it->err = err;
	it->fname = "";
}

void
tides_block_iter_free(tides_block_iter *it)
{
	tides_buf_free(&it->keybuf);
}

static void
corrupt(tides_block_iter *it, const char *what)
{
	it->valid = false;
	it->cur = it->next = it->restarts;
	/* keep the first error: later ones are usually consequences */
	if (it->err->code == TIDES_OK)
		tides_fail(it->err, TIDES_CORRUPTION, "corrupted block at offset %llu of %s: %s",
				   (unsigned long long) it->block_off, it->fname, what);
}

bool
tides_block_iter_reset(tides_block_iter *it, const uint8_t *data, size_t len,
					   const char *fname, uint64_t block_off)
{
	uint32_t	n;

	it->data = data;
	it->fname = fname ? fname : "";
	it->block_off = block_off;
	it->valid = false;
	it->key = NULL;
	it->klen = 0;
	it->restarts = 0;
	it->num_restarts = 0;
	it->cur = it->next = 0;
	it->restart_idx = 0;
	if (len < 4 || len > UINT32_MAX)
	{
		corrupt(it, "block too short");
		return false;
	}
	n = tides_get32(data + len - 4);
	if (n == 0 || n > (len - 4) / 4)
	{
		corrupt(it, "bad restart count");
		return false;
	}
	it->num_restarts = n;
	it->restarts = (uint32_t) (len - 4 - (size_t) n * 4);
	it->cur = it->next = it->restarts;
	return true;
}

/* offset of restart point i, or UINT32_MAX (reported) if out of bounds */
static inline uint32_t
restart_point(tides_block_iter *it, uint32_t i)
{
	uint32_t	off = tides_get32(it->data + it->restarts + (size_t) i * 4);

	if (off >= it->restarts)
	{
		corrupt(it, "restart point out of range");
		return UINT32_MAX;
	}
	return off;
}

/*
 * Decode the entry header at off.  On success *kp points at the unshared
 * key bytes; the value follows them.
 */
static inline bool
decode_entry(const tides_block_iter *it, uint32_t off, uint32_t *shared, uint32_t *unshared,
			 uint32_t *vlen, const uint8_t **kp)
{
	const uint8_t *p = it->data + off;
	const uint8_t *limit = it->data + it->restarts;

	if (limit - p >= 3 && (p[0] | p[1] | p[2]) < 0x80)
	{
		/* all three lengths are single bytes: the common case */
		*shared = p[0];
		*unshared = p[1];
		*vlen = p[2];
		p += 3;
	}
	else
	{
		if ((p = tides_decode_varint32(p, limit, shared)) == NULL ||
			(p = tides_decode_varint32(p, limit, unshared)) == NULL ||
			(p = tides_decode_varint32(p, limit, vlen)) == NULL)
			return false;
	}
	if ((uint64_t) *unshared + *vlen > (uint64_t) (limit - p))
		return false;
	*kp = p;
	return true;
}

static inline int
compare(const tides_block_iter *it, const uint8_t *a, size_t alen,
		const uint8_t *b, size_t blen)
{
	if (it->ikey)
		return tides_ikey_cmp(a, alen, b, blen);
	return tides_ukey_cmp(a, alen, b, blen);
}

/* decode the entry at it->next into the current position */
static bool
parse_next(tides_block_iter *it)
{
	uint32_t	off = it->next;
	uint32_t	shared,
				unshared,
				vlen;
	const uint8_t *kp;

	if (off >= it->restarts)
	{
		it->valid = false;
		it->cur = it->next = it->restarts;
		return false;
	}
	if (!decode_entry(it, off, &shared, &unshared, &vlen, &kp))
	{
		corrupt(it, "malformed entry");
		return false;
	}
	if (shared > it->klen)
	{
		corrupt(it, "shared key prefix longer than previous key");
		return false;
	}
	if (shared == 0)
	{
		/* stored whole: return it in place */
		it->key = kp;
		it->klen = unshared;
	}
	else
	{
		if (it->key != it->keybuf.data)
		{
			tides_buf_reset(&it->keybuf);
			tides_buf_append(&it->keybuf, it->key, shared);
		}
		else
			it->keybuf.len = shared;
		tides_buf_append(&it->keybuf, kp, unshared);
		if (it->keybuf.oom)
		{
			it->valid = false;
			if (it->err->code == TIDES_OK)
				tides_fail(it->err, TIDES_NO_MEMORY, "out of memory reading %s", it->fname);
			return false;
		}
		it->key = it->keybuf.data;
		it->klen = shared + (size_t) unshared;
	}
	if (it->ikey && !tides_ikey_valid(it->key, it->klen))
	{
		corrupt(it, "malformed internal key");
		return false;
	}
	it->val = kp + unshared;
	it->vlen = vlen;
	it->cur = off;
	it->next = (uint32_t) (it->val + vlen - it->data);
	/* track the restart region for prev() */
	while (it->restart_idx + 1 < it->num_restarts &&
		   tides_get32(it->data + it->restarts + (size_t) (it->restart_idx + 1) * 4) <= off)
		it->restart_idx++;
	it->valid = true;
	return true;
}

static inline bool
seek_to_restart(tides_block_iter *it, uint32_t i)
{
	uint32_t	off = restart_point(it, i);

	if (off == UINT32_MAX)
		return false;
	it->restart_idx = i;
	it->next = off;
	it->key = NULL;
	it->klen = 0;
	return true;
}

void
tides_block_iter_first(tides_block_iter *it)
{
	it->valid = false;
	if (it->restarts == 0)
		return;
	if (seek_to_restart(it, 0))
		parse_next(it);
}

void
tides_block_iter_last(tides_block_iter *it)
{
	it->valid = false;
	if (it->restarts == 0)
		return;
	if (!seek_to_restart(it, it->num_restarts - 1))
		return;
	while (parse_next(it) && it->next < it->restarts)
		;
}

void
tides_block_iter_next(tides_block_iter *it)
{
	if (it->valid)
		parse_next(it);
}

void
tides_block_iter_prev(tides_block_iter *it)
{
	uint32_t	orig = it->cur;
	uint32_t	ri = it->restart_idx;

	if (!it->valid)
		return;
	/* the last restart point strictly before the current entry */
	for (;;)
	{
		uint32_t	off = restart_point(it, ri);

		if (off == UINT32_MAX)
			return;
		if (off < orig)
			break;
		if (ri == 0)
		{
			it->valid = false;
			it->cur = it->next = it->restarts;
			return;
		}
		ri--;
	}
	seek_to_restart(it, ri);
	while (parse_next(it) && it->next < orig)
		;
	if (it->valid && it->next != orig)
		corrupt(it, "entries do not line up");
}

void
tides_block_iter_seek(tides_block_iter *it, const uint8_t *target, size_t tlen)
{
	uint32_t	lo = 0,
				hi;

	it->valid = false;
	if (it->restarts == 0)
		return;
	hi = it->num_restarts - 1;

	/* find the last restart point whose key is < target */
	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo + 1) / 2;
		uint32_t	off = restart_point(it, mid);
		uint32_t	shared,
					unshared,
					vlen;
		const uint8_t *kp;

		if (off == UINT32_MAX)
			return;
		if (!decode_entry(it, off, &shared, &unshared, &vlen, &kp) || shared != 0)
		{
			corrupt(it, "malformed restart entry");
			return;
		}
		if (it->ikey && !tides_ikey_valid(kp, unshared))
		{
			corrupt(it, "malformed internal key");
			return;
		}
		if (compare(it, kp, unshared, target, tlen) < 0)
			lo = mid;
		else
			hi = mid - 1;
	}

	if (!seek_to_restart(it, lo))
		return;
	while (parse_next(it) && compare(it, it->key, it->klen, target, tlen) < 0)
		;
}

/* ---- in-place point lookups */

/* decode an entry header at pos (< limit) from a view */
static inline bool
view_entry(const tides_block_view *v, size_t pos, size_t limit, uint32_t *shared,
		   uint32_t *unshared, uint32_t *vlen, size_t *kpos)
{
	uint8_t		scratch[3 * TIDES_VARINT32_MAX];
	size_t		n = limit - pos < sizeof(scratch) ? limit - pos : sizeof(scratch);
	const uint8_t *hdr = tides_block_view_span(v, pos, n, scratch);
	const uint8_t *p;

	if (hdr == NULL)
		return false;
	if ((p = tides_decode_varint32(hdr, hdr + n, shared)) == NULL ||
		(p = tides_decode_varint32(p, hdr + n, unshared)) == NULL ||
		(p = tides_decode_varint32(p, hdr + n, vlen)) == NULL)
		return false;
	*kpos = pos + (size_t) (p - hdr);
	return (uint64_t) *unshared + *vlen <= limit - *kpos;
}

/* the 32-bit integer at pos of a view, read in place (no memcpy call) unless it spans two pieces */
static inline bool
view_get32(const tides_block_view *v, size_t pos, uint32_t *out)
{
	uint8_t		scratch[4];
	const uint8_t *p = tides_block_view_span(v, pos, 4, scratch);

	if (p == NULL)
		return false;
	*out = tides_get32(p);
	return true;
}

static inline int
view_cmp(bool ikey, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	return ikey ? tides_ikey_cmp(a, alen, b, blen) : tides_ukey_cmp(a, alen, b, blen);
}

tides_view_result
tides_block_view_seek(const tides_block_view *v, bool ikey, const uint8_t *target,
					  size_t tlen, tides_buf *key, tides_buf *val)
{
	uint32_t	nr,
				rpos,			/* a restart's offset */
				lo = 0,
				hi;
	size_t		restarts,
				pos;
	uint32_t	shared,
				unshared,
				vlen;
	size_t		kpos;

	if (v->len < 4 || v->len > UINT32_MAX || !view_get32(v, v->len - 4, &nr))
		return TIDES_VIEW_BAD;
	if (nr == 0 || nr > (v->len - 4) / 4)
		return TIDES_VIEW_BAD;
	restarts = v->len - 4 - (size_t) nr * 4;
	if (restarts == 0)
		return TIDES_VIEW_END;

	/* binary search for the last restart whose key is < target */
	hi = nr - 1;
	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo + 1) / 2;
		const uint8_t *k;

		if (!view_get32(v, restarts + (size_t) mid * 4, &rpos))
			return TIDES_VIEW_BAD;
		pos = rpos;
		if (pos >= restarts || !view_entry(v, pos, restarts, &shared, &unshared, &vlen, &kpos) ||
			shared != 0)
			return TIDES_VIEW_BAD;
		/* the restart key in place when it lies within one piece */
		tides_buf_reset(key);
		if (!tides_buf_reserve(key, unshared) ||
			(k = tides_block_view_span(v, kpos, unshared, key->data)) == NULL)
			return TIDES_VIEW_BAD;
		if (ikey && !tides_ikey_valid(k, unshared))
			return TIDES_VIEW_BAD;
		if (view_cmp(ikey, k, unshared, target, tlen) < 0)
			lo = mid;
		else
			hi = mid - 1;
	}

	/* scan forward from there, rebuilding prefix-compressed keys */
	if (!view_get32(v, restarts + (size_t) lo * 4, &rpos))
		return TIDES_VIEW_BAD;
	pos = rpos;
	tides_buf_reset(key);
	while (pos < restarts)
	{
		if (!view_entry(v, pos, restarts, &shared, &unshared, &vlen, &kpos) ||
			shared > key->len || !tides_buf_reserve(key, unshared))
			return TIDES_VIEW_BAD;
		key->len = shared;
		if (unshared > 0 && !tides_block_view_read(v, kpos, key->data + shared, unshared))
			return TIDES_VIEW_BAD;
		key->len = shared + (size_t) unshared;
		if (ikey && !tides_ikey_valid(key->data, key->len))
			return TIDES_VIEW_BAD;
		if (view_cmp(ikey, key->data, key->len, target, tlen) >= 0)
		{
			tides_buf_reset(val);
			if (!tides_buf_reserve(val, vlen + 1) ||
				!tides_block_view_read(v, kpos + unshared, val->data, vlen))
				return TIDES_VIEW_BAD;
			val->len = vlen;
			return TIDES_VIEW_FOUND;
		}
		pos = kpos + unshared + vlen;
	}
	return TIDES_VIEW_END;
}
