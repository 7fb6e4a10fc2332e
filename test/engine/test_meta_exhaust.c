/*
 * test_meta_exhaust.c -- running out of shared metadata memory (or losing
 * a manifest fsync) in the middle of installing new state must never lose
 * or delete a file a manifest names.
 *
 * The metadata heap is capped (tides_shm_heap_set_limit) at every budget
 * from 0 to a few KiB above what is in use, so each allocation a flush or a
 * compaction makes while installing its result fails in turn.  After each
 * attempt:
 *
 *   - every file the current version names exists, and every key reads
 *     back exactly (so a failed installation left the old state in force);
 *   - after a process crash right there, recovery succeeds and every key
 *     reads back (so no durable manifest record names a deleted file).
 *
 * Also: a memtable switch that cannot get its superversion leaves the old
 * memtable active (a write after the heap recovers is readable), and a
 * flush whose manifest record was written but whose fsync (and the cut
 * back) failed keeps its output: the record is in the file, and after a
 * process crash recovery reads the flushed keys from it.
 */
#include "harness.h"
#include "db/db_impl.h"
#include "vfs_fault.h"

#include <sys/stat.h>

#define NKEYS 300

static store st;
static char *root;
static int	case_no;

#define FAILF(...) \
	do { \
		test_failures++; \
		fprintf(stderr, "test_meta_exhaust [case %d, seed %llu]: ", case_no, \
				(unsigned long long) test_seed); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
	} while (0)

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

static tides_shared *
shared(void)
{
	return (tides_shared *) st.region;
}

static size_t
key_of(char *buf, int i)
{
	return (size_t) sprintf(buf, "key%05d", i);
}

/* value of key i in generation g (0: absent) */
static size_t
val_of(uint8_t *buf, int i, int g)
{
	size_t		n = 20 + (size_t) (h_mix((uint64_t) i * 31 + (uint64_t) g) % 100);

	for (size_t k = 0; k < n; k++)
		buf[k] = (uint8_t) h_mix((uint64_t) i * 1000003 + (uint64_t) g * 7 + k);
	return n;
}

static int	gen[NKEYS];			/* what each key holds now (0: deleted/absent) */

static void
write_gen(int g, int every, bool deletes)
{
	for (int i = 0; i < NKEYS; i += every)
	{
		tides_batch *b = tides_batch_new();
		char		k[32];
		uint8_t		v[200];
		size_t		kl = key_of(k, i);
		bool		del = deletes && i % 3 == 0;

		if (del)
			tides_batch_delete(b, k, kl);
		else
			tides_batch_put(b, k, kl, v, val_of(v, i, g));
		CHECK_OK(tides_write(st.db, b, NULL));
		tides_batch_free(b);
		gen[i] = del ? 0 : g;
	}
}

static void
check_keys(const char *when)
{
	for (int i = 0; i < NKEYS; i++)
	{
		char		k[32];
		uint8_t		want[200];
		size_t		kl = key_of(k, i),
					wl = gen[i] ? val_of(want, i, gen[i]) : 0,
					vl;
		void	   *v = NULL;
		tides_status s = tides_get(st.db, NULL, k, kl, &v, &vl);

		if (gen[i] == 0 && s != TIDES_NOT_FOUND)
			FAILF("%s: %s should be absent: %s", when, k, tides_status_name(s));
		else if (gen[i] != 0 && s != TIDES_OK)
		{
			FAILF("%s: %s: %s: %s", when, k, tides_status_name(s), tides_errmsg(st.db));
			free(v);
			return;
		}
		else if (gen[i] != 0 && (vl != wl || memcmp(v, want, wl) != 0))
			FAILF("%s: %s has a wrong value", when, k);
		free(v);
	}
}

/* every file of the current version is on disk */
static void
check_files(const char *when)
{
	tides_version *v = shared()->current;

	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		for (uint32_t i = 0; i < v->nfiles[l]; i++)
		{
			char		path[1024];
			struct stat sb;

			snprintf(path, sizeof(path), "%s/%06llu.sst", st.dir,
					 (unsigned long long) v->files[l][i]->number);
			if (stat(path, &sb) != 0)
				FAILF("%s: level %d file %s is named by the current version but missing", when, l, path);
		}
}

static void
start(const char *tag)
{
	char		sub[64];

	memset(&st, 0, sizeof(st));
	opts(&st.opts);
	snprintf(sub, sizeof(sub), "%s/%s-%d", root, tag, case_no);
	mkdir(sub, 0700);
	st.dir = strdup(sub);
	CHECK_OK(store_open(&st));
	memset(gen, 0, sizeof(gen));
}

static void
finish(void)
{
	char	   *dir = st.dir;

	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(dir);
	free(dir);
}

/* crash now, recover, and check every key */
static void
crash_and_check(const char *when)
{
	char		msg[128];
	tides_status s;

	store_crash(&st);
	s = store_open(&st);
	snprintf(msg, sizeof(msg), "%s, after a crash and recovery", when);
	if (s != TIDES_OK)
	{
		FAILF("%s: recovery failed: %s: %s", msg, tides_status_name(s),
			  st.db ? tides_errmsg(st.db) : "");
		return;
	}
	check_files(msg);
	check_keys(msg);
	{
		int			quiet = 0;

		if (tides_verify(st.db, report_problem, &quiet) != 0)
			FAILF("%s: tides_verify found problems", msg);
	}
}

typedef enum
{
	OP_FLUSH,
	OP_COMPACT
} op_kind;

/*
 * One budget: bring the store to the point before the operation, cap the
 * heap at `budget` bytes above its use, run the operation, lift the cap,
 * check, crash, check.  Returns whether the operation succeeded.
 */
static bool
one_budget(op_kind op, uint64_t budget)
{
	tides_shared *sh;
	tides_status s;
	bool		did = false;
	const char *name = op == OP_FLUSH ? "flush" : "compaction";
	char		when[128];

	case_no++;
	start(name);
	sh = shared();
	write_gen(1, 1, false);
	if (op == OP_COMPACT)
	{
		/* two level-0 files with overlapping keys and some deletions */
		CHECK_OK(tides_seal_memtable(st.db));
		CHECK_OK(tides_flush_work(st.db, &did));
		write_gen(2, 2, true);
	}
	CHECK_OK(tides_seal_memtable(st.db));
	if (op == OP_COMPACT)
		CHECK_OK(tides_flush_work(st.db, &did));

	tides_shm_heap_set_limit(&sh->heap, sh->heap.bytes_in_use + budget);
	if (op == OP_FLUSH)
		s = tides_flush_work(st.db, &did);
	else
		s = tides_compact_work(st.db, &did);
	tides_shm_heap_set_limit(&sh->heap, 0);

	snprintf(when, sizeof(when), "%s with %llu bytes of metadata heap to spare", name,
			 (unsigned long long) budget);
	if (s != TIDES_OK && s != TIDES_NO_MEMORY)
		FAILF("%s: %s: %s", when, tides_status_name(s), tides_errmsg(st.db));
	if (s == TIDES_OK && !did)
		FAILF("%s: nothing was done", when);
	check_files(when);
	check_keys(when);
	crash_and_check(when);
	finish();
	return s == TIDES_OK;
}

static void
sweep(op_kind op)
{
	int			ok_in_a_row = 0;
	int			failures = 0;

	/* 32 bytes is the smallest size class: every cut point is visited */
	for (uint64_t budget = 0; budget < 16384 && ok_in_a_row < 2; budget += 32)
	{
		if (one_budget(op, budget))
			ok_in_a_row++;
		else
		{
			failures++;
			ok_in_a_row = 0;
		}
	}
	if (failures == 0)
		FAILF("%s: never ran out of metadata memory (the sweep proves nothing)",
			  op == OP_FLUSH ? "flush" : "compaction");
	if (ok_in_a_row == 0)
		FAILF("%s: never succeeded", op == OP_FLUSH ? "flush" : "compaction");
}

/* a memtable switch without memory for its superversion changes nothing */
static void
switch_without_memory(void)
{
	tides_shared *sh;
	tides_status s = TIDES_OK;
	int			n = 0;

	case_no++;
	start("switch");
	sh = shared();
	write_gen(1, 1, false);
	tides_shm_heap_set_limit(&sh->heap, sh->heap.bytes_in_use);
	/* fill the active memtable until a write needs a fresh one */
	for (int i = 0; i < 100000 && s == TIDES_OK; i++)
	{
		tides_batch *b = tides_batch_new();
		char		k[32];
		uint8_t		v[200];
		size_t		kl = (size_t) sprintf(k, "fill%06d", i);

		tides_batch_put(b, k, kl, v, val_of(v, i, 9));
		s = tides_write(st.db, b, NULL);
		tides_batch_free(b);
		n = i;
	}
	tides_shm_heap_set_limit(&sh->heap, 0);
	if (s != TIDES_NO_MEMORY)
		FAILF("a memtable switch with an exhausted heap returned %s", tides_status_name(s));
	(void) n;
	/* the heap is back: the next write switches for real and is readable */
	write_gen(2, 7, false);
	check_keys("writes after a memtable switch failed for lack of memory");
	crash_and_check("memtable switch without memory");
	finish();
}

/*
 * The manifest record of a flush is written, but its fsync fails and so
 * does the cut back: the record stays in the file (it could equally have
 * reached the disk before the fsync error).  The flush fails, and must keep
 * its output; after a process crash the manifest names it.
 */
static void
flush_record_written_fsync_failed(void)
{
	tides_vfs_fault *vf = tides_vfs_fault_new(tides_vfs_posix(), test_seed);
	tides_fault_rule sync_rule = {.ops = TIDES_FAULT_SYNC, .pattern = "MANIFEST", .count = 1,
	.err = EIO};
	tides_fault_rule cut_rule = {.ops = TIDES_FAULT_TRUNCATE, .pattern = "MANIFEST", .count = 1,
	.err = EIO};
	tides_status s;
	bool		did;

	case_no++;
	memset(&st, 0, sizeof(st));
	opts(&st.opts);
	st.vfs = tides_vfs_fault_vfs(vf);
	{
		char		sub[64];

		snprintf(sub, sizeof(sub), "%s/fsync-%d", root, case_no);
		mkdir(sub, 0700);
		st.dir = strdup(sub);
	}
	CHECK_OK(store_open(&st));
	memset(gen, 0, sizeof(gen));
	write_gen(1, 1, false);
	CHECK_OK(tides_seal_memtable(st.db));
	tides_vfs_fault_add_rule(vf, &sync_rule);
	tides_vfs_fault_add_rule(vf, &cut_rule);
	s = tides_flush_work(st.db, &did);
	tides_vfs_fault_clear_rules(vf);
	if (s == TIDES_OK)
		FAILF("a flush whose manifest fsync failed succeeded");
	check_files("flush whose manifest fsync failed");
	check_keys("flush whose manifest fsync failed");
	/* a process crash: the files stay as they are, the record included */
	store_crash(&st);
	st.vfs = NULL;
	s = store_open(&st);
	if (s != TIDES_OK)
		FAILF("recovery after a flush whose manifest fsync failed: %s: %s", tides_status_name(s),
			  st.db ? tides_errmsg(st.db) : "");
	else
	{
		check_files("recovered after a flush whose manifest fsync failed");
		check_keys("recovered after a flush whose manifest fsync failed");
	}
	finish();
	tides_vfs_fault_free(vf);
}

int
main(int argc, char **argv)
{
	test_init(argc, argv);
	root = fast_tmpdir("meta");
	sweep(OP_FLUSH);
	sweep(OP_COMPACT);
	switch_without_memory();
	flush_record_written_fsync_failed();
	fprintf(stderr, "test_meta_exhaust: %d cases\n", case_no);
	if (test_failures == 0)
		test_rmdir(root);
	else
		fprintf(stderr, "test_meta_exhaust: stores kept under %s\n", root);
	return test_finish("test_meta_exhaust");
}
