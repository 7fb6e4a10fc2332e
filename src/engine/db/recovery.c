/*
 * recovery.c -- bringing a store back at open (tides_recover).
 *
 * Recovery (one process, before anyone else attaches; tides_recover runs one
 * function per phase, numbered as in src/engine/README.md section 7):
 *   1-2. recovery_load, recovery_check_state: load the manifest (or create
 *      a store); a missing CURRENT is a new store only if the directory
 *      holds no store files, else an error (never "new store, delete the
 *      orphans"); refuse impossible positions and segment sizes;
 *   3. recovery_adopt_state: build the current version and the tag table;
 *   4. recovery_delete_orphans: delete files no version names (outputs of
 *      interrupted flushes and compactions, stale manifests);
 *   5-7. recovery_replay: replay the log from the replay position into
 *      memtables, flushing synchronously if they fill up, following
 *      recorded skips, stopping at the first damaged record; classify where
 *      it stopped: a torn tail, or damage that valid later records prove
 *      was durable (an error, before anything after the damage is deleted,
 *      zeroed or skipped);
 *   8-9. recovery_restart_log: start the next writes at a fresh segment and
 *      record the jump as a skip, so that anything left after the damage is
 *      never read again;
 *   10. recovery_rewrite_state: write a fresh manifest with the whole state.
 * Unsealed tags found are reported and stay pending until settled; they are
 * in the tag table from the start of the replay, so that flushes during
 * the replay record them pending too.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/db_impl.h"
#include "db/write_batch.h"

#define TIDES_MAX_LSN ((uint64_t) 1 << 56)

typedef struct dir_scan
{
	uint64_t	min_seg;
	uint64_t	max_seg;
	bool		any_seg;
	uint64_t   *ssts;
	uint32_t	nssts;
	uint32_t	capssts;
	char	  **others;			/* stale manifests, temp files (of CURRENT, checkpoints) */
	uint32_t	nothers;
	bool		failed;			/* out of memory: the lists are incomplete */
	char		store_file[64]; /* a file only an existing store has ("" if none) */
	uint64_t	max_manifest;	/* highest MANIFEST-<n> (0: none) */
} dir_scan;

/* "<digits><suffix>" -> number */
static bool
parse_numbered(const char *name, const char *suffix, uint64_t *num)
{
	size_t		n = strlen(name),
				sl = strlen(suffix);
	uint64_t	v = 0;

	if (n <= sl || strcmp(name + n - sl, suffix) != 0)
		return false;
	for (size_t i = 0; i < n - sl; i++)
	{
		if (name[i] < '0' || name[i] > '9')
			return false;
		v = v * 10 + (uint64_t) (name[i] - '0');
	}
	*num = v;
	return true;
}

static void
scan_entry(const char *name, void *arg)
{
	dir_scan   *d = arg;
	uint64_t	num;

	/*
	 * Anything but the first manifest of a store whose creation was cut
	 * short (MANIFEST-000001, CURRENT.tmp) shows that a store lives here.
	 */
	if (d->store_file[0] == '\0' &&
		(parse_numbered(name, ".log", &num) || parse_numbered(name, ".sst", &num) ||
		 (strncmp(name, "MANIFEST-", 9) == 0 && strcmp(name, "MANIFEST-000001") != 0)))
		snprintf(d->store_file, sizeof(d->store_file), "%.63s", name);
	if (strncmp(name, "MANIFEST-", 9) == 0 && parse_numbered(name + 9, "", &num) &&
		num > d->max_manifest)
		d->max_manifest = num;

	if (parse_numbered(name, ".log", &num))
	{
		if (!d->any_seg || num < d->min_seg)
			d->min_seg = num;
		if (!d->any_seg || num > d->max_seg)
			d->max_seg = num;
		d->any_seg = true;
	}
	else if (parse_numbered(name, ".sst", &num))
	{
		if (d->nssts == d->capssts)
		{
			uint32_t	cap = d->capssts ? d->capssts * 2 : 64;
			uint64_t   *p = realloc(d->ssts, cap * sizeof(uint64_t));

			if (p == NULL)
			{
				d->failed = true;
				return;
			}
			d->ssts = p;
			d->capssts = cap;
		}
		d->ssts[d->nssts++] = num;
	}
	else if (strncmp(name, "MANIFEST-", 9) == 0 || strcmp(name, "CURRENT.tmp") == 0 ||
			 (strncmp(name, "CKPT-", 5) == 0 && strlen(name) > 4 &&
			  strcmp(name + strlen(name) - 4, ".tmp") == 0))
	{
		char	  **p = realloc(d->others, (d->nothers + 1) * sizeof(char *));
		char	   *copy = p != NULL ? strdup(name) : NULL;

		if (p != NULL)
			d->others = p;
		if (copy == NULL)
		{
			d->failed = true;
			return;
		}
		d->others[d->nothers++] = copy;
	}
}

static bool
version_has_file(const tides_version *v, uint64_t number)
{
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		for (uint32_t i = 0; i < v->nfiles[l]; i++)
			if (v->files[l][i]->number == number)
				return true;
	return false;
}

static void
scan_free(dir_scan *d)
{
	for (uint32_t i = 0; i < d->nothers; i++)
		free(d->others[i]);
	free(d->others);
	free(d->ssts);
	d->others = NULL;
	d->ssts = NULL;
	d->nothers = d->nssts = 0;
}

typedef struct replay_ctx
{
	tides_db   *db;
	uint64_t   *unsealed;
	uint32_t	nunsealed;
	uint32_t	capunsealed;
	uint64_t	batches;
	uint64_t	bytes;
	tides_error err;
} replay_ctx;

static void
unsealed_remove(replay_ctx *c, uint64_t tag)
{
	for (uint32_t i = 0; i < c->nunsealed; i++)
		if (c->unsealed[i] == tag)
		{
			c->unsealed[i] = c->unsealed[--c->nunsealed];
			return;
		}
}

static bool
unsealed_add(replay_ctx *c, uint64_t tag)
{
	for (uint32_t i = 0; i < c->nunsealed; i++)
		if (c->unsealed[i] == tag)
			return true;
	if (c->nunsealed == c->capunsealed)
	{
		uint32_t	cap = c->capunsealed ? c->capunsealed * 2 : 64;
		uint64_t   *p = realloc(c->unsealed, cap * sizeof(uint64_t));

		if (p == NULL)
			return false;
		c->unsealed = p;
		c->capunsealed = cap;
	}
	c->unsealed[c->nunsealed++] = tag;
	return true;
}

/* a replayed batch's entries go into the memtable in groups, as the write path's do */
typedef struct replay_insert
{
	tides_db   *db;
	tides_mem_group group;		/* of the active memtable */
	tides_skip_splice splice;	/* of that memtable */
} replay_insert;

static tides_status
replay_entry(void *arg, uint64_t seq, int type, const uint8_t *key, size_t klen,
			 const uint8_t *val, size_t vlen)
{
	replay_insert *r = arg;
	uint32_t	h = tides_skip_random_height(tides_rand_next(&r->db->rnd));
	uint64_t	need = tides_memtable_entry_size(h, klen, vlen);
	uint64_t	off = atomic_load(&r->group.m->used);

	/* the caller made room for the whole batch at the tallest height */
	TIDES_ASSERT(off + need <= r->group.m->arena_size);
	atomic_store(&r->group.m->used, off + need);
	atomic_store(&r->group.m->placed, atomic_load(&r->group.m->placed) + need);
	tides_mem_group_put(&r->group, &(tides_mem_put) {
		.off = off, .height = h, .seq = seq, .type = type,
		.ukey = key, .ukey_len = klen, .val = val, .vlen = vlen, .sp = &r->splice
	});
	return TIDES_OK;
}

/* seal the active memtable if it holds anything, and flush every sealed one */
static tides_status
replay_flush_all(tides_db *db, tides_error *err)
{
	tides_status s;
	bool		did;

	for (;;)
	{
		s = tides_seal_memtable(db);
		if (s == TIDES_OK)
			break;
		if (s != TIDES_BUSY)
			return tides_fail(err, s, "could not seal a memtable during recovery");
		s = tides_flush_work(db, &did);
		if (s != TIDES_OK)
		{
			*err = db->err;
			return s;
		}
		if (!did)
			return tides_fail(err, TIDES_NO_MEMORY, "recovery could not free a memtable");
	}
	do
	{
		s = tides_flush_work(db, &did);
		if (s != TIDES_OK)
		{
			*err = db->err;
			return s;
		}
	} while (did);
	return TIDES_OK;
}

/* make the active memtable able to take `need` more bytes */
static tides_status
replay_make_room(tides_db *db, uint64_t need, tides_error *err)
{
	tides_shared *sh = db->sh;
	tides_memtable *m = sh->active;

	if (atomic_load(&m->used) + need <= m->arena_size)
		return TIDES_OK;
	for (;;)
	{
		tides_status s;
		bool		did;

		s = tides_seal_memtable(db);
		if (s == TIDES_OK)
			return TIDES_OK;
		if (s != TIDES_BUSY)
			return tides_fail(err, s, "could not seal a memtable during recovery");
		s = tides_flush_work(db, &did);
		if (s != TIDES_OK)
		{
			*err = db->err;
			return s;
		}
		if (!did)
			return tides_fail(err, TIDES_NO_MEMORY, "recovery could not free a memtable");
	}
}

/*
 * Register a replayed batch's tag in the tag table before its entries go
 * into the memtable, as the write path does: a flush during the replay
 * then records the tag pending in its manifest edit (with the replay
 * position moving past the tag's records, a crash before the end of
 * recovery would otherwise forget it).  A full table is emptied of settled
 * tags by flushing, as at run time.
 */
static tides_status
replay_note_tag(tides_db *db, uint64_t tag, uint64_t lsn, tides_error *err)
{
	tides_status s = tides_tags_note(db, tag, lsn, false, 0);

	if (s == TIDES_BUSY)
	{
		/* the active memtable ends before this record (next_lsn == lsn) */
		s = replay_flush_all(db, err);
		if (s != TIDES_OK)
			return s;
		s = tides_tags_note(db, tag, lsn, false, 0);
	}
	if (s != TIDES_OK)
		return tides_fail(err, s, "the log holds more open batch tags than the tag table takes "
						  "(max_open_tags %u)", db->opts.max_open_tags);
	return TIDES_OK;
}

static tides_status
replay_record(void *arg, uint64_t lsn, const uint8_t *payload, uint32_t len)
{
	replay_ctx *c = arg;
	tides_db   *db = c->db;
	tides_shared *sh = db->sh;
	tides_batch_header h;
	tides_status s;
	replay_insert ri;

	/* validate the whole batch before touching the memtable */
	s = tides_batch_decode(payload, len, &h, NULL, NULL, &c->err);
	if (s != TIDES_OK)
		return s;
	TIDES_ASSERT(lsn >= sh->next_lsn);	/* replay moves forward through the log */
	sh->next_lsn = lsn;			/* a memtable sealed now ends before this record */
	s = replay_make_room(db,
						 (uint64_t) len + (uint64_t) h.count * (TIDES_SKIP_MAX_HEIGHT * 4 + 32),
						 &c->err);
	if (s != TIDES_OK)
		return s;
	if (h.tag != 0)
	{
		s = replay_note_tag(db, h.tag, lsn, &c->err);
		if (s != TIDES_OK)
			return s;
	}
	ri.db = db;
	TIDES_ASSERT(atomic_load(&sh->active->state) == TIDES_MEM_ACTIVE);
	tides_mem_group_init(&ri.group, sh->active);
	tides_skip_splice_init(&ri.splice);
	s = tides_batch_decode(payload, len, &h, replay_entry, &ri, &c->err);
	TIDES_ASSERT(s == TIDES_OK);	/* validated just above */
	if (s != TIDES_OK)
		return s;
	tides_mem_group_finish(&ri.group);
	sh->next_lsn = lsn + TIDES_REC_HEADER + len;
	if (h.count > 0 && h.seq + h.count - 1 > sh->last_seq)
		sh->last_seq = h.seq + h.count - 1;
	/* flushes during replay wait for what they write to be published */
	atomic_store(&sh->published_seq, sh->last_seq);
	if (h.tag != 0)
	{
		if (h.seal)
		{
			unsealed_remove(c, h.tag);
			tides_tags_note(db, h.tag, lsn, true, sh->active->first_lsn);
		}
		else if (!unsealed_add(c, h.tag))
			return tides_fail(&c->err, TIDES_NO_MEMORY, "out of memory tracking tags");
	}
	c->batches++;
	c->bytes += TIDES_REC_HEADER + len;
	return TIDES_OK;
}

/*
 * Where the replay stopped: a torn tail, or damage in the middle of the log?
 *
 * After an OS crash, unsynced log writes may survive in any order and torn:
 * a damaged (or never written) record followed by valid later ones is
 * normal there, and those records were never acknowledged as durable.  But
 * a record carries what its writer knew was durable (its durable claim,
 * log/log_format.h): if a valid later record, with a sequence number past
 * everything replayed, claims the stream was durable beyond `end`, then the
 * bytes at `end` had reached the disk and changed since -- corruption, and
 * stopping here would silently drop that record and everything it
 * vouches for.  That is an error naming the place; nothing is changed.
 */
typedef struct later_ctx
{
	uint64_t	end;
	uint64_t	last_seq;
	bool		found;
	uint64_t	lsn;
	uint64_t	seq;
} later_ctx;

static bool
later_record(void *arg, uint64_t lsn, const uint8_t *hdr, const uint8_t *payload, uint32_t len)
{
	later_ctx  *c = arg;
	tides_batch_header h;
	tides_error err;

	if (tides_rec_durable_claim(hdr) <= c->end)
		return false;
	if (tides_batch_decode(payload, len, &h, NULL, NULL, &err) != TIDES_OK || h.seq <= c->last_seq)
		return false;
	c->found = true;
	c->lsn = lsn;
	c->seq = h.seq;
	return true;
}

static tides_status
check_log_end(tides_db *db, uint64_t end, bool damaged, uint64_t last_segment, tides_error *err)
{
	tides_shared *sh = db->sh;
	uint64_t	size = sh->log.segment_size;
	later_ctx	c = {end, sh->last_seq, false, 0, 0};
	char		path[1024],
				later[1024];
	tides_status s;

	s = tides_log_scan_after(&db->log, end, last_segment, sh->skips, sh->nskips,
							 later_record, &c, err);
	if (s != TIDES_OK || !c.found)
		return s;
	tides_log_segment_name(path, sizeof(path), db->dir, end / size);
	tides_log_segment_name(later, sizeof(later), db->dir, c.lsn / size);
	return tides_fail(err, TIDES_CORRUPTION,
					  "log segment \"%s\" is corrupt at offset %llu (%s), but the record at "
					  "offset %llu of \"%s\" (sequence %llu) was written after that point was "
					  "durable; recovery refuses to drop the rest of the log",
					  path, (unsigned long long) (end % size),
					  damaged ? "damaged record" : "record missing",
					  (unsigned long long) (c.lsn % size), later, (unsigned long long) c.seq);
}

/* zero the log from position `from` to the end of its segment, durably */
static tides_status
zero_log_tail(tides_db *db, uint64_t from, tides_error *err)
{
	uint64_t	size = db->sh->log.segment_size;
	char		path[1024];
	uint8_t		zeros[8192];
	int			fd,
				r = 0;

	memset(zeros, 0, sizeof(zeros));
	tides_log_segment_name(path, sizeof(path), db->dir, from / size);
	fd = db->vfs->open(db->vfs, path, O_RDWR, 0600);
	if (fd < 0)
		return tides_fail_io(err, fd, "open log segment", path);
	for (uint64_t off = from % size; r == 0 && off < size; off += sizeof(zeros))
	{
		uint64_t	n = size - off < sizeof(zeros) ? size - off : sizeof(zeros);
		int64_t		w = db->vfs->pwrite(db->vfs, fd, zeros, n, off);

		if (w < 0)
			r = (int) w;
	}
	if (r == 0)
		r = db->vfs->fsync(db->vfs, fd);
	db->vfs->close(db->vfs, fd);
	return r == 0 ? TIDES_OK : tides_fail_io(err, r, "clear the tail of log segment", path);
}

/*
 * Recovery's working state, shared by its phases (src/engine/README.md,
 * section 7, numbers them; the numbers are repeated below): the directory
 * as recovery found it, the replay's progress and the unsealed tags found,
 * and the log positions each phase hands to the next.
 */
typedef struct recovery
{
	tides_db   *db;
	dir_scan	scan;			/* 1: the directory listing */
	bool		exists;			/* 1: CURRENT named a manifest */
	replay_ctx	rc;				/* 3, 6: unsealed tags, replay counters */
	uint64_t	end;			/* 6: where the replay stopped */
	bool		damaged;		/* 6: ... on a damaged record */
	uint64_t	restart;		/* 8: where new writes start */
} recovery;

/*
 * 1. List the directory and load the manifest.  A missing CURRENT is a new
 * store only if the listing shows no store files.  On success *state holds
 * the manifest's state (empty for a new store); on failure nothing is held.
 */
static tides_status
recovery_load(recovery *rv, tides_edit *state, tides_error *err)
{
	tides_db   *db = rv->db;
	dir_scan   *scan = &rv->scan;
	tides_status s;
	int			r;

	r = db->vfs->mkdir(db->vfs, db->dir);
	if (r != 0)
		return tides_fail_io(err, r, "create directory", db->dir);
	r = db->vfs->list_dir(db->vfs, db->dir, scan_entry, scan);
	if (r == 0 && scan->failed)
		r = -12;				/* ENOMEM: an incomplete list must not guide deletions */
	if (r != 0)
		return tides_fail_io(err, r, "list directory", db->dir);
	s = tides_manifest_load(db, state, &rv->exists, err);
	if (s != TIDES_OK)
		return s;
	if (rv->exists || scan->store_file[0] == '\0')
		return TIDES_OK;

	/*
	 * No CURRENT, yet files only an existing store has.  Starting a new
	 * store here would delete every table as an orphan.  (A directory
	 * holding only MANIFEST-000001 or CURRENT.tmp is a store whose creation
	 * was cut short: it never held data.)
	 */
	tides_edit_free(state);
	if (scan->max_manifest > 0)
		return tides_fail(err, TIDES_CORRUPTION,
						  "file \"%s/CURRENT\" is missing, but \"%s/MANIFEST-%06llu\" exists: the "
						  "directory holds a store whose CURRENT was lost; nothing was changed "
						  "(restore CURRENT: the line \"MANIFEST-%06llu\" naming the newest "
						  "valid manifest)", db->dir, db->dir,
						  (unsigned long long) scan->max_manifest,
						  (unsigned long long) scan->max_manifest);
	return tides_fail(err, TIDES_CORRUPTION,
					  "file \"%s/CURRENT\" is missing, but \"%s/%s\" exists: the directory "
					  "holds a store whose CURRENT and manifest were lost; nothing was changed",
					  db->dir, db->dir, scan->store_file);
}

/*
 * 2. Refuse log positions no store can reach (they would wrap around in
 * arithmetic) and segment sizes no store could have been created with
 * (replay would never end); adopt the manifest's segment size.
 */
static tides_status
recovery_check_state(recovery *rv, const tides_edit *state, tides_error *err)
{
	tides_db   *db = rv->db;
	bool		bad = state->replay_lsn > TIDES_MAX_LSN;

	for (uint32_t i = 0; i < state->nskips; i++)
		bad |= state->skips[i].to > TIDES_MAX_LSN;
	if (bad)
		return tides_fail(err, TIDES_CORRUPTION,
						  "manifest of \"%s\" names an impossible log position", db->dir);
	if (rv->exists && state->has_segment_size && state->segment_size > 0)
	{
		if (state->segment_size < (64u << 10) || state->segment_size > ((uint64_t) 1 << 40))
			return tides_fail(err, TIDES_CORRUPTION,
							  "manifest of \"%s\" names an impossible log segment size %llu",
							  db->dir, (unsigned long long) state->segment_size);
		db->sh->log.segment_size = state->segment_size;
	}
	return TIDES_OK;
}

/*
 * 3. Apply the state to memory: current version, replay position, skips,
 * dropped prefixes; last_seq from the manifest and every file; the
 * manifest's pending tags into the unsealed set and the tag table.
 */
static tides_status
recovery_adopt_state(recovery *rv, const tides_edit *state, tides_error *err)
{
	tides_db   *db = rv->db;
	tides_shared *sh = db->sh;
	tides_status s;

	s = tides_version_apply_edit(db, state, err);
	if (s != TIDES_OK)
		return s;
	sh->last_seq = state->last_seq;
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		for (uint32_t i = 0; i < sh->current->nfiles[l]; i++)
		{
			const tides_file_meta *f = sh->current->files[l][i];

			if (f->max_seq > sh->last_seq)
				sh->last_seq = f->max_seq;
			/* a new file must never get the number of a live one */
			if (f->number >= atomic_load(&sh->next_file_number))
				atomic_store(&sh->next_file_number, f->number + 1);
		}
	/*
	 * The manifest's pending tags go into the tag table before the replay
	 * (first_lsn 0: below every flush), so a flush during the replay records
	 * them pending again.
	 */
	for (uint32_t i = 0; i < state->npending; i++)
	{
		if (!unsealed_add(&rv->rc, state->pending[i]))
			return tides_fail(err, TIDES_NO_MEMORY, "out of memory tracking tags");
		if (tides_tags_note(db, state->pending[i], 0, false, 0) != TIDES_OK)
			return tides_fail(err, TIDES_BUSY, "the manifest names more pending batch tags than the "
							  "tag table takes (max_open_tags %u)", db->opts.max_open_tags);
	}
	return TIDES_OK;
}

/*
 * 4a. Every file the state names must be in the directory: a store copied
 * file by file (a backup) that lacks one is incomplete, and saying so now
 * beats a failed read later.  File numbers continue above every file and
 * manifest present, so no new file takes the name of one that is there (a
 * restored checkpoint's manifest is numbered above the rest).
 */
static tides_status
recovery_check_files(recovery *rv, tides_error *err)
{
	tides_db   *db = rv->db;
	tides_shared *sh = db->sh;
	dir_scan   *scan = &rv->scan;
	uint64_t	next = atomic_load(&sh->next_file_number);

	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		for (uint32_t i = 0; i < sh->current->nfiles[l]; i++)
		{
			uint64_t	number = sh->current->files[l][i]->number;
			bool		found = false;

			for (uint32_t j = 0; j < scan->nssts && !found; j++)
				found = scan->ssts[j] == number;
			if (!found)
				return tides_fail(err, TIDES_CORRUPTION,
								  "file \"%s/%06llu.sst\" (level %d) is missing: the manifest names "
								  "it, so the directory is not a complete copy of a store",
								  db->dir, (unsigned long long) number, l);
		}
	for (uint32_t j = 0; j < scan->nssts; j++)
		if (scan->ssts[j] >= next)
			next = scan->ssts[j] + 1;
	if (scan->max_manifest >= next)
		next = scan->max_manifest + 1;
	atomic_store(&sh->next_file_number, next);
	return TIDES_OK;
}

/*
 * 4. Delete every .sst the version does not name (outputs of interrupted
 * flushes and compactions), every manifest but the current one and
 * CURRENT.tmp; take the log's extent from the listing.
 */
static void
recovery_delete_orphans(recovery *rv)
{
	tides_db   *db = rv->db;
	tides_shared *sh = db->sh;
	dir_scan   *scan = &rv->scan;
	uint64_t	size = sh->log.segment_size;
	char		path[1024],
				name[64];

	for (uint32_t i = 0; i < scan->nssts; i++)
		if (!version_has_file(sh->current, scan->ssts[i]))
		{
			tides_sst_file_name(name, sizeof(name), scan->ssts[i]);
			snprintf(path, sizeof(path), "%s/%s", db->dir, name);
			db->vfs->unlink(db->vfs, path);
		}
	snprintf(name, sizeof(name), "MANIFEST-%06llu", (unsigned long long) sh->manifest_number);
	for (uint32_t i = 0; i < scan->nothers; i++)
		if (strcmp(scan->others[i], name) != 0)
		{
			snprintf(path, sizeof(path), "%s/%s", db->dir, scan->others[i]);
			db->vfs->unlink(db->vfs, path);
		}
	if (scan->any_seg)
	{
		atomic_store(&sh->log.oldest_segment, scan->min_seg);
		atomic_store(&sh->log.ready_segment, scan->max_seg + 1);
	}
	else
	{
		atomic_store(&sh->log.oldest_segment, sh->replay_lsn / size);
		atomic_store(&sh->log.ready_segment, sh->replay_lsn / size);
	}
}

/*
 * 5-7. Activate a first memtable, open the engine to flushes, replay the
 * log from the replay position, classify where it stopped, and make the
 * replayed records durable.
 */
static tides_status
recovery_replay(recovery *rv, tides_error *err)
{
	tides_db   *db = rv->db;
	tides_shared *sh = db->sh;
	tides_status s;

	sh->next_lsn = sh->replay_lsn;
	tides_memtable_activate(&sh->memtables[0], sh->next_mem_id++, sh->replay_lsn, sh->last_seq + 1);
	sh->active = &sh->memtables[0];
	s = tides_sv_install(db);
	if (s != TIDES_OK)
		return tides_fail(err, s, "out of shared memory (tides meta_size)");
	atomic_store(&sh->state, TIDES_STATE_OPEN);	/* flushes may run during replay */
	s = tides_log_replay(&db->log, sh->replay_lsn, sh->skips, sh->nskips, replay_record, &rv->rc,
						 &rv->end, &rv->damaged, err);
	if (s == TIDES_OK && rv->rc.err.code != TIDES_OK)
		s = tides_fail(err, rv->rc.err.code, "%s", rv->rc.err.msg);
	/* a torn tail, or damage that later records prove was durable? */
	if (s == TIDES_OK)
		s = check_log_end(db, rv->end, rv->damaged, rv->scan.any_seg ? rv->scan.max_seg : 0, err);
	/*
	 * The replayed records may still be only in the page cache (a process
	 * crash in a relaxed sync mode); from now on durable_lsn says they are
	 * on disk, and later records claim so (log_format.h).  Make it true.
	 */
	if (s == TIDES_OK)
		s = tides_log_sync_range(&db->log, sh->replay_lsn, rv->end, sh->skips, sh->nskips, err);
	return s;
}

/*
 * 8-9. New writes start at a fresh segment, and recovery will jump there
 * (a skip), unless 64 skips exist; then the stream continues at `end`.
 * Everything after `end` is made unreadable.
 */
static tides_status
recovery_restart_log(recovery *rv, tides_error *err)
{
	tides_db   *db = rv->db;
	tides_shared *sh = db->sh;
	dir_scan   *scan = &rv->scan;
	uint64_t	size = sh->log.segment_size;
	uint64_t	end = rv->end;
	uint64_t	restart;
	tides_status s = TIDES_OK;

	TIDES_ASSERT(end >= sh->replay_lsn);
	restart = end % size == 0 ? end : (end / size + 1) * size;
	if (restart != end && sh->nskips < TIDES_MAX_SKIPS)
	{
		sh->skips[sh->nskips].from = end;
		sh->skips[sh->nskips].to = restart;
		sh->nskips++;
	}
	else if (restart != end)
		restart = end;			/* no room for a skip: continue in place */
	rv->restart = restart;
	sh->next_lsn = restart;
	atomic_store(&sh->published_lsn, restart);
	atomic_store(&sh->log.written_lsn, restart);
	atomic_store(&sh->log.durable_lsn, restart);
	atomic_store(&sh->published_seq, sh->last_seq);
	if (atomic_load(&sh->log.oldest_segment) > restart / size)
		atomic_store(&sh->log.oldest_segment, restart / size);
	if (atomic_load(&sh->log.ready_segment) < restart / size)
		atomic_store(&sh->log.ready_segment, restart / size);

	/*
	 * Log files beyond the end of the replay can only hold records written
	 * before the crash that replay did not reach (an OS crash may keep a
	 * later page of the log and lose an earlier one).  Their positions will
	 * be written again, and a stale record that sits exactly where the new
	 * stream puts a record boundary carries the right position and checksum:
	 * a later recovery would replay it and resurrect lost writes.  So every
	 * segment after the one holding `end` is deleted (prepared afresh when
	 * needed), and if the stream goes on inside that segment (no room for
	 * a skip), the rest of it is zeroed.
	 */
	if (scan->any_seg)
	{
		uint64_t	first = end / size + 1;

		if (restart == end && end % size == 0)
			first = end / size;
		for (uint64_t seg = first; seg <= scan->max_seg; seg++)
		{
			char		path[1024];

			tides_log_segment_name(path, sizeof(path), db->dir, seg);
			db->vfs->unlink(db->vfs, path);
		}
		tides_log_detach(&db->log);	/* cached descriptors of deleted files */
		if (scan->max_seg >= first)
			atomic_store(&sh->log.ready_segment, first);
		if (restart == end && end % size != 0)
			s = zero_log_tail(db, end, err);
		if (s == TIDES_OK && scan->max_seg >= first)
		{
			int			r = db->vfs->sync_dir(db->vfs, db->dir);

			if (r != 0)
				s = tides_fail_io(err, r, "sync directory", db->dir);
		}
	}
	return s;
}

/*
 * 10. Write the whole state (with the new skip) as a fresh manifest,
 * reconcile the dropped prefixes, prepare the segment of `restart`.
 * Unsealed tags stay pending until settled: they are in the tag table
 * already (put there before and during the replay), so every later flush
 * records them pending.
 */
static tides_status
recovery_rewrite_state(recovery *rv, tides_error *err)
{
	tides_db   *db = rv->db;
	tides_shared *sh = db->sh;
	tides_dropped_state ds;
	tides_status s;

	memset(&ds, 0, sizeof(ds));
	tides_lock_version(sh);
	s = tides_manifest_rewrite(db, err);
	if (s == TIDES_OK && sh->ndropped > 0)
	{
		/*
		 * Marks for compaction are not in the manifest: recompute them from
		 * the dropped list (every file starts unchecked), deleting files
		 * wholly under a prefix and retiring prefixes whose keys are gone,
		 * e.g. after a crash between a rewrite and its retirement.  A failed
		 * edit here is retried by the maintenance work; the marks stand.
		 */
		tides_error ignored;

		tides_error_clear(&ignored);
		(void) tides_dropped_reconcile(db, &ds, &ignored);
	}
	tides_mutex_unlock(&sh->version_mutex);
	if (ds.marked > 0)
		tides_db_wakeup(db, TIDES_WORK_COMPACT);
	if (s == TIDES_OK && sh->ropts.log_mode == TIDES_LOG_OWN)
		s = tides_log_ensure_ready(db, rv->restart / sh->log.segment_size, err);
	return s;
}

/*
 * 10b. EXTERNAL mode: the engine's own log is not written any more.  What
 * recovery replayed from it (a store last written in OWN mode) goes into
 * SSTables now, since only the application's log will be replayed after
 * the next crash, and then no segment is needed: all are deleted.
 */
static tides_status
recovery_retire_log(recovery *rv, tides_error *err)
{
	tides_db   *db = rv->db;
	tides_shared *sh = db->sh;
	dir_scan   *scan = &rv->scan;
	tides_status s = TIDES_OK;
	int			r;

	if (rv->rc.batches > 0)
		s = replay_flush_all(db, err);
	if (s != TIDES_OK || !scan->any_seg)
		return s;
	tides_log_detach(&db->log);
	for (uint64_t seg = scan->min_seg; seg <= scan->max_seg; seg++)
	{
		char		path[1024];

		tides_log_segment_name(path, sizeof(path), db->dir, seg);
		db->vfs->unlink(db->vfs, path);
	}
	r = db->vfs->sync_dir(db->vfs, db->dir);
	if (r != 0)
		return tides_fail_io(err, r, "sync directory", db->dir);
	atomic_store(&sh->log.oldest_segment, sh->next_lsn / sh->log.segment_size);
	atomic_store(&sh->log.ready_segment, sh->next_lsn / sh->log.segment_size);
	return TIDES_OK;
}

/*
 * The phases in order; one cleanup path.  On failure the engine is not
 * open (replay opened it to flushes) and the unsealed list is freed; the
 * caller marks the region FAILED.
 */
tides_status
tides_recover(tides_db *db, tides_recovery_info *info, tides_error *err)
{
	tides_shared *sh = db->sh;
	recovery	rv;
	tides_edit	state;
	tides_status s;
	struct timespec t0,
				t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&rv, 0, sizeof(rv));
	rv.db = db;
	rv.rc.db = db;
	tides_error_clear(&rv.rc.err);

	s = recovery_load(&rv, &state, err);
	if (s == TIDES_OK)
	{
		s = recovery_check_state(&rv, &state, err);
		if (s == TIDES_OK)
			s = recovery_adopt_state(&rv, &state, err);
		tides_edit_free(&state);
	}
	if (s == TIDES_OK)
		s = recovery_check_files(&rv, err);
	if (s == TIDES_OK)
	{
		recovery_delete_orphans(&rv);
		s = recovery_replay(&rv, err);
	}
	if (s == TIDES_OK)
		s = recovery_restart_log(&rv, err);
	if (s == TIDES_OK)
		s = recovery_rewrite_state(&rv, err);
	if (s == TIDES_OK && sh->ropts.log_mode == TIDES_LOG_EXTERNAL)
		s = recovery_retire_log(&rv, err);
	scan_free(&rv.scan);
	if (s != TIDES_OK)
	{
		if (atomic_load(&sh->state) == TIDES_STATE_OPEN)
			atomic_store(&sh->state, TIDES_STATE_INIT);
		free(rv.rc.unsealed);
		return s;
	}

	/* 11. report */
	clock_gettime(CLOCK_MONOTONIC, &t1);
	db->unsealed_tags = rv.rc.unsealed;
	if (info != NULL)
	{
		info->log_bytes_replayed = rv.rc.bytes;
		info->batches_replayed = rv.rc.batches;
		info->last_seq = sh->last_seq;
		info->log_tail_damaged = rv.damaged;
		info->n_unsealed_tags = rv.rc.nunsealed;
		info->unsealed_tags = rv.rc.unsealed;
		info->seconds = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
	}
	return TIDES_OK;
}
