/*
 * harness.h -- helpers shared by the engine model, crash, fault, multi-process
 * and corruption tests (header-only: each test program is one .c file plus
 * testlib.c).
 *
 *   - fast_tmpdir(): a scratch directory on tmpfs (/dev/shm) unless TMPDIR
 *     is set, because these tests fsync thousands of times;
 *   - a key space: N distinct keys (tree-id prefixed, shared prefixes, a few
 *     long ones) generated from the seed and sorted, so an oracle can be an
 *     array indexed by key rank, and every value is a pure function of
 *     (rank, version) that can be regenerated to check a read;
 *   - store life cycle (fresh region, open with recovery, simulated process
 *     crash) and background-work helpers.
 */
#ifndef TIDES_TEST_HARNESS_H
#define TIDES_TEST_HARNESS_H

#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"
#include "util/coding.h"
#include "util/random.h"

#define H_UNUSED __attribute__((unused))

static inline uint64_t
h_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* a scratch directory, on tmpfs when the caller did not choose TMPDIR */
static H_UNUSED char *
fast_tmpdir(const char *tag)
{
	const char *base = getenv("TMPDIR");
	char	   *path;
	struct stat st;

	if ((base == NULL || !*base) && stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
		access("/dev/shm", W_OK) == 0)
		base = "/dev/shm";
	if (base == NULL || !*base)
		base = "/tmp";
	if (asprintf(&path, "%s/tides-%s-XXXXXX", base, tag) < 0)
		abort();
	if (mkdtemp(path) == NULL)
	{
		perror("mkdtemp");
		abort();
	}
	return path;
}

static H_UNUSED uint64_t
env_u64(const char *name, uint64_t dflt)
{
	const char *s = getenv(name);

	return (s != NULL && *s) ? strtoull(s, NULL, 10) : dflt;
}

/* ------------------------------------------------------------ key space */

typedef struct keyspace
{
	uint32_t	n;
	uint8_t   **key;			/* sorted by memcmp order */
	uint16_t   *len;
} keyspace;

static int
ks_cmp_raw(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t		n = alen < blen ? alen : blen;
	int			r = n ? memcmp(a, b, n) : 0;

	if (r != 0)
		return r;
	return alen < blen ? -1 : (alen > blen ? 1 : 0);
}

typedef struct ks_tmp
{
	uint8_t    *k;
	uint16_t	l;
} ks_tmp;

static int
ks_qsort_cmp(const void *a, const void *b)
{
	const ks_tmp *x = a,
			   *y = b;

	return ks_cmp_raw(x->k, x->l, y->k, y->l);
}

/*
 * n keys: 8-byte big-endian tree id (0..ntrees-1), a short common word, a
 * few random bytes and a hex number; every 500th key is long (300 bytes).
 */
static H_UNUSED void
ks_init(keyspace *ks, uint32_t n, uint32_t ntrees, uint64_t seed)
{
	tides_rand	r;
	ks_tmp	   *t = calloc(n, sizeof(*t));
	uint32_t	w = 0;

	tides_rand_seed(&r, seed ^ 0x6b657973ull);
	for (uint32_t i = 0; i < n; i++)
	{
		uint8_t		buf[400];
		size_t		l = 0;
		uint64_t	tree = tides_rand_uniform(&r, ntrees);
		int			extra = (int) tides_rand_uniform(&r, 4);

		tides_put_be64(buf, tree);
		l = 8;
		memcpy(buf + l, "row", 3);
		l += 3;
		for (int j = 0; j < extra; j++)
			buf[l++] = (uint8_t) tides_rand_uniform(&r, 3);	/* small alphabet: shared prefixes */
		l += (size_t) snprintf((char *) buf + l, 20, "%x", (unsigned) tides_rand_uniform(&r, 1u << 24));
		if (i % 500 == 499)
			while (l < 300)
				buf[l++] = (uint8_t) ('a' + tides_rand_uniform(&r, 26));
		t[i].k = malloc(l);
		memcpy(t[i].k, buf, l);
		t[i].l = (uint16_t) l;
	}
	qsort(t, n, sizeof(*t), ks_qsort_cmp);
	for (uint32_t i = 0; i < n; i++)
	{
		if (w > 0 && ks_cmp_raw(t[w - 1].k, t[w - 1].l, t[i].k, t[i].l) == 0)
		{
			free(t[i].k);
			continue;
		}
		t[w++] = t[i];
	}
	ks->n = w;
	ks->key = malloc(w * sizeof(uint8_t *));
	ks->len = malloc(w * sizeof(uint16_t));
	for (uint32_t i = 0; i < w; i++)
	{
		ks->key[i] = t[i].k;
		ks->len[i] = t[i].l;
	}
	free(t);
}

static H_UNUSED void
ks_free(keyspace *ks)
{
	for (uint32_t i = 0; i < ks->n; i++)
		free(ks->key[i]);
	free(ks->key);
	free(ks->len);
	memset(ks, 0, sizeof(*ks));
}

/* first rank whose key is >= probe (n if none) */
static H_UNUSED uint32_t
ks_lower_bound(const keyspace *ks, const uint8_t *probe, size_t plen)
{
	uint32_t	lo = 0,
				hi = ks->n;

	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo) / 2;

		if (ks_cmp_raw(ks->key[mid], ks->len[mid], probe, plen) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The value of version ver (>= 1) of key rank: mostly short (0..63 bytes,
 * empty included), sometimes 1-4 KiB.  Its first bytes name rank and
 * version when there is room, for readable diagnostics.
 */
static H_UNUSED size_t
ks_value_len(uint32_t rank, uint32_t ver, bool allow_big)
{
	uint64_t	h = h_mix(((uint64_t) rank << 32) | ver);

	if (allow_big && h % 100 < 2)
		return 1000 + (size_t) ((h >> 8) % 3000);
	return (size_t) ((h >> 16) % 64);
}

static H_UNUSED size_t
ks_value(uint32_t rank, uint32_t ver, bool allow_big, uint8_t *out)
{
	size_t		n = ks_value_len(rank, ver, allow_big);
	uint64_t	x = h_mix(((uint64_t) ver << 32) ^ rank ^ 0x76616c7565ull);

	for (size_t i = 0; i < n; i++)
	{
		if (i % 8 == 0)
			x = h_mix(x + i);
		out[i] = (uint8_t) (x >> (8 * (i % 8)));
	}
	if (n >= 8)
	{
		tides_put32(out, rank);
		tides_put32(out + 4, ver);
	}
	return n;
}

#define KS_MAX_VALUE 4096

/* does (val, vlen) equal version ver of rank? */
static H_UNUSED bool
ks_value_is(uint32_t rank, uint32_t ver, bool allow_big, const void *val, size_t vlen)
{
	uint8_t		buf[KS_MAX_VALUE];
	size_t		n = ks_value(rank, ver, allow_big, buf);

	return n == vlen && (n == 0 || memcmp(buf, val, n) == 0);
}

static H_UNUSED void
print_key(FILE *out, const uint8_t *k, size_t n)
{
	for (size_t i = 0; i < n && i < 64; i++)
		fprintf(out, (k[i] >= 0x20 && k[i] < 0x7f) ? "%c" : "\\x%02x", k[i]);
	if (n > 64)
		fprintf(out, "...(%zu bytes)", n);
}

/* ------------------------------------------------------- tree/row keys */

/* a 12-byte key: 8-byte big-endian tree, 4-byte big-endian row (the layout of
 * the access method's row keys, shortened) */
#define H_ROW_KEY_LEN 12

static H_UNUSED size_t
h_row_key(uint8_t *k, uint32_t tree, uint32_t row)
{
	tides_put_be64(k, tree);
	k[8] = (uint8_t) (row >> 24);
	k[9] = (uint8_t) (row >> 16);
	k[10] = (uint8_t) (row >> 8);
	k[11] = (uint8_t) row;
	return H_ROW_KEY_LEN;
}

/* incompressible value of version ver of (tree, row) */
static H_UNUSED void
h_row_value(uint8_t *v, size_t n, uint32_t tree, uint32_t row, uint32_t ver)
{
	uint64_t	x = h_mix(((uint64_t) tree << 40) ^ ((uint64_t) row << 8) ^ ver);

	for (size_t i = 0; i < n; i++)
	{
		if (i % 8 == 0)
			x = h_mix(x + i);
		v[i] = (uint8_t) (x >> (8 * (i % 8)));
	}
}

/* the store's figures now, as a value */
static H_UNUSED tides_stats
h_stats(tides_db *db)
{
	tides_stats s;

	tides_get_stats(db, &s);
	return s;
}

/* rows [0, nrows) of a tree that read back as their version 1 of vlen bytes */
static H_UNUSED uint32_t
h_rows_present(tides_db *db, uint32_t tree, uint32_t nrows, size_t vlen)
{
	uint32_t	n = 0;
	uint8_t    *want = malloc(vlen);

	for (uint32_t row = 0; row < nrows; row++)
	{
		uint8_t		k[H_ROW_KEY_LEN];
		void	   *v = NULL;
		size_t		vl = 0;

		h_row_key(k, tree, row);
		h_row_value(want, vlen, tree, row, 1);
		if (tides_get(db, NULL, k, sizeof(k), &v, &vl) == TIDES_OK && vl == vlen &&
			memcmp(v, want, vlen) == 0)
			n++;
		free(v);
	}
	free(want);
	return n;
}

/* ------------------------------------------------------------------ store */

typedef struct store
{
	tides_options opts;
	void	   *region;
	size_t		size;
	char	   *dir;
	tides_vfs  *vfs;
	tides_db   *db;
	tides_recovery_info info;
} store;

/* fresh region + recovery; returns the status of tides_open */
static H_UNUSED tides_status
store_open(store *s)
{
	tides_status st;

	s->size = tides_region_size(&s->opts);
	if (s->size == 0)
		return TIDES_INVALID;
	s->region = test_shared_alloc(s->size);
	st = tides_region_init(s->region, s->size, &s->opts);
	if (st != TIDES_OK)
		return st;
	st = tides_open(s->region, s->dir, &s->opts, s->vfs, true, &s->info, &s->db);
	return st;
}

/* drop the handle and the region without any shutdown (a process crash) */
static H_UNUSED void
store_crash(store *s)
{
	tides_close(s->db);
	s->db = NULL;
	if (s->region != NULL)
		test_shared_free(s->region, s->size);
	s->region = NULL;
}

static H_UNUSED void
report_problem(void *arg, const char *file, const char *problem)
{
	int		   *quiet = arg;

	if (quiet == NULL || !*quiet)
		fprintf(stderr, "verify: %s: %s\n", file, problem);
}

/* one round of every work function; true if any did something */
static H_UNUSED bool
work_once(tides_db *db, tides_status *err)
{
	bool		a = false,
				b = false,
				c = false,
				d = false;
	tides_status s;

	*err = TIDES_OK;
	if ((s = tides_flush_work(db, &a)) != TIDES_OK)
		*err = s;
	if ((s = tides_compact_work(db, &b)) != TIDES_OK)
		*err = s;
	if ((s = tides_maint_work(db, &c)) != TIDES_OK)
		*err = s;
	if ((s = tides_sync_work(db, &d)) != TIDES_OK)
		*err = s;
	return a || b || c || d;
}

/* run work until there is none (bounded); returns the first error */
static H_UNUSED tides_status
drain(tides_db *db)
{
	tides_status first = TIDES_OK,
				s;

	for (int i = 0; i < 100000; i++)
	{
		bool		did = work_once(db, &s);

		if (s != TIDES_OK && first == TIDES_OK)
			first = s;
		if (s != TIDES_OK || !did)
			break;
	}
	return first;
}

/*
 * Write b, doing flush work -- and compaction work too if `compact` -- while
 * the engine answers BUSY (a single-process test has no workers), then
 * clear it.  A test that counts or provokes compactions itself flushes only.
 */
static H_UNUSED void
h_write_retrying(tides_db *db, tides_batch *b, bool compact)
{
	tides_status s;

	for (int tries = 0; (s = tides_write(db, b, NULL)) == TIDES_BUSY && tries < 10000; tries++)
	{
		bool		did;

		CHECK_OK(tides_flush_work(db, &did));
		if (compact)
			CHECK_OK(tides_compact_work(db, &did));
	}
	CHECK_OK(s);
	tides_batch_clear(b);
}

static H_UNUSED void
h_write_through(tides_db *db, tides_batch *b)
{
	h_write_retrying(db, b, true);
}

/* seal the active memtable and flush every sealed one: level 0 gets a file each */
static H_UNUSED void
h_seal_and_flush(tides_db *db)
{
	bool		did;

	for (int tries = 0; tides_seal_memtable(db) == TIDES_BUSY && tries < 1000; tries++)
		CHECK_OK(tides_flush_work(db, &did));
	do
		CHECK_OK(tides_flush_work(db, &did));
	while (did);
}

/* a full compaction to its end: every level down to the last */
static H_UNUSED void
h_compact_full(tides_db *db)
{
	tides_full_compaction fc;
	bool		done = false,
				did;

	tides_full_compaction_begin(db, &fc);
	for (int steps = 0; !done && steps < 10000; steps++)
		CHECK_OK(tides_full_compaction_step(db, &fc, &done, &did));
	CHECK(done);
}

/* ------------------------------------------------------- a small store */

/*
 * Options of a small store that flushes and compacts early (64 KiB
 * memtables, segments and files), and its numbered keys: "key%06d" ->
 * "value-of-%06d".  For tests about the store's files more than its data
 * (a missing CURRENT, the format version).
 */
static H_UNUSED void
small_store_opts(tides_options *o)
{
	tides_options_default(o);
	o->memtable_size = 64 << 10;
	o->memtable_count = 3;
	o->block_cache_size = 1 << 20;
	o->meta_size = 1 << 20;
	o->max_open_tags = 16;
	o->log_segment_size = 256 << 10;
	o->target_file_size = 64 << 10;
	o->level_base_size = 64 << 10;
	o->sync_mode = TIDES_SYNC_NONE;
}

/* write numbered key i, running background work while the engine is busy */
static H_UNUSED void
put_numbered(tides_db *db, int i)
{
	tides_batch *b = tides_batch_new();
	char		k[32],
				v[64];

	sprintf(k, "key%06d", i);
	sprintf(v, "value-of-%06d", i);
	CHECK_OK(tides_batch_put(b, k, strlen(k), v, strlen(v)));
	while (tides_write(db, b, NULL) == TIDES_BUSY)
		drain(db);
	tides_batch_free(b);
}

/* how many of the numbered keys 0 .. n-1 read back with their values */
static H_UNUSED int
count_numbered(tides_db *db, int n)
{
	int			found = 0;

	for (int i = 0; i < n; i++)
	{
		char		k[32],
					w[64];
		void	   *v = NULL;
		size_t		vl;

		sprintf(k, "key%06d", i);
		sprintf(w, "value-of-%06d", i);
		if (tides_get(db, NULL, k, strlen(k), &v, &vl) == TIDES_OK && vl == strlen(w) &&
			memcmp(v, w, vl) == 0)
			found++;
		free(v);
	}
	return found;
}

#endif
