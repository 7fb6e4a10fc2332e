/*
 * tidx_sortkey.c -- the key a build sorts by: its leading fixed-width
 * columns in a shorter, order-preserving form.
 *
 * A build sorts its entries as bytea (tidx_build.c), and PostgreSQL's sort
 * compares bytea first by an abbreviated key: the first 8 bytes.  An
 * entry's key encodes each column as a marker byte and, for an integer-like
 * kind, its full width (tidx_encode.c), so those 8 bytes hold little: for
 * (productid int, customerid int, price int) with values below 10,000 and
 * 100,000 they are a marker, two constant bytes, two bytes of productid, a
 * marker and two nearly constant bytes of customerid -- a few thousand
 * distinct prefixes for millions of entries, and nearly every comparison
 * falls through to the full keys, a cache miss each.
 *
 * The sort key re-encodes each leading column of a fixed width n (2, 4 or
 * 8 bytes: the integer-like kinds, dates, times and timestamps) as a header
 * byte and only the bytes that carry information.  Whatever the kind, the
 * encoded value is an n-byte unsigned number u whose order is the column's
 * order (descending columns included: their bytes are inverted).
 *
 *   NULL (nulls first)      0x00
 *   u with its top bit 0    0x40 - k, then the last k bytes of u with the
 *                           top bit set, k counted past leading 0xFF bytes
 *                           (more bytes left: a smaller u)
 *   u with its top bit 1    0x80 + k, then the last k bytes of u with the
 *                           top bit cleared, k counted past leading zeros
 *                           (more bytes left: a larger u)
 *   NULL (nulls last)       0xFF
 *
 * Each column's code is prefix-free (its header gives its length) and sorts
 * as the column's encoding does, so the concatenation of the codes and the
 * rest of the key as it is (the columns after the first of another width
 * and the TID) sorts as the key.  The int 9,999 of the example is 0x82 27 0F;
 * (productid, customerid) fill the first 8 bytes.  Decoding gives back the
 * key exactly.
 */
#include "postgres.h"

#include "index/tidx.h"

#define SK_NULL_FIRST	0x00
#define SK_LOW_BASE		0x40	/* 0x40 - k: top bit 0 */
#define SK_HIGH_BASE	0x80	/* 0x80 + k: top bit 1 */
#define SK_NULL_LAST	0xFF

static int
fixed_width(TidxKind kind)
{
	switch (kind)
	{
		case TK_INT2:
			return 2;
		case TK_INT4:
		case TK_OID:
		case TK_DATE:
			return 4;
		case TK_INT8:
		case TK_MONEY:
		case TK_TIME:
		case TK_TIMESTAMP:
		case TK_TIMESTAMPTZ:
			return 8;
		default:
			return 0;
	}
}

int
tidx_sortkey_columns(const TidxDesc *d, uint8 *widths)
{
	int			n = 0;

	while (n < d->nkeys && (widths[n] = (uint8) fixed_width(d->cols[n].kind)) > 0)
		n++;
	return n;
}

void
tidx_sortkey_encode(StringInfo out, const uint8 *key, size_t klen, int ncols, const uint8 *widths)
{
	size_t		off = 0;

	for (int i = 0; i < ncols; i++)
	{
		int			n = widths[i];
		uint8		b[8];
		int			z = 0;
		bool		high;

		Assert(off < klen);
		if (key[off] != TIDX_VALUE)
		{
			Assert(key[off] == TIDX_NULL_FIRST || key[off] == TIDX_NULL_LAST);
			appendStringInfoChar(out, (char) (key[off] == TIDX_NULL_FIRST ? SK_NULL_FIRST : SK_NULL_LAST));
			off++;
			continue;
		}
		Assert(n <= (int) sizeof(b) && off + 1 + n <= klen);
		memcpy(b, key + off + 1, n);
		off += 1 + n;
		high = (b[0] & 0x80) != 0;
		/* the top bit goes into the header: what is left are the bytes to drop or keep */
		if (high)
		{
			b[0] &= 0x7F;
			while (z < n && b[z] == 0x00)
				z++;
		}
		else
		{
			b[0] |= 0x80;
			while (z < n && b[z] == 0xFF)
				z++;
		}
		appendStringInfoChar(out, (char) (high ? SK_HIGH_BASE + (n - z) : SK_LOW_BASE - (n - z)));
		appendBinaryStringInfo(out, (const char *) b + z, n - z);
	}
	Assert(off <= klen);
	appendBinaryStringInfo(out, (const char *) key + off, klen - off);
}

void
tidx_sortkey_decode(StringInfo out, const uint8 *sk, size_t sklen, int ncols, const uint8 *widths)
{
	size_t		off = 0;

	for (int i = 0; i < ncols; i++)
	{
		int			n = widths[i];
		uint8		h;
		uint8		b[8];
		int			k;

		if (off >= sklen)
			elog(ERROR, "tides_btree: build sort key of %zu bytes ends in column %d", sklen, i + 1);
		h = sk[off++];
		if (h == SK_NULL_FIRST || h == SK_NULL_LAST)
		{
			appendStringInfoChar(out, (char) (h == SK_NULL_FIRST ? TIDX_NULL_FIRST : TIDX_NULL_LAST));
			continue;
		}
		k = h >= SK_HIGH_BASE ? h - SK_HIGH_BASE : SK_LOW_BASE - h;
		if (k < 0 || k > n || off + k > sklen)
			elog(ERROR, "tides_btree: malformed build sort key (header 0x%02x in column %d)", h, i + 1);
		memset(b, h >= SK_HIGH_BASE ? 0x00 : 0xFF, n - k);
		memcpy(b + n - k, sk + off, k);
		off += k;
		if (h >= SK_HIGH_BASE)
			b[0] |= 0x80;
		else
			b[0] &= 0x7F;
		appendStringInfoChar(out, TIDX_VALUE);
		appendBinaryStringInfo(out, (const char *) b, n);
	}
	appendBinaryStringInfo(out, (const char *) sk + off, sklen - off);
}
