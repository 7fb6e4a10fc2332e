/*
 * hot.c -- heap-only versions: updates that leave the indexes alone.
 *
 * As in heap (src/backend/access/heap/README.HOT), an update that changes
 * no indexed column writes a heap-only version: its HEAP_ONLY_TUPLE bit is
 * set, the old version gets HEAP_HOT_UPDATED, and no index entry is made.
 * Index entries keep pointing at the chain's root, and every TID-driven
 * access (index fetches, bitmap pages, unique checks, index builds, index
 * deletion) walks the chain from the root along t_ctid to the member its
 * snapshot sees.  Physical scans (sequential, TID range, sample, ANALYZE,
 * VACUUM) see heap-only versions where they are, like any other.
 *
 * Where tides differs from heap:
 *   - no page: a chain may span virtual blocks.  Nothing bounds a chain but
 *     VACUUM, so an update that would make a chain longer than
 *     TIDES_MAX_HOT_DEPTH is not HOT: it starts a new chain with new index
 *     entries, and a walk never reads more than that many versions.
 *   - each heap-only version stores its root's vid (meta.link): the
 *     visibility-map bit of the root's block covers the whole chain, and
 *     index builds index a heap-only version under its root's TID.
 *   - pruning (VACUUM's prune_chain) removes a prefix of the chain -- up to
 *     its last dead member -- and makes the root a redirect stub to the
 *     member after it, in one batch.  There is no buffer pin to keep a reader's walk and a prune
 *     apart, so a walk that finds a member gone re-reads the root: if the
 *     root changed, the chain was pruned under it and it walks again; if not,
 *     the chain really ends there (an aborted tail was removed).
 */
#include "postgres.h"

#include "access/heapam_xlog.h"
#include "access/sysattr.h"
#include "miscadmin.h"
#include "storage/predicate.h"
#include "utils/datum.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "tides_am.h"

/* what a walk saw at the root, to tell whether a prune happened since */
typedef struct RootState
{
	bool		present;
	uint16		flags;
	uint64		link;
} RootState;

static RootState
root_state(TidesTuple *t)
{
	RootState	r;

	r.present = t != NULL;
	r.flags = t ? t->meta.flags : 0;
	r.link = t ? t->meta.link : 0;
	return r;
}

/*
 * heap_hot_search_buffer for tides.  Starting at *tid -- a root, or on a
 * later call (first_call false) the member returned last -- return the
 * first member of the chain visible to snapshot, with *tid set to it, or
 * NULL.  If all_dead is given, it reports whether every member is dead to
 * everyone (the index entry may then be killed).  The result lives in buf.
 */
TidesTuple *
tides_hot_search(Relation rel, uint64 tree, ItemPointer tid, Snapshot snapshot,
				 TidesTupleBuf *buf, bool *all_dead, bool first_call)
{
	Oid			relid = RelationGetRelid(rel);
	GlobalVisState *vistest = NULL;
	uint64		start;
	bool		durable = rel->rd_rel->relpersistence == RELPERSISTENCE_PERMANENT;

	if (all_dead)
		*all_dead = first_call;
	if (!tides_tid_to_vid(tid, &start))
		return NULL;
	for (;;)
	{
		uint64		vid = start;
		TransactionId prev_xmax = InvalidTransactionId;
		bool		at_chain_start = first_call;
		bool		skip = !first_call;
		bool		vanished = false;
		RootState	root = {0};

		if (all_dead)
			*all_dead = first_call;
		for (;;)
		{
			TidesTuple *t = tides_fetch_entry(tree, vid, relid, buf);
			uint64		next;

			if (at_chain_start)
				root = root_state(t);
			if (t == NULL)
			{
				vanished = !at_chain_start;
				break;
			}
			if (TIDES_IS_STUB(t))
			{
				if (at_chain_start && TIDES_IS_REDIRECT(t))
				{
					vid = t->meta.link;
					at_chain_start = false;
					continue;
				}
				vanished = !at_chain_start;
				break;
			}
			/* an index entry never points at a heap-only version */
			if (at_chain_start && HeapTupleHeaderIsHeapOnly(t->htup.t_data))
				break;
			if (TransactionIdIsValid(prev_xmax) &&
				!TransactionIdEquals(prev_xmax, HeapTupleHeaderGetXmin(t->htup.t_data)))
				break;
			if (!skip)
			{
				bool		valid;

				/* (a non-vacuumable snapshot knows no relation: see tides_surely_dead) */
				if (snapshot->snapshot_type == SNAPSHOT_NON_VACUUMABLE)
					valid = !tides_surely_dead(t, snapshot->vistest, durable);
				else
					valid = tides_visible(t, snapshot);

				tides_ssi_conflict_out(valid, rel, t, snapshot);
				if (valid)
				{
					*tid = t->htup.t_self;
					PredicateLockTID(rel, &t->htup.t_self, snapshot,
									 HeapTupleHeaderGetXmin(t->htup.t_data));
					if (all_dead)
						*all_dead = false;
					return t;
				}
			}
			skip = false;
			if (all_dead && *all_dead)
			{
				if (vistest == NULL)
					vistest = GlobalVisTestFor(rel);
				if (!tides_surely_dead(t, vistest, durable))
					*all_dead = false;
			}
			if (!HeapTupleHeaderIsHotUpdated(t->htup.t_data) ||
				!tides_tid_to_vid(&t->htup.t_data->t_ctid, &next))
				break;
			vid = next;
			at_chain_start = false;
			prev_xmax = HeapTupleHeaderGetUpdateXid(t->htup.t_data);
		}

		/*
		 * A later call continues from a member visible to a non-MVCC
		 * snapshot, which no prune removes; only a walk from the root can
		 * have been cut by one.
		 */
		if (!vanished || !first_call)
			return NULL;
		{
			RootState	now = root_state(tides_fetch_entry(tree, start, relid, buf));

			if (now.present == root.present && now.flags == root.flags && now.link == root.link)
				return NULL;
		}
		CHECK_FOR_INTERRUPTS();
	}
}

/* heap_attr_equals: are two values of one attribute binary-equal? */
static bool
attr_unchanged(TupleDesc desc, int attno, HeapTuple a, HeapTuple b)
{
	Datum		v1,
				v2;
	bool		n1,
				n2;
	Form_pg_attribute att;

	if (attno <= InvalidAttrNumber)
	{
		/* only tableoid is the same in both versions; whole-row refs are not */
		return attno == TableOidAttributeNumber;
	}
	att = TupleDescAttr(desc, attno - 1);
	v1 = heap_getattr(a, attno, desc, &n1);
	v2 = heap_getattr(b, attno, desc, &n2);
	if (n1 != n2)
		return false;
	return n1 || datumIsEqual(v1, v2, att->attbyval, att->attlen);
}

/*
 * May the update of old into newtup be HOT: no column any index uses
 * (hot_attrs, RelationGetIndexAttrBitmap's INDEX_ATTR_BITMAP_ALL) changed --
 * heap_update's test -- and the chain is not yet at its length limit?
 */
bool
tides_hot_update_allowed(Relation rel, Bitmapset *hot_attrs, TidesTuple *old, HeapTuple newtup)
{
	TupleDesc	desc = RelationGetDescr(rel);
	bool		allowed = true;
	int			x = -1;

	if (old->meta.hot_depth >= TIDES_MAX_HOT_DEPTH)
		return false;
	while (allowed && (x = bms_next_member(hot_attrs, x)) >= 0)
		allowed = attr_unchanged(desc, x + FirstLowInvalidHeapAttributeNumber, &old->htup, newtup);
	return allowed;
}

/*
 * Index deletion (heap_index_delete_tuples): is every member of the chain
 * rooted at root_vid dead to everyone?  Advances *latest_removed over them.
 */
bool
tides_hot_chain_dead(Relation rel, uint64 tree, uint64 root_vid, GlobalVisState *vistest,
					 TransactionId *latest_removed)
{
	TidesTupleBuf buf;
	ItemPointerData tid;
	bool		all_dead;
	TidesTuple *t;
	uint64		vid;
	TransactionId prev_xmax = InvalidTransactionId;
	SnapshotData nonvacuumable;

	tides_tuple_buf_init(&buf, CurrentMemoryContext);
	tides_vid_to_tid(root_vid, &tid);
	InitNonVacuumableSnapshot(nonvacuumable, vistest);
	if (tides_hot_search(rel, tree, &tid, &nonvacuumable, &buf, NULL, true) != NULL)
	{
		tides_tuple_buf_free(&buf);
		return false;
	}
	all_dead = true;

	/* walk it again for latestRemovedXid (as heap does, after deciding) */
	t = tides_fetch_entry(tree, root_vid, RelationGetRelid(rel), &buf);
	if (t != NULL && TIDES_IS_REDIRECT(t))
	{
		vid = t->meta.link;
		t = tides_fetch_version(tree, vid, RelationGetRelid(rel), &buf);
	}
	while (t != NULL && !TIDES_IS_STUB(t))
	{
		uint64		next;

		if (TransactionIdIsValid(prev_xmax) &&
			!TransactionIdEquals(prev_xmax, HeapTupleHeaderGetXmin(t->htup.t_data)))
			break;
		HeapTupleHeaderAdvanceLatestRemovedXid(t->htup.t_data, latest_removed);
		if (!HeapTupleHeaderIsHotUpdated(t->htup.t_data) ||
			!tides_tid_to_vid(&t->htup.t_data->t_ctid, &next))
			break;
		prev_xmax = HeapTupleHeaderGetUpdateXid(t->htup.t_data);
		t = tides_fetch_version(tree, next, RelationGetRelid(rel), &buf);
	}
	tides_tuple_buf_free(&buf);
	return all_dead;
}
