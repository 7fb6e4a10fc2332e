/*
 * test_log.c -- the log module on its own: records written at their
 * positions and replayed exactly; pads (a PAD record, and the case of fewer
 * than 20 bytes left, where nothing is written); segment preparation and
 * recycling (a recycled segment's stale records, which carry their old
 * positions, are never replayed); replay stopping at the first bad record
 * (flipped payload byte, flipped header, wrong position, torn record,
 * record of a bad type) and reporting a clean end on zeros; skips followed
 * across and within segments; a missing segment ending the log; group
 * commit moving durable_lsn; fsync failures reported; and recovery's sync
 * of the replayed range: every segment that exists once, a skip of any
 * length stepped over.  Then the same over the POSIX vfs, whose segments
 * are written through shared mappings: replay, a writer killed by SIGKILL
 * in the middle, recycling.
 */
#include "harness.h"
#include "vfs_fault.h"
#include "db/version_edit.h"
#include "log/log.h"
#include "util/counters.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SEG (64u << 10)

typedef struct rec
{
	uint64_t	lsn;
	uint32_t	len;
	uint8_t    *payload;
} rec;

static tides_rand rnd;
static rec	recs[4000];
static int	nrecs;
static tides_log_shared lsh;
static tides_log lg;
static tides_counters counters;
static char *dir;
static uint64_t next_pos;

/* replay collects what it is given */
typedef struct got
{
	int			n;
	uint64_t	lsn[4000];
	uint32_t	len[4000];
	bool		bad;
} got;

static tides_status
collect(void *arg, uint64_t lsn, const uint8_t *payload, uint32_t len)
{
	got		   *g = arg;

	if (g->n >= 4000)
		return TIDES_NO_MEMORY;
	/* the payload must be what we wrote at that position */
	for (int i = 0; i < nrecs; i++)
		if (recs[i].lsn == lsn)
		{
			if (recs[i].len != len || memcmp(recs[i].payload, payload, len) != 0)
				g->bad = true;
			break;
		}
	g->lsn[g->n] = lsn;
	g->len[g->n] = len;
	g->n++;
	return TIDES_OK;
}

static bool dry_run;			/* append_record: note the record, write nothing */

static void
append_record(uint32_t len)
{
	uint8_t    *buf = malloc(TIDES_REC_HEADER + len);
	uint64_t	pos = next_pos;
	tides_error err;

	for (uint32_t i = 0; i < len; i++)
		buf[TIDES_REC_HEADER + i] = (uint8_t) tides_rand_next(&rnd);
	if (TIDES_REC_HEADER + len > SEG - pos % SEG)
	{
		/* does not fit: pad the rest of the segment */
		if (!dry_run)
			CHECK_OK(tides_log_write_pad(&lg, pos, &err));
		pos = (pos / SEG + 1) * SEG;
	}
	if (!dry_run)
		CHECK_OK(tides_log_prepare(&lg, pos / SEG + 1, 0, &err));
	tides_rec_seal(buf, len, pos, TIDES_REC_BATCH);
	if (!dry_run)
		CHECK_OK(tides_log_write(&lg, pos, buf, TIDES_REC_HEADER + len, &err));
	recs[nrecs].lsn = pos;
	recs[nrecs].len = len;
	recs[nrecs].payload = malloc(len ? len : 1);
	memcpy(recs[nrecs].payload, buf + TIDES_REC_HEADER, len);
	nrecs++;
	free(buf);
	next_pos = pos + TIDES_REC_HEADER + len;
	atomic_store(&lsh.written_lsn, next_pos);
}

/*
 * Where replay reports the end of what was written: next_pos, or the next
 * segment's start when fewer bytes than a record header are left (nothing,
 * not even a pad, is written there).
 */
static uint64_t
written_end(void)
{
	uint64_t	room = SEG - next_pos % SEG;

	return room < TIDES_REC_HEADER ? next_pos + room : next_pos;
}

static void
replay(uint64_t from, const tides_log_skip *sk, uint32_t nsk, got *g, uint64_t *end, bool *damaged)
{
	tides_error err;

	memset(g, 0, sizeof(*g));
	tides_error_clear(&err);
	CHECK_OK(tides_log_replay(&lg, from, sk, nsk, collect, g, end, damaged, &err));
	CHECK(!g->bad);
}

/* index of the first record at or after lsn */
static int
rec_at(uint64_t lsn)
{
	for (int i = 0; i < nrecs; i++)
		if (recs[i].lsn >= lsn)
			return i;
	return nrecs;
}

static void
expect_records(const got *g, int from, int to, const char *what)
{
	bool		ok = g->n == to - from;

	for (int i = 0; ok && i < g->n; i++)
		ok = g->lsn[i] == recs[from + i].lsn && g->len[i] == recs[from + i].len;
	if (!ok)
	{
		fprintf(stderr, "%s: replayed %d records, expected records %d..%d (seed %llu)\n", what, g->n,
				from, to, (unsigned long long) test_seed);
		test_failures++;
	}
}

static void
patch_file(uint64_t lsn, size_t off_in_rec, uint8_t xor)
{
	char		path[1024];
	int			fd;
	uint8_t		b;

	tides_log_segment_name(path, sizeof(path), dir, lsn / SEG);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK(pread(fd, &b, 1, (off_t) (lsn % SEG + off_in_rec)) == 1);
	b ^= xor;
	CHECK(pwrite(fd, &b, 1, (off_t) (lsn % SEG + off_in_rec)) == 1);
	close(fd);
}

static uint32_t
some_len(void)
{
	return (uint32_t) (tides_rand_uniform(&rnd, 10) == 0 ? tides_rand_uniform(&rnd, 9000)
					   : tides_rand_uniform(&rnd, 200));
}

/*
 * Records stored through the segments' shared mappings (the POSIX vfs maps
 * them): replayed exactly; only the segment being written stays mapped;
 * those of a writer killed by SIGKILL, which never
 * unmapped or closed anything, are all there; recycled segments are mapped
 * again under their new numbers.  With zero_fill off (a handle whose sync
 * mode is not full) new segments are only allocated: every block of the
 * file is the file's, yet never written until a record lands there.
 */
static void
mapped_writes(got *g, bool zero_fill)
{
	char	   *mdir = fast_tmpdir("logmap");
	uint64_t	end;
	bool		damaged;
	bool		mapped = false;
	tides_error err;
	tides_rand	at_fork;
	pid_t		pid;
	int			status;
	int			before_fork;

	for (int i = 0; i < nrecs; i++)
		free(recs[i].payload);
	nrecs = 0;
	next_pos = 0;
	tides_log_shared_init(&lsh, SEG);
	tides_log_attach(&lg, &lsh, tides_vfs_posix(), &counters, mdir);
	lg.zero_fill = zero_fill;
	CHECK_OK(tides_log_prepare(&lg, 0, 0, &err));
	{
		char		path[1024];
		struct stat sb;

		tides_log_segment_name(path, sizeof(path), mdir, 0);
		CHECK(stat(path, &sb) == 0 && sb.st_size == SEG && (uint64_t) sb.st_blocks * 512 >= SEG);
	}
	while (next_pos < 3 * SEG + SEG / 3)
		append_record(some_len());
	for (int i = 0; i < TIDES_LOG_FDS; i++)
	{
		/* only the segment being written stays mapped */
		CHECK(lg.fds[i].map == NULL || lg.fds[i].segment == next_pos / SEG);
		mapped |= lg.fds[i].fd >= 0 && lg.fds[i].map != NULL;
	}
	CHECK(mapped);
	replay(0, NULL, 0, g, &end, &damaged);
	expect_records(g, 0, nrecs, "mapped writes");
	CHECK(end == written_end() && !damaged);

	/* a writer killed in the middle of its work: what it stored stays */
	at_fork = rnd;
	before_fork = nrecs;
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
	{
		while (next_pos < 5 * SEG + SEG / 2)
			append_record(some_len());
		raise(SIGKILL);
		_exit(1);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	rnd = at_fork;
	dry_run = true;				/* the same records again, to know them */
	while (next_pos < 5 * SEG + SEG / 2)
		append_record(some_len());
	dry_run = false;
	CHECK(nrecs > before_fork);
	tides_log_detach(&lg);
	replay(0, NULL, 0, g, &end, &damaged);
	expect_records(g, 0, nrecs, "a killed writer's mapped writes");
	CHECK(end == written_end() && !damaged);

	/* recycled segments, mapped under their new numbers */
	atomic_store(&lsh.ready_segment, next_pos / SEG + 1);	/* the child prepared them */
	CHECK_OK(tides_log_prepare(&lg, next_pos / SEG + 3, 3, &err));
	while (next_pos < 7 * SEG + 100)
		append_record(some_len());
	replay(3 * SEG, NULL, 0, g, &end, &damaged);
	expect_records(g, rec_at(3 * SEG), nrecs, "mapped writes into recycled segments");
	CHECK(end == written_end());		/* stale bytes follow: "damaged" may be either */
	tides_log_detach(&lg);
	if (test_failures == 0)
		test_rmdir(mdir);
	free(mdir);
}

int
main(int argc, char **argv)
{
	got		   *g = malloc(sizeof(got));
	uint64_t	end;
	bool		damaged;
	tides_error err;
	tides_vfs_fault *vf;

	test_init(argc, argv);
	tides_rand_seed(&rnd, test_seed);
	dir = fast_tmpdir("log");
	vf = tides_vfs_fault_new(NULL, test_seed);
	tides_log_shared_init(&lsh, SEG);
	tides_log_attach(&lg, &lsh, tides_vfs_fault_vfs(vf), &counters, dir);

	/* an empty log: nothing, clean */
	CHECK_OK(tides_log_prepare(&lg, 0, 0, &err));
	replay(0, NULL, 0, g, &end, &damaged);
	CHECK(g->n == 0 && end == 0 && !damaged);

	/* records of every size, pads at segment ends */
	while (next_pos < 5 * SEG + SEG / 2)
	{
		uint32_t	len = some_len();

		/* now and then land exactly 1..19 bytes before a segment end */
		if (tides_rand_uniform(&rnd, 20) == 0)
		{
			uint64_t	room = SEG - next_pos % SEG;

			if (room > TIDES_REC_HEADER + 40)
				len = (uint32_t) (room - TIDES_REC_HEADER - 1 - tides_rand_uniform(&rnd, 19));
		}
		append_record(len);
	}
	replay(0, NULL, 0, g, &end, &damaged);
	expect_records(g, 0, nrecs, "full replay");
	CHECK(end == written_end() && !damaged);

	/* from the middle of the stream */
	{
		int			k = nrecs / 3;

		replay(recs[k].lsn, NULL, 0, g, &end, &damaged);
		expect_records(g, k, nrecs, "replay from a record");
	}

	/* skips: one inside a segment, one spanning a segment boundary */
	{
		tides_log_skip sk[2];
		int			a = 2,
					b = a + 7,
					c = rec_at(SEG) + 3,
					d;

		sk[0].from = recs[a].lsn;
		sk[0].to = recs[b].lsn;
		sk[1].from = recs[c].lsn;
		sk[1].to = (recs[c].lsn / SEG + 2) * SEG;	/* skips end on a segment start */
		d = rec_at(sk[1].to);
		replay(0, sk, 2, g, &end, &damaged);
		{
			got		   *want = malloc(sizeof(got));
			int			n = 0;
			bool		ok;

			for (int i = 0; i < nrecs; i++)
				if (!(i >= a && i < b) && !(i >= c && i < d))
					want->lsn[n++] = recs[i].lsn;
			ok = g->n == n;
			for (int i = 0; ok && i < n; i++)
				ok = g->lsn[i] == want->lsn[i];
			CHECK(ok);
			free(want);
		}
		if (end != written_end() || damaged)
			fprintf(stderr, "skips: end %llu, want %llu, damaged %d, skip %llu..%llu\n",
					(unsigned long long) end, (unsigned long long) written_end(), damaged,
					(unsigned long long) sk[1].from, (unsigned long long) sk[1].to);
		CHECK(end == written_end() && !damaged);
	}

	/* group commit: sync moves durable_lsn to what was written */
	CHECK_OK(tides_log_sync(&lg, next_pos, &err));
	CHECK(atomic_load(&lsh.durable_lsn) == next_pos);
	CHECK_OK(tides_log_sync(&lg, next_pos / 2, &err));	/* already durable: no-op */

	/* an fsync failure is reported and durable_lsn does not move */
	{
		tides_fault_rule r = {.ops = TIDES_FAULT_SYNC, .pattern = ".log", .err = EIO, .count = 1};
		uint64_t	durable = atomic_load(&lsh.durable_lsn);

		append_record(100);
		tides_vfs_fault_add_rule(vf, &r);
		CHECK(tides_log_sync(&lg, next_pos, &err) == TIDES_IO_ERROR);
		CHECK(strstr(err.msg, ".log") != NULL);
		CHECK(atomic_load(&lsh.durable_lsn) == durable);
		tides_vfs_fault_clear_rules(vf);
		CHECK_OK(tides_log_sync(&lg, next_pos, &err));
		CHECK(atomic_load(&lsh.durable_lsn) == next_pos);
	}

	/*
	 * Recovery's sync of what it replayed: each segment that exists, once,
	 * and a skip of any length stepped over, not probed segment by segment
	 * (a damaged manifest's skip to 2^62 once made this loop for hours).
	 */
	{
		tides_log_skip sk = {.from = next_pos, .to = (1ull << 62) / SEG * SEG};
		uint64_t	nseg = (next_pos + SEG - 1) / SEG;
		tides_fault_rule r = {.ops = TIDES_FAULT_SYNC, .pattern = ".log", .err = EIO, .count = 1};

		replay(0, &sk, 1, g, &end, &damaged);
		expect_records(g, 0, nrecs, "a skip far past the end");
		CHECK(end == sk.to && !damaged);
		CHECK_OK(tides_log_sync_range(&lg, 0, end, &sk, 1, &err));
		r.skip = nseg - 1;		/* the last of nseg fsyncs fails */
		tides_vfs_fault_add_rule(vf, &r);
		CHECK(tides_log_sync_range(&lg, 0, end, &sk, 1, &err) == TIDES_IO_ERROR);
		tides_vfs_fault_clear_rules(vf);
		r.skip = nseg;			/* there is no fsync number nseg + 1 */
		tides_vfs_fault_add_rule(vf, &r);
		CHECK_OK(tides_log_sync_range(&lg, 0, end, &sk, 1, &err));
		tides_vfs_fault_clear_rules(vf);
	}

	/* damage: replay stops at the first bad record, in several ways */
	{
		static const struct
		{
			size_t		off;
			const char *what;
		}			damage[] = {
			{TIDES_REC_HEADER + 0, "payload byte"},
			{0, "checksum"},
			{4, "length"},
			{8, "position"},
			{16, "type"},
			{17, "reserved byte"},
		};

		for (size_t d = 0; d < sizeof(damage) / sizeof(damage[0]); d++)
		{
			int			k;

			do
				k = (int) tides_rand_uniform(&rnd, (uint64_t) nrecs);
			while (recs[k].len == 0 && damage[d].off >= TIDES_REC_HEADER);
			patch_file(recs[k].lsn, damage[d].off, 0x20);
			replay(0, NULL, 0, g, &end, &damaged);
			expect_records(g, 0, k, damage[d].what);
			CHECK(end == recs[k].lsn);
			CHECK(damaged);
			patch_file(recs[k].lsn, damage[d].off, 0x20);	/* repair */
		}
		replay(0, NULL, 0, g, &end, &damaged);
		expect_records(g, 0, nrecs, "after repairs");
	}

	/* a missing segment ends the log (cleanly) */
	{
		char		path[1024],
					moved[1100];
		int			k = rec_at(3 * SEG);

		tides_log_segment_name(path, sizeof(path), dir, 3);
		snprintf(moved, sizeof(moved), "%s.away", path);
		CHECK(rename(path, moved) == 0);
		tides_log_detach(&lg);
		replay(0, NULL, 0, g, &end, &damaged);
		expect_records(g, 0, k, "missing segment");
		CHECK(end == 3 * SEG && !damaged);
		CHECK(rename(moved, path) == 0);
		tides_log_detach(&lg);
	}

	/* recycling: segments below recycle_below are renamed forward; their
	 * stale records never replay at the new positions */
	{
		uint64_t	oldest = atomic_load(&lsh.oldest_segment);
		uint64_t	ready = atomic_load(&lsh.ready_segment);
		uint64_t	upto = ready + 1;

		CHECK_OK(tides_log_prepare(&lg, upto, 3, &err));
		CHECK(atomic_load(&lsh.ready_segment) == upto + 1);
		CHECK(atomic_load(&lsh.oldest_segment) > oldest);
		/* the recycled segments hold old records; replay from their start */
		for (uint64_t s = ready; s <= upto; s++)
		{
			replay(s * SEG, NULL, 0, g, &end, &damaged);
			CHECK(g->n == 0);
			CHECK(end == s * SEG);
		}
		/* and the live part is intact */
		replay(3 * SEG, NULL, 0, g, &end, &damaged);
		expect_records(g, rec_at(3 * SEG), nrecs, "after recycling");
		CHECK(end == written_end());
		/* writing into a recycled segment works; replay then reaches it */
		while (next_pos < ready * SEG + 3000)
			append_record((uint32_t) tides_rand_uniform(&rnd, 300));
		replay(3 * SEG, NULL, 0, g, &end, &damaged);
		expect_records(g, rec_at(3 * SEG), nrecs, "into a recycled segment");
		CHECK(end == written_end());
	}

	/* a torn record at the end (a crash while writing): damaged, stops there */
	{
		uint8_t		buf[TIDES_REC_HEADER + 500];
		tides_fault_rule r = {.ops = TIDES_FAULT_WRITE, .pattern = ".log", .err = EIO, .count = 1, .torn = true};

		memset(buf, 7, sizeof(buf));
		tides_rec_seal(buf, 500, next_pos, TIDES_REC_BATCH);
		tides_vfs_fault_add_rule(vf, &r);
		CHECK(tides_log_write(&lg, next_pos, buf, sizeof(buf), &err) == TIDES_IO_ERROR);
		tides_vfs_fault_clear_rules(vf);
		replay(3 * SEG, NULL, 0, g, &end, &damaged);
		expect_records(g, rec_at(3 * SEG), nrecs, "torn tail");
		CHECK(end == written_end());
	}

	fprintf(stderr, "test_log: %d records over %llu segments\n", nrecs,
			(unsigned long long) (next_pos / SEG + 1));
	tides_log_detach(&lg);
	mapped_writes(g, true);
	mapped_writes(g, false);
	tides_vfs_fault_free(vf);
	for (int i = 0; i < nrecs; i++)
		free(recs[i].payload);
	free(g);
	if (test_failures == 0)
		test_rmdir(dir);
	free(dir);
	return test_finish("test_log");
}
