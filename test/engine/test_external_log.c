/*
 * test_external_log.c -- the engine with the application's log in place of
 * its own (TIDES_LOG_EXTERNAL), and checkpoints of the file set.
 *
 * The "application log" here is an array of the records append() was
 * handed.  The contract under test (tides_engine.h, "External log"):
 *
 *   1. crash and replay: after a crash, replaying the application's log
 *      from a redo point whose flush barrier had passed -- or from any
 *      earlier point -- gives exactly the state of the whole log, whatever
 *      flushes and compactions ran before the crash;
 *   2. checkpoints: a directory copied file by file while writes and
 *      compactions go on, with file deletion held from before the
 *      checkpoint until the copy is done, restores to that checkpoint, and
 *      with the log replayed from its redo point gives the state of the
 *      whole log; a copy that lacks a file the checkpoint names is refused
 *      at open, naming the file;
 *   3. tides_close_writes refuses every later write;
 *   4. a store last written in OWN mode opens in EXTERNAL mode with what
 *      its own log held flushed, and no log segment left, and back;
 *   5. the same as 1 with writers, flushes and barriers in concurrent
 *      processes killed at a random moment, against a log in shared memory
 *      that is durable only as far as flushes and "commits" made it: the
 *      order of reserve and append makes every record before a redo point
 *      reach a memtable the barrier seals, and the write-ahead rule keeps
 *      every batch that reached an SSTable in the surviving log.
 */
#include "harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>

#include "util/dbformat.h"
#include "db/write_batch.h"

#define NKEYS 600

typedef struct xlog
{
	uint8_t   **rec;
	size_t	   *len;
	uint32_t	n;
	uint32_t	cap;
	uint32_t	durable;		/* records the flushes asked to be durable */
} xlog;

static uint64_t
xlog_append(void *arg, const void *rec, size_t len)
{
	xlog	   *l = arg;

	if (l->n == l->cap)
	{
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->rec = realloc(l->rec, l->cap * sizeof(*l->rec));
		l->len = realloc(l->len, l->cap * sizeof(*l->len));
		if (l->rec == NULL || l->len == NULL)
			abort();
	}
	l->rec[l->n] = malloc(len);
	if (l->rec[l->n] == NULL)
		abort();
	memcpy(l->rec[l->n], rec, len);
	l->len[l->n] = len;
	l->n++;
	return l->n;				/* the position just past record n - 1 */
}

/* the write-ahead rule: flush asks for the log up to pos, which must exist */
static void
xlog_sync(void *arg, uint64_t pos)
{
	xlog	   *l = arg;

	CHECK(pos <= l->n);
	if (pos > l->durable)
		l->durable = (uint32_t) pos;
}

static void
xlog_free(xlog *l)
{
	for (uint32_t i = 0; i < l->n; i++)
		free(l->rec[i]);
	free(l->rec);
	free(l->len);
	memset(l, 0, sizeof(*l));
}

static keyspace ks;
static uint32_t ver[NKEYS];		/* the oracle: version of each key, 0 = absent */
static uint32_t next_ver = 1;

/* write a batch (retrying while busy, running the work meanwhile) */
static void
write_with(tides_db *db, tides_batch *b, tides_append_fn append, void *arg)
{
	for (int tries = 0;; tries++)
	{
		tides_status s = tides_write_external(db, b, append, arg);
		tides_status w;

		if (s != TIDES_BUSY)
		{
			CHECK_OK(s);
			return;
		}
		CHECK(tries < 1000);
		if (tries >= 1000)
			return;
		work_once(db, &w);
		CHECK_OK(w);
	}
}

static void
write_ext(tides_db *db, tides_batch *b, xlog *l)
{
	write_with(db, b, l != NULL ? xlog_append : NULL, l);
}

/* a random batch of puts and deletes, logged, applied to the oracle */
static void
random_batch(tides_db *db, tides_rand *r, xlog *l)
{
	tides_batch *b = tides_batch_new();
	uint32_t	n = 1 + tides_rand_uniform(r, 20);
	uint8_t		val[4096];

	for (uint32_t i = 0; i < n; i++)
	{
		uint32_t	k = tides_rand_uniform(r, NKEYS);

		if (tides_rand_uniform(r, 5) == 0)
		{
			CHECK_OK(tides_batch_delete(b, ks.key[k], ks.len[k]));
			ver[k] = 0;
		}
		else
		{
			uint32_t	v = next_ver++;
			size_t		vlen = ks_value(k, v, false, val);

			CHECK_OK(tides_batch_put(b, ks.key[k], ks.len[k], val, vlen));
			ver[k] = v;
		}
	}
	write_ext(db, b, l);
	tides_batch_free(b);
}

/* store_open, and the log flush every process that flushes installs */
static tides_status
open_ext(store *s, xlog *l)
{
	tides_status st = store_open(s);

	if (s->db != NULL)
		tides_set_log_sync(s->db, xlog_sync, l);
	return st;
}

/* the barrier protocol of an application checkpoint: returns the redo point */
static uint32_t
checkpoint(tides_db *db, const xlog *l)
{
	uint32_t	redo = l->n;	/* records before this are covered once the barrier passes */
	uint64_t	ticket;
	tides_status s,
				w;
	int			tries = 0;

	while ((s = tides_flush_barrier(db, &ticket)) == TIDES_BUSY && tries++ < 1000)
	{
		work_once(db, &w);
		CHECK_OK(w);
	}
	CHECK_OK(s);
	for (tries = 0; !tides_flush_barrier_passed(db, ticket) && tries < 100000; tries++)
	{
		bool		did;

		CHECK_OK(tides_flush_work(db, &did));
	}
	CHECK(tides_flush_barrier_passed(db, ticket));
	return redo;
}

static void
replay(tides_db *db, const xlog *l, uint32_t from)
{
	tides_batch *b = tides_batch_new();

	for (uint32_t i = from; i < l->n; i++)
	{
		CHECK_OK(tides_batch_load(b, l->rec[i], l->len[i]));
		write_ext(db, b, NULL);
	}
	tides_batch_free(b);
}

/* every key as the oracle says, by point reads and by one scan */
static void
check_state(tides_db *db, const char *when)
{
	uint32_t	wrong = 0,
				present = 0,
				scanned = 0;
	tides_iter *it;

	for (uint32_t k = 0; k < NKEYS; k++)
	{
		void	   *v = NULL;
		size_t		n = 0;
		tides_status s = tides_get(db, NULL, ks.key[k], ks.len[k], &v, &n);

		if (ver[k] == 0)
			wrong += s != TIDES_NOT_FOUND;
		else
			wrong += s != TIDES_OK || !ks_value_is(k, ver[k], false, v, n);
		present += ver[k] != 0;
		free(v);
	}
	it = tides_iter_new(db, &(tides_iter_options) {.fill_cache = true});
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
		scanned++;
	CHECK_OK(tides_iter_status(it));
	tides_iter_free(it);
	if (wrong != 0 || scanned != present)
		fprintf(stderr, "%s: %u keys wrong, %u scanned, %u expected\n", when, wrong, scanned, present);
	CHECK(wrong == 0);
	CHECK(scanned == present);
}

static void
ext_options(tides_options *o)
{
	tides_options_default(o);
	o->log_mode = TIDES_LOG_EXTERNAL;
	o->memtable_size = 256 << 10;
	o->memtable_count = 3;
	o->block_cache_size = 1 << 20;
	o->meta_size = 4 << 20;
	o->target_file_size = 64 << 10;
	o->level_base_size = 256 << 10;
	o->level0_compaction_trigger = 2;
	o->log_segment_size = 1 << 20;
	o->max_open_tags = 64;
}

/* 1. crash and replay, many rounds */
static void
test_crash_replay(tides_rand *r)
{
	store		s = {0};
	xlog		l = {0};
	uint32_t	rounds = (uint32_t) env_u64("TEST_ROUNDS", 40);
	uint32_t	redo = 0,
				older = 0;

	memset(ver, 0, sizeof(ver));
	ext_options(&s.opts);
	s.dir = fast_tmpdir("extlog");
	CHECK_OK(open_ext(&s, &l));
	for (uint32_t round = 0; round < rounds; round++)
	{
		uint32_t	nops = 20 + tides_rand_uniform(r, 300);
		char		when[64];

		for (uint32_t i = 0; i < nops; i++)
		{
			tides_status w;

			random_batch(s.db, r, &l);
			if (tides_rand_uniform(r, 40) == 0)
				work_once(s.db, &w);
			if (tides_rand_uniform(r, 150) == 0)
			{
				older = redo;
				redo = checkpoint(s.db, &l);
			}
		}
		/* a crash, then replay from the last passed barrier (or, sometimes, from an older one) */
		store_crash(&s);
		CHECK_OK(open_ext(&s, &l));
		if (s.db == NULL)
			break;
		replay(s.db, &l, tides_rand_uniform(r, 3) == 0 ? older : redo);
		snprintf(when, sizeof(when), "round %u", round);
		check_state(s.db, when);
	}
	store_crash(&s);
	test_rmdir(s.dir);
	free(s.dir);
	xlog_free(&l);
}

/*
 * A backup tool's copy: copy files of from into to, one by one -- every
 * other one (first_half), or every one not copied yet.
 */
static void
copy_files(const char *from, const char *to, bool first_half)
{
	DIR		   *d = opendir(from);
	struct dirent *e;
	uint32_t	i = 0;

	CHECK(d != NULL);
	while (d != NULL && (e = readdir(d)) != NULL)
	{
		char		src[1024],
					dst[1024],
					buf[65536];
		int			in,
					out;
		ssize_t		n;

		if (e->d_name[0] == '.' || (first_half && i++ % 2 != 0))
			continue;
		snprintf(src, sizeof(src), "%s/%s", from, e->d_name);
		snprintf(dst, sizeof(dst), "%s/%s", to, e->d_name);
		if (!first_half && access(dst, F_OK) == 0)
			continue;
		in = open(src, O_RDONLY);
		if (in < 0)
			continue;			/* deleted while we copied: as a backup tool sees it */
		out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		CHECK(out >= 0);
		while ((n = read(in, buf, sizeof(buf))) > 0)
			CHECK(write(out, buf, (size_t) n) == n);
		close(in);
		close(out);
	}
	if (d != NULL)
		closedir(d);
}

static void
remove_one_sst(const char *dir)
{
	DIR		   *d = opendir(dir);
	struct dirent *e;
	bool		done = false;

	while (d != NULL && !done && (e = readdir(d)) != NULL)
	{
		size_t		n = strlen(e->d_name);

		if (n > 4 && strcmp(e->d_name + n - 4, ".sst") == 0)
		{
			char		p[1024];

			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			done = unlink(p) == 0;
		}
	}
	if (d != NULL)
		closedir(d);
	CHECK(done);
}

/*
 * A backup: checkpoint, then half the files copied, writes and compactions,
 * the other half.  With hold: restores to the checkpoint and replays to the
 * state of the whole log.  Without: the compactions delete files the
 * checkpoint names before the copy gets there, and open refuses the copy.
 */
static void
backup_round(tides_rand *r, bool hold)
{
	store		s = {0},
				c = {0};
	xlog		l = {0};
	uint32_t	redo;
	tides_status st;

	memset(ver, 0, sizeof(ver));
	ext_options(&s.opts);
	s.dir = fast_tmpdir("extsrc");
	CHECK_OK(open_ext(&s, &l));
	for (uint32_t i = 0; i < 1500; i++)
		random_batch(s.db, r, &l);
	CHECK_OK(drain(s.db));

	if (hold)
		tides_hold_file_deletion(s.db, true);
	redo = checkpoint(s.db, &l);
	CHECK_OK(tides_checkpoint_save(s.db, "backup-1"));
	c.dir = fast_tmpdir("extcopy");
	copy_files(s.dir, c.dir, true);
	for (uint32_t i = 0; i < 3000; i++)
		random_batch(s.db, r, &l);
	CHECK_OK(drain(s.db));
	copy_files(s.dir, c.dir, false);
	if (hold)
		tides_hold_file_deletion(s.db, false);
	CHECK_OK(drain(s.db));

	/* the copy, as a restored backup */
	CHECK_OK(tides_checkpoint_restore(c.dir, NULL, "backup-1"));
	ext_options(&c.opts);
	st = open_ext(&c, &l);
	if (hold)
	{
		if (st != TIDES_OK)
			fprintf(stderr, "restored copy: %s\n", c.db ? tides_errmsg(c.db) : "");
		CHECK_OK(st);
		if (st == TIDES_OK)
		{
			replay(c.db, &l, redo);
			check_state(c.db, "restored backup");
		}
		store_crash(&c);

		/* the same copy without one of its files: refused, naming it */
		test_rmdir(c.dir);
		free(c.dir);
		c.dir = fast_tmpdir("extcopy");
		copy_files(s.dir, c.dir, true);
		copy_files(s.dir, c.dir, false);
		CHECK_OK(tides_checkpoint_save(s.db, "backup-2"));
		copy_files(s.dir, c.dir, true);
		copy_files(s.dir, c.dir, false);
		CHECK_OK(tides_checkpoint_restore(c.dir, NULL, "backup-2"));
		remove_one_sst(c.dir);
		st = open_ext(&c, &l);
	}
	CHECK(st == TIDES_CORRUPTION);
	if (st == TIDES_CORRUPTION)
	{
		const char *msg = c.db != NULL ? tides_errmsg(c.db) : "";

		CHECK(strstr(msg, ".sst\" (level") != NULL && strstr(msg, "is missing") != NULL);
	}
	store_crash(&c);
	CHECK(tides_checkpoint_restore(c.dir, NULL, "no-such") == TIDES_NOT_FOUND);
	CHECK(tides_checkpoint_restore(c.dir, NULL, "bad/name") == TIDES_INVALID);
	CHECK_OK(tides_checkpoint_remove(s.db, "backup-1"));
	store_crash(&s);
	test_rmdir(s.dir);
	free(s.dir);
	test_rmdir(c.dir);
	free(c.dir);
	xlog_free(&l);
}

/* 3. closed for writes; and the mode checks */
static void
test_close_writes(tides_rand *r)
{
	store		s = {0};
	xlog		l = {0};
	tides_batch *b = tides_batch_new();
	uint64_t	ticket;

	memset(ver, 0, sizeof(ver));
	ext_options(&s.opts);
	s.dir = fast_tmpdir("extclose");
	CHECK_OK(open_ext(&s, &l));
	/* a barrier over nothing has passed at once (the first memtable's id is 0) */
	CHECK_OK(tides_flush_barrier(s.db, &ticket));
	CHECK(tides_flush_barrier_passed(s.db, ticket));
	random_batch(s.db, r, &l);
	CHECK_OK(tides_batch_put(b, "k", 1, "v", 1));
	CHECK(tides_write(s.db, b, NULL) == TIDES_INVALID);
	tides_batch_set_tag(b, 7, false);
	CHECK(tides_write_external(s.db, b, xlog_append, &l) == TIDES_INVALID);
	tides_batch_set_tag(b, 0, false);
	CHECK_OK(tides_sync(s.db, 0, true));	/* nothing to sync: the application's log holds it */
	tides_close_writes(s.db);
	CHECK(tides_write_external(s.db, b, xlog_append, &l) == TIDES_UNAVAILABLE);
	CHECK(l.n == 1);
	CHECK_OK(tides_flush_barrier(s.db, &ticket));
	while (!tides_flush_barrier_passed(s.db, ticket))
	{
		bool		did;

		CHECK_OK(tides_flush_work(s.db, &did));
	}
	CHECK_OK(tides_shutdown(s.db));
	store_crash(&s);
	CHECK_OK(open_ext(&s, &l));	/* everything logged is in SSTables: nothing to replay */
	check_state(s.db, "after a clean shutdown");
	CHECK_OK(tides_write_external(s.db, b, xlog_append, &l));
	tides_batch_free(b);
	store_crash(&s);
	test_rmdir(s.dir);
	free(s.dir);
	xlog_free(&l);
}

static uint32_t
count_log_segments(const char *dir)
{
	DIR		   *d = opendir(dir);
	struct dirent *e;
	uint32_t	n = 0;

	while (d != NULL && (e = readdir(d)) != NULL)
	{
		size_t		len = strlen(e->d_name);

		n += len > 4 && strcmp(e->d_name + len - 4, ".log") == 0;
	}
	if (d != NULL)
		closedir(d);
	return n;
}

/* 4. OWN -> EXTERNAL -> OWN across crashes */
static void
test_mode_switch(tides_rand *r)
{
	store		s = {0};
	tides_batch *b = tides_batch_new();
	uint8_t		val[4096];
	uint32_t	saved[NKEYS];
	xlog		l = {0};

	memset(ver, 0, sizeof(ver));
	ext_options(&s.opts);
	s.opts.log_mode = TIDES_LOG_OWN;
	s.opts.sync_mode = TIDES_SYNC_NONE;
	s.dir = fast_tmpdir("extswitch");
	CHECK_OK(open_ext(&s, &l));
	for (uint32_t k = 0; k < NKEYS; k += 3)
	{
		tides_batch_clear(b);
		ver[k] = next_ver++;
		CHECK_OK(tides_batch_put(b, ks.key[k], ks.len[k], val, ks_value(k, ver[k], false, val)));
		CHECK_OK(tides_write(s.db, b, NULL));
	}
	store_crash(&s);			/* nothing flushed: all of it is in the engine's log */
	CHECK(count_log_segments(s.dir) > 0);

	s.opts.log_mode = TIDES_LOG_EXTERNAL;
	CHECK_OK(open_ext(&s, &l));
	CHECK(s.info.batches_replayed > 0);
	CHECK(count_log_segments(s.dir) == 0);
	check_state(s.db, "own log opened in external mode");
	memcpy(saved, ver, sizeof(ver));
	random_batch(s.db, r, NULL);
	store_crash(&s);			/* the unlogged batch is lost, as its caller chose */
	memcpy(ver, saved, sizeof(ver));
	CHECK_OK(open_ext(&s, &l));
	CHECK(s.info.batches_replayed == 0);
	check_state(s.db, "external mode after a crash");

	s.opts.log_mode = TIDES_LOG_OWN;
	store_crash(&s);
	CHECK_OK(open_ext(&s, &l));
	tides_batch_clear(b);
	ver[1] = next_ver++;
	CHECK_OK(tides_batch_put(b, ks.key[1], ks.len[1], val, ks_value(1, ver[1], false, val)));
	CHECK_OK(tides_write(s.db, b, NULL));
	store_crash(&s);
	CHECK_OK(open_ext(&s, &l));
	check_state(s.db, "back to the own log");
	tides_batch_free(b);
	store_crash(&s);
	test_rmdir(s.dir);
	free(s.dir);
}

/* ---- 5. concurrent processes, killed */

#define MP_LOG_BYTES (64u << 20)
#define MP_WRITERS 3

typedef struct mp_log
{
	_Atomic uint64_t tail;		/* bytes reserved: the next record's position */
	_Atomic uint64_t durable;	/* the log survives a crash up to here */
	_Atomic uint64_t redo;		/* the last redo point whose barrier passed */
	_Atomic uint64_t scanned;	/* records before this are complete (for durable) */
	uint8_t		buf[MP_LOG_BYTES];
} mp_log;

/* a record: u32 payload length, u32 complete flag, payload, padded to 8 */
static uint64_t
mp_rec_size(size_t len)
{
	return (8 + len + 7) & ~(uint64_t) 7;
}

static uint64_t
mp_append(void *arg, const void *rec, size_t len)
{
	mp_log	   *l = arg;
	uint64_t	pos = atomic_fetch_add(&l->tail, mp_rec_size(len));
	uint8_t    *p = l->buf + pos;

	if (pos + mp_rec_size(len) > MP_LOG_BYTES)
		abort();				/* sized so it cannot happen */
	memcpy(p + 8, rec, len);
	memcpy(p, &(uint32_t) {(uint32_t) len}, 4);
	atomic_store_explicit((_Atomic uint32_t *) (p + 4), 1, memory_order_release);
	return pos + mp_rec_size(len);
}

/* the log is durable up to pos once every record before it is complete (as XLogFlush) */
static void
mp_sync(void *arg, uint64_t pos)
{
	mp_log	   *l = arg;
	uint64_t	p = atomic_load(&l->scanned);
	uint64_t	cur;

	while (p < pos)
	{
		uint8_t    *r = l->buf + p;
		uint32_t	len;

		while (atomic_load_explicit((_Atomic uint32_t *) (r + 4), memory_order_acquire) == 0)
			sched_yield();
		memcpy(&len, r, 4);
		p += mp_rec_size(len);
	}
	cur = atomic_load(&l->scanned);
	while (p > cur && !atomic_compare_exchange_weak(&l->scanned, &cur, p))
		;
	cur = atomic_load(&l->durable);
	while (p > cur && !atomic_compare_exchange_weak(&l->durable, &cur, p))
		;
}

static void
mp_writer(store *s, mp_log *l, uint32_t id, uint64_t seed)
{
	tides_rand	r;
	tides_batch *b = tides_batch_new();
	uint8_t		val[4096];
	uint32_t	counter = 0;

	tides_rand_seed(&r, seed * 31 + id);
	for (;;)
	{
		uint32_t	n = 1 + tides_rand_uniform(&r, 8);

		tides_batch_clear(b);
		for (uint32_t i = 0; i < n; i++)
		{
			/* each writer owns the keys k with k % MP_WRITERS == id: one writer per key */
			uint32_t	k = tides_rand_uniform(&r, NKEYS / MP_WRITERS) * MP_WRITERS + id;

			if (tides_rand_uniform(&r, 6) == 0)
				tides_batch_delete(b, ks.key[k], ks.len[k]);
			else
				tides_batch_put(b, ks.key[k], ks.len[k], val,
								ks_value(k, (id << 24) | ++counter, false, val));
		}
		for (;;)
		{
			tides_status st = tides_write_external(s->db, b, mp_append, l);
			tides_status w;

			if (st != TIDES_BUSY)
			{
				if (st != TIDES_OK)
				{
					fprintf(stderr, "writer %u: %s\n", id, tides_errmsg(s->db));
					abort();
				}
				break;
			}
			work_once(s->db, &w);	/* others may hold the work: wait a little */
			usleep(200);
		}
		if (tides_rand_uniform(&r, 300) == 0)
			mp_sync(l, atomic_load(&l->tail));	/* a synchronous commit */
	}
}

static void
mp_checkpointer(store *s, mp_log *l)
{
	for (;;)
	{
		uint64_t	redo = atomic_load(&l->tail);
		uint64_t	ticket;
		tides_status w;

		while (tides_flush_barrier(s->db, &ticket) == TIDES_BUSY)
			work_once(s->db, &w);
		while (!tides_flush_barrier_passed(s->db, ticket))
			work_once(s->db, &w);
		atomic_store(&l->redo, redo);
		usleep(2000);
	}
}

/* expected state: every surviving record applied in log order */
typedef struct mp_expect
{
	const uint8_t *val[NKEYS];	/* NULL: absent */
	size_t		len[NKEYS];
} mp_expect;

static tides_status
mp_apply_entry(void *arg, uint64_t seq, int type, const uint8_t *key, size_t klen,
			   const uint8_t *val, size_t vlen)
{
	mp_expect  *e = arg;
	uint32_t	k = ks_lower_bound(&ks, key, klen);

	CHECK(k < NKEYS && ks.len[k] == klen && memcmp(ks.key[k], key, klen) == 0);
	if (k >= NKEYS)
		return TIDES_OK;
	e->val[k] = type == TIDES_KT_VALUE ? val : NULL;
	e->len[k] = vlen;
	return TIDES_OK;
}

static void
test_concurrent_kill(uint64_t seed, uint32_t rounds)
{
	for (uint32_t round = 0; round < rounds; round++)
	{
		store		s = {0};
		mp_log	   *l = test_shared_alloc(sizeof(mp_log));
		mp_expect  *e = calloc(1, sizeof(mp_expect));
		pid_t		pids[MP_WRITERS + 1];
		uint64_t	durable,
					redo,
					p;
		tides_batch *b = tides_batch_new();
		tides_rand	r;
		uint32_t	wrong = 0,
					replayed = 0;

		tides_rand_seed(&r, seed + round);
		ext_options(&s.opts);
		s.dir = fast_tmpdir("extmp");
		CHECK_OK(store_open(&s));
		store_crash(&s);		/* children open the store afresh in a shared region */
		s.size = tides_region_size(&s.opts);
		s.region = test_shared_alloc(s.size);
		CHECK_OK(tides_region_init(s.region, s.size, &s.opts));
		CHECK_OK(tides_open(s.region, s.dir, &s.opts, NULL, true, NULL, &s.db));
		tides_close(s.db);
		for (uint32_t i = 0; i <= MP_WRITERS; i++)
		{
			pids[i] = fork();
			if (pids[i] == 0)
			{
				CHECK_OK(tides_open(s.region, s.dir, &s.opts, NULL, false, NULL, &s.db));
				tides_set_log_sync(s.db, mp_sync, l);
				if (i < MP_WRITERS)
					mp_writer(&s, l, i, seed + round);
				else
					mp_checkpointer(&s, l);
				_exit(0);
			}
		}
		usleep(50000 + tides_rand_uniform(&r, 400000));
		for (uint32_t i = 0; i <= MP_WRITERS; i++)
			kill(pids[i], SIGKILL);
		for (uint32_t i = 0; i <= MP_WRITERS; i++)
			waitpid(pids[i], NULL, 0);

		/* what survived: the log up to durable; the store as the crash left it */
		durable = atomic_load(&l->durable);
		redo = atomic_load(&l->redo);
		CHECK(redo <= atomic_load(&l->tail));
		for (p = 0; p < durable;)
		{
			uint32_t	len;
			tides_batch_header h;
			tides_error err;

			memcpy(&len, l->buf + p, 4);
			tides_error_clear(&err);
			CHECK_OK(tides_batch_decode(l->buf + p + 8, len, &h, mp_apply_entry, e, &err));
			p += mp_rec_size(len);
		}
		test_shared_free(s.region, s.size);
		s.region = NULL;
		CHECK_OK(store_open(&s));
		if (s.db == NULL)
			break;
		tides_set_log_sync(s.db, mp_sync, l);
		for (p = 0; p < durable;)
		{
			uint32_t	len;

			memcpy(&len, l->buf + p, 4);
			if (p >= redo)
			{
				CHECK_OK(tides_batch_load(b, l->buf + p + 8, len));
				write_ext(s.db, b, NULL);
				replayed++;
			}
			p += mp_rec_size(len);
		}
		for (uint32_t k = 0; k < NKEYS; k++)
		{
			void	   *v = NULL;
			size_t		n = 0;
			tides_status st = tides_get(s.db, NULL, ks.key[k], ks.len[k], &v, &n);

			if (e->val[k] == NULL)
				wrong += st != TIDES_NOT_FOUND;
			else
				wrong += st != TIDES_OK || n != e->len[k] || memcmp(v, e->val[k], n) != 0;
			free(v);
		}
		if (wrong > 0)
			fprintf(stderr, "concurrent round %u: %u keys wrong (log %llu bytes, durable %llu, "
					"redo %llu, %u replayed)\n", round, wrong,
					(unsigned long long) atomic_load(&l->tail), (unsigned long long) durable,
					(unsigned long long) redo, replayed);
		CHECK(wrong == 0);
		tides_batch_free(b);
		store_crash(&s);
		test_rmdir(s.dir);
		free(s.dir);
		free(e);
		test_shared_free(l, sizeof(mp_log));
	}
}

int
main(int argc, char **argv)
{
	uint64_t	seed = test_init(argc, argv);
	tides_rand	r;

	tides_rand_seed(&r, seed);
	ks_init(&ks, NKEYS, 4, seed);
	test_crash_replay(&r);
	backup_round(&r, true);
	backup_round(&r, false);
	test_close_writes(&r);
	test_mode_switch(&r);
	test_concurrent_kill(seed, (uint32_t) env_u64("TEST_KILL_ROUNDS", 8));
	ks_free(&ks);
	return test_finish("test_external_log");
}
