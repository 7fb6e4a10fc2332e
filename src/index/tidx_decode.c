/*
 * tidx_decode.c -- key-only entries: an entry's IndexTuple formed from its key.
 *
 * An entry's value is its IndexTuple (tidx.h), which repeats every column
 * the key already holds.  For an index on a few integers that value was
 * about 40% of the entry's bytes, carried twice through the memtable, the
 * log, every SSTable, the block cache and every compaction.  When each key
 * column's encoding gives the value back exactly -- not only its order --
 * and the index has no INCLUDE columns (whose values are not in the key),
 * the entry stores no value at all, and the few readers that want the tuple
 * (index-only scans, scan keys the key intervals do not enforce, the
 * duplicate report of a unique build, tides_verify_index) form it from the
 * key.
 *
 * Exact encodings: the integers and what is stored as one (int2, int4,
 * int8, money, date, time, timestamp, timestamptz), oid, bool, "char",
 * uuid, and strings stored as their bytes (bytea, and text, varchar, name
 * or text_pattern_ops under a byte-order collation).  Not exact, so such an
 * index keeps storing values: float4/float8 (-0 and +0 encode alike, NaN
 * payloads fold), numeric (display scale), char(n) (trailing spaces),
 * interval (1 mon = 30 days), enum (sort order), timetz (kept out for
 * want of a test), and every collation's sort key.
 *
 * Which entries have a value is decided per entry by its length (an
 * IndexTuple is never empty), so an index holds both kinds when entries
 * written before this format meet new ones; readers take either.
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "index/tidx.h"

/* reads a column's value bytes, undoing a DESC column's inversion */
typedef struct KeyReader
{
	const uint8 *p;
	const uint8 *end;
	uint8		flip;			/* 0xFF for DESC columns */
} KeyReader;

static bool
read_bytes(KeyReader *r, uint8 *out, int n)
{
	if (r->end - r->p < n)
		return false;
	for (int i = 0; i < n; i++)
		out[i] = r->p[i] ^ r->flip;
	r->p += n;
	return true;
}

/* inverse of tidx_encode.c's put_signed: big-endian, sign bit flipped */
static bool
read_signed(KeyReader *r, int nbytes, int64 *v)
{
	uint8		b[8];
	uint64		u = 0;
	int			shift = 64 - nbytes * 8;

	if (!read_bytes(r, b, nbytes))
		return false;
	for (int i = 0; i < nbytes; i++)
		u = (u << 8) | b[i];
	u ^= UINT64CONST(1) << (nbytes * 8 - 1);
	/* sign-extend from nbytes */
	*v = (int64) (u << shift) >> shift;
	return true;
}

/* inverse of put_escaped: 0x00 0xFF is a 0x00 byte, 0x00 0x01 the end */
static bool
read_escaped(KeyReader *r, StringInfo out)
{
	for (;;)
	{
		uint8		c;

		if (!read_bytes(r, &c, 1))
			return false;
		if (c != 0)
		{
			tidx_put_byte(out, c);
			continue;
		}
		if (!read_bytes(r, &c, 1))
			return false;
		if (c == 0x01)
			return true;
		if (c != 0xFF)
			return false;
		tidx_put_byte(out, '\0');
	}
}

bool
tidx_col_decodable(const TidxCol *col)
{
	switch (col->kind)
	{
		case TK_INT2:
		case TK_INT4:
		case TK_INT8:
		case TK_MONEY:
		case TK_OID:
		case TK_BOOL:
		case TK_CHAR:
		case TK_UUID:
		case TK_DATE:
		case TK_TIME:
		case TK_TIMESTAMP:
		case TK_TIMESTAMPTZ:
			return true;
		case TK_BYTEA:
		case TK_TEXT:
		case TK_TEXT_PATTERN:
		case TK_NAME:
			return col->coll_mode == TC_BYTES;
		default:
			return false;
	}
}

/* one non-NULL value of a decodable column */
static bool
decode_value(KeyReader *r, const TidxCol *col, Datum *out)
{
	int64		v;
	uint8		b;

	switch (col->kind)
	{
		case TK_INT2:
			if (!read_signed(r, 2, &v))
				return false;
			*out = Int16GetDatum((int16) v);
			return true;
		case TK_INT4:
			if (!read_signed(r, 4, &v))
				return false;
			*out = Int32GetDatum((int32) v);
			return true;
		case TK_DATE:
			if (!read_signed(r, 4, &v))
				return false;
			*out = DateADTGetDatum((DateADT) v);
			return true;
		case TK_INT8:
		case TK_MONEY:
		case TK_TIME:
		case TK_TIMESTAMP:
		case TK_TIMESTAMPTZ:
			/* all int64 datums (Cash, TimeADT, Timestamp, TimestampTz) */
			if (!read_signed(r, 8, &v))
				return false;
			*out = Int64GetDatum(v);
			return true;
		case TK_OID:
			{
				uint8		ob[4];

				if (!read_bytes(r, ob, 4))
					return false;
				*out = ObjectIdGetDatum(((Oid) ob[0] << 24) | ((Oid) ob[1] << 16) |
										((Oid) ob[2] << 8) | ob[3]);
				return true;
			}
		case TK_BOOL:
			if (!read_bytes(r, &b, 1) || b > 1)
				return false;
			*out = BoolGetDatum(b != 0);
			return true;
		case TK_CHAR:
			if (!read_bytes(r, &b, 1))
				return false;
			*out = CharGetDatum((char) b);
			return true;
		case TK_UUID:
			{
				pg_uuid_t  *u = palloc(sizeof(pg_uuid_t));

				if (!read_bytes(r, u->data, UUID_LEN))
					return false;
				*out = UUIDPGetDatum(u);
				return true;
			}
		case TK_BYTEA:
		case TK_TEXT:
		case TK_TEXT_PATTERN:
		case TK_NAME:
			{
				StringInfoData s;

				initStringInfo(&s);
				if (!read_escaped(r, &s))
					return false;
				if (col->kind == TK_NAME)
				{
					Name		n;

					if (s.len >= NAMEDATALEN || memchr(s.data, 0, s.len) != NULL)
						return false;
					n = palloc0(NAMEDATALEN);
					memcpy(NameStr(*n), s.data, s.len);
					*out = NameGetDatum(n);
				}
				else
					*out = PointerGetDatum(cstring_to_text_with_len(s.data, s.len));
				pfree(s.data);
				return true;
			}
		default:
			return false;
	}
}

bool
tidx_decode_prefix(const TidxDesc *d, const uint8 *k, size_t plen, Datum *values, bool *isnull)
{
	KeyReader	r;

	if (plen < 8)
		return false;
	r.p = k + 8;				/* past the tree */
	r.end = k + plen;
	for (int i = 0; i < d->nkeys; i++)
	{
		const TidxCol *col = &d->cols[i];
		uint8		marker;

		Assert(tidx_col_decodable(col));
		r.flip = 0;
		if (!read_bytes(&r, &marker, 1))
			return false;
		if (marker != TIDX_VALUE)
		{
			if (marker != tidx_null_marker(col))
				return false;
			values[i] = (Datum) 0;
			isnull[i] = true;
			continue;
		}
		r.flip = col->desc ? 0xFF : 0;
		if (!decode_value(&r, col, &values[i]))
			return false;
		isnull[i] = false;
	}
	return r.p == r.end;
}

IndexTuple
tidx_entry_value(const TidxDesc *d, Datum *values, bool *isnull, ItemPointer tid)
{
	IndexTuple	itup;

	if (d->key_only)
		return NULL;
	itup = index_form_tuple(RelationGetDescr(d->index), values, isnull);
	itup->t_tid = *tid;
	return itup;
}

bool
tidx_stored_tuple_ok(IndexTuple itup, size_t klen, size_t vlen)
{
	return klen >= 8 + TIDX_TID_LEN && vlen >= sizeof(IndexTupleData) && IndexTupleSize(itup) == vlen;
}

IndexTuple
tidx_entry_tuple(const TidxDesc *d, const uint8 *k, size_t klen, const void *v, size_t vlen)
{
	IndexTuple	itup;

	if (klen < 8 + TIDX_TID_LEN)
		return NULL;
	if (vlen > 0)
	{
		itup = palloc(Max(vlen, sizeof(IndexTupleData)));
		memcpy(itup, v, vlen);
		if (!tidx_stored_tuple_ok(itup, klen, vlen))
		{
			pfree(itup);
			return NULL;
		}
		return itup;
	}
	if (!d->key_only)
		return NULL;			/* this index's entries store their tuples */
	{
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];

		if (!tidx_decode_prefix(d, k, klen - TIDX_TID_LEN, values, isnull))
			return NULL;
		itup = index_form_tuple(RelationGetDescr(d->index), values, isnull);
		tidx_decode_tid(k, klen, &itup->t_tid);
		return itup;
	}
}
