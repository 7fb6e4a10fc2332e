/*
 * test_sst.c -- SSTables end to end: random multi-version tables with
 * deletions, every compression type, several block sizes and restart
 * intervals, with and without filters and the block cache; forward and
 * backward iteration, seeks to every key and between keys, point lookups,
 * verification, reopening; the layout (each index and filter partition
 * right after its data blocks); a table with every byte flipped in turn,
 * which must yield TIDES_CORRUPTION or correct data, never a wrong answer;
 * and zstd's frames at every level through one reused compressor.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
#include "cache/block_cache.h"
#include "util/dbformat.h"
#include "table/block.h"
#include "table/compress.h"
#include "table/format.h"
#include "table/sst.h"
#include "table/table_cache.h"
#include "util/random.h"

typedef struct entry
{
	uint8_t    *k;
	size_t		kl;
	uint8_t    *v;
	size_t		vl;
} entry;

typedef struct model
{
	entry	   *e;
	size_t		n;
} model;

static int
entry_cmp(const void *a, const void *b)
{
	const entry *x = a,
			   *y = b;

	return tides_ikey_cmp(x->k, x->kl, y->k, y->kl);
}

static size_t
random_ukey(tides_rand *r, uint8_t *u)
{
	size_t		n = 8 + tides_rand_uniform(r, 12);

	tides_put_be64(u, tides_rand_uniform(r, 4));	/* tree id */
	for (size_t i = 8; i < n; i++)
		u[i] = (uint8_t) (i < 10 ? tides_rand_uniform(r, 3) : tides_rand_uniform(r, 256));
	return n;
}

static void
model_make(tides_rand *r, model *m, size_t nukeys, size_t big_every)
{
	size_t		cap = nukeys * 3,
				n = 0;

	m->e = calloc(cap, sizeof(entry));
	for (size_t i = 0; i < nukeys; i++)
	{
		uint8_t		u[32];
		size_t		ul = random_ukey(r, u);
		int			versions = 1 + (int) tides_rand_uniform(r, 3);
		uint64_t	seq = 1000 + tides_rand_uniform(r, 100000);

		for (int v = 0; v < versions; v++)
		{
			entry	   *e = &m->e[n++];
			bool		del = tides_rand_uniform(r, 10) == 0;

			seq += 1 + tides_rand_uniform(r, 50);
			e->k = malloc(ul + 8);
			e->kl = tides_ikey_make(e->k, u, ul, seq, del ? TIDES_KT_DELETE : TIDES_KT_VALUE);
			e->vl = del ? 0 : tides_rand_uniform(r, 120);
			if (!del && big_every && tides_rand_uniform(r, big_every) == 0)
				e->vl = 5000 + tides_rand_uniform(r, 20000);
			e->v = malloc(e->vl + 1);
			/* compressible but not trivially */
			for (size_t j = 0; j < e->vl; j++)
				e->v[j] = (uint8_t) ("tidesam"[tides_rand_uniform(r, 7)] ^ (j % 97 == 0 ? tides_rand_next(r) : 0));
		}
	}
	qsort(m->e, n, sizeof(entry), entry_cmp);
	/* drop identical internal keys */
	{
		size_t		w = 0;

		for (size_t i = 0; i < n; i++)
		{
			if (w > 0 && entry_cmp(&m->e[w - 1], &m->e[i]) == 0)
			{
				free(m->e[i].k);
				free(m->e[i].v);
				continue;
			}
			m->e[w++] = m->e[i];
		}
		n = w;
	}
	m->n = n;
}

static void
model_free(model *m)
{
	for (size_t i = 0; i < m->n; i++)
	{
		free(m->e[i].k);
		free(m->e[i].v);
	}
	free(m->e);
}

/* index of the first entry >= key */
static size_t
lower_bound(const model *m, const uint8_t *k, size_t kl)
{
	size_t		lo = 0,
				hi = m->n;

	while (lo < hi)
	{
		size_t		mid = (lo + hi) / 2;

		if (tides_ikey_cmp(m->e[mid].k, m->e[mid].kl, k, kl) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool
same(const entry *e, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl)
{
	return e->kl == kl && memcmp(e->k, k, kl) == 0 && e->vl == vl &&
		(vl == 0 || memcmp(e->v, v, vl) == 0);
}

static bool
iter_at(tides_iiter *it, const entry *e)
{
	size_t		kl,
				vl;
	const uint8_t *k,
			   *v;

	if (!tides_iiter_valid(it))
		return false;
	k = tides_iiter_key(it, &kl);
	v = tides_iiter_value(it, &vl);
	return same(e, k, kl, v, vl);
}

/* helper: data blocks encoded by a helper thread (table/block_pipe.h) */
static uint64_t
build_with(const tides_table_env *env, const char *path, const model *m, tides_sst_props *props,
		   bool helper)
{
	tides_vfs  *vfs = env->vfs;
	int			fd = vfs->open(vfs, path, O_CREAT | O_RDWR | O_TRUNC, 0644);
	tides_sst_builder *b;
	tides_error err;
	uint64_t	size;

	CHECK(fd >= 0);
	b = tides_sst_builder_new(env, fd, path);
	if (helper)
		CHECK(tides_sst_builder_set_helper(b));
	for (size_t i = 0; i < m->n; i++)
		CHECK_OK(tides_sst_builder_add(b, m->e[i].k, m->e[i].kl, m->e[i].v, m->e[i].vl, &err));
	/* out of order and duplicate keys are refused */
	if (m->n > 0)
		CHECK(tides_sst_builder_add(b, m->e[0].k, m->e[0].kl, NULL, 0, &err) == TIDES_INVALID);
	CHECK(tides_sst_builder_entries(b) == m->n);
	CHECK_OK(tides_sst_builder_finish(b, props, &err));
	size = props->file_size;
	CHECK((int64_t) size == vfs->file_size(vfs, fd));
	tides_sst_builder_free(b);
	vfs->close(vfs, fd);
	return size;
}

static uint64_t
build(const tides_table_env *env, const char *path, const model *m, tides_sst_props *props)
{
	return build_with(env, path, m, props, false);
}

/* the whole of a file (malloc'd), its length in *len */
static uint8_t *
slurp(const char *path, size_t *len)
{
	FILE	   *f = fopen(path, "rb");
	uint8_t    *buf;
	long		n;

	CHECK(f != NULL);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? n : 1);
	CHECK(buf != NULL && fread(buf, 1, n, f) == (size_t) n);
	fclose(f);
	*len = (size_t) n;
	return buf;
}

/*
 * A helper changes when blocks are encoded, never what is written: the
 * file built with one must be the file built without, byte for byte.
 */
static void
check_helper_same(const tides_table_env *env, const char *path, const model *m)
{
	char		path2[600];
	tides_sst_props props;
	uint8_t    *a,
			   *b;
	size_t		alen,
				blen;

	snprintf(path2, sizeof(path2), "%s.helper", path);
	build_with(env, path2, m, &props, true);
	tides_sst_props_free(&props);
	a = slurp(path, &alen);
	b = slurp(path2, &blen);
	CHECK(alen == blen && memcmp(a, b, alen) == 0);
	free(a);
	free(b);
	unlink(path2);
}

static tides_sst *
open_table(const tides_table_env *env, const char *path, uint64_t fnum, uint64_t size,
		   tides_status *st, tides_error *err)
{
	tides_sst  *t = NULL;
	int			fd = env->vfs->open(env->vfs, path, O_RDONLY, 0);

	CHECK(fd >= 0);
	*st = tides_sst_open(env, fd, fnum, size, path, &t, err);
	return t;
}

typedef struct found_ctx
{
	const uint8_t *k;
	size_t		kl;
	const uint8_t *v;
	size_t		vl;
	int			calls;
	uint8_t		kcopy[64];
	uint8_t    *vcopy;
} found_ctx;

static void
on_found(void *arg, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl)
{
	found_ctx  *f = arg;

	f->calls++;
	memcpy(f->kcopy, k, kl < 64 ? kl : 64);
	f->kl = kl;
	free(f->vcopy);
	f->vcopy = malloc(vl + 1);
	memcpy(f->vcopy, v, vl);
	f->vl = vl;
	f->k = f->kcopy;
	f->v = f->vcopy;
}

/* full functional check of a healthy table */
static void
check_table(tides_sst *t, const model *m, tides_rand *r, tides_counters *ctr)
{
	tides_iiter *it = tides_sst_iter_new(t, true);
	tides_error err;
	size_t		i;
	found_ctx	f = {0};

	/* forward and backward */
	for (i = 0, tides_iiter_first(it); tides_iiter_valid(it); tides_iiter_next(it), i++)
		if (i >= m->n || !iter_at(it, &m->e[i]))
			break;
	CHECK(i == m->n && !tides_iiter_valid(it));
	for (i = m->n, tides_iiter_last(it); tides_iiter_valid(it); tides_iiter_prev(it), i--)
		if (i == 0 || !iter_at(it, &m->e[i - 1]))
			break;
	CHECK(i == 0 && !tides_iiter_valid(it));

	/*
	 * Through a readahead window (compaction's inputs): the same entries
	 * forward and backward, and seeks that jump back before the window,
	 * into it and past it.
	 */
	{
		tides_iiter *ra = tides_sst_iter_new(t, false);

		tides_sst_iter_read_ahead(ra);
		for (i = 0, tides_iiter_first(ra); tides_iiter_valid(ra); tides_iiter_next(ra), i++)
			if (i >= m->n || !iter_at(ra, &m->e[i]))
				break;
		CHECK(i == m->n && !tides_iiter_valid(ra) && tides_iiter_status(ra) == TIDES_OK);
		for (i = m->n, tides_iiter_last(ra); tides_iiter_valid(ra); tides_iiter_prev(ra), i--)
			if (i == 0 || !iter_at(ra, &m->e[i - 1]))
				break;
		CHECK(i == 0 && !tides_iiter_valid(ra));
		for (size_t j = 0; j < m->n && m->n > 0; j += 1 + m->n / 50)
		{
			size_t		x = tides_rand_uniform(r, m->n);

			tides_iiter_seek(ra, m->e[x].k, m->e[x].kl);
			CHECK(iter_at(ra, &m->e[x]));
			tides_iiter_next(ra);
			CHECK(x + 1 == m->n ? !tides_iiter_valid(ra) : iter_at(ra, &m->e[x + 1]));
		}
		CHECK(tides_iiter_status(ra) == TIDES_OK);
		tides_iiter_destroy(ra);
	}

	/*
	 * Fetched ahead by a helper thread (bulk reads): a whole pass, which
	 * takes every block after the first few from the helper; then forward
	 * runs of random length from random seeks, broken by steps back (each
	 * seek or step back ends a fetch, the next run starts another); and
	 * passes abandoned at random points (the helper stopped wherever it is).
	 */
	{
		tides_iiter *fa = tides_sst_iter_new(t, false);
		uint64_t	fetched = tides_counter_sum(ctr, blocks_fetched);
		uint64_t	nblocks = tides_sst_properties(t)->num_data_blocks;

		tides_sst_iter_fetch_ahead(fa);
		for (i = 0, tides_iiter_first(fa); tides_iiter_valid(fa); tides_iiter_next(fa), i++)
			if (i >= m->n || !iter_at(fa, &m->e[i]))
				break;
		CHECK(i == m->n && !tides_iiter_valid(fa) && tides_iiter_status(fa) == TIDES_OK);
		/* the first block, and the two that start the run, are the reader's own */
		CHECK(nblocks < 3 || tides_counter_sum(ctr, blocks_fetched) - fetched == nblocks - 3);
		for (int j = 0; j < 20 && m->n > 0; j++)
		{
			size_t		x = tides_rand_uniform(r, m->n);
			size_t		steps = tides_rand_uniform(r, 1 + m->n / 4);

			tides_iiter_seek(fa, m->e[x].k, m->e[x].kl);
			for (; steps > 0 && x + 1 < m->n; steps--, x++)
			{
				CHECK(iter_at(fa, &m->e[x]));
				tides_iiter_next(fa);
			}
			CHECK(iter_at(fa, &m->e[x]));
			if (x > 0 && tides_rand_uniform(r, 2))
			{
				tides_iiter_prev(fa);
				CHECK(iter_at(fa, &m->e[x - 1]));
				tides_iiter_next(fa);
				CHECK(iter_at(fa, &m->e[x]));
			}
		}
		CHECK(tides_iiter_status(fa) == TIDES_OK);
		tides_iiter_destroy(fa);
		for (int j = 0; j < 4 && m->n > 0; j++)
		{
			size_t		stop = tides_rand_uniform(r, m->n);

			fa = tides_sst_iter_new(t, false);
			tides_sst_iter_fetch_ahead(fa);
			for (i = 0, tides_iiter_first(fa); i < stop && tides_iiter_valid(fa); tides_iiter_next(fa), i++)
				CHECK(iter_at(fa, &m->e[i]));
			CHECK(i == stop);
			tides_iiter_destroy(fa);
		}
	}

	/* seek to every key; step back and forth across it */
	for (i = 0; i < m->n; i++)
	{
		tides_iiter_seek(it, m->e[i].k, m->e[i].kl);
		CHECK(iter_at(it, &m->e[i]));
		tides_iiter_prev(it);
		CHECK(i == 0 ? !tides_iiter_valid(it) : iter_at(it, &m->e[i - 1]));
		if (i > 0)
		{
			tides_iiter_next(it);
			CHECK(iter_at(it, &m->e[i]));
		}
	}
	/* between keys: same user key with a seq just below, and random keys */
	for (i = 0; i < m->n; i++)
	{
		uint8_t		k[40];
		size_t		ul = m->e[i].kl - 8;
		uint64_t	seq = tides_ikey_seq(m->e[i].k, m->e[i].kl);
		size_t		want;

		memcpy(k, m->e[i].k, ul);
		tides_put64(k + ul, tides_pack_trailer(seq - 1, TIDES_KT_VALUE));
		want = lower_bound(m, k, ul + 8);
		tides_iiter_seek(it, k, ul + 8);
		CHECK(want == m->n ? !tides_iiter_valid(it) : iter_at(it, &m->e[want]));
	}
	for (int j = 0; j < 2000; j++)
	{
		uint8_t		k[40];
		size_t		ul = random_ukey(r, k);
		size_t		want;
		tides_status s;

		tides_put64(k + ul, tides_pack_trailer(tides_rand_uniform(r, 200000), TIDES_KT_SEEK));
		want = lower_bound(m, k, ul + 8);
		tides_iiter_seek(it, k, ul + 8);
		CHECK(want == m->n ? !tides_iiter_valid(it) : iter_at(it, &m->e[want]));
		/* get: NOT_FOUND (filtered or past the end) or the first entry >= key */
		f.calls = 0;
		s = tides_sst_get(t, k, ul + 8, on_found, &f, &err);
		if (s == TIDES_OK)
			CHECK(f.calls == 1 && want < m->n && same(&m->e[want], f.k, f.kl, f.v, f.vl));
		else
		{
			CHECK(s == TIDES_NOT_FOUND);
			/* only allowed if the user key really is absent */
			CHECK(want == m->n ||
				  tides_ukey_cmp(m->e[want].k, m->e[want].kl - 8, k, ul) != 0);
		}
	}
	/* get every key as of its own sequence number, and as of "now" */
	for (i = 0; i < m->n; i++)
	{
		uint8_t		k[40];
		size_t		ul = m->e[i].kl - 8;
		size_t		first = i;

		while (first > 0 && tides_ukey_cmp(m->e[first - 1].k, m->e[first - 1].kl - 8,
										   m->e[i].k, ul) == 0)
			first--;
		f.calls = 0;
		CHECK_OK(tides_sst_get(t, m->e[i].k, m->e[i].kl, on_found, &f, &err));
		CHECK(f.calls == 1 && same(&m->e[i], f.k, f.kl, f.v, f.vl));
		memcpy(k, m->e[i].k, ul);
		tides_put64(k + ul, tides_pack_trailer(TIDES_MAX_SEQ, TIDES_KT_SEEK));
		CHECK_OK(tides_sst_get(t, k, ul + 8, on_found, &f, &err));
		CHECK(same(&m->e[first], f.k, f.kl, f.v, f.vl));
	}
	/* random walk */
	if (m->n > 0)
	{
		size_t		pos = tides_rand_uniform(r, m->n);

		tides_iiter_seek(it, m->e[pos].k, m->e[pos].kl);
		for (int j = 0; j < 3000; j++)
		{
			if (tides_rand_uniform(r, 2) && pos + 1 < m->n)
			{
				tides_iiter_next(it);
				pos++;
			}
			else if (pos > 0)
			{
				tides_iiter_prev(it);
				pos--;
			}
			CHECK(iter_at(it, &m->e[pos]));
		}
	}
	CHECK(tides_iiter_status(it) == TIDES_OK);
	tides_iiter_destroy(it);
	free(f.vcopy);

	CHECK_OK(tides_sst_verify(t, &err));
	/* approximate offsets grow with the key */
	{
		uint64_t	prev = 0;

		for (i = 0; i < m->n; i += 7)
		{
			uint64_t	o = tides_sst_approximate_offset(t, m->e[i].k, m->e[i].kl);

			CHECK(o >= prev && o <= tides_sst_properties(t)->file_size);
			prev = o;
		}
	}
}

/*
 * The layout the builder promises (table/README.md): each partition's index
 * and filter block right after its last data block, so that a builder keeps
 * none of them for the end.  Walks the top index: every handle lies inside
 * the file, in increasing order, each filter right after its index
 * partition, and with two partitions or more the first lies before the
 * end of the data blocks' bytes -- never so in the old layout, where every
 * partition followed the last data block.
 */
static void
check_layout(const char *path, const tides_sst_props *props, bool bloom)
{
	int			fd = open(path, O_RDONLY);
	uint8_t		fbuf[TIDES_FOOTER_SIZE];
	tides_footer f;
	tides_error err;
	uint8_t    *top;
	tides_block_iter it;
	uint64_t	prev_end = 0;
	uint64_t	first = 0;
	uint32_t	n = 0;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	tides_error_clear(&err);
	CHECK(pread(fd, fbuf, sizeof(fbuf), (off_t) (props->file_size - TIDES_FOOTER_SIZE)) ==
		  TIDES_FOOTER_SIZE);
	CHECK_OK(tides_footer_decode(fbuf, &f, path, &err));
	top = malloc(f.top_index.size + 1);
	CHECK(pread(fd, top, f.top_index.size, (off_t) f.top_index.offset) == (ssize_t) f.top_index.size);
	tides_block_iter_init(&it, true, &err);
	CHECK(tides_block_iter_reset(&it, top, f.top_index.size, path, f.top_index.offset));
	for (tides_block_iter_first(&it); it.valid; tides_block_iter_next(&it))
	{
		tides_block_handle ph,
					fh;
		const uint8_t *q = tides_handle_decode(it.val, it.val + it.vlen, &ph);

		q = q ? tides_handle_decode(q, it.val + it.vlen, &fh) : NULL;
		CHECK(q != NULL);
		if (q == NULL)
			break;
		CHECK(ph.offset >= prev_end && ph.offset + ph.size + TIDES_BLOCK_TRAILER <= f.top_index.offset);
		CHECK(bloom ? fh.offset == ph.offset + ph.size + TIDES_BLOCK_TRAILER
			  : fh.offset == 0 && fh.size == 0);
		prev_end = bloom ? fh.offset + fh.size + TIDES_BLOCK_TRAILER : ph.offset + ph.size + TIDES_BLOCK_TRAILER;
		if (n == 0)
			first = ph.offset;
		n++;
	}
	CHECK(n == props->num_partitions);
	CHECK(n < 2 || first < props->data_bytes);
	tides_block_iter_free(&it);
	free(top);
	close(fd);
}

static void
run_config(const char *dir, tides_compression comp, uint32_t block_size, uint32_t interval,
		   uint32_t bloom, uint32_t prefix, bool cache, size_t nukeys, size_t big_every)
{
	static uint64_t fnum = 100;
	tides_vfs  *vfs = tides_vfs_posix();
	tides_counters ctr;
	tides_table_env env = {0};
	tides_block_cache *bc = NULL;
	void	   *mem = NULL;
	size_t		memsz = 0;
	char		path[512];
	model		m;
	tides_sst_props props;
	uint64_t	size;
	tides_status s;
	tides_error err;
	tides_sst  *t;
	tides_rand	r;

	memset(&ctr, 0, sizeof(ctr));
	tides_rand_seed(&r, test_seed * 7919 + fnum);
	if (cache)
	{
		memsz = tides_block_cache_shmem_size(8 << 20);
		mem = test_shared_alloc(memsz);
		bc = tides_block_cache_init(mem, 8 << 20);
	}
	env.vfs = vfs;
	env.cache = bc;
	env.counters = &ctr;
	env.block_size = block_size;
	env.restart_interval = interval;
	env.bloom_bits_per_key = bloom;
	env.prefix_len = prefix;
	env.range_prefix_len = prefix;	/* the tree ids' key ranges too */
	env.compression = comp;
	/* zstd: its fast levels on every other file */
	env.compression_level = fnum % 2 == 1 ? TIDES_ZSTD_FASTEST : 3;

	model_make(&r, &m, nukeys, big_every);
	snprintf(path, sizeof(path), "%s/%06llu.sst", dir, (unsigned long long) fnum);
	size = build(&env, path, &m, &props);
	check_helper_same(&env, path, &m);
	CHECK(props.num_entries == m.n);
	CHECK(m.n == 0 || (props.smallest_len == m.e[0].kl &&
					   memcmp(props.smallest, m.e[0].k, m.e[0].kl) == 0));
	CHECK(m.n == 0 || (props.largest_len == m.e[m.n - 1].kl &&
					   memcmp(props.largest, m.e[m.n - 1].k, m.e[m.n - 1].kl) == 0));
	printf("comp %d bs %u ri %u bloom %u prefix %u cache %d: %zu entries, %llu blocks, "
		   "%u partitions, %llu bytes (raw %llu)\n",
		   comp, block_size, interval, bloom, prefix, cache, m.n,
		   (unsigned long long) props.num_data_blocks, props.num_partitions,
		   (unsigned long long) size,
		   (unsigned long long) (props.raw_key_bytes + props.raw_value_bytes));

	check_layout(path, &props, bloom > 0);
	t = open_table(&env, path, fnum, size, &s, &err);
	CHECK_OK(s);
	if (t != NULL)
	{
		const tides_sst_props *p = tides_sst_properties(t);

		CHECK(p->num_entries == props.num_entries && p->file_size == size &&
			  p->num_deletions == props.num_deletions && p->min_seq == props.min_seq &&
			  p->max_seq == props.max_seq && p->num_partitions == props.num_partitions);
		check_table(t, &m, &r, &ctr);
		if (bloom && m.n > 100)
			CHECK(tides_counter_sum(&ctr, bloom_useful) > 0);
		if (prefix && m.n > 0)
		{
			uint8_t		pfx[8];

			/* every present tree id may be there; absent ones mostly not */
			CHECK(tides_sst_may_contain_prefix(t, m.e[0].k, 8));
			tides_put_be64(pfx, 999);
			/* beyond the last tree id's key range */
			CHECK(!tides_sst_may_contain_prefix(t, pfx, 8));
			/* a short prefix: the filter cannot tell, the key ranges can */
			CHECK(tides_sst_may_contain_prefix(t, m.e[0].k, 4));
			memset(pfx, 0xff, 4);
			CHECK(!tides_sst_may_contain_prefix(t, pfx, 4));
		}
		tides_sst_close(t);
	}
	/* reopen: now served from the block cache, if any */
	t = open_table(&env, path, fnum, 0, &s, &err);
	CHECK_OK(s);
	if (t != NULL)
	{
		check_table(t, &m, &r, &ctr);
		if (cache && m.n > 0)
			CHECK(tides_counter_sum(&ctr, cache_hits) > 0);
		tides_sst_close(t);
	}
	tides_sst_props_free(&props);
	model_free(&m);
	if (mem)
		test_shared_free(mem, memsz);
	fnum++;
}

/*
 * Flip every byte of a small table in turn: opening, verifying, iterating and
 * looking up must each either report an error or give exactly the right
 * data.  verify() must catch every flip (every byte is under a checksum).
 */
static void
test_corruption(const char *dir, tides_compression comp, bool cache)
{
	tides_vfs  *vfs = tides_vfs_posix();
	tides_table_env env = {0};
	char		path[512];
	model		m;
	tides_sst_props props;
	uint64_t	size;
	tides_rand	r;
	int			fd;
	int			opened = 0,
				detected = 0;
	tides_block_cache *bc = NULL;
	void	   *mem = NULL;
	size_t		memsz = 0;

	tides_rand_seed(&r, test_seed + comp);
	if (cache)
	{
		memsz = tides_block_cache_shmem_size(4 << 20);
		mem = test_shared_alloc(memsz);
		bc = tides_block_cache_init(mem, 4 << 20);
	}
	env.vfs = vfs;
	env.cache = bc;
	env.block_size = 200;
	env.restart_interval = 4;
	env.bloom_bits_per_key = 10;
	env.prefix_len = 8;
	env.range_prefix_len = 8;	/* every byte of the key ranges is covered too */
	env.compression = comp;
	env.compression_level = 1;
	model_make(&r, &m, 40, 0);
	snprintf(path, sizeof(path), "%s/corrupt.sst", dir);
	size = build(&env, path, &m, &props);
	tides_sst_props_free(&props);
	fd = open(path, O_RDWR);

	for (uint64_t pos = 0; pos < size; pos++)
	{
		uint8_t		orig,
					flipped;
		tides_status s;
		tides_error err;
		tides_sst  *t;

		CHECK(pread(fd, &orig, 1, (off_t) pos) == 1);
		flipped = orig ^ (uint8_t) (pos % 3 == 0 ? 0xff : 1u << (pos % 8));
		CHECK(pwrite(fd, &flipped, 1, (off_t) pos) == 1);

		/* a new file number each time: cached blocks of a healthy copy would hide nothing wrong */
		t = open_table(&env, path, 1000000 + pos, size, &s, &err);
		if (s != TIDES_OK)
		{
			CHECK(s == TIDES_CORRUPTION);
			CHECK(strstr(err.msg, "corrupt.sst") != NULL);
			detected++;
		}
		else
		{
			tides_iiter *it = tides_sst_iter_new(t, true);
			size_t		i;
			found_ctx	f = {0};

			opened++;
			s = tides_sst_verify(t, &err);
			CHECK(s == TIDES_CORRUPTION);
			if (s == TIDES_CORRUPTION)
			{
				CHECK(strstr(err.msg, "corrupt.sst") != NULL);
				detected++;
			}
			for (i = 0, tides_iiter_first(it); tides_iiter_valid(it); tides_iiter_next(it), i++)
				CHECK(i < m.n && iter_at(it, &m.e[i]));
			CHECK(i == m.n || tides_iiter_status(it) == TIDES_CORRUPTION);
			for (i = m.n, tides_iiter_last(it); tides_iiter_valid(it); tides_iiter_prev(it), i--)
				CHECK(i > 0 && iter_at(it, &m.e[i - 1]));
			CHECK(i == 0 || tides_iiter_status(it) == TIDES_CORRUPTION);
			tides_iiter_destroy(it);
			/* through a readahead window, and fetched ahead: the damage is found there too */
			for (int how = 0; how < 2; how++)
			{
				it = tides_sst_iter_new(t, false);
				if (how == 0)
					tides_sst_iter_read_ahead(it);
				else
					tides_sst_iter_fetch_ahead(it);
				for (i = 0, tides_iiter_first(it); tides_iiter_valid(it); tides_iiter_next(it), i++)
					CHECK(i < m.n && iter_at(it, &m.e[i]));
				CHECK(i == m.n || tides_iiter_status(it) == TIDES_CORRUPTION);
				tides_iiter_destroy(it);
			}
			for (i = 0; i < m.n; i++)
			{
				f.calls = 0;
				s = tides_sst_get(t, m.e[i].k, m.e[i].kl, on_found, &f, &err);
				CHECK(s == TIDES_OK || s == TIDES_CORRUPTION);
				if (s == TIDES_OK)
					CHECK(same(&m.e[i], f.k, f.kl, f.v, f.vl));
			}
			free(f.vcopy);
			tides_sst_close(t);
		}
		CHECK(pwrite(fd, &orig, 1, (off_t) pos) == 1);
	}
	printf("corruption comp %d: %llu bytes, %d opened, %d detected\n", comp,
		   (unsigned long long) size, opened, detected);
	CHECK((uint64_t) detected == size);
	close(fd);
	model_free(&m);
	if (mem)
		test_shared_free(mem, memsz);
}

static void
test_misc(const char *dir)
{
	tides_vfs  *vfs = tides_vfs_posix();
	tides_table_env env = {0};
	char		path[512];
	int			fd;
	tides_status s;
	tides_error err;
	tides_sst  *t;

	env.vfs = vfs;
	env.block_size = 4096;
	env.restart_interval = 16;
	/* not a table at all */
	snprintf(path, sizeof(path), "%s/junk.sst", dir);
	fd = vfs->open(vfs, path, O_CREAT | O_RDWR | O_TRUNC, 0644);
	CHECK(vfs->pwrite(vfs, fd, "hello world, this is not an sstable at all!!!!!!!!!!!!!!", 56, 0) == 56);
	vfs->close(vfs, fd);
	t = open_table(&env, path, 1, 0, &s, &err);
	CHECK(s == TIDES_CORRUPTION && t == NULL);
	CHECK(strstr(err.msg, "magic") != NULL);
	/* too short */
	fd = vfs->open(vfs, path, O_CREAT | O_RDWR | O_TRUNC, 0644);
	CHECK(vfs->pwrite(vfs, fd, "x", 1, 0) == 1);
	vfs->close(vfs, fd);
	t = open_table(&env, path, 1, 0, &s, &err);
	CHECK(s == TIDES_CORRUPTION && t == NULL);
	/* a truncated real table */
	{
		model		m;
		tides_sst_props props;
		tides_rand	r;
		uint64_t	size;

		tides_rand_seed(&r, test_seed);
		model_make(&r, &m, 50, 0);
		size = build(&env, path, &m, &props);
		tides_sst_props_free(&props);
		CHECK(truncate(path, (off_t) size - 10) == 0);
		t = open_table(&env, path, 1, 0, &s, &err);
		CHECK(s == TIDES_CORRUPTION && t == NULL);
		model_free(&m);
	}
	{
		char		name[32];

		tides_sst_file_name(name, sizeof(name), 42);
		CHECK(strcmp(name, "000042.sst") == 0);
		tides_sst_file_name(name, sizeof(name), 12345678);
		CHECK(strcmp(name, "12345678.sst") == 0);
	}
}

/*
 * Key ranges of runs: a table of trees 3, 5 and 9 (8-byte ids, then a
 * 4-byte key) tells that it holds no key of trees 1, 4, 7 or 10, none of
 * tree 5 above its largest or below its smallest, without a filter; with
 * more trees than it records ranges for, the last range covers the rest.
 */
static void
test_ranges(const char *dir)
{
	tides_table_env env = {0};
	char		path[512];
	model		m;
	uint64_t	trees[] = {3, 5, 9};
	tides_sst_props props;
	tides_status s;
	tides_error err;
	tides_sst  *t;
	uint8_t		stem[12];
	size_t		n = 0;
	tides_counters ctr;

	memset(&ctr, 0, sizeof(ctr));
	env.vfs = tides_vfs_posix();
	env.counters = &ctr;
	env.block_size = 512;
	env.restart_interval = 16;
	env.range_prefix_len = 8;	/* no filter: the answers are the ranges' */
	env.compression = TIDES_COMPRESS_NONE;
	m.e = calloc(3 * 100, sizeof(entry));
	for (int i = 0; i < 3; i++)
		for (uint32_t k = 1000; k < 1100; k++)
		{
			uint8_t		u[12];
			entry	   *e = &m.e[n++];

			tides_put_be64(u, trees[i]);
			test_put_be32(u + 8, k);
			e->k = malloc(sizeof(u) + 8);
			e->kl = tides_ikey_make(e->k, u, sizeof(u), 10 + n, TIDES_KT_VALUE);
			e->v = malloc(1);
			e->vl = 0;
		}
	m.n = n;
	snprintf(path, sizeof(path), "%s/ranges.sst", dir);
	build(&env, path, &m, &props);
	t = open_table(&env, path, 900, props.file_size, &s, &err);
	CHECK_OK(s);
	CHECK(t != NULL);
	for (uint64_t tree = 0; tree <= 10; tree++)
	{
		bool		present = tree == 3 || tree == 5 || tree == 9;

		tides_put_be64(stem, tree);
		CHECK(tides_sst_may_contain_prefix(t, stem, 8) == present);
		CHECK(tides_sst_may_contain_stem(t, stem, 8, 4) == present);
		/* a key of the tree below, inside and above its range */
		test_put_be32(stem + 8, 999);
		CHECK(!tides_sst_may_contain_stem(t, stem, 12, 0));
		test_put_be32(stem + 8, 1050);
		CHECK(tides_sst_may_contain_stem(t, stem, 12, 0) == present);
		test_put_be32(stem + 8, 1100);
		CHECK(!tides_sst_may_contain_stem(t, stem, 12, 0));
		/* a get of a tree the table lacks reads no block: the runs decide */
		{
			uint8_t		ik[20];
			uint64_t	read_before = tides_counter_sum(&ctr, bytes_read);
			found_ctx	f = {0};

			test_put_be32(stem + 8, 1050);
			tides_ikey_make(ik, stem, sizeof(stem), TIDES_MAX_SEQ, TIDES_KT_SEEK);
			s = tides_sst_get(t, ik, sizeof(ik), on_found, &f, &err);
			if (present)
				CHECK(s == TIDES_OK && f.calls == 1 && f.kl == sizeof(ik) && memcmp(f.k, stem, sizeof(stem)) == 0);
			else
				CHECK(s == TIDES_NOT_FOUND && f.calls == 0 && tides_counter_sum(&ctr, bytes_read) == read_before);
			free(f.vcopy);
		}
		/* prefixes of 2 key bytes: every key starts 0x0000, none 0xffff */
		test_put_be32(stem + 8, 0);
		CHECK(tides_sst_may_contain_prefix(t, stem, 10) == present);
		test_put_be32(stem + 8, 0xffff0000);
		CHECK(!tides_sst_may_contain_prefix(t, stem, 10));
	}
	CHECK_OK(tides_sst_verify(t, &err));
	tides_sst_close(t);
	tides_sst_props_free(&props);
	model_free(&m);

	/* 100 trees: 63 ranges of one tree each, and one for trees 63..99 */
	m.e = calloc(100, sizeof(entry));
	for (n = 0; n < 100; n++)
	{
		uint8_t		u[12];
		entry	   *e = &m.e[n];

		tides_put_be64(u, 2 * n);
		test_put_be32(u + 8, 7);
		e->k = malloc(sizeof(u) + 8);
		e->kl = tides_ikey_make(e->k, u, sizeof(u), 10 + n, TIDES_KT_VALUE);
		e->v = malloc(1);
		e->vl = 0;
	}
	m.n = n;
	build(&env, path, &m, &props);
	t = open_table(&env, path, 901, props.file_size, &s, &err);
	CHECK_OK(s);
	CHECK(t != NULL);
	for (uint64_t tree = 0; tree < 202; tree++)
	{
		tides_put_be64(stem, tree);
		/* even ids are there; odd ones are told apart only before the last range */
		if (tree % 2 == 0 || tree < 2 * (TIDES_SST_MAX_RANGES - 1))
			CHECK(tides_sst_may_contain_prefix(t, stem, 8) == (tree % 2 == 0 && tree < 200));
		else
			CHECK(tides_sst_may_contain_prefix(t, stem, 8) == (tree < 199));
	}
	CHECK_OK(tides_sst_verify(t, &err));
	tides_sst_close(t);
	tides_sst_props_free(&props);
	model_free(&m);
}

/*
 * One compressor per zstd level, reused for many 4 KiB blocks as a builder
 * does: up to level 3 its frames come from a dictionary of no content,
 * above from the level set on its context once (compress.c).  Every one of
 * twenty frames of a compressor must come back whole through the plain
 * decompressor, and a frame cut short must be corruption that names its
 * block.
 */
static void
test_zstd_levels(void)
{
	static const int levels[] = {TIDES_ZSTD_FASTEST, -1, 1, 2, 3, 4, 9, 19, 22};
	static const char *const words[] = {"tides", "row", "vid", "index", "level", "block", "zstd", "key"};
	tides_rand	r;

	tides_rand_seed(&r, 42);
	for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++)
	{
		tides_compressor c;
		tides_buf	out,
					back;

		tides_compressor_init(&c, TIDES_COMPRESS_ZSTD, levels[l]);
		tides_buf_init(&out);
		tides_buf_init(&back);
		for (int blk = 0; blk < 20; blk++)
		{
			uint8_t		src[4096];
			size_t		n = 0;
			tides_error err;

			while (n < sizeof(src))
			{
				const char *w = words[tides_rand_uniform(&r, 8)];
				size_t		wl = strlen(w);

				if (wl > sizeof(src) - n)
					wl = sizeof(src) - n;
				memcpy(src + n, w, wl);
				n += wl;
			}
			CHECK(tides_compress(&c, src, n, &out) == TIDES_COMPRESS_ZSTD);
			CHECK(out.len < n);
			CHECK_OK(tides_decompress(TIDES_COMPRESS_ZSTD, out.data, out.len, &back, "test", 0, &err));
			CHECK(back.len == n && memcmp(back.data, src, n) == 0);
			/* a frame cut short: corruption, and the message names the block */
			CHECK(tides_decompress(TIDES_COMPRESS_ZSTD, out.data, out.len - 1, &back, "t.sst", 4096,
								   &err) == TIDES_CORRUPTION);
			CHECK(strstr(err.msg, " in block at offset 4096 of t.sst") != NULL);
		}
		tides_buf_free(&out);
		tides_buf_free(&back);
		tides_compressor_free(&c);
	}
}

int
main(int argc, char **argv)
{
	char	   *dir;
	tides_compression comps[] = {TIDES_COMPRESS_NONE, TIDES_COMPRESS_LZ4, TIDES_COMPRESS_ZSTD};

	test_init(argc, argv);
	dir = test_tmpdir("sst");
	for (int c = 0; c < 3; c++)
	{
		run_config(dir, comps[c], 4096, 16, 10, 0, true, 3000, 0);
		run_config(dir, comps[c], 256, 1, 10, 8, false, 1500, 0);
		run_config(dir, comps[c], 1024, 4, 0, 0, true, 1500, 50);
	}
	/* one huge block per big value, partitions of one block, empty table */
	run_config(dir, TIDES_COMPRESS_LZ4, 64, 2, 10, 8, true, 600, 5);
	run_config(dir, TIDES_COMPRESS_NONE, 65536, 128, 10, 0, true, 4000, 0);
	run_config(dir, TIDES_COMPRESS_NONE, 4096, 16, 10, 8, true, 0, 0);
	run_config(dir, TIDES_COMPRESS_ZSTD, 4096, 16, 10, 8, true, 1, 0);

	test_misc(dir);
	test_ranges(dir);
	test_zstd_levels();
	test_corruption(dir, TIDES_COMPRESS_NONE, false);
	test_corruption(dir, TIDES_COMPRESS_LZ4, false);
	test_corruption(dir, TIDES_COMPRESS_ZSTD, true);
	test_rmdir(dir);
	free(dir);
	return test_finish("test_sst");
}
