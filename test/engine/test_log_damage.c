/*
 * test_log_damage.c -- how recovery classifies the place where the log
 * stops (see "Log damage" in src/engine/README.md).
 *
 * A store in FULL sync mode writes a few hundred batches, each fsynced
 * before the next is written, across several log segments (with PAD
 * records at segment ends); every record therefore claims that everything
 * before it was durable.  Copies of it get damage at one place:
 *
 *   - a flipped byte in a record in the middle, a zeroed record header, a
 *     flipped byte in a PAD record: later records prove the damaged bytes
 *     had been durable, so recovery must fail with TIDES_CORRUPTION naming
 *     the segment and the offset, and change no file; with the damage
 *     undone, every batch is back;
 *   - a torn last record (its second half zeros): a torn tail, recovery
 *     succeeds, reports log_tail_damaged, and every earlier batch is there.
 *
 * And in NONE sync mode (no fsync, no claims) damage in the middle cannot
 * be told from an OS crash that lost unsynced writes in any order: recovery
 * keeps what comes before the damage and reports a damaged tail.
 */
#include "harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#define NBATCH 600
#define SEGMENT (64 << 10)

typedef struct rec
{
	int			seg;
	uint64_t	off;			/* in the segment */
	uint32_t	len;
	int			type;
} rec;

static store st;
static rec	recs[4 * NBATCH];
static int	nrecs;
static char *root;
static int	case_no;

#define FAILF(...) \
	do { \
		test_failures++; \
		fprintf(stderr, "test_log_damage [case %d]: ", case_no); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
	} while (0)

static void
opts(tides_options *o, tides_sync_mode mode)
{
	tides_options_default(o);
	o->memtable_size = 256 << 10;
	o->memtable_count = 2;
	o->block_cache_size = 1 << 20;
	o->meta_size = 1 << 20;
	o->max_open_tags = 16;
	o->log_segment_size = SEGMENT;
	o->sync_mode = mode;
}

static size_t
val(char *buf, int i)
{
	size_t		n = 100 + (size_t) (h_mix((uint64_t) i) % 200);

	for (size_t k = 0; k < n; k++)
		buf[k] = (char) ('a' + (h_mix((uint64_t) i * 977 + k) % 26));
	return n;
}

static void
build(const char *dir, tides_sync_mode mode)
{
	memset(&st, 0, sizeof(st));
	opts(&st.opts, mode);
	st.dir = (char *) dir;
	CHECK_OK(store_open(&st));
	for (int i = 0; i < NBATCH; i++)
	{
		tides_batch *b = tides_batch_new();
		char		k[32],
					v[400];

		sprintf(k, "key%05d", i);
		tides_batch_put(b, k, strlen(k), v, val(v, i));
		CHECK_OK(tides_write(st.db, b, NULL));
		tides_batch_free(b);
	}
	store_crash(&st);
}

static void
seg_path(char *buf, size_t cap, const char *dir, int seg)
{
	snprintf(buf, cap, "%s/%012d.log", dir, seg);
}

/* walk the log's records as the writer laid them out */
static void
parse_log(const char *dir)
{
	nrecs = 0;
	for (int seg = 0;; seg++)
	{
		char		path[1024];
		int			fd;
		uint64_t	off = 0;

		seg_path(path, sizeof(path), dir, seg);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			break;
		while (off + 20 <= SEGMENT)
		{
			uint8_t		h[20];

			if (pread(fd, h, 20, (off_t) off) != 20)
				break;
			if (tides_get64(h + 8) != (uint64_t) seg * SEGMENT + off)
				break;
			recs[nrecs].seg = seg;
			recs[nrecs].off = off;
			recs[nrecs].len = tides_get32(h + 4);
			recs[nrecs].type = h[16];
			nrecs++;
			if (h[16] == 2)
				break;			/* pad: the rest of the segment */
			off += 20 + recs[nrecs - 1].len;
		}
		close(fd);
	}
}

static void
copy_dir(const char *from, const char *to)
{
	char		cmd[4096];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -a '%s' '%s'", to, from, to);
	if (system(cmd) != 0)
		abort();
}

/* sizes and checksums of every file, as one string */
static char *
fingerprint(const char *dir)
{
	char		cmd[2048];
	FILE	   *p;
	char	   *out = calloc(1, 65536);
	size_t		n;

	snprintf(cmd, sizeof(cmd), "cd '%s' && ls | sort | xargs md5sum", dir);
	p = popen(cmd, "r");
	n = fread(out, 1, 65535, p);
	out[n] = 0;
	pclose(p);
	return out;
}

static void
patch(const char *dir, int seg, uint64_t off, const uint8_t *bytes, size_t n, uint8_t *old)
{
	char		path[1024];
	int			fd;

	seg_path(path, sizeof(path), dir, seg);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	if (old != NULL)
		CHECK(pread(fd, old, n, (off_t) off) == (ssize_t) n);
	CHECK(pwrite(fd, bytes, n, (off_t) off) == (ssize_t) n);
	close(fd);
}

/* flip bits of one byte (again: undo) */
static void
flip(const char *dir, int seg, uint64_t off)
{
	uint8_t		b;
	char		path[1024];
	int			fd;

	seg_path(path, sizeof(path), dir, seg);
	fd = open(path, O_RDWR);
	CHECK(fd >= 0);
	CHECK(pread(fd, &b, 1, (off_t) off) == 1);
	b ^= 0x5a;
	CHECK(pwrite(fd, &b, 1, (off_t) off) == 1);
	close(fd);
}

/* how many of the batches read back, and is the first missing one after all present ones? */
static int
count_present(int *first_missing)
{
	int			found = 0;

	*first_missing = -1;
	for (int i = 0; i < NBATCH; i++)
	{
		char		k[32],
					w[400];
		void	   *v = NULL;
		size_t		vl,
					wl = val(w, i);
		tides_status s;

		sprintf(k, "key%05d", i);
		s = tides_get(st.db, NULL, k, strlen(k), &v, &vl);
		if (s == TIDES_OK && vl == wl && memcmp(v, w, wl) == 0)
		{
			found++;
			if (*first_missing >= 0)
				FAILF("key%05d is present after missing key%05d", i, *first_missing);
		}
		else if (s == TIDES_OK || s == TIDES_NOT_FOUND)
		{
			if (s == TIDES_OK)
				FAILF("key%05d has a wrong value", i);
			if (*first_missing < 0)
				*first_missing = i;
		}
		else
			FAILF("key%05d: %s", i, tides_status_name(s));
		free(v);
	}
	return found;
}

/* recovery must refuse, name segment and offset, and touch nothing */
static void
expect_corruption(const char *work, const char *what, int seg, uint64_t off)
{
	char	   *before = fingerprint(work);
	char	   *after;
	char		name[64],
				offs[64];
	tides_status s;

	memset(&st, 0, sizeof(st));
	opts(&st.opts, TIDES_SYNC_FULL);
	st.dir = (char *) work;
	s = store_open(&st);
	snprintf(name, sizeof(name), "%012d.log", seg);
	snprintf(offs, sizeof(offs), "offset %llu ", (unsigned long long) off);
	if (s == TIDES_OK)
	{
		int			first_missing;
		int			n = count_present(&first_missing);

		FAILF("%s at %s offset %llu: recovery succeeded with %d of %d batches (log tail damaged: %d)",
			  what, name, (unsigned long long) off, n, NBATCH, st.info.log_tail_damaged);
	}
	else
	{
		const char *msg = st.db ? tides_errmsg(st.db) : "";

		if (s != TIDES_CORRUPTION || strstr(msg, name) == NULL || strstr(msg, offs) == NULL)
			FAILF("%s: expected a corruption error naming %s and %s, got %s: \"%s\"", what, name,
				  offs, tides_status_name(s), msg);
	}
	store_crash(&st);
	after = fingerprint(work);
	if (strcmp(before, after) != 0)
		FAILF("%s: recovery changed files:\n%s---\n%s", what, before, after);
	free(before);
	free(after);
}

static void
expect_all(const char *work, const char *what)
{
	int			first_missing;
	tides_status s;

	memset(&st, 0, sizeof(st));
	opts(&st.opts, TIDES_SYNC_FULL);
	st.dir = (char *) work;
	s = store_open(&st);
	if (s != TIDES_OK)
		FAILF("%s: recovery failed: %s: %s", what, tides_status_name(s), st.db ? tides_errmsg(st.db) : "");
	else if (count_present(&first_missing) != NBATCH)
		FAILF("%s: batches missing from key%05d on", what, first_missing);
	store_crash(&st);
}

static int
find_rec(int type, int nth)
{
	for (int i = 0; i < nrecs; i++)
		if (recs[i].type == type && nth-- == 0)
			return i;
	return -1;
}

int
main(int argc, char **argv)
{
	char		pristine[1024],
				work[1024];
	uint8_t		old[20];
	int			i,
				first_missing;

	test_init(argc, argv);
	root = fast_tmpdir("logdmg");
	snprintf(pristine, sizeof(pristine), "%s/pristine", root);
	snprintf(work, sizeof(work), "%s/work", root);
	build(pristine, TIDES_SYNC_FULL);
	parse_log(pristine);
	CHECK(find_rec(2, 1) >= 0);	/* the log spans segments: pads exist */

	/* a flipped byte in the payload of a record in the middle */
	case_no++;
	copy_dir(pristine, work);
	i = find_rec(1, NBATCH / 3);
	flip(work, recs[i].seg, recs[i].off + 20 + recs[i].len / 2);
	expect_corruption(work, "flipped payload byte", recs[i].seg, recs[i].off);
	flip(work, recs[i].seg, recs[i].off + 20 + recs[i].len / 2);
	expect_all(work, "payload byte restored");

	/* a zeroed record header in the middle (reads like the end of the log) */
	case_no++;
	copy_dir(pristine, work);
	i = find_rec(1, NBATCH / 2);
	{
		uint8_t		zeros[20] = {0};

		patch(work, recs[i].seg, recs[i].off, zeros, 20, old);
		expect_corruption(work, "zeroed record header", recs[i].seg, recs[i].off);
		patch(work, recs[i].seg, recs[i].off, old, 20, NULL);
		expect_all(work, "record header restored");
	}

	/* a flipped byte in a PAD record's checksum */
	case_no++;
	copy_dir(pristine, work);
	i = find_rec(2, 0);
	flip(work, recs[i].seg, recs[i].off);
	expect_corruption(work, "flipped pad checksum", recs[i].seg, recs[i].off);
	flip(work, recs[i].seg, recs[i].off);
	expect_all(work, "pad restored");

	/* a torn last record: a torn tail, not corruption */
	case_no++;
	copy_dir(pristine, work);
	i = nrecs - 1;
	while (i > 0 && recs[i].type != 1)
		i--;
	{
		uint8_t		zeros[512] = {0};
		uint32_t	half = recs[i].len / 2;

		patch(work, recs[i].seg, recs[i].off + 20 + half, zeros, recs[i].len - half, NULL);
	}
	memset(&st, 0, sizeof(st));
	opts(&st.opts, TIDES_SYNC_FULL);
	st.dir = work;
	CHECK_OK(store_open(&st));
	if (st.db != NULL && st.info.log_tail_damaged)
	{
		CHECK(count_present(&first_missing) == NBATCH - 1);
		CHECK(first_missing == NBATCH - 1);
	}
	else
		FAILF("a torn last record: recovery did not report a damaged tail");
	store_crash(&st);

	/* no fsyncs, no claims: damage in the middle is indistinguishable from a torn tail */
	case_no++;
	snprintf(pristine, sizeof(pristine), "%s/nosync", root);
	build(pristine, TIDES_SYNC_NONE);
	parse_log(pristine);
	copy_dir(pristine, work);
	i = find_rec(1, NBATCH / 3);
	flip(work, recs[i].seg, recs[i].off + 20 + recs[i].len / 2);
	memset(&st, 0, sizeof(st));
	opts(&st.opts, TIDES_SYNC_NONE);
	st.dir = work;
	CHECK_OK(store_open(&st));
	if (st.db != NULL)
	{
		CHECK(st.info.log_tail_damaged);
		CHECK(count_present(&first_missing) == NBATCH / 3);
	}
	store_crash(&st);

	if (test_failures == 0)
		test_rmdir(root);
	else
		fprintf(stderr, "test_log_damage: stores kept under %s\n", root);
	free(root);
	return test_finish("test_log_damage");
}
