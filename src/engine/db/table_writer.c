/*
 * table_writer.c -- see table_writer.h.
 */
#include "db/table_writer.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
tides_table_writer_init(tides_table_writer *w, tides_db *db, uint64_t target_size)
{
	memset(w, 0, sizeof(*w));
	w->db = db;
	w->target_size = target_size;
	w->fd = -1;
	tides_buf_init(&w->last_ukey);
	tides_error_clear(&w->err);
}

static tides_status
open_output(tides_table_writer *w)
{
	tides_db   *db = w->db;
	char		fname[64];

	w->number = atomic_fetch_add(&db->sh->next_file_number, 1);
	w->suffix_bound = 0;
	w->suffix_lost = false;
	tides_sst_file_name(fname, sizeof(fname), w->number);
	snprintf(w->name, sizeof(w->name), "%s/%s", db->dir, fname);
	w->fd = db->vfs->open(db->vfs, w->name, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (w->fd < 0)
	{
		int			r = w->fd;

		w->fd = -1;
		return tides_fail_io(&w->err, r, "create table file", w->name);
	}
	if (w->bottommost)
	{
		tides_table_env env = db->tenv;

		env.compression = env.bottommost_compression;
		env.compression_level = env.bottommost_compression_level;
		w->builder = tides_sst_builder_new(&env, w->fd, w->name);
	}
	else
		w->builder = tides_sst_builder_new(&db->tenv, w->fd, w->name);
	if (w->builder == NULL)
	{
		db->vfs->close(db->vfs, w->fd);
		w->fd = -1;
		db->vfs->unlink(db->vfs, w->name);
		return tides_fail(&w->err, TIDES_NO_MEMORY, "out of memory creating \"%s\"", w->name);
	}
	if (w->ingest)
	{
		tides_sst_builder_set_ingest(w->builder);
		if (w->helper)
			(void) tides_sst_builder_set_helper(w->builder);
	}
	return TIDES_OK;
}

tides_status
tides_table_writer_finish(tides_table_writer *w)
{
	tides_db   *db = w->db;
	tides_sst_props props;
	tides_status s;
	int			r;
	tides_edit_file *arr;

	if (w->builder == NULL)
		return TIDES_OK;
	memset(&props, 0, sizeof(props));
	s = tides_sst_builder_finish(w->builder, &props, &w->err);
	tides_sst_builder_free(w->builder);
	w->builder = NULL;
	if (s == TIDES_OK && (r = db->vfs->fsync(db->vfs, w->fd)) != 0)
		s = tides_fail_io(&w->err, r, "fsync table file", w->name);
	db->vfs->close(db->vfs, w->fd);
	w->fd = -1;
	if (s == TIDES_OK)
	{
		arr = realloc(w->outputs, (w->noutputs + 1) * sizeof(*arr));
		if (arr == NULL)
			s = tides_fail(&w->err, TIDES_NO_MEMORY, "out of memory");
		else
		{
			tides_edit_file *f = &arr[w->noutputs++];

			w->outputs = arr;
			memset(f, 0, sizeof(*f));
			f->number = w->number;
			f->size = props.file_size;
			f->min_seq = props.min_seq;
			f->max_seq = props.max_seq;
			f->entries = props.num_entries;
			f->deletions = props.num_deletions;
			f->smallest = props.smallest;
			f->smallest_len = props.smallest_len;
			f->largest = props.largest;
			f->largest_len = props.largest_len;
			f->suffix_bound = w->suffix_lost ? 0 : w->suffix_bound;
			props.smallest = props.largest = NULL;
			w->bytes_written += props.file_size;
		}
	}
	tides_sst_props_free(&props);
	if (s != TIDES_OK)
		db->vfs->unlink(db->vfs, w->name);
	return s;
}

/* does ukey start with the same range_prefix_len bytes as the last key added? */
static bool
same_prefix(const tides_table_writer *w, const uint8_t *ukey, size_t ulen)
{
	size_t		p = w->db->opts.range_prefix_len;
	size_t		a = ulen < p ? ulen : p,
				b = w->last_ukey.len < p ? w->last_ukey.len : p;

	return a == b && (a == 0 || memcmp(ukey, w->last_ukey.data, a) == 0);
}

tides_status
tides_table_writer_add(tides_table_writer *w, const uint8_t *ikey, size_t iklen,
					   const uint8_t *val, size_t vlen)
{
	size_t		ulen = iklen - TIDES_TRAILER;
	bool		new_key = w->last_ukey.len == 0 ||
		tides_ukey_cmp(ikey, ulen, w->last_ukey.data, w->last_ukey.len) != 0;
	tides_status s;

	/* versions of one user key never straddle two files of a level */
	if (w->builder != NULL && new_key && w->target_size > 0 &&
		(tides_sst_builder_size(w->builder) >= w->target_size ||
		 (w->db->partition != NULL &&
		  w->db->partition(w->db->partition_arg, w->last_ukey.data, w->last_ukey.len, ikey, ulen)) ||
		 (w->prefix_cut_size > 0 && tides_sst_builder_size(w->builder) >= w->prefix_cut_size &&
		  !same_prefix(w, ikey, ulen))))
	{
		s = tides_table_writer_finish(w);
		if (s != TIDES_OK)
			return s;
	}
	/* ...nor does an output overlap a file of its level that stays */
	if (new_key && w->next_stay < w->nstays &&
		tides_ukey_cmp(ikey, ulen, tides_file_smallest(w->stays[w->next_stay]),
					   w->stays[w->next_stay]->smallest_len - TIDES_TRAILER) >= 0)
	{
		if (w->builder != NULL && (s = tides_table_writer_finish(w)) != TIDES_OK)
			return s;
		while (w->next_stay < w->nstays)
		{
			const tides_file_meta *f = w->stays[w->next_stay];

			if (tides_ukey_cmp(ikey, ulen, tides_file_smallest(f), f->smallest_len - TIDES_TRAILER) < 0)
				break;
			if (tides_ukey_cmp(ikey, ulen, tides_file_largest(f), f->largest_len - TIDES_TRAILER) <= 0)
				return tides_fail(&w->err, TIDES_CORRUPTION,
								  "compaction output key falls inside table file %llu, which it leaves alone",
								  (unsigned long long) f->number);
			w->next_stay++;
		}
	}
	if (w->builder == NULL && (s = open_output(w)) != TIDES_OK)
		return s;
	if (new_key)
	{
		uint64_t	suffix;

		w->last_ukey.len = 0;
		tides_buf_append(&w->last_ukey, ikey, ulen);
		if (!tides_key_suffix(ikey, ulen, w->db->opts.filter_stem_suffix, &suffix))
			w->suffix_lost = true;
		else if (suffix >= w->suffix_bound)
			w->suffix_bound = suffix + 1;
	}
	return tides_sst_builder_add(w->builder, ikey, iklen, val, vlen, &w->err);
}

tides_status
tides_table_writer_emit(void *arg, const uint8_t *ikey, size_t iklen, const uint8_t *val, size_t vlen)
{
	return tides_table_writer_add(arg, ikey, iklen, val, vlen);
}

void
tides_table_writer_discard(tides_table_writer *w)
{
	tides_db   *db = w->db;
	char		fname[64],
				path[1024];

	if (w->builder != NULL)
	{
		tides_sst_builder_free(w->builder);
		w->builder = NULL;
		db->vfs->close(db->vfs, w->fd);
		w->fd = -1;
		db->vfs->unlink(db->vfs, w->name);
	}
	for (uint32_t i = 0; i < w->noutputs; i++)
	{
		tides_sst_file_name(fname, sizeof(fname), w->outputs[i].number);
		snprintf(path, sizeof(path), "%s/%s", db->dir, fname);
		db->vfs->unlink(db->vfs, path);
	}
}

void
tides_table_writer_free(tides_table_writer *w)
{
	for (uint32_t i = 0; i < w->noutputs; i++)
	{
		free(w->outputs[i].smallest);
		free(w->outputs[i].largest);
	}
	free(w->outputs);
	w->outputs = NULL;
	w->noutputs = 0;
	tides_buf_free(&w->last_ukey);
}
