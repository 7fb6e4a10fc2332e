/*
 * test_no_wait.c -- writes that return before they are published
 * (tides_batch_no_wait), with a writer stopped between its reservation and
 * its entries (test point "write.reserved"), which holds back the
 * publication of every later write:
 *
 *   - a no-wait write behind it returns at once (a waiting one would wait
 *     for the stopped writer: here, for ever; the alarm fails the test);
 *     its point is not 0, and other handles do not see it yet -- readers
 *     see a prefix;
 *   - the same handle's next read waits for it (a second thread reads,
 *     and must still be waiting while the writer is stopped), then sees it;
 *   - once the stopped writer goes on, both writes are published without
 *     the no-wait writer doing anything: its point reads 0, every handle
 *     sees both;
 *   - a store opened in full sync mode: an untagged no-wait batch is synced
 *     before it returns, so it waits as any other (a tagged one that does
 *     not seal does not).
 */
#include "harness.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "util/testpoint.h"

static store st;
static tides_db *B,
		   *C;
static bool armed;
static atomic_int reader_done;
static tides_status reader_status;

static void
put(tides_batch *b, const char *k, const char *v)
{
	CHECK_OK(tides_batch_put(b, k, strlen(k), v, strlen(v)));
}

static tides_status
get(tides_db *db, const char *k)
{
	void	   *v = NULL;
	size_t		vl;
	tides_status s = tides_get(db, NULL, k, strlen(k), &v, &vl);

	free(v);
	return s;
}

/* B's own read of k2: must wait for the stopped writer */
static void *
reader(void *arg)
{
	(void) arg;
	reader_status = get(B, "k2");
	atomic_store(&reader_done, 1);
	return NULL;
}

static pthread_t reader_thread;

static void
stop_here(const char *point, void *db)
{
	tides_batch *b;

	if (strcmp(point, "write.reserved") != 0 || db != st.db || !armed)
		return;
	armed = false;
	b = tides_batch_new();
	put(b, "k2", "v2");
	tides_batch_set_tag(b, 7, false);
	tides_batch_no_wait(b);
	CHECK_OK(tides_write(B, b, NULL));	/* behind st.db's reserved write */
	tides_batch_free(b);
	CHECK(tides_write_point(B) != 0);
	CHECK(get(C, "k2") == TIDES_NOT_FOUND);
	CHECK(get(C, "k1") == TIDES_NOT_FOUND);
	CHECK(pthread_create(&reader_thread, NULL, reader, NULL) == 0);
	usleep(100 * 1000);
	CHECK(atomic_load(&reader_done) == 0);	/* waits for the write ahead */
}

int
main(int argc, char **argv)
{
	tides_batch *b;

	test_init(argc, argv);
	alarm(60);					/* a no-wait write that waits would hang */
	memset(&st, 0, sizeof(st));
	tides_options_default(&st.opts);
	st.opts.memtable_size = 1 << 20;
	st.opts.memtable_count = 2;
	st.opts.sync_mode = TIDES_SYNC_NONE;
	st.dir = fast_tmpdir("nowait");
	CHECK_OK(store_open(&st));
	CHECK_OK(tides_open(st.region, st.dir, &st.opts, NULL, false, NULL, &B));
	CHECK_OK(tides_open(st.region, st.dir, &st.opts, NULL, false, NULL, &C));
	CHECK(tides_write_point(B) == 0);

	/* st.db's write stops after its reservation; B writes behind it */
	b = tides_batch_new();
	put(b, "k1", "v1");
	tides_test_point_hook = stop_here;
	armed = true;
	CHECK_OK(tides_write(st.db, b, NULL));
	tides_test_point_hook = NULL;
	CHECK(!armed);
	CHECK(pthread_join(reader_thread, NULL) == 0);
	CHECK(atomic_load(&reader_done) == 1 && reader_status == TIDES_OK);
	/* published by the writer ahead, which went on */
	CHECK(tides_write_point(B) == 0);
	CHECK(get(C, "k1") == TIDES_OK && get(C, "k2") == TIDES_OK);
	CHECK(get(B, "k2") == TIDES_OK);
	tides_await_point(C, 0);
	tides_await_reserved(C);

	/* full sync mode: a write synced before it returns waits, marked or not */
	tides_set_sync_mode(B, TIDES_SYNC_FULL);
	tides_batch_clear(b);
	put(b, "k3", "v3");
	tides_batch_no_wait(b);
	CHECK_OK(tides_write(B, b, NULL));
	CHECK(tides_write_point(B) == 0);
	tides_batch_clear(b);
	put(b, "k4", "v4");
	tides_batch_set_tag(b, 8, false);
	tides_batch_no_wait(b);
	CHECK_OK(tides_write(B, b, NULL));	/* alone: published when it returns all the same */
	CHECK(tides_write_point(B) == 0);
	CHECK(get(C, "k3") == TIDES_OK && get(C, "k4") == TIDES_OK);
	tides_batch_free(b);

	tides_close(B);
	tides_close(C);
	tides_close(st.db);
	test_shared_free(st.region, st.size);
	test_rmdir(st.dir);
	return test_finish("test_no_wait");
}
