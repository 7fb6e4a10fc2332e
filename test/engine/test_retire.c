/*
 * test_retire.c -- keys retired by a filter at the low end of an ascending
 * key space, and the files compaction is asked to rewrite for them
 * (tides_mark_retired).
 *
 *   bounds     every table file records one past the largest suffix of its
 *              keys (the last filter_stem_suffix bytes): exact for files of
 *              row-like keys, after a restart too (the manifest keeps it);
 *              0 when a key is shorter than the suffix, or in a store
 *              re-encoded without the field (format 1).
 *   reclaim    ascending keys of two trees compacted to the bottom; a filter
 *              drops tree 1's keys below a mark.  tides_mark_retired over
 *              tree 1's range marks exactly its files whose every suffix is
 *              below the mark (not the file that straddles it, nor one it
 *              shares with tree 2); compaction rewrites them, their keys are
 *              gone from the files, tree 2's bytes are unchanged, every
 *              other key reads back, the store verifies, and a second call
 *              marks nothing.
 */
#include "harness.h"
#include "db/db_impl.h"

#define KEYLEN 14				/* tree (8) + suffix (6), as a row key */
#define NROWS 6000
#define VLEN 100

static store st;
static uint64_t retire_below = 0;	/* the filter's mark, for tree 1 */

static void
key_of(uint8_t *k, uint64_t tree, uint64_t row)
{
	tides_put_be64(k, tree);
	for (int i = 13; i >= 8; i--)
	{
		k[i] = (uint8_t) row;
		row >>= 8;
	}
}

static tides_filter_decision
retire_filter(void *arg, const void *key, size_t klen, const void *val, size_t vlen,
			  const void **nv, size_t *nvlen)
{
	const uint8_t *k = key;
	uint64_t	row = 0;

	if (klen != KEYLEN || tides_get_be64(k) != 1)
		return TIDES_FILTER_KEEP;
	for (int i = 8; i < 14; i++)
		row = (row << 8) | k[i];
	return row < retire_below ? TIDES_FILTER_DROP : TIDES_FILTER_KEEP;
}

static void
opts(tides_options *o)
{
	small_store_opts(o);
	o->filter_stem_suffix = 6;
	o->compression = TIDES_COMPRESS_NONE;
	o->bottommost_compression = TIDES_COMPRESS_NONE;	/* many files a tree */
}

static void
load(void)
{
	tides_batch *b = tides_batch_new();
	uint8_t		k[KEYLEN],
				v[VLEN];

	memset(v, 'v', sizeof(v));
	for (uint64_t tree = 1; tree <= 2; tree++)
		for (uint64_t row = 0; row < NROWS; row++)
		{
			key_of(k, tree, row);
			CHECK_OK(tides_batch_put(b, k, KEYLEN, v, VLEN));
			if (tides_batch_count(b) >= 64)
			{
				h_write_retrying(st.db, b, true);
				tides_batch_clear(b);
			}
		}
	h_write_retrying(st.db, b, true);
	tides_batch_free(b);
	h_compact_full(st.db);
}

/* is every file's bound what its keys say?  Returns the files checked. */
static int
check_bounds(const char *when)
{
	tides_version *v = st.db->sh->current;
	int			n = 0;

	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		for (uint32_t i = 0; i < v->nfiles[l]; i++)
		{
			tides_file_meta *f = v->files[l][i];
			tides_iter_options io;
			tides_iter *it;
			uint64_t	max = 0;
			const uint8_t *lo = tides_file_smallest(f),
					   *hi = tides_file_largest(f);
			uint8_t		upper[KEYLEN + 1];

			/* the file's user keys: every key between its smallest and largest */
			memcpy(upper, hi, KEYLEN);
			upper[KEYLEN] = 0;
			memset(&io, 0, sizeof(io));
			io.lower = lo;
			io.lower_len = KEYLEN;
			io.upper = upper;
			io.upper_len = KEYLEN + 1;
			it = tides_iter_new(st.db, &io);
			for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
			{
				size_t		klen;
				const uint8_t *k = tides_iter_key(it, &klen);
				uint64_t	s = 0;

				CHECK(tides_key_suffix(k, klen, 6, &s));
				if (s > max)
					max = s;
			}
			tides_iter_free(it);
			if (f->suffix_bound != max + 1)
			{
				test_failures++;
				fprintf(stderr, "test_retire: %s: file %llu has bound %llu, its keys %llu\n", when,
						(unsigned long long) f->number, (unsigned long long) f->suffix_bound,
						(unsigned long long) max + 1);
			}
			n++;
		}
	return n;
}

static uint64_t
tree_bytes(uint64_t tree)
{
	uint8_t		lo[8],
				hi[8];

	tides_put_be64(lo, tree);
	tides_put_be64(hi, tree + 1);
	return tides_approximate_size(st.db, lo, 8, hi, 8);
}

/* files whose keys are all tree 1's, all below the mark */
static int
retired_files(void)
{
	tides_version *v = st.db->sh->current;
	int			n = 0;

	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		for (uint32_t i = 0; i < v->nfiles[l]; i++)
		{
			tides_file_meta *f = v->files[l][i];
			uint64_t	s;

			if (tides_key_suffix(tides_file_largest(f), f->largest_len - TIDES_TRAILER, 6, &s) &&
				tides_get_be64(tides_file_smallest(f)) == 1 &&
				tides_get_be64(tides_file_largest(f)) == 1 && s < retire_below)
				n++;
		}
	return n;
}

static void
test_bounds(void)
{
	int			nfiles;
	uint8_t		shortkey[4] = {0, 0, 0, 9};
	tides_batch *b;

	nfiles = check_bounds("after load");
	CHECK(nfiles > 4);
	/* the manifest keeps them */
	store_crash(&st);
	CHECK_OK(store_open(&st));
	CHECK(check_bounds("after a restart") == nfiles);

	/* a key shorter than the suffix: that file's bound is unknown */
	b = tides_batch_new();
	CHECK_OK(tides_batch_put(b, shortkey, sizeof(shortkey), "x", 1));
	h_write_retrying(st.db, b, false);
	tides_batch_free(b);
	h_seal_and_flush(st.db);
	{
		tides_version *v = st.db->sh->current;
		int			found = 0;

		for (int l = 0; l < TIDES_MAX_LEVELS; l++)
			for (uint32_t i = 0; i < v->nfiles[l]; i++)
			{
				tides_file_meta *f = v->files[l][i];

				if (f->largest_len - TIDES_TRAILER == sizeof(shortkey))
				{
					CHECK(f->suffix_bound == 0);
					found++;
				}
			}
		CHECK(found == 1);
	}
}

static void
test_reclaim(void)
{
	uint64_t	before1,
				before2;
	uint32_t	marked;
	int			want;
	uint8_t		lo[8],
				hi[8],
				k[KEYLEN];

	h_compact_full(st.db);
	before1 = tree_bytes(1);
	before2 = tree_bytes(2);
	retire_below = NROWS / 2 + 17;	/* inside some file */
	tides_set_filter(st.db, retire_filter, NULL);
	want = retired_files();
	CHECK(want > 0);
	tides_put_be64(lo, 1);
	tides_put_be64(hi, 2);
	marked = tides_mark_retired(st.db, lo, 8, hi, 8, retire_below);
	CHECK(marked == (uint32_t) want);
	CHECK_OK(drain(st.db));
	CHECK(retired_files() == 0);
	tides_put_be64(lo, 1);
	tides_put_be64(hi, 2);
	CHECK(tides_mark_retired(st.db, lo, 8, hi, 8, retire_below) == 0);
	/* about half of tree 1 gone from the files, tree 2 untouched */
	printf("tree 1: %llu -> %llu bytes; tree 2: %llu -> %llu\n",
		   (unsigned long long) before1, (unsigned long long) tree_bytes(1),
		   (unsigned long long) before2, (unsigned long long) tree_bytes(2));
	CHECK(tree_bytes(1) < before1 * 2 / 3);
	CHECK(tree_bytes(2) == before2);
	/* every key the filter keeps reads back */
	for (uint64_t tree = 1; tree <= 2; tree++)
		for (uint64_t row = 0; row < NROWS; row++)
		{
			void	   *v = NULL;
			size_t		n = 0;

			if (tree == 1 && row < retire_below)
				continue;
			key_of(k, tree, row);
			CHECK_OK(tides_get(st.db, NULL, k, KEYLEN, &v, &n));
			CHECK(n == VLEN);
			free(v);
		}
	CHECK(tides_verify(st.db, report_problem, NULL) == 0);
}

int
main(int argc, char **argv)
{
	test_init(argc, argv);
	memset(&st, 0, sizeof(st));
	opts(&st.opts);
	st.dir = fast_tmpdir("retire");
	CHECK_OK(store_open(&st));
	load();
	test_bounds();
	test_reclaim();
	store_crash(&st);
	test_rmdir(st.dir);
	return test_finish("test_retire");
}
