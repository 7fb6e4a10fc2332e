/*
 * test_table_cache.c -- the per-process reader cache: never more than
 * max_open readers unless pinned, pins respected by eviction, iterators
 * holding pins, evicting a pinned (deleted) file, and open errors.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
#include "util/dbformat.h"
#include "table/sst.h"
#include "table/table_cache.h"

#define NTABLES 10

/* table i holds keys "t<i>-k<j>" for j < 20 */
static uint64_t
make_table(const tides_table_env *env, const char *dir, uint64_t fnum)
{
	char		name[32],
				path[512];
	tides_sst_builder *b;
	tides_sst_props props;
	tides_error err;
	int			fd;
	uint64_t	size;

	tides_sst_file_name(name, sizeof(name), fnum);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = env->vfs->open(env->vfs, path, O_CREAT | O_RDWR | O_TRUNC, 0644);
	CHECK(fd >= 0);
	b = tides_sst_builder_new(env, fd, path);
	for (int j = 0; j < 20; j++)
	{
		uint8_t		k[64];
		char		u[32];
		size_t		ul = (size_t) snprintf(u, sizeof(u), "t%02llu-k%02d", (unsigned long long) fnum, j);
		size_t		kl = tides_ikey_make(k, u, ul, 5, TIDES_KT_VALUE);

		CHECK_OK(tides_sst_builder_add(b, k, kl, (const uint8_t *) u, ul, &err));
	}
	CHECK_OK(tides_sst_builder_finish(b, &props, &err));
	size = props.file_size;
	tides_sst_props_free(&props);
	tides_sst_builder_free(b);
	env->vfs->close(env->vfs, fd);
	return size;
}

static bool
has_key(tides_sst *t, uint64_t fnum, int j)
{
	uint8_t		k[64];
	char		u[32];
	size_t		ul = (size_t) snprintf(u, sizeof(u), "t%02llu-k%02d", (unsigned long long) fnum, j);
	size_t		kl = tides_ikey_make(k, u, ul, 100, TIDES_KT_SEEK);
	tides_iiter *it = tides_sst_iter_new(t, true);
	bool		ok;
	size_t		vl;
	const uint8_t *v;

	tides_iiter_seek(it, k, kl);
	ok = tides_iiter_valid(it);
	if (ok)
	{
		v = tides_iiter_value(it, &vl);
		ok = vl == ul && memcmp(v, u, ul) == 0;
	}
	tides_iiter_destroy(it);
	return ok;
}

int
main(int argc, char **argv)
{
	char	   *dir;
	tides_table_env env = {0};
	tides_table_cache *tc;
	uint64_t	sizes[NTABLES + 1];
	tides_sst  *t[NTABLES + 1];
	tides_error err;

	test_init(argc, argv);
	dir = test_tmpdir("tcache");
	env.vfs = tides_vfs_posix();
	env.block_size = 128;
	env.restart_interval = 4;
	env.bloom_bits_per_key = 10;
	for (uint64_t f = 1; f <= NTABLES; f++)
		sizes[f] = make_table(&env, dir, f);

	tc = tides_table_cache_new(&env, dir, 3);

	/* get and release every table, twice: at most 3 stay open */
	for (int round = 0; round < 2; round++)
		for (uint64_t f = 1; f <= NTABLES; f++)
		{
			tides_sst  *x;

			CHECK_OK(tides_table_cache_get(tc, f, sizes[f], &x, &err));
			CHECK(tides_sst_file_number(x) == f);
			CHECK(has_key(x, f, 7));
			tides_table_cache_release(tc, x);
			CHECK(tides_table_cache_open_count(tc) <= 3);
		}
	/* the same reader comes back while cached */
	{
		tides_sst  *a,
				   *b;

		CHECK_OK(tides_table_cache_get(tc, NTABLES, sizes[NTABLES], &a, &err));
		CHECK_OK(tides_table_cache_get(tc, NTABLES, sizes[NTABLES], &b, &err));
		CHECK(a == b);
		tides_table_cache_release(tc, a);
		tides_table_cache_release(tc, b);
	}

	/* pin 6 tables: the cache goes over its limit rather than close them */
	for (uint64_t f = 1; f <= 6; f++)
		CHECK_OK(tides_table_cache_get(tc, f, sizes[f], &t[f], &err));
	CHECK(tides_table_cache_open_count(tc) == 6);
	/* opening more while everything is pinned works too */
	CHECK_OK(tides_table_cache_get(tc, 7, sizes[7], &t[7], &err));
	CHECK(tides_table_cache_open_count(tc) == 7);
	for (uint64_t f = 1; f <= 7; f++)
		CHECK(has_key(t[f], f, (int) f));	/* all still usable */
	tides_table_cache_evict_all(tc);	/* nothing unpinned: nothing closes */
	CHECK(tides_table_cache_open_count(tc) == 7);
	/* releases shrink it back to the limit */
	for (uint64_t f = 1; f <= 7; f++)
		tides_table_cache_release(tc, t[f]);
	CHECK(tides_table_cache_open_count(tc) == 3);

	/* an iterator holds a pin until destroyed */
	{
		tides_iiter *its[5];

		tides_table_cache_evict_all(tc);
		CHECK(tides_table_cache_open_count(tc) == 0);
		for (int i = 0; i < 5; i++)
			its[i] = tides_table_cache_iter(tc, (uint64_t) i + 1, sizes[i + 1], true);
		CHECK(tides_table_cache_open_count(tc) == 5);
		for (int i = 0; i < 5; i++)
		{
			int			n = 0;

			for (tides_iiter_first(its[i]); tides_iiter_valid(its[i]); tides_iiter_next(its[i]))
				n++;
			CHECK(n == 20 && tides_iiter_status(its[i]) == TIDES_OK);
		}
		for (int i = 0; i < 5; i++)
			tides_iiter_destroy(its[i]);
		CHECK(tides_table_cache_open_count(tc) == 3);
	}

	/* evicting a pinned table: it stays usable, closes on release, reopens fresh */
	{
		tides_sst  *x,
				   *y;

		CHECK_OK(tides_table_cache_get(tc, 9, sizes[9], &x, &err));
		tides_table_cache_evict(tc, 9);
		CHECK(has_key(x, 9, 3));
		CHECK_OK(tides_table_cache_get(tc, 9, sizes[9], &y, &err));
		CHECK(x != y);
		tides_table_cache_release(tc, x);
		tides_table_cache_release(tc, y);
		tides_table_cache_evict(tc, 9);
		CHECK(tides_table_cache_open_count(tc) <= 3);
	}

	/* a missing file: error, and an empty iterator carrying it */
	{
		tides_sst  *x = NULL;
		tides_iiter *it;

		CHECK(tides_table_cache_get(tc, 999, 1000, &x, &err) != TIDES_OK);
		CHECK(strstr(err.msg, "000999.sst") != NULL);
		it = tides_table_cache_iter(tc, 999, 1000, true);
		tides_iiter_first(it);
		CHECK(!tides_iiter_valid(it));
		CHECK(tides_iiter_status(it) != TIDES_OK);
		tides_iiter_destroy(it);
	}
	/* a damaged file fails to open and is not cached */
	{
		char		path[512];
		tides_sst  *x = NULL;

		snprintf(path, sizeof(path), "%s/000010.sst", dir);
		CHECK(truncate(path, (off_t) sizes[10] - 1) == 0);
		tides_table_cache_evict(tc, 10);
		CHECK(tides_table_cache_get(tc, 10, sizes[10] - 1, &x, &err) == TIDES_CORRUPTION);
		CHECK(strstr(err.msg, "000010.sst") != NULL);
	}

	tides_table_cache_free(tc);
	test_rmdir(dir);
	free(dir);
	return test_finish("test_table_cache");
}
