/*
 * incarnation.c -- transactions PostgreSQL forgot, and transactions whose
 * tides writes were cut short (docs/durability.md, D1 and D4).
 *
 * After a crash, PostgreSQL hands out again every xid at or above the
 * nextXid its own recovery ended with: transactions that had those xids
 * never reached the WAL, so PostgreSQL forgot them.  Their rows may still be
 * in the tides log.  To keep such a row from looking like it belongs to the
 * new owner of its xid, every stored xid carries the incarnation (server
 * start) in which it was written, and each incarnation records the nextXid
 * and nextMulti it started from.  An xid written in incarnation i is lost
 * if it is at or above the start of incarnation i + 1.
 *
 * The start values are exact: PostgreSQL's recovery ends either with redo,
 * after which our custom resource manager's cleanup callback reads the
 * final nextXid in the startup process, or without redo (no WAL after the
 * last checkpoint), in which case the checkpoint in pg_control, read by the
 * postmaster before the startup process runs, holds it.  No backend can
 * hand out an xid before either.
 *
 * Transactions the engine reports unsealed after its recovery (their seal
 * never made it to disk) are recorded as aborted (TRT_META_ABORTED): their rows
 * stay invisible even where PostgreSQL's commit record survived.
 *
 * The first backend or worker to use tides after a start "finalises" the
 * incarnation: it persists the new incarnation number, its start values and
 * the aborted set, then loads them into shared memory.
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/transam.h"
#include "access/xlog_internal.h"
#include "catalog/pg_control.h"
#include "common/controldata_utils.h"
#include "common/relpath.h"
#include "miscadmin.h"

#include <unistd.h>

#include "runtime/trt.h"
#include "runtime/meta.h"


/* ---- capturing where PostgreSQL's recovery ended */

void
trt_capture_control_file(void)
{
	bool		crc_ok;
	ControlFileData *cf = get_controlfile(DataDir, &crc_ok);

	if (!crc_ok)
		ereport(LOG, (errmsg("tides: pg_control has a bad checksum; its nextXid is used anyway")));
	trt_shared->start_next_fxid = U64FromFullTransactionId(cf->checkPointCopy.nextXid);
	trt_shared->start_next_multi = cf->checkPointCopy.nextMulti;
	trt_shared->after_crash = cf->state != DB_SHUTDOWNED &&
		cf->state != DB_SHUTDOWNED_IN_RECOVERY;
	pfree(cf);
}

/* unlink every segment of one fork file */
static void
unlink_fork(const char *path)
{
	char		seg[MAXPGPATH];

	(void) unlink(path);
	for (int i = 1;; i++)
	{
		snprintf(seg, sizeof(seg), "%s.%d", path, i);
		if (unlink(seg) != 0)
			break;
	}
}

/* delete every key of a tree (an unlogged table after a crash) */
static tides_status
empty_tree(tides_db *db, uint64 tree)
{
	uint8		lower[8],
				upper[8];
	tides_iter_options io;
	tides_iter *it;
	tides_batch *b;
	tides_status s;

	trt_key_put_tree(lower, tree);
	s = trt_drop_prefix(db, lower, sizeof(lower), false);
	if (s != TIDES_BUSY)
		return s;
	/* the dropped-prefix table is full: tombstones instead */
	trt_key_put_tree(upper, tree + 1);
	memset(&io, 0, sizeof(io));
	io.lower = lower;
	io.lower_len = sizeof(lower);
	io.upper = upper;
	io.upper_len = sizeof(upper);
	b = tides_batch_new();
	it = tides_iter_new(db, &io);
	if (b == NULL || it == NULL)
		s = TIDES_NO_MEMORY;
	else
		s = TIDES_OK;
	for (tides_iter_first(it); s == TIDES_OK && tides_iter_valid(it); tides_iter_next(it))
	{
		size_t		klen;
		const void *k = tides_iter_key(it, &klen);

		s = tides_batch_delete(b, k, klen);
		if (s == TIDES_OK && tides_batch_bytes(b) >= trt_batch_limit())
		{
			s = trt_engine_write_here(db, b, false, NULL);
			tides_batch_clear(b);
		}
	}
	if (s == TIDES_OK && it != NULL)
		s = tides_iter_status(it);
	if (s == TIDES_OK && tides_batch_count(b) > 0)
		s = trt_engine_write_here(db, b, false, NULL);
	if (it)
		tides_iter_free(it);
	if (b)
		tides_batch_free(b);
	return s == TIDES_OK ? tides_sync(db, 0, true) : s;
}

/*
 * A tree's rows may have been lost in the crash while their index entries,
 * WAL-logged, survived: VACUUM must show the indexes every row id below the
 * tree's reservation that has no key (src/am/vacuum.c, check_gap).  The mark
 * is the reservation, kept if an earlier crash left a higher one.
 */
static void
mark_suspect(tides_db *db, uint64 tree, tides_batch **marks)
{
	uint8		key[TRT_META_TREE_KEY_LEN];
	uint64		reserved = 0,
				mark = 0;
	size_t		vlen;

	trt_meta_tree_key(key, TRT_META_VID_RESERVED, tree);
	if (tides_get_into(db, NULL, key, sizeof(key), &reserved, sizeof(reserved), &vlen) != TIDES_OK ||
		vlen != sizeof(reserved) || reserved == 0)
		return;
	trt_meta_tree_key(key, TRT_META_SUSPECT, tree);
	if (tides_get_into(db, NULL, key, sizeof(key), &mark, sizeof(mark), &vlen) == TIDES_OK &&
		vlen == sizeof(mark) && mark >= reserved)
		return;
	if (*marks == NULL && (*marks = tides_batch_new()) == NULL)
		ereport(FATAL, (errcode(ERRCODE_OUT_OF_MEMORY),
						errmsg("tides: out of memory marking relations after a crash")));
	if (tides_batch_put(*marks, key, sizeof(key), &reserved, sizeof(reserved)) != TIDES_OK)
		ereport(FATAL, (errcode(ERRCODE_OUT_OF_MEMORY),
						errmsg("tides: out of memory marking relations after a crash")));
}

/*
 * After a crash -- pg_control does not say the server shut down cleanly,
 * whether or not WAL redo then has anything to do -- in the postmaster,
 * before the startup process or any backend runs:
 *   - unlogged tables lose their rows, as heap's do (PostgreSQL resets their
 *     files and indexes the same way);
 *   - the visibility map forks of all tides relations go: they are not
 *     WAL-logged, and a clear lost in the crash could leave a bit that
 *     claims a changed row is visible to all (see src/am/vm.c);
 *   - every tree gets a suspect mark (mark_suspect).
 * A failure here stops the server: it would leave rows an empty unlogged
 * index does not know, or bits nothing vouches for.
 */
void
trt_reset_after_crash(void)
{
	tides_options o;
	tides_db   *db = NULL;
	char		dir[MAXPGPATH];
	uint8		lower[TRT_META_HEAD_LEN],
				upper[TRT_META_HEAD_LEN];
	tides_iter *it;
	int			nmaps = 0;
	uint64	   *unlogged = NULL;
	int			nunlogged = 0;
	tides_status s = TIDES_OK;
	tides_batch *marks = NULL;

	/* a restored base backup's pg_control says "in production": this runs then too */
	if (!trt_shared->after_crash || !trt_shared->engine_ok)
		return;
	trt_fill_options(&o);
	snprintf(dir, sizeof(dir), "%s/pg_tides", DataDir);
	s = tides_open(trt_shared->region, dir, &o, trt_engine_vfs(), false, NULL, &db);
	if (s != TIDES_OK)
		ereport(FATAL,
				(errcode(trt_status_sqlstate(s)),
				 errmsg("tides: could not open the engine to reset it after a crash: %s",
						db ? tides_errmsg(db) : "out of memory")));
	it = trt_meta_kind_iter_raw(db, TRT_META_TREEMAP, lower, upper);
	if (it == NULL)
		ereport(FATAL, (errcode(ERRCODE_OUT_OF_MEMORY),
						errmsg("tides: could not read the relation map after a crash: out of engine memory")));
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
	{
		size_t		klen,
					vlen;
		const uint8 *k = tides_iter_key(it, &klen);
		const char *v = tides_iter_value(it, &vlen);
		RelFileNode rnode;
		TrtTreeOwnerValue ov;
		uint64		tree;
		char	   *path;

		if (!trt_meta_parse_tree_key(k, klen, TRT_META_TREEMAP, &tree) ||
			!trt_meta_owner_value(v, vlen, &ov))
			continue;
		rnode.dbNode = ov.db;
		rnode.spcNode = ov.spc;
		rnode.relNode = ov.rel;
		path = relpathbackend(rnode, ov.backend, VISIBILITYMAP_FORKNUM);
		unlink_fork(path);
		pfree(path);
		nmaps++;
		/* with tides.wal = on a crash loses no row: nothing to suspect */
		if (!trt_wal)
			mark_suspect(db, tree, &marks);
		if (ov.persistence == RELPERSISTENCE_UNLOGGED)
		{
			unlogged = unlogged ? repalloc(unlogged, (nunlogged + 1) * sizeof(uint64))
				: palloc(sizeof(uint64));
			unlogged[nunlogged++] = tree;
		}
	}
	s = tides_iter_status(it);
	tides_iter_free(it);
	if (s == TIDES_OK && marks != NULL && tides_batch_count(marks) > 0)
	{
		/* no worker runs yet: a full level 0 or memtable is this process's to clear */
		s = trt_engine_write_here(db, marks, false, NULL);
		if (s == TIDES_OK)
			s = tides_sync(db, 0, true);
	}
	if (marks)
		tides_batch_free(marks);
	for (int i = 0; s == TIDES_OK && i < nunlogged; i++)
		s = empty_tree(db, unlogged[i]);
	if (s != TIDES_OK)
		ereport(FATAL,
				(errcode(trt_status_sqlstate(s)),
				 errmsg("tides: could not reset unlogged tables after a crash: %s", tides_errmsg(db))));
	tides_close(db);
	if (unlogged)
		pfree(unlogged);
	ereport(LOG,
			(errmsg("tides: after the crash, reset %d unlogged tables and the visibility maps of %d relations",
					nunlogged, nmaps)));
}

void
trt_incarnation_redo_done(void)
{
	/* the startup process, after redo: these are final */
	if (trt_shared == NULL)
		return;
	trt_shared->start_next_fxid = U64FromFullTransactionId(ReadNextFullTransactionId());
	trt_shared->start_next_multi = ReadNextMultiXactId();
}

/* ---- finalisation */

typedef struct IncStartValue
{
	uint64		next_fxid;
	uint32		next_multi;
	uint32		pad;
} IncStartValue;

static int
cmp_u64(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a,
				y = *(const uint64 *) b;

	return x < y ? -1 : (x > y);
}

/* iterate keys of one metadata kind: fn(key, klen, val, vlen) */
static void
scan_meta(tides_db *db, TrtMetaKind kind,
		  void (*fn) (const uint8 *, size_t, const void *, size_t, void *), void *arg)
{
	uint8		lower[TRT_META_HEAD_LEN],
				upper[TRT_META_HEAD_LEN];
	tides_iter *it;

	trt_meta_kind_range(lower, upper, kind);
	it = trt_open_range_iter(db, lower, sizeof(lower), upper, sizeof(upper), false);
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
	{
		size_t		klen,
					vlen;
		const uint8 *k = tides_iter_key(it, &klen);
		const void *v = tides_iter_value(it, &vlen);

		fn(k, klen, v, vlen, arg);
	}
	if (tides_iter_status(it) != TIDES_OK)
	{
		tides_status s = tides_iter_status(it);

		trt_close_iter(it);
		trt_engine_error(s, "read metadata");
	}
	trt_close_iter(it);
}

static void
load_inc_start(const uint8 *k, size_t klen, const void *v, size_t vlen, void *arg)
{
	TrtShared *ts = trt_shared;
	IncStartValue sv;
	uint32		inc;

	if (!trt_meta_parse_inc_start_key(k, klen, &inc) || vlen < sizeof(sv) ||
		ts->n_inc_start >= TRT_MAX_INCARNATIONS)
		return;
	memcpy(&sv, v, sizeof(sv));
	ts->inc_start[ts->n_inc_start].inc = inc;
	ts->inc_start[ts->n_inc_start].next_fxid = sv.next_fxid;
	ts->inc_start[ts->n_inc_start].next_multi = sv.next_multi;
	ts->n_inc_start++;
}

static void
load_aborted(const uint8 *k, size_t klen, const void *v, size_t vlen, void *arg)
{
	TrtShared *ts = trt_shared;
	uint32		inc;
	TransactionId top;

	if (!trt_meta_parse_aborted_key(k, klen, &inc, &top))
		return;
	if (ts->n_aborted >= TRT_MAX_ABORTED)
	{
		*(bool *) arg = true;
		return;
	}
	ts->aborted[ts->n_aborted++] = trt_make_tag(inc, top);
}

/* an engine failure with its SQLSTATE (an I/O error is 58030, as on any read) */
static void
check(tides_status s, const char *what)
{
	if (s != TIDES_OK)
		trt_engine_error(s, what);
}

void
trt_finalize_startup(tides_db *db)
{
	TrtShared *ts = trt_shared;
	uint8		key[TRT_META_KEY_MAX];
	size_t		klen;
	void	   *val;
	size_t		vlen;
	uint32		inc = 0;
	tides_batch *b;
	uint64		lsn;
	IncStartValue sv;
	bool		overflow = false;
	tides_status s;

	LWLockAcquire(ts->init_lock, LW_EXCLUSIVE);
	if (ts->finalized)
	{
		LWLockRelease(ts->init_lock);
		return;
	}

	klen = trt_meta_key(key, TRT_META_INCARNATION);
	s = tides_get(db, NULL, key, klen, &val, &vlen);
	if (s == TIDES_OK)
	{
		if (vlen >= 4)
			memcpy(&inc, val, 4);
		free(val);
	}
	else if (s != TIDES_NOT_FOUND)
		check(s, "read the incarnation");
	inc++;

	b = tides_batch_new();
	if (b == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	tides_batch_put(b, key, klen, &inc, sizeof(inc));
	klen = trt_meta_inc_start_key(key, inc);
	memset(&sv, 0, sizeof(sv));
	sv.next_fxid = ts->start_next_fxid;
	sv.next_multi = ts->start_next_multi;
	tides_batch_put(b, key, klen, &sv, sizeof(sv));
	for (uint32 i = 0; i < ts->n_unsealed; i++)
	{
		uint8		one = 1;

		/* a tag is (incarnation << 32) | top xid */
		klen = trt_meta_aborted_key(key, (uint32) (ts->unsealed[i] >> 32),
									(TransactionId) ts->unsealed[i]);
		tides_batch_put(b, key, klen, &one, 1);
	}
	/* the background workers wait for init_lock, held here: room is made in this process */
	s = trt_engine_write_here(db, b, true, &lsn);
	tides_batch_free(b);
	check(s, "record the incarnation");
	check(tides_sync(db, lsn, true), "make the incarnation durable");
	if (ts->n_unsealed > 0)
		check(tides_settle_tags(db, ts->unsealed, ts->n_unsealed), "settle recovered transactions");

	ts->n_inc_start = 0;
	scan_meta(db, TRT_META_INC_START, load_inc_start, NULL);
	ts->n_aborted = 0;
	scan_meta(db, TRT_META_ABORTED, load_aborted, &overflow);
	qsort(ts->aborted, ts->n_aborted, sizeof(uint64), cmp_u64);
	if (overflow)
		ereport(WARNING,
				(errmsg("tides: more than %d incomplete transactions are recorded; some are ignored",
						TRT_MAX_ABORTED)));

	ts->incarnation = inc;
	ts->incarnations_loaded = true;
	/* what recovery kept is durable, and newer transactions have not begun */
	pg_atomic_write_u64(&ts->durable_horizon, ts->start_next_fxid);
	ts->finalized = true;
	LWLockRelease(ts->init_lock);
	ereport(LOG,
			(errmsg("tides: incarnation %u started at xid %llu, %u unfinished transactions marked aborted",
					inc, (unsigned long long) ts->start_next_fxid, ts->n_unsealed)));
}

/* the nextXid/nextMulti incarnation `inc` started with; false if unknown */
static const TrtIncStart *
inc_start(uint32 inc)
{
	TrtShared *ts = trt_shared;
	uint32		lo = 0,
				hi = ts->n_inc_start;

	/* META keys are big-endian, so the array is sorted by incarnation */
	while (lo < hi)
	{
		uint32		mid = (lo + hi) / 2;

		if (ts->inc_start[mid].inc < inc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ts->n_inc_start && ts->inc_start[lo].inc == inc ? &ts->inc_start[lo] : NULL;
}

/*
 * A hot standby (tides.wal = on) judges rows by the incarnations the WAL
 * brought: loaded once, read-only, by the first reader.  A row of a later
 * incarnation of the primary than the one loaded is of the newest: no
 * later start value can have forgotten it.
 */
void
trt_load_incarnations_readonly(tides_db *db)
{
	TrtShared  *ts = trt_shared;
	uint8		key[TRT_META_KEY_MAX];
	size_t		klen;
	void	   *val;
	size_t		vlen;
	bool		overflow = false;

	if (ts->incarnations_loaded)
		return;
	LWLockAcquire(ts->init_lock, LW_EXCLUSIVE);
	if (!ts->incarnations_loaded)
	{
		klen = trt_meta_key(key, TRT_META_INCARNATION);
		if (tides_get(db, NULL, key, klen, &val, &vlen) == TIDES_OK)
		{
			if (vlen >= 4)
				memcpy(&ts->incarnation, val, 4);
			free(val);
		}
		ts->n_inc_start = 0;
		scan_meta(db, TRT_META_INC_START, load_inc_start, NULL);
		ts->n_aborted = 0;
		scan_meta(db, TRT_META_ABORTED, load_aborted, &overflow);
		qsort(ts->aborted, ts->n_aborted, sizeof(uint64), cmp_u64);
		ts->incarnations_loaded = true;
	}
	LWLockRelease(ts->init_lock);
}

bool
trt_writer_lost(uint32 inc, TransactionId top, TransactionId xid)
{
	TrtShared  *ts = trt_shared;
	const TrtIncStart *next;

	/* the start values and the aborted set are loaded (trt_engine() finalises or loads) */
	Assert(ts->finalized || ts->incarnations_loaded);
	if (inc >= ts->incarnation || inc == 0 || !TransactionIdIsNormal(xid))
		return false;
	next = inc_start(inc + 1);
	if (next != NULL)
	{
		TransactionId start = XidFromFullTransactionId(FullTransactionIdFromU64(next->next_fxid));

		if (TransactionIdFollowsOrEquals(xid, start) || TransactionIdFollowsOrEquals(top, start))
			return true;
	}
	if (ts->n_aborted > 0)
	{
		uint64		want = ((uint64) inc << 32) | top;

		if (bsearch(&want, ts->aborted, ts->n_aborted, sizeof(uint64), cmp_u64) != NULL)
			return true;
	}
	return false;
}

bool
trt_multi_lost(uint32 inc, MultiXactId multi)
{
	const TrtIncStart *next;

	if (inc >= trt_shared->incarnation || inc == 0)
		return false;
	next = inc_start(inc + 1);
	return next != NULL && !MultiXactIdPrecedes(multi, next->next_multi);
}
