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
 *     TAM_MAX_HOT_DEPTH is not HOT: it starts a new chain with new index
 *     entries, and a walk never reads more than that many versions.
 *   - each heap-only version stores its root's vid (meta.link): the
 *     visibility-map bit of the root's block covers the whole chain, and
 *     index builds index a heap-only version under its root's TID.
 *   - pruning removes a prefix of the chain -- up to its last dead member --
 *     and makes the root a redirect stub to the member after it, in one
 *     batch.  VACUUM prunes every chain (prune_chain); a reader that had to
 *     walk TAM_PRUNE_WALK members or more prunes the chain it walked
 *     (tam_hot_prune_opt), as heap_page_prune_opt prunes a page on access.  There is no buffer pin to keep a reader's walk and a prune
 *     apart, so a walk that finds a member gone re-reads the root: if the
 *     root changed, the chain was pruned under it and it walks again; if not,
 *     the chain really ends there (an aborted tail was removed).
 *   - the members at the start of a chain whose deletion a snapshot sees,
 *     but not yet every snapshot, are remembered and not walked again
 *     (below): heap walks them in a page it holds, tides would pay a point
 *     read for each.
 */
#include "postgres.h"

#include "access/heapam_xlog.h"
#include "access/sysattr.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/predicate.h"
#include "utils/datum.h"
#include "utils/hsearch.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"

#include "am/tam.h"

/* what a walk saw at the root, to tell whether a prune happened since */
typedef struct RootState
{
	bool		present;
	uint16		flags;
	uint64		link;
} RootState;

static RootState
root_state(TamTuple *t)
{
	RootState	r;

	r.present = t != NULL;
	r.flags = t ? t->meta.flags : 0;
	r.link = t ? t->meta.link : 0;
	return r;
}

/*
 * Is a walk worth following with tam_hot_prune_opt?  Only a long one, and,
 * as heap's PageIsPrunable checks pd_prune_xid, only if the first member's
 * updater is already removable: otherwise nothing can go (the rare chain
 * whose later updater has the older xid waits for VACUUM), and a reader held
 * back by an old snapshot would walk the chain twice on every fetch.
 */
static bool
worth_pruning(Relation rel, int walked, TransactionId first_updater)
{
	return walked >= TAM_PRUNE_WALK && TransactionIdIsNormal(first_updater) &&
		GlobalVisTestIsRemovableXid(GlobalVisTestFor(rel), first_updater);
}

/*
 * Chain prefixes a snapshot sees deleted.  A walk reads every member from
 * the root until one is visible, and pruning (above) shortens a chain only
 * once its members are dead to every snapshot.  Where they are not, every
 * lookup of a row pays a point read per dead member, where heap's walk stays
 * on a buffer page it holds: a transaction updating the same rows over and
 * over (its versions are dead to nobody until it ends; 40,000 updates of
 * ten rows in one PL/pgSQL call took 45.8 s, heap 2.9 s), or a long snapshot
 * holding the horizon back (pgbench tpcb-like at 4 clients: 755 tps beside
 * an open REPEATABLE READ transaction, 549 in its last 5 s, against 2,219
 * without; heap 1,867), and past TAM_MAX_HOT_DEPTH members each new chain
 * adds an index entry that every lookup walks as well.
 *
 * A member whose deletion (or update) a snapshot sees is invisible to it:
 * one committed by a transaction the snapshot does not count as running, or
 * made by the current transaction in a command before the snapshot's
 * (SnapshotSelf and SnapshotDirty see no deleted version of either kind).
 * And along a chain, a snapshot that sees one member's deletion sees every
 * earlier member's: an updater could update a member only after the
 * member's inserter -- the previous member's updater -- had committed, or
 * was itself, in an earlier command; an earlier updater that was a
 * subtransaction is the later one's ancestor or was released into one, so
 * it cannot abort alone.  So a walk remembers, per root, the run of
 * members from the chain's start whose deletions its snapshot sees: the
 * last one's updater (and command, if the current transaction's), and the
 * member after it or that the chain ends there.  A later walk from that
 * root for any snapshot that sees that deletion starts at that member (its
 * xmin must be that updater, as in any walk) or returns at once, and still
 * counts the run's members and its first updater when it decides whether
 * to prune (worth_pruning), as a walk from the root would: the memo is for
 * what pruning cannot remove yet, not instead of it.  Once the run's last
 * updater is removable (the horizon has passed it), the memo forgets the
 * chain: a walk from the root then prunes it and lets the index kill its
 * entry (all_dead), which a walk that skips members never reports.  A
 * member gone since (pruned) sends the walk back to the root.  Runs shorter than
 * two members are not worth the memo; it is this backend's, forgotten when
 * full; serializable transactions and snapshots taken in recovery always
 * walk.
 */
typedef struct ChainPrefixKey
{
	uint64		tree;
	uint64		root;
} ChainPrefixKey;

typedef struct ChainPrefix
{
	ChainPrefixKey key;
	TransactionId updater;		/* the updater of the run's last member */
	CommandId	cid;			/* its command, if it was the current transaction */
	bool		committed;		/* the updater is known to have committed */
	bool		ends;			/* the chain ends there ... */
	uint64		resume;			/* ... or goes on at this member */
	uint32		length;			/* members in the run */
	TransactionId first_updater;	/* the updater of its first (for pruning) */
} ChainPrefix;

#define CHAIN_PREFIXES_MAX 8192

static HTAB *chain_prefixes = NULL;

static HTAB *
chain_prefix_memo(bool create)
{
	if (chain_prefixes != NULL && create &&
		hash_get_num_entries(chain_prefixes) >= CHAIN_PREFIXES_MAX)
	{
		hash_destroy(chain_prefixes);
		chain_prefixes = NULL;
	}
	if (chain_prefixes == NULL && create)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(ChainPrefixKey);
		ctl.entrysize = sizeof(ChainPrefix);
		chain_prefixes = hash_create("tides HOT chain prefixes seen deleted", 256, &ctl,
									 HASH_ELEM | HASH_BLOBS);
	}
	return chain_prefixes;
}

/*
 * Does snapshot see the deletion by updater (in command cid, if it is the
 * current transaction)?  *committed: known to have committed, learnt here
 * if not yet known.
 */
static bool
deletion_seen(TransactionId updater, CommandId cid, bool *committed, Snapshot snapshot)
{
	if (IsolationIsSerializable() ||
		(snapshot->snapshot_type == SNAPSHOT_MVCC && snapshot->takenDuringRecovery))
		return false;
	if (snapshot->snapshot_type != SNAPSHOT_MVCC && snapshot->snapshot_type != SNAPSHOT_SELF &&
		snapshot->snapshot_type != SNAPSHOT_DIRTY)
		return false;
	if (TransactionIdIsCurrentTransactionId(updater))
		return snapshot->snapshot_type != SNAPSHOT_MVCC || cid < snapshot->curcid;
	if (!*committed)
	{
		if (!TransactionIdDidCommit(updater))
			return false;		/* running, or aborted (a subtransaction rolled back) */
		*committed = true;
	}
	return snapshot->snapshot_type != SNAPSHOT_MVCC || !XidInMVCCSnapshot(updater, snapshot);
}

/* the run of the chain at root that snapshot sees deleted, or NULL */
static ChainPrefix *
chain_prefix_unseen(uint64 tree, uint64 root, Snapshot snapshot)
{
	HTAB	   *memo = chain_prefix_memo(false);
	ChainPrefixKey key = {tree, root};
	ChainPrefix *p;

	if (memo == NULL)
		return NULL;
	p = hash_search(memo, &key, HASH_FIND, NULL);
	return p != NULL && deletion_seen(p->updater, p->cid, &p->committed, snapshot) ? p : NULL;
}

static void
chain_prefix_forget(uint64 tree, uint64 root)
{
	ChainPrefixKey key = {tree, root};

	(void) hash_search(chain_prefix_memo(false), &key, HASH_REMOVE, NULL);
}

/* a walk saw the run seen (longer than known, which it started past) */
static void
chain_prefix_remember(uint64 tree, uint64 root, const ChainPrefix *seen, const ChainPrefix *known)
{
	ChainPrefixKey key = {tree, root};
	ChainPrefix *p;

	if (seen->length < 2 || (known != NULL && seen->length <= known->length))
		return;
	p = hash_search(chain_prefix_memo(true), &key, HASH_ENTER, NULL);
	*p = *seen;
	p->key = key;				/* seen's key is not filled in */
}

/*
 * A walk's account of its run: t, not visible, is the walk's next member,
 * and the chain goes on at next unless it ends at t.  The run grows while
 * snapshot sees every member's deletion, and stops for good (*open) at the
 * first whose it does not.
 */
static void
chain_prefix_extend(ChainPrefix *seen, bool *open, TamTuple *t, bool ends, uint64 next,
					Snapshot snapshot)
{
	TransactionId updater;
	CommandId	cid;
	bool		committed;

	if (!*open)
		return;
	if (!tam_deletion(t, &updater, &cid, &committed) ||
		!deletion_seen(updater, cid, &committed, snapshot))
	{
		*open = false;
		return;
	}
	seen->updater = updater;
	seen->cid = cid;
	seen->committed = committed;
	seen->ends = ends;
	seen->resume = next;
	if (seen->length++ == 0)
		seen->first_updater = updater;
}

/*
 * Read the walk's member at vid: from the reader if one is left (its first
 * read only), else by a point read, looking at the visibility map first
 * when vmbuf is given (see tam_hot_search).
 */
static TamTuple *
read_member(Relation rel, uint64 tree, uint64 vid, Snapshot snapshot, TamTupleBuf *buf,
			TamSeqReader **reader, Buffer *vmbuf)
{
	TamTuple *t = NULL;
	bool		all_visible;

	if (*reader != NULL)
	{
		t = tam_seq_reader_read(*reader, rel, tree, vid, snapshot, buf);
		*reader = NULL;
		if (t != NULL)
			return t;
	}
	all_visible = vmbuf != NULL && tam_vm_all_visible(rel, vid, vmbuf);
	t = tam_fetch_entry(tree, vid, RelationGetRelid(rel), buf);
	if (all_visible && t != NULL && !TAM_IS_STUB(t))
		tam_hint_all_visible(t, snapshot);
	return t;
}

/*
 * A member the walk's snapshot does not see: does it leave every member so
 * far dead for good (*all_dead, if asked), and every one deleted, the
 * newest deleter *deleted_by (if valid: asked, and so far all deleted)?
 */
static void
note_dead_member(Relation rel, TamTuple *t, TamDeadRule kill_rule, bool *all_dead,
				 TransactionId *deleted_by)
{
	TransactionId dead_after;
	HTSV_Result r = tam_satisfies_vacuum(t, InvalidTransactionId, &dead_after);

	if (all_dead && *all_dead &&
		!tam_dead_settled(r, dead_after, GlobalVisTestFor(rel), kill_rule))
		*all_dead = false;
	if (!TransactionIdIsValid(*deleted_by))
		;						/* nobody asks, or a member was not deleted */
	else if (r != HEAPTUPLE_DEAD && r != HEAPTUPLE_RECENTLY_DEAD)
		*deleted_by = InvalidTransactionId;
	else if (r == HEAPTUPLE_RECENTLY_DEAD &&
			 (*deleted_by == FrozenTransactionId || TransactionIdFollows(dead_after, *deleted_by)))
		*deleted_by = dead_after;
}

/*
 * heap_hot_search_buffer for tides.  Starting at *tid -- a root, or on a
 * later call (first_call false) the member returned last -- return the
 * first member of the chain visible to snapshot, with *tid set to it, or
 * NULL.  If all_dead is given, it reports whether every member is dead to
 * everyone for good (the index entry may then be killed; the asker's
 * kills_logged: the kill is a tides log write, TAM_DEAD_LOGGED), and an asker
 * learns the newest deleter of a chain all deleted (its deleted_by).  The
 * result lives in buf.
 * A reader (seqread.c), if given, may supply the root's entry from an
 * engine view older than now: only to an MVCC snapshot, and only for the
 * first walk's first read (see there why that is safe).
 * With vmbuf (a map page pin kept across calls), an MVCC snapshot's reads
 * look at the visibility map first: a version read from a block all-visible
 * just before needs no commit log lookup for its inserter
 * (tam_hint_all_visible); the reader's entries get the same from the map
 * as it was before their view opened.  Only the walk's first version (the
 * root, or a redirect's target) asks the map: a chain whose first version
 * is in an all-visible block ends there (its dead members would keep the
 * bit clear), and a long walk through a table with no map yet -- a row
 * updated over and over in one transaction -- paid a shared hash lookup
 * for every member it read.
 */
TamTuple *
tam_hot_search(Relation rel, uint64 tree, ItemPointer tid, Snapshot snapshot,
				 TamTupleBuf *buf, bool *all_dead, TrtIndexFetch *asker, bool first_call,
				 bool may_prune, TamSeqReader *reader, Buffer *vmbuf)
{
	uint64		start;
	TamDeadRule visible_rule = tam_dead_rule(rel, false);
	TamDeadRule kill_rule = tam_dead_rule(rel, asker != NULL && asker->kills_logged);
	/* the newest deleter of the chain, while every member was deleted (asker's deleted_by) */
	TransactionId deleted_by = FrozenTransactionId;
	/* the run of the chain snapshot sees deleted, as remembered */
	ChainPrefix *known = NULL;

	if (all_dead)
		*all_dead = first_call;
	if (!trt_tid_to_vid(tid, &start))
		return NULL;
	if (first_call && (known = chain_prefix_unseen(tree, start, snapshot)) != NULL &&
		GlobalVisTestIsRemovableXid(GlobalVisTestFor(rel), known->updater))
	{
		/* dead to every snapshot by now: pruning and index kills take over */
		chain_prefix_forget(tree, start);
		known = NULL;
	}
	if (known != NULL && known->ends)
	{
		if (all_dead)
			*all_dead = false;	/* dead to this snapshot, maybe not to all */
		return NULL;
	}
	if (!first_call || snapshot->snapshot_type != SNAPSHOT_MVCC)
		reader = NULL;
	if (snapshot->snapshot_type != SNAPSHOT_MVCC || snapshot->takenDuringRecovery)
		vmbuf = NULL;
	for (;;)
	{
		uint64		vid = start;
		TransactionId prev_xmax = InvalidTransactionId;
		bool		at_chain_start = first_call;
		bool		skip = !first_call;
		bool		vanished = false;
		int			walked = 0;
		TransactionId first_updater = InvalidTransactionId;
		RootState	root = {0};
		/* the map is read for the first version only: see above */
		bool		consult_vm = vmbuf != NULL;
		/* the run of members this walk passed whose deletion snapshot sees */
		ChainPrefix seen = {{0}};
		bool		prefix_open = first_call;

		if (all_dead)
			*all_dead = first_call;
		deleted_by = asker != NULL && asker->deleted_by != NULL && first_call &&
			snapshot->snapshot_type == SNAPSHOT_MVCC ? FrozenTransactionId : InvalidTransactionId;
		if (known != NULL)
		{
			/* start past it: those members are dead to this snapshot, maybe not to all */
			seen = *known;
			vid = known->resume;
			prev_xmax = known->updater;
			/* pruning judges the chain as a walk from the root would */
			first_updater = known->first_updater;
			walked = known->length;
			at_chain_start = false;
			reader = NULL;
			deleted_by = InvalidTransactionId;
			if (all_dead)
				*all_dead = false;
		}
		for (;;)
		{
			TamTuple *t = NULL;
			uint64		next;
			bool		ends;

			t = read_member(rel, tree, vid, snapshot, buf, &reader, consult_vm ? vmbuf : NULL);
			if (t != NULL && !TAM_IS_STUB(t))
				consult_vm = false;
			walked++;
			if (at_chain_start)
				root = root_state(t);
			if (t == NULL)
			{
				vanished = !at_chain_start;
				break;
			}
			if (TAM_IS_STUB(t))
			{
				if (at_chain_start && TAM_IS_REDIRECT(t))
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
			{
				deleted_by = InvalidTransactionId;
				break;
			}
			if (TransactionIdIsValid(prev_xmax) &&
				!TransactionIdEquals(prev_xmax, HeapTupleHeaderGetXmin(t->htup.t_data)))
				break;
			if (!skip)
			{
				bool		valid;

				/* (a non-vacuumable snapshot knows no relation: see tam_surely_dead) */
				if (snapshot->snapshot_type == SNAPSHOT_NON_VACUUMABLE)
					valid = !tam_surely_dead(t, snapshot->vistest, visible_rule);
				else
					valid = tam_visible(t, snapshot);

				tam_ssi_conflict_out(valid, rel, t, snapshot);
				if (valid)
				{
					chain_prefix_remember(tree, start, &seen, known);
					*tid = t->htup.t_self;
					PredicateLockTID(rel, &t->htup.t_self, snapshot,
									 HeapTupleHeaderGetXmin(t->htup.t_data));
					if (all_dead)
						*all_dead = false;
					if (may_prune && first_call && worth_pruning(rel, walked, first_updater))
						tam_hot_prune_opt(rel, tree, start);
					return t;
				}
			}
			skip = false;
			if ((all_dead && *all_dead) || TransactionIdIsValid(deleted_by))
				note_dead_member(rel, t, kill_rule, all_dead, &deleted_by);
			/* a member pointing at itself: written before deletes cleared the bit (tam_tuple_delete) */
			ends = !HeapTupleHeaderIsHotUpdated(t->htup.t_data) ||
				!trt_tid_to_vid(&t->htup.t_data->t_ctid, &next) || next == vid;
			chain_prefix_extend(&seen, &prefix_open, t, ends, ends ? 0 : next, snapshot);
			if (ends)
				break;
			vid = next;
			at_chain_start = false;
			prev_xmax = HeapTupleHeaderGetUpdateXid(t->htup.t_data);
			if (!TransactionIdIsValid(first_updater))
				first_updater = prev_xmax;
		}

		/*
		 * A later call continues from a member visible to a non-MVCC
		 * snapshot, which no prune removes; only a walk from the root can
		 * have been cut by one.
		 */
		if (vanished && known != NULL)
		{
			known = NULL;		/* not what the memo says: walk from the root */
			continue;
		}
		if (!vanished || !first_call)
		{
			chain_prefix_remember(tree, start, &seen, known);
			if (may_prune && first_call && worth_pruning(rel, walked, first_updater))
				tam_hot_prune_opt(rel, tree, start);
			if (TransactionIdIsValid(deleted_by))
				*asker->deleted_by = deleted_by;
			return NULL;
		}
		{
			RootState	now = root_state(tam_fetch_entry(tree, start, RelationGetRelid(rel), buf));

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
 * Would a member after old leave the walk from its chain's root at most
 * TAM_MAX_HOT_DEPTH + 1 reads long?  hot_depth counts updates from the
 * original root; once pruning has made the root a redirect, a walk starts
 * at the redirect's target, whose depth the stub keeps, so only the members
 * from there count.  Reading the root costs a point read, paid only by
 * updates of chains past the limit: without it a row updated often (a
 * pgbench branch) started a new chain, and so new index entries, every 33
 * updates however well pruning kept up, and its index filled with entries
 * of dead chains that every lookup walked.
 */
static bool
chain_has_room(Relation rel, TamTuple *old)
{
	uint64		root_vid;
	TamTupleBuf buf;
	TamTuple *root;
	bool		room;

	if (old->meta.hot_depth < TAM_MAX_HOT_DEPTH)
		return true;
	if (old->meta.hot_depth >= PG_UINT16_MAX - 1 || !HeapTupleHeaderIsHeapOnly(old->htup.t_data))
		return false;
	root_vid = tam_root_vid(old);
	tam_tuple_buf_init(&buf, CurrentMemoryContext);
	root = tam_fetch_entry(trt_rel_tree(rel), root_vid, RelationGetRelid(rel), &buf);
	room = root != NULL && TAM_IS_REDIRECT(root) &&
		old->meta.hot_depth < root->meta.hot_depth + TAM_MAX_HOT_DEPTH;
	tam_tuple_buf_free(&buf);
	return room;
}

/*
 * May the update of old into newtup be HOT: no column any index uses
 * (hot_attrs, RelationGetIndexAttrBitmap's INDEX_ATTR_BITMAP_ALL) changed --
 * heap_update's test -- and the chain has room (chain_has_room)?
 */
bool
tam_hot_update_allowed(Relation rel, Bitmapset *hot_attrs, TamTuple *old, HeapTuple newtup)
{
	TupleDesc	desc = RelationGetDescr(rel);
	bool		allowed = true;
	int			x = -1;

	while (allowed && (x = bms_next_member(hot_attrs, x)) >= 0)
		allowed = attr_unchanged(desc, x + FirstLowInvalidHeapAttributeNumber, &old->htup, newtup);
	return allowed && chain_has_room(rel, old);
}

/*
 * Index deletion (heap_index_delete_tuples): is every member of the chain
 * rooted at root_vid dead to everyone?  Advances *latest_removed over them.
 */
bool
tam_hot_chain_dead(Relation rel, uint64 tree, uint64 root_vid, GlobalVisState *vistest,
					 TransactionId *latest_removed)
{
	TamTupleBuf buf;
	ItemPointerData tid;
	bool		all_dead;
	TamTuple *t;
	uint64		vid;
	TransactionId prev_xmax = InvalidTransactionId;
	SnapshotData nonvacuumable;

	tam_tuple_buf_init(&buf, CurrentMemoryContext);
	trt_vid_to_tid(root_vid, &tid);
	InitNonVacuumableSnapshot(nonvacuumable, vistest);
	if (tam_hot_search(rel, tree, &tid, &nonvacuumable, &buf, NULL, NULL, true, false, NULL, NULL) != NULL)
	{
		tam_tuple_buf_free(&buf);
		return false;
	}
	all_dead = true;

	/* walk it again for latestRemovedXid (as heap does, after deciding) */
	t = tam_fetch_entry(tree, root_vid, RelationGetRelid(rel), &buf);
	if (t != NULL && TAM_IS_REDIRECT(t))
	{
		vid = t->meta.link;
		t = tam_fetch_version(tree, vid, RelationGetRelid(rel), &buf);
	}
	while (t != NULL && !TAM_IS_STUB(t))
	{
		uint64		next;

		if (TransactionIdIsValid(prev_xmax) &&
			!TransactionIdEquals(prev_xmax, HeapTupleHeaderGetXmin(t->htup.t_data)))
			break;
		HeapTupleHeaderAdvanceLatestRemovedXid(t->htup.t_data, latest_removed);
		if (!HeapTupleHeaderIsHotUpdated(t->htup.t_data) ||
			!trt_tid_to_vid(&t->htup.t_data->t_ctid, &next) || next == t->vid)
			break;
		prev_xmax = HeapTupleHeaderGetUpdateXid(t->htup.t_data);
		t = tam_fetch_version(tree, next, RelationGetRelid(rel), &buf);
	}
	tam_tuple_buf_free(&buf);
	return all_dead;
}

/* ---- pruning */

/*
 * Walk the chain at root_vid (a HOT-updated version or a redirect) while its
 * members are dead or recently dead by judge, remembering the last dead one,
 * as heap_prune_chain does: xids are not commit order, so a recently dead
 * member may come before a dead one -- but a member after a dead one being
 * dead means every member before it is gone for everyone too.  False if
 * there is no chain to prune (the root is gone or a dead stub).  The caller
 * holds the root's stripe lock, which every writer of the root holds too.
 */
bool
tam_hot_prune_plan(Relation rel, uint64 tree, uint64 root_vid, TamTupleBuf *buf,
					 TamMemberJudge judge, void *arg, TamHotPrune *p)
{
	Oid			relid = RelationGetRelid(rel);
	TransactionId prev_xmax = InvalidTransactionId;
	TamTuple *t = tam_fetch_entry(tree, root_vid, relid, buf);
	uint64		vid;
	int			cap = 0;

	memset(p, 0, sizeof(*p));
	p->latestdead = -1;
	if (t == NULL || (TAM_IS_STUB(t) && !TAM_IS_REDIRECT(t)))
		return false;
	p->root_is_stub = TAM_IS_STUB(t);
	if (p->root_is_stub)
	{
		p->old_target = t->meta.link;
		vid = p->old_target;
		t = NULL;
	}
	else
		vid = root_vid;
	for (;;)
	{
		TamMemberFate fate;
		uint64		next;

		if (t == NULL)
		{
			t = tam_fetch_version(tree, vid, relid, buf);
			if (t == NULL || !HeapTupleHeaderIsHeapOnly(t->htup.t_data) ||
				(TransactionIdIsValid(prev_xmax) &&
				 !TransactionIdEquals(prev_xmax, HeapTupleHeaderGetXmin(t->htup.t_data))))
				break;
		}
		if (p->n == cap)
		{
			cap = cap ? cap * 2 : 16;
			p->chain = p->chain ? repalloc(p->chain, cap * sizeof(uint64)) : palloc(cap * sizeof(uint64));
			p->updaters = p->updaters ? repalloc(p->updaters, cap * sizeof(TransactionId))
				: palloc(cap * sizeof(TransactionId));
			p->depths = p->depths ? repalloc(p->depths, cap * sizeof(uint16)) : palloc(cap * sizeof(uint16));
		}
		p->chain[p->n] = vid;
		p->updaters[p->n] = HeapTupleHeaderGetUpdateXid(t->htup.t_data);
		p->depths[p->n] = t->meta.hot_depth;
		p->n++;
		fate = judge(t, arg);
		if (fate == TAM_MEMBER_DEAD)
			p->latestdead = p->n - 1;
		else if (fate != TAM_MEMBER_RECENTLY_DEAD)
			break;				/* a member that stays, and so do all after it */
		if (!HeapTupleHeaderIsHotUpdated(t->htup.t_data) ||
			!trt_tid_to_vid(&t->htup.t_data->t_ctid, &next) || next == vid)
			break;
		prev_xmax = HeapTupleHeaderGetUpdateXid(t->htup.t_data);
		vid = next;
		t = NULL;
	}
	return true;
}

/*
 * Into b: delete the members up to latestdead (the root version itself goes
 * by being overwritten with a stub) and, if a member remains after them,
 * redirect the root to it.  Without one the caller decides the root's fate.
 */
void
tam_hot_prune_members(tides_batch *b, uint64 tree, uint64 root_vid, TamHotPrune *p)
{
	Assert(p->latestdead >= 0);
	if (p->latestdead + 1 < p->n &&
		(!p->root_is_stub || p->chain[p->latestdead + 1] != p->old_target))
		tam_batch_add_stub(b, tree, root_vid, TAM_VF_REDIRECT, p->chain[p->latestdead + 1],
							 p->depths[p->latestdead + 1]);
	for (int i = p->root_is_stub ? 0 : 1; i <= p->latestdead; i++)
	{
		uint8		key[TRT_ROW_KEY_LEN];

		trt_row_key(key, tree, p->chain[i]);
		if (tides_batch_delete(b, key, sizeof(key)) != TIDES_OK)
			ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory building a tides batch")));
	}
}

void
tam_hot_prune_free(TamHotPrune *p)
{
	if (p->chain)
		pfree(p->chain);
	if (p->updaters)
		pfree(p->updaters);
	if (p->depths)
		pfree(p->depths);
	p->chain = NULL;
	p->updaters = NULL;
	p->depths = NULL;
}

/* on access: dead by the global horizon (heap_page_prune_opt's test) */
static TamMemberFate
judge_on_access(TamTuple *t, void *arg)
{
	GlobalVisState *vistest = (GlobalVisState *) arg;
	TransactionId dead_after;

	switch (tam_satisfies_vacuum(t, InvalidTransactionId, &dead_after))
	{
		case HEAPTUPLE_DEAD:
			return TAM_MEMBER_DEAD;
		case HEAPTUPLE_RECENTLY_DEAD:
			return GlobalVisTestIsRemovableXid(vistest, dead_after) ?
				TAM_MEMBER_DEAD : TAM_MEMBER_RECENTLY_DEAD;
		default:
			return TAM_MEMBER_STAYS;
	}
}

static bool
updaters_durable(const TamHotPrune *p)
{
	for (int i = 0; i < p->n; i++)
		if (TransactionIdIsNormal(p->updaters[i]) && !trt_xid_durable(p->updaters[i]))
			return false;
	return true;
}

/*
 * heap_page_prune_opt for one chain: a reader that walked a long way to its
 * member shortens the chain for the next one.  Opportunistic in every way:
 * it skips the chain if another backend holds the root's stripe (or we do,
 * further up the stack), and a write the engine cannot take right now is
 * simply not made.  Unlike VACUUM it never removes the root: a chain dead to
 * the end becomes a dead stub (below) or keeps its last member.
 *
 * The pruning records reach the tides log, which may be synced before
 * PostgreSQL flushes the WAL.  Were an updater's commit record lost in an
 * OS crash while our deletions survived, the version it replaced would be
 * gone with nothing to take its place.  So, as SetHintBits does, a member
 * goes only if its updater's commit record is flushed.
 */
/* the newest updater among the members pruned: a hot standby's conflict horizon */
static TransactionId
pruned_horizon(const TamHotPrune *p)
{
	TransactionId h = InvalidTransactionId;

	for (int i = 0; i <= p->latestdead; i++)
		if (!TransactionIdIsValid(h) || TransactionIdFollows(p->updaters[i], h))
			h = p->updaters[i];
	return h;
}

void
tam_hot_prune_opt(Relation rel, uint64 tree, uint64 root_vid)
{
	static tides_batch *prune_batch = NULL;
	LWLock	   *stripe = trt_row_lock(tree, root_vid);
	TamTupleBuf buf;
	TamHotPrune p;
	int			removed = 0;

	/* a hot standby only reads: the primary prunes, and its WAL brings the result */
	if (RecoveryInProgress() || !LWLockConditionalAcquire(stripe, LW_EXCLUSIVE))
		return;
	trt_row_lock_acquired(stripe);
	if (prune_batch == NULL && (prune_batch = tides_batch_new()) == NULL)
	{
		LWLockRelease(stripe);
		return;
	}
	tides_batch_clear(prune_batch);
	/* losing a prune in a crash only leaves the chain longer: no sync of its own */
	tides_batch_defer_sync(prune_batch);
	tam_tuple_buf_init(&buf, CurrentMemoryContext);
	if (tam_hot_prune_plan(rel, tree, root_vid, &buf, judge_on_access, GlobalVisTestFor(rel), &p))
	{
		/*
		 * A member may go only once its updater's commit record is flushed
		 * (an asynchronous commit lost in a crash would bring it back): with
		 * synchronous_commit = off that is up to wal_writer_delay later.
		 * Updaters along a chain committed in chain order, so prune up to
		 * the last member whose updater is flushed, not all or nothing --
		 * else a row updated faster than the WAL writer flushes was never
		 * pruned, and its chain kept hitting the length limit.
		 */
		while (p.latestdead >= 0 &&
			   XLogNeedsFlush(TransactionIdGetCommitLSN(p.updaters[p.latestdead])))
			p.latestdead--;
		/* all dead, but no dead stub yet: the root redirects to the last member */
		if (p.latestdead == p.n - 1 && !updaters_durable(&p))
			p.latestdead--;
		if (p.latestdead >= 0)
		{
			tam_hot_prune_members(prune_batch, tree, root_vid, &p);

			/*
			 * A chain dead to the end (its row was deleted, or updated out of
			 * HOT: a new chain has it) leaves a dead stub, heap's LP_DEAD: a
			 * walk then reads one entry, and VACUUM removes the stub with the
			 * index entries.  A dead stub tells index scans they may forget
			 * their entry, so only once every updater's tides records are
			 * durable (tam_surely_dead's rule: a crash must not bring a
			 * version back that an index forgot).  Until then the root stays
			 * a redirect to the last member, and a walk reads two entries.
			 */
			if (p.latestdead == p.n - 1)
				tam_batch_add_stub(prune_batch, tree, root_vid, TAM_VF_DEAD, 0, 0);
			trt_wal_set_conflict(pruned_horizon(&p), rel->rd_node.dbNode);
			if (trt_engine_write(trt_engine(), prune_batch, true, NULL) == TIDES_OK)
				removed = p.latestdead + 1;	/* the root's version included */
		}
		tam_hot_prune_free(&p);
	}
	LWLockRelease(stripe);
	tam_tuple_buf_free(&buf);
	if (removed > 0)
		pgstat_update_heap_dead_tuples(rel, removed);
}
