/*
 * compaction.c -- leveled compaction: level targets, claims, running,
 * installing.
 *
 * Level sizes are derived from the bottom (like RocksDB's dynamic level
 * bytes): the last level's target is its actual size (at least
 * level_base_size); each level above targets 1/ratio of the one below,
 * until a target would drop under level_base_size.  That level is the base
 * level: level 0 compacts into it, and levels above it stay empty.
 * A small store therefore has only level 0 and the last level, and write
 * amplification grows with the number of levels the data really needs.
 *
 * Level order.  A point read stops at the first level that has the key,
 * so every version in a level must be newer than every version of the same
 * key in any deeper level.  Level 0 therefore goes to the base level only
 * if no level between holds any of its keys, and otherwise into the first
 * level that does (from where, being above the base, it is pushed down).
 *
 * Concurrency.  Several compactions may run at once in different processes
 * (more than one compaction worker, or a worker and SQL tides_compact()).
 * Each marks its input files being_compacted and claims the user-key range
 * of its output level that its outputs can cover (sh->running), both under
 * version_mutex, until its result is installed.  Picking passes over a
 * candidate that touches a marked file, whose output range overlaps another
 * compaction's claim on the same level (two compactions writing overlapping
 * files into one level would break its order), or whose input level is
 * another compaction's output level in an overlapping range.  A single
 * input file with nothing to merge below is moved by a manifest edit only
 * (a trivial move); it claims its range like any other compaction.
 * An output-level file in the inputs' range that holds none of their keys
 * stays where it is (keep_untouched), inside the claim.
 *
 * The choice of what to compact is in compaction_pick.c; the full (manual)
 * compaction in compaction_full.c, on the steps shared through compaction.h.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/compaction.h"
#include "db/compaction_iter.h"
#include "db/db_impl.h"
#include "db/merge_iter.h"
#include "db/table_writer.h"
#include "util/testpoint.h"


/* targets per level and the base level, for version v */
int
tides_compaction_targets(const tides_db *db, const tides_version *v, uint64_t target[TIDES_MAX_LEVELS])
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

bool
tides_compaction_busy(tides_file_meta **files, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (atomic_load(&files[i]->being_compacted))
			return true;
	return false;
}

/*
 * Mark (1) or unmark (0) every file of c.  A file belongs to at most one
 * running compaction, and to it once: marking finds it unmarked,
 * unmarking finds it marked.
 */
static void
mark(tides_compaction *c, int value)
{
	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < c->nin[k]; i++)
		{
			TIDES_ASSERT(atomic_load(&c->in[k][i]->being_compacted) == !value);
			atomic_store(&c->in[k][i]->being_compacted, value);
		}
	for (uint32_t i = 0; i < c->nkept; i++)
	{
		TIDES_ASSERT(atomic_load(&c->kept[i]->being_compacted) == !value);
		atomic_store(&c->kept[i]->being_compacted, value);
	}
}

static void
compaction_free(tides_db *db, tides_compaction *c)
{
	free(c->in[0]);
	free(c->in[1]);
	free(c->kept);
	if (c->v != NULL)
		tides_version_unref(&db->sh->heap, c->v, tides_db_note_obsolete, db->sh);
	memset(c, 0, sizeof(*c));
	c->slot = -1;
}

/* user keys of a file's bounds */
/* outputs to levels >= 1 end at a tree boundary once they hold this share of a file */
#define PREFIX_CUT_DIVISOR 16

#define LO_KEY(f) tides_file_smallest(f), ((f)->smallest_len - TIDES_TRAILER)
#define HI_KEY(f) tides_file_largest(f), ((f)->largest_len - TIDES_TRAILER)

/* the files holding the smallest and the largest user key of a set of files */
static void
range_files(tides_file_meta **files, uint32_t n, const tides_file_meta **lo,
			const tides_file_meta **hi)
{
	for (uint32_t i = 0; i < n; i++)
	{
		if (*lo == NULL || tides_ukey_cmp(LO_KEY(files[i]), LO_KEY(*lo)) < 0)
			*lo = files[i];
		if (*hi == NULL || tides_ukey_cmp(HI_KEY(files[i]), HI_KEY(*hi)) > 0)
			*hi = files[i];
	}
}

/* do [lo1, hi1] and [lo2, hi2] (user-key bounds of files) overlap? */
static bool
ranges_overlap(const tides_file_meta *lo1, const tides_file_meta *hi1,
			   const tides_file_meta *lo2, const tides_file_meta *hi2)
{
	return tides_ukey_cmp(LO_KEY(lo1), HI_KEY(hi2)) <= 0 &&
		tides_ukey_cmp(LO_KEY(lo2), HI_KEY(hi1)) <= 0;
}

/*
 * Would candidate c collide with a running compaction's claim?  The range
 * c's outputs can cover is the range of all its inputs.
 */
bool
tides_compaction_conflicts(const tides_shared *sh, const tides_compaction *c)
{
	const tides_file_meta *lo = NULL,
			   *hi = NULL;

	range_files(c->in[0], c->nin[0], &lo, &hi);
	range_files(c->in[1], c->nin[1], &lo, &hi);
	for (int i = 0; i < TIDES_MAX_COMPACTIONS; i++)
	{
		const tides_running_compaction *r = &sh->running[i];

		if (!r->used)
			continue;
		if ((r->output_level == c->output_level || (c->level > 0 && r->output_level == c->level)) &&
			ranges_overlap(r->lo, r->hi, lo, hi))
			return true;
	}
	return false;
}

/* is a running compaction writing into `level` over user keys overlapping [lo, hi]? */
static bool
range_claimed(const tides_shared *sh, int level, const uint8_t *lo, size_t lolen,
			  const uint8_t *hi, size_t hilen)
{
	for (int i = 0; i < TIDES_MAX_COMPACTIONS; i++)
	{
		const tides_running_compaction *r = &sh->running[i];

		if (r->used && r->output_level == level &&
			tides_ukey_cmp(LO_KEY(r->lo), hi, hilen) <= 0 && tides_ukey_cmp(lo, lolen, HI_KEY(r->hi)) <= 0)
			return true;
	}
	return false;
}

bool
tides_compaction_level_free(const tides_shared *sh, const tides_version *v, int level,
							const uint8_t *lo, size_t lolen, const uint8_t *hi, size_t hilen)
{
	TIDES_ASSERT(level >= 1 && level < TIDES_MAX_LEVELS);
	return !tides_version_overlaps(v, level, lo, lolen, hi, hilen) &&
		!range_claimed(sh, level, lo, lolen, hi, hilen);
}

/*
 * Complete candidate c (in[0], level and output_level set): the output
 * level's files overlapping the inputs join it.  False if it cannot run now
 * (an input is being compacted, its range is claimed, or out of memory);
 * c->in[1] is then freed.
 */
bool
tides_compaction_complete(tides_db *db, tides_compaction *c)
{
	const tides_file_meta *lo = NULL,
			   *hi = NULL;

	range_files(c->in[0], c->nin[0], &lo, &hi);
	c->in[1] = tides_version_overlapping(c->v, c->output_level, LO_KEY(lo), HI_KEY(hi), &c->nin[1]);
	if (c->in[1] != NULL && !tides_compaction_busy(c->in[1], c->nin[1]) && !tides_compaction_conflicts(db->sh, c))
		return true;
	free(c->in[1]);
	c->in[1] = NULL;
	c->nin[1] = 0;
	return false;
}

/*
 * c's inputs at its level: files[0..n), to output_level (in place: the
 * same level, where only conflicts can refuse it).  1 when c can run, 0 when
 * it cannot (inputs released), -1 without memory.
 */
static int
take_inputs(tides_db *db, tides_compaction *c, tides_file_meta **files, uint32_t n, int output_level,
			bool in_place)
{
	TIDES_ASSERT(c->in[0] == NULL);
	c->in[0] = malloc((n + 1) * sizeof(tides_file_meta *));
	if (c->in[0] == NULL)
		return -1;
	memcpy(c->in[0], files, n * sizeof(tides_file_meta *));
	c->nin[0] = n;
	c->output_level = output_level;
	if (in_place ? !tides_compaction_conflicts(db->sh, c) : tides_compaction_complete(db, c))
		return 1;
	free(c->in[0]);
	c->in[0] = NULL;
	return 0;
}

int
tides_compaction_take_l0(tides_db *db, tides_compaction *c, int base)
{
	const tides_version *v = c->v;

	TIDES_ASSERT(c->level == 0);
	return take_inputs(db, c, v->files[0], v->nfiles[0],
					   tides_compaction_l0_output(v, base, v->files[0], v->nfiles[0]), false);
}

int
tides_compaction_take_file(tides_db *db, tides_compaction *c, tides_file_meta *f, bool in_place)
{
	return take_inputs(db, c, &f, 1, in_place ? c->level : c->level + 1, in_place);
}

/*
 * Where level 0 may go: the base level, unless a level between holds keys
 * of its range -- those versions are older than level 0's, and a read
 * would find them first if level 0 went below them.
 */
int
tides_compaction_l0_output(const tides_version *v, int base, tides_file_meta **files, uint32_t n)
{
	const tides_file_meta *lo = NULL,
			   *hi = NULL;

	range_files(files, n, &lo, &hi);
	for (int l = 1; l < base; l++)
		if (tides_version_overlaps(v, l, LO_KEY(lo), HI_KEY(hi)))
			return l;
	return base;
}

/*
 * Does a level below `level` hold keys of f's range, or is a running
 * compaction writing there?  If not, f is at the bottom of its range: no
 * older version of its keys exists, so rewriting it in place may drop
 * tombstones, and no compaction can put older data below it meanwhile
 * (that data would have to pass through f's level and range, which the
 * rewrite claims).
 */
bool
tides_compaction_deeper_data(const tides_shared *sh, const tides_version *v, int level, const tides_file_meta *f)
{
	for (int l = level + 1; l < TIDES_MAX_LEVELS; l++)
		if (tides_version_overlaps(v, l, LO_KEY(f), HI_KEY(f)))
			return true;
	for (int i = 0; i < TIDES_MAX_COMPACTIONS; i++)
	{
		const tides_running_compaction *r = &sh->running[i];

		if (r->used && r->output_level > level && ranges_overlap(r->lo, r->hi, f, f))
			return true;
	}
	return false;
}

void
tides_compaction_reset(tides_compaction *c, tides_version *v, int level)
{
	memset(c, 0, sizeof(*c));
	c->slot = -1;
	c->v = v;
	c->level = level;
}

/* the input figures of a compaction's slot: the files it merges */
static void
progress_inputs(tides_db *db, const tides_compaction *c)
{
	tides_running_compaction *r;
	uint32_t	files = 0;
	uint64_t	bytes = 0,
				entries = 0;

	if (c->slot < 0)
		return;
	r = &db->sh->running[c->slot];
	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < c->nin[k]; i++)
		{
			files++;
			bytes += c->in[k][i]->size;
			entries += c->in[k][i]->entries;
		}
	atomic_store_explicit(&r->input_files, files, memory_order_relaxed);
	atomic_store_explicit(&r->input_bytes, bytes, memory_order_relaxed);
	atomic_store_explicit(&r->input_entries, entries, memory_order_relaxed);
}

typedef struct progress_ctx
{
	tides_running_compaction *r;
	tides_table_writer *w;
} progress_ctx;

/* tides_compaction_rules.progress: what the merge has read and written so far */
static void
progress(void *arg, uint64_t input_entries)
{
	progress_ctx *p = arg;
	tides_table_writer *w = p->w;
	uint64_t	written = w->bytes_written;
	uint64_t	entries = 0;

	for (uint32_t i = 0; i < w->noutputs; i++)
		entries += w->outputs[i].entries;
	if (w->builder != NULL)
	{
		written += tides_sst_builder_size(w->builder);
		entries += tides_sst_builder_entries(w->builder);
	}
	atomic_store_explicit(&p->r->entries_read, input_entries, memory_order_relaxed);
	atomic_store_explicit(&p->r->entries_written, entries, memory_order_relaxed);
	atomic_store_explicit(&p->r->bytes_written, written, memory_order_relaxed);
	atomic_store_explicit(&p->r->files_written, w->noutputs + (w->builder != NULL),
						  memory_order_relaxed);
	TIDES_TEST_POINT("compaction.progress", w->db);
}

int
tides_compaction_free_slot(const tides_shared *sh)
{
	for (int i = 0; i < TIDES_MAX_COMPACTIONS; i++)
		if (!sh->running[i].used)
			return i;
	return -1;
}

void
tides_compaction_reserve(tides_db *db, tides_compaction *c, int slot)
{
	tides_running_compaction *r = &db->sh->running[slot];
	const tides_file_meta *lo = NULL,
			   *hi = NULL;

	TIDES_ASSERT(tides_mutex_held(&db->sh->version_mutex));
	TIDES_ASSERT(slot >= 0 && slot < TIDES_MAX_COMPACTIONS && !r->used);
	TIDES_ASSERT(c->nin[0] > 0 && c->output_level >= c->level);
	c->rewrite = c->output_level == c->level;
	for (int k = 0; k < 2; k++)
		for (uint32_t i = 0; i < c->nin[k]; i++)
			if (c->in[k][i]->marked)
				c->rewrite = true;
	mark(c, 1);
	range_files(c->in[0], c->nin[0], &lo, &hi);
	range_files(c->in[1], c->nin[1], &lo, &hi);
	memset(r, 0, sizeof(*r));
	r->used = true;
	r->level = c->level;
	r->output_level = c->output_level;
	r->lo = lo;
	r->hi = hi;
	r->pid = (int32_t) getpid();
	r->started_us = tides_wall_us();
	c->slot = slot;
	progress_inputs(db, c);
	tides_version_ref(c->v);
}

/* version_mutex held: the compaction is over (installed or failed) */
static void
release(tides_db *db, tides_compaction *c)
{
	TIDES_ASSERT(tides_mutex_held(&db->sh->version_mutex));
	TIDES_ASSERT(c->slot < 0 || db->sh->running[c->slot].used);
	mark(c, 0);
	if (c->slot >= 0)
		memset(&db->sh->running[c->slot], 0, sizeof(db->sh->running[c->slot]));
	c->slot = -1;
}

typedef struct deeper_ctx
{
	const tides_version *v;
	int			level;
	int			output_level;
	uint32_t	older_l0;		/* a level-0 merge: v's L0 files from here on are older */
} deeper_ctx;

/* does f's user-key range hold ukey? */
static bool
file_spans(const tides_file_meta *f, const uint8_t *ukey, size_t n)
{
	return tides_ukey_cmp(ukey, n, LO_KEY(f)) >= 0 && tides_ukey_cmp(ukey, n, HI_KEY(f)) <= 0;
}

/*
 * May a level the output does not replace hold an older version of ukey?
 * Those are the levels below the input level except the output level
 * (every output-level file overlapping the inputs' range is an input) --
 * including levels between level 0 and the output level, which hold older
 * versions than level 0 does -- and, for a merge of level-0 runs, the
 * level-0 files older than its inputs.  Dropping a tombstone that hides one
 * of them would bring the deleted value back.
 */
static bool
deeper_may_hold(void *arg, const uint8_t *ukey, size_t n)
{
	deeper_ctx *d = arg;

	for (uint32_t i = d->older_l0; d->level == 0 && d->output_level == 0 && i < d->v->nfiles[0]; i++)
		if (file_spans(d->v->files[0][i], ukey, n))
			return true;
	for (int l = d->level + 1; l < TIDES_MAX_LEVELS; l++)
		if (l != d->output_level && tides_version_overlaps(d->v, l, ukey, n, ukey, n))
			return true;
	return false;
}

/*
 * Move the output-level inputs that hold none of level's keys to c->kept:
 * they stay as they are, and the outputs are cut around them.  An input
 * file's bounds say little about what lies between them: a memtable that
 * took one key of tree 0 (the access method's metadata) besides the rows of
 * a table being loaded flushes into a level-0 file spanning every tree in
 * between, and merging with all the output-level files of that span would
 * rewrite the whole table at every level-0 compaction (write amplification
 * growing with the table, seen as 3x the table's bytes for a 10M-row COPY).
 * A file is kept only when a seek in every level-input finds no key of its
 * range; a marked file is always rewritten (its mark asks for that), and an
 * input that cannot be read keeps everything an input (run reports it).
 */
static void
keep_untouched(tides_db *db, tides_compaction *c)
{
	uint32_t	n0 = c->nin[0],
				n1 = c->nin[1],
				nkept = 0;
	tides_iiter **its = NULL;
	bool	   *keep = NULL;
	uint8_t    *seek = NULL;
	size_t		cap = 0;

	if (n1 == 0 || c->output_level == c->level)
		return;
	if ((its = calloc(n0, sizeof(*its))) == NULL || (keep = calloc(n1, sizeof(*keep))) == NULL)
		goto done;
	for (uint32_t i = 0; i < n0; i++)
		if ((its[i] = tides_table_cache_iter(db->tcache, c->in[0][i]->number, c->in[0][i]->size,
											 false)) == NULL)
			goto done;
	for (uint32_t j = 0; j < n1; j++)
		if (cap < c->in[1][j]->smallest_len)
			cap = c->in[1][j]->smallest_len;
	if ((seek = malloc(cap)) == NULL)
		goto done;

	for (uint32_t j = 0; j < n1; j++)
	{
		tides_file_meta *f = c->in[1][j];
		bool		touched = f->marked;

		/* the first entry of any version at or after f's smallest user key */
		tides_ikey_make(seek, tides_file_smallest(f), f->smallest_len - TIDES_TRAILER,
						TIDES_MAX_SEQ, TIDES_KT_SEEK);
		for (uint32_t i = 0; i < n0 && !touched; i++)
		{
			size_t		klen;
			const uint8_t *k;

			tides_iiter_seek(its[i], seek, f->smallest_len);
			if (tides_iiter_status(its[i]) != TIDES_OK)
				touched = true;
			else if (tides_iiter_valid(its[i]))
			{
				k = tides_iiter_key(its[i], &klen);
				touched = tides_ukey_cmp(k, klen - TIDES_TRAILER, HI_KEY(f)) <= 0;
			}
		}
		keep[j] = !touched;
		nkept += keep[j];
	}
	if (nkept > 0 && (c->kept = malloc(nkept * sizeof(*c->kept))) != NULL)
	{
		uint32_t	n = 0;

		for (uint32_t j = 0; j < n1; j++)
		{
			if (keep[j])
				c->kept[c->nkept++] = c->in[1][j];
			else
				c->in[1][n++] = c->in[1][j];
		}
		c->nin[1] = n;
	}
done:
	for (uint32_t i = 0; its != NULL && i < n0; i++)
		if (its[i] != NULL)
			tides_iiter_destroy(its[i]);
	free(its);
	free(keep);
	free(seek);
}

static tides_status
run(tides_db *db, tides_compaction *c, tides_table_writer *w)
{
	tides_shared *sh = db->sh;
	uint32_t	n = c->nin[0] + c->nin[1];
	tides_iiter **children = calloc(n + 1, sizeof(*children));
	tides_iiter *in;
	tides_compaction_rules rules;
	tides_compaction_counts counts;
	deeper_ctx	dc = {c->v, c->level, c->output_level, 0};
	progress_ctx pc = {c->slot >= 0 ? &sh->running[c->slot] : NULL, w};
	tides_dropped_prefix *dropped = NULL;
	uint64_t   *snaps;
	bool		bottom = true;
	bool		dropped_oom = false;
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
			/* one pass over each input: large reads, and the block cache left to readers */
			tides_sst_iter_read_ahead(children[j]);
			j++;
		}
	in = tides_merge_iter_new(children, (int) n);
	free(children);
	if (in == NULL)
		return tides_fail(&w->err, TIDES_NO_MEMORY, "out of memory starting a compaction");

	for (int l = c->level + 1; l < TIDES_MAX_LEVELS; l++)
		if (l != c->output_level && c->v->nfiles[l] > 0)
			bottom = false;
	if (c->level == 0 && c->output_level == 0)
	{
		/* a merge of runs: the L0 files after its last input are older */
		dc.older_l0 = UINT32_MAX;
		for (uint32_t i = 0; i < c->v->nfiles[0]; i++)
			if (c->v->files[0][i] == c->in[0][c->nin[0] - 1])
				dc.older_l0 = i + 1;
		TIDES_ASSERT(dc.older_l0 != UINT32_MAX);	/* the inputs are v's */
		if (dc.older_l0 < c->v->nfiles[0])
			bottom = false;
	}
	memset(&rules, 0, sizeof(rules));
	memset(&counts, 0, sizeof(counts));
	snaps = tides_snapshot_list(db, &rules.nsnapshots);
	rules.snapshots = snaps;
	rules.filter_horizon = UINT64_MAX;
	rules.filter = db->filter;
	rules.filter_arg = db->filter_arg;
	rules.deeper_may_hold = bottom ? NULL : deeper_may_hold;
	/*
	 * At the bottom of its range (nothing deeper anywhere, or rewritten in
	 * place, which is only chosen there) the output keeps only what a
	 * snapshot needs: remember the oldest one (want() in pick_marked).
	 */
	if (snaps != NULL && (bottom || (c->output_level == c->level && c->level > 0)))
		c->gc_horizon = rules.nsnapshots > 0 ? snaps[0] : UINT64_MAX;
	rules.deeper_arg = &dc;
	if (pc.r != NULL)
	{
		rules.progress = progress;
		rules.progress_arg = &pc;
	}
	/* every listed prefix is applied; those below the next id not listed are retired */
	dropped_oom = !tides_dropped_take(sh, &dropped, &rules.ndropped, &c->dropped_seen);
	rules.dropped = dropped;

	if (snaps == NULL || dropped_oom)
		s = tides_fail(&w->err, TIDES_NO_MEMORY, "out of memory starting a compaction");
	else
	{
		tides_iiter_first(in);
		s = tides_compaction_run(in, &rules, tides_table_writer_emit, w, &counts, &w->err);
		c->entries_read = counts.input_entries;
		if (s == TIDES_OK)
			tides_count(&sh->counters, filtered_dropped, counts.filtered_dropped);
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
	tides_compaction c;

	*did = false;
	if (atomic_load(&sh->state) != TIDES_STATE_OPEN)
		return TIDES_OK;
	tides_lock_version(sh);
	if (!tides_compaction_pick(db, &c, true))
	{
		tides_mutex_unlock(&sh->version_mutex);
		return TIDES_OK;
	}
	tides_mutex_unlock(&sh->version_mutex);
	return tides_compaction_execute(db, &c, did);
}

tides_status
tides_compaction_execute(tides_db *db, tides_compaction *cp, bool *did)
{
	tides_shared *sh = db->sh;
	tides_compaction c = *cp;
	tides_edit	e;
	tides_table_writer w;
	tides_status s = TIDES_OK;
	bool		trivial;
	bool		written = false;
	uint64_t	read_bytes = 0;

	*did = false;
	tides_compaction_reset(cp, NULL, 0);	/* c owns everything now */
	trivial = c.nin[0] == 1 && c.nin[1] == 0 && !c.rewrite;
	/* a merge of level-0 runs makes one run: one file (and the partitioner's) */
	tides_table_writer_init(&w, db, c.level == 0 && c.output_level == 0 ? UINT64_MAX :
							db->opts.target_file_size);
	w.bottommost = c.output_level == TIDES_MAX_LEVELS - 1;
	if (c.output_level > 0)
		w.prefix_cut_size = db->opts.target_file_size / PREFIX_CUT_DIVISOR;
	tides_edit_init(&e);
	if (!trivial)
	{
		keep_untouched(db, &c);
		progress_inputs(db, &c);
		w.stays = c.kept;
		w.nstays = c.nkept;
		s = run(db, &c, &w);
		for (int k = 0; k < 2; k++)
			for (uint32_t i = 0; i < c.nin[k]; i++)
				read_bytes += c.in[k][i]->size;
	}

	tides_lock_version(sh);
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
			.largest = (uint8_t *) tides_file_largest(f), .largest_len = f->largest_len,
			.suffix_bound = f->suffix_bound
		};

		s = tides_edit_add_file(&e, &ef);
	}
	for (uint32_t i = 0; i < w.noutputs && s == TIDES_OK; i++)
	{
		w.outputs[i].level = c.output_level;
		s = tides_edit_add_file(&e, &w.outputs[i]);
	}
	/* all or nothing, superversion included */
	e.dropped_seen = c.dropped_seen;
	e.gc_horizon = c.gc_horizon;
	e.written_us = tides_wall_us();
	e.by_compaction = true;
	if (s == TIDES_OK)
		s = tides_manifest_apply(db, &e, NULL, 0, &written, &w.err);
	else if (w.err.code == TIDES_OK)
		tides_fail(&w.err, s, "out of memory recording a compaction");
	/* installed (or not): the inputs and the output range are free again */
	release(db, &c);
	if (s == TIDES_OK && sh->ndropped > 0)
	{
		/*
		 * This compaction may have removed the last keys of a dropped
		 * prefix: retire it now, not a maintenance round later, so the
		 * list drains as fast as compaction works.  A failure here is the
		 * maintenance work's to retry and report; the compaction stands.
		 */
		tides_dropped_state ds;
		tides_error ignored;

		tides_error_clear(&ignored);
		(void) tides_dropped_reconcile(db, &ds, &ignored);
	}
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
			tides_count(&sh->counters, compaction_entries_read, c.entries_read);
			for (uint32_t i = 0; i < w.noutputs; i++)
				tides_count(&sh->counters, compaction_entries_written, w.outputs[i].entries);
		}
		tides_note_work(sh, &sh->compact_failure, NULL);
		*did = true;
		tides_db_wakeup(db, TIDES_WORK_MAINT);
	}
	else
	{
		/*
		 * The inputs stay as they were.  The outputs may go only if no
		 * manifest record naming them can be durable; otherwise they stay,
		 * as orphans recovery deletes if the record did not survive.
		 */
		if (!written)
			tides_table_writer_discard(&w);
		if (w.err.code == TIDES_OK)
			tides_fail(&w.err, s, "compaction failed");
		tides_note_work(sh, &sh->compact_failure, &w.err);
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
	tides_compaction c;
	bool		need;

	/* a question only: marks nothing, claims nothing, moves no cursor */
	tides_lock_version(sh);
	need = tides_compaction_pick(db, &c, false);
	tides_mutex_unlock(&sh->version_mutex);
	return need;
}

int
tides_get_level_info(tides_db *db, tides_level_info *info)
{
	tides_shared *sh = db->sh;
	tides_version *v;
	uint64_t	target[TIDES_MAX_LEVELS];
	int			base;
	tides_l0_plan l0;

	memset(info, 0, sizeof(*info) * TIDES_MAX_LEVELS);
	if (atomic_load(&sh->state) != TIDES_STATE_OPEN)
		return LAST_LEVEL;
	tides_lock_version(sh);
	v = sh->current;
	base = tides_compaction_targets(db, v, target);
	l0 = tides_compaction_l0_plan(db, v, base);
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
	{
		tides_level_info *li = &info[l];

		li->files = v->nfiles[l];
		for (uint32_t i = 0; i < v->nfiles[l]; i++)
		{
			const tides_file_meta *f = v->files[l][i];

			li->bytes += f->size;
			li->entries += f->entries;
			li->deletions += f->deletions;
			if (atomic_load(&f->being_compacted))
				li->files_compacting++;
		}
		/* as pick_scored (compaction_pick.c) */
		if (l == 0)
			li->score = l0.score;
		else if (l == LAST_LEVEL)
			li->score = 0;
		else if (l < base)
			li->score = li->bytes > 0 ? 1e9 : 0;
		else
			li->score = (double) li->bytes / (double) target[l];
		if (l >= base)
			li->target_bytes = target[l];
	}
	/* compaction debt, level by level; level 0's: the move down, or the merge of its runs */
	if (l0.kind == TIDES_L0_DOWN)
		info[0].pending_bytes = info[0].bytes +
			info[tides_compaction_l0_output(v, base, v->files[0], v->nfiles[0])].bytes;
	for (uint32_t i = l0.first; l0.kind == TIDES_L0_MERGE && i < l0.first + l0.nfiles; i++)
		info[0].pending_bytes += v->files[0][i]->size;
	for (int l = 1; l < LAST_LEVEL; l++)
	{
		tides_level_info *li = &info[l];

		if (l < base)
			li->pending_bytes = li->bytes;
		else if (li->bytes > li->target_bytes)
			li->pending_bytes = (uint64_t) ((double) (li->bytes - li->target_bytes) *
											 (1.0 + (double) info[l + 1].bytes / (double) li->bytes));
	}
	tides_mutex_unlock(&sh->version_mutex);
	return base;
}

int
tides_get_compactions(tides_db *db, tides_compaction_info *out, int max)
{
	tides_shared *sh = db->sh;
	int			n = 0;

	/* no lock: a slot may be released while it is copied (a row of zeros at worst) */
	for (int i = 0; i < TIDES_MAX_COMPACTIONS && n < max; i++)
	{
		tides_running_compaction *r = &sh->running[i];
		tides_compaction_info *ci;

		if (!*(volatile bool *) &r->used)
			continue;
		ci = &out[n++];
		ci->level = *(volatile int *) &r->level;
		ci->output_level = *(volatile int *) &r->output_level;
		ci->pid = *(volatile int32_t *) &r->pid;
		ci->started_us = *(volatile uint64_t *) &r->started_us;
		ci->input_files = atomic_load_explicit(&r->input_files, memory_order_relaxed);
		ci->input_bytes = atomic_load_explicit(&r->input_bytes, memory_order_relaxed);
		ci->input_entries = atomic_load_explicit(&r->input_entries, memory_order_relaxed);
		ci->entries_read = atomic_load_explicit(&r->entries_read, memory_order_relaxed);
		ci->entries_written = atomic_load_explicit(&r->entries_written, memory_order_relaxed);
		ci->bytes_written = atomic_load_explicit(&r->bytes_written, memory_order_relaxed);
		ci->files_written = atomic_load_explicit(&r->files_written, memory_order_relaxed);
	}
	return n;
}
