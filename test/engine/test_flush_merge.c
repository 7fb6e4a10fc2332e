/*
 * test_flush_merge.c -- merged flushes (memtables_per_flush, db/flush.c).
 *
 * Six memtables of 64 KB, three per flush.  While fewer than three are
 * sealed by the write path, no flush is due (tides_work_pending has no
 * flush, tides_flush_work does nothing); at the third, one flush writes all
 * three into a single level-0 file and frees their slots.  A key put in the
 * first, overwritten in the second and deleted in the third reads as
 * deleted after the flush and as its first version through a snapshot taken
 * before the overwrite.  A seal asked for (tides_seal_memtable, a flush
 * barrier) makes the flush due at once, with a single memtable sealed.
 * After a crash every key reads back (the replay position moved past all
 * three memtables together), and an invalid setting (as many per flush as
 * memtables) is refused.
 */
#include "harness.h"

#define VLEN 100

static uint32_t next_row = 0;

/* write rows until `want` memtables are sealed (the write path's seals only) */
static void
fill_until_sealed(tides_db *db, uint32_t want)
{
	tides_batch *b = tides_batch_new();

	while (h_stats(db).memtables_sealed < want)
	{
		uint8_t		k[H_ROW_KEY_LEN],
					v[VLEN];

		h_row_key(k, 1, next_row);
		h_row_value(v, VLEN, 1, next_row, 1);
		next_row++;
		CHECK_OK(tides_batch_put(b, k, sizeof(k), v, VLEN));
		CHECK_OK(tides_write(db, b, NULL));
		tides_batch_clear(b);
	}
	tides_batch_free(b);
}

static void
write_one(tides_db *db, uint32_t row, uint32_t ver, bool del)
{
	tides_batch *b = tides_batch_new();
	uint8_t		k[H_ROW_KEY_LEN],
				v[VLEN];

	h_row_key(k, 2, row);
	h_row_value(v, VLEN, 2, row, ver);
	CHECK_OK(del ? tides_batch_delete(b, k, sizeof(k)) : tides_batch_put(b, k, sizeof(k), v, VLEN));
	CHECK_OK(tides_write(db, b, NULL));
	tides_batch_free(b);
}

/* tree 2's row: the version it reads as through snap (0: absent) */
static uint32_t
version_of(tides_db *db, const tides_snapshot *snap, uint32_t row)
{
	uint8_t		k[H_ROW_KEY_LEN],
				want[VLEN];
	void	   *v = NULL;
	size_t		vl = 0;
	uint32_t	found = 0;

	h_row_key(k, 2, row);
	if (tides_get(db, snap, k, sizeof(k), &v, &vl) == TIDES_OK)
		for (uint32_t ver = 1; ver <= 3 && found == 0; ver++)
		{
			h_row_value(want, VLEN, 2, row, ver);
			if (vl == VLEN && memcmp(v, want, VLEN) == 0)
				found = ver;
		}
	free(v);
	return found;
}

/* tree 1's rows below next_row that read back */
static uint32_t
rows_present(tides_db *db)
{
	return h_rows_present(db, 1, next_row, VLEN);
}

static bool
flush_once(tides_db *db)
{
	bool		did = false;

	CHECK_OK(tides_flush_work(db, &did));
	return did;
}

int
main(int argc, char **argv)
{
	store		st;
	tides_snapshot snap;
	tides_stats s;
	uint64_t	ticket;

	test_init(argc, argv);
	memset(&st, 0, sizeof(st));
	small_store_opts(&st.opts);
	st.opts.memtable_count = 6;
	st.opts.memtables_per_flush = 3;
	st.opts.level0_compaction_trigger = 8;
	st.opts.level0_slowdown_trigger = 16;
	st.opts.level0_stop_trigger = 24;
	st.dir = test_tmpdir("flush_merge");
	CHECK_OK(store_open(&st));

	/* a key in three memtables: put, overwritten after a snapshot, deleted */
	write_one(st.db, 7, 1, false);
	fill_until_sealed(st.db, 1);
	CHECK_OK(tides_snapshot_acquire(st.db, &snap));
	write_one(st.db, 7, 2, false);
	fill_until_sealed(st.db, 2);
	CHECK(!(tides_work_pending(st.db) & TIDES_WORK_FLUSH));
	CHECK(!flush_once(st.db));
	CHECK(h_stats(st.db).memtables_sealed == 2);
	write_one(st.db, 7, 3, true);
	fill_until_sealed(st.db, 3);

	/* the third seal: one flush, one file, three slots free */
	CHECK(tides_work_pending(st.db) & TIDES_WORK_FLUSH);
	CHECK(flush_once(st.db));
	s = h_stats(st.db);
	CHECK(s.memtables_sealed == 0);
	CHECK(s.level_files[0] == 1);
	CHECK(s.flushes == 1);
	CHECK(!flush_once(st.db));
	CHECK(version_of(st.db, NULL, 7) == 0);
	CHECK(version_of(st.db, &snap, 7) == 1);
	CHECK(rows_present(st.db) == next_row);
	tides_snapshot_release(st.db, &snap);

	/* a seal asked for: due with one memtable sealed */
	write_one(st.db, 8, 1, false);
	CHECK_OK(tides_seal_memtable(st.db));
	CHECK(h_stats(st.db).memtables_sealed == 1);
	CHECK(tides_work_pending(st.db) & TIDES_WORK_FLUSH);
	CHECK(flush_once(st.db));
	CHECK(h_stats(st.db).level_files[0] == 2);

	/* a memtable sealed when full waits, until a barrier asks for everything below it */
	fill_until_sealed(st.db, 1);
	CHECK(!flush_once(st.db));
	CHECK_OK(tides_flush_barrier(st.db, &ticket));
	while (!tides_flush_barrier_passed(st.db, ticket))
		CHECK(flush_once(st.db));
	s = h_stats(st.db);
	CHECK(s.memtables_sealed == 0);
	CHECK(s.level_files[0] == 3);	/* the full one and what the barrier sealed, merged */

	/* more sealed memtables waiting at a crash: recovery replays them, and the flushed ones are not replayed twice */
	fill_until_sealed(st.db, 2);
	write_one(st.db, 9, 1, false);
	store_crash(&st);
	CHECK_OK(store_open(&st));
	CHECK(rows_present(st.db) == next_row);
	CHECK(version_of(st.db, NULL, 7) == 0);
	CHECK(version_of(st.db, NULL, 8) == 1);
	CHECK(version_of(st.db, NULL, 9) == 1);
	{
		int			quiet = 1;

		CHECK(tides_verify(st.db, report_problem, &quiet) == 0);
	}
	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(st.dir);
	else
		fprintf(stderr, "test_flush_merge: store kept in %s\n", st.dir);
	free(st.dir);

	/* as many per flush as memtables: none would be left for writes */
	st.opts.memtables_per_flush = st.opts.memtable_count;
	CHECK(tides_region_size(&st.opts) == 0);
	st.opts.memtables_per_flush = 0;
	CHECK(tides_region_size(&st.opts) == 0);
	return test_finish("test_flush_merge");
}
