/*
 * test_block_cache.c -- the shared block cache: hits return exactly what
 * was inserted, replacement, size limits, erase_file, eviction under
 * pressure, and several processes inserting and looking up concurrently
 * over one MAP_SHARED region.  Block contents are derived from (file,
 * offset) so that any hit can be checked by whoever gets it.
 */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "cache/block_cache.h"
#include "util/hash.h"
#include "util/random.h"

/* deterministic block length and contents for (file, offset, generation) */
static size_t
block_len(uint64_t file, uint64_t off, size_t maxlen)
{
	uint64_t	h = tides_hash_mix(file, off);

	/* mostly 1..8 KiB, some tiny, some large */
	switch (h % 8)
	{
		case 0:
			return 1 + h % 100;
		case 1:
			return 1 + (h >> 8) % maxlen;
		default:
			return 1024 + (h >> 8) % 7168 > maxlen ? maxlen : 1024 + (h >> 8) % 7168;
	}
}

static void
fill(uint8_t *buf, size_t len, uint64_t file, uint64_t off)
{
	uint64_t	x = tides_hash_mix(file ^ 0xABCDEF, off);

	for (size_t i = 0; i < len; i++)
	{
		if ((i & 7) == 0)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		buf[i] = (uint8_t) (x >> ((i & 7) * 8));
	}
}

static bool
check_block(const uint8_t *got, size_t len, uint64_t file, uint64_t off, size_t maxlen,
			uint8_t *scratch)
{
	if (len != block_len(file, off, maxlen))
		return false;
	fill(scratch, len, file, off);
	return memcmp(got, scratch, len) == 0;
}

typedef struct visit_ctx
{
	uint8_t    *out;
	size_t		len;
} visit_ctx;

/* copy a whole block out through the in-place view */
static void
visit_copy(void *arg, const tides_block_view *v)
{
	visit_ctx  *vc = arg;

	vc->len = v->len;
	if (!tides_block_view_read(v, 0, vc->out, v->len))
		vc->len = 0;
}

static void
test_basic(void)
{
	size_t		sz = tides_block_cache_shmem_size(1 << 20);
	void	   *mem = test_shared_alloc(sz);
	tides_block_cache *c = tides_block_cache_init(mem, 1 << 20);
	size_t		maxb = tides_block_cache_max_block(c);
	uint8_t    *a = malloc(maxb + 1),
			   *b = malloc(maxb + 1);
	size_t		len;
	tides_block_cache_stats st;

	CHECK(maxb == 128 * 1024);
	CHECK(!tides_block_cache_lookup(c, 1, 0, b, maxb, &len));
	CHECK(len == 0);

	/* sizes around frame boundaries */
	{
		size_t		sizes[] = {1, 1023, 1024, 1025, 2048, 4097, maxb};

		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		{
			fill(a, sizes[i], 1, i);
			tides_block_cache_insert(c, 1, i, a, sizes[i]);
		}
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		{
			fill(a, sizes[i], 1, i);
			memset(b, 0, maxb);
			CHECK(tides_block_cache_lookup(c, 1, i, b, maxb, &len));
			CHECK(len == sizes[i] && memcmp(a, b, len) == 0);
		}
	}
	/* in place, through a view */
	{
		visit_ctx	vc = {b, 0};

		fill(a, 4097, 1, 5);
		CHECK(tides_block_cache_visit(c, 1, 5, visit_copy, &vc));
		CHECK(vc.len == 4097 && memcmp(a, b, 4097) == 0);
		CHECK(!tides_block_cache_visit(c, 1, 12345, visit_copy, &vc));
	}
	/* too small a buffer reports the size needed */
	CHECK(!tides_block_cache_lookup(c, 1, 5, b, 100, &len));
	CHECK(len == 4097);
	/* too big to cache, and empty: ignored */
	tides_block_cache_insert(c, 2, 0, a, maxb + 1);
	CHECK(!tides_block_cache_lookup(c, 2, 0, b, maxb, &len));
	tides_block_cache_insert(c, 2, 1, a, 0);
	CHECK(!tides_block_cache_lookup(c, 2, 1, b, maxb, &len));
	/* replacement */
	memset(a, 'x', 3000);
	tides_block_cache_insert(c, 1, 3, a, 3000);
	CHECK(tides_block_cache_lookup(c, 1, 3, b, maxb, &len));
	CHECK(len == 3000 && memcmp(a, b, 3000) == 0);
	tides_block_cache_get_stats(c, &st);
	CHECK(st.entries == 7);
	/* erase a file */
	fill(a, 500, 3, 0);
	tides_block_cache_insert(c, 3, 0, a, 500);
	tides_block_cache_erase_file(c, 1);
	for (size_t i = 0; i < 7; i++)
		CHECK(!tides_block_cache_lookup(c, 1, i, b, maxb, &len));
	CHECK(tides_block_cache_lookup(c, 3, 0, b, maxb, &len) && len == 500);
	tides_block_cache_get_stats(c, &st);
	CHECK(st.entries == 1 && st.used == 1024);
	free(a);
	free(b);
	test_shared_free(mem, sz);
}

/* fill far beyond capacity: eviction keeps everything consistent */
static void
test_pressure(void)
{
	uint64_t	cap = 256 * 1024;
	size_t		sz = tides_block_cache_shmem_size(cap);
	void	   *mem = test_shared_alloc(sz);
	tides_block_cache *c = tides_block_cache_init(mem, cap);
	size_t		maxb = tides_block_cache_max_block(c);
	uint8_t    *a = malloc(maxb),
			   *b = malloc(maxb);
	size_t		len;
	int			hits = 0;
	tides_block_cache_stats st;
	tides_rand	r;

	tides_rand_seed(&r, test_seed);
	for (int i = 0; i < 20000; i++)
	{
		uint64_t	off = tides_rand_uniform(&r, 400) * 4096;
		size_t		l = block_len(7, off, maxb);

		if (tides_block_cache_lookup(c, 7, off, b, maxb, &len))
		{
			hits++;
			CHECK(check_block(b, len, 7, off, maxb, a));
		}
		else
		{
			fill(a, l, 7, off);
			tides_block_cache_insert(c, 7, off, a, l);
		}
	}
	tides_block_cache_get_stats(c, &st);
	CHECK(st.used <= st.capacity);
	CHECK(hits > 1000);
	/* a hot block survives a stream of cold ones (second chance) */
	fill(a, 2000, 8, 0);
	tides_block_cache_insert(c, 8, 0, a, 2000);
	for (int i = 0; i < 2000; i++)
	{
		uint64_t	off = 1000000 + (uint64_t) i * 4096;

		CHECK(tides_block_cache_lookup(c, 8, 0, b, maxb, &len));
		fill(a, 1500, 9, off);
		tides_block_cache_insert(c, 9, off, a, 1500);
	}
	printf("pressure: %d hits, %llu entries, %llu of %llu bytes used\n", hits,
		   (unsigned long long) st.entries, (unsigned long long) st.used,
		   (unsigned long long) st.capacity);
	free(a);
	free(b);
	test_shared_free(mem, sz);
}

#define NPROC 4

static int
child(tides_block_cache *c, int id, int ops)
{
	size_t		maxb = tides_block_cache_max_block(c);
	uint8_t    *a = malloc(maxb),
			   *b = malloc(maxb);
	size_t		len;
	int			bad = 0;
	long		hits = 0;
	tides_rand	r;

	tides_rand_seed(&r, test_seed * 31 + (uint64_t) id + 1);
	for (int i = 0; i < ops; i++)
	{
		uint64_t	file = 1 + tides_rand_uniform(&r, 5);
		uint64_t	off = tides_rand_uniform(&r, 300) * 4096;
		int			op = (int) tides_rand_uniform(&r, 100);

		if (op < 60)
		{
			/* small buffers now and then, to take the "too small" path */
			size_t		cap = op < 3 ? 50 : maxb;

			if (tides_block_cache_lookup(c, file, off, b, cap, &len))
			{
				hits++;
				if (!check_block(b, len, file, off, maxb, a))
					bad++;
			}
			else if (len > cap && len != block_len(file, off, maxb))
				bad++;
		}
		else if (op < 75)
		{
			visit_ctx	vc = {b, 0};

			if (tides_block_cache_visit(c, file, off, visit_copy, &vc))
			{
				hits++;
				if (!check_block(b, vc.len, file, off, maxb, a))
					bad++;
			}
		}
		else if (op < 98)
		{
			size_t		l = block_len(file, off, maxb);

			fill(a, l, file, off);
			tides_block_cache_insert(c, file, off, a, l);
		}
		else
			tides_block_cache_erase_file(c, file);
	}
	if (bad)
		fprintf(stderr, "child %d: %d bad hits of %ld\n", id, bad, hits);
	free(a);
	free(b);
	return bad ? 1 : 0;
}

static void
test_multiprocess(void)
{
	uint64_t	cap = 2 << 20;	/* small: constant eviction */
	size_t		sz = tides_block_cache_shmem_size(cap);
	void	   *mem = test_shared_alloc(sz);
	tides_block_cache *c = tides_block_cache_init(mem, cap);
	pid_t		pids[NPROC];
	size_t		maxb = tides_block_cache_max_block(c);
	uint8_t    *a = malloc(maxb),
			   *b = malloc(maxb);
	size_t		len;
	tides_block_cache_stats st;
	uint64_t	frames_seen = 0;

	for (int i = 0; i < NPROC; i++)
	{
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(child(c, i, 100000));
		CHECK(pids[i] > 0);
	}
	for (int i = 0; i < NPROC; i++)
	{
		int			status = 0;

		CHECK(waitpid(pids[i], &status, 0) == pids[i]);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	/* afterwards: every resident block is intact, and accounting adds up */
	for (uint64_t file = 1; file <= 5; file++)
		for (uint64_t off = 0; off < 300 * 4096; off += 4096)
			if (tides_block_cache_lookup(c, file, off, b, maxb, &len))
			{
				CHECK(check_block(b, len, file, off, maxb, a));
				frames_seen += (len + 1023) / 1024;
			}
	tides_block_cache_get_stats(c, &st);
	CHECK(st.used == frames_seen * 1024);
	CHECK(st.used <= st.capacity);
	printf("multiprocess: %llu entries, %llu bytes after the run\n",
		   (unsigned long long) st.entries, (unsigned long long) st.used);
	free(a);
	free(b);
	test_shared_free(mem, sz);
}

int
main(int argc, char **argv)
{
	test_init(argc, argv);
	test_basic();
	test_pressure();
	test_multiprocess();
	return test_finish("test_block_cache");
}
