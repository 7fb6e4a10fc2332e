/*
 * compaction_l0.c -- what level 0 asks of compaction: its trigger, the
 * back-pressure shift, and (option level0_tiered) its sorted runs.
 *
 * An L0 compaction merges every L0 file with every file of its output level
 * that they touch.  L0 files hold whatever the memtables held -- typically
 * keys all over the key space (random index entries) -- so such a compaction
 * rewrites about the whole output level however little L0 holds: the bytes
 * written per byte flushed are the base level's size over level 0's.  Two
 * ways to make level 0 hold more before it goes down:
 *
 * The adaptive trigger (option level0_adaptive_trigger) waits for more
 * files, up to the slowdown trigger: level 0's file count bounds what every
 * read merges, so that caps how far it helps (ibench l.i1: 11 bytes of
 * compaction output per byte flushed under a 1.25 GB base level).
 *
 * Sorted runs (option level0_tiered; it takes the adaptive trigger's
 * place).  Level 0 is a stack of runs, newest first, each one file (or two:
 * compaction outputs keep the engine's metadata keys in a file of their own
 * when a partitioner says so).  A flush adds a run.  When
 * level0_compaction_trigger consecutive runs are of similar size (the
 * largest at most L0_RUN_SIMILAR times the smallest), they merge into one
 * run in place -- output level 0 -- the way a size-tiered store merges its
 * runs; so a byte is rewritten once per tier, log_F(L0 / flush size) times
 * with fan-in F = the trigger, and the file count stays near F - 1 per tier.
 * Level 0 goes down to the base level as a whole once it holds at least
 * 1/L0_BASE_SHARE of the base level's bytes (or its file count reaches the
 * slowdown trigger plus the shift: runs did not merge fast enough), so the
 * base level is rewritten once per half its size of new data instead of per
 * few flushes.  Write amplification of level 0 and its base: about
 * log_F(base / 2 / flush) + 2, against base / L0 for the plain trigger.
 *
 * Order.  A read takes level 0 newest first (version.c orders it by
 * max_seq), and stops at the first file holding the key.  Flushes (and
 * ingestions into level 0) have disjoint sequence ranges, newer above older,
 * so a merge of consecutive runs holds only sequences above every older
 * run's and below every newer run's: its output takes their place in that
 * order.  A merge keeps the tombstones an older run may need: compaction's
 * "deeper" levels include the L0 files older than its inputs
 * (compaction.c, deeper_may_hold).
 */
#include <stdlib.h>

#include "db/compaction.h"

/* runs merge when the largest is at most this many times the smallest */
#define L0_RUN_SIMILAR 3
/* level 0 goes down once it holds 1/L0_BASE_SHARE of the base level */
#define L0_BASE_SHARE 2

/*
 * Level 0's compaction trigger for version v with the adaptive trigger: the
 * trigger grows until level 0 would hold a `level_size_ratio`th of the base
 * level (the size relation of any two adjacent levels), but never past the
 * configured slowdown trigger and never below the configured trigger.  The
 * back-pressure thresholds move up with it (tides_compaction_l0_shift), so
 * that writers are not slowed while the larger compactions run.
 */
uint32_t
tides_compaction_l0_trigger(const tides_db *db, const tides_version *v, int base)
{
	uint32_t	trig = db->opts.level0_compaction_trigger;
	uint32_t	cap = db->opts.level0_slowdown_trigger;
	uint32_t	n = v->nfiles[0];
	uint64_t	l0 = tides_version_level_bytes(v, 0);
	uint64_t	want;

	if (!db->opts.level0_adaptive_trigger || db->opts.level0_tiered || n == 0 || l0 / n == 0 ||
		cap <= trig || db->opts.level_size_ratio == 0)
		return trig;
	/* files of the present average size that make 1/ratio of the base level */
	want = tides_version_level_bytes(v, base) / db->opts.level_size_ratio / (l0 / n);
	if (want > cap)
		want = cap;
	return want > trig ? (uint32_t) want : trig;
}

/*
 * How far level 0's thresholds stand above the configured ones in v: the
 * slowdown and stop triggers move up by as much (write.c's back-pressure and
 * the picker's urgency).  Writers are slowed to let compaction catch up with
 * what they flush; with a raised trigger each compaction takes more files
 * and runs longer while the next ones arrive, and slowing writers at the
 * configured thresholds would hold level 0 below the size that makes the
 * compaction cheap per byte (ibench l.i1: writers slowed 83 s of 124, one
 * compaction core busy rewriting 1.2 GB per 40 MB of level 0).  With sorted
 * runs level 0 holds up to F - 1 runs per tier while a merge or the move
 * down runs: the thresholds move up by the room between the configured
 * trigger and slowdown trigger.  Zero with neither option.
 */
uint32_t
tides_compaction_l0_shift(const tides_db *db, const tides_version *v)
{
	uint64_t	target[TIDES_MAX_LEVELS];
	int			base;

	if (db->opts.level0_tiered)
		return db->opts.level0_slowdown_trigger > db->opts.level0_compaction_trigger ?
			db->opts.level0_slowdown_trigger - db->opts.level0_compaction_trigger : 0;
	if (!db->opts.level0_adaptive_trigger)
		return 0;
	base = tides_compaction_targets(db, v, target);
	return tides_compaction_l0_trigger(db, v, base) - db->opts.level0_compaction_trigger;
}

/*
 * The newest run of at least `fan_in` consecutive level-0 files, none an
 * input of a running compaction, whose sizes are within L0_RUN_SIMILAR of
 * each other.  Returns its length (0: none) and its first (newest) index.
 */
static uint32_t
similar_runs(const tides_version *v, uint32_t fan_in, uint32_t *first)
{
	uint32_t	n = v->nfiles[0];
	uint32_t	i = 0;

	while (i < n)
	{
		uint64_t	lo,
					hi;
		uint32_t	j = i;

		if (atomic_load(&v->files[0][i]->being_compacted))
		{
			i++;
			continue;
		}
		lo = hi = v->files[0][i]->size;
		while (j + 1 < n && !atomic_load(&v->files[0][j + 1]->being_compacted))
		{
			uint64_t	s = v->files[0][j + 1]->size;
			uint64_t	nlo = s < lo ? s : lo,
						nhi = s > hi ? s : hi;

			if (nhi > (nlo > 0 ? nlo : 1) * L0_RUN_SIMILAR)
				break;
			lo = nlo;
			hi = nhi;
			j++;
		}
		if (j - i + 1 >= fan_in)
		{
			*first = i;
			return j - i + 1;
		}
		i = j + 1;
	}
	return 0;
}

tides_l0_plan
tides_compaction_l0_plan(const tides_db *db, const tides_version *v, int base)
{
	tides_l0_plan p = {TIDES_L0_NONE, 0, 0, 0.0};
	uint32_t	n = v->nfiles[0];
	uint32_t	trig = db->opts.level0_compaction_trigger;
	uint64_t	l0,
				basebytes;

	if (n == 0)
		return p;
	if (!db->opts.level0_tiered || trig < 2)
	{
		p.score = (double) n / tides_compaction_l0_trigger(db, v, base);
		p.kind = p.score >= 1.0 ? TIDES_L0_DOWN : TIDES_L0_NONE;
		return p;
	}
	l0 = tides_version_level_bytes(v, 0);
	basebytes = tides_version_level_bytes(v, base);
	/* down: level 0 is a large enough share of the base level, or too many files */
	if (basebytes == 0)
		p.score = (double) n / trig;
	else
		p.score = (double) l0 * L0_BASE_SHARE / (double) basebytes;
	if (n >= db->opts.level0_slowdown_trigger + tides_compaction_l0_shift(db, v))
		p.score = (double) n / trig;
	/*
	 * Down, unless a compaction already holds the oldest file: a move down
	 * (it takes every file there is when it starts) or a merge of the
	 * oldest runs.  A move down cannot start before that one ends, and it
	 * runs long (it rewrites the base level), so meanwhile the runs flushed
	 * above it merge as usual -- with a second compaction worker, level 0
	 * keeps near F - 1 runs per tier instead of growing towards the stop
	 * trigger while the base level is rewritten.
	 */
	if (p.score >= 1.0 && !atomic_load(&v->files[0][n - 1]->being_compacted))
	{
		p.kind = TIDES_L0_DOWN;
		return p;
	}
	p.nfiles = similar_runs(v, trig, &p.first);
	if (p.nfiles > 0)
	{
		p.kind = TIDES_L0_MERGE;
		p.score = (double) p.nfiles / trig;
	}
	else if (p.score >= 1.0)
		p.kind = TIDES_L0_DOWN;	/* waits for the one that holds the oldest file */
	return p;
}
