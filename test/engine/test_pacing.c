/*
 * test_pacing.c -- writers slowed at level 0's slowdown trigger are paced
 * to a byte rate (db/write_pace.c, pace_write), not delayed per write.
 *
 * A store whose level 0 holds a fixed number of files (flushed, never
 * compacted: the test runs no background work) at and past
 * level0_slowdown_trigger.  Checked, with delayed_write_rate 1 MiB/s:
 *   - 256 KiB written as one-entry batches and as 8 KiB batches take
 *     about the same time, at least their bytes at the rate -- a fixed
 *     delay per write made the small batches 32x slower;
 *   - one file more halves the rate (the same bytes take twice as long);
 *   - a sleep lasts at most 100 ms: a batch that needs longer leaves its
 *     debt to its own writer's next writes, not to another process's;
 *   - slowdown_count and slowdown_us count the writes that slept and for
 *     how long;
 *   - below the trigger, with delayed_write_rate 0, and for batches marked
 *     tides_batch_unpaced, nothing waits.
 */
#include "harness.h"
#include "db/db_impl.h"

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KB (1ull << 10)
#define MB (1ull << 20)
#define VLEN 100
#define TOTAL (256 * KB)

static uint32_t next_row;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/*
 * `total` bytes of values in batches of `per` entries (marked with
 * tides_batch_unpaced if `unpaced`); returns the seconds taken
 */
static double
write_batches(tides_db *db, uint32_t per, uint64_t total, bool unpaced)
{
	tides_batch *b = tides_batch_new();
	uint8_t		k[H_ROW_KEY_LEN],
				v[VLEN];
	double		t0 = now_s();

	memset(v, 'v', sizeof(v));
	for (uint64_t done = 0; done < total; done += VLEN)
	{
		h_row_key(k, 1, next_row++);
		CHECK_OK(tides_batch_put(b, k, sizeof(k), v, sizeof(v)));
		if (tides_batch_count(b) >= per)
		{
			if (unpaced)
				tides_batch_unpaced(b);
			CHECK_OK(tides_write(db, b, NULL));
			tides_batch_clear(b);
		}
	}
	if (unpaced)
		tides_batch_unpaced(b);
	if (tides_batch_count(b) > 0)
		CHECK_OK(tides_write(db, b, NULL));
	tides_batch_free(b);
	return now_s() - t0;
}

static double
write_rows(tides_db *db, uint32_t per, uint64_t total)
{
	return write_batches(db, per, total, false);
}

/* flush memtables until level 0 holds n files */
static void
level0_files(tides_db *db, uint32_t n)
{
	uint8_t		k[H_ROW_KEY_LEN],
				v[VLEN];
	tides_batch *b = tides_batch_new();

	memset(v, 'f', sizeof(v));
	while (atomic_load(&db->sh->l0_files) < n)
	{
		h_row_key(k, 2, next_row++);
		CHECK_OK(tides_batch_put(b, k, sizeof(k), v, sizeof(v)));
		h_write_through(db, b);
		h_seal_and_flush(db);
	}
	CHECK(atomic_load(&db->sh->l0_files) == n);
	tides_batch_free(b);
}

/*
 * 40 one-entry writes by a child process attached to the same store; the
 * seconds they took, or -1 if the child failed
 */
static double
other_process_writes(store *st)
{
	double	   *took = test_shared_alloc(sizeof(double));
	double		r;
	int			status = 0;
	pid_t		pid = fork();

	CHECK(pid >= 0);
	*took = -1;
	if (pid == 0)
	{
		tides_db   *db;

		if (tides_open(st->region, st->dir, &st->opts, NULL, false, NULL, &db) != TIDES_OK)
			_exit(2);
		*took = write_rows(db, 1, 40 * VLEN);
		tides_close(db);
		_exit(test_failures ? 1 : 0);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	r = *took;
	test_shared_free(took, sizeof(double));
	return r;
}

static void
open_store(store *st, uint64_t rate)
{
	memset(st, 0, sizeof(*st));
	tides_options_default(&st->opts);
	st->opts.memtable_size = 4 * MB;
	st->opts.memtable_count = 4;
	st->opts.block_cache_size = 2 * MB;
	st->opts.meta_size = 4 * MB;
	st->opts.log_segment_size = 4 * MB;
	st->opts.sync_mode = TIDES_SYNC_NONE;
	st->opts.level0_compaction_trigger = 2;
	st->opts.level0_slowdown_trigger = 2;
	st->opts.level0_stop_trigger = 10;
	st->opts.delayed_write_rate = rate;
	st->dir = test_tmpdir("pacing");
	CHECK_OK(store_open(st));
}

static void
close_store(store *st)
{
	store_crash(st);
	if (test_failures == 0)
		test_rmdir(st->dir);
	free(st->dir);
}

int
main(int argc, char **argv)
{
	store		st;
	tides_stats s0,
				s1;
	double		fast,
				small,
				large,
				deeper,
				big,
				other,
				after,
				least = (double) TOTAL / MB;	/* TOTAL at 1 MiB/s, values alone */

	test_init(argc, argv);

	/* below the trigger: no waits */
	open_store(&st, MB);
	level0_files(st.db, 1);
	s0 = h_stats(st.db);
	fast = write_rows(st.db, 1, TOTAL);
	s1 = h_stats(st.db);
	CHECK(s1.slowdown_count == s0.slowdown_count && s1.slowdown_us == s0.slowdown_us);

	/* at the trigger: small and large batches alike, at the rate */
	level0_files(st.db, 2);
	s0 = h_stats(st.db);
	small = write_rows(st.db, 1, TOTAL);
	s1 = h_stats(st.db);
	CHECK(s1.slowdown_count > s0.slowdown_count);
	CHECK(s1.slowdown_us - s0.slowdown_us >= (uint64_t) (0.8 * least * 1e6));
	large = write_rows(st.db, 8 * KB / VLEN, TOTAL);
	fprintf(stderr, "test_pacing: %llu KiB at 1 MiB/s: %.3f s in one-entry batches, %.3f s in 8 KiB ones "
			"(%.3f s below the trigger)\n", (unsigned long long) (TOTAL / KB), small, large, fast);
	CHECK(small >= 0.9 * least && large >= 0.9 * least);
	/* the entries' arena bytes exceed their values' by well under 2x */
	CHECK(small <= 2 * least + 0.5 && large <= 2 * least + 0.5);
	CHECK(small <= 1.5 * large + 0.2 && large <= 1.5 * small + 0.2);

	/* one file more: half the rate */
	level0_files(st.db, 3);
	deeper = write_rows(st.db, 8 * KB / VLEN, TOTAL);
	fprintf(stderr, "test_pacing: one level-0 file more: %.3f s\n", deeper);
	CHECK(deeper >= 1.6 * large);

	/*
	 * One batch whose bytes need more than the longest sleep (about 0.7 s
	 * at 512 KiB/s): no write sleeps longer than 100 ms, the writer pays
	 * the rest with its next writes, and another process's writes meanwhile
	 * owe only their own bytes (one clock shared by all made every write
	 * after such a batch sleep the longest sleep).
	 */
	big = write_rows(st.db, TOTAL / VLEN, TOTAL);
	other = other_process_writes(&st);
	after = write_rows(st.db, 1, 40 * VLEN);
	fprintf(stderr, "test_pacing: one %llu KiB batch: %.3f s; 40 one-entry writes of another process: %.3f s; "
			"of the same one after it: %.3f s\n", (unsigned long long) (TOTAL / KB), big, other, after);
	CHECK(big < 0.3);
	CHECK(big + after >= 0.9 * 2 * least);
	CHECK(other >= 0 && other < 0.15);

	/* batches marked unpaced (a scan's kills) are not delayed, and the mark goes with a clear */
	s0 = h_stats(st.db);
	fast = write_batches(st.db, 1, TOTAL, true);
	s1 = h_stats(st.db);
	CHECK(s1.slowdown_count == s0.slowdown_count);
	CHECK(fast < 0.5 * least);
	CHECK(write_rows(st.db, 1, 40 * VLEN) > 0 && h_stats(st.db).slowdown_count > s1.slowdown_count);
	close_store(&st);

	/* rate 0: never delayed */
	open_store(&st, 0);
	level0_files(st.db, 3);
	s0 = h_stats(st.db);
	fast = write_rows(st.db, 1, TOTAL);
	s1 = h_stats(st.db);
	CHECK(s1.slowdown_count == s0.slowdown_count);
	CHECK(fast < 0.5 * least);
	close_store(&st);
	return test_finish("test_pacing");
}
