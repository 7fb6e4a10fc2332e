/*
 * maint.c -- maintenance work: deleting obsolete files, keeping a log
 * segment prepared ahead of the writers, removing files under dropped
 * prefixes, and reporting which work is pending.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db_impl.h"

/* delete the files no version refers to any more */
static bool
delete_obsolete(tides_db *db)
{
	tides_shared *sh = db->sh;
	uint64_t	batch[256];
	uint32_t	n = 0;
	char		fname[64],
				path[1024];

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

static bool
within_prefix(const uint8_t *key, size_t n, const tides_dropped_prefix *d)
{
	return n >= d->len && memcmp(key, d->bytes, d->len) == 0;
}

/* may the file hold keys that start with the prefix? */
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

/*
 * version_mutex held: delete files that lie wholly under a dropped prefix,
 * and retire dropped prefixes no file or memtable can hold any more.
 */
static tides_status
reclaim_dropped(tides_db *db, bool *did, tides_error *err)
{
	tides_shared *sh = db->sh;
	tides_version *v = sh->current;
	tides_edit	e;
	tides_dropped_prefix keep[TIDES_MAX_DROPPED];
	uint32_t	nkeep = 0;
	bool		changed = false;
	tides_status s = TIDES_OK;

	if (sh->ndropped == 0)
		return TIDES_OK;
	tides_edit_init(&e);
	for (uint32_t d = 0; d < sh->ndropped && s == TIDES_OK; d++)
	{
		const tides_dropped_prefix *dp = &sh->dropped[d];
		bool		remains = false;

		for (int l = 0; l < TIDES_MAX_LEVELS && s == TIDES_OK; l++)
			for (uint32_t i = 0; i < v->nfiles[l]; i++)
			{
				tides_file_meta *f = v->files[l][i];
				bool		lo_in = within_prefix(tides_file_smallest(f), f->smallest_len - TIDES_TRAILER, dp);
				bool		hi_in = within_prefix(tides_file_largest(f), f->largest_len - TIDES_TRAILER, dp);

				if (lo_in && hi_in && f->max_seq <= dp->seq && !atomic_load(&f->being_compacted))
				{
					s = tides_edit_delete_file(&e, l, f->number);
					changed = true;
				}
				else if (f->min_seq <= dp->seq && overlaps_prefix(f, dp))
					remains = true;
			}
		/* memtables still holding entries from before the drop */
		for (uint32_t i = 0; i < sh->nmemtables && !remains; i++)
		{
			int			st = atomic_load(&sh->memtables[i].state);

			if ((st == TIDES_MEM_ACTIVE || st == TIDES_MEM_SEALED) &&
				sh->memtables[i].first_seq <= dp->seq && atomic_load(&sh->memtables[i].entries) > 0)
				remains = true;
		}
		if (remains)
			keep[nkeep++] = *dp;
		else
			changed = true;
	}
	if (s == TIDES_OK && changed)
	{
		s = tides_edit_set_dropped(&e, keep, nkeep);
		if (s == TIDES_OK)
			s = tides_manifest_apply(db, &e, NULL, NULL, err);
		*did = (s == TIDES_OK);
	}
	tides_edit_free(&e);
	return s;
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

	/* keep the next log segment ready, recycling replayed ones */
	seg = tides_log_segment_of(&sh->log, atomic_load(&sh->published_lsn)) + 1;
	if (!tides_log_segment_ready(&sh->log, seg) ||
		atomic_load(&sh->log.oldest_segment) + 3 < tides_log_segment_of(&sh->log, sh->replay_lsn))
	{
		s = tides_log_prepare(&db->log, seg, tides_log_segment_of(&sh->log, sh->replay_lsn), &err);
		if (s == TIDES_OK)
			*did = true;
	}

	if (s == TIDES_OK)
	{
		tides_mutex_lock(&sh->version_mutex);
		s = reclaim_dropped(db, did, &err);
		tides_mutex_unlock(&sh->version_mutex);
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
	if (tides_oldest_sealed(sh) != NULL)
		kinds |= TIDES_WORK_FLUSH;
	if (tides_compaction_needed(db))
		kinds |= TIDES_WORK_COMPACT;
	if (db->opts.sync_mode == TIDES_SYNC_INTERVAL &&
		atomic_load(&sh->log.durable_lsn) < atomic_load(&sh->log.written_lsn))
		kinds |= TIDES_WORK_SYNC;
	seg = tides_log_segment_of(&sh->log, atomic_load(&sh->published_lsn)) + 1;
	if (sh->nobsolete > 0 || !tides_log_segment_ready(&sh->log, seg) || sh->ndropped > 0)
		kinds |= TIDES_WORK_MAINT;
	return kinds;
}

tides_status
tides_drop_prefix(tides_db *db, const void *prefix, size_t len)
{
	tides_shared *sh = db->sh;
	tides_edit	e;
	tides_error err;
	tides_status s;
	tides_dropped_prefix list[TIDES_MAX_DROPPED];
	uint32_t	n;

	if (len == 0 || len > TIDES_MAX_PREFIX_LEN)
		return tides_fail(&db->err, TIDES_INVALID, "prefix length %zu out of range", len);
	if (atomic_load(&sh->state) != TIDES_STATE_OPEN)
		return tides_fail(&db->err, TIDES_UNAVAILABLE, "engine is not open");
	tides_error_clear(&err);
	tides_mutex_lock(&sh->version_mutex);
	n = sh->ndropped;
	if (n >= TIDES_MAX_DROPPED)
	{
		tides_mutex_unlock(&sh->version_mutex);
		tides_db_wakeup(db, TIDES_WORK_MAINT);
		return tides_fail(&db->err, TIDES_BUSY, "too many dropped prefixes awaiting reclamation");
	}
	memcpy(list, sh->dropped, n * sizeof(list[0]));
	memset(&list[n], 0, sizeof(list[n]));
	list[n].id = sh->next_dropped_id++;
	tides_spin_lock(&sh->write_lock);
	list[n].seq = sh->last_seq;
	tides_spin_unlock(&sh->write_lock);
	list[n].len = (uint32_t) len;
	memcpy(list[n].bytes, prefix, len);
	tides_edit_init(&e);
	s = tides_edit_set_dropped(&e, list, n + 1);
	if (s == TIDES_OK)
		s = tides_manifest_apply(db, &e, NULL, NULL, &err);
	tides_mutex_unlock(&sh->version_mutex);
	tides_edit_free(&e);
	if (s != TIDES_OK)
		return err.code != TIDES_OK ? tides_db_fail(db, &err) : tides_fail(&db->err, s, "could not drop prefix");
	tides_db_wakeup(db, TIDES_WORK_MAINT);
	return TIDES_OK;
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
	return n * (atomic_load(&m->used) / entries);
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
