/*
 * test_oom.c -- every process-local allocation may fail: the engine must
 * return an error (or succeed), never write a broken file, crash, or leave
 * a state that reads wrong.
 *
 * Linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc (tests.mk), so
 * every allocation made by the engine goes through the wrappers below; a
 * test arms them to fail the n-th allocation from now, for n = 0, 1, 2, ...
 * until an operation completes without reaching the failure.
 *
 *   - building an SSTable: the builder either reports an error or the file
 *     opens and holds every entry (a failed allocation while encoding the
 *     properties block used to go unnoticed: the check came after the
 *     buffer was freed, which clears its out-of-memory flag);
 *   - a flush and a compaction: each either fails or succeeds; after it
 *     every key reads back exactly, and after a crash too;
 *   - point reads and a scan over tables the process has not opened yet:
 *     the exact answer or TIDES_NO_MEMORY, never "corruption".
 */
#include "harness.h"
#include "db/db_impl.h"
#include "table/sst.h"

#include <fcntl.h>

/* ---- the allocation wrappers */

void	   *__real_malloc(size_t n);
void	   *__real_calloc(size_t n, size_t m);
void	   *__real_realloc(void *p, size_t n);
void	   *__wrap_malloc(size_t n);
void	   *__wrap_calloc(size_t n, size_t m);
void	   *__wrap_realloc(void *p, size_t n);

static long countdown = -1;		/* fail when it reaches 0; -1: disarmed */
static long failed;

static bool
fail_now(void)
{
	if (countdown < 0)
		return false;
	if (countdown-- == 0)
	{
		failed++;
		return true;
	}
	return false;
}

void *
__wrap_malloc(size_t n)
{
	return fail_now() ? NULL : __real_malloc(n);
}

void *
__wrap_calloc(size_t n, size_t m)
{
	return fail_now() ? NULL : __real_calloc(n, m);
}

void *
__wrap_realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __real_realloc(p, n);
}

static void
arm(long n)
{
	failed = 0;
	countdown = n;
}

/* true if the armed failure happened */
static bool
disarm(void)
{
	countdown = -1;
	return failed > 0;
}

/* ---- SSTable builder */

#define TABLE_KEYS 400

static size_t
table_key(uint8_t *buf, int i)
{
	int			n = sprintf((char *) buf, "key%06d", i);

	return tides_ikey_make(buf, buf, (size_t) n, 1000 + (uint64_t) i, TIDES_KT_VALUE);
}

static void
table_under_oom(const char *dir)
{
	tides_vfs  *vfs = tides_vfs_posix();
	tides_table_env env = {0};
	char		path[1024];
	bool		completed = false;
	long		n;

	env.vfs = vfs;
	env.block_size = 512;
	env.restart_interval = 4;
	env.bloom_bits_per_key = 10;
	env.compression = TIDES_COMPRESS_LZ4;
	snprintf(path, sizeof(path), "%s/oom.sst", dir);
	for (n = 0; !completed && n < 100000; n++)
	{
		int			fd = vfs->open(vfs, path, O_CREAT | O_RDWR | O_TRUNC, 0644);
		tides_sst_builder *b;
		tides_sst_props props;
		tides_status s = TIDES_OK;
		tides_error err;
		bool		hit;

		memset(&props, 0, sizeof(props));
		CHECK(fd >= 0);
		arm(n);
		b = tides_sst_builder_new(&env, fd, path);
		for (int i = 0; b != NULL && s == TIDES_OK && i < TABLE_KEYS; i++)
		{
			uint8_t		k[64];
			char		v[64];
			size_t		kl = table_key(k, i);

			s = tides_sst_builder_add(b, k, kl, (uint8_t *) v, (size_t) sprintf(v, "value-%d", i), &err);
		}
		if (b != NULL && s == TIDES_OK)
			s = tides_sst_builder_finish(b, &props, &err);
		hit = disarm();
		completed = !hit;
		if (b == NULL)
			s = TIDES_NO_MEMORY;
		tides_sst_builder_free(b);
		if (s != TIDES_OK)
		{
			if (s != TIDES_NO_MEMORY)
			{
				test_failures++;
				fprintf(stderr, "test_oom: table, allocation %ld failing: %s\n", n, tides_status_name(s));
			}
			vfs->close(vfs, fd);
			tides_sst_props_free(&props);
			continue;
		}
		/* it says it built the table: the table must be whole */
		{
			tides_sst  *t = NULL;
			int			rfd = vfs->open(vfs, path, O_RDONLY, 0);
			int			seen = 0;
			tides_iiter *it;

			vfs->close(vfs, fd);
			s = tides_sst_open(&env, rfd, 1, props.file_size, path, &t, &err);
			if (s != TIDES_OK)
			{
				test_failures++;
				fprintf(stderr, "test_oom: table built with allocation %ld failing does not open: %s\n",
						n, err.msg);
				tides_sst_props_free(&props);
				continue;
			}
			it = tides_sst_iter_new(t, false);
			for (tides_iiter_first(it); tides_iiter_valid(it); tides_iiter_next(it))
			{
				uint8_t		k[64];
				size_t		kl = table_key(k, seen),
							gl;
				const uint8_t *g = tides_iiter_key(it, &gl);

				if (gl != kl || memcmp(g, k, kl) != 0)
					break;
				seen++;
			}
			if (seen != TABLE_KEYS || tides_iiter_status(it) != TIDES_OK)
			{
				test_failures++;
				fprintf(stderr, "test_oom: table built with allocation %ld failing holds %d of %d keys\n",
						n, seen, TABLE_KEYS);
			}
			tides_iiter_destroy(it);
			tides_sst_close(t);
		}
		tides_sst_props_free(&props);
	}
	CHECK(completed);
	fprintf(stderr, "test_oom: table builder: %ld allocation failure points\n", n - 1);
}

/* ---- flush and compaction */

#define NKEYS 300

static store st;

static void
opts(tides_options *o)
{
	tides_options_default(o);
	o->memtable_size = 64 << 10;
	o->memtable_count = 3;
	o->block_cache_size = 1 << 20;
	o->meta_size = 1 << 20;
	o->max_open_tags = 16;
	o->block_size = 1024;
	o->log_segment_size = 256 << 10;
	o->target_file_size = 64 << 10;
	o->level_base_size = 64 << 10;
	o->level0_compaction_trigger = 2;
	o->sync_mode = TIDES_SYNC_NONE;
}

static void
write_gen(int g, int every)
{
	for (int i = 0; i < NKEYS; i += every)
	{
		tides_batch *b = tides_batch_new();
		char		k[32],
					v[64];

		sprintf(k, "key%05d", i);
		tides_batch_put(b, k, strlen(k), v, (size_t) sprintf(v, "value-%d-%d", i, g));
		CHECK_OK(tides_write(st.db, b, NULL));
		tides_batch_free(b);
	}
}

static int
check_keys(int g2every)
{
	int			bad = 0;

	for (int i = 0; i < NKEYS; i++)
	{
		char		k[32],
					w[64];
		void	   *v = NULL;
		size_t		vl,
					wl;
		tides_status s;

		sprintf(k, "key%05d", i);
		wl = (size_t) sprintf(w, "value-%d-%d", i, g2every && i % g2every == 0 ? 2 : 1);
		s = tides_get(st.db, NULL, k, strlen(k), &v, &vl);
		if (s != TIDES_OK || vl != wl || memcmp(v, w, wl) != 0)
			bad++;
		free(v);
	}
	return bad;
}

static void
engine_under_oom(const char *root, bool compaction)
{
	bool		completed = false;
	long		n;
	int			quiet = 0;

	for (n = 0; !completed && n < 100000; n++)
	{
		char		dir[1024];
		tides_status s;
		bool		did = false,
					hit;
		int			bad;

		snprintf(dir, sizeof(dir), "%s/%s-%ld", root, compaction ? "compaction" : "flush", n);
		memset(&st, 0, sizeof(st));
		opts(&st.opts);
		st.dir = dir;
		CHECK_OK(store_open(&st));
		write_gen(1, 1);
		CHECK_OK(tides_seal_memtable(st.db));
		if (compaction)
		{
			CHECK_OK(tides_flush_work(st.db, &did));
			write_gen(2, 3);
			CHECK_OK(tides_seal_memtable(st.db));
			CHECK_OK(tides_flush_work(st.db, &did));
		}
		arm(n);
		s = compaction ? tides_compact_work(st.db, &did) : tides_flush_work(st.db, &did);
		hit = disarm();
		completed = !hit;
		if (s != TIDES_OK && s != TIDES_NO_MEMORY)
		{
			test_failures++;
			fprintf(stderr, "test_oom: %s with allocation %ld failing: %s: %s\n",
					compaction ? "compaction" : "flush", n, tides_status_name(s), tides_errmsg(st.db));
		}
		if ((bad = check_keys(compaction ? 3 : 0)) != 0)
		{
			test_failures++;
			fprintf(stderr, "test_oom: %s with allocation %ld failing: %d keys read wrong\n",
					compaction ? "compaction" : "flush", n, bad);
		}
		/* the work goes through once memory is back */
		CHECK_OK(drain(st.db));
		store_crash(&st);
		s = store_open(&st);
		if (s != TIDES_OK || (bad = check_keys(compaction ? 3 : 0)) != 0 ||
			tides_verify(st.db, report_problem, &quiet) != 0)
		{
			test_failures++;
			fprintf(stderr, "test_oom: %s with allocation %ld failing, after a crash: %s, keys wrong: %d\n",
					compaction ? "compaction" : "flush", n, tides_status_name(s), bad);
		}
		store_crash(&st);
		if (test_failures == 0)
			test_rmdir(dir);
	}
	CHECK(completed);
	fprintf(stderr, "test_oom: %s: %ld allocation failure points\n", compaction ? "compaction" : "flush",
			n - 1);
}

static void
reads_under_oom(const char *root)
{
	char		dir[1024];
	bool		completed = false;
	long		n;

	snprintf(dir, sizeof(dir), "%s/reads", root);
	memset(&st, 0, sizeof(st));
	opts(&st.opts);
	st.dir = dir;
	CHECK_OK(store_open(&st));
	write_gen(1, 1);
	CHECK_OK(tides_seal_memtable(st.db));
	CHECK_OK(drain(st.db));
	write_gen(2, 3);
	CHECK_OK(tides_seal_memtable(st.db));
	CHECK_OK(drain(st.db));
	store_crash(&st);
	for (n = 0; !completed && n < 100000; n++)
	{
		tides_status s;
		void	   *v = NULL;
		size_t		vl;
		tides_iter *it;
		int			seen = 0;

		/* a fresh process: nothing open, nothing cached */
		CHECK_OK(store_open(&st));
		arm(n);
		s = tides_get(st.db, NULL, "key00150", 8, &v, &vl);
		if (s == TIDES_OK && (vl != 11 || memcmp(v, "value-150-2", 11) != 0))
		{
			fprintf(stderr, "test_oom: reads with allocation %ld failing: a wrong value\n", n);
			s = TIDES_CORRUPTION;
		}
		free(v);
		if (s == TIDES_OK)
		{
			it = tides_iter_new(st.db, NULL);
			if (it == NULL)
				s = TIDES_NO_MEMORY;
			else
			{
				for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
					seen++;
				s = tides_iter_status(it);
				if (s == TIDES_OK && seen != NKEYS)
				{
					fprintf(stderr, "test_oom: reads with allocation %ld failing: the scan ended "
							"after %d of %d keys without an error\n", n, seen, NKEYS);
					s = TIDES_CORRUPTION;
				}
				tides_iter_free(it);
			}
		}
		completed = !disarm();
		if (s != TIDES_OK && s != TIDES_NO_MEMORY)
		{
			test_failures++;
			fprintf(stderr, "test_oom: reads with allocation %ld failing: %s: %s\n", n,
					tides_status_name(s), tides_errmsg(st.db));
		}
		store_crash(&st);
	}
	CHECK(completed);
	fprintf(stderr, "test_oom: reads: %ld allocation failure points\n", n - 1);
}

int
main(int argc, char **argv)
{
	char	   *root;

	test_init(argc, argv);
	root = fast_tmpdir("oom");
	table_under_oom(root);
	engine_under_oom(root, false);
	engine_under_oom(root, true);
	reads_under_oom(root);
	if (test_failures == 0)
		test_rmdir(root);
	else
		fprintf(stderr, "test_oom: stores kept under %s\n", root);
	free(root);
	return test_finish("test_oom");
}
