/*
 * test_model.c -- randomized model test: the engine against an in-memory
 * oracle, over TEST_OPS (default 1,000,000) mixed operations.
 *
 * Operations: single puts and deletes, multi-entry batches (with repeated
 * keys; one in eight of 64 to 159 entries, past the write path's
 * on-stack arrays), point reads (latest, at snapshots, into small buffers, of absent
 * keys), iterator walks in both directions from seek / seek_for_prev /
 * first / last with random lower/upper bounds, snapshots read much later,
 * iterators created early and read after more writes, flushes and
 * compactions and maintenance interleaved (memtable 64 KiB, segments
 * 64 KiB, target files 64 KiB, level base 64 KiB, so many files and levels
 * occur), dropped prefixes, periodic full scans in both directions, and a
 * few restarts: process crash (drop the region without shutdown, recover
 * into a fresh one) and one clean shutdown.  Read points: a key read (by
 * get, or through a fresh or a held iterator) is marked with the read point
 * of that read, and tides_changed_since may answer "unchanged" later only
 * while the oracle still holds the version that read returned; a key range
 * read at a read point is marked the same way, and tides_range_changed_since
 * may answer "unchanged" only while every key of it holds the version read
 * (absent ones absent).  After a process crash every
 * write that returned OK must still be there (it reached the kernel).
 *
 * Oracle: keys come from a fixed sorted key space (harness.h), so the oracle
 * is an array of the current version per key rank (0: absent); values are
 * regenerated from (rank, version).  Deterministic for a given TEST_SEED.
 */
#include "harness.h"

#define MAX_SNAPS 6
#define MAX_HELD 3
#define MAX_MARKS 8
#define KEYS 20000
#define TREES 4

typedef struct msnap
{
	bool		used;
	tides_snapshot s;
	uint32_t   *vers;
	uint64_t	taken_at;
} msnap;

typedef struct held_iter
{
	bool		used;
	tides_iter *it;
	uint32_t   *vers;
	uint64_t	taken_at;
} held_iter;

static keyspace ks;
static uint32_t *cur;			/* current version per rank, 0 = absent */
static uint32_t *nextver;
static store st;
static tides_rand rnd;
static uint64_t opno;
static uint64_t nops;
static msnap snaps[MAX_SNAPS];
static held_iter held[MAX_HELD];

/* a key read at a read point, and the version the oracle says it read */
typedef struct mark
{
	bool		used;
	uint32_t	rank;
	uint32_t	ver;
	uint64_t	since;
} mark;

static mark marks[MAX_MARKS];

/* a key range read at a read point, with the versions the oracle says it read */
typedef struct range_mark
{
	bool		used;
	uint32_t	lo;				/* ranks [lo, hi) */
	uint32_t	hi;
	uint32_t   *vers;
	uint64_t	since;
} range_mark;

static range_mark rmarks[MAX_MARKS];
static uint32_t hot_base;
static int	max_level_seen;
static uint64_t max_files_seen;
static struct
{
	uint64_t	puts,
				dels,
				batches,
				gets,
				scans,
				stem_reads,
				steps,
				snaps,
				held,
				busy,
				crashes,
				drops,
				fullscans,
				held_released,
				marks,
				unchanged,
				changed,
				fresh_changed,
				rmarks,
				runchanged,
				rchanged,
				rfresh_changed,
				discards;		/* idle memtables given back, over every incarnation */
}			cnt;

#define FAILF(...) \
	do { \
		test_failures++; \
		fprintf(stderr, "test_model: op %llu (seed %llu): ", (unsigned long long) opno, \
				(unsigned long long) test_seed); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
	} while (0)

static bool
too_many_failures(void)
{
	return test_failures > 20;
}

static uint32_t
pick_rank(void)
{
	if (tides_rand_uniform(&rnd, 2) == 0)
		return (uint32_t) tides_rand_uniform(&rnd, ks.n);
	if (tides_rand_uniform(&rnd, 1000) == 0)
		hot_base = (uint32_t) tides_rand_uniform(&rnd, ks.n);
	return (hot_base + (uint32_t) tides_rand_uniform(&rnd, 200)) % ks.n;
}

/* a version whose value is small enough for a batch */
static uint32_t
new_version(uint32_t rank, bool small)
{
	uint32_t	v = nextver[rank]++;

	while (small && ks_value_len(rank, v, true) >= 64)
		v = nextver[rank]++;
	return v;
}

static void
describe_value(const void *val, size_t n)
{
	if (n >= 8)
		fprintf(stderr, " (value names rank %u version %u, %zu bytes)",
				tides_get32(val), tides_get32((const uint8_t *) val + 4), n);
	else
		fprintf(stderr, " (value of %zu bytes)", n);
}

/* ------------------------------------------------------------ background */

static void
background(void)
{
	tides_status s;
	tides_stats sts;

	work_once(st.db, &s);
	if (s != TIDES_OK)
		FAILF("background work failed: %s: %s", tides_status_name(s), tides_errmsg(st.db));
	if (opno % 4096 == 0)
	{
		tides_get_stats(st.db, &sts);
		for (int l = 0; l < TIDES_MAX_LEVELS; l++)
			if (sts.level_files[l] > 0 && l > max_level_seen)
				max_level_seen = l;
		{
			uint64_t	files = 0;

			for (int l = 0; l < TIDES_MAX_LEVELS; l++)
				files += sts.level_files[l];
			if (files > max_files_seen)
				max_files_seen = files;
		}
	}
}

/* write a batch, retrying while the engine is busy */
static bool
write_batch(tides_batch *b)
{
	for (int tries = 0; tries < 100000; tries++)
	{
		tides_status s = tides_write(st.db, b, NULL);

		if (s == TIDES_OK)
			return true;
		if (s != TIDES_BUSY)
		{
			FAILF("tides_write: %s: %s", tides_status_name(s), tides_errmsg(st.db));
			return false;
		}
		cnt.busy++;
		background();
		if (tries == 1000)
		{
			/*
			 * Long-lived iterators pin the memtables they saw: with a few of
			 * them open every memtable slot can be pinned, and no flush can
			 * free one.  Let them go (the application's way out).
			 */
			for (int i = 0; i < MAX_HELD; i++)
				if (held[i].used)
				{
					tides_iter_free(held[i].it);
					free(held[i].vers);
					held[i].used = false;
					cnt.held_released++;
				}
		}
	}
	FAILF("tides_write stayed busy");
	return false;
}

/* ----------------------------------------------------------------- writes */

static void
op_put(void)
{
	uint32_t	r = pick_rank();
	uint32_t	v = new_version(r, false);
	uint8_t		val[KS_MAX_VALUE];
	size_t		n = ks_value(r, v, true, val);
	tides_batch *b = tides_batch_new();

	CHECK_OK(tides_batch_put(b, ks.key[r], ks.len[r], val, n));
	if (write_batch(b))
		cur[r] = v;
	tides_batch_free(b);
	cnt.puts++;
}

static void
op_delete(void)
{
	uint32_t	r = pick_rank();
	tides_batch *b = tides_batch_new();

	CHECK_OK(tides_batch_delete(b, ks.key[r], ks.len[r]));
	if (write_batch(b))
		cur[r] = 0;
	tides_batch_free(b);
	cnt.dels++;
}

static void
op_batch(void)
{
	/* one in eight large: more entries than write_batch's on-stack heights */
	uint32_t	n = tides_rand_uniform(&rnd, 8) == 0 ? 64 + (uint32_t) tides_rand_uniform(&rnd, 96) :
		2 + (uint32_t) tides_rand_uniform(&rnd, 15);
	uint32_t	ranks[160],
				vers[160];
	tides_batch *b = tides_batch_new();

	for (uint32_t i = 0; i < n; i++)
	{
		uint8_t		val[KS_MAX_VALUE];

		/* sometimes the same key again: the later entry wins */
		ranks[i] = (i > 0 && tides_rand_uniform(&rnd, 8) == 0) ? ranks[i - 1] : pick_rank();
		if (tides_rand_uniform(&rnd, 4) == 0)
		{
			vers[i] = 0;
			CHECK_OK(tides_batch_delete(b, ks.key[ranks[i]], ks.len[ranks[i]]));
		}
		else
		{
			size_t		vl;

			vers[i] = new_version(ranks[i], true);
			vl = ks_value(ranks[i], vers[i], true, val);
			CHECK_OK(tides_batch_put(b, ks.key[ranks[i]], ks.len[ranks[i]], val, vl));
		}
	}
	CHECK(tides_batch_count(b) == n);
	if (write_batch(b))
		for (uint32_t i = 0; i < n; i++)
			cur[ranks[i]] = vers[i];
	tides_batch_free(b);
	cnt.batches++;
}

/* ------------------------------------------------------------------ reads */

static void
check_get(uint32_t r, const uint32_t *vers, const tides_snapshot *snap, const char *what)
{
	void	   *v = NULL;
	size_t		n = 0;
	tides_status s = tides_get(st.db, snap, ks.key[r], ks.len[r], &v, &n);
	uint32_t	want = vers[r];

	if (want == 0 ? s != TIDES_NOT_FOUND : (s != TIDES_OK || !ks_value_is(r, want, true, v, n)))
	{
		FAILF("%s of key rank %u: want %s version %u, got %s", what, r,
			  want ? "present" : "absent", want, tides_status_name(s));
		fprintf(stderr, "    key ");
		print_key(stderr, ks.key[r], ks.len[r]);
		if (s == TIDES_OK)
			describe_value(v, n);
		else if (s != TIDES_NOT_FOUND)
			fprintf(stderr, " error: %s", tides_errmsg(st.db));
		fputc('\n', stderr);
	}
	free(v);
	cnt.gets++;
}

static void
op_get(void)
{
	check_get(pick_rank(), cur, NULL, "get");
}

static void
op_get_into(void)
{
	uint32_t	r = pick_rank();
	uint8_t		buf[KS_MAX_VALUE];
	size_t		cap = (size_t) tides_rand_uniform(&rnd, 48);
	size_t		n = 0;
	tides_status s = tides_get_into(st.db, NULL, ks.key[r], ks.len[r], buf, cap, &n);

	if (cur[r] == 0)
	{
		if (s != TIDES_NOT_FOUND)
			FAILF("get_into of absent rank %u gave %s", r, tides_status_name(s));
	}
	else
	{
		size_t		want = ks_value_len(r, cur[r], true);

		if (want > cap ? (s != TIDES_INVALID || n != want) :
			(s != TIDES_OK || !ks_value_is(r, cur[r], true, buf, n)))
			FAILF("get_into rank %u cap %zu: want %zu bytes, got %s n=%zu", r, cap, want,
				  tides_status_name(s), n);
	}
	cnt.gets++;
}

/* a probe that is not in the key space: a key plus a byte, or cut short */
static size_t
make_probe(uint8_t *out)
{
	uint32_t	r = (uint32_t) tides_rand_uniform(&rnd, ks.n);
	size_t		n = ks.len[r];
	int			kind = (int) tides_rand_uniform(&rnd, 4);

	memcpy(out, ks.key[r], n);
	if (kind == 0)
		out[n++] = (uint8_t) tides_rand_uniform(&rnd, 256);
	else if (kind == 1 && n > 1)
		n = 1 + (size_t) tides_rand_uniform(&rnd, n - 1);
	else if (kind == 2)
		out[n - 1] ^= (uint8_t) (1 + tides_rand_uniform(&rnd, 255));
	return n;
}

static void
op_get_absent(void)
{
	uint8_t		p[400];
	size_t		n = make_probe(p);
	uint32_t	r = ks_lower_bound(&ks, p, n);
	void	   *v = NULL;
	size_t		vl;
	tides_status s;

	if (r < ks.n && ks_cmp_raw(ks.key[r], ks.len[r], p, n) == 0)
	{
		check_get(r, cur, NULL, "get(probe)");
		return;
	}
	s = tides_get(st.db, NULL, p, n, &v, &vl);
	if (s != TIDES_NOT_FOUND)
		FAILF("get of a never-written key gave %s", tides_status_name(s));
	free(v);
	cnt.gets++;
}

/* ------------------------------------------------------------ iteration */

typedef struct owalk
{
	const uint32_t *vers;
	uint32_t	lo;				/* ranks [lo, hi) are inside the bounds */
	uint32_t	hi;
	int64_t		pos;			/* -1: invalid */
} owalk;

static int64_t
o_next_from(const owalk *w, int64_t r)
{
	for (; r < (int64_t) w->hi; r++)
		if (r >= (int64_t) w->lo && w->vers[r])
			return r;
	return -1;
}

static int64_t
o_prev_from(const owalk *w, int64_t r)
{
	if (r >= (int64_t) w->hi)
		r = (int64_t) w->hi - 1;
	for (; r >= (int64_t) w->lo; r--)
		if (w->vers[r])
			return r;
	return -1;
}

/* compare the iterator with the oracle position; false on mismatch */
static bool
compare_pos(tides_iter *it, const owalk *w, const char *what, int step)
{
	bool		valid = tides_iter_valid(it);

	if (!valid && tides_iter_status(it) != TIDES_OK)
	{
		FAILF("%s step %d: iterator error %s: %s", what, step,
			  tides_status_name(tides_iter_status(it)), tides_errmsg(st.db));
		return false;
	}
	if (valid != (w->pos >= 0))
	{
		FAILF("%s step %d: iterator %s, oracle %s (rank %lld)", what, step,
			  valid ? "valid" : "invalid", w->pos >= 0 ? "valid" : "invalid",
			  (long long) w->pos);
		if (valid)
		{
			size_t		kl,
						vl;
			const void *k = tides_iter_key(it, &kl);
			const void *v = tides_iter_value(it, &vl);

			fprintf(stderr, "    iterator at ");
			print_key(stderr, k, kl);
			describe_value(v, vl);
			fputc('\n', stderr);
		}
		return false;
	}
	if (valid)
	{
		size_t		kl,
					vl;
		const void *k = tides_iter_key(it, &kl);
		const void *v = tides_iter_value(it, &vl);
		uint32_t	r = (uint32_t) w->pos;

		if (ks_cmp_raw(k, kl, ks.key[r], ks.len[r]) != 0 ||
			!ks_value_is(r, w->vers[r], true, v, vl))
		{
			FAILF("%s step %d: iterator and oracle differ (oracle rank %u version %u)",
				  what, step, r, w->vers[r]);
			fprintf(stderr, "    iterator at ");
			print_key(stderr, k, kl);
			describe_value(v, vl);
			fprintf(stderr, "\n    oracle at   ");
			print_key(stderr, ks.key[r], ks.len[r]);
			fputc('\n', stderr);
			return false;
		}
	}
	return true;
}

/* random bounds: none, or a key / probe, as lower and/or upper */
static void
random_bound(uint8_t *buf, size_t *len, bool *has)
{
	*has = tides_rand_uniform(&rnd, 3) != 0;
	if (!*has)
		return;
	if (tides_rand_uniform(&rnd, 2) == 0)
	{
		uint32_t	r = (uint32_t) tides_rand_uniform(&rnd, ks.n);

		memcpy(buf, ks.key[r], ks.len[r]);
		*len = ks.len[r];
	}
	else
		*len = make_probe(buf);
}

static void
scan_with(tides_iter *it, owalk *w, const char *what)
{
	uint8_t		p[400];
	size_t		pn;
	int			start = (int) tides_rand_uniform(&rnd, 5);
	int			steps = 1 + (int) tides_rand_uniform(&rnd, 24);
	bool		fwd_bias = tides_rand_uniform(&rnd, 2) == 0;

	switch (start)
	{
		case 0:
			tides_iter_first(it);
			w->pos = o_next_from(w, w->lo);
			break;
		case 1:
			tides_iter_last(it);
			w->pos = o_prev_from(w, (int64_t) w->hi - 1);
			break;
		case 2:
		case 3:
			pn = make_probe(p);
			if (start == 3 && tides_rand_uniform(&rnd, 2))
			{
				uint32_t	r = (uint32_t) tides_rand_uniform(&rnd, ks.n);

				memcpy(p, ks.key[r], ks.len[r]);
				pn = ks.len[r];
			}
			tides_iter_seek(it, p, pn);
			{
				uint32_t	r = ks_lower_bound(&ks, p, pn);

				w->pos = o_next_from(w, r < w->lo ? w->lo : r);
			}
			break;
		default:
			pn = make_probe(p);
			tides_iter_seek_for_prev(it, p, pn);
			{
				uint32_t	r = ks_lower_bound(&ks, p, pn);
				int64_t		last = (r < ks.n && ks_cmp_raw(ks.key[r], ks.len[r], p, pn) == 0) ? r : (int64_t) r - 1;

				w->pos = last < (int64_t) w->lo ? -1 : o_prev_from(w, last);
			}
			break;
	}
	if (!compare_pos(it, w, what, 0))
		return;
	for (int i = 1; i <= steps && w->pos >= 0; i++)
	{
		bool		fwd = tides_rand_uniform(&rnd, 4) != 0 ? fwd_bias : !fwd_bias;

		if (fwd)
		{
			tides_iter_next(it);
			w->pos = o_next_from(w, w->pos + 1);
		}
		else
		{
			tides_iter_prev(it);
			w->pos = o_prev_from(w, w->pos - 1);
		}
		cnt.steps++;
		if (!compare_pos(it, w, what, i))
			return;
	}
}

static void
op_scan(void)
{
	uint8_t		lo[400],
				hi[400];
	size_t		lol = 0,
				hil = 0;
	bool		haslo,
				hashi;
	tides_iter_options o;
	tides_iter *it;
	owalk		w;
	msnap	   *sn = NULL;

	memset(&o, 0, sizeof(o));
	random_bound(lo, &lol, &haslo);
	random_bound(hi, &hil, &hashi);
	if (tides_rand_uniform(&rnd, 4) == 0)
	{
		int			i = (int) tides_rand_uniform(&rnd, MAX_SNAPS);

		if (snaps[i].used)
			sn = &snaps[i];
	}
	o.snap = sn ? &sn->s : NULL;
	o.lower = haslo ? lo : NULL;
	o.lower_len = lol;
	o.upper = hashi ? hi : NULL;
	o.upper_len = hil;
	o.fill_cache = tides_rand_uniform(&rnd, 4) != 0;
	o.read_ahead = !o.fill_cache && tides_rand_uniform(&rnd, 2);	/* a bulk read */
	it = tides_iter_new(st.db, &o);
	if (it == NULL)
	{
		FAILF("tides_iter_new returned NULL");
		return;
	}
	w.vers = sn ? sn->vers : cur;
	w.lo = haslo ? ks_lower_bound(&ks, lo, lol) : 0;
	w.hi = hashi ? ks_lower_bound(&ks, hi, hil) : ks.n;
	w.pos = -1;
	/* two walks on one iterator: repositioning must work */
	scan_with(it, &w, sn ? "scan(snapshot)" : "scan");
	if (tides_rand_uniform(&rnd, 2) == 0)
		scan_with(it, &w, sn ? "rescan(snapshot)" : "rescan");
	tides_iter_free(it);
	cnt.scans++;
}

/*
 * A uniqueness-check style read: the keys stem || exactly filter_stem_suffix
 * bytes, through an iterator with lower_is_stem over [stem, successor), or
 * (an index scan's key) through tides_iter_seek_stem on an iterator without
 * bounds, maybe after another seek, read up to the successor.
 * Every such key the oracle holds must be shown with its value, in order,
 * and no other key of that length; keys of other lengths may be shown (from
 * files the filter did not rule out, even versions a skipped file would have
 * hidden): the reader ignores them.  The stem is the
 * stem of a key of the key space (so files holding it exist) or of a probe.
 */
static void
op_stem_read(void)
{
	uint8_t		stem[400],
				up[400];
	size_t		sl,
				ul;
	uint32_t	suffix = st.opts.filter_stem_suffix ? st.opts.filter_stem_suffix : 2;
	uint32_t	r = (uint32_t) tides_rand_uniform(&rnd, ks.n);
	uint32_t	lo,
				hi,
				want;
	tides_iter_options o;
	tides_iter *it;
	msnap	   *sn = NULL;
	const uint32_t *vers;
	int			step = 0;
	bool		by_seek;

	if (tides_rand_uniform(&rnd, 4) == 0)
		sl = make_probe(stem);
	else
	{
		memcpy(stem, ks.key[r], ks.len[r]);
		sl = ks.len[r];
	}
	if (sl <= suffix)
		return;
	sl -= suffix;
	/* the successor of the stem: the last byte below 0xff, incremented */
	memcpy(up, stem, sl);
	ul = sl;
	while (ul > 0 && up[ul - 1] == 0xff)
		ul--;
	if (ul == 0)
		return;
	up[ul - 1]++;
	if (tides_rand_uniform(&rnd, 4) == 0)
	{
		int			i = (int) tides_rand_uniform(&rnd, MAX_SNAPS);

		if (snaps[i].used)
			sn = &snaps[i];
	}
	vers = sn ? sn->vers : cur;
	memset(&o, 0, sizeof(o));
	o.snap = sn ? &sn->s : NULL;
	o.fill_cache = true;
	by_seek = tides_rand_uniform(&rnd, 2) == 0;
	if (!by_seek)
	{
		o.lower = stem;
		o.lower_len = sl;
		o.upper = up;
		o.upper_len = ul;
		o.lower_is_stem = true;
	}
	it = tides_iter_new(st.db, &o);
	if (it == NULL)
	{
		FAILF("tides_iter_new(lower_is_stem) returned NULL");
		return;
	}
	lo = ks_lower_bound(&ks, stem, sl);
	hi = ks_lower_bound(&ks, up, ul);
	want = lo;
	if (by_seek)
	{
		/* a stem seek repositions whatever came before it */
		if (tides_rand_uniform(&rnd, 2) == 0)
		{
			uint32_t	o2 = (uint32_t) tides_rand_uniform(&rnd, ks.n);

			if (tides_rand_uniform(&rnd, 2) == 0 && ks.len[o2] > suffix)
				tides_iter_seek_stem(it, ks.key[o2], ks.len[o2] - suffix);
			else
				tides_iter_seek(it, ks.key[o2], ks.len[o2]);
		}
		tides_iter_seek_stem(it, stem, sl);
	}
	else
		tides_iter_first(it);
	for (; tides_iter_valid(it); tides_iter_next(it), step++)
	{
		size_t		kl,
					vl;
		const uint8_t *k = tides_iter_key(it, &kl);
		const void *v = tides_iter_value(it, &vl);
		uint32_t	kr = ks_lower_bound(&ks, k, kl);

		if (by_seek && ks_cmp_raw(k, kl, up, ul) >= 0)
			break;				/* the reader stops at the successor */
		if (kl != sl + suffix)
			continue;			/* another length: may be shown, even stale (ignored) */
		if (kr >= ks.n || ks_cmp_raw(ks.key[kr], ks.len[kr], k, kl) != 0 || vers[kr] == 0 ||
			!ks_value_is(kr, vers[kr], true, v, vl) || kr < lo || kr >= hi)
		{
			FAILF("stem read step %d: a key the oracle does not hold there, or a wrong value", step);
			print_key(stderr, k, kl);
			fputc('\n', stderr);
			break;
		}
		/* every wanted key before this one must have been shown */
		for (; want < kr; want++)
			if (vers[want] != 0 && ks.len[want] == sl + suffix)
			{
				FAILF("stem read: key of rank %u (version %u) missing", want, vers[want]);
				print_key(stderr, ks.key[want], ks.len[want]);
				fputc('\n', stderr);
				tides_iter_free(it);
				return;
			}
		want = kr + 1;
	}
	if (tides_iter_status(it) != TIDES_OK)
		FAILF("stem read: %s", tides_status_name(tides_iter_status(it)));
	for (; want < hi; want++)
		if (vers[want] != 0 && ks.len[want] == sl + suffix)
		{
			FAILF("stem read: key of rank %u (version %u) missing at the end", want, vers[want]);
			break;
		}
	tides_iter_free(it);
	cnt.stem_reads++;
}

/* every key in order, both ways, against vers */
static void
full_scan(tides_iter *given, const uint32_t *vers, const char *what)
{
	/* as a bulk read (a table scan) every other time: blocks fetched ahead */
	tides_iter_options bulk = {.read_ahead = true};
	tides_iter *it = given ? given : tides_iter_new(st.db, cnt.fullscans % 2 ? &bulk : NULL);
	owalk		w = {vers, 0, ks.n, -1};
	uint64_t	n = 0;
	int			step = 0;

	if (it == NULL)
	{
		FAILF("tides_iter_new returned NULL");
		return;
	}
	tides_iter_first(it);
	w.pos = o_next_from(&w, 0);
	while (compare_pos(it, &w, what, step++) && w.pos >= 0)
	{
		tides_iter_next(it);
		w.pos = o_next_from(&w, w.pos + 1);
		n++;
	}
	if (given == NULL || tides_rand_uniform(&rnd, 2) == 0)
	{
		tides_iter_last(it);
		w.pos = o_prev_from(&w, (int64_t) ks.n - 1);
		step = 0;
		while (compare_pos(it, &w, what, -(step++)) && w.pos >= 0)
		{
			tides_iter_prev(it);
			w.pos = o_prev_from(&w, w.pos - 1);
		}
	}
	if (given == NULL)
		tides_iter_free(it);
	cnt.fullscans++;
}

/* -------------------------------------------------- snapshots, held iters */

static void
op_snapshot(void)
{
	int			i = (int) tides_rand_uniform(&rnd, MAX_SNAPS);
	msnap	   *s = &snaps[i];

	if (s->used)
	{
		/* read it once more in full before letting it go */
		if (tides_rand_uniform(&rnd, 4) == 0)
			for (int k = 0; k < 50; k++)
				check_get((uint32_t) tides_rand_uniform(&rnd, ks.n), s->vers, &s->s, "get(old snapshot)");
		tides_snapshot_release(st.db, &s->s);
		free(s->vers);
		s->used = false;
		return;
	}
	CHECK_OK(tides_snapshot_acquire(st.db, &s->s));
	s->vers = malloc(ks.n * sizeof(uint32_t));
	memcpy(s->vers, cur, ks.n * sizeof(uint32_t));
	s->taken_at = opno;
	s->used = true;
	cnt.snaps++;
}

static void
op_get_snapshot(void)
{
	int			i = (int) tides_rand_uniform(&rnd, MAX_SNAPS);

	if (!snaps[i].used)
		return;
	check_get(pick_rank(), snaps[i].vers, &snaps[i].s, "get(snapshot)");
}

static void
op_held(void)
{
	int			i = (int) tides_rand_uniform(&rnd, MAX_HELD);
	held_iter  *h = &held[i];

	if (h->used)
	{
		char		what[64];

		snprintf(what, sizeof(what), "held iterator from op %llu", (unsigned long long) h->taken_at);
		full_scan(h->it, h->vers, what);
		tides_iter_free(h->it);
		free(h->vers);
		h->used = false;
		return;
	}
	h->it = tides_iter_new(st.db, NULL);
	if (h->it == NULL)
	{
		FAILF("tides_iter_new returned NULL");
		return;
	}
	h->vers = malloc(ks.n * sizeof(uint32_t));
	memcpy(h->vers, cur, ks.n * sizeof(uint32_t));
	h->taken_at = opno;
	h->used = true;
	cnt.held++;
}

static void
release_all(void)
{
	for (int i = 0; i < MAX_SNAPS; i++)
		if (snaps[i].used)
		{
			tides_snapshot_release(st.db, &snaps[i].s);
			free(snaps[i].vers);
			snaps[i].used = false;
		}
	for (int i = 0; i < MAX_HELD; i++)
		if (held[i].used)
		{
			tides_iter_free(held[i].it);
			free(held[i].vers);
			held[i].used = false;
		}
}

/* ------------------------------------------------------------ read points */

/* tides_changed_since for m: "unchanged" only while the oracle agrees */
static bool
check_mark(const mark *m, const char *what)
{
	bool		changed = true;
	tides_status s = tides_changed_since(st.db, ks.key[m->rank], ks.len[m->rank], m->since, &changed);

	if (s != TIDES_OK)
	{
		FAILF("changed_since (%s): %s: %s", what, tides_status_name(s), tides_errmsg(st.db));
		return true;
	}
	if (!changed && cur[m->rank] != m->ver)
	{
		FAILF("changed_since (%s) of rank %u since %llu: unchanged, but version %u was read "
			  "and the oracle holds %u", what, m->rank, (unsigned long long) m->since, m->ver,
			  cur[m->rank]);
		print_key(stderr, ks.key[m->rank], ks.len[m->rank]);
		fputc('\n', stderr);
	}
	if (changed)
		cnt.changed++;
	else
		cnt.unchanged++;
	return changed;
}

/*
 * Mark a key: read it by get (the read point taken just before), through a
 * fresh iterator, or through a held one (an older view: its version is the
 * held copy's), and ask at once -- nothing was written since a get or a fresh
 * iterator, so the answer should be "unchanged" (a dropped prefix over the
 * key, or a flush since a held iterator opened, may still say "changed").
 */
static void
op_mark(void)
{
	mark	   *m = &marks[tides_rand_uniform(&rnd, MAX_MARKS)];
	int			how = (int) tides_rand_uniform(&rnd, 4);
	held_iter  *h = &held[tides_rand_uniform(&rnd, MAX_HELD)];

	m->rank = pick_rank();
	if (how == 3 && h->used)
	{
		m->since = tides_iter_read_point(h->it);
		m->ver = h->vers[m->rank];
	}
	else if (how == 2)
	{
		tides_iter *it = tides_iter_new(st.db, NULL);

		if (it == NULL)
		{
			FAILF("tides_iter_new returned NULL");
			return;
		}
		tides_iter_seek(it, ks.key[m->rank], ks.len[m->rank]);
		m->since = tides_iter_read_point(it);
		m->ver = cur[m->rank];
		tides_iter_free(it);
	}
	else
	{
		m->since = tides_read_point(st.db);
		m->ver = cur[m->rank];
		check_get(m->rank, cur, NULL, "get(marked)");
	}
	m->used = true;
	cnt.marks++;
	if (check_mark(m, "at once") && how != 3)
		cnt.fresh_changed++;
}

static void
op_check_mark(void)
{
	mark	   *m = &marks[tides_rand_uniform(&rnd, MAX_MARKS)];

	if (m->used)
		check_mark(m, "later");
}

/* tides_range_changed_since for m: "unchanged" only while the oracle agrees */
static bool
check_range_mark(const range_mark *m, const char *what)
{
	static const uint8_t beyond[9] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	bool		changed = true;
	tides_status s;

	s = tides_range_changed_since(st.db, ks.key[m->lo], ks.len[m->lo],
								  m->hi < ks.n ? ks.key[m->hi] : beyond,
								  m->hi < ks.n ? ks.len[m->hi] : sizeof(beyond), m->since, &changed);
	if (s != TIDES_OK)
	{
		FAILF("range_changed_since (%s): %s: %s", what, tides_status_name(s), tides_errmsg(st.db));
		return true;
	}
	for (uint32_t r = m->lo; !changed && r < m->hi; r++)
		if (cur[r] != m->vers[r - m->lo])
		{
			FAILF("range_changed_since (%s) of ranks [%u, %u) since %llu: unchanged, but rank %u "
				  "was read at version %u and the oracle holds %u", what, m->lo, m->hi,
				  (unsigned long long) m->since, r, m->vers[r - m->lo], cur[r]);
			break;
		}
	if (changed)
		cnt.rchanged++;
	else
		cnt.runchanged++;
	return changed;
}

/*
 * Mark a range of 1 to 64 ranks: read at a fresh read point (the oracle's
 * versions now) or at a held iterator's (its copy's), and ask at once.
 */
static void
op_range_mark(void)
{
	range_mark *m = &rmarks[tides_rand_uniform(&rnd, MAX_MARKS)];
	held_iter  *h = &held[tides_rand_uniform(&rnd, MAX_HELD)];
	bool		from_held = tides_rand_uniform(&rnd, 3) == 0 && h->used;
	const uint32_t *vers = from_held ? h->vers : cur;

	m->lo = pick_rank();
	m->hi = m->lo + 1 + (uint32_t) tides_rand_uniform(&rnd, 64);
	if (m->hi > ks.n)
		m->hi = ks.n;
	m->since = from_held ? tides_iter_read_point(h->it) : tides_read_point(st.db);
	free(m->vers);
	m->vers = malloc((m->hi - m->lo) * sizeof(uint32_t));
	memcpy(m->vers, vers + m->lo, (m->hi - m->lo) * sizeof(uint32_t));
	m->used = true;
	cnt.rmarks++;
	if (check_range_mark(m, "at once") && !from_held)
		cnt.rfresh_changed++;
}

static void
op_check_range_mark(void)
{
	range_mark *m = &rmarks[tides_rand_uniform(&rnd, MAX_MARKS)];

	if (m->used)
		check_range_mark(m, "later");
}

/* read points are of this engine since it was opened */
static void
forget_marks(void)
{
	memset(marks, 0, sizeof(marks));
	for (int i = 0; i < MAX_MARKS; i++)
	{
		free(rmarks[i].vers);
		rmarks[i].vers = NULL;
		rmarks[i].used = false;
	}
}

/* --------------------------------------------------- drops and restarts */

static void
op_drop_prefix(void)
{
	uint8_t		prefix[8];
	uint64_t	tree = tides_rand_uniform(&rnd, TREES);
	tides_status s;

	tides_put_be64(prefix, tree);
	s = tides_drop_prefix(st.db, prefix, 8);
	if (s == TIDES_BUSY)
		return;
	if (s != TIDES_OK)
	{
		FAILF("drop_prefix: %s: %s", tides_status_name(s), tides_errmsg(st.db));
		return;
	}
	for (uint32_t r = 0; r < ks.n; r++)
		if (memcmp(ks.key[r], prefix, 8) == 0)
		{
			cur[r] = 0;
			/* reads through snapshots honour the drop too */
			for (int i = 0; i < MAX_SNAPS; i++)
				if (snaps[i].used)
					snaps[i].vers[r] = 0;
		}
	cnt.drops++;
}

static void
restart(bool clean)
{
	tides_status s;
	static const tides_compression comp[] = {TIDES_COMPRESS_LZ4, TIDES_COMPRESS_ZSTD, TIDES_COMPRESS_NONE};

	release_all();
	forget_marks();
	if (!clean && cnt.crashes % 2 == 0)
	{
		/* fill every memtable first: replay must flush to make room */
		for (int i = 0; i < 100000; i++)
		{
			uint32_t	r = pick_rank();
			uint32_t	v = new_version(r, true);
			uint8_t		val[KS_MAX_VALUE];
			size_t		n = ks_value(r, v, true, val);
			tides_batch *b = tides_batch_new();
			tides_status s2;

			tides_batch_put(b, ks.key[r], ks.len[r], val, n);
			s2 = tides_write(st.db, b, NULL);
			tides_batch_free(b);
			if (s2 == TIDES_OK)
				cur[r] = v;
			else
			{
				if (s2 != TIDES_BUSY)
					FAILF("filling memtables: %s", tides_status_name(s2));
				break;
			}
		}
	}
	if (clean)
	{
		s = tides_shutdown(st.db);
		if (s != TIDES_OK)
			FAILF("shutdown: %s: %s", tides_status_name(s), tides_errmsg(st.db));
	}
	cnt.discards += h_stats(st.db).memtable_discards;
	store_crash(&st);
	st.opts.compression = comp[cnt.crashes % 3];
	st.opts.block_size = cnt.crashes % 2 ? 1024 : 4096;
	/* tables of an earlier stem length (or none) must not hide keys */
	st.opts.filter_stem_suffix = (uint32_t[]) {2, 3, 0}[cnt.crashes % 3];
	/* key ranges per tree id, per a shorter prefix, or none: tables of each mix */
	st.opts.range_prefix_len = (uint32_t[]) {8, 0, 3, 8}[cnt.crashes % 4];
	/* an adaptive L0 trigger with its back-pressure shift, sorted runs, or neither */
	st.opts.level0_adaptive_trigger = cnt.crashes % 2 == 0;
	st.opts.level0_tiered = cnt.crashes % 3 == 1;
	s = store_open(&st);
	if (s != TIDES_OK)
	{
		FAILF("recovery failed: %s: %s", tides_status_name(s), st.db ? tides_errmsg(st.db) : "");
		exit(test_finish("test_model"));
	}
	cnt.crashes++;
	fprintf(stderr, "test_model: op %llu: %s restart, replayed %llu batches (%llu bytes) in %.3fs\n",
			(unsigned long long) opno, clean ? "clean" : "crash",
			(unsigned long long) st.info.batches_replayed,
			(unsigned long long) st.info.log_bytes_replayed, st.info.seconds);
	full_scan(NULL, cur, "full scan after restart");
}

int
main(int argc, char **argv)
{
	int			problems;
	int			quiet = 0;

	test_init(argc, argv);
	nops = env_u64("TEST_OPS", 1000000);
	tides_rand_seed(&rnd, test_seed * 0x9E3779B97F4A7C15ull + 1);
	ks_init(&ks, KEYS, TREES, test_seed);
	cur = calloc(ks.n, sizeof(uint32_t));
	nextver = malloc(ks.n * sizeof(uint32_t));
	for (uint32_t i = 0; i < ks.n; i++)
		nextver[i] = 1;

	memset(&st, 0, sizeof(st));
	tides_options_default(&st.opts);
	st.opts.memtable_size = 64 << 10;
	st.opts.memtable_count = 4;
	/* merged flushes (db/flush.c) for most seeds, the default 42 among them */
	st.opts.memtables_per_flush = (uint32_t) (3 - test_seed % 3);
	/* idle memtables discarded after 1 ms for even seeds, the default 42 among them */
	st.opts.memtable_discard_ms = test_seed % 2 == 0 ? 1 : 0;
	st.opts.block_cache_size = 2 << 20;
	st.opts.meta_size = 4 << 20;
	st.opts.block_size = 4096;
	st.opts.log_segment_size = 64 << 10;
	st.opts.target_file_size = 64 << 10;
	st.opts.level_base_size = 64 << 10;
	st.opts.level_size_ratio = 4;
	st.opts.level0_compaction_trigger = 4;
	st.opts.level0_slowdown_trigger = 8;
	st.opts.level0_stop_trigger = 12;
	st.opts.delayed_write_rate = 0;
	st.opts.max_open_files = 16;
	st.opts.sync_mode = TIDES_SYNC_NONE;
	st.opts.filter_stem_suffix = 2;
	st.opts.range_prefix_len = 8;	/* the tree ids (dropped prefixes) */
	st.opts.level0_adaptive_trigger = true;
	st.dir = fast_tmpdir("model");
	fprintf(stderr, "test_model: seed %llu, %llu ops, %u keys, %u memtables per flush, dir %s\n",
			(unsigned long long) test_seed, (unsigned long long) nops, ks.n,
			st.opts.memtables_per_flush, st.dir);
	if (store_open(&st) != TIDES_OK)
	{
		FAILF("open failed");
		return test_finish("test_model");
	}

	for (opno = 1; opno <= nops && !too_many_failures(); opno++)
	{
		uint64_t	p = tides_rand_uniform(&rnd, 1000);

		if (p < 300)
			op_put();
		else if (p < 380)
			op_delete();
		else if (p < 440)
			op_batch();
		else if (p < 680)
			op_get();
		else if (p < 700)
			op_get_into();
		else if (p < 740)
			op_get_snapshot();
		else if (p < 790)
			op_scan();
		else if (p < 800)
			op_stem_read();
		else if (p < 806)
			op_snapshot();
		else if (p < 808)
			op_held();
		else if (p < 810)
		{
			tides_status s = tides_seal_memtable(st.db);

			if (s != TIDES_OK && s != TIDES_BUSY)
				FAILF("seal: %s", tides_status_name(s));
		}
		else if (p < 830)
			op_mark();
		else if (p < 860)
			op_check_mark();
		else if (p < 870)
			op_range_mark();
		else if (p < 885)
			op_check_range_mark();
		else
			op_get_absent();

		if (opno % 16 == 0)
			background();
		if (opno % (nops / 6 + 1) == 0)
			op_drop_prefix();
		if (opno % 100000 == 0)
			full_scan(NULL, cur, "periodic full scan");
		if (opno == nops / 4 || opno == nops / 2 || opno == 3 * nops / 4)
			restart(opno == nops / 2);
	}

	/* the end: settle everything, compare, verify, one last crash */
	for (int i = 0; i < 100 && tides_seal_memtable(st.db) == TIDES_BUSY; i++)
		drain(st.db);
	if (drain(st.db) != TIDES_OK)
		FAILF("final drain: %s", tides_errmsg(st.db));
	{
		tides_iter_options bulk = {.read_ahead = true};
		tides_iter *it;
		tides_stats before,
					after;

		tides_get_stats(st.db, &before);
		it = tides_iter_new(st.db, &bulk);
		full_scan(it, cur, "final full scan");
		tides_iter_free(it);
		tides_get_stats(st.db, &after);
		fprintf(stderr, "test_model: the final full scan took %llu blocks from helpers\n",
				(unsigned long long) (after.blocks_fetched - before.blocks_fetched));
		if (after.blocks_fetched == before.blocks_fetched)
			FAILF("the final full scan, a bulk read, fetched no block ahead");
	}
	problems = tides_verify(st.db, report_problem, &quiet);
	if (problems != 0)
		FAILF("tides_verify found %d problems", problems);
	restart(false);

	fprintf(stderr, "test_model: %llu puts, %llu deletes, %llu batches, %llu gets, %llu scans "
			"(%llu steps), %llu stem reads, %llu snapshots, %llu held iterators, %llu busy, %llu drops, "
			"%llu restarts, %llu full scans, %llu held iterators released for a stall; deepest level %d, up to %llu files\n",
			(unsigned long long) cnt.puts, (unsigned long long) cnt.dels,
			(unsigned long long) cnt.batches, (unsigned long long) cnt.gets,
			(unsigned long long) cnt.scans, (unsigned long long) cnt.steps,
			(unsigned long long) cnt.stem_reads,
			(unsigned long long) cnt.snaps, (unsigned long long) cnt.held,
			(unsigned long long) cnt.busy, (unsigned long long) cnt.drops,
			(unsigned long long) cnt.crashes, (unsigned long long) cnt.fullscans,
			(unsigned long long) cnt.held_released,
			max_level_seen, (unsigned long long) max_files_seen);
	fprintf(stderr, "test_model: %llu marked reads: %llu answers unchanged, %llu changed "
			"(%llu of them at once after a get or a fresh iterator); %llu idle memtables discarded\n",
			(unsigned long long) cnt.marks, (unsigned long long) cnt.unchanged,
			(unsigned long long) cnt.changed, (unsigned long long) cnt.fresh_changed,
			(unsigned long long) (cnt.discards + h_stats(st.db).memtable_discards));
	if (st.opts.memtable_discard_ms != 0 && cnt.discards + h_stats(st.db).memtable_discards == 0)
		FAILF("no idle memtable was ever discarded");
	/* "changed" is always safe; a read point that never proves anything is useless */
	if (cnt.marks > 100 && cnt.fresh_changed * 4 > cnt.marks)
		FAILF("changed_since answered \"changed\" right after %llu of %llu marked reads",
			  (unsigned long long) cnt.fresh_changed, (unsigned long long) cnt.marks);
	fprintf(stderr, "test_model: %llu marked ranges: %llu answers unchanged, %llu changed "
			"(%llu of them at once at a fresh read point)\n",
			(unsigned long long) cnt.rmarks, (unsigned long long) cnt.runchanged,
			(unsigned long long) cnt.rchanged, (unsigned long long) cnt.rfresh_changed);
	if (cnt.rmarks > 100 && cnt.rfresh_changed * 4 > cnt.rmarks)
		FAILF("range_changed_since answered \"changed\" right after %llu of %llu marked ranges",
			  (unsigned long long) cnt.rfresh_changed, (unsigned long long) cnt.rmarks);
	if (max_level_seen < 2)
		FAILF("the store never grew past level %d: options too large?", max_level_seen);
	release_all();
	forget_marks();
	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(st.dir);
	else
		fprintf(stderr, "test_model: store kept in %s\n", st.dir);
	free(st.dir);
	free(cur);
	free(nextver);
	ks_free(&ks);
	return test_finish("test_model");
}
