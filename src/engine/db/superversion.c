/*
 * superversion.c -- the pinned read state (memtables + version), snapshots,
 * dropped-prefix checks, and small shared helpers.
 */
#include <stdlib.h>
#include <string.h>

#include "db/db_impl.h"
#include "db/publish.h"
#include "util/sort.h"

tides_status
tides_db_fail(tides_db *db, const tides_error *err)
{
	if (err->code != TIDES_OK && err != &db->err)
		db->err = *err;
	return err->code;
}

void
tides_note_work(tides_shared *sh, tides_error *slot, const tides_error *err)
{
	TIDES_ASSERT(slot == &sh->flush_failure || slot == &sh->compact_failure);
	/* a failure has its code: stalled writers fail with it (write.c) */
	TIDES_ASSERT(err == NULL || err->code != TIDES_OK);
	if (err != NULL && err->code == TIDES_BUSY)
		return;
	tides_spin_lock(&sh->failure_lock);
	if (err == NULL)
		tides_error_clear(slot);
	else
		*slot = *err;
	tides_spin_unlock(&sh->failure_lock);
}

void
tides_db_wakeup(tides_db *db, int kind)
{
	if (db->opts.wakeup != NULL)
		db->opts.wakeup(db->opts.wakeup_arg, kind);
}

void
tides_db_note_obsolete(void *arg, uint64_t file_number)
{
	tides_shared *sh = arg;

	tides_spin_lock(&sh->obsolete_lock);
	if (sh->nobsolete < TIDES_MAX_OBSOLETE)
		sh->obsolete[sh->nobsolete++] = file_number;
	/* else: the file stays on disk until the next recovery removes orphans */
	tides_spin_unlock(&sh->obsolete_lock);
}

/* a memtable lost a reference: free its slot if it is flushed and unseen */
static void
memtable_unref(tides_memtable *m)
{
	int32_t		old = atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel);

	TIDES_ASSERT(old >= 1);		/* never below zero */
	/* every superversion holds each ACTIVE and SEALED memtable (memtable.h) */
	TIDES_ASSERT(old > 1 || atomic_load(&m->state) == TIDES_MEM_FLUSHED);
	if (old == 1 && atomic_load(&m->state) == TIDES_MEM_FLUSHED)
		tides_memtable_release(m, tides_now_us());
}

static void
sv_free(tides_shared *sh, tides_superversion *sv)
{
	TIDES_ASSERT(atomic_load(&sv->refs) == 0 && sv != sh->sv);
	for (uint32_t i = 0; i < sv->nmem; i++)
		memtable_unref(sv->mems[i]);
	tides_version_unref(&sh->heap, sv->version, tides_db_note_obsolete, sh);
	tides_shm_free(&sh->heap, sv->dropped);
	tides_shm_free(&sh->heap, sv);
}

tides_superversion *
tides_sv_acquire(tides_db *db)
{
	tides_shared *sh = db->sh;
	tides_superversion *sv;

	tides_rwlock_rdlock(&sh->sv_lock);
	sv = sh->sv;
	/* sh->sv holds a reference of its own until it is replaced (under the lock) */
	TIDES_ASSERT(atomic_load(&sv->refs) >= 1);
	atomic_fetch_add_explicit(&sv->refs, 1, memory_order_relaxed);
	tides_rwlock_unlock(&sh->sv_lock);
	return sv;
}

/*
 * Pin the superversion and take the read sequence number in one step.
 *
 * Both happen under sv_lock held shared, so no superversion can be
 * installed in between: the pair is one the engine really had at one
 * moment.  That is what makes it safe for flush and compaction to drop a
 * version shadowed by a newer one without knowing this reader: the
 * superversion that replaced the dropped version was installed after its
 * job had started, and every input of that job had been published before
 * it started, so a reader that pins the new superversion reads at a
 * sequence number that sees the newer version; a reader that pins an older
 * superversion still has the dropped version in its memtables and files.
 * (Reading published_seq before pinning, without the lock, lets a reader
 * be delayed across a whole flush and compaction and pair an old sequence
 * number with a superversion that no longer holds the version it should
 * see.)  published_seq cannot run ahead of the pinned superversion either:
 * writers only publish into memtables that joined the current superversion
 * before they became active, and changing sh->sv needs the lock exclusive.
 */
tides_superversion *
tides_sv_acquire_at(tides_db *db, uint64_t *seq)
{
	tides_shared *sh = db->sh;
	tides_superversion *sv;

	tides_await_own(db);
	tides_rwlock_rdlock(&sh->sv_lock);
	sv = sh->sv;
	TIDES_ASSERT(atomic_load(&sv->refs) >= 1);
	atomic_fetch_add_explicit(&sv->refs, 1, memory_order_relaxed);
	*seq = atomic_load_explicit(&sh->published_seq, memory_order_acquire);
	tides_rwlock_unlock(&sh->sv_lock);
	return sv;
}

void
tides_sv_release(tides_db *db, tides_superversion *sv)
{
	int32_t		old;

	if (sv == NULL)
		return;
	old = atomic_fetch_sub_explicit(&sv->refs, 1, memory_order_acq_rel);
	TIDES_ASSERT(old >= 1);		/* never below zero */
	if (old == 1)
		sv_free(db->sh, sv);
}

static int
mem_newest_first(const void *a, const void *b)
{
	const tides_memtable *ma = *(tides_memtable * const *) a;
	const tides_memtable *mb = *(tides_memtable * const *) b;

	return ma->id > mb->id ? -1 : (ma->id < mb->id);
}

tides_superversion *
tides_sv_alloc(tides_db *db, uint32_t ndropped)
{
	tides_shared *sh = db->sh;
	tides_superversion *sv = tides_shm_alloc_zero(&sh->heap, sizeof(*sv));

	if (sv == NULL)
		return NULL;
	if (ndropped > 0)
	{
		sv->dropped = tides_shm_alloc(&sh->heap, ndropped * sizeof(tides_dropped_prefix));
		if (sv->dropped == NULL)
		{
			tides_shm_free(&sh->heap, sv);
			return NULL;
		}
	}
	sv->dropped_cap = ndropped;
	return sv;
}

void
tides_sv_free_unused(tides_db *db, tides_superversion *sv)
{
	if (sv == NULL)
		return;
	tides_shm_free(&db->sh->heap, sv->dropped);
	tides_shm_free(&db->sh->heap, sv);
}

void
tides_sv_publish(tides_db *db, tides_superversion *sv)
{
	tides_shared *sh = db->sh;
	tides_superversion *old;

	/* built from the current state, which version_mutex guards (recovery is alone) */
	TIDES_ASSERT(tides_mutex_held(&sh->version_mutex) ||
				 atomic_load(&sh->state) != TIDES_STATE_OPEN);
	atomic_init(&sv->refs, 1);
	/* the caller sized the shell for the dropped list it is about to publish */
	sv->ndropped = sh->ndropped < sv->dropped_cap ? sh->ndropped : sv->dropped_cap;
	if (sv->ndropped > 0)
		memcpy(sv->dropped, sh->dropped, sv->ndropped * sizeof(tides_dropped_prefix));
	sv->version = sh->current;
	tides_version_ref(sv->version);

	/* memtables: every active or sealed one (the write lock keeps the set stable) */
	sv->nmem = 0;
	tides_lock_write(sh);
	for (uint32_t i = 0; i < sh->nmemtables; i++)
	{
		tides_memtable *m = &sh->memtables[i];
		int			st = atomic_load(&m->state);

		if (st == TIDES_MEM_ACTIVE || st == TIDES_MEM_SEALED)
		{
			atomic_fetch_add(&m->refs, 1);
			sv->mems[sv->nmem++] = m;
		}
	}
	tides_spin_unlock(&sh->write_lock);
	qsort(sv->mems, sv->nmem, sizeof(sv->mems[0]), mem_newest_first);
	/* newest first, and only the newest may still take writes */
	for (uint32_t i = 1; i < sv->nmem; i++)
	{
		TIDES_ASSERT(sv->mems[i - 1]->id > sv->mems[i]->id);
		TIDES_ASSERT(atomic_load(&sv->mems[i]->state) != TIDES_MEM_ACTIVE);
	}

	tides_rwlock_wrlock(&sh->sv_lock);
	old = sh->sv;
	sh->sv = sv;
	tides_rwlock_unlock(&sh->sv_lock);
	if (old != NULL)
		tides_sv_release(db, old);
}

tides_status
tides_sv_install(tides_db *db)
{
	tides_superversion *sv = tides_sv_alloc(db, db->sh->ndropped);

	if (sv == NULL)
		return TIDES_NO_MEMORY;
	tides_sv_publish(db, sv);
	return TIDES_OK;
}

bool
tides_dropped_hides(const tides_dropped_prefix *d, uint32_t n, const uint8_t *ukey, size_t klen,
					uint64_t seq)
{
	for (uint32_t i = 0; i < n; i++)
		if (seq <= d[i].seq && klen >= d[i].len && memcmp(ukey, d[i].bytes, d[i].len) == 0)
			return true;
	return false;
}

/* ---- snapshots */

tides_status
tides_snapshot_acquire(tides_db *db, tides_snapshot *snap)
{
	tides_shared *sh = db->sh;
	uint32_t	start = (uint32_t) (tides_rand_next(&db->rnd) % TIDES_MAX_SNAPSHOTS);

	tides_await_own(db);
	for (uint32_t k = 0; k < TIDES_MAX_SNAPSHOTS; k++)
	{
		uint32_t	i = (start + k) % TIDES_MAX_SNAPSHOTS;
		uint64_t	expected = 0;

		/*
		 * Claim the slot with a placeholder first, then store the seq: a
		 * compaction that scans the slots in between sees the placeholder
		 * (seq 0 + 1) and keeps everything, which is safe.
		 */
		if (atomic_compare_exchange_strong(&sh->snapshots[i], &expected, 1))
		{
			uint64_t	seq = atomic_load_explicit(&sh->published_seq, memory_order_acquire);

			atomic_store(&sh->snapshots[i], seq + 1);
			snap->seq = seq;
			snap->slot = i;
			return TIDES_OK;
		}
	}
	return tides_fail(&db->err, TIDES_BUSY, "all %d snapshot slots are in use",
					  TIDES_MAX_SNAPSHOTS);
}

void
tides_snapshot_release(tides_db *db, tides_snapshot *snap)
{
	/* a slot this snapshot claimed, still holding its seq */
	TIDES_ASSERT(snap->slot < TIDES_MAX_SNAPSHOTS);
	TIDES_ASSERT(atomic_load(&db->sh->snapshots[snap->slot]) == snap->seq + 1);
	atomic_store(&db->sh->snapshots[snap->slot], 0);
}

uint64_t
tides_oldest_snapshot(tides_db *db)
{
	tides_shared *sh = db->sh;
	uint64_t	oldest = atomic_load(&sh->published_seq);

	for (int i = 0; i < TIDES_MAX_SNAPSHOTS; i++)
	{
		uint64_t	v = atomic_load_explicit(&sh->snapshots[i], memory_order_relaxed);

		if (v != 0 && v - 1 < oldest)
			oldest = v - 1;
	}
	return oldest;
}

uint64_t *
tides_snapshot_list(tides_db *db, uint32_t *n)
{
	tides_shared *sh = db->sh;
	uint64_t   *list = malloc(sizeof(uint64_t) * TIDES_MAX_SNAPSHOTS);
	uint32_t	count = 0;

	*n = 0;
	if (list == NULL)
		return NULL;
	for (int i = 0; i < TIDES_MAX_SNAPSHOTS; i++)
	{
		uint64_t	v = atomic_load_explicit(&sh->snapshots[i], memory_order_acquire);

		if (v != 0)
			list[count++] = v - 1;
	}
	qsort(list, count, sizeof(uint64_t), tides_cmp_u64);
	/* dedupe */
	{
		uint32_t	w = 0;

		for (uint32_t i = 0; i < count; i++)
			if (w == 0 || list[w - 1] != list[i])
				list[w++] = list[i];
		count = w;
	}
	*n = count;
	return list;
}
