/*
 * test_corruption.c -- damaged files: the engine reports an error that
 * names the file, never crashes, never returns a wrong value.
 *
 * A store with known contents (SSTables on several levels, level-0 files,
 * entries only in the log, a manifest of several records) is left by a
 * process crash.  For each round a copy of it gets random damage -- one to
 * four flipped bits, or (tables only) a zeroed 512-byte run -- in one file: an SSTable,
 * a log segment (in its written part), the manifest or CURRENT.  The copy is
 * recovered into a fresh region and read completely (every key by point
 * read, then a full scan both ways), then verified.  Rules:
 *
 *   - SSTable: every read returns the exact current value, or an error whose
 *     message names the damaged file; tides_verify reports the file;
 *   - manifest / CURRENT: recovery fails with an error naming the manifest or
 *     CURRENT (a flipped bit never looks like a torn append);
 *   - log: recovery succeeds; unless it reports a damaged log tail, every
 *     value is exact; if it does, a read may miss the newest writes (they were
 *     after the damage) but still never returns bytes that were never written.
 *
 * Not covered: zeroed runs in the log (a zeroed record header reads as the
 * never-written end of the log, so later records are dropped without a
 * report) and in the manifest's last record (that is what a torn append
 * looks like).  TEST_CORRUPTION_ROUNDS (default 160) rounds.
 */
#include "harness.h"

#include <dirent.h>
#include <fcntl.h>

#define KEYS 3000

static keyspace ks;
static uint32_t *cur;
static uint32_t *nextver;
static store st;
static tides_rand rnd;
static char *base,
		   *pristine,
		   *work;
static int	round_no;
static char damaged_name[256];
static char damage_desc[256];
static const char *damaged_kind;
static struct
{
	int			sst,
				log,
				manifest,
				current,
				open_failed,
				read_errors,
				tail_damaged,
				verify_found;
}			cnt;

#define FAILF(...) \
	do { \
		test_failures++; \
		fprintf(stderr, "test_corruption [round %d, %s %s%s, seed %llu]: ", round_no, damaged_kind, \
				damaged_name, damage_desc, (unsigned long long) test_seed); \
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
	o->meta_size = 2 << 20;
	o->block_size = 1024;
	o->log_segment_size = 2 << 20;	/* the log keeps everything since creation */
	o->target_file_size = 64 << 10;
	o->level_base_size = 64 << 10;
	o->level_size_ratio = 4;
	o->level0_compaction_trigger = 3;
	o->sync_mode = TIDES_SYNC_NONE;
}

static void
put_rank(uint32_t r, bool del)
{
	tides_batch *b = tides_batch_new();
	uint8_t		val[KS_MAX_VALUE];
	uint32_t	v = del ? 0 : nextver[r]++;

	if (del)
		tides_batch_delete(b, ks.key[r], ks.len[r]);
	else
		tides_batch_put(b, ks.key[r], ks.len[r], val, ks_value(r, v, true, val));
	while (tides_write(st.db, b, NULL) == TIDES_BUSY)
		drain(st.db);
	tides_batch_free(b);
	cur[r] = v;
}

static void
build(void)
{
	memset(&st, 0, sizeof(st));
	opts(&st.opts);
	st.dir = pristine;
	CHECK_OK(store_open(&st));
	/* three generations: compacted deep, then level 0, then log only */
	for (int gen = 0; gen < 3; gen++)
	{
		int			n = gen == 0 ? 2 * KEYS : KEYS / 2;

		for (int i = 0; i < n; i++)
			put_rank((uint32_t) tides_rand_uniform(&rnd, ks.n), tides_rand_uniform(&rnd, 10) == 0);
		if (gen == 0)
		{
			for (int i = 0; i < 10 && tides_seal_memtable(st.db) == TIDES_BUSY; i++)
				drain(st.db);
			drain(st.db);
		}
		else if (gen == 1)
		{
			bool		did;

			/* flush only: the last manifest record is a flush */
			tides_maint_work(st.db, &did);
			for (int i = 0; i < 10 && tides_seal_memtable(st.db) == TIDES_BUSY; i++)
				tides_flush_work(st.db, &did);
			while (tides_flush_work(st.db, &did) == TIDES_OK && did)
				;
		}
	}
	{
		tides_stats s;

		tides_get_stats(st.db, &s);
		fprintf(stderr, "test_corruption: store: level files");
		for (int l = 0; l < TIDES_MAX_LEVELS; l++)
			fprintf(stderr, " %u", s.level_files[l]);
		fprintf(stderr, ", %llu memtable bytes\n", (unsigned long long) s.memtable_bytes);
	}
	store_crash(&st);
}

static void
copy_dir(const char *from, const char *to)
{
	char		cmd[4096];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -a '%s' '%s'", to, from, to);
	if (system(cmd) != 0)
		abort();
}

typedef struct flist
{
	char		names[512][64];
	int			n;
} flist;

static void
list_files(const char *dir, flist *fl)
{
	DIR		   *d = opendir(dir);
	struct dirent *e;

	fl->n = 0;
	while ((e = readdir(d)) != NULL && fl->n < 512)
		if (e->d_name[0] != '.')
			snprintf(fl->names[fl->n++], 64, "%.63s", e->d_name);
	closedir(d);
}

static bool
ends_with(const char *s, const char *suf)
{
	size_t		a = strlen(s),
				b = strlen(suf);

	return a >= b && strcmp(s + a - b, suf) == 0;
}

/* bytes of a log segment that hold records (up to the last nonzero byte) */
static uint64_t
log_used(const char *path)
{
	int			fd = open(path, O_RDONLY);
	off_t		size = lseek(fd, 0, SEEK_END);
	uint8_t		buf[4096];
	uint64_t	last = 0;

	for (off_t off = 0; off < size; off += (off_t) sizeof(buf))
	{
		ssize_t		n = pread(fd, buf, sizeof(buf), off);

		for (ssize_t i = 0; i < n; i++)
			if (buf[i])
				last = (uint64_t) off + (uint64_t) i + 1;
	}
	close(fd);
	return last;
}

/* damage one file of `work` of the chosen kind */
static bool
damage(int kind)
{
	flist		fl;
	const char *suffix = kind == 0 ? ".sst" : kind == 1 ? ".log" : kind == 2 ? "MANIFEST-" : "CURRENT";
	int			cand[512],
				nc = 0;
	char		path[1400];
	int			fd;
	uint64_t	size;

	list_files(work, &fl);
	for (int i = 0; i < fl.n; i++)
		if ((kind >= 2 ? strstr(fl.names[i], suffix) == fl.names[i] : ends_with(fl.names[i], suffix)) &&
			strcmp(fl.names[i], "CURRENT.tmp") != 0)
			cand[nc++] = i;
	if (nc == 0)
		return false;
	snprintf(damaged_name, sizeof(damaged_name), "%.63s", fl.names[cand[tides_rand_uniform(&rnd, (uint64_t) nc)]]);
	snprintf(path, sizeof(path), "%s/%s", work, damaged_name);
	size = kind == 1 ? log_used(path) : 0;
	fd = open(path, O_RDWR);
	if (kind != 1)
		size = (uint64_t) lseek(fd, 0, SEEK_END);
	if (size == 0)
	{
		close(fd);
		return false;
	}
	/*
	 * Zeroed runs only in tables: in the manifest's last record and in the
	 * log they are indistinguishable from a torn append / the never-written
	 * end of the log (see the report in the test's header).
	 */
	if (kind == 0 && tides_rand_uniform(&rnd, 6) == 0 && size > 600)
	{
		uint8_t		z[512];
		uint64_t	at = tides_rand_uniform(&rnd, size - 512);

		memset(z, 0, sizeof(z));
		CHECK(pwrite(fd, z, sizeof(z), (off_t) at) == (ssize_t) sizeof(z));
		snprintf(damage_desc, sizeof(damage_desc), " zeroed at %llu", (unsigned long long) at);
	}
	else
	{
		int			flips = 1 + (int) tides_rand_uniform(&rnd, 4);

		snprintf(damage_desc, sizeof(damage_desc), " (%llu bytes) flipped at", (unsigned long long) size);
		for (int f = 0; f < flips; f++)
		{
			uint64_t	at = tides_rand_uniform(&rnd, size);
			uint8_t		b;

			CHECK(pread(fd, &b, 1, (off_t) at) == 1);
			b ^= (uint8_t) (1u << tides_rand_uniform(&rnd, 8));
			CHECK(pwrite(fd, &b, 1, (off_t) at) == 1);
			snprintf(damage_desc + strlen(damage_desc), sizeof(damage_desc) - strlen(damage_desc),
					 " %llu", (unsigned long long) at);
		}
	}
	close(fd);
	return true;
}

/* is (v, n) some version of rank r ever written (or allowed stale)? */
static bool
some_version(uint32_t r, const void *v, size_t n)
{
	for (uint32_t ver = 1; ver < nextver[r]; ver++)
		if (ks_value_is(r, ver, true, v, n))
			return true;
	return false;
}

static bool
names_damaged(const char *msg)
{
	return strstr(msg, damaged_name) != NULL;
}

static void
check_reads(int kind, bool tail_damaged)
{
	bool		relaxed = kind == 1 && tail_damaged;

	for (uint32_t r = 0; r < ks.n; r++)
	{
		void	   *v = NULL;
		size_t		n = 0;
		tides_status s = tides_get(st.db, NULL, ks.key[r], ks.len[r], &v, &n);

		if (s == TIDES_OK)
		{
			if (cur[r] != 0 && ks_value_is(r, cur[r], true, v, n))
				;
			else if (relaxed && some_version(r, v, n))
				;
			else
				FAILF("rank %u: a WRONG VALUE (%zu bytes; want %s version %u)", r, n,
					  cur[r] ? "present" : "absent", cur[r]);
		}
		else if (s == TIDES_NOT_FOUND)
		{
			if (cur[r] != 0 && !relaxed)
				FAILF("rank %u: not found, want version %u (a wrong answer)", r, cur[r]);
		}
		else
		{
			cnt.read_errors++;
			if (!names_damaged(tides_errmsg(st.db)))
				FAILF("rank %u: %s, but the message does not name %s: \"%s\"", r,
					  tides_status_name(s), damaged_name, tides_errmsg(st.db));
		}
		free(v);
	}
	/* a full scan: correct up to where it stops, and a stop names the file */
	{
		tides_iter *it = tides_iter_new(st.db, NULL);
		uint32_t	r = 0;

		for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
		{
			size_t		kl,
						vl;
			const void *k = tides_iter_key(it, &kl);
			const void *v = tides_iter_value(it, &vl);
			uint32_t	at = ks_lower_bound(&ks, k, kl);

			if (at >= ks.n || ks_cmp_raw(ks.key[at], ks.len[at], k, kl) != 0)
			{
				FAILF("scan returned a key that was never written");
				break;
			}
			if (!relaxed)
			{
				while (r < at)
					if (cur[r++] != 0)
					{
						FAILF("scan skipped rank %u", r - 1);
						break;
					}
				if (!ks_value_is(at, cur[at], true, v, vl))
				{
					FAILF("scan: rank %u has a wrong value", at);
					break;
				}
			}
			else if (!some_version(at, v, vl))
			{
				FAILF("scan: rank %u has a value never written", at);
				break;
			}
			r = at + 1;
		}
		if (tides_iter_status(it) != TIDES_OK)
		{
			cnt.read_errors++;
			if (!names_damaged(tides_errmsg(st.db)))
				FAILF("scan error does not name %s: \"%s\"", damaged_name, tides_errmsg(st.db));
		}
		else if (!relaxed)
			for (; r < ks.n; r++)
				if (cur[r] != 0)
				{
					FAILF("scan ended early without an error (rank %u missing)", r);
					break;
				}
		tides_iter_free(it);
	}
}

typedef struct vctx
{
	int			naming;
	int			total;
} vctx;

static void
verify_report(void *arg, const char *file, const char *problem)
{
	vctx	   *c = arg;

	c->total++;
	if (strstr(file, damaged_name) != NULL || strstr(problem, damaged_name) != NULL)
		c->naming++;
}

static void
one_round(int kind)
{
	tides_status s;

	copy_dir(pristine, work);
	if (!damage(kind))
		return;
	damaged_kind = kind == 0 ? "table" : kind == 1 ? "log" : kind == 2 ? "manifest" : "current";
	memset(&st, 0, sizeof(st));
	opts(&st.opts);
	st.dir = work;
	s = store_open(&st);
	if (s != TIDES_OK)
	{
		const char *msg = st.db ? tides_errmsg(st.db) : "";

		cnt.open_failed++;
		if (kind <= 1)
			FAILF("recovery failed: %s: %s", tides_status_name(s), msg);
		else if (strstr(msg, "MANIFEST") == NULL && strstr(msg, "CURRENT") == NULL)
			FAILF("recovery failed without naming the manifest or CURRENT: %s: \"%s\"",
				  tides_status_name(s), msg);
		store_crash(&st);
		return;
	}
	if (st.info.log_tail_damaged)
		cnt.tail_damaged++;
	if (kind != 1 && st.info.log_tail_damaged)
		FAILF("recovery reports a damaged log, but the %s was damaged", damaged_kind);
	check_reads(kind, st.info.log_tail_damaged);
	{
		vctx		c = {0, 0};
		int			n = tides_verify(st.db, verify_report, &c);

		if (kind == 0)
		{
			if (c.naming == 0)
				FAILF("tides_verify did not report the damaged table (%d problems)", n);
			else
				cnt.verify_found++;
		}
		else if (n != 0)
			FAILF("tides_verify found %d problems after recovering a damaged %s", n, damaged_kind);
	}
	store_crash(&st);
}

int
main(int argc, char **argv)
{
	int			rounds;

	test_init(argc, argv);
	rounds = (int) env_u64("TEST_CORRUPTION_ROUNDS", 160);
	tides_rand_seed(&rnd, test_seed + 11);
	ks_init(&ks, KEYS, 2, test_seed);
	cur = calloc(ks.n, sizeof(uint32_t));
	nextver = malloc(ks.n * sizeof(uint32_t));
	for (uint32_t i = 0; i < ks.n; i++)
		nextver[i] = 1;
	base = fast_tmpdir("corruption");
	if (asprintf(&pristine, "%s/pristine", base) < 0 || asprintf(&work, "%s/work", base) < 0)
		abort();
	build();

	/* the undamaged copy is exact */
	damaged_kind = "none";
	copy_dir(pristine, work);
	memset(&st, 0, sizeof(st));
	opts(&st.opts);
	st.dir = work;
	if (store_open(&st) != TIDES_OK)
		FAILF("the pristine store does not open");
	else
	{
		check_reads(0, false);
		CHECK(tides_verify(st.db, report_problem, NULL) == 0);
		store_crash(&st);
	}

	for (round_no = 0; round_no < rounds && test_failures < 20; round_no++)
	{
		int			kind;
		uint64_t	p = tides_rand_uniform(&rnd, 100);

		kind = p < 45 ? 0 : p < 75 ? 1 : p < 93 ? 2 : 3;
		switch (kind)
		{
			case 0:
				cnt.sst++;
				break;
			case 1:
				cnt.log++;
				break;
			case 2:
				cnt.manifest++;
				break;
			default:
				cnt.current++;
		}
		one_round(kind);
	}
	fprintf(stderr, "test_corruption: %d rounds: %d tables, %d logs, %d manifests, %d CURRENT damaged; "
			"%d recoveries refused, %d damaged log tails, %d read errors, %d tables caught by verify\n",
			round_no, cnt.sst, cnt.log, cnt.manifest, cnt.current, cnt.open_failed, cnt.tail_damaged,
			cnt.read_errors, cnt.verify_found);
	if (test_failures == 0)
		test_rmdir(base);
	else
		fprintf(stderr, "test_corruption: files kept in %s\n", base);
	free(base);
	free(pristine);
	free(work);
	free(cur);
	free(nextver);
	ks_free(&ks);
	return test_finish("test_corruption");
}
