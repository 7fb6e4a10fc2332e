/*
 * test_db_basic.c -- the engine end to end in one process: writes, reads,
 * iteration both ways, deletes, flush, compaction, reopen after recovery,
 * snapshots, tags and dropped prefixes.
 */
#include <string.h>

#include "testlib.h"
#include "util/random.h"

typedef struct env
{
	tides_options opts;
	void	   *region;
	size_t		size;
	char	   *dir;
	tides_db   *db;
} env;

static void
env_open(env *e, bool fresh_region)
{
	tides_recovery_info info;

	if (fresh_region)
	{
		e->size = tides_region_size(&e->opts);
		CHECK(e->size > 0);
		e->region = test_shared_alloc(e->size);
		CHECK_OK(tides_region_init(e->region, e->size, &e->opts));
	}
	CHECK_OK(tides_open(e->region, e->dir, &e->opts, NULL, true, &info, &e->db));
}

static void
env_crash(env *e)
{
	/* drop the process state and the region without any shutdown */
	tides_close(e->db);
	test_shared_free(e->region, e->size);
	e->db = NULL;
}

/* a crash, then recovery into a fresh region */
static void
env_restart(env *e, tides_recovery_info *info)
{
	env_crash(e);
	e->size = tides_region_size(&e->opts);
	e->region = test_shared_alloc(e->size);
	CHECK_OK(tides_region_init(e->region, e->size, &e->opts));
	CHECK_OK(tides_open(e->region, e->dir, &e->opts, NULL, true, &info[0], &e->db));
}

static void
put(tides_db *db, const char *k, const char *v)
{
	tides_batch *b = tides_batch_new();

	CHECK_OK(tides_batch_put(b, k, strlen(k), v, strlen(v)));
	CHECK_OK(tides_write(db, b, NULL));
	tides_batch_free(b);
}

static void
del(tides_db *db, const char *k)
{
	tides_batch *b = tides_batch_new();

	CHECK_OK(tides_batch_delete(b, k, strlen(k)));
	CHECK_OK(tides_write(db, b, NULL));
	tides_batch_free(b);
}

static bool
get_is(tides_db *db, const char *k, const char *want)
{
	void	   *v;
	size_t		n;
	tides_status s = tides_get(db, NULL, k, strlen(k), &v, &n);
	bool		ok;

	if (want == NULL)
		return s == TIDES_NOT_FOUND;
	ok = s == TIDES_OK && n == strlen(want) && memcmp(v, want, n) == 0;
	free(v);
	return ok;
}

static void
drain(tides_db *db)
{
	bool		did = true;

	while (did)
	{
		bool		a = false,
					b = false,
					c = false;

		CHECK_OK(tides_flush_work(db, &a));
		CHECK_OK(tides_compact_work(db, &b));
		CHECK_OK(tides_maint_work(db, &c));
		did = a || b || c;
	}
}

static void
test_basic(env *e)
{
	tides_db   *db = e->db;

	put(db, "apple", "red");
	put(db, "banana", "yellow");
	put(db, "cherry", "dark red");
	CHECK(get_is(db, "apple", "red"));
	CHECK(get_is(db, "banana", "yellow"));
	CHECK(get_is(db, "durian", NULL));
	put(db, "apple", "green");
	CHECK(get_is(db, "apple", "green"));
	del(db, "banana");
	CHECK(get_is(db, "banana", NULL));

	CHECK_OK(tides_seal_memtable(db));
	drain(db);
	CHECK(get_is(db, "apple", "green"));
	CHECK(get_is(db, "banana", NULL));
	CHECK(get_is(db, "cherry", "dark red"));
}

static void
test_iterate(env *e)
{
	tides_db   *db = e->db;
	tides_iter *it;
	const char *expect[] = {"apple", "cherry", "elder", "fig"};
	int			i = 0;
	size_t		n;

	put(db, "elder", "black");
	put(db, "fig", "purple");
	del(db, "zzz");
	it = tides_iter_new(db, NULL);
	CHECK(it != NULL);
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
	{
		const char *k = tides_iter_key(it, &n);

		CHECK(i < 4 && n == strlen(expect[i]) && memcmp(k, expect[i], n) == 0);
		i++;
	}
	CHECK(i == 4);
	i = 3;
	for (tides_iter_last(it); tides_iter_valid(it); tides_iter_prev(it))
	{
		const char *k = tides_iter_key(it, &n);

		CHECK(i >= 0 && n == strlen(expect[i]) && memcmp(k, expect[i], n) == 0);
		i--;
	}
	CHECK(i == -1);
	tides_iter_seek(it, "b", 1);
	CHECK(tides_iter_valid(it));
	CHECK(memcmp(tides_iter_key(it, &n), "cherry", 6) == 0);
	tides_iter_prev(it);
	CHECK(tides_iter_valid(it) && memcmp(tides_iter_key(it, &n), "apple", 5) == 0);
	tides_iter_next(it);
	CHECK(tides_iter_valid(it) && memcmp(tides_iter_key(it, &n), "cherry", 6) == 0);
	tides_iter_seek_for_prev(it, "d", 1);
	CHECK(tides_iter_valid(it) && memcmp(tides_iter_key(it, &n), "cherry", 6) == 0);
	CHECK_OK(tides_iter_status(it));
	tides_iter_free(it);

	{
		tides_iter_options o = {.lower = "b", .lower_len = 1, .upper = "f", .upper_len = 1, .fill_cache = true};

		it = tides_iter_new(db, &o);
		i = 0;
		for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
			i++;
		CHECK(i == 2);			/* cherry, elder */
		i = 0;
		for (tides_iter_last(it); tides_iter_valid(it); tides_iter_prev(it))
			i++;
		CHECK(i == 2);
		tides_iter_free(it);
	}
}

static void
test_snapshot(env *e)
{
	tides_db   *db = e->db;
	tides_snapshot snap;
	void	   *v;
	size_t		n;

	put(db, "snap", "one");
	CHECK_OK(tides_snapshot_acquire(db, &snap));
	put(db, "snap", "two");
	CHECK_OK(tides_seal_memtable(db));
	drain(db);
	CHECK_OK(tides_get(db, &snap, "snap", 4, &v, &n));
	CHECK(n == 3 && memcmp(v, "one", 3) == 0);
	free(v);
	CHECK(get_is(db, "snap", "two"));
	tides_snapshot_release(db, &snap);
}

static void
test_recovery(env *e)
{
	tides_recovery_info info;
	tides_batch *b = tides_batch_new();

	uint64_t	tag;
	bool		seal,
				dsync;

	put(e->db, "after-flush", "in the log only");
	/* what a batch carries reads back; a cleared batch carries nothing */
	CHECK(tides_batch_get_tag(b, &tag, &seal, &dsync) && tag == 0 && !seal && !dsync);
	tides_batch_set_tag(b, 77, true);
	tides_batch_defer_sync(b);
	CHECK(tides_batch_get_tag(b, &tag, &seal, &dsync) && tag == 77 && seal && dsync);
	tides_batch_clear(b);
	CHECK(tides_batch_get_tag(b, &tag, &seal, &dsync) && tag == 0 && !seal && !dsync);
	/* a tagged transaction whose seal never comes, and one that is sealed */
	tides_batch_put(b, "t1", 2, "x", 1);
	tides_batch_set_tag(b, 1001, false);
	CHECK(tides_batch_get_tag(b, &tag, &seal, &dsync) && tag == 1001 && !seal && !dsync);
	CHECK_OK(tides_write(e->db, b, NULL));
	tides_batch_clear(b);
	tides_batch_put(b, "t2", 2, "y", 1);
	tides_batch_set_tag(b, 1002, true);
	CHECK_OK(tides_write(e->db, b, NULL));
	/* a transaction sealed by an empty batch of its own */
	tides_batch_clear(b);
	tides_batch_put(b, "t3", 2, "z", 1);
	tides_batch_set_tag(b, 1003, false);
	CHECK_OK(tides_write(e->db, b, NULL));
	tides_batch_clear(b);
	tides_batch_set_tag(b, 1003, true);
	CHECK_OK(tides_write(e->db, b, NULL));
	tides_batch_free(b);
	CHECK_OK(tides_sync(e->db, 0, true));

	env_restart(e, &info);
	CHECK(info.batches_replayed >= 3);
	CHECK(info.n_unsealed_tags == 1 && info.unsealed_tags[0] == 1001);
	CHECK(get_is(e->db, "after-flush", "in the log only"));
	CHECK(get_is(e->db, "apple", "green"));
	CHECK(get_is(e->db, "banana", NULL));
	CHECK(get_is(e->db, "t2", "y"));
	put(e->db, "post", "recovery");
	CHECK(get_is(e->db, "post", "recovery"));
}

static void
test_drop_prefix(env *e)
{
	char		k[32];

	for (int i = 0; i < 100; i++)
	{
		snprintf(k, sizeof(k), "drop/%03d", i);
		put(e->db, k, "v");
	}
	put(e->db, "dropx", "stays");
	CHECK_OK(tides_seal_memtable(e->db));
	drain(e->db);
	CHECK_OK(tides_drop_prefix(e->db, "drop/", 5));
	CHECK(get_is(e->db, "drop/005", NULL));
	CHECK(get_is(e->db, "dropx", "stays"));
	put(e->db, "drop/new", "visible");
	CHECK(get_is(e->db, "drop/new", "visible"));
	drain(e->db);
	CHECK(get_is(e->db, "drop/005", NULL));
	CHECK(get_is(e->db, "drop/new", "visible"));
}

/*
 * Keys of the longest length share all but their last byte: they go through
 * the memtable, the log, a flush, compaction (data and index blocks, file
 * bounds in the manifest) and recovery; one byte more is refused.
 */
static void
test_long_keys(env *e)
{
	enum
	{
		NKEYS = 4
	};
	uint8_t    *key = malloc(TIDES_MAX_KEY_LEN + 1);
	tides_batch *b = tides_batch_new();
	tides_recovery_info info;
	tides_full_compaction fc;
	tides_iter *it;
	int			seen = 0;

	memset(key, 'L', TIDES_MAX_KEY_LEN + 1);
	CHECK(tides_batch_put(b, key, TIDES_MAX_KEY_LEN + 1, "v", 1) == TIDES_INVALID);
	CHECK(tides_batch_delete(b, key, TIDES_MAX_KEY_LEN + 1) == TIDES_INVALID);
	for (int round = 0; round < 2; round++)
	{
		/* round 0 ends in SSTables, round 1 only in the log */
		for (int i = round; i < NKEYS; i += 2)
		{
			key[TIDES_MAX_KEY_LEN - 1] = (uint8_t) ('a' + i);
			/* one a batch: two would pass half of this test's log segment */
			CHECK_OK(tides_batch_put(b, key, TIDES_MAX_KEY_LEN, &key[TIDES_MAX_KEY_LEN - 1], 1));
			CHECK_OK(tides_write(e->db, b, NULL));
			tides_batch_clear(b);
		}
		if (round == 0)
		{
			CHECK_OK(tides_seal_memtable(e->db));
			drain(e->db);
			tides_full_compaction_begin(e->db, &fc);
			for (bool done = false, did; !done;)
				CHECK_OK(tides_full_compaction_step(e->db, &fc, &done, &did));
		}
	}
	CHECK_OK(tides_sync(e->db, 0, true));
	env_restart(e, &info);

	for (int i = 0; i < NKEYS; i++)
	{
		void	   *v;
		size_t		n;
		tides_status s;

		key[TIDES_MAX_KEY_LEN - 1] = (uint8_t) ('a' + i);
		s = tides_get(e->db, NULL, key, TIDES_MAX_KEY_LEN, &v, &n);
		CHECK(s == TIDES_OK && n == 1 && ((char *) v)[0] == 'a' + i);
		if (s == TIDES_OK)
			free(v);
	}
	key[TIDES_MAX_KEY_LEN - 1] = 'a';
	it = tides_iter_new(e->db, NULL);
	for (tides_iter_seek(it, key, TIDES_MAX_KEY_LEN); tides_iter_valid(it); tides_iter_next(it))
	{
		size_t		klen;
		const uint8_t *k = tides_iter_key(it, &klen);

		if (klen != TIDES_MAX_KEY_LEN || k[0] != 'L')
			break;
		CHECK(k[klen - 1] == 'a' + seen);
		seen++;
	}
	CHECK(seen == NKEYS);
	tides_iter_free(it);
	tides_batch_free(b);
	free(key);
}

static void
report_problem(void *arg, const char *file, const char *problem)
{
	fprintf(stderr, "verify: %s: %s\n", file, problem);
}

int
main(int argc, char **argv)
{
	env			e;

	test_init(argc, argv);
	memset(&e, 0, sizeof(e));
	tides_options_default(&e.opts);
	e.opts.memtable_size = 256 << 10;
	e.opts.block_cache_size = 4 << 20;
	e.opts.meta_size = 2 << 20;
	e.opts.log_segment_size = 256 << 10;
	e.opts.target_file_size = 128 << 10;
	e.opts.level_base_size = 256 << 10;
	e.opts.sync_mode = TIDES_SYNC_NONE;
	e.dir = test_tmpdir("basic");
	env_open(&e, true);
	test_basic(&e);
	test_iterate(&e);
	test_snapshot(&e);
	test_recovery(&e);
	test_drop_prefix(&e);
	test_long_keys(&e);
	CHECK(tides_verify(e.db, report_problem, NULL) == 0);
	tides_close(e.db);
	test_rmdir(e.dir);
	free(e.dir);
	return test_finish("test_db_basic");
}
