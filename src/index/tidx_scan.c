/*
 * tidx_scan.c -- index scans of tides_btree.
 *
 * amrescan turns the scan keys into a sorted list of disjoint key intervals
 * [lo, hi) over the encoded keys (tidx_scankeys.c) and opens one engine
 * iterator: the scan reads the index as of that moment.  Entries
 * inside an interval are checked against every scan key that the interval
 * does not already enforce, with the operator's own function on the datums
 * of the stored IndexTuple, so results are exact (xs_recheck is false).
 *
 * Forward and backward scans, changes of direction, mark/restore and
 * bitmap scans all walk the same intervals.  A scan that lives long trades
 * its iterator for a fresh one (see TrtIter in src/runtime/iterators.c) and finds its
 * place again by the key of the entry it is on.  Entries whose rows the
 * executor reports dead to everyone (kill_prior_tuple) are deleted from the
 * engine: TIDs of tides tables are never reused, so that is safe at any time.
 *
 * A parallel scan hands the entries out in chunks (tidx_parallel.c); every
 * participant walks the same intervals.  So does a serial
 * scan of several single keys (`= ANY`, `IN (...)`) that fetches rows of a
 * tides table, for another reason: it knows the rows of a whole chunk
 * before the executor reads the first, and asks the engine to read all of
 * their blocks at once (see "batches" below).
 */
#include "postgres.h"

#include "access/xlog.h"

#include "access/relscan.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/spccache.h"

#include "index/tidx.h"
#include "index/tidx_scan.h"


static bool have_filters(TidxScan *so);

static void
release_view(TidxScan *so)
{
	if (so->held_view != 0)
		trt_held_view_leave(so->held_view);
	so->held_view = 0;
}

/* ------------------------------------------------------------------ kills */

static void
flush_kills(TidxScan *so)
{
	if (so->nkill == 0)
		return;
	tidx_delete_keys(so->heap, so->killkeys, so->killlens, so->nkill);
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

/* ------------------------------------------------------------------ dead runs */

/*
 * What the table's fetch found behind the entry handed out last (the
 * current one): a version deleted for every snapshot past a horizon extends
 * the run over it; anything else -- a version a snapshot may see, an entry
 * not fetched (an index-only scan's all-visible block), the end -- closes
 * the run before it and records it (tidx_hint.c, "Dead runs").
 */
static void
note_fetched(TidxScan *so)
{
	TransactionId d = so->fetched_deleted_by;

	if (!so->run_open)
		return;
	if (so->state == POS_ON && TransactionIdIsValid(d))
	{
		if (TransactionIdIsNormal(d) &&
			(!TransactionIdIsNormal(so->run_deleted_by) || TransactionIdFollows(d, so->run_deleted_by)))
			so->run_deleted_by = d;
		return;
	}
	so->run_open = false;
	if (so->state == POS_ON)
		tidx_hint_set(so->d.tree, so->hint_gen, so->hint_start, so->hint_startlen,
					  so->curkey, so->curkeylen, so->run_deleted_by);
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
	note_fetched(so);
	so->run_open = false;
	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));

	trt_iter_close(so->iter);
	release_view(so);
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
	if (so->chunkcxt != NULL)
		MemoryContextReset(so->chunkcxt);
	so->nchunk = so->chunkpos = 0;
	so->batch_last = false;
	so->can_kill = tidx_heap_is_tides(scan->heapRelation) && !RecoveryInProgress();
	so->heap = scan->heapRelation;

	old = MemoryContextSwitchTo(so->cxt);
	so->nfilter = scan->numberOfKeys;
	so->filter = palloc0(sizeof(TidxFilterKey) * Max(so->nfilter, 1));
	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		sk = &scan->keyData[i];
		TidxFilterKey *fk = &so->filter[i];

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
		so->qual_ok = tidx_build_intervals(&so->d, so->filter, so->nfilter, &so->iv, &so->nintervals);
	/*
	 * Hints for scans from the start of a unique index (every key, or every
	 * non-NULL key: the tree prefix and at most a marker byte), read before
	 * the iterator's read point (tidx_hint.c).
	 */
	so->hint_ok = so->qual_ok && so->nintervals > 0 && so->d.unique && so->iv[0].lolen <= 9 &&
		!RecoveryInProgress();
	so->hint_pending = false;
	so->retired_below = trt_tree_low_mark(so->d.tree);
	if (so->hint_ok)
		so->hint_gen = tidx_hint_generation(so->d.tree);
	so->snap_xmin = so->hint_ok ? tidx_hint_snapshot_xmin(scan->xs_snapshot) : 0;

	/*
	 * The table's fetch state (runtime/trt.h): a kill is a write to the
	 * tides log, after the deletion; and a serial scan of one interval, with
	 * no filter passing over entries unfetched, may record a dead run.
	 */
	so->run_ok = false;
	if (so->can_kill && scan->xs_heapfetch != NULL)
	{
		TrtIndexFetch *fetch = (TrtIndexFetch *) scan->xs_heapfetch;

		so->run_ok = so->hint_ok && so->nintervals == 1 && !have_filters(so) &&
			so->snap_xmin != 0 && scan->parallel_scan == NULL;
		fetch->kills_logged = true;
		fetch->deleted_by = so->run_ok ? &so->fetched_deleted_by : NULL;
	}
	so->batch_ok = so->qual_ok && so->nintervals > 1 && scan->parallel_scan == NULL &&
		scan->xs_heapfetch != NULL && !scan->xs_want_itup && tidx_heap_is_tides(scan->heapRelation) &&
		get_tablespace_io_concurrency(scan->heapRelation->rd_rel->reltablespace) > 0;
	for (int i = 0; so->batch_ok && i < so->nintervals; i++)
		so->batch_ok = so->iv[i].stem;
	if (so->qual_ok && so->nintervals > 0)
	{
		/* a bitmap index scan (no table fetch of its own) or an index-only one */
		if (scan->xs_want_itup || scan->xs_heapfetch == NULL)
			so->held_view = trt_held_view_enter();
		so->iter = trt_iter_open(so->iv[0].lo, so->iv[0].lolen,
								  so->iv[so->nintervals - 1].hi, so->iv[so->nintervals - 1].hilen, "read an index");
	}
	else
		so->qual_ok = false;
	MemoryContextSwitchTo(old);
}

static bool
key_in_interval(const uint8 *k, size_t klen, const TidxKeyRange *iv)
{
	return tidx_cmp_bytes((const char *) k, klen, (const char *) iv->lo, iv->lolen) >= 0 &&
		tidx_cmp_bytes((const char *) k, klen, (const char *) iv->hi, iv->hilen) < 0;
}

/* position on the first entry of interval i in direction dir */
static void
enter_interval(TidxScan *so, int i, ScanDirection dir)
{
	tides_iter *it = so->iter->it;
	TidxKeyRange *iv = &so->iv[i];

	if (ScanDirectionIsBackward(dir))
	{
		tides_iter_seek_for_prev(it, iv->hi, iv->hilen);
		while (tides_iter_valid(it))
		{
			size_t		klen;
			const uint8 *k = tides_iter_key(it, &klen);

			if (tidx_cmp_bytes((const char *) k, klen, (const char *) iv->hi, iv->hilen) < 0)
				break;
			tides_iter_prev(it);
		}
	}
	else if (i == 0 && so->hint_ok)
	{
		/* from the start: past the deleted run a hint knows of, and note what follows */
		so->hint_startlen = 0;
		if (!tidx_hint_lookup(so->d.tree, iv->lo, iv->lolen, so->snap_xmin,
							  so->can_kill ? GlobalVisTestFor(so->heap) : NULL,
							  so->hint_start, &so->hint_startlen) &&
			iv->lolen <= TIDX_HINT_KEY_MAX)
		{
			memcpy(so->hint_start, iv->lo, iv->lolen);
			so->hint_startlen = iv->lolen;
		}
		if (so->hint_startlen > 0)
		{
			tides_iter_seek(it, so->hint_start, so->hint_startlen);
			so->hint_pending = true;
		}
		else
			tides_iter_seek(it, iv->lo, iv->lolen);
	}
	else if (iv->stem)
	{
		/* one key: only tables whose stem filter lets it through are read */
		StaticAssertStmt(TIDX_TID_LEN == TRT_STEM_SUFFIX_LEN, "an index entry's stem is its key");
		tides_iter_seek_stem(it, iv->lo, iv->lolen);
	}
	else
		tides_iter_seek(it, iv->lo, iv->lolen);
}

static IndexTuple
current_itup(TidxScan *so)
{
	size_t		klen,
				vlen;
	const uint8 *k = tides_iter_key(so->iter->it, &klen);
	const void *v = tides_iter_value(so->iter->it, &vlen);
	IndexTuple	formed = NULL;
	Size		len = vlen;

	/* a key-only entry's tuple is formed from its key, in filtercxt */
	if (vlen == 0)
	{
		MemoryContext old = MemoryContextSwitchTo(so->filtercxt);

		formed = tidx_entry_tuple(&so->d, k, klen, v, vlen);
		MemoryContextSwitchTo(old);
		len = formed != NULL ? IndexTupleSize(formed) : 0;
	}
	/* a copy that outlives filtercxt's reset, until the next entry; aligned */
	if (so->itupcap < Max(len, sizeof(IndexTupleData)))
	{
		so->itupcap = Max(len, 256);
		so->itupbuf = MemoryContextAlloc(so->cxt, so->itupcap);
	}
	memcpy(so->itupbuf, formed != NULL ? (const void *) formed : v, len);
	if (formed != NULL)
		MemoryContextReset(so->filtercxt);
	if (len == 0 || (vlen > 0 && !tidx_stored_tuple_ok((IndexTuple) so->itupbuf, klen, vlen)))
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
		TidxFilterKey *fk = &so->filter[i];
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

void
tidx_save_current_key(TidxScan *so, const uint8 *k, size_t klen)
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
			if (trt_iter_refresh_due(so->iter))
			{
				/* a long scan: a fresh iterator, re-positioned below */
				trt_iter_reopen(so->iter);
				it = so->iter->it;
			}
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

				if (tidx_cmp_bytes((const char *) k, klen, (const char *) so->curkey, so->curkeylen) != 0)
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

				if (tidx_cmp_bytes((const char *) k, klen, (const char *) so->curkey, so->curkeylen) == 0)
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
		if (so->hint_pending)
		{
			/* the engine's first key at or after hint_start: nothing lies between */
			so->hint_pending = false;
			if (tides_iter_valid(it))
			{
				size_t		klen;
				const uint8 *k = tides_iter_key(it, &klen);

				tidx_hint_set(so->d.tree, so->hint_gen, so->hint_start, so->hint_startlen,
							  k, (int) klen, InvalidTransactionId);
			}
			/* ... and from that key on, a dead run may follow */
			so->run_open = so->run_ok;
			so->run_deleted_by = FrozenTransactionId;
		}
		if (tides_iter_valid(it))
		{
			size_t		klen;
			const uint8 *k = tides_iter_key(it, &klen);

			if (key_in_interval(k, klen, &so->iv[so->cur]))
			{
				IndexTuple	itup = NULL;
				bool		pass;

				if (klen < 8 + TIDX_TID_LEN)
					ereport(ERROR,
							(errcode(ERRCODE_INDEX_CORRUPTED),
							 errmsg("tides_btree index \"%s\" has a malformed key",
									RelationGetRelationName(so->d.index))));
				/* a retired row's entry: as if compaction had dropped it already */
				pass = !trt_entry_retired(k, klen, so->retired_below);
				if (pass && (filters || want_itup))
					itup = current_itup(so);
				if (pass && filters)
				{
					/* operators may allocate: a bitmap scan evaluates every entry in one call */
					MemoryContext old = MemoryContextSwitchTo(so->filtercxt);

					pass = passes_filters(so, itup);
					MemoryContextSwitchTo(old);
					MemoryContextReset(so->filtercxt);
				}
				if (pass)
				{
					tidx_save_current_key(so, k, klen);
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
			trt_iter_check(so->iter);

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

/* ------------------------------------------------------------------ chunks */

void
tidx_fill_chunk(IndexScanDesc scan, ScanDirection dir)
{
	TidxScan   *so = (TidxScan *) scan->opaque;
	MemoryContext old;

	if (so->chunkcxt == NULL)
	{
		so->chunkcxt = AllocSetContextCreate(GetMemoryChunkContext(so), "tides_btree chunk",
											 ALLOCSET_DEFAULT_SIZES);
		so->chunk = MemoryContextAlloc(GetMemoryChunkContext(so), sizeof(TidxChunk));
	}
	MemoryContextReset(so->chunkcxt);
	so->nchunk = so->chunkpos = 0;
	while (so->nchunk < TIDX_CHUNK)
	{
		IndexTuple	itup = NULL;

		if (!advance(so, dir, &itup, scan->xs_want_itup))
			break;
		old = MemoryContextSwitchTo(so->chunkcxt);
		so->chunk->keys[so->nchunk] = palloc(so->curkeylen);
		memcpy(so->chunk->keys[so->nchunk], so->curkey, so->curkeylen);
		so->chunk->lens[so->nchunk] = so->curkeylen;
		so->chunk->curs[so->nchunk] = so->cur;
		so->chunk->itups[so->nchunk] = itup != NULL ? CopyIndexTuple(itup) : NULL;
		MemoryContextSwitchTo(old);
		so->nchunk++;
	}
}

/* hand out the chunk's next entry: it becomes the scan's current one */
static IndexTuple
take_from_chunk(TidxScan *so)
{
	int			i = so->chunkpos++;

	Assert(i < so->nchunk);
	tidx_save_current_key(so, so->chunk->keys[i], so->chunk->lens[i]);
	so->cur = so->chunk->curs[i];
	so->state = POS_ON;
	return so->chunk->itups[i];
}

/*
 * Ask for the index blocks of the next batch's keys: the intervals after the
 * current one (from the first before the scan has begun, or after it ran off
 * the start backward).
 */
static void
prefetch_entries(TidxScan *so)
{
	const uint8 *stems[TIDX_CHUNK];
	size_t		lens[TIDX_CHUNK];
	int			from,
				n = 0;

	from = so->state == POS_ON ? so->cur + 1 : so->state == POS_END_FWD ? so->nintervals : 0;
	for (int i = from; i < so->nintervals && n < TIDX_CHUNK; i++)
	{
		Assert(so->iv[i].stem);
		stems[n] = so->iv[i].lo;
		lens[n++] = so->iv[i].lolen;
	}
	if (n > 1)
		trt_prefetch_stems(stems, lens, n);
}

/*
 * Batches.  A serial scan of single keys (every interval a stem: an `= ANY`
 * or `IN (...)` list over every column) that fetches rows of a tides table
 * asks the engine to start reading the index blocks of up to TIDX_CHUNK
 * keys at once (trt_prefetch_stems), reads their entries, asks for all of
 * their rows' blocks (trt_prefetch_rows), then hands the entries out one by
 * one.  The scan seeks each key after the last, and the executor reads each
 * row right after its entry, so without the batch a query waits for its
 * device reads one after another; with it, for about two.  (nbtree's scans
 * have no such thing: heap reads a query's rows one after another.)
 * effective_io_concurrency (of the table's tablespace) 0 turns batches off,
 * as it turns off PostgreSQL's own prefetching.
 *
 * The iterator stays where the chunk ends, and the entry handed out last is
 * the current one as in an unbatched scan (so->state, cur and curkey: kills,
 * mark/restore).  A backward step, a restore or a rescan drops what is left
 * of the chunk and goes on from the current entry through advance.
 */
static bool
batch_next(IndexScanDesc scan, ScanDirection dir, IndexTuple *itup)
{
	TidxScan   *so = (TidxScan *) scan->opaque;

	if (ScanDirectionIsBackward(dir))
	{
		so->nchunk = so->chunkpos = 0;
		so->batch_last = false;
		return advance(so, dir, itup, false);
	}
	if (so->chunkpos == so->nchunk)
	{
		uint64		vids[TIDX_CHUNK];
		int			n = 0;

		if (so->batch_last)
		{
			so->state = POS_END_FWD;
			so->cur = so->nintervals - 1;
			so->nchunk = so->chunkpos = 0;
			so->batch_last = false;
			return false;
		}
		prefetch_entries(so);
		tidx_fill_chunk(scan, dir);
		so->batch_last = so->state != POS_ON;
		for (int i = 0; i < so->nchunk; i++)
		{
			ItemPointerData tid;

			tidx_decode_tid(so->chunk->keys[i], so->chunk->lens[i], &tid);
			if (trt_tid_to_vid(&tid, &vids[n]))
				n++;
		}
		if (n > 1)
			trt_prefetch_rows(trt_rel_tree(scan->heapRelation), vids, n);
		if (so->nchunk == 0)
		{
			so->batch_last = false;
			return false;
		}
	}
	*itup = take_from_chunk(so);
	return true;
}

bool
tidx_gettuple(IndexScanDesc scan, ScanDirection dir)
{
	TidxScan   *so = (TidxScan *) scan->opaque;
	IndexTuple	itup = NULL;

	if (scan->kill_prior_tuple)
		remember_kill(so);
	note_fetched(so);
	if (ScanDirectionIsBackward(dir))
		so->run_open = false;
	if (!so->qual_ok)
		return false;
	if (!so->counted)
	{
		pgstat_count_index_scan(scan->indexRelation);
		so->counted = true;
	}
	if (scan->parallel_scan != NULL)
	{
		if (so->chunkpos == so->nchunk && !tidx_claim_chunk(scan, dir))
			return false;
		/* the entry returned is the current one (kills) */
		itup = take_from_chunk(so);
	}
	else if (so->batch_ok)
	{
		if (!batch_next(scan, dir, &itup))
			return false;
	}
	else if (!advance(so, dir, &itup, scan->xs_want_itup))
		return false;
	so->fetched_deleted_by = InvalidTransactionId;
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
	note_fetched(so);
	trt_iter_close(so->iter);
	release_view(so);
	MemoryContextDelete(so->cxt);
	MemoryContextDelete(so->filtercxt);
	if (so->chunkcxt != NULL)
	{
		MemoryContextDelete(so->chunkcxt);
		pfree(so->chunk);
	}
	pfree(so);
	scan->opaque = NULL;
}

void
tidx_markpos(IndexScanDesc scan)
{
	TidxScan   *so = (TidxScan *) scan->opaque;

	/* a participant returns copies of its chunk: no position to mark (PostgreSQL never asks) */
	if (scan->parallel_scan != NULL)
		elog(ERROR, "tides_btree: mark/restore in a parallel scan");
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
	so->run_open = false;		/* the entries handed out are no longer consecutive */
	so->nchunk = so->chunkpos = 0;	/* a batch goes on from the marked entry */
	so->batch_last = false;
	so->state = so->mark_state;
	so->cur = so->mark_cur;
	if (so->state == POS_ON)
	{
		tidx_save_current_key(so, so->markkey, so->markkeylen);
		tides_iter_seek(so->iter->it, so->markkey, so->markkeylen);
	}
}
