/*
 * maint.c -- maintenance work: deleting obsolete files, keeping a log
 * segment prepared ahead of the writers, removing files under dropped
 * prefixes, and reporting which work is pending.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db_impl.h"
#include "env/memory.h"

/* delete the files no version refers to any more */
static bool
delete_obsolete(tides_db *db)
{
	tides_shared *sh = db->sh;
	uint64_t	batch[256];
	uint32_t	n = 0;
	char		fname[64],
				path[1024];

	/* a physical backup is copying files a checkpoint names: keep them all */
	if (atomic_load(&sh->deletion_holds) > 0)
		return false;
	tides_spin_lock(&sh->obsolete_lock);
	while (sh->nobsolete > 0 && n < 256)
		batch[n++] = sh->obsolete[--sh->nobsolete];
	tides_spin_unlock(&sh->obsolete_lock);
	for (uint32_t i = 0; i < n; i++)
	{
		tides_table_cache_evict(db->tcache, batch[i]);
		tides_sst_file_name(fname, sizeof(fname), batch[i]);
		snprintf(path, sizeof(path), "%s/%s", db->dir, fname);
		db->vfs->unlink(db->vfs, path);
		tides_block_cache_erase_file(sh->cache, batch[i]);
	}
	if (n > 0)
		atomic_fetch_add(&sh->deletion_epoch, 1);
	return n > 0;
}

/* ---- dropped prefixes and marked files
 *
 * tides_drop_prefix lists {id, seq, prefix}; from then on reads hide the
 * keys under the prefix with seq <= seq, and flush and compaction discard
 * them.  Hiding costs every read a test per listed prefix and gives no disk
 * space back, so the engine works the list off:
 *
 *   - A file wholly inside the prefix whose keys are all that old is deleted
 *     outright, in the manifest edit that lists the prefix (a file that is a
 *     compaction input just then: by a later reconcile, if the compaction
 *     fails).
 *   - Any other file that may hold a hidden key is marked for compaction
 *     (tides_file_meta.marked).  The picker takes marked files before
 *     score-based work; one at the bottom of its key range is rewritten in
 *     place (compaction.c).  Without this, a bottom-level file shared with
 *     live trees kept a dropped table's bytes until unrelated data happened
 *     to be merged into it -- possibly never.
 *   - A prefix retires (leaves the list, in a manifest edit) once no live
 *     file or memtable can hold a key it hides.  Compaction reconciles right
 *     after installing, so the edit that retires a prefix follows the rewrite
 *     that removed its last keys at once; the 256-entry list drains as fast
 *     as compaction removes the data.
 *
 * A file that overlaps a prefix only by its bounds is looked into (one seek)
 * before it is marked: a bottom file whose key range merely spans a dropped
 * tree, or holds only keys written after the drop, needs no rewrite.  Each
 * file is checked once per prefix (tides_file_meta.dropped_seen); files a
 * flush or compaction writes start at the ids that job applied, so normally
 * nothing is left to check.  None of this is persisted: recovery starts
 * every file unchecked and reconciles before it returns.
 */

/* at most this many entries under a prefix are looked at; past it, assume the worst */
#define DROPPED_PROBE_LIMIT 256

static bool
within_prefix(const uint8_t *key, size_t n, const tides_dropped_prefix *d)
{
	return n >= d->len && memcmp(key, d->bytes, d->len) == 0;
}

/* may the file hold keys that start with the prefix? (bounds only) */
static bool
overlaps_prefix(const tides_file_meta *f, const tides_dropped_prefix *d)
{
	const uint8_t *lo = tides_file_smallest(f);
	size_t		lolen = f->smallest_len - TIDES_TRAILER;
	size_t		n = lolen < d->len ? lolen : d->len;

	/* largest >= prefix, and smallest's first bytes <= prefix */
	return tides_ukey_cmp(tides_file_largest(f), f->largest_len - TIDES_TRAILER, d->bytes, d->len) >= 0 &&
		memcmp(lo, d->bytes, n) <= 0;
}

static bool
wholly_inside(const tides_file_meta *f, const tides_dropped_prefix *d)
{
	return within_prefix(tides_file_smallest(f), f->smallest_len - TIDES_TRAILER, d) &&
		within_prefix(tides_file_largest(f), f->largest_len - TIDES_TRAILER, d);
}

/*
 * Does the iterator hold an entry under d's prefix with seq <= d->seq?
 * Entries written after the drop (same prefix, larger seq) are passed over
 * up to DROPPED_PROBE_LIMIT; past that, or on an error, the answer is yes:
 * a needless rewrite costs time, a wrong "no" would retire the prefix and
 * bring hidden keys back.
 */
static bool
iter_holds_hidden(tides_iiter *it, const tides_dropped_prefix *d)
{
	uint8_t		seek[TIDES_MAX_PREFIX_LEN + TIDES_TRAILER];
	size_t		n = tides_ikey_make(seek, d->bytes, d->len, TIDES_MAX_SEQ, TIDES_KT_SEEK);

	tides_iiter_seek(it, seek, n);
	for (int i = 0; tides_iiter_valid(it); tides_iiter_next(it), i++)
	{
		size_t		klen;
		const uint8_t *k = tides_iiter_key(it, &klen);

		if (klen < TIDES_TRAILER || !within_prefix(k, klen - TIDES_TRAILER, d))
			break;
		if (tides_ikey_seq(k, klen) <= d->seq || i >= DROPPED_PROBE_LIMIT)
			return true;
	}
	return tides_iiter_status(it) != TIDES_OK;
}

/*
 * May file f hold a key that d hides?  version_mutex held; reads at most a
 * few blocks of f (the table cache and block cache locks are leaves).
 */
static bool
file_holds_hidden(tides_db *db, const tides_file_meta *f, const tides_dropped_prefix *d)
{
	tides_iiter *it;
	bool		holds;

	if (f->min_seq > d->seq || !overlaps_prefix(f, d))
		return false;
	if (wholly_inside(f, d))
		return true;			/* its oldest entry is under the prefix */
	it = tides_table_cache_iter(db->tcache, f->number, f->size, false);
	if (it == NULL)
		return true;
	holds = iter_holds_hidden(it, d);
	tides_iiter_destroy(it);
	return holds;
}

/*
 * May some memtable hold a key that d hides?  *active is set if the active
 * memtable is one that may.  version_mutex held, so the set of ACTIVE and
 * SEALED memtables is stable (switching and flushing change it under
 * version_mutex) and their arenas stay valid.
 *
 * Every such memtable is looked into, whatever its first_seq: that is no
 * lower bound on its entries' seqs.  Recovery activates its first memtable
 * at the manifest's last_seq + 1, and a manifest rewritten (rolled, or by an
 * earlier recovery) while memtables were unflushed records a last_seq above
 * entries it then replays into that memtable.  Skipping it by first_seq
 * retired prefixes whose keys were still there, and they came back.
 */
static bool
memtables_hold_hidden(tides_shared *sh, const tides_dropped_prefix *d, bool *active)
{
	bool		holds = false;

	TIDES_ASSERT(tides_mutex_held(&sh->version_mutex));
	/*
	 * Writes with seq <= d->seq may still be linking their entries: only
	 * once they are published is a look into the skiplists conclusive.
	 */
	if (atomic_load_explicit(&sh->published_seq, memory_order_acquire) < d->seq)
		return true;
	for (uint32_t i = 0; i < sh->nmemtables; i++)
	{
		tides_memtable *m = &sh->memtables[i];
		int			st = atomic_load(&m->state);
		tides_iiter *it;
		bool		h;

		if (st != TIDES_MEM_ACTIVE && st != TIDES_MEM_SEALED)
			continue;
		it = tides_memtable_iter_new(m);
		h = it == NULL || iter_holds_hidden(it, d);
		tides_iiter_destroy(it);
		if (h && st == TIDES_MEM_ACTIVE)
			*active = true;
		holds |= h;
	}
	return holds;
}

/* is every key of f hidden by a prefix of the list, so that f can simply go? */
static bool
wholly_hidden(const tides_file_meta *f, const tides_dropped_prefix *list, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (f->max_seq <= list[i].seq && wholly_inside(f, &list[i]))
			return true;
	return false;
}

/*
 * version_mutex held: check every file against the prefixes of `list` it
 * has not been checked against, marking those that may hold hidden keys;
 * add to e the deletion of every marked file whose keys are all hidden (and
 * that no compaction is reading).  *nmarked: marked files left that no
 * compaction is working on.  Marks are set even if e is never applied: a
 * needless mark costs one rewrite, a missing one costs the disk space.
 */
static tides_status
check_files(tides_db *db, const tides_dropped_prefix *list, uint32_t n, tides_edit *e,
			uint32_t *nmarked)
{
	tides_shared *sh = db->sh;
	tides_version *v = sh->current;
	tides_status s = TIDES_OK;

	TIDES_ASSERT(tides_mutex_held(&sh->version_mutex));
	*nmarked = 0;
	for (int l = 0; l < TIDES_MAX_LEVELS && s == TIDES_OK; l++)
		for (uint32_t i = 0; i < v->nfiles[l] && s == TIDES_OK; i++)
		{
			tides_file_meta *f = v->files[l][i];

			if (!f->marked && f->dropped_seen < sh->next_dropped_id)
			{
				for (uint32_t d = 0; d < n && !f->marked; d++)
					if (list[d].id >= f->dropped_seen && file_holds_hidden(db, f, &list[d]))
						f->marked = 1;
				if (!f->marked)
					f->dropped_seen = sh->next_dropped_id;
			}
			if (!f->marked || atomic_load(&f->being_compacted))
				continue;
			if (wholly_hidden(f, list, n))
				s = tides_edit_delete_file(e, l, f->number);
			else
				(*nmarked)++;
		}
	return s;
}

static bool
deleted_by(const tides_edit *e, int level, uint64_t number)
{
	for (uint32_t i = 0; i < e->ndeleted; i++)
		if (e->deleted[i].level == level && e->deleted[i].number == number)
			return true;
	return false;
}

bool
tides_dropped_take(tides_shared *sh, tides_dropped_prefix **copy, uint32_t *n, uint64_t *seen)
{
	bool		ok = true;

	*copy = NULL;
	*n = 0;
	tides_lock_version(sh);
	if (sh->ndropped > 0 && (*copy = malloc(sh->ndropped * sizeof(**copy))) != NULL)
	{
		memcpy(*copy, sh->dropped, sh->ndropped * sizeof(**copy));
		*n = sh->ndropped;
	}
	else if (sh->ndropped > 0)
		ok = false;
	*seen = sh->next_dropped_id;
	tides_mutex_unlock(&sh->version_mutex);
	return ok;
}

tides_status
tides_dropped_reconcile(tides_db *db, tides_dropped_state *out, tides_error *err)
{
	tides_shared *sh = db->sh;
	tides_version *v = sh->current;
	tides_edit	e;
	tides_dropped_prefix keep[TIDES_MAX_DROPPED];
	uint32_t	nkeep = 0;
	tides_file_meta **marked = NULL;
	uint32_t	nmarked = 0,
				total = 0;
	tides_status s;

	TIDES_ASSERT(tides_mutex_held(&sh->version_mutex));
	TIDES_ASSERT(sh->ndropped <= TIDES_MAX_DROPPED);
	memset(out, 0, sizeof(*out));
	tides_edit_init(&e);
	s = check_files(db, sh->dropped, sh->ndropped, &e, &out->marked);
	if (s == TIDES_OK && sh->ndropped > 0)
	{
		/*
		 * After check_files every file is either marked or known to hold
		 * nothing a listed prefix hides: only the marked files that stay
		 * can keep a prefix listed.
		 */
		for (int l = 0; l < TIDES_MAX_LEVELS; l++)
			total += v->nfiles[l];
		marked = malloc((total + 1) * sizeof(*marked));
		if (marked == NULL)
			s = TIDES_NO_MEMORY;
		for (int l = 0; l < TIDES_MAX_LEVELS && s == TIDES_OK; l++)
			for (uint32_t i = 0; i < v->nfiles[l]; i++)
				if (v->files[l][i]->marked && !deleted_by(&e, l, v->files[l][i]->number))
					marked[nmarked++] = v->files[l][i];
	}
	for (uint32_t d = 0; d < sh->ndropped && s == TIDES_OK; d++)
	{
		const tides_dropped_prefix *dp = &sh->dropped[d];
		bool		remains = false;

		/* a marked file whose bounds reach d (it may be marked for another prefix: d waits) */
		for (uint32_t i = 0; i < nmarked && !remains; i++)
			remains = marked[i]->min_seq <= dp->seq && overlaps_prefix(marked[i], dp);
		if (!remains)
			remains = memtables_hold_hidden(sh, dp, &out->in_active_memtable);
		if (remains)
			keep[nkeep++] = *dp;
	}
	free(marked);
	if (s == TIDES_OK && (e.ndeleted > 0 || nkeep < sh->ndropped))
	{
		if (nkeep < sh->ndropped)
			s = tides_edit_set_dropped(&e, keep, nkeep);
		if (s == TIDES_OK)
			s = tides_manifest_apply(db, &e, NULL, 0, NULL, err);
		else
			tides_fail(err, s, "out of memory recording dropped-prefix reclamation");
		out->did = (s == TIDES_OK);
	}
	else if (s != TIDES_OK)
		tides_fail(err, s, "out of memory reclaiming dropped prefixes");
	tides_edit_free(&e);
	return s;
}

/*
 * Prefixes kept only because memtables may hold their keys leave when those
 * memtables are flushed, which on a quiet store can take arbitrarily long.
 * Once the list is half full, seal the active memtable so the flush worker
 * writes it out (without the hidden keys) and the list drains.  Not under
 * version_mutex: sealing takes the write lock and then version_mutex.
 */
static void
seal_for_dropped(tides_db *db)
{
	if (tides_seal_memtable(db) == TIDES_OK)
		tides_db_wakeup(db, TIDES_WORK_FLUSH);
}

/* ---- Idle memtables
 *
 * The memtable arenas are sized for the heaviest writing (memtable_count x
 * memtable_size of shared memory), and once touched their pages stay
 * resident: shared memory is not reclaimed under pressure the way the page
 * cache is.  When writes slow down -- a query phase after a load, a quiet
 * night -- most slots sit FREE, holding memory that the page cache (the
 * SSTables' compressed blocks) would put to use.  So a slot FREE for
 * memtable_discard_ms gives its pages back (tides_mem_discard), except the
 * one free slot the next switch takes (tides_free_memtable prefers slots
 * whose pages are kept), so that a new burst does not start with page
 * faults on its first memtable.  A slot discarded is activated like any
 * other: its pages come back as the writes touch them, zeroed (the point
 * index stays cleared, mem/memtable.h).
 *
 * Under steady writing slots are reused within a second or two and none is
 * ever idle long enough; the default (10 s) is long against that and short
 * against a query phase.  If the region's mapping cannot give memory back,
 * the first failure turns discarding off for the engine's life.
 */

/* a FREE slot whose kept pages have been idle since before idle_since, or NULL */
static tides_memtable *
idle_memtable(tides_shared *sh, uint64_t idle_since, const tides_memtable *spare)
{
	for (uint32_t i = 0; i < sh->nmemtables; i++)
	{
		tides_memtable *m = &sh->memtables[i];

		if (m != spare && atomic_load(&m->state) == TIDES_MEM_FREE && atomic_load(&m->refs) == 0 &&
			atomic_load(&m->pages) == TIDES_PAGES_KEPT && atomic_load(&m->freed_us) <= idle_since)
			return m;
	}
	return NULL;
}

static uint64_t
discard_idle_since(tides_db *db)
{
	uint64_t	after = (uint64_t) db->opts.memtable_discard_ms * 1000;
	uint64_t	now = tides_now_us();

	if (after == 0 || atomic_load(&db->sh->discard_unsupported) || now < after)
		return 0;
	return now - after;
}

/* is there an idle slot to discard (unlocked: a hint, checked again under the lock) */
static bool
discard_due(tides_db *db)
{
	uint64_t	since = discard_idle_since(db);

	return since != 0 && idle_memtable(db->sh, since, tides_free_memtable(db->sh)) != NULL;
}

static bool
discard_idle_memtables(tides_db *db)
{
	tides_shared *sh = db->sh;
	bool		did = false;

	while (discard_due(db))
	{
		uint64_t	since = discard_idle_since(db);
		tides_memtable *m;

		/*
		 * The write lock keeps the slot FREE while it turns DISCARDING
		 * (mem/memtable.h).  Not while writers are paused: a memtable
		 * switch picked its fresh slot under the lock and activates it
		 * after taking the lock again, and that slot need not be the one
		 * tides_free_memtable names now.
		 */
		tides_spin_lock(&sh->write_lock);
		m = sh->writers_paused ? NULL : idle_memtable(sh, since, tides_free_memtable(sh));
		if (m != NULL)
			atomic_store(&m->pages, TIDES_PAGES_DISCARDING);
		tides_spin_unlock(&sh->write_lock);
		if (m == NULL)
			break;
		TIDES_ASSERT(atomic_load(&m->state) == TIDES_MEM_FREE && atomic_load(&m->refs) == 0);
		if (!tides_mem_discard(m->arena, m->arena_size))
		{
			atomic_store(&sh->discard_unsupported, true);
			atomic_store(&m->pages, TIDES_PAGES_KEPT);
			break;
		}
		atomic_store(&m->pages, TIDES_PAGES_DISCARDED);
		tides_count(&sh->counters, memtable_discards, 1);
		did = true;
	}
	return did;
}

tides_status
tides_maint_work(tides_db *db, bool *did)
{
	tides_shared *sh = db->sh;
	tides_error err;
	tides_status s = TIDES_OK;
	uint64_t	seg;

	*did = false;
	if (atomic_load(&sh->state) != TIDES_STATE_OPEN)
		return TIDES_OK;
	tides_error_clear(&err);
	if (delete_obsolete(db))
		*did = true;
	if (discard_idle_memtables(db))
		*did = true;

	/* keep the next log segment ready, recycling replayed ones (own log only) */
	seg = tides_log_segment_of(&sh->log, atomic_load(&sh->published_lsn)) + 1;
	if (sh->ropts.log_mode == TIDES_LOG_OWN &&
		(!tides_log_segment_ready(&sh->log, seg) ||
		 atomic_load(&sh->log.oldest_segment) + 3 < tides_log_segment_of(&sh->log, sh->replay_lsn)))
	{
		s = tides_log_prepare(&db->log, seg, tides_log_segment_of(&sh->log, sh->replay_lsn), &err);
		if (s == TIDES_OK)
			*did = true;
	}

	if (s == TIDES_OK)
	{
		tides_dropped_state ds;
		uint32_t	ndropped;

		tides_lock_version(sh);
		s = tides_dropped_reconcile(db, &ds, &err);
		ndropped = sh->ndropped;
		tides_mutex_unlock(&sh->version_mutex);
		if (ds.did)
			*did = true;
		/*
		 * Marked files are compaction work that no level score shows, and
		 * the PostgreSQL compaction workers sleep until woken: wake one at
		 * every maintenance round while marked files wait.  (Not *did:
		 * callers loop while work was done.)
		 */
		if (ds.marked > 0)
			tides_db_wakeup(db, TIDES_WORK_COMPACT);
		if (s == TIDES_OK && ds.in_active_memtable && ndropped >= TIDES_MAX_DROPPED / 2)
			seal_for_dropped(db);
	}
	if (s == TIDES_OK && atomic_load(&sh->deletion_epoch) != db->seen_deletion_epoch)
	{
		db->seen_deletion_epoch = atomic_load(&sh->deletion_epoch);
		tides_table_cache_evict_all(db->tcache);
	}
	if (s != TIDES_OK)
		return tides_db_fail(db, &err);
	return TIDES_OK;
}

int
tides_work_pending(tides_db *db)
{
	tides_shared *sh = db->sh;
	int			kinds = 0;
	uint64_t	seg;

	if (atomic_load(&sh->state) != TIDES_STATE_OPEN)
		return 0;
	if (tides_flush_due(db))
		kinds |= TIDES_WORK_FLUSH;
	if (tides_compaction_needed(db))
		kinds |= TIDES_WORK_COMPACT;
	if (db->opts.sync_mode == TIDES_SYNC_INTERVAL &&
		atomic_load(&sh->log.durable_lsn) < atomic_load(&sh->log.written_lsn))
		kinds |= TIDES_WORK_SYNC;
	seg = tides_log_segment_of(&sh->log, atomic_load(&sh->published_lsn)) + 1;
	if ((sh->nobsolete > 0 && atomic_load(&sh->deletion_holds) == 0) || sh->ndropped > 0 ||
		(sh->ropts.log_mode == TIDES_LOG_OWN && !tides_log_segment_ready(&sh->log, seg)) ||
		discard_due(db))
		kinds |= TIDES_WORK_MAINT;
	return kinds;
}

/*
 * List the prefix and, in the same manifest edit, delete the files wholly
 * inside it; mark the files that overlap it partly (see "dropped prefixes
 * and marked files" above).
 */
tides_status
tides_drop_prefix(tides_db *db, const void *prefix, size_t len)
{
	tides_shared *sh = db->sh;
	tides_edit	e;
	tides_error err;
	tides_status s;
	tides_dropped_prefix list[TIDES_MAX_DROPPED];
	uint32_t	n,
				nmarked = 0;

	if (len == 0 || len > TIDES_MAX_PREFIX_LEN)
		return tides_fail(&db->err, TIDES_INVALID, "prefix length %zu out of range", len);
	if (atomic_load(&sh->state) != TIDES_STATE_OPEN)
		return tides_fail(&db->err, TIDES_UNAVAILABLE, "engine is not open");
	tides_error_clear(&err);
	tides_lock_version(sh);
	if (sh->ndropped >= TIDES_MAX_DROPPED)
	{
		tides_dropped_state ds;

		/* maintenance may not have run since the last rewrite: retire what we can */
		(void) tides_dropped_reconcile(db, &ds, &err);
		if (sh->ndropped >= TIDES_MAX_DROPPED)
		{
			tides_mutex_unlock(&sh->version_mutex);
			if (ds.in_active_memtable)
				seal_for_dropped(db);
			tides_db_wakeup(db, TIDES_WORK_MAINT | (ds.marked > 0 ? TIDES_WORK_COMPACT : 0));
			return tides_fail(&db->err, TIDES_BUSY, "too many dropped prefixes awaiting reclamation");
		}
		tides_error_clear(&err);
	}
	n = sh->ndropped;
	memcpy(list, sh->dropped, n * sizeof(list[0]));
	memset(&list[n], 0, sizeof(list[n]));
	list[n].id = sh->next_dropped_id++;
	tides_lock_write(sh);
	list[n].seq = sh->last_seq;
	tides_spin_unlock(&sh->write_lock);
	list[n].len = (uint32_t) len;
	memcpy(list[n].bytes, prefix, len);
	/* before any reader can see the drop (a failed one only costs a reread) */
	if (list[n].seq + 1 > atomic_load(&sh->drop_end))
		atomic_store(&sh->drop_end, list[n].seq + 1);
	tides_edit_init(&e);
	s = tides_edit_set_dropped(&e, list, n + 1);
	if (s == TIDES_OK)
		s = check_files(db, list, n + 1, &e, &nmarked);
	if (s == TIDES_OK)
		s = tides_manifest_apply(db, &e, NULL, 0, NULL, &err);
	tides_mutex_unlock(&sh->version_mutex);
	tides_edit_free(&e);
	if (s != TIDES_OK)
		return err.code != TIDES_OK ? tides_db_fail(db, &err) : tides_fail(&db->err, s, "could not drop prefix");
	tides_db_wakeup(db, TIDES_WORK_MAINT | (nmarked > 0 ? TIDES_WORK_COMPACT : 0));
	return TIDES_OK;
}

uint32_t
tides_mark_retired(tides_db *db, const void *lower, size_t llen, const void *upper, size_t ulen,
				   uint64_t suffix_below)
{
	tides_shared *sh = db->sh;
	tides_version *v;
	uint32_t	n = 0;

	if (atomic_load(&sh->state) != TIDES_STATE_OPEN || suffix_below == 0)
		return 0;
	tides_lock_version(sh);
	v = sh->current;
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		for (uint32_t i = 0; i < v->nfiles[l]; i++)
		{
			tides_file_meta *f = v->files[l][i];

			/* suffixes below suffix_below: the bound is at most suffix_below */
			if (f->marked || f->suffix_bound == 0 || f->suffix_bound > suffix_below ||
				tides_ukey_cmp(tides_file_smallest(f), f->smallest_len - TIDES_TRAILER,
							   lower, llen) < 0 ||
				tides_ukey_cmp(tides_file_largest(f), f->largest_len - TIDES_TRAILER,
							   upper, ulen) >= 0)
				continue;
			f->marked = 1;
			n++;
		}
	tides_mutex_unlock(&sh->version_mutex);
	if (n > 0)
		tides_db_wakeup(db, TIDES_WORK_COMPACT);
	return n;
}

/* an internal key that sorts before every version of ukey */
static uint8_t *
seek_ikey(const void *ukey, size_t ulen, size_t *iklen)
{
	uint8_t    *k = malloc(ulen + TIDES_TRAILER);

	if (k != NULL)
		*iklen = tides_ikey_make(k, ukey, ulen, TIDES_MAX_SEQ, TIDES_KT_SEEK);
	return k;
}

/*
 * Bytes of file f that hold keys in [lower, upper): the whole file if the
 * range covers it, else the distance between the block-index offsets of the
 * bounds (RocksDB's ApproximateOffsetOf), which is exact to a block.
 */
static uint64_t
file_range_bytes(tides_db *db, const tides_file_meta *f, const void *lower, size_t llen,
				 const void *upper, size_t ulen)
{
	bool		from_start = lower == NULL ||
		tides_ukey_cmp(tides_file_smallest(f), f->smallest_len - TIDES_TRAILER, lower, llen) >= 0;
	bool		to_end = upper == NULL ||
		tides_ukey_cmp(tides_file_largest(f), f->largest_len - TIDES_TRAILER, upper, ulen) < 0;
	uint64_t	lo = 0,
				hi = f->size;
	tides_sst  *t;
	tides_error err;
	size_t		n;
	uint8_t    *k;

	if (from_start && to_end)
		return f->size;
	if (tides_table_cache_get(db->tcache, f->number, f->size, &t, &err) != TIDES_OK)
		return f->size;			/* an estimate: err on the large side */
	if (!from_start && (k = seek_ikey(lower, llen, &n)) != NULL)
	{
		lo = tides_sst_approximate_offset(t, k, n);
		free(k);
	}
	if (!to_end && (k = seek_ikey(upper, ulen, &n)) != NULL)
	{
		hi = tides_sst_approximate_offset(t, k, n);
		free(k);
	}
	tides_table_cache_release(db->tcache, t);
	return hi > lo ? hi - lo : 0;
}

/* bytes of memtable entries (key and value) in [lower, upper) */
static uint64_t
memtable_range_bytes(tides_memtable *m, const void *lower, size_t llen, const void *upper, size_t ulen)
{
	tides_iiter *it = tides_memtable_iter_new(m);
	uint64_t	total = 0;
	size_t		n;
	uint8_t    *k;

	if (it == NULL)
		return atomic_load(&m->used);
	if (lower != NULL && (k = seek_ikey(lower, llen, &n)) != NULL)
	{
		tides_iiter_seek(it, k, n);
		free(k);
	}
	else
		tides_iiter_first(it);
	for (; tides_iiter_valid(it); tides_iiter_next(it))
	{
		size_t		klen,
					vlen;
		const uint8_t *key = tides_iiter_key(it, &klen);

		if (upper != NULL && tides_ukey_cmp(key, klen - TIDES_TRAILER, upper, ulen) >= 0)
			break;
		(void) tides_iiter_value(it, &vlen);
		total += klen + vlen;
	}
	tides_iiter_destroy(it);
	return total;
}

/* the same, estimated from the skiplist in O(log n), at the mean entry size */
static uint64_t
memtable_range_bytes_estimate(tides_memtable *m, const void *lower, size_t llen,
							  const void *upper, size_t ulen)
{
	uint64_t	entries = atomic_load(&m->entries);
	uint8_t    *lo = NULL,
			   *hi = NULL;
	size_t		lon = 0,
				hin = 0;
	uint64_t	n;

	if (entries == 0)
		return 0;
	if ((lower != NULL && (lo = seek_ikey(lower, llen, &lon)) == NULL) ||
		(upper != NULL && (hi = seek_ikey(upper, ulen, &hin)) == NULL))
	{
		free(lo);
		return atomic_load(&m->used);	/* out of memory: err on the large side */
	}
	n = tides_skip_estimate_range(&m->list, lo, lon, hi, hin);
	free(lo);
	free(hi);
	/*
	 * The mean entry: bytes placed, not reserved -- a writer's piece holds
	 * bytes no entry uses yet, as many as there were writing processes, and
	 * the planner must not see a small table grow with the backends that
	 * wrote it.
	 */
	return n * (atomic_load(&m->placed) / entries);
}

static uint64_t
range_size(tides_db *db, const void *lower, size_t llen, const void *upper, size_t ulen,
		   bool estimate_memtables)
{
	tides_superversion *sv = tides_sv_acquire(db);
	uint64_t	total = 0;

	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		for (uint32_t i = 0; i < sv->version->nfiles[l]; i++)
		{
			const tides_file_meta *f = sv->version->files[l][i];

			if ((lower == NULL || tides_ukey_cmp(tides_file_largest(f), f->largest_len - TIDES_TRAILER,
												 lower, llen) >= 0) &&
				(upper == NULL || tides_ukey_cmp(tides_file_smallest(f), f->smallest_len - TIDES_TRAILER,
												 upper, ulen) < 0))
				total += file_range_bytes(db, f, lower, llen, upper, ulen);
		}
	for (uint32_t i = 0; i < sv->nmem; i++)
		total += estimate_memtables ?
			memtable_range_bytes_estimate(sv->mems[i], lower, llen, upper, ulen) :
			memtable_range_bytes(sv->mems[i], lower, llen, upper, ulen);
	tides_sv_release(db, sv);
	return total;
}

uint64_t
tides_approximate_size(tides_db *db, const void *lower, size_t llen, const void *upper, size_t ulen)
{
	return range_size(db, lower, llen, upper, ulen, false);
}

uint64_t
tides_estimate_size(tides_db *db, const void *lower, size_t llen, const void *upper, size_t ulen)
{
	return range_size(db, lower, llen, upper, ulen, true);
}

void
tides_get_range_info(tides_db *db, const void *lower, size_t llen, const void *upper, size_t ulen,
					 tides_range_info *info)
{
	tides_superversion *sv;

	memset(info, 0, sizeof(*info));
	if (atomic_load(&db->sh->state) != TIDES_STATE_OPEN)
		return;
	sv = tides_sv_acquire(db);
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		for (uint32_t i = 0; i < sv->version->nfiles[l]; i++)
		{
			const tides_file_meta *f = sv->version->files[l][i];
			uint64_t	bytes;

			if ((lower != NULL && tides_ukey_cmp(tides_file_largest(f), f->largest_len - TIDES_TRAILER,
												 lower, llen) < 0) ||
				(upper != NULL && tides_ukey_cmp(tides_file_smallest(f), f->smallest_len - TIDES_TRAILER,
												 upper, ulen) >= 0))
				continue;
			bytes = file_range_bytes(db, f, lower, llen, upper, ulen);
			info->level_bytes[l] += bytes;
			info->level_files[l]++;
			/* the file's counts, by the share of its bytes in the range */
			if (bytes >= f->size || f->size == 0)
			{
				info->entries += f->entries;
				info->deletions += f->deletions;
			}
			else
			{
				info->entries += (uint64_t) ((double) f->entries * bytes / f->size);
				info->deletions += (uint64_t) ((double) f->deletions * bytes / f->size);
			}
			if (f->by_compaction && f->written_us > info->compacted_us)
				info->compacted_us = f->written_us;
			if (!f->by_compaction && f->written_us > info->flushed_us)
				info->flushed_us = f->written_us;
		}
	for (uint32_t i = 0; i < sv->nmem; i++)
		info->memtable_bytes += memtable_range_bytes_estimate(sv->mems[i], lower, llen, upper, ulen);
	tides_sv_release(db, sv);
}

void
tides_hold_file_deletion(tides_db *db, bool hold)
{
	int32_t		prev = atomic_fetch_add(&db->sh->deletion_holds, hold ? 1 : -1);

	TIDES_ASSERT(hold || prev > 0);
	(void) prev;
	if (!hold && prev == 1)
		tides_db_wakeup(db, TIDES_WORK_MAINT);
}
