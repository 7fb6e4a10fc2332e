/*
 * iterators.c -- engine iterators owned by PostgreSQL resource owners.
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
 */
#include "postgres.h"

#include "lib/ilist.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "runtime/trt.h"

typedef struct OpenIter
{
	dlist_node	node;
	tides_iter *it;
	ResourceOwner owner;
} OpenIter;

static dlist_head open_iters = DLIST_STATIC_INIT(open_iters);

tides_iter *
trt_open_iter(tides_db *db, const tides_iter_options *o)
{
	OpenIter   *oi;

	/* a backend reads its own writes */
	if (trt_deferred_entries > 0)
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
