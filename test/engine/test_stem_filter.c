/*
 * test_stem_filter.c -- the stem filter (tides_options.filter_stem_suffix)
 * and iterators with lower_is_stem: a uniqueness check's read.
 *
 * The store looks like a table with a unique index on an ascending key:
 * every batch writes rows of tree 1 and tree 3 and the index entries of
 * tree 2 (key = tree || 8-byte big-endian number || 6-byte "row id"), so
 * every level-0 file and every last-level file spans the index's whole key
 * range and no file can be passed over on its smallest and largest keys.
 *
 *   absent     the stem of the next ascending key (beyond every entry), and
 *              of keys in the gaps, is looked up with lower_is_stem: no
 *              entry shown, and every file is ruled out by its filter
 *              (bloom_useful counts them; at most one false positive per
 *              probe allowed), with fewer blocks read than the same read
 *              without the option.
 *   present    the stem of every 7th entry (some deleted, some overwritten):
 *              exactly the live entry is shown, with its newest value.
 *   stem_absent  tides_stem_absent never answers "absent" for the stem of a
 *              live entry (in a memtable or a file), and with the filter
 *              answers it for nearly every stem beyond the entries, which
 *              every file's key range covers; its counters add up.
 *   mismatch   reopened with another suffix length (and with none), the old
 *              files answer "may contain" (every entry still found), new
 *              files filter with the new length.
 *   memtables  entries only in memtables (written, then replayed after a
 *              crash) are never absent, stems between them always are.
 *   props      a table's stem suffix survives the properties round trip;
 *              a properties block without the appended field (as written
 *              before it existed) decodes with no stem filter.
 */
#include "harness.h"
#include "db/db_impl.h"
#include "table/format.h"

#define SUFFIX 6
#define NKEYS 6000
#define PER_FLUSH 500
#define VLEN 40

static store st;
static uint32_t ver[NKEYS];		/* 0: absent (deleted) */

static size_t
entry_key(uint8_t *k, uint64_t n)
{
	tides_put_be64(k, 2);
	tides_put_be64(k + 8, n);
	/* the "row id": anything; a fixed function of n */
	for (int i = 0; i < SUFFIX; i++)
		k[16 + i] = (uint8_t) (n * 31 + (uint64_t) i);
	return 16 + SUFFIX;
}

static void
row_key(uint8_t *k, uint64_t tree, uint64_t n)
{
	tides_put_be64(k, tree);
	tides_put_be64(k + 8, n);
}

static void
value(uint8_t *v, uint64_t n, uint32_t version)
{
	for (int i = 0; i < VLEN; i++)
		v[i] = (uint8_t) (n + version * 7 + (uint64_t) i);
}

/* one round of background work; true if some was done */
static bool
work_round(void)
{
	tides_status err;
	bool		did = work_once(st.db, &err);

	CHECK_OK(err);
	return did;
}

static void
write_batch(tides_batch *b)
{
	tides_status s;

	for (int tries = 0; (s = tides_write(st.db, b, NULL)) == TIDES_BUSY && tries < 100000; tries++)
		(void) work_round();
	CHECK_OK(s);
	tides_batch_clear(b);
}

static void
flush_all(void)
{
	bool		did;

	for (int tries = 0; tides_seal_memtable(st.db) == TIDES_BUSY && tries < 1000; tries++)
		CHECK_OK(tides_flush_work(st.db, &did));
	do
		CHECK_OK(tides_flush_work(st.db, &did));
	while (did);
}

static void
load(void)
{
	tides_batch *b = tides_batch_new();
	uint8_t		k[32],
				v[VLEN];

	for (uint64_t n = 0; n < NKEYS; n++)
	{
		row_key(k, 1, n);
		value(v, n, 1);
		CHECK_OK(tides_batch_put(b, k, 16, v, VLEN));
		row_key(k, 3, n);
		CHECK_OK(tides_batch_put(b, k, 16, v, VLEN));
		CHECK_OK(tides_batch_put(b, k, entry_key(k, n), v, VLEN));
		ver[n] = 1;
		if (n % 50 == 49)
			write_batch(b);
		if (n % PER_FLUSH == PER_FLUSH - 1)
		{
			/* some deletes and overwrites of earlier entries */
			for (uint64_t m = n - PER_FLUSH + 1; m <= n; m += 11)
			{
				size_t		kl = entry_key(k, m);

				if (m % 2)
				{
					CHECK_OK(tides_batch_delete(b, k, kl));
					ver[m] = 0;
				}
				else
				{
					value(v, m, ++ver[m]);
					CHECK_OK(tides_batch_put(b, k, kl, v, VLEN));
				}
			}
			write_batch(b);
			flush_all();
			/* half of the data moves down, so both level 0 and deeper levels hold files */
			if (n < NKEYS / 2)
				while (work_round())
					;
		}
	}
	write_batch(b);
	tides_batch_free(b);
}

/* the entries shown for stem(n) through an iterator; returns blocks read, sets ruled-out files */
static uint64_t
stem_read(uint64_t n, bool use_stem, int *shown, bool *right, uint64_t *ruled_out)
{
	uint8_t		lo[32],
				hi[32];
	tides_iter_options io;
	tides_stats a,
				b;
	tides_iter *it;

	entry_key(lo, n);
	entry_key(hi, n + 1);
	memset(&io, 0, sizeof(io));
	io.lower = lo;
	io.lower_len = 16;
	io.upper = hi;
	io.upper_len = 16;
	io.fill_cache = true;
	io.lower_is_stem = use_stem;
	tides_get_stats(st.db, &a);
	it = tides_iter_new(st.db, &io);
	*shown = 0;
	*right = true;
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
	{
		size_t		kl,
					vl;
		uint8_t		want[32],
					wv[VLEN];
		const void *k = tides_iter_key(it, &kl);
		const void *v = tides_iter_value(it, &vl);

		(*shown)++;
		entry_key(want, n);
		value(wv, n, n < NKEYS ? ver[n] : 0);
		if (kl != 16 + SUFFIX || memcmp(k, want, kl) != 0 || vl != VLEN || memcmp(v, wv, VLEN) != 0)
			*right = false;
	}
	CHECK_OK(tides_iter_status(it));
	tides_iter_free(it);
	tides_get_stats(st.db, &b);
	*ruled_out = b.bloom_useful - a.bloom_useful;
	return (b.cache_hits - a.cache_hits) + (b.cache_misses - a.cache_misses);
}

/* tides_stem_absent of stem(n), checked against the oracle for a live entry */
static bool
stem_absent(uint64_t n, const char *what)
{
	uint8_t		k[32];
	bool		absent = false;

	entry_key(k, n);
	CHECK_OK(tides_stem_absent(st.db, k, 16, &absent));
	if (absent && n < NKEYS && ver[n] != 0)
	{
		fprintf(stderr, "%s: stem of live entry %llu (version %u) reported absent\n", what,
				(unsigned long long) n, ver[n]);
		test_failures++;
	}
	return absent;
}

static void
check_stem_absent(bool filtered, const char *what)
{
	tides_stats a,
				b;
	uint64_t	calls = 0,
				absent = 0,
				beyond = 0;

	tides_get_stats(st.db, &a);
	for (uint64_t n = 0; n < NKEYS; n++, calls++)
		absent += stem_absent(n, what);
	for (uint64_t n = NKEYS; n < NKEYS + 200; n++, calls++)
		beyond += stem_absent(n, what);
	tides_get_stats(st.db, &b);
	CHECK(b.stem_probes_absent - a.stem_probes_absent == absent + beyond);
	CHECK(b.stem_probes_maybe - a.stem_probes_maybe == calls - absent - beyond);
	/* every file spans the stems: its filter rules it out, but for ~1% false positives per file */
	if (filtered && beyond < 170)
	{
		fprintf(stderr, "%s: only %llu of 200 stems beyond every entry proven absent\n", what,
				(unsigned long long) beyond);
		test_failures++;
	}
	fprintf(stderr, "test_stem_filter: %s: tides_stem_absent: %llu of %d stored stems (deleted ones), "
			"%llu of 200 beyond\n", what, (unsigned long long) absent, NKEYS, (unsigned long long) beyond);
}

/*
 * Entries only in memtables, above every file's keys: the stems of every
 * other number from MEM_BASE are written (not flushed), so a probe of one
 * of them must see "maybe" -- through the memtables' stem filters, which
 * hold a stem before its write returns, and after a crash through the
 * filters the log's replay filled -- and a probe of a stem between them
 * mostly "absent": the memtables' filters turn it away (their false
 * positives go on to the skiplist, which is exact), the level-0 files,
 * whose key ranges span tree 2 up to tree 3, by their stem filters (about
 * 1% false positives each, as in check_stem_absent).
 */
#define MEM_BASE (NKEYS + 1000)
#define MEM_SPAN 400

static void
write_memtable_entries(void)
{
	tides_batch *b = tides_batch_new();
	uint8_t		k[32],
				v[VLEN];

	for (uint64_t n = MEM_BASE; n < MEM_BASE + MEM_SPAN; n += 2)
	{
		value(v, n, 1);
		CHECK_OK(tides_batch_put(b, k, entry_key(k, n), v, VLEN));
	}
	write_batch(b);
	tides_batch_free(b);
}

static void
check_memtable_stems(const char *what)
{
	int			stored_absent = 0,
				between_absent = 0,
				filter_passed = 0;
	tides_superversion *sv = tides_sv_acquire(st.db);

	CHECK(sv->nmem > 0);
	for (uint64_t n = MEM_BASE; n < MEM_BASE + MEM_SPAN; n++)
	{
		uint8_t		k[32];
		bool		absent = false;

		entry_key(k, n);
		CHECK_OK(tides_stem_absent(st.db, k, 16, &absent));
		if (n % 2 == 0)
		{
			stored_absent += absent;
			continue;
		}
		between_absent += absent;
		for (uint32_t i = 0; i < sv->nmem; i++)
		{
			CHECK(!tides_memtable_has_prefix(sv->mems[i], k, 16));
			filter_passed += tides_memtable_may_hold_stem(sv->mems[i], k, 16, SUFFIX,
														  tides_memtable_stem_hash(k, 16));
		}
	}
	tides_sv_release(st.db, sv);
	fprintf(stderr, "test_stem_filter: %s: memtable entries reported absent %d of %d; stems between them "
			"%d of %d, the memtables' filters let %d through\n",
			what, stored_absent, MEM_SPAN / 2, between_absent, MEM_SPAN / 2, filter_passed);
	CHECK(stored_absent == 0);
	CHECK(between_absent * 100 >= MEM_SPAN / 2 * 85);
	/* a false positive goes on to the skiplist; 100 stems in a filter of 2,048 words hardly give one */
	CHECK(filter_passed * 20 <= MEM_SPAN / 2);
}

static uint32_t
files_spanning(void)
{
	tides_version *v = st.db->sh->current;
	uint32_t	n = 0;

	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		n += l == 0 ? v->nfiles[0] : (v->nfiles[l] > 0);
	return n;
}

static void
check_absent_and_present(bool filtered, const char *what)
{
	int			shown;
	bool		right;
	uint64_t	ruled,
				with = 0,
				without = 0,
				ruled_all = 0;
	uint32_t	files = files_spanning();
	int			probes = 0;

	/* absent: the next ascending keys, and keys beyond */
	for (uint64_t n = NKEYS; n < NKEYS + 40; n++, probes++)
	{
		with += stem_read(n, true, &shown, &right, &ruled);
		CHECK(shown == 0);
		ruled_all += ruled;
		without += stem_read(n, false, &shown, &right, &ruled);
		CHECK(shown == 0);
	}
	if (filtered)
	{
		/* every file that could be asked, less about 1% false positives */
		if (ruled_all + (uint64_t) probes < (uint64_t) probes * files)
		{
			fprintf(stderr, "%s: %llu files ruled out in %d probes over %u files\n", what,
					(unsigned long long) ruled_all, probes, files);
			test_failures++;
		}
		if (with * 2 > without)
		{
			fprintf(stderr, "%s: %llu blocks read with the stem filter, %llu without\n", what,
					(unsigned long long) with, (unsigned long long) without);
			test_failures++;
		}
	}
	/* present (or deleted) */
	for (uint64_t n = 0; n < NKEYS; n += 7)
	{
		(void) stem_read(n, true, &shown, &right, &ruled);
		if (shown != (ver[n] ? 1 : 0) || !right)
		{
			fprintf(stderr, "%s: entry %llu (version %u): %d shown, %s\n", what,
					(unsigned long long) n, ver[n], shown, right ? "right" : "wrong");
			test_failures++;
		}
	}
	check_stem_absent(filtered, what);
	fprintf(stderr, "test_stem_filter: %s: %u files, %llu of %llu file probes ruled out, "
			"%llu blocks read with the stem, %llu without\n", what, files,
			(unsigned long long) ruled_all, (unsigned long long) probes * files,
			(unsigned long long) with, (unsigned long long) without);
}

static void
test_props(void)
{
	tides_sst_props p,
				q;
	tides_props_ext x,
				y;
	tides_buf	b;
	uint8_t		k[16] = {1};
	tides_error err;

	memset(&p, 0, sizeof(p));
	memset(&x, 0, sizeof(x));
	p.smallest = k;
	p.smallest_len = sizeof(k);
	p.largest = k;
	p.largest_len = sizeof(k);
	x.bloom_bits_per_key = 10;
	x.prefix_len = 14;
	x.stem_suffix = 6;
	tides_buf_init(&b);
	tides_props_encode(&b, &p, &x);
	CHECK_OK(tides_props_decode(b.data, b.len, &q, &y, "t", &err));
	CHECK(y.stem_suffix == 6 && q.stem_suffix == 6 && y.prefix_len == 14);
	tides_sst_props_free(&q);
	/* without the appended field: no stem filter */
	CHECK_OK(tides_props_decode(b.data, b.len - 8, &q, &y, "t", &err));
	CHECK(y.stem_suffix == 0 && q.stem_suffix == 0 && y.prefix_len == 14);
	tides_sst_props_free(&q);
	/* a stem suffix beyond the limit is damage */
	x.stem_suffix = TIDES_MAX_STEM_SUFFIX + 1;
	tides_buf_reset(&b);
	tides_props_encode(&b, &p, &x);
	CHECK(tides_props_decode(b.data, b.len, &q, &y, "t", &err) == TIDES_CORRUPTION);
	tides_buf_free(&b);
}

int
main(int argc, char **argv)
{
	test_init(argc, argv);
	test_props();

	memset(&st, 0, sizeof(st));
	tides_options_default(&st.opts);
	st.opts.memtable_size = 1 << 20;
	st.opts.memtable_count = 4;
	st.opts.block_cache_size = 4 << 20;
	st.opts.meta_size = 4 << 20;
	st.opts.target_file_size = 256 << 10;
	st.opts.level_base_size = 256 << 10;
	st.opts.level0_compaction_trigger = 4;
	st.opts.level0_slowdown_trigger = 40;
	st.opts.level0_stop_trigger = 60;
	st.opts.delayed_write_rate = 0;
	st.opts.sync_mode = TIDES_SYNC_NONE;
	st.opts.prefix_len = 14;
	st.opts.filter_stem_suffix = SUFFIX;
	st.dir = fast_tmpdir("stem");
	CHECK_OK(store_open(&st));
	load();
	check_absent_and_present(true, "stem filter");

	/* another suffix length: the old files cannot tell, every entry still found */
	store_crash(&st);
	st.opts.filter_stem_suffix = SUFFIX - 2;
	CHECK_OK(store_open(&st));
	check_absent_and_present(false, "other suffix");
	store_crash(&st);
	st.opts.filter_stem_suffix = 0;
	CHECK_OK(store_open(&st));
	check_absent_and_present(false, "no stem filter");
	store_crash(&st);

	/* back to the original length: the files filter again */
	st.opts.filter_stem_suffix = SUFFIX;
	CHECK_OK(store_open(&st));
	check_absent_and_present(true, "stem filter again");
	CHECK(tides_verify(st.db, report_problem, NULL) == 0);

	/* entries in memtables, then in the memtables the replay after a crash fills */
	write_memtable_entries();
	check_memtable_stems("memtables");
	store_crash(&st);
	CHECK_OK(store_open(&st));
	check_memtable_stems("memtables after the replay");
	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(st.dir);
	else
		fprintf(stderr, "test_stem_filter: store kept in %s\n", st.dir);
	free(st.dir);
	return test_finish("test_stem_filter");
}
