/*
 * tidx_scankeys.c -- from an index scan's keys to the key intervals it reads.
 *
 * tidx_build_intervals turns the scan keys into a sorted list of disjoint
 * intervals [lo, hi) over encoded keys: equality (or IS NULL) on leading
 * columns, = ANY arrays as one interval per combination of elements (sorted,
 * deduplicated, at most MAX_INTERVALS), then one column's range.  Keys of
 * the cross-type members of the b-tree families are first brought into the
 * column's type, exactly where possible and conservatively otherwise.  Every
 * key the intervals enforce is marked (its sk set to NULL); the others stay
 * to be evaluated on each entry by the scan (tidx_scan.c), so an interval may be
 * wider than the keys but never narrower.
 */
#include "postgres.h"

#include <math.h>

#include "access/nbtree.h"
#include "catalog/pg_type_d.h"
#include "parser/parse_coerce.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/timestamp.h"

#include "index/tidx.h"

/* at most this many intervals from = ANY arrays; beyond, later columns filter */
#define MAX_INTERVALS 10000

/* ------------------------------------------------------------- conversion */

typedef enum ConvResult
{
	CV_EXACT,					/* *lo == *hi: the value in the column's type */
	CV_APPROX,					/* every column value c: c >= arg => c >= lo, c <= arg => c <= hi */
	CV_ABOVE,					/* arg is greater than every column value */
	CV_BELOW,					/* arg is less than every column value */
	CV_NONE						/* no bound can be derived */
} ConvResult;

static ConvResult
int_conv(int64 a, TidxKind kind, Datum *out)
{
	int64		min,
				max;

	switch (kind)
	{
		case TK_INT2:
			min = PG_INT16_MIN;
			max = PG_INT16_MAX;
			break;
		case TK_INT4:
			min = PG_INT32_MIN;
			max = PG_INT32_MAX;
			break;
		default:
			*out = Int64GetDatum(a);
			return CV_EXACT;
	}
	if (a > max)
		return CV_ABOVE;
	if (a < min)
		return CV_BELOW;
	*out = kind == TK_INT2 ? Int16GetDatum((int16) a) : Int32GetDatum((int32) a);
	return CV_EXACT;
}

#define DAY_SLACK 2				/* more than any UTC offset */

/*
 * Bring a scan key argument of type argtype into the column's type.  Same
 * types are exact; the cross-type members of the b-tree families are
 * converted exactly where possible and conservatively otherwise.
 */
static ConvResult
convert_arg(const TidxCol *col, Oid opcintype, Oid argtype, Datum arg, Datum *lo, Datum *hi)
{
	*lo = *hi = arg;
	if (!OidIsValid(argtype) || argtype == opcintype)
		return CV_EXACT;
	switch (col->kind)
	{
		case TK_INT2:
		case TK_INT4:
		case TK_INT8:
			{
				int64		a;
				ConvResult r;

				if (argtype == INT2OID)
					a = DatumGetInt16(arg);
				else if (argtype == INT4OID)
					a = DatumGetInt32(arg);
				else if (argtype == INT8OID)
					a = DatumGetInt64(arg);
				else
					return CV_NONE;
				r = int_conv(a, col->kind, lo);
				*hi = *lo;
				return r;
			}
		case TK_FLOAT4:
			if (argtype == FLOAT8OID)
			{
				float8		v = DatumGetFloat8(arg);
				float4		f = (float4) v;

				if (isnan(v) || (float8) f == v)
				{
					*lo = *hi = Float4GetDatum(f);
					return CV_EXACT;
				}
				*lo = Float4GetDatum((float8) f > v ? nextafterf(f, -INFINITY) : f);
				*hi = Float4GetDatum((float8) f < v ? nextafterf(f, INFINITY) : f);
				return CV_APPROX;
			}
			return CV_NONE;
		case TK_FLOAT8:
			if (argtype == FLOAT4OID)
			{
				*lo = *hi = Float8GetDatum((float8) DatumGetFloat4(arg));
				return CV_EXACT;
			}
			return CV_NONE;
		case TK_TEXT:
			if (argtype == NAMEOID)
			{
				*lo = *hi = PointerGetDatum(cstring_to_text(NameStr(*DatumGetName(arg))));
				return CV_EXACT;
			}
			return (argtype == VARCHAROID || argtype == TEXTOID) ? CV_EXACT : CV_NONE;
		case TK_NAME:
			if (argtype == TEXTOID || argtype == VARCHAROID)
			{
				text	   *t = DatumGetTextPP(arg);
				Name		n;

				if (VARSIZE_ANY_EXHDR(t) >= NAMEDATALEN ||
					memchr(VARDATA_ANY(t), 0, VARSIZE_ANY_EXHDR(t)) != NULL)
					return CV_NONE;
				n = palloc0(NAMEDATALEN);
				memcpy(NameStr(*n), VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
				*lo = *hi = NameGetDatum(n);
				return CV_EXACT;
			}
			return CV_NONE;
		case TK_DATE:
			if (argtype == TIMESTAMPOID || argtype == TIMESTAMPTZOID)
			{
				int64		ts = DatumGetInt64(arg);
				int64		days;

				if (TIMESTAMP_IS_NOBEGIN(ts))
				{
					*lo = *hi = DateADTGetDatum(DATEVAL_NOBEGIN);
					return CV_EXACT;
				}
				if (TIMESTAMP_IS_NOEND(ts))
				{
					*lo = *hi = DateADTGetDatum(DATEVAL_NOEND);
					return CV_EXACT;
				}
				days = ts / USECS_PER_DAY;
				if (ts < 0 && ts % USECS_PER_DAY != 0)
					days--;
				*lo = DateADTGetDatum((DateADT) Max(days - DAY_SLACK, (int64) PG_INT32_MIN + 1));
				*hi = DateADTGetDatum((DateADT) Min(days + DAY_SLACK + 1, (int64) PG_INT32_MAX - 1));
				return CV_APPROX;
			}
			return CV_NONE;
		case TK_TIMESTAMP:
		case TK_TIMESTAMPTZ:
			if (argtype == DATEOID)
			{
				int			overflow = 0;
				int64		ts;

				if (col->kind == TK_TIMESTAMP)
					ts = date2timestamp_opt_overflow(DatumGetDateADT(arg), &overflow);
				else
					ts = date2timestamptz_opt_overflow(DatumGetDateADT(arg), &overflow);
				if (overflow > 0)
					return CV_ABOVE;
				if (overflow < 0)
					return CV_BELOW;
				*lo = *hi = Int64GetDatum(ts);
				return CV_EXACT;
			}
			if (argtype == TIMESTAMPOID || argtype == TIMESTAMPTZOID)
			{
				int64		ts = DatumGetInt64(arg);
				const int64 slack = DAY_SLACK * USECS_PER_DAY;

				if (TIMESTAMP_NOT_FINITE(ts))
					return CV_EXACT;
				*lo = Int64GetDatum(ts > PG_INT64_MIN + slack + 1 ? ts - slack : PG_INT64_MIN + 1);
				*hi = Int64GetDatum(ts < PG_INT64_MAX - slack - 1 ? ts + slack : PG_INT64_MAX - 1);
				return CV_APPROX;
			}
			return CV_NONE;
		default:
			/* binary-compatible argument types (e.g. varchar for text) */
			return IsBinaryCoercible(argtype, opcintype) ? CV_EXACT : CV_NONE;
	}
}

/* --------------------------------------------------------- bound building */

typedef struct ColBound
{
	/* points: complete column encodings (marker + value), sorted, distinct */
	int			npoints;
	StringInfoData *points;
	TidxFilterKey *point_src;
	bool		has_lo;
	StringInfoData lo;			/* inclusive, in index order */
	bool		has_hi;
	StringInfoData hi;			/* exclusive, in index order */
	bool		nonnull;
	List	   *range_srcs;		/* FilterKeys enforced if this becomes the range column */
	List	   *null_srcs;		/* IS NOT NULL keys */
} ColBound;

static int
cmp_stringinfo(const void *a, const void *b)
{
	const StringInfoData *x = a,
			   *y = b;

	return tidx_cmp_bytes(x->data, x->len, y->data, y->len);
}

/* the column encoding of a value (marker, value, DESC inversion) */
static void
encode_bound(StringInfo out, const TidxCol *col, Datum v)
{
	resetStringInfo(out);
	tidx_encode_column(out, col, v, false);
}

/* successor in place; the encoding always has a byte below 0xFF (the marker) */
static void
succ_stringinfo(StringInfo s)
{
	int			len = s->len;

	if (!tidx_prefix_successor((uint8 *) s->data, &len))
		elog(ERROR, "tides_btree: key bound without successor");
	s->len = len;
	s->data[len] = '\0';
}

static void
add_lo(ColBound *cb, StringInfo cand)
{
	if (!cb->has_lo || tidx_cmp_bytes(cand->data, cand->len, cb->lo.data, cb->lo.len) > 0)
	{
		resetStringInfo(&cb->lo);
		appendBinaryStringInfo(&cb->lo, cand->data, cand->len);
		cb->has_lo = true;
	}
}

static void
add_hi(ColBound *cb, StringInfo cand)
{
	if (!cb->has_hi || tidx_cmp_bytes(cand->data, cand->len, cb->hi.data, cb->hi.len) < 0)
	{
		resetStringInfo(&cb->hi);
		appendBinaryStringInfo(&cb->hi, cand->data, cand->len);
		cb->has_hi = true;
	}
}

/*
 * A value-space bound "column >= v" (is_lower, incl) etc. as index-order
 * [lo, hi) limits, DESC columns reversing the direction.
 */
static void
add_value_bound(ColBound *cb, const TidxCol *col, Datum v, bool is_lower, bool incl)
{
	StringInfoData x;
	bool		index_lower = col->desc ? !is_lower : is_lower;

	initStringInfo(&x);
	encode_bound(&x, col, v);
	if (index_lower)
	{
		/* at least x (inclusive), or above everything that starts with x */
		if (!incl)
			succ_stringinfo(&x);
		add_lo(cb, &x);
	}
	else
	{
		/* below x (exclusive), or up to everything that starts with x */
		if (incl)
			succ_stringinfo(&x);
		add_hi(cb, &x);
	}
	pfree(x.data);
}

static void
add_point_list(ColBound *cb, const TidxCol *col, Datum *vals, int n, TidxFilterKey *src)
{
	cb->points = palloc(sizeof(StringInfoData) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		initStringInfo(&cb->points[i]);
		encode_bound(&cb->points[i], col, vals[i]);
	}
	if (n > 1)
	{
		int			k = 1;

		qsort(cb->points, n, sizeof(StringInfoData), cmp_stringinfo);
		for (int i = 1; i < n; i++)
		{
			if (cmp_stringinfo(&cb->points[i], &cb->points[k - 1]) != 0)
				cb->points[k++] = cb->points[i];
		}
		n = k;
	}
	cb->npoints = n;
	cb->point_src = src;
}

/* x = ANY(array): the elements that convert exactly become the column's points */
static bool
array_eq_to_bound(const TidxCol *c, Oid opcintype, TidxFilterKey *fk, ColBound *cb)
{
	ScanKey		sk = fk->sk;
	Datum	   *vals;
	int			nvals = 0;
	bool		all_exact = true;

	if (cb->npoints > 0)
		return true;			/* another key drives this column */
	vals = palloc(sizeof(Datum) * Max(fk->nelems, 1));
	for (int i = 0; i < fk->nelems; i++)
	{
		Datum		lo,
					hi;
		ConvResult r = convert_arg(c, opcintype, sk->sk_subtype, fk->elems[i], &lo, &hi);

		if (r == CV_EXACT)
			vals[nvals++] = lo;
		else if (r == CV_ABOVE || r == CV_BELOW)
			continue;			/* this element matches nothing */
		else
			all_exact = false;
	}
	if (!all_exact)
		return true;			/* the filter alone decides */
	if (nvals == 0)
		return false;
	add_point_list(cb, c, vals, nvals, fk);
	return true;
}

/*
 * x < ANY(a) is x < max(a), x > ANY(a) is x > min(a): the loosest of the
 * elements' bounds (the filter stays exact anyway).
 */
static bool
array_range_to_bound(const TidxCol *c, Oid opcintype, TidxFilterKey *fk, ColBound *cb)
{
	ScanKey		sk = fk->sk;
	bool		lower_side = sk->sk_strategy == BTGreaterStrategyNumber ||
		sk->sk_strategy == BTGreaterEqualStrategyNumber;
	bool		incl = sk->sk_strategy == BTLessEqualStrategyNumber ||
		sk->sk_strategy == BTGreaterEqualStrategyNumber;
	StringInfoData best;
	bool		have = false;
	bool		best_is_lo = false;

	initStringInfo(&best);
	for (int i = 0; i < fk->nelems; i++)
	{
		Datum		lo,
					hi;
		ConvResult r = convert_arg(c, opcintype, sk->sk_subtype, fk->elems[i], &lo, &hi);
		ColBound	tmp;
		StringInfo	cand;

		if (r == CV_NONE || r == CV_APPROX)
			return true;
		if ((r == CV_ABOVE && !lower_side) || (r == CV_BELOW && lower_side))
		{
			/* satisfied by every non-NULL value */
			cb->range_srcs = lappend(cb->range_srcs, fk);
			return true;
		}
		if (r == CV_ABOVE || r == CV_BELOW)
			continue;			/* never satisfied */
		memset(&tmp, 0, sizeof(tmp));
		initStringInfo(&tmp.lo);
		initStringInfo(&tmp.hi);
		add_value_bound(&tmp, c, lo, lower_side, incl);
		cand = tmp.has_lo ? &tmp.lo : &tmp.hi;
		if (!have || (tmp.has_lo ? cmp_stringinfo(cand, &best) < 0 : cmp_stringinfo(cand, &best) > 0))
		{
			resetStringInfo(&best);
			appendBinaryStringInfo(&best, cand->data, cand->len);
			best_is_lo = tmp.has_lo;
			have = true;
		}
	}
	if (!have)
		return false;
	if (best_is_lo)
		add_lo(cb, &best);
	else
		add_hi(cb, &best);
	cb->range_srcs = lappend(cb->range_srcs, fk);
	return true;
}

/* x op value: a point (=), or one side of a range */
static bool
scalar_to_bound(const TidxCol *c, Oid opcintype, TidxFilterKey *fk, ColBound *cb)
{
	ScanKey		sk = fk->sk;
	Datum		lo,
				hi;
	ConvResult	r = convert_arg(c, opcintype, sk->sk_subtype, sk->sk_argument, &lo, &hi);

	switch (sk->sk_strategy)
	{
		case BTEqualStrategyNumber:
			if (r == CV_ABOVE || r == CV_BELOW)
				return false;
			if (r == CV_EXACT)
			{
				if (cb->npoints == 0)
					add_point_list(cb, c, &lo, 1, fk);
			}
			else if (r == CV_APPROX)
			{
				add_value_bound(cb, c, lo, true, true);
				add_value_bound(cb, c, hi, false, true);
			}
			return true;
		case BTLessStrategyNumber:
		case BTLessEqualStrategyNumber:
			if (r == CV_BELOW)
				return false;
			if (r == CV_ABOVE)
			{
				cb->range_srcs = lappend(cb->range_srcs, fk);
				return true;
			}
			if (r == CV_EXACT || r == CV_APPROX)
				add_value_bound(cb, c, hi, false,
								r == CV_APPROX || sk->sk_strategy == BTLessEqualStrategyNumber);
			if (r == CV_EXACT)
				cb->range_srcs = lappend(cb->range_srcs, fk);
			return true;
		case BTGreaterStrategyNumber:
		case BTGreaterEqualStrategyNumber:
			if (r == CV_ABOVE)
				return false;
			if (r == CV_BELOW)
			{
				cb->range_srcs = lappend(cb->range_srcs, fk);
				return true;
			}
			if (r == CV_EXACT || r == CV_APPROX)
				add_value_bound(cb, c, lo, true,
								r == CV_APPROX || sk->sk_strategy == BTGreaterEqualStrategyNumber);
			if (r == CV_EXACT)
				cb->range_srcs = lappend(cb->range_srcs, fk);
			return true;
		default:
			elog(ERROR, "tides_btree: unexpected strategy %d", sk->sk_strategy);
	}
	return true;
}

/*
 * One scan key into its column's bound; false if no entry can satisfy it.
 * IS NULL is a point (the NULL marker), IS NOT NULL only says the column is
 * not NULL; = ANY, < ANY ... and plain comparisons: the functions above.
 */
static bool
key_to_bound(const TidxDesc *d, TidxFilterKey *fk, ColBound *cb, int col)
{
	ScanKey		sk = fk->sk;
	const TidxCol *c = &d->cols[col];
	Oid			opcintype = d->index->rd_opcintype[col];

	if (sk->sk_flags & SK_SEARCHNULL)
	{
		if (cb->npoints == 0)
		{
			cb->points = palloc(sizeof(StringInfoData));
			initStringInfo(&cb->points[0]);
			appendStringInfoChar(&cb->points[0], (char) tidx_null_marker(c));
			cb->npoints = 1;
			cb->point_src = fk;
		}
		return true;
	}
	cb->nonnull = true;
	if (sk->sk_flags & SK_SEARCHNOTNULL)
	{
		cb->null_srcs = lappend(cb->null_srcs, fk);
		return true;
	}
	if (sk->sk_flags & SK_SEARCHARRAY)
	{
		if (fk->nelems == 0)
			return false;
		if (sk->sk_strategy == BTEqualStrategyNumber)
			return array_eq_to_bound(c, opcintype, fk, cb);
		return array_range_to_bound(c, opcintype, fk, cb);
	}
	return scalar_to_bound(c, opcintype, fk, cb);
}

/* enforced by the intervals: no need to evaluate */
static void
mark_enforced(TidxFilterKey *fk)
{
	fk->sk = NULL;
}

bool
tidx_build_intervals(const TidxDesc *d, TidxFilterKey *filter, int nfilter,
					 TidxKeyRange **intervals, int *nintervals)
{
	int			nkeys = d->nkeys;
	ColBound   *cb = palloc0(sizeof(ColBound) * nkeys);
	int			neq = 0;
	int			range_col = -1;
	int64		product = 1;
	uint8		treebytes[8];
	StringInfoData prefix;
	int		   *idx;

	for (int i = 0; i < nkeys; i++)
	{
		initStringInfo(&cb[i].lo);
		initStringInfo(&cb[i].hi);
	}
	*intervals = NULL;
	*nintervals = 0;
	for (int i = 0; i < nfilter; i++)
	{
		TidxFilterKey *fk = &filter[i];
		int			col;

		if (fk->sk == NULL)
			continue;
		col = fk->sk->sk_attno - 1;
		if (col < 0 || col >= nkeys)
			continue;
		if (!key_to_bound(d, fk, &cb[col], col))
			return false;
	}

	/* leading columns with points, as long as the combinations stay few */
	for (neq = 0; neq < nkeys; neq++)
	{
		if (cb[neq].npoints == 0 || product * cb[neq].npoints > MAX_INTERVALS)
			break;
		product *= cb[neq].npoints;
	}
	if (neq < nkeys && cb[neq].npoints == 0 &&
		(cb[neq].has_lo || cb[neq].has_hi || cb[neq].nonnull))
		range_col = neq;

	/* keys the intervals enforce need no evaluation */
	for (int i = 0; i < neq; i++)
		mark_enforced(cb[i].point_src);
	if (range_col >= 0)
	{
		ListCell   *lc;

		if (cb[range_col].nonnull)
		{
			StringInfoData m;

			initStringInfo(&m);
			appendStringInfoChar(&m, TIDX_VALUE);
			add_lo(&cb[range_col], &m);
			resetStringInfo(&m);
			appendStringInfoChar(&m, TIDX_VALUE + 1);
			add_hi(&cb[range_col], &m);
		}
		foreach(lc, cb[range_col].range_srcs)
			mark_enforced(lfirst(lc));
		foreach(lc, cb[range_col].null_srcs)
			mark_enforced(lfirst(lc));
		if (cb[range_col].has_lo && cb[range_col].has_hi &&
			cmp_stringinfo(&cb[range_col].lo, &cb[range_col].hi) >= 0)
			return false;
	}

	/* the cartesian product of the points, in index order */
	*nintervals = (int) product;
	*intervals = palloc(sizeof(TidxKeyRange) * product);
	trt_key_put_tree(treebytes, d->tree);
	initStringInfo(&prefix);
	idx = palloc0(sizeof(int) * Max(neq, 1));
	for (int64 n = 0; n < product; n++)
	{
		TidxKeyRange *iv = &(*intervals)[n];
		StringInfoData lo,
					hi;
		int			len;

		resetStringInfo(&prefix);
		appendBinaryStringInfo(&prefix, (char *) treebytes, 8);
		for (int i = 0; i < neq; i++)
			appendBinaryStringInfo(&prefix, cb[i].points[idx[i]].data, cb[i].points[idx[i]].len);

		initStringInfo(&lo);
		appendBinaryStringInfo(&lo, prefix.data, prefix.len);
		if (range_col >= 0 && cb[range_col].has_lo)
			appendBinaryStringInfo(&lo, cb[range_col].lo.data, cb[range_col].lo.len);
		initStringInfo(&hi);
		appendBinaryStringInfo(&hi, prefix.data, prefix.len);
		if (range_col >= 0 && cb[range_col].has_hi)
			appendBinaryStringInfo(&hi, cb[range_col].hi.data, cb[range_col].hi.len);
		else
		{
			len = hi.len;
			if (!tidx_prefix_successor((uint8 *) hi.data, &len))
				elog(ERROR, "tides_btree: key prefix without successor");
			hi.len = len;
		}
		iv->lo = (uint8 *) lo.data;
		iv->lolen = lo.len;
		iv->hi = (uint8 *) hi.data;
		iv->hilen = hi.len;
		iv->stem = neq == nkeys;

		/* next combination (last column fastest) */
		for (int i = neq - 1; i >= 0; i--)
		{
			if (++idx[i] < cb[i].npoints)
				break;
			idx[i] = 0;
		}
	}
	return true;
}
