/*
 * tidx_encode.c -- memcomparable encodings of index key values.
 *
 * For every supported b-tree operator class, encode(a) and encode(b)
 * compare with memcmp exactly as the class's comparison function compares
 * a and b, and are equal only when it says "equal".  Each encoding is
 * self-delimiting (no encoding is a proper prefix of another), so a key
 * made of several columns compares column by column.  README.md lists the
 * encodings; the property test in test/index/ checks them against the
 * comparison functions.
 */
#include "postgres.h"

#include <math.h>

#include "access/nbtree.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_enum.h"
#include "catalog/pg_type_d.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "nodes/value.h"
#include "utils/builtins.h"
#include "utils/regproc.h"
#include "parser/parse_coerce.h"
#include "utils/date.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#ifdef USE_ICU
#include <unicode/ucol.h>
#endif

#include "index/tidx.h"

/* ---------------------------------------------------------------- kinds */

TidxKind
tidx_kind_of_cmp_proc(Oid procid)
{
	switch (procid)
	{
		case F_BTINT2CMP:
			return TK_INT2;
		case F_BTINT4CMP:
			return TK_INT4;
		case F_BTINT8CMP:
			return TK_INT8;
		case F_BTOIDCMP:
			return TK_OID;
		case F_BTFLOAT4CMP:
			return TK_FLOAT4;
		case F_BTFLOAT8CMP:
			return TK_FLOAT8;
		case F_NUMERIC_CMP:
			return TK_NUMERIC;
		case F_BTBOOLCMP:
			return TK_BOOL;
		case F_BTCHARCMP:
			return TK_CHAR;
		case F_BYTEACMP:
			return TK_BYTEA;
		case F_BTTEXTCMP:
			return TK_TEXT;
		case F_BTNAMECMP:
			return TK_NAME;
		case F_BPCHARCMP:
			return TK_BPCHAR;
		case F_BTTEXT_PATTERN_CMP:
			return TK_TEXT_PATTERN;
		case F_BTBPCHAR_PATTERN_CMP:
			return TK_BPCHAR_PATTERN;
		case F_UUID_CMP:
			return TK_UUID;
		case F_DATE_CMP:
			return TK_DATE;
		case F_TIME_CMP:
			return TK_TIME;
		case F_TIMETZ_CMP:
			return TK_TIMETZ;
		case F_TIMESTAMP_CMP:
			return TK_TIMESTAMP;
		case F_TIMESTAMPTZ_CMP:
			return TK_TIMESTAMPTZ;
		case F_INTERVAL_CMP:
			return TK_INTERVAL;
		case F_ENUM_CMP:
			return TK_ENUM;
		case F_CASH_CMP:
			return TK_MONEY;
		default:
			return TK_INVALID;
	}
}

const char *
tidx_kind_name(TidxKind kind)
{
	static const char *const names[] = {
		"invalid", "int2", "int4", "int8", "oid", "float4", "float8", "numeric",
		"bool", "char", "bytea", "text", "name", "bpchar", "text_pattern",
		"bpchar_pattern", "uuid", "date", "time", "timetz", "timestamp",
		"timestamptz", "interval", "enum", "money"
	};

	if ((int) kind < 0 || (int) kind >= lengthof(names))
		return "?";
	return names[kind];
}

/*
 * Is this libc locale one whose strcoll() is strcmp() on UTF-8, i.e. code
 * point order?  glibc's C.UTF-8 (2.35 and later, Debian 12's 2.36: its
 * LC_COLLATE is "codepoint_collation", and strxfrm() is the identity), and
 * POSIX.UTF-8 where a C library defines it.  Any spelling of the codeset
 * (UTF-8, utf8, ...), no modifier.  Under such a collation in a UTF8
 * database the string's own bytes are its memcomparable key, as under "C";
 * varstr_cmp's strcmp tie-break agrees.  test/index/encode_property.sh
 * checks it, also with C.UTF-8 as a database's default collation.
 */
static bool
codepoint_locale(const char *loc)
{
	const char *dot;
	char		cs[16];
	int			n = 0;

	if (loc == NULL || (dot = strchr(loc, '.')) == NULL)
		return false;
	if (!((dot - loc == 1 && loc[0] == 'C') || (dot - loc == 5 && strncmp(loc, "POSIX", 5) == 0)))
		return false;
	for (const char *p = dot + 1; *p; p++)
	{
		if (*p == '-' || *p == '_')
			continue;
		if (n == sizeof(cs) - 1)
			return false;
		cs[n++] = pg_ascii_tolower((unsigned char) *p);
	}
	cs[n] = '\0';
	return strcmp(cs, "utf8") == 0;
}

/* the LC_COLLATE of a libc collation (the database's for the default one) */
static bool
collation_is_codepoint(Oid collation)
{
	HeapTuple	tup;
	Datum		d;
	bool		isnull;
	bool		result = false;

	if (GetDatabaseEncoding() != PG_UTF8)
		return false;
	if (collation == DEFAULT_COLLATION_OID)
		return codepoint_locale(GetConfigOption("lc_collate", false, false));
	tup = SearchSysCache1(COLLOID, ObjectIdGetDatum(collation));
	if (!HeapTupleIsValid(tup))
		return false;
	if (((Form_pg_collation) GETSTRUCT(tup))->collprovider == COLLPROVIDER_LIBC)
	{
		d = SysCacheGetAttr(COLLOID, tup, Anum_pg_collation_collcollate, &isnull);
		result = !isnull && codepoint_locale(TextDatumGetCString(d));
	}
	ReleaseSysCache(tup);
	return result;
}

static bool
kind_is_collated(TidxKind kind)
{
	return kind == TK_TEXT || kind == TK_NAME || kind == TK_BPCHAR;
}

bool
tidx_col_init(TidxCol *col, Oid cmpproc, Oid typid, Oid collation,
			  bool desc, bool nulls_first, int flags, const char *what)
{
	bool		for_build = (flags & TIDX_COL_ERROR) != 0;

	memset(col, 0, sizeof(*col));
	col->kind = tidx_kind_of_cmp_proc(cmpproc);
	col->typid = typid;
	col->collation = collation;
	col->desc = desc;
	col->nulls_first = nulls_first;
	if (col->kind == TK_INVALID)
	{
		if (for_build)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("access method \"tides_btree\" does not support type %s",
							format_type_be(typid)),
					 errdetail("Index column \"%s\" compares with %s, which has no memcomparable encoding.",
							   what, format_procedure(cmpproc))));
		return false;
	}
	if (!kind_is_collated(col->kind))
	{
		col->coll_mode = (col->kind == TK_BYTEA || col->kind == TK_TEXT_PATTERN ||
						  col->kind == TK_BPCHAR_PATTERN) ? TC_BYTES : TC_NONE;
		return true;
	}
	if (!OidIsValid(collation))
	{
		if (for_build)
			ereport(ERROR,
					(errcode(ERRCODE_INDETERMINATE_COLLATION),
					 errmsg("could not determine which collation to use for index column \"%s\"", what)));
		return false;
	}
	if (lc_collate_is_c(collation))
	{
		col->coll_mode = TC_BYTES;
		return true;
	}
	col->locale = pg_newlocale_from_collation(collation);
	if (col->locale && !col->locale->deterministic)
	{
		if (for_build)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("access method \"tides_btree\" does not support nondeterministic collation \"%s\"",
							get_collation_name(collation)),
					 errdetail("Index column \"%s\": equal strings under this collation need not have equal bytes, so they have no memcomparable encoding.",
							   what),
					 errhint("Use a deterministic collation for the column, or a btree index.")));
		return false;
	}
	if (col->locale && col->locale->provider == COLLPROVIDER_ICU)
	{
#ifdef USE_ICU
		col->coll_mode = TC_ICU;
		return true;
#else
		if (for_build)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("access method \"tides_btree\" does not support ICU collation \"%s\" in this build",
							get_collation_name(collation))));
		return false;
#endif
	}
	if (collation_is_codepoint(collation))
	{
		col->coll_mode = TC_BYTES;
		return true;
	}
	if (!tidx_trust_strxfrm && !(flags & TIDX_COL_ANY_LIBC))
	{
		/*
		 * glibc's strxfrm() does not always order as its strcoll() does
		 * (PostgreSQL does not use it for that reason; the property test
		 * finds such pairs, e.g. '9ä-@' and '-!9.å' under en_US), and an
		 * index ordered by the one would give wrong answers to comparisons
		 * made with the other.
		 */
		if (flags & TIDX_COL_ERROR)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("access method \"tides_btree\" does not support libc collation \"%s\"",
							get_collation_name(collation)),
					 errdetail("Index column \"%s\": the C library's strxfrm() does not always order strings as its strcoll() does.",
							   what),
					 errhint("Use \"C\", \"C.UTF-8\" or an ICU collation (for example \"und-x-icu\") for the column, or a btree index.")));
		return false;
	}
	col->coll_mode = TC_LIBC;
	return true;
}

/* ------------------------------------------------------------ primitives */

static inline void
put_be(StringInfo buf, uint64 v, int nbytes)
{
	char		b[8];

	for (int i = nbytes - 1; i >= 0; i--)
	{
		b[i] = (char) (v & 0xFF);
		v >>= 8;
	}
	tidx_put_bytes(buf, b, nbytes);
}

/* signed integers: flip the sign bit, big-endian */
static inline void
put_signed(StringInfo buf, int64 v, int nbytes)
{
	uint64		u = (uint64) v;

	u ^= UINT64CONST(1) << (nbytes * 8 - 1);
	if (nbytes < 8)
		u &= (UINT64CONST(1) << (nbytes * 8)) - 1;
	put_be(buf, u, nbytes);
}

static void
put_float8(StringInfo buf, float8 f)
{
	uint64		bits;

	if (isnan(f))
		bits = UINT64CONST(0x7FF8000000000000);	/* every NaN is one value, above +Inf */
	else
	{
		if (f == 0.0)
			f = 0.0;			/* -0 == +0 */
		memcpy(&bits, &f, sizeof(bits));
	}
	if (bits & (UINT64CONST(1) << 63))
		bits = ~bits;
	else
		bits |= UINT64CONST(1) << 63;
	put_be(buf, bits, 8);
}

static void
put_float4(StringInfo buf, float4 f)
{
	uint32		bits;

	if (isnan(f))
		bits = 0x7FC00000;
	else
	{
		if (f == 0.0f)
			f = 0.0f;
		memcpy(&bits, &f, sizeof(bits));
	}
	if (bits & 0x80000000)
		bits = ~bits;
	else
		bits |= 0x80000000;
	put_be(buf, bits, 4);
}

/*
 * Byte strings: 0x00 becomes 0x00 0xFF, and 0x00 0x01 ends the string, so
 * the encoding orders like memcmp-then-length and is self-delimiting.
 */
static void
put_escaped(StringInfo buf, const char *p, size_t len)
{
	const char *end = p + len;

	while (p < end)
	{
		const char *z = memchr(p, 0, end - p);
		size_t		n = z ? (size_t) (z - p) : (size_t) (end - p);

		tidx_put_bytes(buf, p, n);
		p += n;
		if (z)
		{
			tidx_put_bytes(buf, "\0\xff", 2);
			p++;
		}
	}
	tidx_put_bytes(buf, "\0\x01", 2);
}

/* ---------------------------------------------------------------- numeric */

/*
 * numeric's on-disk layout (src/backend/utils/adt/numeric.c, PostgreSQL 15);
 * numeric.c keeps these macros private.
 */
#define NUM_SIGN_MASK		0xC000
#define NUM_NEG				0x4000
#define NUM_SHORT			0x8000
#define NUM_SPECIAL			0xC000
#define NUM_NAN				0xC000
#define NUM_PINF			0xD000
#define NUM_NINF			0xF000
#define NUM_SHORT_SIGN_MASK	0x2000
#define NUM_SHORT_WEIGHT_SIGN_MASK 0x0040
#define NUM_SHORT_WEIGHT_MASK 0x003F

/*
 * class byte, then for finite non-zero values: weight of the first digit
 * (2 bytes, offset 0x8000) and base-10000 digits as (digit + 1) in 2 bytes,
 * leading and trailing zero digits dropped (so 1.0 == 1.00 == 1), ended by
 * 0x0000; negative values invert all of that.
 */
#define NCLASS_NINF		0x01
#define NCLASS_NEG		0x02
#define NCLASS_ZERO		0x03
#define NCLASS_POS		0x04
#define NCLASS_PINF		0x05
#define NCLASS_NAN		0x06

static void
put_numeric(StringInfo buf, Numeric num)
{
	uint16		header;
	const int16 *digits;
	int			ndigits;
	int			weight;
	bool		neg;
	int			first,
				last;
	int			start;

	memcpy(&header, VARDATA_ANY(num), sizeof(uint16));
	if ((header & NUM_SIGN_MASK) == NUM_SPECIAL)
	{
		char		c;

		if (header == NUM_NAN)
			c = NCLASS_NAN;
		else if (header == NUM_PINF)
			c = NCLASS_PINF;
		else if (header == NUM_NINF)
			c = NCLASS_NINF;
		else
			elog(ERROR, "unexpected numeric header %04x", header);
		tidx_put_byte(buf, c);
		return;
	}
	if (header & NUM_SHORT)
	{
		neg = (header & NUM_SHORT_SIGN_MASK) != 0;
		weight = (int) (header & NUM_SHORT_WEIGHT_MASK);
		if (header & NUM_SHORT_WEIGHT_SIGN_MASK)
			weight |= ~NUM_SHORT_WEIGHT_MASK;
		digits = (const int16 *) ((const char *) VARDATA_ANY(num) + sizeof(uint16));
		ndigits = (VARSIZE_ANY_EXHDR(num) - sizeof(uint16)) / sizeof(int16);
	}
	else
	{
		int16		w;

		neg = (header & NUM_SIGN_MASK) == NUM_NEG;
		memcpy(&w, (const char *) VARDATA_ANY(num) + sizeof(uint16), sizeof(int16));
		weight = w;
		digits = (const int16 *) ((const char *) VARDATA_ANY(num) + 2 * sizeof(uint16));
		ndigits = (VARSIZE_ANY_EXHDR(num) - 2 * sizeof(uint16)) / sizeof(int16);
	}
	/* normalise: no leading or trailing zero digits */
	first = 0;
	while (first < ndigits && digits[first] == 0)
		first++;
	last = ndigits - 1;
	while (last >= first && digits[last] == 0)
		last--;
	if (first > last)
	{
		tidx_put_byte(buf, NCLASS_ZERO);
		return;
	}
	weight -= first;
	tidx_put_byte(buf, neg ? NCLASS_NEG : NCLASS_POS);
	start = buf->len;
	put_be(buf, (uint64) (weight + 0x8000) & 0xFFFF, 2);
	for (int i = first; i <= last; i++)
	{
		int16		dig;

		memcpy(&dig, &digits[i], sizeof(int16));
		put_be(buf, (uint64) (dig + 1), 2);
	}
	put_be(buf, 0, 2);
	if (neg)
	{
		for (int i = start; i < buf->len; i++)
			buf->data[i] = ~buf->data[i];
	}
}

/* ----------------------------------------------------------------- strings */

static void
put_collated(StringInfo buf, const TidxCol *col, const char *s, size_t len)
{
	if (col->coll_mode == TC_BYTES)
	{
		put_escaped(buf, s, len);
		return;
	}
	if (col->coll_mode == TC_LIBC)
	{
		char		sbuf[256];
		char	   *str = len < sizeof(sbuf) ? sbuf : palloc(len + 1);
		char		kbuf[1024];
		char	   *key = kbuf;
		size_t		cap = sizeof(kbuf);
		size_t		n;

		memcpy(str, s, len);
		str[len] = '\0';
		for (;;)
		{
#ifdef HAVE_LOCALE_T
			if (col->locale)
				n = strxfrm_l(key, str, cap, col->locale->info.lt);
			else
#endif
				n = strxfrm(key, str, cap);
			if (n < cap)
				break;
			cap = n + 1;
			key = key == kbuf ? palloc(cap) : repalloc(key, cap);
		}
		put_escaped(buf, key, n);
		if (key != kbuf)
			pfree(key);
		if (str != sbuf)
			pfree(str);
	}
#ifdef USE_ICU
	else if (col->coll_mode == TC_ICU)
	{
		UChar	   *uchar;
		int32_t		ulen = icu_to_uchar(&uchar, s, len);
		uint8_t		kbuf[1024];
		uint8_t    *key = kbuf;
		int32_t		cap = sizeof(kbuf);
		int32_t		n;

		for (;;)
		{
			n = ucol_getSortKey(col->locale->info.icu.ucol, uchar, ulen, key, cap);
			if (n <= cap)
				break;
			cap = n;
			key = key == kbuf ? palloc(cap) : repalloc(key, cap);
		}
		/* the sort key ends with a 0 byte, its only one */
		put_escaped(buf, (const char *) key, n > 0 ? n - 1 : 0);
		if (key != kbuf)
			pfree(key);
		pfree(uchar);
	}
#endif
	else
		elog(ERROR, "unexpected collation mode %d", col->coll_mode);
	/* equal under the collation: the bytes decide, as varstr_cmp does */
	put_escaped(buf, s, len);
}

static size_t
bpchar_true_len(const char *s, size_t len)
{
	while (len > 0 && s[len - 1] == ' ')
		len--;
	return len;
}

/* --------------------------------------------------------------- encoding */

void
tidx_encode_value(StringInfo buf, const TidxCol *col, Datum value)
{
	switch (col->kind)
	{
		case TK_INT2:
			put_signed(buf, DatumGetInt16(value), 2);
			break;
		case TK_INT4:
			put_signed(buf, DatumGetInt32(value), 4);
			break;
		case TK_INT8:
		case TK_MONEY:
			put_signed(buf, DatumGetInt64(value), 8);
			break;
		case TK_OID:
			put_be(buf, DatumGetObjectId(value), 4);
			break;
		case TK_FLOAT4:
			put_float4(buf, DatumGetFloat4(value));
			break;
		case TK_FLOAT8:
			put_float8(buf, DatumGetFloat8(value));
			break;
		case TK_NUMERIC:
			{
				Numeric		n = DatumGetNumeric(value);

				put_numeric(buf, n);
				if ((Pointer) n != DatumGetPointer(value))
					pfree(n);
				break;
			}
		case TK_BOOL:
			tidx_put_byte(buf, DatumGetBool(value) ? 1 : 0);
			break;
		case TK_CHAR:
			tidx_put_byte(buf, DatumGetChar(value));
			break;
		case TK_BYTEA:
		case TK_TEXT:
		case TK_TEXT_PATTERN:
			{
				text	   *t = DatumGetTextPP(value);

				put_collated(buf, col, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
				if ((Pointer) t != DatumGetPointer(value))
					pfree(t);
				break;
			}
		case TK_BPCHAR:
		case TK_BPCHAR_PATTERN:
			{
				BpChar	   *t = DatumGetBpCharPP(value);

				put_collated(buf, col, VARDATA_ANY(t),
							 bpchar_true_len(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)));
				if ((Pointer) t != DatumGetPointer(value))
					pfree(t);
				break;
			}
		case TK_NAME:
			{
				const char *s = NameStr(*DatumGetName(value));

				put_collated(buf, col, s, strnlen(s, NAMEDATALEN));
				break;
			}
		case TK_UUID:
			tidx_put_bytes(buf, (const char *) DatumGetUUIDP(value)->data, UUID_LEN);
			break;
		case TK_DATE:
			put_signed(buf, DatumGetDateADT(value), 4);
			break;
		case TK_TIME:
			put_signed(buf, DatumGetTimeADT(value), 8);
			break;
		case TK_TIMETZ:
			{
				TimeTzADT  *t = DatumGetTimeTzADTP(value);

				/* by UTC time, then by zone (timetz_cmp) */
				put_signed(buf, t->time + (int64) t->zone * USECS_PER_SEC, 8);
				put_signed(buf, t->zone, 4);
				break;
			}
		case TK_TIMESTAMP:
			put_signed(buf, DatumGetTimestamp(value), 8);
			break;
		case TK_TIMESTAMPTZ:
			put_signed(buf, DatumGetTimestampTz(value), 8);
			break;
		case TK_INTERVAL:
			{
				Interval   *iv = DatumGetIntervalP(value);
				__int128	span = (__int128) iv->time +
					(__int128) ((int64) iv->month * 30 + iv->day) * USECS_PER_DAY;
				unsigned __int128 u = (unsigned __int128) span ^ ((unsigned __int128) 1 << 127);

				/* interval_cmp: the 128-bit span, months as 30 days */
				put_be(buf, (uint64) (u >> 64), 8);
				put_be(buf, (uint64) u, 8);
				break;
			}
		case TK_ENUM:
			{
				HeapTuple	tup = SearchSysCache1(ENUMOID, value);
				float4		order;

				if (!HeapTupleIsValid(tup))
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
							 errmsg("invalid internal value for enum: %u", DatumGetObjectId(value))));
				order = ((Form_pg_enum) GETSTRUCT(tup))->enumsortorder;
				ReleaseSysCache(tup);
				put_float8(buf, (float8) order);
				break;
			}
		default:
			elog(ERROR, "tides_btree: cannot encode kind %d", col->kind);
	}
}

void
tidx_encode_column(StringInfo buf, const TidxCol *col, Datum value, bool isnull)
{
	int			start;

	if (isnull)
	{
		tidx_put_byte(buf, tidx_null_marker(col));
		return;
	}
	tidx_put_byte(buf, TIDX_VALUE);
	start = buf->len;
	tidx_encode_value(buf, col, value);
	if (col->desc)
	{
		for (int i = start; i < buf->len; i++)
			buf->data[i] = ~buf->data[i];
	}
}

void
tidx_encode_prefix(StringInfo buf, const TidxDesc *d, const Datum *values, const bool *isnull)
{
	uint8		t[8];

	trt_key_put_tree(t, d->tree);
	tidx_put_bytes(buf, (char *) t, 8);
	for (int i = 0; i < d->nkeys; i++)
		tidx_encode_column(buf, &d->cols[i], values[i], isnull[i]);
}

void
tidx_append_tid(StringInfo buf, ItemPointer tid)
{
	put_be(buf, ItemPointerGetBlockNumberNoCheck(tid), 4);
	put_be(buf, ItemPointerGetOffsetNumberNoCheck(tid), 2);
}

void
tidx_decode_tid(const uint8 *key, size_t klen, ItemPointer tid)
{
	const uint8 *p = key + klen - TIDX_TID_LEN;
	BlockNumber blk = ((uint32) p[0] << 24) | ((uint32) p[1] << 16) | ((uint32) p[2] << 8) | p[3];
	OffsetNumber off = (OffsetNumber) ((p[4] << 8) | p[5]);

	ItemPointerSet(tid, blk, off);
}

bool
tidx_prefix_successor(uint8 *p, int *len)
{
	int			n = *len;

	while (n > 0 && p[n - 1] == 0xFF)
		n--;
	if (n == 0)
		return false;
	p[n - 1]++;
	*len = n;
	return true;
}

/* ------------------------------------------------------------- SQL access */

PG_FUNCTION_INFO_V1(tides_index_encode);

/*
 * tides_index_encode(value anyelement, opclass text DEFAULT NULL) -> bytea
 *
 * The ascending encoding of value under the function call's collation,
 * using the comparison function of the named b-tree operator class (by
 * default the type's default class), as a tides_btree index stores it
 * (without the NULL marker).  For tests and for inspecting keys.
 */
Datum
tides_index_encode(PG_FUNCTION_ARGS)
{
	Oid			typid = get_fn_expr_argtype(fcinfo->flinfo, 0);
	Oid			opclass;
	Oid			opfamily;
	Oid			opcintype;
	Oid			cmpproc;
	TidxCol		col;
	StringInfoData buf;
	bytea	   *result;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (!OidIsValid(typid))
		elog(ERROR, "could not determine the argument type");
	if (PG_NARGS() > 1 && !PG_ARGISNULL(1))
	{
		char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(1));

		opclass = get_opclass_oid(BTREE_AM_OID, list_make1(makeString(name)), false);
	}
	else
	{
		opclass = GetDefaultOpClass(typid, BTREE_AM_OID);
		if (!OidIsValid(opclass))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("type %s has no default b-tree operator class", format_type_be(typid))));
	}
	opfamily = get_opclass_family(opclass);
	opcintype = get_opclass_input_type(opclass);
	if (!IsPolymorphicType(opcintype) && !IsBinaryCoercible(typid, opcintype))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("operator class does not accept type %s", format_type_be(typid))));
	cmpproc = get_opfamily_proc(opfamily, opcintype, opcintype, BTORDER_PROC);
	tidx_col_init(&col, cmpproc, typid, PG_GET_COLLATION(), false, false,
				  TIDX_COL_ERROR | TIDX_COL_ANY_LIBC, "value");
	initStringInfo(&buf);
	tidx_encode_value(&buf, &col, PG_GETARG_DATUM(0));
	result = palloc(VARHDRSZ + buf.len);
	SET_VARSIZE(result, VARHDRSZ + buf.len);
	memcpy(VARDATA(result), buf.data, buf.len);
	PG_RETURN_BYTEA_P(result);
}
