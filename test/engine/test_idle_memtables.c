/*
 * test_idle_memtables.c -- idle memtables give their memory back
 * (memtable_discard_ms, db/maint.c "Idle memtables").
 *
 * Four memtables of 256 KB, discarded after 50 ms free.  At the start the
 * three slots never used are idle: maintenance discards two and keeps the
 * one the next switch takes; the switch after it activates a discarded one.
 * Two slots a flush frees are not discarded at once, and 50 ms later one of
 * them is.  The discarded arenas have no resident pages (mincore) and the
 * counters say so.  Writes through slots whose pages came back zeroed read
 * back, before and after a flush and a crash, and tides_verify is clean.  A
 * slot a memtable switch has chosen is not discarded before it is active,
 * though a flush meanwhile made it look idle and spare.  With 0
 * nothing is discarded; on a private mapping, which cannot give memory back,
 * the first attempt fails, nothing changes, and nothing is tried again.
 */
#include "harness.h"
#include "db/db_impl.h"
#include "util/testpoint.h"

#include <sys/mman.h>
#include <unistd.h>

#define VLEN 100
#define DISCARD_MS 50

static uint32_t next_row = 0;

static void
put_row(tides_db *db, uint32_t row)
{
	tides_batch *b = tides_batch_new();
	uint8_t		k[H_ROW_KEY_LEN],
				v[VLEN];

	h_row_key(k, 1, row);
	h_row_value(v, VLEN, 1, row, 1);
	CHECK_OK(tides_batch_put(b, k, sizeof(k), v, VLEN));
	CHECK_OK(tides_write(db, b, NULL));
	tides_batch_free(b);
}

/* write rows until the write path has sealed one more memtable */
static void
fill_one(tides_db *db)
{
	uint64_t	id = db->sh->active->id;

	while (db->sh->active->id == id)
		put_row(db, next_row++);
}

static void
flush_all(tides_db *db)
{
	bool		did = true;

	while (did)
		CHECK_OK(tides_flush_work(db, &did));
}

/* tree 1's rows below next_row that read back */
static uint32_t
rows_present(tides_db *db)
{
	return h_rows_present(db, 1, next_row, VLEN);
}

static uint32_t
slots_with(tides_db *db, int state, int pages)
{
	uint32_t	n = 0;

	for (uint32_t i = 0; i < db->sh->nmemtables; i++)
		if (atomic_load(&db->sh->memtables[i].state) == state &&
			atomic_load(&db->sh->memtables[i].pages) == pages)
			n++;
	return n;
}

/* resident pages among the whole pages of a slot's arena */
static size_t
resident_pages(const tides_memtable *m)
{
	size_t		page = (size_t) sysconf(_SC_PAGESIZE);
	uintptr_t	lo = ((uintptr_t) m->arena + page - 1) & ~(uintptr_t) (page - 1);
	uintptr_t	hi = ((uintptr_t) m->arena + m->arena_size) & ~(uintptr_t) (page - 1);
	size_t		npages = (hi - lo) / page,
				n = 0;
	unsigned char *vec = malloc(npages);

	CHECK(vec != NULL && mincore((void *) lo, hi - lo, vec) == 0);
	for (size_t i = 0; i < npages; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

static void
maint(tides_db *db)
{
	bool		did = false;

	CHECK_OK(tides_maint_work(db, &did));
}

static void
idle(void)
{
	usleep((DISCARD_MS + 30) * 1000);
}

static void
set_opts(tides_options *o)
{
	small_store_opts(o);
	o->memtable_count = 4;
	o->memtable_size = 256 << 10;
	o->memtable_discard_ms = DISCARD_MS;
	o->level0_compaction_trigger = 8;
	o->level0_slowdown_trigger = 16;
	o->level0_stop_trigger = 24;
}

static void
discards_and_reuses(void)
{
	store		st;
	tides_stats s;

	memset(&st, 0, sizeof(st));
	set_opts(&st.opts);
	st.dir = test_tmpdir("idle_memtables");
	CHECK_OK(store_open(&st));

	/*
	 * Slots never used since the start count as idle from the start: all
	 * but the one the next switch takes give back what setup touched.
	 */
	maint(st.db);
	s = h_stats(st.db);
	CHECK(s.memtables_discarded == 2 && s.memtable_discards == 2);
	CHECK(slots_with(st.db, TIDES_MEM_FREE, TIDES_PAGES_KEPT) == 1);

	/* the next switch takes the kept slot, the one after a discarded one */
	fill_one(st.db);
	CHECK(atomic_load(&st.db->sh->active->pages) == TIDES_PAGES_KEPT);
	CHECK(h_stats(st.db).memtables_discarded == 2);
	fill_one(st.db);
	CHECK(h_stats(st.db).memtables_discarded == 1);
	CHECK(resident_pages(st.db->sh->active) > 0);
	CHECK(rows_present(st.db) == next_row);

	/* two slots freed by a flush: not idle yet, then one of them is */
	flush_all(st.db);
	CHECK(slots_with(st.db, TIDES_MEM_FREE, TIDES_PAGES_KEPT) == 2);
	maint(st.db);
	CHECK(h_stats(st.db).memtables_discarded == 1);
	idle();
	CHECK(tides_work_pending(st.db) & TIDES_WORK_MAINT);
	maint(st.db);
	s = h_stats(st.db);
	CHECK(s.memtables_discarded == 2 && s.memtable_discards == 3);
	CHECK(slots_with(st.db, TIDES_MEM_FREE, TIDES_PAGES_KEPT) == 1);
	for (uint32_t i = 0; i < st.db->sh->nmemtables; i++)
		if (atomic_load(&st.db->sh->memtables[i].pages) == TIDES_PAGES_DISCARDED)
			CHECK(resident_pages(&st.db->sh->memtables[i]) == 0);
	maint(st.db);
	CHECK(h_stats(st.db).memtable_discards == 3);	/* the kept one stays kept */
	CHECK(rows_present(st.db) == next_row);

	/* writes go on through the discarded slots, whose pages come back zeroed */
	for (int i = 0; i < 3; i++)
		fill_one(st.db);
	CHECK(rows_present(st.db) == next_row);
	flush_all(st.db);
	CHECK(rows_present(st.db) == next_row);

	/* unflushed rows in a slot that was discarded survive a crash */
	fill_one(st.db);
	put_row(st.db, next_row++);
	store_crash(&st);
	CHECK_OK(store_open(&st));
	CHECK(rows_present(st.db) == next_row);
	{
		int			quiet = 1;

		CHECK(tides_verify(st.db, report_problem, &quiet) == 0);
	}

	/* 0: nothing is given back, however long the slots stay free */
	tides_set_memtable_discard_ms(st.db, 0);
	fill_one(st.db);
	flush_all(st.db);
	idle();
	maint(st.db);
	s = h_stats(st.db);			/* counters start at zero after the restart */
	CHECK(s.memtable_discards == 0 && s.memtables_discarded == 0);
	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(st.dir);
	free(st.dir);
}

/*
 * A switch picks its fresh slot under the write lock and activates it under
 * the lock taken again.  In between (the "switch.chosen" test point) a flush
 * frees a lower slot, which becomes the one the next switch would take, so
 * the chosen slot -- idle since the start -- looks discardable.  Maintenance
 * must leave it alone while writers are paused.
 */
static tides_db *db2;
static bool hook_armed;

static void
hook(const char *point, void *db)
{
	bool		did = false;

	if (!hook_armed || db == db2 || strcmp(point, "switch.chosen") != 0)
		return;
	hook_armed = false;
	CHECK_OK(tides_flush_work(db2, &did));
	CHECK(did);
	CHECK_OK(tides_maint_work(db2, &did));
}

static void
switch_in_progress(void)
{
	store		st;

	memset(&st, 0, sizeof(st));
	set_opts(&st.opts);
	st.opts.memtable_discard_ms = 0;
	st.dir = test_tmpdir("idle_memtables_switch");
	CHECK_OK(store_open(&st));
	CHECK_OK(tides_open(st.region, st.dir, &st.opts, NULL, false, NULL, &db2));
	next_row = 0;
	/* slots 0 and 1 sealed, 2 active, 3 free since the start */
	fill_one(st.db);
	fill_one(st.db);
	CHECK(slots_with(st.db, TIDES_MEM_SEALED, TIDES_PAGES_KEPT) == 2);
	CHECK(slots_with(st.db, TIDES_MEM_FREE, TIDES_PAGES_KEPT) == 1);
	tides_set_memtable_discard_ms(db2, DISCARD_MS);
	tides_test_point_hook = hook;
	hook_armed = true;
	fill_one(st.db);			/* the switch to slot 3 */
	tides_test_point_hook = NULL;
	CHECK(!hook_armed);
	CHECK(h_stats(st.db).memtable_discards == 0);
	CHECK(atomic_load(&st.db->sh->active->pages) == TIDES_PAGES_KEPT);
	/* after the switch, the slot the flush freed is the only free one: the spare, kept */
	CHECK_OK(tides_maint_work(db2, &(bool) {false}));
	CHECK(h_stats(st.db).memtable_discards == 0);
	CHECK(rows_present(st.db) == next_row);
	tides_close(db2);
	store_crash(&st);
	if (test_failures == 0)
		test_rmdir(st.dir);
	free(st.dir);
}

/* a region the kernel cannot punch holes in: memory stays, writes go on */
static void
private_mapping(void)
{
	tides_options o;
	tides_recovery_info info;
	tides_db   *db;
	char	   *dir = test_tmpdir("idle_memtables_private");
	size_t		size;
	void	   *region;

	set_opts(&o);
	size = tides_region_size(&o);
	region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(region != MAP_FAILED);
	CHECK_OK(tides_region_init(region, size, &o));
	CHECK_OK(tides_open(region, dir, &o, NULL, true, &info, &db));
	next_row = 0;
	for (int i = 0; i < 3; i++)
	{
		fill_one(db);
		flush_all(db);
	}
	idle();
	maint(db);
	CHECK(h_stats(db).memtables_discarded == 0);
	CHECK(atomic_load(&db->sh->discard_unsupported));
	CHECK(slots_with(db, TIDES_MEM_FREE, TIDES_PAGES_KEPT) == 3);
	maint(db);
	CHECK(h_stats(db).memtable_discards == 0);
	fill_one(db);
	CHECK(rows_present(db) == next_row);
	tides_close(db);
	munmap(region, size);
	if (test_failures == 0)
		test_rmdir(dir);
	free(dir);
}

int
main(int argc, char **argv)
{
	test_init(argc, argv);
	discards_and_reuses();
	switch_in_progress();
	private_mapping();
	return test_finish("test_idle_memtables");
}
