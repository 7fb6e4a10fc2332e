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
 * dateandtime, ...) tell rows apart to the millisecond instead of to a
 * quarter of a second.  That matters beyond the ties: PostgreSQL's bytea
 * sort gives up abbreviated keys for good when, early in the input, fewer
 * than a fifth of them are distinct (varstr_abbrev_abort), and the rows of
 * a load come in the order they were inserted, most of a quarter second
 * apart -- with the plain encoding such an index sorted by full
 * comparisons only.
 *
 * Each column's code is prefix-free (its header gives its length) and sorts
 * as the column's encoding does, so the concatenation of the codes and the
 * rest of the key as it is (the columns after the first of another width
 * and the TID) sorts as the key.  Decoding, with the same origins, gives
 * back the key exactly: every participant of a parallel build uses the
 * leader's (tidx_build.c).
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

void
tidx_sortkey_encode(StringInfo out, const uint8 *key, size_t klen, const TidxSortKey *sk)
{
	size_t		off = 0;

	for (int i = 0; i < sk->ncols; i++)
	{
		int			n = sk->widths[i];
		uint64		o = sk->origins[i];
		uint64		u,
					dist;
		uint8		b[8];
		int			k;

		Assert(off < klen);
		if (key[off] != TIDX_VALUE)
		{
			Assert(key[off] == TIDX_NULL_FIRST || key[off] == TIDX_NULL_LAST);
			tidx_put_byte(out, (key[off] == TIDX_NULL_FIRST ? SK_NULL_FIRST : SK_NULL_LAST));
			off++;
			continue;
		}
		Assert(n <= (int) sizeof(b) && off + 1 + n <= klen);
		u = get_be(key + off + 1, n);
		off += 1 + n;
		/* below the origin: the complement of the distance less one, so more bytes sort first */
		dist = u >= o ? u - o : o - u - 1;
		k = bytes_needed(dist);
		Assert(k <= n);
		tidx_put_byte(out, (u >= o ? SK_HIGH_BASE + k : SK_LOW_BASE - k));
		for (int j = 0; j < k; j++)
		{
			uint8		byte = (uint8) (dist >> (8 * (k - 1 - j)));

			b[j] = u >= o ? byte : (uint8) ~byte;
		}
		tidx_put_bytes(out, (const char *) b, k);
	}
	Assert(off <= klen);
	tidx_put_bytes(out, (const char *) key + off, klen - off);
}

void
tidx_sortkey_decode(StringInfo out, const uint8 *skey, size_t sklen, const TidxSortKey *sk)
{
	size_t		off = 0;

	for (int i = 0; i < sk->ncols; i++)
	{
		int			n = sk->widths[i];
		uint64		o = sk->origins[i];
		uint64		limit = n == 8 ? PG_UINT64_MAX : (UINT64CONST(1) << (8 * n)) - 1;
		uint64		dist,
					u;
		uint8		h;
		uint8		b[8];
		int			k;

		if (off >= sklen)
			elog(ERROR, "tides_btree: build sort key of %zu bytes ends in column %d", sklen, i + 1);
		h = skey[off++];
		if (h == SK_NULL_FIRST || h == SK_NULL_LAST)
		{
			tidx_put_byte(out, (h == SK_NULL_FIRST ? TIDX_NULL_FIRST : TIDX_NULL_LAST));
			continue;
		}
		k = h >= SK_HIGH_BASE ? h - SK_HIGH_BASE : SK_LOW_BASE - h;
		if (k < 0 || k > n || off + k > sklen)
			elog(ERROR, "tides_btree: malformed build sort key (header 0x%02x in column %d)", h, i + 1);
		dist = get_be(skey + off, k);
		off += k;
		if (h < SK_HIGH_BASE)
			dist = ~dist & (k == 8 ? PG_UINT64_MAX : (UINT64CONST(1) << (8 * k)) - 1);
		/* the distance must lead back into the column's n bytes */
		if (h >= SK_HIGH_BASE ? dist > limit - o : dist >= o)
			elog(ERROR, "tides_btree: malformed build sort key (distance in column %d)", i + 1);
		u = h >= SK_HIGH_BASE ? o + dist : o - dist - 1;
		for (int j = 0; j < n; j++)
			b[j] = (uint8) (u >> (8 * (n - 1 - j)));
		tidx_put_byte(out, TIDX_VALUE);
		tidx_put_bytes(out, (const char *) b, n);
	}
	tidx_put_bytes(out, (const char *) skey + off, sklen - off);
}
