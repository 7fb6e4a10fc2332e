/*
 * compaction.c -- leveled compaction: picking, running, installing.
 *
 * Level sizes are derived from the bottom (like RocksDB's dynamic level
 * bytes): the last level's target is its actual size (at least
 * level_base_size); each level above targets 1/ratio of the one below,
 * until a target would drop under level_base_size.  That level is the base
 * level: level 0 compacts straight into it, and levels above it stay empty.
 * A small store therefore has only level 0 and the last level, and write
 * amplification grows with the number of levels the data really needs.
 *
 * A level's score is its size over its target (level 0: file count over
 * the trigger); the highest score >= 1 is compacted.  Several compactions
 * may run at once in different processes: every input file is marked
 * being_compacted while picked, and a candidate touching a marked file is
 * passed over.  A single input file with nothing to merge below is moved by
 * a manifest edit only (a trivial move).
 */
#include <stdlib.h>
#include <string.h>

#include "db/compaction_iter.h"
#include "db/db_impl.h"
#include "db/merge_iter.h"
#include "db/table_writer.h"

#define LAST_LEVEL (TIDES_MAX_LEVELS - 1)

typedef struct compaction
{
	int			level;			/* input level */
	int			output_level;
	tides_version *v;			/* referenced */
	tides_file_meta **in[2];	/* inputs at level and output_level */
	uint32_t	nin[2];
	double		score;
} compaction;

/* targets per level and the base level, for version v */
static int
compute_targets(const tides_db *db, const tides_version *v, uint64_t target[TIDES_MAX_LEVELS])
{
	uint64_t	base = db->opts.level_base_size;
	uint64_t	t;
	int			level = LAST_LEVEL;
	bool		any = false;

	memset(target, 0, sizeof(uint64_t) * TIDES_MAX_LEVELS);
	for (int l = 1; l < TIDES_MAX_LEVELS; l++)
		if (v->nfiles[l] > 0)
			any = true;
	t = tides_version_level_bytes(v, LAST_LEVEL);
	if (t < base)
		t = base;
	target[LAST_LEVEL] = t;
	if (!any)
		return LAST_LEVEL;
	while (level > 1 && t / db->opts.level_size_ratio >= base)
	{
		t /= db->opts.level_size_ratio;
		level--;
		target[level] = t;
	}
	return level;
}

static bool
any_compacting(tides_file_meta **files, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (atomic_load(&files[i]->being_compacted))
			return true;
	return false;
}

static void
mark(compaction *c, int value)
{
	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < c->nin[k]; i++)
			atomic_store(&c->in[k][i]->being_compacted, value);
}

static void
compaction_free(tides_db *db, compaction *c)
{
	free(c->in[0]);
	free(c->in[1]);
	if (c->v != NULL)
		tides_version_unref(&db->sh->heap, c->v, tides_db_note_obsolete, db->sh);
	memset(c, 0, sizeof(*c));
}

/* user-key range of a set of files */
static void
key_range(tides_file_meta **files, uint32_t n, const uint8_t **lo, size_t *lolen,
		  const uint8_t **hi, size_t *hilen)
{
	*lo = *hi = NULL;
	*lolen = *hilen = 0;
	for (uint32_t i = 0; i < n; i++)
	{
		const uint8_t *s = tides_file_smallest(files[i]);
		size_t		sl = files[i]->smallest_len - TIDES_TRAILER;
		const uint8_t *l = tides_file_largest(files[i]);
		size_t		ll = files[i]->largest_len - TIDES_TRAILER;

		if (*lo == NULL || tides_ukey_cmp(s, sl, *lo, *lolen) < 0)
		{
			*lo = s;
			*lolen = sl;
		}
		if (*hi == NULL || tides_ukey_cmp(l, ll, *hi, *hilen) > 0)
		{
			*hi = l;
			*hilen = ll;
		}
	}
}

/* fill the output-level inputs; false if one of them is busy */
static bool
add_overlapping_outputs(compaction *c)
{
	const uint8_t *lo,
			   *hi;
	size_t		lolen,
				hilen;

	key_range(c->in[0], c->nin[0], &lo, &lolen, &hi, &hilen);
	c->in[1] = tides_version_overlapping(c->v, c->output_level, lo, lolen, hi, hilen, &c->nin[1]);
	return c->in[1] != NULL && !any_compacting(c->in[1], c->nin[1]);
}

/* version_mutex held: choose a compaction and mark its inputs */
static bool
pick(tides_db *db, compaction *c)
{
	tides_shared *sh = db->sh;
	tides_version *v = sh->current;
	uint64_t	target[TIDES_MAX_LEVELS];
	int			base = compute_targets(db, v, target);
	double		score[TIDES_MAX_LEVELS];
	int			order[TIDES_MAX_LEVELS];
	int			norder = 0;

	score[0] = (double) v->nfiles[0] / db->opts.level0_compaction_trigger;
	for (int l = 1; l < LAST_LEVEL; l++)
	{
		uint64_t	bytes = tides_version_level_bytes(v, l);

		if (l < base)
			score[l] = bytes > 0 ? 1e9 : 0;	/* above the base level: push down */
		else
			score[l] = (double) bytes / (double) target[l];
	}
	score[LAST_LEVEL] = 0;
	/* candidate levels by descending score */
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		if (score[l] >= 1.0)
		{
			int			k = norder++;

			while (k > 0 && score[order[k - 1]] < score[l])
			{
				order[k] = order[k - 1];
				k--;
			}
			order[k] = l;
		}

	for (int k = 0; k < norder; k++)
	{
		int			l = order[k];

		memset(c, 0, sizeof(*c));
		c->v = v;
		c->level = l;
		c->score = score[l];
		if (l == 0)
		{
			c->output_level = base;
			c->nin[0] = v->nfiles[0];
			c->in[0] = malloc((v->nfiles[0] + 1) * sizeof(tides_file_meta *));
			if (c->in[0] == NULL)
				return false;
			memcpy(c->in[0], v->files[0], v->nfiles[0] * sizeof(tides_file_meta *));
			if (any_compacting(c->in[0], c->nin[0]))
			{
				free(c->in[0]);
				continue;
			}
		}
		else
		{
			uint32_t	n = v->nfiles[l];
			uint32_t	start = sh->compact_cursor[l] % n;
			tides_file_meta *chosen = NULL;

			c->output_level = l + 1;
			for (uint32_t i = 0; i < n && chosen == NULL; i++)
			{
				tides_file_meta *f = v->files[l][(start + i) % n];

				if (!atomic_load(&f->being_compacted))
				{
					chosen = f;
					sh->compact_cursor[l] = start + i + 1;
				}
			}
			if (chosen == NULL)
				continue;
			c->in[0] = malloc(sizeof(tides_file_meta *));
			if (c->in[0] == NULL)
				return false;
			c->in[0][0] = chosen;
			c->nin[0] = 1;
		}
		if (!add_overlapping_outputs(c))
		{
			free(c->in[0]);
			free(c->in[1]);
			continue;
		}
		mark(c, 1);
		tides_version_ref(v);
		return true;
	}
	memset(c, 0, sizeof(*c));
	return false;
}

typedef struct deeper_ctx
{
	const tides_version *v;
	int			output_level;
} deeper_ctx;

static bool
deeper_may_hold(void *arg, const uint8_t *ukey, size_t n)
{
	deeper_ctx *d = arg;

	for (int l = d->output_level + 1; l < TIDES_MAX_LEVELS; l++)
		if (tides_version_overlaps(d->v, l, ukey, n, ukey, n))
			return true;
	return false;
}

static tides_status
run(tides_db *db, compaction *c, tides_table_writer *w)
{
	tides_shared *sh = db->sh;
	uint32_t	n = c->nin[0] + c->nin[1];
	tides_iiter **children = calloc(n + 1, sizeof(*children));
	tides_iiter *in;
	tides_compaction_rules rules;
	tides_compaction_counts counts;
	deeper_ctx	dc = {c->v, c->output_level};
	tides_dropped_prefix *dropped = NULL;
	uint64_t   *snaps;
	bool		bottom = true;
	tides_status s;

	if (children == NULL)
		return tides_fail(&w->err, TIDES_NO_MEMORY, "out of memory starting a compaction");
	for (int k = 0, j = 0; k < 2; k++)
		for (uint32_t i = 0; i < c->nin[k]; i++)
		{
			children[j] = tides_table_cache_iter(db->tcache, c->in[k][i]->number, c->in[k][i]->size, false);
			if (children[j] == NULL)
			{
				for (int x = 0; x < j; x++)
					tides_iiter_destroy(children[x]);
				free(children);
				return tides_fail(&w->err, TIDES_NO_MEMORY, "out of memory starting a compaction");
			}
			j++;
		}
	in = tides_merge_iter_new(children, (int) n);
	free(children);
	if (in == NULL)
		return tides_fail(&w->err, TIDES_NO_MEMORY, "out of memory starting a compaction");

	for (int l = c->output_level + 1; l < TIDES_MAX_LEVELS; l++)
		if (c->v->nfiles[l] > 0)
			bottom = false;
	memset(&rules, 0, sizeof(rules));
	memset(&counts, 0, sizeof(counts));
	snaps = tides_snapshot_list(db, &rules.nsnapshots);
	rules.snapshots = snaps;
	rules.filter_horizon = UINT64_MAX;
	rules.filter = db->filter;
	rules.filter_arg = db->filter_arg;
	rules.deeper_may_hold = bottom ? NULL : deeper_may_hold;
	rules.deeper_arg = &dc;
	tides_mutex_lock(&sh->version_mutex);
	if (sh->ndropped > 0 && (dropped = malloc(sh->ndropped * sizeof(*dropped))) != NULL)
	{
		memcpy(dropped, sh->dropped, sh->ndropped * sizeof(*dropped));
		rules.dropped = dropped;
		rules.ndropped = sh->ndropped;
	}
	tides_mutex_unlock(&sh->version_mutex);

	if (snaps == NULL || (rules.ndropped == 0 && sh->ndropped > 0 && dropped == NULL))
		s = tides_fail(&w->err, TIDES_NO_MEMORY, "out of memory starting a compaction");
	else
	{
		tides_iiter_first(in);
		s = tides_compaction_run(in, &rules, tides_table_writer_emit, w, &counts, &w->err);
	}
	tides_iiter_destroy(in);
	if (s == TIDES_OK)
		s = tides_table_writer_finish(w);
	free(snaps);
	free(dropped);
	return s;
}

tides_status
tides_compact_work(tides_db *db, bool *did)
{
	tides_shared *sh = db->sh;
	compaction	c;
	tides_edit	e;
	tides_table_writer w;
	tides_status s = TIDES_OK;
	bool		trivial;
	uint64_t	read_bytes = 0;

	*did = false;
	if (atomic_load(&sh->state) != TIDES_STATE_OPEN)
		return TIDES_OK;
	tides_mutex_lock(&sh->version_mutex);
	if (!pick(db, &c))
	{
		tides_mutex_unlock(&sh->version_mutex);
		return TIDES_OK;
	}
	tides_mutex_unlock(&sh->version_mutex);

	trivial = c.nin[0] == 1 && c.nin[1] == 0;
	tides_table_writer_init(&w, db, db->opts.target_file_size);
	tides_edit_init(&e);
	if (!trivial)
	{
		s = run(db, &c, &w);
		for (int k = 0; k < 2; k++)
			for (uint32_t i = 0; i < c.nin[k]; i++)
				read_bytes += c.in[k][i]->size;
	}

	tides_mutex_lock(&sh->version_mutex);
	for (int k = 0; k < 2 && s == TIDES_OK; k++)
		for (uint32_t i = 0; i < c.nin[k] && s == TIDES_OK; i++)
			s = tides_edit_delete_file(&e, k == 0 ? c.level : c.output_level, c.in[k][i]->number);
	if (trivial && s == TIDES_OK)
	{
		tides_file_meta *f = c.in[0][0];
		tides_edit_file ef = {
			.level = c.output_level, .number = f->number, .size = f->size,
			.min_seq = f->min_seq, .max_seq = f->max_seq,
			.entries = f->entries, .deletions = f->deletions,
			.smallest = (uint8_t *) tides_file_smallest(f), .smallest_len = f->smallest_len,
			.largest = (uint8_t *) tides_file_largest(f), .largest_len = f->largest_len
		};

		s = tides_edit_add_file(&e, &ef);
	}
	for (uint32_t i = 0; i < w.noutputs && s == TIDES_OK; i++)
	{
		w.outputs[i].level = c.output_level;
		s = tides_edit_add_file(&e, &w.outputs[i]);
	}
	if (s == TIDES_OK)
		s = tides_manifest_apply(db, &e, &w.err);
	else if (w.err.code == TIDES_OK)
		tides_fail(&w.err, s, "out of memory recording a compaction");
	mark(&c, 0);
	if (s == TIDES_OK && tides_sv_install(db) != TIDES_OK)
		s = tides_fail(&w.err, TIDES_NO_MEMORY, "out of shared memory (tides meta_size)");
	tides_mutex_unlock(&sh->version_mutex);

	if (s == TIDES_OK)
	{
		if (trivial)
			tides_count(&sh->counters, trivial_moves, 1);
		else
		{
			tides_count(&sh->counters, compactions, 1);
			tides_count(&sh->counters, compaction_bytes_read, read_bytes);
			tides_count(&sh->counters, compaction_bytes_written, w.bytes_written);
		}
		atomic_store(&sh->bg_error, TIDES_OK);
		*did = true;
		tides_db_wakeup(db, TIDES_WORK_MAINT);
	}
	else
	{
		tides_table_writer_discard(&w);
		atomic_store(&sh->bg_error, s);
		tides_db_fail(db, &w.err);
	}
	tides_edit_free(&e);
	tides_table_writer_free(&w);
	compaction_free(db, &c);
	return s;
}

bool
tides_compaction_needed(tides_db *db)
{
	tides_shared *sh = db->sh;
	compaction	c;
	bool		need;

	tides_mutex_lock(&sh->version_mutex);
	need = pick(db, &c);
	if (need)
		mark(&c, 0);
	tides_mutex_unlock(&sh->version_mutex);
	if (need)
		compaction_free(db, &c);
	return need;
}
