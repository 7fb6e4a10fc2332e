/*
 * ingest.c -- loading sorted data as table files (tides_ingest_*, see
 * tides_engine.h), the way RocksDB ingests external files.
 *
 * Building.  Entries arrive in strictly increasing user-key order and go
 * through a table writer (db/table_writer.c: cut at target_file_size and at
 * the partitioner's boundaries, fsynced as each file is finished) into
 * tables built for ingestion: every entry is stored with sequence number 0
 * and the table's properties carry a global sequence number, 0 until the
 * install assigns it (table/sst_reader.c reports every entry at it).  The
 * files are orphans until a manifest edit names them; recovery deletes
 * orphans, so a crash anywhere before the edit leaves nothing.
 *
 * Installing.  The new sequence number S must be larger than every
 * sequence number published, and every snapshot taken, before the files
 * become visible, and no write may be published at S or above before they
 * are: otherwise a snapshot or read point taken in between would later see
 * the load appear.  So the install holds writers back (writers_paused, as a
 * memtable switch does), waits until every reserved write is published,
 * and then, with version_mutex held:
 *
 *   1. checks the memtables: one holding a key of the files' ranges holds an
 *      older version of it (every write in them is published and below S),
 *      which reads would find first -- TIDES_BUSY after sealing the active
 *      memtable, so that a flush moves it into a file;
 *   2. chooses the level: the deepest L such that no file of levels < L
 *      holds a key in the ranges (a seek into each file whose bounds
 *      overlap: bounds alone would send a load below a level-0 file that
 *      merely spans it to level 0), no file of L overlaps a range (levels
 *      1.. stay disjoint), and no running compaction has claimed an
 *      overlapping range of L for its outputs; level 0 if no other fits;
 *   3. takes S = last_seq + 1, writes it into each file's properties and
 *      fsyncs the file (tides_sst_set_global_seq);
 *   4. applies one manifest edit adding every file at L with S as its
 *      sequence range, last_seq = S and, with a tag, the pending-tag list
 *      with the tag added (db/tags.c: registered with first_lsn 0, so every
 *      later flush records it until its seal is flushed);
 *   5. publishes S (published_seq), then lets writers go.
 *
 * Between 2 and 5 nothing else can add a file or change a level
 * (version_mutex), and no write can land in a memtable (writers paused).
 * A read that pinned the new superversion before S was published reads
 * below S and skips the entries, entry by entry (the reader compares
 * their sequence number as for any other).
 *
 * Files at a level above data of their range are fine: every entry there
 * is newer than anything below it.  Files placed on a level between L1 and
 * the base are pushed down by compaction like any other (a trivial move
 * when nothing below overlaps).
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/compaction.h"
#include "db/db_impl.h"
#include "db/table_writer.h"
#include "db/write_batch.h"

struct tides_ingest
{
	tides_db   *db;
	tides_table_writer w;		/* outputs since the last install */
	uint32_t	noutputs_seen;	/* outputs already counted in `bytes` */
	tides_buf	last;			/* the last user key put (ever) */
	tides_buf	ikey;			/* scratch */
	uint64_t	tag;
	uint64_t	entries;		/* put since the last install */
	tides_status failed;		/* sticky: a put or install failed */
};

static tides_status
ingest_fail(tides_ingest *in, tides_status s)
{
	if (in->failed == TIDES_OK)
		in->failed = s;
	return tides_db_fail(in->db, &in->w.err);
}

tides_status
tides_ingest_begin(tides_db *db, tides_ingest **out)
{
	tides_ingest *in;

	*out = NULL;
	if (atomic_load(&db->sh->state) != TIDES_STATE_OPEN)
		return tides_fail(&db->err, TIDES_UNAVAILABLE, "engine is not open");
	in = calloc(1, sizeof(*in));
	if (in == NULL)
		return tides_fail(&db->err, TIDES_NO_MEMORY, "out of memory");
	in->db = db;
	tides_table_writer_init(&in->w, db, db->opts.target_file_size);
	in->w.ingest = true;
	/* loads of new keys go to the last level, nearly always: compress as it does */
	in->w.bottommost = true;
	tides_buf_init(&in->last);
	tides_buf_init(&in->ikey);
	*out = in;
	return TIDES_OK;
}

void
tides_ingest_set_tag(tides_ingest *in, uint64_t tag)
{
	in->tag = tag;
}

void
tides_ingest_set_helper(tides_ingest *in, bool helper)
{
	in->w.helper = helper;
}

static tides_status
ingest_add(tides_ingest *in, const void *key, size_t klen, const void *val, size_t vlen,
		   tides_key_type type)
{
	tides_status s;

	if (in->failed != TIDES_OK)
		return tides_fail(&in->db->err, in->failed, "the ingestion failed earlier");
	if (klen == 0 || klen > TIDES_MAX_KEY_LEN)
	{
		tides_fail(&in->w.err, TIDES_INVALID, "bad key length %zu", klen);
		return ingest_fail(in, TIDES_INVALID);
	}
	if (in->last.len > 0 && tides_ukey_cmp(key, klen, in->last.data, in->last.len) <= 0)
	{
		tides_fail(&in->w.err, TIDES_INVALID,
				   "ingested keys must be strictly increasing (a key of %zu bytes is not)", klen);
		return ingest_fail(in, TIDES_INVALID);
	}
	tides_buf_reset(&in->ikey);
	tides_buf_append(&in->ikey, key, klen);
	tides_buf_put64(&in->ikey, tides_pack_trailer(0, type));
	tides_buf_reset(&in->last);
	tides_buf_append(&in->last, key, klen);
	if (in->ikey.oom || in->last.oom)
	{
		tides_fail(&in->w.err, TIDES_NO_MEMORY, "out of memory");
		return ingest_fail(in, TIDES_NO_MEMORY);
	}
	s = tides_table_writer_add(&in->w, in->ikey.data, in->ikey.len, val, vlen);
	if (s != TIDES_OK)
		return ingest_fail(in, s);
	in->entries++;
	return TIDES_OK;
}

tides_status
tides_ingest_put(tides_ingest *in, const void *key, size_t klen, const void *val, size_t vlen)
{
	return ingest_add(in, key, klen, val, vlen, TIDES_KT_VALUE);
}

tides_status
tides_ingest_delete(tides_ingest *in, const void *key, size_t klen)
{
	return ingest_add(in, key, klen, NULL, 0, TIDES_KT_DELETE);
}

tides_status
tides_ingest_cut(tides_ingest *in)
{
	tides_status s;

	if (in->failed != TIDES_OK)
		return tides_fail(&in->db->err, in->failed, "the ingestion failed earlier");
	s = tides_table_writer_finish(&in->w);
	if (s != TIDES_OK)
		return ingest_fail(in, s);
	return TIDES_OK;
}

uint64_t
tides_ingest_pending_entries(const tides_ingest *in)
{
	return in->entries;
}

uint64_t
tides_ingest_pending_bytes(const tides_ingest *in)
{
	uint64_t	n = in->w.bytes_written;

	if (in->w.builder != NULL)
		n += tides_sst_builder_size(in->w.builder);
	return n;
}

tides_status
tides_ingest_foreach(tides_ingest *in,
					 void (*fn) (void *arg, bool is_delete, const void *key, size_t klen,
								 const void *val, size_t vlen),
					 void *arg)
{
	tides_db   *db = in->db;
	tides_status s = TIDES_OK;

	if (in->failed != TIDES_OK)
		return tides_fail(&db->err, in->failed, "the ingestion failed earlier");
	if (in->w.builder != NULL)
		return tides_fail(&db->err, TIDES_INVALID, "tides_ingest_foreach needs tides_ingest_cut first");
	for (uint32_t i = 0; i < in->w.noutputs && s == TIDES_OK; i++)
	{
		const tides_edit_file *f = &in->w.outputs[i];
		char		fname[64],
					path[1024];
		int			fd;
		tides_sst  *t;
		tides_iiter *it;
		tides_error err;

		/* opened privately: the table cache must not keep a reader from before the install */
		tides_error_clear(&err);
		tides_sst_file_name(fname, sizeof(fname), f->number);
		snprintf(path, sizeof(path), "%s/%s", db->dir, fname);
		fd = db->vfs->open(db->vfs, path, O_RDONLY, 0);
		if (fd < 0)
		{
			tides_fail_io(&err, fd, "open", path);
			return tides_db_fail(db, &err);
		}
		s = tides_sst_open(&db->tenv, fd, f->number, f->size, path, &t, &err);
		if (s != TIDES_OK)
			return tides_db_fail(db, &err);
		it = tides_sst_iter_new(t, false);
		if (it == NULL)
		{
			tides_sst_close(t);
			return tides_fail(&db->err, TIDES_NO_MEMORY, "out of memory");
		}
		for (tides_iiter_first(it); tides_iiter_valid(it); tides_iiter_next(it))
		{
			size_t		klen,
						vlen;
			const uint8_t *k = tides_iiter_key(it, &klen);
			const uint8_t *v = tides_iiter_value(it, &vlen);
			bool		del = tides_ikey_type(k, klen) == TIDES_KT_DELETE;

			fn(arg, del, k, klen - TIDES_TRAILER, del ? NULL : v, del ? 0 : vlen);
		}
		if (tides_iiter_status(it) != TIDES_OK)
		{
			err = it->err;
			s = tides_db_fail(db, &err);
		}
		tides_iiter_destroy(it);
		tides_sst_close(t);
	}
	return s;
}

/* ---- installing */

/* hold writers back and wait until every reserved write is published */
static tides_status
pause_writers(tides_shared *sh)
{
	uint64_t	reserved_end;

	for (;;)
	{
		tides_lock_write(sh);
		if (sh->writes_closed)
		{
			tides_spin_unlock(&sh->write_lock);
			return TIDES_UNAVAILABLE;
		}
		if (!sh->writers_paused)
			break;
		tides_spin_unlock(&sh->write_lock);
		sched_yield();
	}
	sh->writers_paused = true;
	reserved_end = sh->next_lsn;
	tides_spin_unlock(&sh->write_lock);
	/* the writers that reserved before only copy memory now (and may call append) */
	while (atomic_load_explicit(&sh->published_lsn, memory_order_acquire) < reserved_end)
		sched_yield();
	return TIDES_OK;
}

static void
resume_writers(tides_shared *sh)
{
	tides_lock_write(sh);
	TIDES_ASSERT(sh->writers_paused);
	sh->writers_paused = false;
	tides_spin_unlock(&sh->write_lock);
}

#define UKEY(k, n) (k), ((n) - TIDES_TRAILER)

/* an output's user-key range */
static void
output_range(const tides_edit_file *f, const uint8_t **lo, size_t *lolen,
			 const uint8_t **hi, size_t *hilen)
{
	*lo = f->smallest;
	*lolen = f->smallest_len - TIDES_TRAILER;
	*hi = f->largest;
	*hilen = f->largest_len - TIDES_TRAILER;
}

/* does it (an internal iterator) hold a key in [lo, hi]?  Errors count as yes */
static bool
iter_holds_key_in(tides_iiter *it, const uint8_t *lo, size_t lolen, const uint8_t *hi, size_t hilen,
				  tides_buf *scratch)
{
	bool		holds;

	tides_buf_reset(scratch);
	tides_buf_append(scratch, lo, lolen);
	tides_buf_put64(scratch, tides_pack_trailer(TIDES_MAX_SEQ, TIDES_KT_SEEK));
	if (scratch->oom)
		return true;
	tides_iiter_seek(it, scratch->data, scratch->len);
	if (tides_iiter_valid(it))
	{
		size_t		klen;
		const uint8_t *k = tides_iiter_key(it, &klen);

		holds = tides_ukey_cmp(UKEY(k, klen), hi, hilen) <= 0;
	}
	else
		holds = tides_iiter_status(it) != TIDES_OK;
	return holds;
}

static bool
file_holds_key_in(tides_db *db, const tides_file_meta *f, const uint8_t *lo, size_t lolen,
				  const uint8_t *hi, size_t hilen, tides_buf *scratch)
{
	tides_iiter *it = tides_table_cache_iter(db->tcache, f->number, f->size, false);
	bool		holds;

	if (it == NULL)
		return true;
	holds = iter_holds_key_in(it, lo, lolen, hi, hilen, scratch);
	tides_iiter_destroy(it);
	return holds;
}

static bool
bounds_overlap(const tides_file_meta *f, const uint8_t *lo, size_t lolen,
			   const uint8_t *hi, size_t hilen)
{
	return tides_ukey_cmp(UKEY(tides_file_largest(f), f->largest_len), lo, lolen) >= 0 &&
		tides_ukey_cmp(UKEY(tides_file_smallest(f), f->smallest_len), hi, hilen) <= 0;
}

/* does some file of the level hold a key of an output's range? */
static bool
level_holds_key_in(tides_db *db, const tides_version *v, int level, const tides_edit_file *o,
				   tides_buf *scratch)
{
	const uint8_t *lo,
			   *hi;
	size_t		lolen,
				hilen;
	tides_file_meta **fs;
	uint32_t	n;
	bool		holds = false;

	output_range(o, &lo, &lolen, &hi, &hilen);
	if (level > 0)
	{
		fs = tides_version_overlapping(v, level, lo, lolen, hi, hilen, &n);
		if (fs == NULL)
			return true;
	}
	else
	{
		/* level 0: each file on its own bounds (not the transitive range) */
		fs = malloc((v->nfiles[0] + 1) * sizeof(*fs));
		if (fs == NULL)
			return true;
		n = 0;
		for (uint32_t i = 0; i < v->nfiles[0]; i++)
			if (bounds_overlap(v->files[0][i], lo, lolen, hi, hilen))
				fs[n++] = v->files[0][i];
	}
	for (uint32_t i = 0; i < n && !holds; i++)
		holds = file_holds_key_in(db, fs[i], lo, lolen, hi, hilen, scratch);
	free(fs);
	return holds;
}

/*
 * Step 1 of the install (version_mutex held, writers paused): does a
 * memtable hold a key of an output's range?  *active: the active one does.
 */
static bool
memtables_hold_keys(tides_db *db, tides_ingest *in, bool *active, tides_buf *scratch)
{
	tides_shared *sh = db->sh;
	tides_superversion *sv = tides_sv_acquire(db);
	bool		holds = false;

	*active = false;
	for (uint32_t m = 0; m < sv->nmem; m++)
	{
		tides_iiter *it = tides_memtable_iter_new(sv->mems[m]);
		bool		here = false;

		if (it == NULL)
			here = true;
		for (uint32_t i = 0; it != NULL && i < in->w.noutputs && !here; i++)
		{
			const uint8_t *lo,
					   *hi;
			size_t		lolen,
						hilen;

			output_range(&in->w.outputs[i], &lo, &lolen, &hi, &hilen);
			here = iter_holds_key_in(it, lo, lolen, hi, hilen, scratch);
		}
		tides_iiter_destroy(it);
		if (here)
		{
			holds = true;
			if (sv->mems[m] == sh->active)
				*active = true;
		}
	}
	tides_sv_release(db, sv);
	return holds;
}

/* step 2: the level (version_mutex held, writers paused) */
static int
choose_level(tides_db *db, tides_ingest *in, tides_buf *scratch)
{
	tides_shared *sh = db->sh;
	const tides_version *v = sh->current;
	int			below = TIDES_MAX_LEVELS;	/* the first level holding a key of a range */

	for (int l = 0; l < TIDES_MAX_LEVELS && below == TIDES_MAX_LEVELS; l++)
		for (uint32_t i = 0; i < in->w.noutputs; i++)
			if (level_holds_key_in(db, v, l, &in->w.outputs[i], scratch))
			{
				below = l;
				break;
			}
	for (int l = below - 1; l >= 1; l--)
	{
		bool		fits = true;

		for (uint32_t i = 0; i < in->w.noutputs && fits; i++)
		{
			const uint8_t *lo,
					   *hi;
			size_t		lolen,
						hilen;

			output_range(&in->w.outputs[i], &lo, &lolen, &hi, &hilen);
			fits = tides_compaction_level_free(sh, v, l, lo, lolen, hi, hilen);
		}
		if (fits)
			return l;
	}
	return 0;
}

/* step 3: write seq into every output's properties and make it durable */
static tides_status
stamp_outputs(tides_db *db, tides_ingest *in, uint64_t seq, tides_error *err)
{
	for (uint32_t i = 0; i < in->w.noutputs; i++)
	{
		tides_edit_file *f = &in->w.outputs[i];
		char		fname[64],
					path[1024];
		int			fd,
					r;
		tides_status s;

		tides_sst_file_name(fname, sizeof(fname), f->number);
		snprintf(path, sizeof(path), "%s/%s", db->dir, fname);
		fd = db->vfs->open(db->vfs, path, O_RDWR, 0);
		if (fd < 0)
			return tides_fail_io(err, fd, "open", path);
		s = tides_sst_set_global_seq(&db->tenv, fd, f->size, seq, path, err);
		if (s == TIDES_OK && (r = db->vfs->fsync(db->vfs, fd)) != 0)
			s = tides_fail_io(err, r, "fsync table file", path);
		db->vfs->close(db->vfs, fd);
		if (s != TIDES_OK)
			return s;
		/* the edit states what readers will report */
		f->min_seq = f->max_seq = seq;
		tides_put64(f->smallest + f->smallest_len - TIDES_TRAILER,
					tides_pack_trailer(seq, tides_ikey_type(f->smallest, f->smallest_len)));
		tides_put64(f->largest + f->largest_len - TIDES_TRAILER,
					tides_pack_trailer(seq, tides_ikey_type(f->largest, f->largest_len)));
	}
	return TIDES_OK;
}

/* the outputs are installed (or kept for recovery to judge): forget them */
static void
forget_outputs(tides_ingest *in)
{
	tides_table_writer_free(&in->w);
	in->w.bytes_written = 0;
	in->entries = 0;
}

tides_status
tides_ingest_install(tides_ingest *in, tides_ingest_result *res)
{
	tides_db   *db = in->db;
	tides_shared *sh = db->sh;
	tides_buf	scratch;
	tides_edit	e;
	tides_error err;
	tides_status s;
	bool		active = false,
				written = false;
	uint64_t	seq = 0;
	uint64_t   *pending = NULL;
	int			level;

	if (res != NULL)
		memset(res, 0, sizeof(*res));
	if (in->failed != TIDES_OK)
		return tides_fail(&db->err, in->failed, "the ingestion failed earlier");
	if (in->tag != 0 && sh->ropts.log_mode == TIDES_LOG_EXTERNAL)
		return tides_fail(&db->err, TIDES_INVALID, "batch tags need the engine's own log");
	s = tides_ingest_cut(in);
	if (s != TIDES_OK)
		return s;
	if (in->w.noutputs == 0)
		return TIDES_OK;

	tides_error_clear(&err);
	tides_buf_init(&scratch);
	s = pause_writers(sh);
	if (s != TIDES_OK)
	{
		tides_buf_free(&scratch);
		return tides_fail(&db->err, s, "the engine is closed for writes");
	}
	tides_lock_version(sh);
	if (memtables_hold_keys(db, in, &active, &scratch))
	{
		tides_mutex_unlock(&sh->version_mutex);
		resume_writers(sh);
		tides_buf_free(&scratch);
		if (active)
			(void) tides_seal_memtable(db);
		tides_db_wakeup(db, TIDES_WORK_FLUSH);
		return tides_fail(&db->err, TIDES_BUSY,
						  "a memtable holds keys of the ingested range; waiting for flush");
	}
	level = choose_level(db, in, &scratch);
	tides_buf_free(&scratch);

	tides_lock_write(sh);
	if (in->tag != 0 && tides_tags_note(db, in->tag, 0, false, 0) != TIDES_OK)
	{
		tides_spin_unlock(&sh->write_lock);
		tides_mutex_unlock(&sh->version_mutex);
		resume_writers(sh);
		tides_seal_memtable(db);
		tides_db_wakeup(db, TIDES_WORK_FLUSH);
		return tides_fail(&db->err, TIDES_BUSY, "too many open batch tags");
	}
	/* every reserved write is published: nothing between them and the new number */
	TIDES_ASSERT(atomic_load(&sh->published_seq) == sh->last_seq);
	seq = ++sh->last_seq;
	tides_spin_unlock(&sh->write_lock);

	s = stamp_outputs(db, in, seq, &err);
	tides_edit_init(&e);
	e.dropped_seen = sh->next_dropped_id;	/* S is above every listed prefix's seq */
	e.has_last_seq = true;
	e.last_seq = seq;
	for (uint32_t i = 0; i < in->w.noutputs && s == TIDES_OK; i++)
	{
		in->w.outputs[i].level = level;
		s = tides_edit_add_file(&e, &in->w.outputs[i]);
		if (s != TIDES_OK)
			tides_fail(&err, s, "out of memory recording an ingestion");
	}
	if (s == TIDES_OK && in->tag != 0)
	{
		bool		listed = false;

		pending = malloc((sh->npending + 1) * sizeof(uint64_t));
		if (pending == NULL)
			s = tides_fail(&err, TIDES_NO_MEMORY, "out of memory recording an ingestion");
		else
		{
			for (uint32_t i = 0; i < sh->npending; i++)
			{
				pending[i] = sh->pending[i];
				listed |= pending[i] == in->tag;
			}
			if (!listed)
				pending[sh->npending] = in->tag;
			s = tides_edit_set_pending(&e, pending, sh->npending + (listed ? 0 : 1));
			if (s != TIDES_OK)
				tides_fail(&err, s, "out of memory recording an ingestion");
		}
	}
	if (s == TIDES_OK)
		s = tides_manifest_apply(db, &e, NULL, 0, &written, &err);
	/*
	 * The superversion holds the files: now their number becomes readable.
	 * (After a failure nothing has it; published all the same, as the next
	 * write's would be.)
	 */
	atomic_store_explicit(&sh->published_seq, seq, memory_order_release);
	tides_mutex_unlock(&sh->version_mutex);
	resume_writers(sh);
	tides_edit_free(&e);
	free(pending);

	if (s != TIDES_OK)
	{
		/*
		 * Nothing was installed.  If the edit may be durable the files it
		 * names stay for recovery to judge; the ingestion is over either
		 * way (its caller treats the load as lost).
		 */
		if (written)
			forget_outputs(in);
		in->failed = s;
		return tides_db_fail(db, &err);
	}
	if (res != NULL)
	{
		res->seq = seq;
		res->level = level;
		res->files = in->w.noutputs;
		res->entries = in->entries;
		for (uint32_t i = 0; i < in->w.noutputs; i++)
			res->bytes += in->w.outputs[i].size;
	}
	tides_count(&sh->counters, ingested_files, in->w.noutputs);
	tides_count(&sh->counters, ingested_bytes, in->w.bytes_written);
	forget_outputs(in);
	tides_db_wakeup(db, TIDES_WORK_COMPACT | TIDES_WORK_MAINT);
	return TIDES_OK;
}

void
tides_ingest_abort(tides_ingest *in)
{
	if (in == NULL)
		return;
	/* outputs a possibly durable edit names were forgotten already (kept) */
	tides_table_writer_discard(&in->w);
	tides_ingest_free(in);
}

void
tides_ingest_free(tides_ingest *in)
{
	if (in == NULL)
		return;
	if (in->w.builder != NULL)
		tides_table_writer_discard(&in->w);
	tides_table_writer_free(&in->w);
	tides_buf_free(&in->last);
	tides_buf_free(&in->ikey);
	free(in);
}

const void *
tides_batch_encoding(tides_batch *b, size_t *len)
{
	if (b->rep.oom)
	{
		*len = 0;
		return NULL;
	}
	return tides_batch_payload(b, len);
}
