/*
 * tidx_insert.c -- aminsert for tides_btree, with nbtree's uniqueness rules.
 *
 * A plain insert writes one entry (tagged with the transaction, like the
 * row it points at).  A unique insert takes the stripe lock of (tree,
 * encoded key) -- every inserter of an equal key takes the same stripe --
 * and looks at each existing entry with that key: the row it points at is
 * fetched with a dirty snapshot; an in-progress inserter or deleter is
 * waited for (without the lock) and the check starts over; a live row is a
 * duplicate (23505, worded as nbtree words it), unless the caller asked
 * for a partial check (deferred constraints, speculative insertion), which
 * only reports it.  The entry is written before the lock is released, so
 * the next inserter of the key sees it.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "storage/procarray.h"

#include "access/tableam.h"
#include "catalog/index.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "storage/shmem.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "index/tidx.h"

#define TIDX_STRIPES 1024

static LWLockPadded *stripes = NULL;

void
tidx_lock_stripes_request(void)
{
	RequestNamedLWLockTranche("tides_index", TIDX_STRIPES);
}

LWLock *
tidx_stripe_lock(uint64 tree, const uint8 *prefix, size_t len)
{
	uint32		h;

	if (stripes == NULL)
		stripes = GetNamedLWLockTranche("tides_index");
	h = hash_bytes(prefix, (int) len) ^ (uint32) (tree * UINT64CONST(0x9E3779B97F4A7C15) >> 32);
	return &stripes[h % TIDX_STRIPES].lock;
}

/* ------------------------------------------------------------- writes */

static void
write_entry_now(const char *key, int klen, IndexTuple itup)
{
	tides_batch *b;

	trt_xact_note_write();
	b = trt_local_batch();
	trt_xact_tag_batch(b);
	if (tides_batch_put(b, key, klen, itup, TIDX_VALUE_LEN(itup)) != TIDES_OK)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("tides_btree: could not add an index entry of %d bytes", klen)));
	trt_write_batch(b);
}

/*
 * Write one entry now.  Into a unique index, between the two calls that keep
 * the scan hints of its tree true (tidx_hint.c), also when the write fails.
 */
static void
write_entry(const TidxDesc *d, const char *key, int klen, IndexTuple itup)
{
	if (!d->unique)
	{
		write_entry_now(key, klen, itup);
		return;
	}
	tidx_hint_write_begin(d->tree, (const uint8 *) key, klen);
	PG_TRY();
	{
		write_entry_now(key, klen, itup);
	}
	PG_FINALLY();
	{
		tidx_hint_write_end(d->tree, (const uint8 *) key, klen);
	}
	PG_END_TRY();
}

/*
 * Delete entries whose rows are dead to every transaction.  Not tied to the
 * current transaction (like VACUUM's deletes): the entries are garbage
 * whatever it does.  Only an optimization, so dropped when the engine is
 * busy (the next scan or VACUUM finds them again) rather than waited for:
 * the caller's own scan may pin the memtables a wait would be for.
 */
void
tidx_delete_keys(Relation heap, uint8 **keys, size_t *lens, int n)
{
	tides_batch *b;
	TransactionId horizon;

	if (n == 0)
		return;
	/* the rows are dead to everyone: no snapshot older than the removable horizon sees them */
	horizon = GetOldestNonRemovableTransactionId(heap);
	TransactionIdRetreat(horizon);
	trt_wal_set_conflict(horizon, heap->rd_node.dbNode);
	b = trt_local_batch();
	for (int i = 0; i < n; i++)
		tides_batch_delete(b, keys[i], lens[i]);
	(void) trt_try_write_batch(b);
}

/* an entry's engine key must fit the engine's limit */
void
tidx_check_key_size(Relation index, Relation heap, int klen, ItemPointer tid)
{
	if (klen > TIDX_MAX_KEY_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("index row key of %d bytes exceeds tides_btree maximum %d for index \"%s\"",
						klen, TIDX_MAX_KEY_LEN, RelationGetRelationName(index)),
				 errdetail("Index row references tuple (%u,%u) in relation \"%s\".",
						   ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
						   heap ? RelationGetRelationName(heap) : "?"),
				 errhint("Values this long cannot be indexed.  Consider a function index of an MD5 hash of the value.")));
}

/* ------------------------------------------------------------- uniqueness */

typedef struct CheckResult
{
	TransactionId xwait;		/* wait for this one, then check again */
	uint32		spec_token;
	ItemPointerData wait_tid;
	bool		conflict;		/* a live duplicate: error */
	bool		is_unique;		/* partial check: no potential duplicate */
	bool		found_self;
	int			nkill;
	uint8	   *killkeys[64];
	size_t		killlens[64];
} CheckResult;

static void
check_unique(Relation index, Relation heap, const StringInfo prefix, ItemPointer self,
			 IndexUniqueCheck checkUnique, CheckResult *res)
{
	uint8	   *upper;
	int			ulen = prefix->len;
	TrtIter   *w;
	SnapshotData SnapshotDirty;
	bool		can_kill = tidx_heap_is_tides(heap) && !RecoveryInProgress();

	/*
	 * Under the key's stripe lock.  The look itself writes nothing (this
	 * backend's deferred entries belong to other indexes: it needs none of
	 * them); fetching a row may write them first, as the entry's write does.
	 * Most checks find no entry at all (a new key, an ascending one beyond
	 * every file's range, or one no file's stem filter lets through): the
	 * engine proves that without an iterator.
	 */
	if (trt_stem_absent((const uint8 *) prefix->data, prefix->len))
		return;
	upper = palloc(prefix->len);
	memcpy(upper, prefix->data, prefix->len);
	if (!tidx_prefix_successor(upper, &ulen))
		elog(ERROR, "tides_btree: key prefix without successor");
	InitDirtySnapshot(SnapshotDirty);
	/* only entries prefix || TID matter: files whose stem filter rules them out are skipped */
	StaticAssertStmt(TIDX_TID_LEN == TRT_STEM_SUFFIX_LEN, "an index entry's stem is its key");
	w = trt_iter_open_stem((uint8 *) prefix->data, prefix->len, upper, ulen, "read an index");
	for (tides_iter_first(w->it); tides_iter_valid(w->it); tides_iter_next(w->it))
	{
		size_t		klen;
		const uint8 *k = tides_iter_key(w->it, &klen);
		ItemPointerData htid;
		bool		all_dead = false;

		/* only entries of exactly this key (encodings are self-delimiting) */
		if (klen != (size_t) prefix->len + TIDX_TID_LEN)
			continue;
		tidx_decode_tid(k, klen, &htid);
		if (ItemPointerEquals(&htid, self))
		{
			res->found_self = true;
			continue;
		}
		if (table_index_fetch_tuple_check(heap, &htid, &SnapshotDirty, &all_dead))
		{
			TransactionId xwait;

			if (checkUnique == UNIQUE_CHECK_PARTIAL)
			{
				res->is_unique = false;
				break;
			}
			xwait = TransactionIdIsValid(SnapshotDirty.xmin) ? SnapshotDirty.xmin : SnapshotDirty.xmax;
			if (TransactionIdIsValid(xwait))
			{
				res->xwait = xwait;
				res->spec_token = SnapshotDirty.speculativeToken;
				res->wait_tid = htid;
				break;
			}

			/*
			 * A definite conflict, unless the row being inserted is itself
			 * dead by now (CREATE INDEX CONCURRENTLY's validation).
			 */
			if (!table_index_fetch_tuple_check(heap, self, SnapshotSelf, NULL))
				break;
			res->conflict = true;
			break;
		}
		else if (all_dead && can_kill && res->nkill < lengthof(res->killkeys))
		{
			res->killkeys[res->nkill] = palloc(klen);
			memcpy(res->killkeys[res->nkill], k, klen);
			res->killlens[res->nkill] = klen;
			res->nkill++;
		}
	}
	trt_iter_check(w);
	trt_iter_close(w);
	pfree(upper);
}

bool
tidx_insert(Relation index, Datum *values, bool *isnull, ItemPointer heap_tid,
			Relation heap, IndexUniqueCheck checkUnique, bool indexUnchanged,
			IndexInfo *indexInfo)
{
	TidxDesc   *d = indexInfo->ii_AmCache;
	StringInfoData key;
	IndexTuple	itup;
	int			prefix_len;
	bool		check;
	bool		is_unique = true;

	if (d == NULL || d->index != index)
	{
		d = MemoryContextAlloc(indexInfo->ii_Context, sizeof(TidxDesc));
		tidx_desc_init(d, index, false);
		indexInfo->ii_AmCache = d;
	}

	initStringInfo(&key);
	tidx_encode_prefix(&key, d, values, isnull);
	prefix_len = key.len;
	tidx_append_tid(&key, heap_tid);
	tidx_check_key_size(index, heap, key.len, heap_tid);
	itup = tidx_entry_value(d, values, isnull, heap_tid);

	/* relation-level SIREAD locks on the index (ampredlocks is false) */
	CheckForSerializableConflictIn(index, NULL, InvalidBlockNumber);

	check = checkUnique != UNIQUE_CHECK_NO && d->unique;
	if (check && !d->nulls_not_distinct)
	{
		for (int i = 0; i < d->nkeys; i++)
			if (isnull[i])
				check = false;	/* NULLs are distinct: no conflict possible */
	}
	if (!check)
	{
		/*
		 * nobody else looks for the entries of a non-unique index: deferred
		 * (xact.c); a unique index's are written now (its scan hints know
		 * every writer, tidx_hint.c)
		 */
		if (checkUnique == UNIQUE_CHECK_NO && indexInfo->ii_ExclusionOps == NULL && !d->unique)
			trt_xact_defer_put(key.data, key.len, itup, TIDX_VALUE_LEN(itup));
		else if (checkUnique != UNIQUE_CHECK_EXISTING)
			write_entry(d, key.data, key.len, itup);
		if (itup)
			pfree(itup);
		pfree(key.data);
		return true;
	}

	/*
	 * Deferred entries (of the row's other indexes) stay deferred: the check
	 * does not need them, and the entry's write takes them along (one
	 * engine write, xact.c), or the row's next write does.
	 */
	for (;;)
	{
		StringInfoData prefix;
		CheckResult res;
		LWLock	   *lock;

		CHECK_FOR_INTERRUPTS();
		memset(&res, 0, sizeof(res));
		res.is_unique = true;
		prefix.data = key.data;
		prefix.len = prefix_len;
		prefix.maxlen = key.maxlen;
		prefix.cursor = 0;
		lock = tidx_stripe_lock(d->tree, (uint8 *) key.data, prefix_len);
		LWLockAcquire(lock, LW_EXCLUSIVE);
		PG_TRY();
		{
			check_unique(index, heap, &prefix, heap_tid, checkUnique, &res);
			if (!TransactionIdIsValid(res.xwait) && !res.conflict &&
				checkUnique != UNIQUE_CHECK_EXISTING)
				write_entry(d, key.data, key.len, itup);
		}
		PG_CATCH();
		{
			LWLockRelease(lock);
			PG_RE_THROW();
		}
		PG_END_TRY();
		LWLockRelease(lock);

		if (res.nkill > 0)
			tidx_delete_keys(heap, res.killkeys, res.killlens, res.nkill);

		if (TransactionIdIsValid(res.xwait))
		{
			/* wait for the other inserter or deleter, then look again */
			if (res.spec_token)
				SpeculativeInsertionWait(res.xwait, res.spec_token);
			else
				XactLockTableWait(res.xwait, heap, &res.wait_tid, XLTW_InsertIndex);
			continue;
		}
		if (res.conflict)
		{
			char	   *key_desc;

			CheckForSerializableConflictIn(index, NULL, InvalidBlockNumber);
			key_desc = BuildIndexValueDescription(index, values, isnull);
			ereport(ERROR,
					(errcode(ERRCODE_UNIQUE_VIOLATION),
					 errmsg("duplicate key value violates unique constraint \"%s\"",
							RelationGetRelationName(index)),
					 key_desc ? errdetail("Key %s already exists.", key_desc) : 0,
					 errtableconstraint(heap, RelationGetRelationName(index))));
		}
		is_unique = res.is_unique;
		break;
	}
	if (itup)
		pfree(itup);
	pfree(key.data);
	return is_unique;
}
