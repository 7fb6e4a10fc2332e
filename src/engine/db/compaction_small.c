/*
 * compaction_small.c -- merging runs of small files of one tree in place.
 *
 * A flush places the keys a memtable holds above everything their tree has
 * in the files (a table's new rows, an ascending primary key) in files of
 * their own below level 0 (flush_place.c), one file per tree per flush.
 * Such a file overlaps nothing, so no score-based compaction ever takes it,
 * and it is only as large as the tree's share of one memtable: an insert
 * benchmark's 7M-row load through 16 MB memtables left 384 files of 0.7 MB
 * in the last level, 812 after its insert steps.  Every one costs each
 * process that reads it a descriptor (the table cache holds a few dozen per
 * process), an open, a footer and its own index and filter blocks; a point
 * read whose file's reader was evicted pays all that again.
 *
 * A run is a maximal sequence of consecutive files of one level (1 and
 * below) such that every file
 *   - holds keys of one tree only (its smallest and largest keys share their
 *     first range_prefix_len bytes, the same as the run's; with
 *     range_prefix_len 0 the whole key space is one tree),
 *   - is smaller than target_file_size / SMALL_DIVISOR,
 *   - is not an input of a running compaction and not marked (a mark has
 *     its own rewrite, compaction.c),
 *   - is at the bottom of its range (tides_compaction_deeper_data: nothing
 *     deeper holds its keys or is being written there).
 * A run of two or more files is merged, in place (output level = its
 * level), once it holds target_file_size / SMALL_DIVISOR bytes or
 * SMALL_RUN_FILES files; the run stops growing there, so the outputs hold
 * a quarter of a file, not a whole one.  A table that deletes its oldest
 * rows (a queue, the insert benchmark's l.i1) writes each deletion as a
 * new version of the row, and its compaction into the last level rewrites
 * every file holding rows it deletes: a few MB of deletions per level-0
 * compaction, against whole merged files.
 *
 * Progress.  Within one tree the table writer cuts only at the target size
 * (the prefix cut is at tree boundaries), and a run holds less than half
 * the target (it stops growing at a quarter, and its last file is under a
 * quarter), so a merge of n >= 2 files writes one file: every merge lowers
 * the level's count of small files, and compaction never loops on a run.
 * A merge started by bytes writes a file no run takes again, so a byte of
 * a tree that grows by placed files is rewritten once more; a merge started
 * by the file count (a tree adding a few KB per flush) writes less than
 * target / SMALL_DIVISOR bytes, at most once per SMALL_RUN_FILES - 1 of its
 * flushes.
 *
 * Order.  The run's files are the only files of their level in the run's
 * range, and nothing deeper holds those keys: the output, in the same level
 * and range, holds exactly the newest versions the inputs held (and the
 * survival rules drop what no snapshot needs, as any bottom compaction).
 * The claim on the run's range at its level keeps other compactions out of
 * it meanwhile, and a placed flush file lands only where no claim is.
 */
#include <stdlib.h>
#include <string.h>

#include "db/compaction.h"

/* "small": below target_file_size / SMALL_DIVISOR; a run of that many bytes merges */
#define SMALL_DIVISOR 4
/* a run of this many small files merges whatever its bytes */
#define SMALL_RUN_FILES 32

/* the first range_prefix_len bytes of f's smallest key, if its largest key shares them */
static bool
one_tree(const tides_file_meta *f, size_t p, const uint8_t **prefix)
{
	const uint8_t *lo = tides_file_smallest(f);

	*prefix = lo;
	if (p == 0)
		return true;
	return f->smallest_len - TIDES_TRAILER >= p && f->largest_len - TIDES_TRAILER >= p &&
		memcmp(lo, tides_file_largest(f), p) == 0;
}

/* may f join a run of tree `prefix` (NULL: start one)? */
static bool
joins(tides_db *db, const tides_version *v, int level, const tides_file_meta *f,
	  const uint8_t *prefix)
{
	size_t		p = db->opts.range_prefix_len;
	const uint8_t *fp;

	if (f->size >= db->opts.target_file_size / SMALL_DIVISOR || f->marked ||
		atomic_load(&f->being_compacted) || !one_tree(f, p, &fp) ||
		(prefix != NULL && p > 0 && memcmp(prefix, fp, p) != 0))
		return false;
	return !tides_compaction_deeper_data(db->sh, v, level, f);
}

/* does the run of n files holding `bytes` ask for a merge? */
static bool
ripe(const tides_db *db, uint32_t n, uint64_t bytes)
{
	return n >= 2 && (bytes >= db->opts.target_file_size / SMALL_DIVISOR || n >= SMALL_RUN_FILES);
}

/*
 * version_mutex held: the first ripe run of small files (levels from 1
 * down) whose range no running compaction claims, as candidate c with its
 * inputs in c->in[0].  1: found; 0: none; -1: out of memory.
 */
int
tides_compaction_pick_small(tides_db *db, tides_version *v, tides_compaction *c)
{
	uint64_t	cap = db->opts.target_file_size / SMALL_DIVISOR;

	TIDES_ASSERT(tides_mutex_held(&db->sh->version_mutex));
	for (int l = 1; l < TIDES_MAX_LEVELS; l++)
	{
		uint32_t	nf = v->nfiles[l];
		uint32_t	i = 0;

		while (i < nf)
		{
			uint32_t	j = i;
			uint64_t	bytes = 0;

			if (!joins(db, v, l, v->files[l][i], NULL))
			{
				i++;
				continue;
			}
			/* grow the run [i, j) while the next file is of the same tree and small */
			while (j < nf && bytes < cap &&
				   (j == i || joins(db, v, l, v->files[l][j], tides_file_smallest(v->files[l][i]))))
				bytes += v->files[l][j++]->size;
			if (ripe(db, j - i, bytes))
			{
				tides_compaction_reset(c, v, l);
				c->output_level = l;
				c->nin[0] = j - i;
				if ((c->in[0] = malloc((j - i) * sizeof(tides_file_meta *))) == NULL)
					return -1;
				memcpy(c->in[0], v->files[l] + i, (j - i) * sizeof(tides_file_meta *));
				if (!tides_compaction_conflicts(db->sh, c))
					return 1;
				free(c->in[0]);
				c->in[0] = NULL;
				c->nin[0] = 0;
			}
			i = j;
		}
	}
	return 0;
}
