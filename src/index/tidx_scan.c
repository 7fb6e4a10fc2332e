/*
 * scan.c -- index scans of tides_btree.
 *
 * amrescan turns the scan keys into a sorted list of disjoint key intervals
 * [lo, hi) over the encoded keys (equality on leading columns, = ANY arrays
 * as one interval per element combination, then one range column) and opens
 * one engine iterator: the scan reads the index as of that moment.  Entries
 * inside an interval are checked against every scan key that the interval
 * does not already enforce, with the operator's own function on the datums
 * of the stored IndexTuple, so results are exact (xs_recheck is false).
 *
 * Forward and backward scans, changes of direction, mark/restore and
 * bitmap scans all walk the same intervals.  Entries whose rows the
 * executor reports dead to everyone (kill_prior_tuple) are deleted from the
 * engine: TIDs of tides tables are never reused, so that is safe at any time.
 */
#include "postgres.h"

#include <math.h>

#include "access/nbtree.h"
#include "access/relscan.h"
#include "catalog/pg_type_d.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"
#include "parser/parse_coerce.h"

#include "tides_index.h"

/* at most this many intervals from = ANY arrays; beyond, later columns filter */
#define MAX_INTERVALS 10000
#define KILL_BATCH 128

typedef struct KeyRange
{
	uint8	   *lo;				/* inclusive */
	int			lolen;
	uint8	   *hi;				/* exclusive */
	int			hilen;
} KeyRange;

typedef struct FilterKey
{
	ScanKey		sk;
	Datum	   *elems;			/* SK_SEARCHARRAY: the non-NULL elements */
	int			nelems;
} FilterKey;

typedef enum PosState
{
	POS_START,					/* nothing read since rescan */
	POS_ON,						/* on an entry of interval cur */
	POS_END_FWD,				/* ran off the end going forward */
	POS_END_BWD					/* ran off the start going backward */
} PosState;

typedef struct TidxScan
{
	TidxDesc	d;
	MemoryContext cxt;			/* per-rescan state (reset by rescan) */
	MemoryContext filtercxt;	/* evaluating scan keys on one entry */
	TidxIter   *iter;
	bool		qual_ok;
	int			nintervals;
	KeyRange   *iv;
	int			nfilter;
	FilterKey  *filter;
	bool		counted;

	PosState	state;
	int			cur;
	uint8	   *curkey;			/* copy of the current entry's key */
	int			curkeylen;
	int			curkeycap;

	PosState	mark_state;
	int			mark_cur;
	uint8	   *markkey;
	int			markkeylen;
	int			markkeycap;

	char	   *itupbuf;		/* aligned copy of the current IndexTuple */
	Size		itupcap;

	bool		can_kill;
	int			nkill;
	uint8	   *killkeys[KILL_BATCH];
	size_t		killlens[KILL_BATCH];
} TidxScan;

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
	FilterKey  *point_src;
	bool		has_lo;
	StringInfoData lo;			/* inclusive, in index order */
	bool		has_hi;
	StringInfoData hi;			/* exclusive, in index order */
	bool		nonnull;
	List	   *range_srcs;		/* FilterKeys enforced if this becomes the range column */
	List	   *null_srcs;		/* IS NOT NULL keys */
} ColBound;

static int
cmp_bytes(const char *a, int alen, const char *b, int blen)
{
	int			c = memcmp(a, b, Min(alen, blen));

	if (c != 0)
		return c;
	return alen < blen ? -1 : (alen > blen);
}

static int
cmp_stringinfo(const void *a, const void *b)
{
	const StringInfoData *x = a,
			   *y = b;

	return cmp_bytes(x->data, x->len, y->data, y->len);
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
	if (!cb->has_lo || cmp_bytes(cand->data, cand->len, cb->lo.data, cb->lo.len) > 0)
	{
		resetStringInfo(&cb->lo);
		appendBinaryStringInfo(&cb->lo, cand->data, cand->len);
		cb->has_lo = true;
	}
}

static void
add_hi(ColBound *cb, StringInfo cand)
{
	if (!cb->has_hi || cmp_bytes(cand->data, cand->len, cb->hi.data, cb->hi.len) < 0)
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
add_point_list(ColBound *cb, const TidxCol *col, Datum *vals, int n, FilterKey *src)
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

/* one scan key into its column's bound; false if no entry can satisfy it */
static bool
key_to_bound(TidxScan *so, FilterKey *fk, ColBound *cb, int col)
{
	ScanKey		sk = fk->sk;
	const TidxCol *c = &so->d.cols[col];
	Oid			opcintype = so->d.index->rd_opcintype[col];

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
		Datum	   *vals = palloc(sizeof(Datum) * Max(fk->nelems, 1));
		int			nvals = 0;
		bool		all_exact = true;

		if (fk->nelems == 0)
			return false;
		if (sk->sk_strategy == BTEqualStrategyNumber)
		{
			if (cb->npoints > 0)
				return true;	/* another key drives this column */
			for (int i = 0; i < fk->nelems; i++)
			{
				Datum		lo,
							hi;
				ConvResult r = convert_arg(c, opcintype, sk->sk_subtype, fk->elems[i], &lo, &hi);

				if (r == CV_EXACT)
					vals[nvals++] = lo;
				else if (r == CV_ABOVE || r == CV_BELOW)
					continue;	/* this element matches nothing */
				else
					all_exact = false;
			}
			if (!all_exact)
				return true;
			if (nvals == 0)
				return false;
			add_point_list(cb, c, vals, nvals, fk);
			return true;
		}

		/*
		 * x < ANY(a) is x < max(a), x > ANY(a) is x > min(a): the loosest
		 * of the elements' bounds (the filter stays exact anyway).
		 */
		{
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
					continue;	/* never satisfied */
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
	}

	{
		Datum		lo,
					hi;
		ConvResult r = convert_arg(c, opcintype, sk->sk_subtype, sk->sk_argument, &lo, &hi);

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
	}
	return true;
}

/* enforced by the intervals: no need to evaluate */
static void
mark_enforced(TidxScan *so, FilterKey *fk)
{
	fk->sk = NULL;
}

static void
build_intervals(TidxScan *so)
{
	int			nkeys = so->d.nkeys;
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
	for (int i = 0; i < so->nfilter && so->qual_ok; i++)
	{
		FilterKey  *fk = &so->filter[i];
		int			col = fk->sk->sk_attno - 1;

		if (col < 0 || col >= nkeys)
			continue;
		if (!key_to_bound(so, fk, &cb[col], col))
			so->qual_ok = false;
	}
	if (!so->qual_ok)
		return;

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
		mark_enforced(so, cb[i].point_src);
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
			mark_enforced(so, lfirst(lc));
		foreach(lc, cb[range_col].null_srcs)
			mark_enforced(so, lfirst(lc));
		if (cb[range_col].has_lo && cb[range_col].has_hi &&
			cmp_stringinfo(&cb[range_col].lo, &cb[range_col].hi) >= 0)
		{
			so->qual_ok = false;
			return;
		}
	}

	/* the cartesian product of the points, in index order */
	so->nintervals = (int) product;
	so->iv = palloc(sizeof(KeyRange) * product);
	tides_key_put_tree(treebytes, so->d.tree);
	initStringInfo(&prefix);
	idx = palloc0(sizeof(int) * Max(neq, 1));
	for (int64 n = 0; n < product; n++)
	{
		KeyRange   *iv = &so->iv[n];
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

		/* next combination (last column fastest) */
		for (int i = neq - 1; i >= 0; i--)
		{
			if (++idx[i] < cb[i].npoints)
				break;
			idx[i] = 0;
		}
	}
}

/* ------------------------------------------------------------------ kills */

static void
flush_kills(TidxScan *so)
{
	if (so->nkill == 0)
		return;
	tidx_delete_keys(so->killkeys, so->killlens, so->nkill);
	for (int i = 0; i < so->nkill; i++)
		pfree(so->killkeys[i]);
	so->nkill = 0;
}

static void
remember_kill(TidxScan *so)
{
	MemoryContext old;

	if (!so->can_kill || so->state != POS_ON || so->curkeylen == 0)
		return;
	old = MemoryContextSwitchTo(GetMemoryChunkContext(so));
	so->killkeys[so->nkill] = palloc(so->curkeylen);
	memcpy(so->killkeys[so->nkill], so->curkey, so->curkeylen);
	so->killlens[so->nkill] = so->curkeylen;
	so->nkill++;
	MemoryContextSwitchTo(old);
	if (so->nkill == KILL_BATCH)
		flush_kills(so);
}

/* ------------------------------------------------------------------ AM API */

IndexScanDesc
tidx_beginscan(Relation index, int nkeys, int norderbys)
{
	IndexScanDesc scan = RelationGetIndexScan(index, nkeys, norderbys);
	TidxScan   *so = palloc0(sizeof(TidxScan));

	tidx_desc_init(&so->d, index, false);
	so->cxt = AllocSetContextCreate(CurrentMemoryContext, "tides_btree scan", ALLOCSET_DEFAULT_SIZES);
	so->filtercxt = AllocSetContextCreate(CurrentMemoryContext, "tides_btree scan keys", ALLOCSET_SMALL_SIZES);
	so->state = POS_START;
	so->qual_ok = false;
	so->mark_state = POS_START;
	scan->opaque = so;
	scan->xs_itupdesc = RelationGetDescr(index);
	return scan;
}

void
tidx_rescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys, int norderbys)
{
	TidxScan   *so = (TidxScan *) scan->opaque;
	MemoryContext old;

	flush_kills(so);
	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));

	tidx_iter_close(so->iter);
	MemoryContextReset(so->cxt);
	so->iter = NULL;
	so->iv = NULL;
	so->nintervals = 0;
	so->state = POS_START;
	so->mark_state = POS_START;
	so->curkey = NULL;
	so->curkeylen = so->curkeycap = 0;
	so->markkey = NULL;
	so->markkeylen = so->markkeycap = 0;
	so->itupbuf = NULL;
	so->itupcap = 0;
	so->counted = false;
	so->qual_ok = true;
	so->can_kill = tidx_heap_is_tides(scan->heapRelation);

	old = MemoryContextSwitchTo(so->cxt);
	so->nfilter = scan->numberOfKeys;
	so->filter = palloc0(sizeof(FilterKey) * Max(so->nfilter, 1));
	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		sk = &scan->keyData[i];
		FilterKey  *fk = &so->filter[i];

		fk->sk = sk;
		if (sk->sk_flags & SK_ROW_HEADER)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("tides_btree does not support row comparison index keys")));
		if ((sk->sk_flags & SK_ISNULL) && !(sk->sk_flags & (SK_SEARCHNULL | SK_SEARCHNOTNULL)))
		{
			so->qual_ok = false;	/* comparison with NULL: never true */
			continue;
		}
		if (sk->sk_flags & SK_SEARCHARRAY)
		{
			ArrayType  *arr = DatumGetArrayTypeP(sk->sk_argument);
			int16		elmlen;
			bool		elmbyval;
			char		elmalign;
			Datum	   *elems;
			bool	   *nulls;
			int			n;

			get_typlenbyvalalign(ARR_ELEMTYPE(arr), &elmlen, &elmbyval, &elmalign);
			deconstruct_array(arr, ARR_ELEMTYPE(arr), elmlen, elmbyval, elmalign,
							  &elems, &nulls, &n);
			fk->elems = palloc(sizeof(Datum) * Max(n, 1));
			for (int j = 0; j < n; j++)
				if (!nulls[j])
					fk->elems[fk->nelems++] = elems[j];
			if (fk->nelems == 0)
				so->qual_ok = false;
		}
	}
	if (so->qual_ok)
		build_intervals(so);
	if (so->qual_ok && so->nintervals > 0)
	{
		so->iter = tidx_iter_open(so->iv[0].lo, so->iv[0].lolen,
								  so->iv[so->nintervals - 1].hi, so->iv[so->nintervals - 1].hilen);
	}
	else
		so->qual_ok = false;
	MemoryContextSwitchTo(old);
}

static bool
key_in_interval(const uint8 *k, size_t klen, const KeyRange *iv)
{
	return cmp_bytes((const char *) k, klen, (const char *) iv->lo, iv->lolen) >= 0 &&
		cmp_bytes((const char *) k, klen, (const char *) iv->hi, iv->hilen) < 0;
}

/* position on the first entry of interval i in direction dir */
static void
enter_interval(TidxScan *so, int i, ScanDirection dir)
{
	tides_iter *it = so->iter->it;
	KeyRange   *iv = &so->iv[i];

	if (ScanDirectionIsBackward(dir))
	{
		tides_iter_seek_for_prev(it, iv->hi, iv->hilen);
		while (tides_iter_valid(it))
		{
			size_t		klen;
			const uint8 *k = tides_iter_key(it, &klen);

			if (cmp_bytes((const char *) k, klen, (const char *) iv->hi, iv->hilen) < 0)
				break;
			tides_iter_prev(it);
		}
	}
	else
		tides_iter_seek(it, iv->lo, iv->lolen);
}

static IndexTuple
current_itup(TidxScan *so)
{
	size_t		vlen;
	const void *v = tides_iter_value(so->iter->it, &vlen);

	if (so->itupcap < vlen)
	{
		so->itupcap = Max(vlen, 256);
		so->itupbuf = MemoryContextAlloc(so->cxt, so->itupcap);
	}
	memcpy(so->itupbuf, v, vlen);
	if (vlen < sizeof(IndexTupleData) || IndexTupleSize((IndexTuple) so->itupbuf) > vlen)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("tides_btree index \"%s\" has an entry with a malformed value (%zu bytes)",
						RelationGetRelationName(so->d.index), vlen)));
	return (IndexTuple) so->itupbuf;
}

static bool
passes_filters(TidxScan *so, IndexTuple itup)
{
	TupleDesc	tupdesc = RelationGetDescr(so->d.index);

	for (int i = 0; i < so->nfilter; i++)
	{
		FilterKey  *fk = &so->filter[i];
		ScanKey		sk = fk->sk;
		Datum		datum;
		bool		isnull;

		if (sk == NULL)
			continue;
		datum = index_getattr(itup, sk->sk_attno, tupdesc, &isnull);
		if (sk->sk_flags & SK_SEARCHNULL)
		{
			if (!isnull)
				return false;
			continue;
		}
		if (isnull)
			return false;
		if (sk->sk_flags & SK_SEARCHNOTNULL)
			continue;
		if (sk->sk_flags & SK_SEARCHARRAY)
		{
			bool		any = false;

			for (int j = 0; j < fk->nelems && !any; j++)
				any = DatumGetBool(FunctionCall2Coll(&sk->sk_func, sk->sk_collation,
													 datum, fk->elems[j]));
			if (!any)
				return false;
			continue;
		}
		if (!DatumGetBool(FunctionCall2Coll(&sk->sk_func, sk->sk_collation, datum, sk->sk_argument)))
			return false;
	}
	return true;
}

static bool
have_filters(TidxScan *so)
{
	for (int i = 0; i < so->nfilter; i++)
		if (so->filter[i].sk != NULL)
			return true;
	return false;
}

static void
save_current_key(TidxScan *so, const uint8 *k, size_t klen)
{
	if (so->curkeycap < (int) klen)
	{
		so->curkeycap = Max((int) klen, 64);
		so->curkey = MemoryContextAlloc(so->cxt, so->curkeycap);
	}
	memcpy(so->curkey, k, klen);
	so->curkeylen = (int) klen;
}

/*
 * Move to the next entry in dir that lies in an interval and passes the
 * filters.  Returns false (and the END state) when there is none.
 */
static bool
advance(TidxScan *so, ScanDirection dir, IndexTuple *itup_out, bool want_itup)
{
	tides_iter *it = so->iter->it;
	bool		backward = ScanDirectionIsBackward(dir);
	bool		filters = have_filters(so);

	switch (so->state)
	{
		case POS_START:
			so->cur = backward ? so->nintervals - 1 : 0;
			enter_interval(so, so->cur, dir);
			break;
		case POS_END_FWD:
			if (!backward)
				return false;
			so->cur = so->nintervals - 1;
			enter_interval(so, so->cur, dir);
			break;
		case POS_END_BWD:
			if (backward)
				return false;
			so->cur = 0;
			enter_interval(so, so->cur, dir);
			break;
		case POS_ON:
			if (!tides_iter_valid(it))
			{
				/* the view has no such key any more: re-find the position */
				if (backward)
					tides_iter_seek_for_prev(it, so->curkey, so->curkeylen);
				else
					tides_iter_seek(it, so->curkey, so->curkeylen);
			}
			else
			{
				size_t		klen;
				const uint8 *k = tides_iter_key(it, &klen);

				if (cmp_bytes((const char *) k, klen, (const char *) so->curkey, so->curkeylen) != 0)
				{
					if (backward)
						tides_iter_seek_for_prev(it, so->curkey, so->curkeylen);
					else
						tides_iter_seek(it, so->curkey, so->curkeylen);
				}
			}
			if (tides_iter_valid(it))
			{
				size_t		klen;
				const uint8 *k = tides_iter_key(it, &klen);

				if (cmp_bytes((const char *) k, klen, (const char *) so->curkey, so->curkeylen) == 0)
				{
					if (backward)
						tides_iter_prev(it);
					else
						tides_iter_next(it);
				}
			}
			break;
	}

	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		if (tides_iter_valid(it))
		{
			size_t		klen;
			const uint8 *k = tides_iter_key(it, &klen);

			if (key_in_interval(k, klen, &so->iv[so->cur]))
			{
				IndexTuple	itup = NULL;
				bool		pass = true;

				if (klen < 8 + TIDX_TID_LEN)
					ereport(ERROR,
							(errcode(ERRCODE_INDEX_CORRUPTED),
							 errmsg("tides_btree index \"%s\" has a malformed key",
									RelationGetRelationName(so->d.index))));
				if (filters || want_itup)
					itup = current_itup(so);
				if (filters)
				{
					/* operators may allocate: a bitmap scan evaluates every entry in one call */
					MemoryContext old = MemoryContextSwitchTo(so->filtercxt);

					pass = passes_filters(so, itup);
					MemoryContextSwitchTo(old);
					MemoryContextReset(so->filtercxt);
				}
				if (pass)
				{
					save_current_key(so, k, klen);
					so->state = POS_ON;
					*itup_out = itup;
					return true;
				}
				if (backward)
					tides_iter_prev(it);
				else
					tides_iter_next(it);
				continue;
			}
		}
		else
			tidx_iter_check(so->iter);

		/* left the interval: the next one in dir */
		so->cur += backward ? -1 : 1;
		if (so->cur < 0 || so->cur >= so->nintervals)
		{
			so->state = backward ? POS_END_BWD : POS_END_FWD;
			so->cur = backward ? 0 : so->nintervals - 1;
			return false;
		}
		enter_interval(so, so->cur, dir);
	}
}

bool
tidx_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	TidxScan   *so = (TidxScan *) scan->opaque;
	IndexTuple	itup = NULL;

	if (scan->kill_prior_tuple)
		remember_kill(so);
	if (!so->qual_ok)
		return false;
	if (!so->counted)
	{
		pgstat_count_index_scan(scan->indexRelation);
		so->counted = true;
	}
	if (!advance(so, dir, &itup, scan->xs_want_itup))
		return false;
	tidx_decode_tid(so->curkey, so->curkeylen, &scan->xs_heaptid);
	scan->xs_recheck = false;
	if (scan->xs_want_itup)
	{
		scan->xs_itup = itup;
		scan->xs_itupdesc = RelationGetDescr(scan->indexRelation);
	}
	return true;
}

int64
tidx_getbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	TidxScan   *so = (TidxScan *) scan->opaque;
	int64		ntids = 0;
	IndexTuple	itup;
	ItemPointerData tid;

	if (!so->qual_ok)
		return 0;
	pgstat_count_index_scan(scan->indexRelation);
	so->state = POS_START;
	while (advance(so, ForwardScanDirection, &itup, false))
	{
		tidx_decode_tid(so->curkey, so->curkeylen, &tid);
		tbm_add_tuples(tbm, &tid, 1, false);
		ntids++;
	}
	return ntids;
}

void
tidx_endscan(IndexScanDesc scan)
{
	TidxScan   *so = (TidxScan *) scan->opaque;

	flush_kills(so);
	tidx_iter_close(so->iter);
	MemoryContextDelete(so->cxt);
	MemoryContextDelete(so->filtercxt);
	pfree(so);
	scan->opaque = NULL;
}

void
tidx_markpos(IndexScanDesc scan)
{
	TidxScan   *so = (TidxScan *) scan->opaque;

	so->mark_state = so->state;
	so->mark_cur = so->cur;
	if (so->state == POS_ON)
	{
		if (so->markkeycap < so->curkeylen)
		{
			so->markkeycap = Max(so->curkeylen, 64);
			so->markkey = MemoryContextAlloc(so->cxt, so->markkeycap);
		}
		memcpy(so->markkey, so->curkey, so->curkeylen);
		so->markkeylen = so->curkeylen;
	}
}

void
tidx_restrpos(IndexScanDesc scan)
{
	TidxScan   *so = (TidxScan *) scan->opaque;

	if (!so->qual_ok)
		return;
	so->state = so->mark_state;
	so->cur = so->mark_cur;
	if (so->state == POS_ON)
	{
		save_current_key(so, so->markkey, so->markkeylen);
		tides_iter_seek(so->iter->it, so->markkey, so->markkeylen);
	}
}
