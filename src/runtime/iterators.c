/*
 * iterators.c -- engine iterators owned by PostgreSQL resource owners, and
 * the refreshing iterator (TrtIter) that scans and index walks step through.
 *
 * An engine iterator pins a superversion in shared memory, and with it the
 * memtables it reads: a memtable slot is reused only when no iterator can
 * still see it.  An iterator left open by an ERROR (a serialization failure
 * or a cancel in the middle of a scan) would pin its memtables until the
 * server restarts, and once every slot is pinned all writers stall.  So every
 * iterator PostgreSQL code opens is registered here with the resource owner
 * current at the time, and released with that owner: on abort silently, on
 * commit with a WARNING (a leak, as for buffer pins).  At subtransaction
 * commit an iterator still open passes to the parent's owner, as a cursor's
 * resources would.
 *
 * Background workers run without a resource owner; they call
 * trt_close_all_iters() when they recover from an error.
 *
 * Below: TrtIter, the one iterator that replaces itself while it walks.
 */
#include "postgres.h"

#include "lib/ilist.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"

#include "runtime/trt.h"

typedef struct OpenIter
{
	dlist_node	node;
	tides_iter *it;
	ResourceOwner owner;
} OpenIter;

static dlist_head open_iters = DLIST_STATIC_INIT(open_iters);

/*
 * A backend reads its own writes: its deferred entries go first, unless the
 * reader wants only keys that are never deferred (a uniqueness check reads
 * its unique index's entries, which are written at once: xact.c).
 */
static tides_iter *
open_iter(tides_db *db, const tides_iter_options *o, bool own_deferred)
{
	OpenIter   *oi;

	if (own_deferred && trt_deferred_entries > 0)
		trt_xact_flush_deferred();
	oi = MemoryContextAlloc(TopMemoryContext, sizeof(OpenIter));

	oi->it = tides_iter_new(db, o);
	if (oi->it == NULL)
	{
		pfree(oi);
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("could not open a tides iterator: engine metadata memory is exhausted"),
				 errhint("Increase tides.metadata_size.")));
	}
	oi->owner = CurrentResourceOwner;
	dlist_push_head(&open_iters, &oi->node);
	return oi->it;
}

tides_iter *
trt_open_iter(tides_db *db, const tides_iter_options *o)
{
	return open_iter(db, o, true);
}

static void
forget(OpenIter *oi)
{
	dlist_delete(&oi->node);
	tides_iter_free(oi->it);
	pfree(oi);
}

tides_iter *
trt_open_range_iter(tides_db *db, const void *lower, size_t lower_len,
					  const void *upper, size_t upper_len, bool fill_cache)
{
	tides_iter_options o;

	memset(&o, 0, sizeof(o));
	o.lower = lower;
	o.lower_len = lower_len;
	o.upper = upper;
	o.upper_len = upper_len;
	o.fill_cache = fill_cache;
	return trt_open_iter(db, &o);
}

void
trt_close_iter(tides_iter *it)
{
	dlist_iter	i;

	if (it == NULL)
		return;
	/* most recently opened first: scans close in roughly LIFO order */
	dlist_foreach(i, &open_iters)
	{
		OpenIter   *oi = dlist_container(OpenIter, node, i.cur);

		if (oi->it == it)
		{
			forget(oi);
			return;
		}
	}
	elog(ERROR, "tides iterator %p is not open", (void *) it);
}

void
trt_close_all_iters(void)
{
	dlist_mutable_iter i;

	dlist_foreach_modify(i, &open_iters)
		forget(dlist_container(OpenIter, node, i.cur));
}

/*
 * A writer that must wait for a free memtable lets go of what its own open
 * iterators pin (tides_iter_repin), each time it retries: a statement that
 * writes while it walks -- INSERT ... SELECT between tides tables, CREATE
 * INDEX on tides_btree writing from inside its table scan, CREATE DATABASE
 * copying trees -- may pin, through its walk, the very memtables whose reuse
 * it waits for, and it takes no step (which would refresh the walk) until
 * the write is done.  Each iterator stays where it stood.  A repin that
 * fails (out of engine metadata memory) leaves that iterator as it was.
 */
void
trt_repin_iters(void)
{
	dlist_iter	i;

	dlist_foreach(i, &open_iters)
		(void) tides_iter_repin(dlist_container(OpenIter, node, i.cur)->it);
}

/* the resource-release callback (src/module/module.c registers it) */
void
trt_release_iterators(ResourceReleasePhase phase, bool isCommit, bool isTopLevel, void *arg)
{
	dlist_mutable_iter i;
	ResourceOwner owner = CurrentResourceOwner;	/* the owner being released */

	if (phase != RESOURCE_RELEASE_AFTER_LOCKS || owner == NULL)
		return;
	dlist_foreach_modify(i, &open_iters)
	{
		OpenIter   *oi = dlist_container(OpenIter, node, i.cur);

		if (oi->owner != owner)
			continue;
		if (isCommit && !isTopLevel && ResourceOwnerGetParent(owner) != NULL)
		{
			oi->owner = ResourceOwnerGetParent(owner);
			continue;
		}
		if (isCommit)
			elog(WARNING, "tides iterator leak: %p still open", (void *) oi->it);
		forget(oi);
	}
}

/* ---------------------------------------------------- refreshing iterators */

/*
 * A TrtIter is an engine iterator over [lower, upper) that trades itself for
 * a fresh one once it is TRT_ITER_REFRESH_MS old, when the caller steps it
 * (trt_iter_next/prev) or asks (trt_iter_refresh_due + trt_iter_reopen).
 * An engine iterator pins the memtables it reads, and a memtable slot is
 * reused only when nothing pins it: a walk that ran for minutes on one
 * iterator would stall every writer once the other slots filled.  Each
 * engine iterator is registered with the resource owner current when it is
 * opened (above), as a buffer pin taken at that point would be.
 *
 * Stepping across a refresh lands where stepping the old iterator would
 * have: the fresh one is positioned by the key the old one stood on; if
 * that key is gone (deleted meanwhile), the seek already lands past it.
 * The walk then no longer reads one instant of the engine -- as heap's
 * scans read each page as it is when they reach it.  Why that is safe is
 * each user's business: table scans judge visibility by their snapshot
 * (src/am/cursor.c), index walks rely on entries outliving every snapshot
 * that can see their rows (src/index/README.md), root reads in vid order
 * on the iterator being younger than the snapshot (src/am/seqread.c).
 */

/* steps between looks at the clock */
#define TRT_ITER_CLOCK_EVERY 256

static void
open_engine_iter(TrtIter *w)
{
	tides_iter_options o;

	memset(&o, 0, sizeof(o));
	o.lower = w->lower;
	o.lower_len = w->llen;
	o.upper = w->upper;
	o.upper_len = w->ulen;
	o.fill_cache = !w->bulk;
	o.read_ahead = w->bulk && trt_bulk_read_helper;
	o.lower_is_stem = w->lower_is_stem;
	/* a stem reader wants entries of a unique index only: never deferred */
	w->it = open_iter(trt_engine(), &o, !w->lower_is_stem);
	w->opened_at = GetCurrentTimestamp();
	w->steps = 0;
}

static TrtIter *
iter_open(const void *lower, size_t llen, const void *upper, size_t ulen, const char *what,
		  bool lower_is_stem, bool bulk)
{
	TrtIter    *w = palloc0(sizeof(TrtIter));

	w->lower = palloc(Max(llen, 1));
	memcpy(w->lower, lower, llen);
	w->llen = llen;
	w->upper = palloc(Max(ulen, 1));
	memcpy(w->upper, upper, ulen);
	w->ulen = ulen;
	w->what = what;
	w->lower_is_stem = lower_is_stem;
	w->bulk = bulk;
	open_engine_iter(w);
	return w;
}

TrtIter *
trt_iter_open(const void *lower, size_t llen, const void *upper, size_t ulen, const char *what)
{
	return iter_open(lower, llen, upper, ulen, what, false, false);
}

TrtIter *
trt_iter_open_bulk(const void *lower, size_t llen, const void *upper, size_t ulen,
				   const char *what)
{
	return iter_open(lower, llen, upper, ulen, what, false, true);
}

bool
trt_bulk_read_bytes(uint64 bytes)
{
	return bytes > (uint64) trt_block_cache_mb * 1024 * 1024 / 4;
}

TrtIter *
trt_iter_open_stem(const void *lower, size_t llen, const void *upper, size_t ulen,
				   const char *what)
{
	return iter_open(lower, llen, upper, ulen, what, true, false);
}

void
trt_iter_close(TrtIter *w)
{
	if (w && w->it)
	{
		trt_close_iter(w->it);
		w->it = NULL;
	}
}

void
trt_iter_free(TrtIter *w)
{
	if (w == NULL)
		return;
	trt_iter_close(w);
	pfree(w->lower);
	pfree(w->upper);
	pfree(w);
}

void
trt_iter_check(TrtIter *w)
{
	tides_status s = tides_iter_status(w->it);

	if (s != TIDES_OK)
		trt_engine_error(s, w->what);
}

bool
trt_iter_refresh_due(TrtIter *w)
{
	return ++w->steps % TRT_ITER_CLOCK_EVERY == 0 &&
		TimestampDifferenceExceeds(w->opened_at, GetCurrentTimestamp(), TRT_ITER_REFRESH_MS);
}

void
trt_iter_reopen(TrtIter *w)
{
	Assert(w->it != NULL);
	trt_close_iter(w->it);
	w->it = NULL;
	open_engine_iter(w);
}

/* one step in a direction, through a fresh iterator when one is due */
static void
step(TrtIter *w, bool backward)
{
	size_t		klen;
	const uint8 *k;
	uint8	   *key;

	if (!tides_iter_valid(w->it) || !trt_iter_refresh_due(w))
	{
		if (backward)
			tides_iter_prev(w->it);
		else
			tides_iter_next(w->it);
		return;
	}
	/* a fresh iterator on the entry after (before) the current one */
	k = tides_iter_key(w->it, &klen);
	key = palloc(klen);
	memcpy(key, k, klen);
	trt_iter_reopen(w);
	if (backward)
		tides_iter_seek_for_prev(w->it, key, klen);
	else
		tides_iter_seek(w->it, key, klen);
	if (tides_iter_valid(w->it))
	{
		size_t		nlen;
		const uint8 *n = tides_iter_key(w->it, &nlen);

		/* still there: step past it; gone (deleted meanwhile): already past it */
		if (nlen == klen && memcmp(n, key, klen) == 0)
		{
			if (backward)
				tides_iter_prev(w->it);
			else
				tides_iter_next(w->it);
		}
	}
	pfree(key);
}

void
trt_iter_next(TrtIter *w)
{
	step(w, false);
}

void
trt_iter_prev(TrtIter *w)
{
	step(w, true);
}
