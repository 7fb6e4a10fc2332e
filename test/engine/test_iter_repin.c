/*
 * test_iter_repin.c -- tides_iter_repin: a writer that waits for a free
 * memtable while its own iterator pins the ones the wait is for gets them
 * back by repinning, and a repinned iterator walks on as if nothing had
 * happened, against a model of the keys, forward and backward, while the
 * entries around it are deleted and inserted; and the read point a parked
 * entry reports.
 */
#include "harness.h"

/* ------------------------------------------------------------------ helpers */

static tides_status
try_put(tides_db *db, const char *k, const char *v)
{
	tides_batch *b = tides_batch_new();
	tides_status s;

	CHECK_OK(tides_batch_put(b, k, strlen(k), v, strlen(v)));
	s = tides_write(db, b, NULL);
	tides_batch_free(b);
	return s;
}

static void
put_or_drain(tides_db *db, const char *k, const char *v)
{
	tides_status s;

	while ((s = try_put(db, k, v)) == TIDES_BUSY)
		CHECK_OK(drain(db));
	CHECK_OK(s);
}

static void
del_or_drain(tides_db *db, const char *k)
{
	tides_batch *b = tides_batch_new();
	tides_status s;

	CHECK_OK(tides_batch_delete(b, k, strlen(k)));
	while ((s = tides_write(db, b, NULL)) == TIDES_BUSY)
		CHECK_OK(drain(db));
	CHECK_OK(s);
	tides_batch_free(b);
}

static bool
key_is(tides_iter *it, const char *want)
{
	size_t		n;
	const void *k;

	if (!tides_iter_valid(it))
		return want == NULL;
	if (want == NULL)
		return false;
	k = tides_iter_key(it, &n);
	return n == strlen(want) && memcmp(k, want, n) == 0;
}

/*
 * The self-deadlock: an iterator opened while memtable A is sealed and B
 * active pins both; the writer fills B and then C, and C cannot be sealed:
 * A and B are flushed but pinned by the writer's own iterator.  Work cannot
 * help; a repin can, and the iterator stays on its entry.
 */
static void
test_writer_unblocked(store *s)
{
	tides_db   *db = s->db;
	tides_iter *it;
	char		k[32],
				v[64];
	bool		stuck = false;
	int			i;

	for (i = 0; i < 100; i++)
	{
		sprintf(k, "a%06d", i);
		put_or_drain(db, k, "old");
	}
	CHECK_OK(tides_seal_memtable(db));	/* A: sealed, not flushed */
	put_or_drain(db, "a000000x", "in B");
	it = tides_iter_new(db, NULL);
	CHECK(it != NULL);
	tides_iter_first(it);
	CHECK(key_is(it, "a000000"));

	memset(v, 'v', sizeof(v) - 1);
	v[sizeof(v) - 1] = '\0';
	for (i = 0; i < 100000 && !stuck; i++)
	{
		tides_status st;

		sprintf(k, "z%06d", i);
		st = try_put(db, k, v);
		if (st == TIDES_BUSY)
		{
			CHECK_OK(drain(db));
			st = try_put(db, k, v);
			if (st == TIDES_BUSY)
			{
				CHECK_OK(drain(db));
				st = try_put(db, k, v);
				stuck = st == TIDES_BUSY;
			}
		}
		if (!stuck)
			CHECK_OK(st);
	}
	CHECK(stuck);				/* the pins are what it waits for */

	CHECK_OK(tides_iter_repin(it));
	CHECK(key_is(it, "a000000"));
	{
		size_t		n;
		const void *val = tides_iter_value(it, &n);

		CHECK(n == 3 && memcmp(val, "old", 3) == 0);
	}
	CHECK_OK(drain(db));
	CHECK_OK(try_put(db, k, v));	/* the write that was stuck */

	/* the walk goes on in order, and now sees the later writes */
	tides_iter_next(it);
	CHECK(key_is(it, "a000000x"));
	{
		int			a = 1,
					z = 0;
		char		prev[32] = "a000000x";

		for (tides_iter_next(it); tides_iter_valid(it); tides_iter_next(it))
		{
			size_t		n;
			const char *cur = tides_iter_key(it, &n);

			CHECK(n < sizeof(prev) && memcmp(cur, prev, n) > 0);
			memcpy(prev, cur, n);
			prev[n] = '\0';
			if (prev[0] == 'a')
				a++;
			else
				z++;
		}
		CHECK(a == 100);
		/* every z key but the last, written after the repin took its read point */
		CHECK(z == i - 1);
	}
	CHECK_OK(tides_iter_status(it));
	tides_iter_free(it);
}

/* ------------------------------------------------------------ the model walk */

#define NKEYS 400

static bool present[NKEYS];

static void
mkey(char *k, int i)
{
	sprintf(k, "m%04d", i);
}

/* the model's answer: the first present key after (before) i, or -1 */
static int
model_step(int i, bool backward)
{
	for (int j = backward ? i - 1 : i + 1; j >= 0 && j < NKEYS; j += backward ? -1 : 1)
		if (present[j])
			return j;
	return -1;
}

/*
 * Walk every key; before each step change the neighbourhood (delete the
 * current key, insert or delete its neighbours), make the superversion
 * change (seal and flush) and repin: the iterator must still show its
 * entry, and the step must land where the model says.
 */
static void
walk(store *s, bool backward, uint64_t seed)
{
	tides_db   *db = s->db;
	tides_rand	rnd;
	tides_iter *it;
	char		k[32];
	int			cur,
				steps = 0;

	tides_rand_seed(&rnd, seed);
	memset(present, 0, sizeof(present));
	for (int i = 0; i < NKEYS; i += 2)
	{
		mkey(k, i);
		put_or_drain(db, k, k);
		present[i] = true;
	}
	it = tides_iter_new(db, &(tides_iter_options)
						{
							.lower = "m", .lower_len = 1, .upper = "n", .upper_len = 1, .fill_cache = true
						});
	CHECK(it != NULL);
	if (backward)
		tides_iter_last(it);
	else
		tides_iter_first(it);
	cur = backward ? NKEYS - 2 : 0;
	while (cur >= 0)
	{
		int			r = (int) (tides_rand_next(&rnd) % 8);
		int			near = backward ? cur - 1 : cur + 1;
		char		ck[32];

		mkey(ck, cur);
		CHECK(key_is(it, ck));
		if (r <= 2)
		{
			del_or_drain(db, ck);		/* the entry it stands on */
			present[cur] = false;
		}
		if ((r == 1 || r == 3) && near >= 0 && near < NKEYS)
		{
			mkey(k, near);				/* a new key just ahead */
			put_or_drain(db, k, k);
			present[near] = true;
		}
		if (r == 4)
		{
			int			next = model_step(cur, backward);

			if (next >= 0)
			{
				mkey(k, next);			/* the next key goes */
				del_or_drain(db, k);
				present[next] = false;
			}
		}
		if (r != 7)
		{
			CHECK_OK(tides_seal_memtable(db));
			CHECK_OK(drain(db));
		}
		CHECK_OK(tides_iter_repin(it));
		CHECK(key_is(it, ck));			/* still shown, even if deleted */
		{
			size_t		n;
			const void *v = tides_iter_value(it, &n);

			CHECK(n == strlen(ck) && memcmp(v, ck, n) == 0);
		}
		if (backward)
			tides_iter_prev(it);
		else
			tides_iter_next(it);
		cur = model_step(cur, backward);
		if (cur < 0)
			CHECK(!tides_iter_valid(it));
		steps++;
	}
	CHECK_OK(tides_iter_status(it));
	CHECK(steps > NKEYS / 4);
	tides_iter_free(it);
	/* clean up for the next walk */
	for (int i = 0; i < NKEYS; i++)
		if (present[i])
		{
			mkey(k, i);
			del_or_drain(db, k);
		}
}

/* keys prefix1 and prefix2, and an iterator over [prefix, upper) standing on the first */
static tides_iter *
two_keys(tides_db *db, const char *prefix, const char *upper)
{
	char		k[8];
	tides_iter *it;

	snprintf(k, sizeof(k), "%s1", prefix);
	put_or_drain(db, k, "one");
	snprintf(k, sizeof(k), "%s2", prefix);
	put_or_drain(db, k, "two");
	it = tides_iter_new(db, &(tides_iter_options)
						{
							.lower = prefix, .lower_len = strlen(prefix), .upper = upper,
							.upper_len = strlen(upper), .fill_cache = true
						});
	tides_iter_first(it);
	return it;
}

/* a repin with nothing changed keeps the iterator as it is, parked or not */
static void
test_repin_unchanged(store *s)
{
	tides_db   *db = s->db;
	tides_iter *it;

	it = two_keys(db, "u", "v");
	CHECK(key_is(it, "u1"));
	CHECK_OK(tides_iter_repin(it));
	CHECK_OK(tides_iter_repin(it));
	CHECK(key_is(it, "u1"));
	tides_iter_next(it);
	CHECK(key_is(it, "u2"));
	tides_iter_next(it);
	CHECK(!tides_iter_valid(it));
	/* an exhausted iterator stays exhausted, and can start over */
	CHECK_OK(tides_seal_memtable(db));
	CHECK_OK(drain(db));
	CHECK_OK(tides_iter_repin(it));
	CHECK(!tides_iter_valid(it));
	tides_iter_first(it);
	CHECK(key_is(it, "u1"));
	tides_iter_free(it);
}

/*
 * The read point of the entry shown: a parked entry was read in the old
 * view, so it keeps the old point (a change since must still be seen by
 * tides_changed_since); the entries after it come from the new view.
 */
static void
test_repin_read_point(store *s)
{
	tides_db   *db = s->db;
	tides_iter *it;
	uint64_t	before;
	bool		changed = false;

	it = two_keys(db, "r", "s");
	CHECK(key_is(it, "r1"));
	before = tides_iter_read_point(it);
	CHECK(before == tides_read_point(db));
	CHECK_OK(tides_changed_since(db, "r1", 2, before, &changed));
	CHECK(!changed);
	put_or_drain(db, "r1", "one again");
	/* a repin over the same superversion keeps the view; a flush makes a new one */
	CHECK_OK(tides_seal_memtable(db));
	CHECK_OK(drain(db));
	CHECK_OK(tides_iter_repin(it));
	CHECK(key_is(it, "r1"));	/* parked: the old value, read at the old point */
	CHECK(tides_iter_read_point(it) == before);
	CHECK_OK(tides_changed_since(db, "r1", 2, tides_iter_read_point(it), &changed));
	CHECK(changed);
	tides_iter_next(it);
	CHECK(key_is(it, "r2"));
	CHECK(tides_iter_read_point(it) > before);
	CHECK(tides_iter_read_point(it) == tides_read_point(db));
	tides_iter_free(it);
}

int
main(int argc, char **argv)
{
	store		s;

	test_init(argc, argv);
	memset(&s, 0, sizeof(s));
	small_store_opts(&s.opts);
	s.dir = fast_tmpdir("repin");
	CHECK_OK(store_open(&s));
	test_writer_unblocked(&s);
	test_repin_unchanged(&s);
	test_repin_read_point(&s);
	for (uint64_t seed = 1; seed <= 3; seed++)
	{
		walk(&s, false, test_seed * 31 + seed);
		walk(&s, true, test_seed * 37 + seed);
	}
	CHECK(tides_verify(s.db, report_problem, NULL) == 0);
	store_crash(&s);
	test_rmdir(s.dir);
	free(s.dir);
	return test_finish("test_iter_repin");
}
