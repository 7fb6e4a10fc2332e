/*
 * tidx_sortkey.c -- the 8-byte prefix a build sorts by: the start of the
 * key with its leading fixed-width columns in a shorter, order-preserving
 * form.
 *
 * A build sorts its entries (tidx_sort.c) first by an 8-byte prefix, one
 * integer comparison, and only when two prefixes are equal by the whole
 * keys -- a cache miss each.  An entry's key encodes each column as a
 * marker byte and, for an integer-like kind, its full width (tidx_encode.c),
 * so its first 8 bytes hold little: for (productid int, customerid int,
 * price int) with values below 10,000 and 100,000 they are a marker, two
 * constant bytes, two bytes of productid, a marker and two nearly constant
 * bytes of customerid -- a few thousand distinct prefixes for millions of
 * entries.  The prefix is therefore the first 8 bytes of a sort key.
 *
 * The sort key re-encodes each leading column of a fixed width n (2, 4 or
 * 8 bytes: the integer-like kinds, dates, times and timestamps) as a header
 * byte and only the bytes that carry information.  Whatever the kind, the
 * encoded value is an n-byte unsigned number u whose order is the column's
 * order (descending columns included: their bytes are inverted).  The code
 * is u's distance from an origin o, an n-byte number of the same kind:
 *
 *   NULL (nulls first)      0x00
 *   u < o                   0x40 - k, then the last k bytes of ~(o - u - 1),
 *                           k the bytes o - u - 1 needs (more bytes: a
 *                           smaller u)
 *   u >= o                  0x80 + k, then the last k bytes of u - o, k the
 *                           bytes u - o needs (more bytes: a larger u)
 *   NULL (nulls last)       0xFF
 *
 * Both distances are below 2^(8n), so k <= n.  With o = 2^(8n-1), the
 * encoding of zero, the code of a small integer is short: u - o is the
 * value itself (the int 9,999 is 0x82 27 0F), and (productid, customerid)
 * fill the first 8 bytes.  Dates and timestamps take as origin the build's
 * transaction start (tidx_sortkey_init): a column of rows loaded in the
 * last hours then needs 4-5 bytes, and the first 8 bytes of (price,
 * dateandtime, ...) tell rows apart to under a millisecond instead of to a
 * quarter of a second.
 *
 * Each column's code is prefix-free (its header gives its length) and sorts
 * as the column's encoding does, so the concatenation of the codes and the
 * rest of the key as it is (the columns after the first of another width
 * and the TID) sorts as the key; its first 8 bytes, zero-padded, never
 * order two keys against their order (a < b gives prefix(a) <= prefix(b)),
 * which is all the sort needs: equal prefixes fall back to the keys.  Every
 * participant of a parallel build uses the leader's origins (tidx_build.c),
 * so their runs merge by the same prefixes.
 */
#include "postgres.h"

#include "utils/date.h"

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

/* the n-byte big-endian number at p */
static uint64
get_be(const uint8 *p, int n)
{
	uint64		u = 0;

	for (int i = 0; i < n; i++)
		u = (u << 8) | p[i];
	return u;
}

/* how many bytes v needs (0 for 0) */
static int
bytes_needed(uint64 v)
{
	int			k = 0;

	while (v != 0)
	{
		k++;
		v >>= 8;
	}
	return k;
}

/* col's encoded n-byte value of v (a Datum of its type), as a number */
static uint64
encoded(const TidxCol *col, Datum v, int n)
{
	StringInfoData buf;
	uint64		u;

	initStringInfo(&buf);
	tidx_encode_column(&buf, col, v, false);
	Assert(buf.len == 1 + n);
	u = get_be((const uint8 *) buf.data + 1, n);
	pfree(buf.data);
	return u;
}

void
tidx_sortkey_init(TidxSortKey *sk, const TidxDesc *d, TimestampTz near)
{
	int			n;

	sk->ncols = 0;
	while (sk->ncols < d->nkeys && (n = fixed_width(d->cols[sk->ncols].kind)) > 0)
	{
		const TidxCol *col = &d->cols[sk->ncols];

		sk->widths[sk->ncols] = (uint8) n;
		switch (col->kind)
		{
			case TK_TIMESTAMP:
			case TK_TIMESTAMPTZ:
				/* a timestamp without time zone is off by the zone: still near */
				sk->origins[sk->ncols] = encoded(col, Int64GetDatum(near), n);
				break;
			case TK_DATE:
				sk->origins[sk->ncols] = encoded(col, DateADTGetDatum((DateADT) (near / USECS_PER_DAY)), n);
				break;
			default:
				sk->origins[sk->ncols] = UINT64CONST(1) << (8 * n - 1);
				break;
		}
		sk->ncols++;
	}
}

uint64
tidx_sortkey_prefix(const uint8 *key, size_t klen, const TidxSortKey *sk)
{
	uint8		out[16];		/* under 8 bytes, then one column's code (at most 9) */
	int			n = 0;
	size_t		off = 0;
	uint64		prefix = 0;

	for (int i = 0; i < sk->ncols && n < 8; i++)
	{
		int			w = sk->widths[i];
		uint64		o = sk->origins[i];
		uint64		u,
					dist;
		int			k;

		Assert(off < klen);
		if (key[off] != TIDX_VALUE)
		{
			Assert(key[off] == TIDX_NULL_FIRST || key[off] == TIDX_NULL_LAST);
			out[n++] = key[off] == TIDX_NULL_FIRST ? SK_NULL_FIRST : SK_NULL_LAST;
			off++;
			continue;
		}
		Assert(w <= 8 && off + 1 + w <= klen);
		u = get_be(key + off + 1, w);
		off += 1 + w;
		/* below the origin: the complement of the distance less one, so more bytes sort first */
		dist = u >= o ? u - o : o - u - 1;
		k = bytes_needed(dist);
		Assert(k <= w);
		out[n++] = u >= o ? SK_HIGH_BASE + k : SK_LOW_BASE - k;
		for (int j = 0; j < k; j++)
		{
			uint8		byte = (uint8) (dist >> (8 * (k - 1 - j)));

			out[n++] = u >= o ? byte : (uint8) ~byte;
		}
	}
	/* then the rest of the key as it is */
	Assert(off <= klen);
	while (n < 8 && off < klen)
		out[n++] = key[off++];
	for (int i = 0; i < 8; i++)
		prefix = (prefix << 8) | (i < n ? out[i] : 0);
	return prefix;
}
