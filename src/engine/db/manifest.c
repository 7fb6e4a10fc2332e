/*
 * manifest.c -- the crash-safe record of which files form the store.
 *
 * CURRENT names the live manifest ("MANIFEST-000007").  A manifest is a
 * sequence of edits; each edit is appended and fsynced before the state it
 * describes is used.  When a manifest grows past a limit, a new one is
 * written holding a single edit with the whole state, then CURRENT is
 * replaced atomically (write CURRENT.tmp, fsync, rename, fsync directory).
 *
 * At load, a damaged record at the very end of the file (a torn append from
 * a crash: it claims more bytes than the file has, or the tail is zeros) is
 * the end of the manifest; a damaged record anywhere else is corruption, and
 * so is damage that cannot come from a torn append: in the first record
 * (written and synced before CURRENT named the file), a complete last record
 * with a bad checksum and no zeroed tail, a complete last record whose
 * length field was damaged (its checksum matches the length the file holds),
 * or a length running past the end with valid records after it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db_impl.h"
#include "db/compaction.h"
#include "log/log_format.h"

#define MANIFEST_ROLL_SIZE (4u << 20)

static void
manifest_name(char *buf, size_t cap, const char *dir, uint64_t number)
{
	snprintf(buf, cap, "%s/MANIFEST-%06llu", dir, (unsigned long long) number);
}

/* ---- applying edits to the shared state */

/*
 * Everything an edit needs from the metadata heap, allocated before the
 * edit is appended (prepare_edit), so that making it the in-memory state
 * once it is durable (publish_edit) cannot fail.  A failure between the
 * append and the publication would leave a durable manifest naming files
 * the running engine does not know, and callers used to delete them.
 */
typedef struct prepared_edit
{
	tides_version *v;			/* the new version, holding its files */
	uint64_t   *pending;		/* new pending-tag array (if e->has_pending) */
	tides_superversion *sv;		/* room for the superversion to install, or NULL */
} prepared_edit;

static tides_status
prepare_edit(tides_db *db, const tides_edit *e, bool with_sv, prepared_edit *p, tides_error *err)
{
	tides_shared *sh = db->sh;
	tides_version *cur = sh->current;
	tides_file_meta **levels[TIDES_MAX_LEVELS];
	uint32_t	n[TIDES_MAX_LEVELS];
	tides_status s = TIDES_OK;
	tides_file_meta **created = NULL;
	uint32_t	ncreated = 0;

	TIDES_ASSERT(tides_mutex_held(&sh->version_mutex) ||
				 atomic_load(&sh->state) != TIDES_STATE_OPEN);	/* recovery, alone */
	memset(p, 0, sizeof(*p));
	memset(levels, 0, sizeof(levels));
	created = calloc(e->nadded + 1, sizeof(*created));
	if (created == NULL)
		return tides_fail(err, TIDES_NO_MEMORY, "out of memory applying a version edit");
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
	{
		uint32_t	have = cur ? cur->nfiles[l] : 0;

		n[l] = 0;
		levels[l] = malloc((have + e->nadded + 1) * sizeof(tides_file_meta *));
		if (levels[l] == NULL)
		{
			s = tides_fail(err, TIDES_NO_MEMORY, "out of memory applying a version edit");
			goto done;
		}
		for (uint32_t i = 0; i < have; i++)
		{
			tides_file_meta *f = cur->files[l][i];
			bool		deleted = false;

			for (uint32_t d = 0; d < e->ndeleted; d++)
				if (e->deleted[d].level == l && e->deleted[d].number == f->number)
					deleted = true;
			if (!deleted)
				levels[l][n[l]++] = f;
		}
	}
	for (uint32_t i = 0; i < e->nadded; i++)
	{
		const tides_edit_file *ef = &e->added[i];
		tides_file_meta *f = NULL;

		/*
		 * A file that moves between levels (a trivial move deletes and adds
		 * the same number) keeps its descriptor: with a new one, the old
		 * descriptor's last unref would report the file obsolete and
		 * maintenance would delete a live file.
		 */
		for (int l = 0; cur != NULL && f == NULL && l < TIDES_MAX_LEVELS; l++)
			for (uint32_t j = 0; j < cur->nfiles[l]; j++)
				if (cur->files[l][j]->number == ef->number)
				{
					f = cur->files[l][j];
					break;
				}
		if (f == NULL)
		{
			f = tides_file_meta_new(&sh->heap, ef->number, ef->size,
									ef->smallest, ef->smallest_len,
									ef->largest, ef->largest_len);
			if (f == NULL)
			{
				s = tides_fail(err, TIDES_NO_MEMORY, "shared metadata heap exhausted (tides meta_size)");
				goto done;
			}
			f->min_seq = ef->min_seq;
			f->max_seq = ef->max_seq;
			f->entries = ef->entries;
			f->deletions = ef->deletions;
			/* unmarked; prefixes dropped while its job ran are checked by maint.c */
			f->dropped_seen = e->dropped_seen;
			f->gc_horizon = e->gc_horizon;
			f->written_us = e->written_us;
			f->by_compaction = e->by_compaction;
			f->suffix_bound = ef->suffix_bound;
			created[ncreated++] = f;
		}
		levels[ef->level][n[ef->level]++] = f;
	}
	if (e->has_pending && e->npending > 0)
	{
		p->pending = tides_shm_alloc(&sh->heap, e->npending * sizeof(uint64_t));
		if (p->pending == NULL)
		{
			s = tides_fail(err, TIDES_NO_MEMORY, "shared metadata heap exhausted (pending tags)");
			goto done;
		}
		memcpy(p->pending, e->pending, e->npending * sizeof(uint64_t));
	}
	if (with_sv)
	{
		uint32_t	ndropped = sh->ndropped;

		if (e->has_dropped)
			ndropped = e->ndropped < TIDES_MAX_DROPPED ? e->ndropped : TIDES_MAX_DROPPED;
		p->sv = tides_sv_alloc(db, ndropped);
		if (p->sv == NULL)
		{
			s = tides_fail(err, TIDES_NO_MEMORY, "shared metadata heap exhausted (tides meta_size)");
			goto done;
		}
	}
	p->v = tides_version_new(&sh->heap, sh->version_number + 1,
							 (tides_file_meta **const *) levels, n);
	if (p->v == NULL)
	{
		s = tides_fail(err, TIDES_NO_MEMORY, "shared metadata heap exhausted (tides meta_size)");
		goto done;
	}
	ncreated = 0;				/* now owned by p->v */
done:
	if (s != TIDES_OK)
	{
		tides_shm_free(&sh->heap, p->pending);
		tides_sv_free_unused(db, p->sv);
		memset(p, 0, sizeof(*p));
	}
	for (uint32_t i = 0; i < ncreated; i++)
		tides_shm_free(&sh->heap, created[i]);
	free(created);
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		free(levels[l]);
	return s;
}

/*
 * For assertions: does e, an edit the running engine made, fit cur?  It
 * deletes only files cur has at that level, and adds a file cur has only
 * if it also deletes it (a trivial move keeps the number).
 */
static bool
edit_fits(const tides_version *cur, const tides_edit *e)
{
	for (uint32_t d = 0; d < e->ndeleted; d++)
	{
		bool		found = false;
		int			l = e->deleted[d].level;

		for (uint32_t i = 0; cur != NULL && i < cur->nfiles[l] && !found; i++)
			found = cur->files[l][i]->number == e->deleted[d].number;
		if (!found)
			return false;
	}
	for (uint32_t a = 0; a < e->nadded; a++)
	{
		bool		present = false,
					moved = false;

		for (int l = 0; cur != NULL && l < TIDES_MAX_LEVELS; l++)
			for (uint32_t i = 0; i < cur->nfiles[l]; i++)
				present |= cur->files[l][i]->number == e->added[a].number;
		for (uint32_t d = 0; d < e->ndeleted; d++)
			moved |= e->deleted[d].number == e->added[a].number;
		if (present && !moved)
			return false;
		for (uint32_t b = 0; b < a; b++)
			if (e->added[b].number == e->added[a].number)
				return false;
	}
	return true;
}

/* the edit was not applied: give back what prepare_edit took */
static void
discard_prepared(tides_db *db, prepared_edit *p)
{
	tides_shared *sh = db->sh;

	/*
	 * Every file the current version holds keeps a reference from it, so
	 * only descriptors created for this edit reach zero here, and their
	 * files are not obsolete: whether they may be deleted is the caller's
	 * decision (a manifest record naming them may be durable).  Hence no
	 * obsolete callback.
	 */
	if (p->v != NULL)
		tides_version_unref(&sh->heap, p->v, NULL, NULL);
	tides_shm_free(&sh->heap, p->pending);
	tides_sv_free_unused(db, p->sv);
	memset(p, 0, sizeof(*p));
}

/* make a prepared edit the in-memory state; cannot fail */
static void
publish_edit(tides_db *db, const tides_edit *e, prepared_edit *p, tides_memtable *const *flushed,
			 uint32_t nflushed)
{
	tides_shared *sh = db->sh;
	tides_version *cur = sh->current;

	TIDES_ASSERT(p->v != NULL && p->v->number == sh->version_number + 1);
	/* the log is replayed from positions that only move forward */
	TIDES_ASSERT(!e->has_replay_lsn || e->replay_lsn >= sh->replay_lsn);
	sh->version_number = p->v->number;
	sh->current = p->v;
	atomic_store(&sh->l0_files, p->v->nfiles[0]);
	atomic_store(&sh->l0_shift, tides_compaction_l0_shift(db, p->v));
	if (cur != NULL)
		tides_version_unref(&sh->heap, cur, tides_db_note_obsolete, sh);

	if (e->has_replay_lsn)
		sh->replay_lsn = e->replay_lsn;
	if (e->has_next_file && e->next_file > atomic_load(&sh->next_file_number))
		atomic_store(&sh->next_file_number, e->next_file);
	if (e->has_skips)
	{
		sh->nskips = e->nskips < TIDES_MAX_SKIPS ? e->nskips : TIDES_MAX_SKIPS;
		if (sh->nskips > 0)
			memcpy(sh->skips, e->skips, sh->nskips * sizeof(tides_log_skip));
	}
	if (e->has_dropped)
	{
		sh->ndropped = e->ndropped < TIDES_MAX_DROPPED ? e->ndropped : TIDES_MAX_DROPPED;
		if (sh->ndropped > 0)
			memcpy(sh->dropped, e->dropped, sh->ndropped * sizeof(tides_dropped_prefix));
		for (uint32_t i = 0; i < sh->ndropped; i++)
			if (sh->dropped[i].id >= sh->next_dropped_id)
				sh->next_dropped_id = sh->dropped[i].id + 1;
	}
	if (e->has_pending)
	{
		tides_shm_free(&sh->heap, sh->pending);
		sh->pending = p->pending;
		sh->npending = e->npending;
	}
	/* flushed memtables leave the read path with the superversion below */
	for (uint32_t i = 0; i < nflushed; i++)
		tides_memtable_mark_flushed(flushed[i]);
	if (p->sv != NULL)
		tides_sv_publish(db, p->sv);
	memset(p, 0, sizeof(*p));
}

tides_status
tides_version_apply_edit(tides_db *db, const tides_edit *e, tides_error *err)
{
	prepared_edit p;
	tides_status s = prepare_edit(db, e, false, &p, err);

	if (s == TIDES_OK)
		publish_edit(db, e, &p, NULL, 0);
	return s;
}

tides_status
tides_manifest_state_edit(tides_db *db, tides_edit *e)
{
	tides_shared *sh = db->sh;
	tides_version *v = sh->current;
	tides_status s = TIDES_OK;

	tides_edit_init(e);
	e->has_format = true;
	e->format = TIDES_FORMAT_VERSION;
	e->has_replay_lsn = true;
	e->replay_lsn = sh->replay_lsn;
	e->has_next_file = true;
	e->next_file = atomic_load(&sh->next_file_number);
	e->has_last_seq = true;
	e->last_seq = atomic_load(&sh->published_seq);
	e->has_segment_size = true;
	e->segment_size = sh->log.segment_size;
	for (int l = 0; v != NULL && l < TIDES_MAX_LEVELS && s == TIDES_OK; l++)
		for (uint32_t i = 0; i < v->nfiles[l] && s == TIDES_OK; i++)
		{
			tides_file_meta *f = v->files[l][i];
			tides_edit_file ef = {
				.level = l, .number = f->number, .size = f->size,
				.min_seq = f->min_seq, .max_seq = f->max_seq,
				.entries = f->entries, .deletions = f->deletions,
				.smallest = (uint8_t *) tides_file_smallest(f), .smallest_len = f->smallest_len,
				.largest = (uint8_t *) tides_file_largest(f), .largest_len = f->largest_len,
				.suffix_bound = f->suffix_bound
			};

			s = tides_edit_add_file(e, &ef);
		}
	if (s == TIDES_OK)
		s = tides_edit_set_skips(e, sh->skips, sh->nskips);
	if (s == TIDES_OK)
		s = tides_edit_set_dropped(e, sh->dropped, sh->ndropped);
	if (s == TIDES_OK)
		s = tides_edit_set_pending(e, sh->pending, sh->npending);
	if (s != TIDES_OK)
		tides_edit_free(e);
	return s;
}

/* ---- writing */

static tides_status
manifest_fd(tides_db *db, tides_error *err)
{
	char		path[1024];
	int			fd;

	if (db->manifest_fd >= 0 && db->manifest_fd_number == db->sh->manifest_number)
		return TIDES_OK;
	if (db->manifest_fd >= 0)
		db->vfs->close(db->vfs, db->manifest_fd);
	db->manifest_fd = -1;
	manifest_name(path, sizeof(path), db->dir, db->sh->manifest_number);
	fd = db->vfs->open(db->vfs, path, O_RDWR, 0600);
	if (fd < 0)
		return tides_fail_io(err, fd, "open manifest", path);
	db->manifest_fd = fd;
	db->manifest_fd_number = db->sh->manifest_number;
	return TIDES_OK;
}

/*
 * Append one edit record at the end of the open manifest and fsync it.  On
 * failure the file is cut back to its old end.  *written (may be NULL) is
 * set when the whole record was written and only the fsync failed: after a
 * failed fsync nobody knows which pages reached the disk (and the cut may
 * not have), so the record may be durable.
 */
static tides_status
append_edit(tides_db *db, int fd, uint64_t *size, const tides_edit *e, const char *path,
			bool *written, tides_error *err)
{
	tides_buf	b;
	int64_t		w;
	int			r;

	if (written != NULL)
		*written = false;
	tides_buf_init(&b);
	tides_buf_reserve(&b, TIDES_REC_HEADER);
	b.len = TIDES_REC_HEADER;
	tides_edit_encode(e, &b);
	if (b.oom)
	{
		tides_buf_free(&b);
		return tides_fail(err, TIDES_NO_MEMORY, "out of memory encoding a manifest edit");
	}
	tides_rec_seal(b.data, (uint32_t) (b.len - TIDES_REC_HEADER), *size, TIDES_REC_EDIT);
	w = db->vfs->pwrite(db->vfs, fd, b.data, b.len, *size);
	if (w >= 0 && written != NULL)
		*written = true;
	r = w < 0 ? (int) w : db->vfs->fsync(db->vfs, fd);
	if (r != 0)
	{
		tides_buf_free(&b);
		/* cut off whatever part of the record made it, so the next append is clean */
		db->vfs->truncate(db->vfs, fd, *size);
		return tides_fail_io(err, r, "write manifest", path);
	}
	*size += b.len;
	tides_buf_free(&b);
	return TIDES_OK;
}

/*
 * Write the whole current state as the one record of a new manifest file at
 * path (version_mutex held).  On success the file is fsynced and *fd is
 * open on it, *size its length; on failure it is gone.
 */
static tides_status
write_state_file(tides_db *db, const char *path, int *fd, uint64_t *size, tides_error *err)
{
	tides_edit	e;
	tides_status s;

	*size = 0;
	s = tides_manifest_state_edit(db, &e);
	if (s != TIDES_OK)
		return tides_fail(err, s, "out of memory building the manifest state");
	*fd = db->vfs->open(db->vfs, path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (*fd < 0)
	{
		tides_edit_free(&e);
		return tides_fail_io(err, *fd, "create manifest", path);
	}
	/* the state edit must also say where the next manifest number lies */
	e.next_file = atomic_load(&db->sh->next_file_number);
	s = append_edit(db, *fd, size, &e, path, NULL, err);
	tides_edit_free(&e);
	if (s != TIDES_OK)
	{
		db->vfs->close(db->vfs, *fd);
		db->vfs->unlink(db->vfs, path);
	}
	return s;
}

tides_status
tides_manifest_save_as(tides_db *db, const char *name, tides_error *err)
{
	char		path[1024],
				tmp[1040];
	uint64_t	size;
	int			fd,
				r;
	tides_status s;

	snprintf(path, sizeof(path), "%s/%s", db->dir, name);
	snprintf(tmp, sizeof(tmp), "%s/%s.tmp", db->dir, name);
	s = write_state_file(db, tmp, &fd, &size, err);
	if (s != TIDES_OK)
		return s;
	db->vfs->close(db->vfs, fd);
	r = db->vfs->rename(db->vfs, tmp, path);
	if (r == 0)
		r = db->vfs->sync_dir(db->vfs, db->dir);
	if (r != 0)
	{
		db->vfs->unlink(db->vfs, tmp);
		return tides_fail_io(err, r, "install", path);
	}
	return TIDES_OK;
}

tides_status
tides_manifest_rewrite(tides_db *db, tides_error *err)
{
	tides_shared *sh = db->sh;
	uint64_t	number = atomic_fetch_add(&sh->next_file_number, 1);
	uint64_t	old = sh->manifest_number;
	char		path[1024],
				tmp[1024],
				cur[1024];
	char		content[64];
	tides_status s;
	uint64_t	size = 0;
	int			fd,
				r;
	int64_t		w;
	bool		renamed = false;

	manifest_name(path, sizeof(path), db->dir, number);
	s = write_state_file(db, path, &fd, &size, err);
	if (s != TIDES_OK)
		return s;

	snprintf(tmp, sizeof(tmp), "%s/CURRENT.tmp", db->dir);
	snprintf(cur, sizeof(cur), "%s/CURRENT", db->dir);
	snprintf(content, sizeof(content), "MANIFEST-%06llu\n", (unsigned long long) number);
	r = db->vfs->open(db->vfs, tmp, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (r >= 0)
	{
		int			tfd = r;

		w = db->vfs->pwrite(db->vfs, tfd, content, strlen(content), 0);
		r = w < 0 ? (int) w : db->vfs->fsync(db->vfs, tfd);
		db->vfs->close(db->vfs, tfd);
	}
	if (r == 0)
	{
		r = db->vfs->rename(db->vfs, tmp, cur);
		renamed = r == 0;
	}
	if (r == 0)
		r = db->vfs->sync_dir(db->vfs, db->dir);
	if (r != 0 && !renamed)
	{
		db->vfs->close(db->vfs, fd);
		db->vfs->unlink(db->vfs, path);
		return tides_fail_io(err, r, "install CURRENT for", path);
	}

	/* CURRENT names the new manifest now: never delete it */
	if (db->manifest_fd >= 0)
		db->vfs->close(db->vfs, db->manifest_fd);
	db->manifest_fd = fd;
	db->manifest_fd_number = number;
	sh->manifest_number = number;
	sh->manifest_size = size;
	if (r != 0)
	{
		/*
		 * The rename may not be durable: after a crash CURRENT may still
		 * name the old manifest.  Keep that one, and let no edit be
		 * appended to the new one before the directory is synced.
		 */
		sh->manifest_dir_unsynced = true;
		return tides_fail_io(err, r, "sync directory after installing", path);
	}
	sh->manifest_dir_unsynced = false;
	if (old != 0)
	{
		manifest_name(path, sizeof(path), db->dir, old);
		db->vfs->unlink(db->vfs, path);
	}
	return TIDES_OK;
}

tides_status
tides_manifest_apply(tides_db *db, tides_edit *e, tides_memtable *const *flushed, uint32_t nflushed,
					 bool *written, tides_error *err)
{
	tides_shared *sh = db->sh;
	char		path[1024];
	prepared_edit p;
	tides_status s;

	TIDES_ASSERT(tides_mutex_held(&sh->version_mutex));
	TIDES_ASSERT(edit_fits(sh->current, e));
	for (uint32_t i = 0; i < nflushed; i++)
		TIDES_ASSERT(atomic_load(&flushed[i]->state) == TIDES_MEM_SEALED);
	if (written != NULL)
		*written = false;
	e->has_next_file = true;
	e->next_file = atomic_load(&sh->next_file_number);
	/* take every piece of shared memory first: after the append, nothing may fail */
	s = prepare_edit(db, e, true, &p, err);
	if (s != TIDES_OK)
		return s;
	/*
	 * The engine's edits keep the levels sound (L1.. sorted and disjoint, no
	 * file twice) -- if they were: a manifest loaded at recovery can say
	 * anything, and recovery does not judge it (tides_verify does).
	 */
	TIDES_ASSERT(sh->current == NULL || !tides_version_sound(sh->current) ||
				 tides_version_sound(p.v));
	if (e->nadded > 0 || sh->manifest_dir_unsynced)
	{
		/*
		 * The new files were fsynced, but their directory entries are
		 * durable only once the directory is: without this, an OS crash can
		 * leave a manifest naming files that no longer exist.  (Also the
		 * retry after a manifest rewrite whose directory sync failed.)
		 */
		int			r = db->vfs->sync_dir(db->vfs, db->dir);

		if (r != 0)
		{
			discard_prepared(db, &p);
			return tides_fail_io(err, r, "sync directory", db->dir);
		}
		sh->manifest_dir_unsynced = false;
	}
	s = manifest_fd(db, err);
	if (s == TIDES_OK)
	{
		manifest_name(path, sizeof(path), db->dir, sh->manifest_number);
		s = append_edit(db, db->manifest_fd, &sh->manifest_size, e, path, written, err);
	}
	if (s != TIDES_OK)
	{
		/*
		 * Not applied in memory.  If the record was written (*written), it
		 * may still be durable: then the files it names stay on disk (the
		 * caller must not delete them), and since the next append goes
		 * where this one was cut off, it overwrites the record once it is
		 * itself durable.  Either way the memory state stays consistent
		 * with whatever manifest survives.
		 */
		discard_prepared(db, &p);
		return s;
	}
	publish_edit(db, e, &p, flushed, nflushed);
	if (sh->manifest_size > MANIFEST_ROLL_SIZE)
	{
		/*
		 * Roll: write the whole state as a new manifest.  The edit is
		 * already durable in the old one, so a failed roll costs nothing
		 * but a retry at the next edit.
		 */
		tides_error ignored;

		tides_error_clear(&ignored);
		(void) tides_manifest_rewrite(db, &ignored);
	}
	return TIDES_OK;
}

/* ---- loading */

/* merge edit e into the cumulative state */
static tides_status
merge_edit(tides_edit *st, tides_edit *e)
{
	tides_status s = TIDES_OK;

	if (e->has_format && e->format > st->format)
	{
		st->has_format = true;
		st->format = e->format;
	}
	if (e->has_replay_lsn)
	{
		st->has_replay_lsn = true;
		st->replay_lsn = e->replay_lsn;
	}
	if (e->has_next_file && e->next_file > st->next_file)
	{
		st->has_next_file = true;
		st->next_file = e->next_file;
	}
	if (e->has_last_seq && e->last_seq > st->last_seq)
	{
		st->has_last_seq = true;
		st->last_seq = e->last_seq;
	}
	if (e->has_segment_size)
	{
		st->has_segment_size = true;
		st->segment_size = e->segment_size;
	}
	for (uint32_t d = 0; d < e->ndeleted; d++)
		for (uint32_t i = 0; i < st->nadded; i++)
			if (st->added[i].level == e->deleted[d].level &&
				st->added[i].number == e->deleted[d].number)
			{
				free(st->added[i].smallest);
				free(st->added[i].largest);
				st->added[i] = st->added[--st->nadded];
				break;
			}
	for (uint32_t i = 0; i < e->nadded && s == TIDES_OK; i++)
		s = tides_edit_add_file(st, &e->added[i]);
	if (s == TIDES_OK && e->has_skips)
		s = tides_edit_set_skips(st, e->skips, e->nskips);
	if (s == TIDES_OK && e->has_dropped)
		s = tides_edit_set_dropped(st, e->dropped, e->ndropped);
	if (s == TIDES_OK && e->has_pending)
		s = tides_edit_set_pending(st, e->pending, e->npending);
	return s;
}

static bool
zeros_from(tides_db *db, int fd, uint64_t off, uint64_t size)
{
	uint8_t		buf[4096];

	while (off < size)
	{
		size_t		n = size - off < sizeof(buf) ? (size_t) (size - off) : sizeof(buf);
		int64_t		r = db->vfs->pread(db->vfs, fd, buf, n, off);

		if (r <= 0)
			return false;
		for (int64_t i = 0; i < r; i++)
			if (buf[i])
				return false;
		off += (uint64_t) r;
	}
	return true;
}

/*
 * A complete last record whose length field is damaged claims bytes past
 * the end of the file, like a torn append.  If the checksum matches once
 * the length is taken to be what the file holds, it is the former.
 */
static bool
whole_record_with_bad_length(tides_db *db, int fd, tides_buf *rec, uint64_t pos, uint64_t fsize)
{
	uint64_t	len = fsize - pos - TIDES_REC_HEADER;
	uint32_t	stored;
	bool		match;

	if (len > (64u << 20) || !tides_buf_reserve(rec, TIDES_REC_HEADER + (size_t) len))
		return false;
	if (db->vfs->pread(db->vfs, fd, rec->data + TIDES_REC_HEADER, (size_t) len,
					   pos + TIDES_REC_HEADER) != (int64_t) len)
		return false;
	stored = tides_get32(rec->data + 4);
	tides_put32(rec->data + 4, (uint32_t) len);
	match = tides_rec_check_crc(rec->data, (uint32_t) len);
	tides_put32(rec->data + 4, stored);
	return match;
}

/*
 * Is there a valid record anywhere after pos?  Then the damaged record at
 * pos was not the last one, whatever its length field claims (a flipped
 * high bit of a length looks like a torn append that ran past the end).
 * Records carry their own position, so a match is no accident.
 */
static bool
later_record_exists(tides_db *db, int fd, uint64_t pos, uint64_t fsize)
{
	uint64_t	n = fsize - pos;
	uint8_t    *buf;
	bool		found = false;

	if (n > (64u << 20) || (buf = malloc(n)) == NULL)
		return true;			/* cannot tell: treat as corruption */
	if (db->vfs->pread(db->vfs, fd, buf, n, pos) != (int64_t) n)
	{
		free(buf);
		return true;
	}
	for (uint64_t q = 1; !found && q + TIDES_REC_HEADER <= n; q++)
	{
		uint32_t	len;
		tides_rec_type type;

		if (tides_rec_lsn(buf + q) != pos + q)
			continue;
		if (tides_rec_check_header(buf + q, pos + q, n - q - TIDES_REC_HEADER, &len, &type) == TIDES_REC_OK &&
			tides_rec_check_crc(buf + q, len))
			found = true;
	}
	free(buf);
	return found;
}

/* does the record at pos, ending at the end of the file, look torn? */
static bool
torn_tail(tides_db *db, int fd, uint64_t pos, uint64_t fsize)
{
	uint64_t	from = (pos + 512) & ~(uint64_t) 511;	/* first sector boundary after pos */

	if (from >= fsize)
		from = pos + TIDES_REC_HEADER;	/* within one sector: the data never came */
	return from < fsize && zeros_from(db, fd, from, fsize);
}

/*
 * Read manifest `number` into *state; *end is where the valid records end
 * (a torn tail after it is not an error).
 */
static tides_status
manifest_read(tides_db *db, uint64_t number, tides_edit *state, uint64_t *end, int64_t *fsize_out,
			  tides_error *err)
{
	char		path[1024];
	int			fd;
	int64_t		r,
				fsize;
	uint64_t	pos = 0;
	tides_buf	rec;
	tides_status s = TIDES_OK;

	tides_edit_init(state);
	manifest_name(path, sizeof(path), db->dir, number);
	fd = db->vfs->open(db->vfs, path, O_RDONLY, 0);
	if (fd < 0)
		return tides_fail_io(err, fd, "open manifest", path);
	fsize = db->vfs->file_size(db->vfs, fd);
	if (fsize < 0)
	{
		db->vfs->close(db->vfs, fd);
		return tides_fail_io(err, (int) fsize, "stat manifest", path);
	}
	tides_buf_init(&rec);
	while (s == TIDES_OK && pos + TIDES_REC_HEADER <= (uint64_t) fsize)
	{
		uint32_t	len;
		tides_rec_type type;
		tides_edit	e;

		rec.len = 0;
		if (!tides_buf_reserve(&rec, TIDES_REC_HEADER))
		{
			s = tides_fail(err, TIDES_NO_MEMORY, "out of memory reading the manifest");
			break;
		}
		r = db->vfs->pread(db->vfs, fd, rec.data, TIDES_REC_HEADER, pos);
		if (r != TIDES_REC_HEADER)
		{
			s = tides_fail_io(err, r < 0 ? (int) r : -5, "read manifest", path);
			break;
		}
		if (tides_rec_check_header(rec.data, pos, (uint64_t) fsize - pos - TIDES_REC_HEADER,
								   &len, &type) != TIDES_REC_OK || type != TIDES_REC_EDIT)
		{
			/*
			 * A torn append leaves zeros, or a length past the end of the
			 * file, or -- a header across a sector boundary -- zeros from
			 * that boundary on (torn_tail).  Never the first record: a
			 * manifest is named by CURRENT only after its state record was
			 * written and synced.
			 */
			if (pos > 0 &&
				(zeros_from(db, fd, pos, (uint64_t) fsize) ||
				 (pos + TIDES_REC_HEADER > ((pos + 512) & ~(uint64_t) 511) &&
				  torn_tail(db, fd, pos, (uint64_t) fsize)) ||
				 (tides_rec_lsn(rec.data) == pos &&
				  pos + TIDES_REC_HEADER + tides_rec_len(rec.data) > (uint64_t) fsize &&
				  !whole_record_with_bad_length(db, fd, &rec, pos, (uint64_t) fsize) &&
				  !later_record_exists(db, fd, pos, (uint64_t) fsize))))
				break;
			s = tides_fail(err, TIDES_CORRUPTION,
						   "manifest \"%s\" is corrupt: bad record header at offset %llu",
						   path, (unsigned long long) pos);
			break;
		}
		if (!tides_buf_reserve(&rec, TIDES_REC_HEADER + (size_t) len))
		{
			s = tides_fail(err, TIDES_NO_MEMORY, "out of memory reading the manifest");
			break;
		}
		r = db->vfs->pread(db->vfs, fd, rec.data + TIDES_REC_HEADER, len, pos + TIDES_REC_HEADER);
		if (r != (int64_t) len)
		{
			s = tides_fail_io(err, r < 0 ? (int) r : -5, "read manifest", path);
			break;
		}
		if (!tides_rec_check_crc(rec.data, len))
		{
			/*
			 * The last record, torn: never acknowledged.  A torn append whose
			 * length reached the file shows zeros where its data did not
			 * arrive (blocks past the old end of an append-only file), from
			 * a sector boundary on; a flipped byte in an acknowledged record
			 * does not, and is corruption.
			 */
			if (pos > 0 && pos + TIDES_REC_HEADER + len == (uint64_t) fsize &&
				torn_tail(db, fd, pos, (uint64_t) fsize))
				break;
			s = tides_fail(err, TIDES_CORRUPTION,
						   "manifest \"%s\" is corrupt: checksum mismatch at offset %llu",
						   path, (unsigned long long) pos);
			break;
		}
		s = tides_edit_decode(&e, rec.data + TIDES_REC_HEADER, len, err);
		if (s == TIDES_INVALID)
		{
			/* a newer store format: not corruption, and nothing is changed */
			char		inner[TIDES_ERRMSG_LEN];

			snprintf(inner, sizeof(inner), "%s", err->msg);
			tides_fail(err, s, "manifest \"%s\" was %s (open the store with the newer engine that wrote it)",
					   path, inner);
			break;
		}
		if (s != TIDES_OK)
		{
			char		inner[TIDES_ERRMSG_LEN];

			snprintf(inner, sizeof(inner), "%s", err->msg);
			tides_fail(err, s, "manifest \"%s\" is corrupt at offset %llu: %s", path,
					   (unsigned long long) pos, inner);
			break;
		}
		s = merge_edit(state, &e);
		tides_edit_free(&e);
		pos += TIDES_REC_HEADER + len;
	}
	tides_buf_free(&rec);
	db->vfs->close(db->vfs, fd);
	if (s == TIDES_OK && pos == 0)
		s = tides_fail(err, TIDES_CORRUPTION,
					   "manifest \"%s\" is corrupt: it holds no complete record", path);
	if (s != TIDES_OK)
		tides_edit_free(state);
	*end = pos;
	*fsize_out = fsize;
	return s;
}

/* number of the manifest CURRENT names */
static tides_status
read_current(tides_db *db, uint64_t *number, bool *exists, tides_error *err)
{
	char		cur[1024],
				name[128];
	int			fd;
	int64_t		r;
	char	   *endp;

	*exists = false;
	snprintf(cur, sizeof(cur), "%s/CURRENT", db->dir);
	fd = db->vfs->open(db->vfs, cur, O_RDONLY, 0);
	if (fd < 0)
	{
		if (tides_status_from_errno(fd) == TIDES_NOT_FOUND)
			return TIDES_OK;	/* a new store */
		return tides_fail_io(err, fd, "open", cur);
	}
	r = db->vfs->pread(db->vfs, fd, name, sizeof(name) - 1, 0);
	db->vfs->close(db->vfs, fd);
	if (r < 0)
		return tides_fail_io(err, (int) r, "read", cur);
	name[r] = '\0';
	if (r < 10 || strncmp(name, "MANIFEST-", 9) != 0 || name[r - 1] != '\n')
		return tides_fail(err, TIDES_CORRUPTION, "file \"%s\" is corrupt: it does not name a manifest", cur);
	name[r - 1] = '\0';
	*number = strtoull(name + 9, &endp, 10);
	if (*endp != '\0' || *number == 0)
		return tides_fail(err, TIDES_CORRUPTION, "file \"%s\" is corrupt: bad manifest name", cur);
	*exists = true;
	return TIDES_OK;
}

tides_status
tides_manifest_load(tides_db *db, tides_edit *state, bool *exists, tides_error *err)
{
	uint64_t	number = 0,
				end;
	int64_t		fsize;
	tides_status s;

	tides_edit_init(state);
	s = read_current(db, &number, exists, err);
	if (s != TIDES_OK || !*exists)
		return s;
	s = manifest_read(db, number, state, &end, &fsize, err);
	if (s != TIDES_OK)
	{
		*exists = false;
		return s;
	}
	/* drop a torn tail so later appends start on a clean boundary */
	if (end < (uint64_t) fsize)
	{
		char		path[1024];
		int			fd;

		manifest_name(path, sizeof(path), db->dir, number);
		fd = db->vfs->open(db->vfs, path, O_RDWR, 0);
		if (fd >= 0)
		{
			db->vfs->truncate(db->vfs, fd, end);
			db->vfs->close(db->vfs, fd);
		}
	}
	db->sh->manifest_number = number;
	db->sh->manifest_size = end;
	return TIDES_OK;
}

tides_status
tides_manifest_verify(tides_db *db, tides_error *err)
{
	uint64_t	number = 0,
				end;
	int64_t		fsize;
	bool		exists;
	tides_edit	state;
	tides_status s = read_current(db, &number, &exists, err);

	if (s != TIDES_OK)
		return s;
	if (!exists)
		return tides_fail(err, TIDES_CORRUPTION, "CURRENT is missing in \"%s\"", db->dir);
	s = manifest_read(db, number, &state, &end, &fsize, err);
	if (s == TIDES_OK)
		tides_edit_free(&state);
	return s;
}
