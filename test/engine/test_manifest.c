/*
 * test_manifest.c -- loading the manifest: a torn tail is the end of the
 * manifest, damage anywhere else is corruption.
 *
 * A store is built with several flushes and compactions (each appends an
 * edit) and left by a process crash, so its manifest holds a state record
 * followed by appended edits.  Copies of that directory are then damaged
 * and opened:
 *
 *   - torn tails (the last append cut at every kind of place, zeros after
 *     the last record, its data zeros from the first sector boundary after
 *     its start -- which cuts a header that crosses one -- a header
 *     claiming more bytes than the file has; the build ends with a flush's
 *     edit, as a compaction's edit would have let its inputs be deleted):
 *     recovery succeeds, every key reads back, the file is cut to its valid
 *     end and the store works on;
 *   - a flipped byte inside an earlier record (payload, checksum, length,
 *     position): recovery fails with TIDES_CORRUPTION and the message names
 *     the manifest;
 *   - a flipped byte in the first record (the state record a rewrite made
 *     and synced before CURRENT named the file: it is never a torn append):
 *     corruption, not an empty store;
 *   - CURRENT naming nothing sensible, or a missing manifest: an error
 *     naming the file.
 */
#include "harness.h"
#include "log/log_format.h"

#include <dirent.h>
#include <fcntl.h>

static store st;
static char *pristine;
static uint32_t nkeys;

static void
opts(tides_options *o)
{
	tides_options_default(o);
	o->memtable_size = 64 << 10;
	o->memtable_count = 2;
	o->block_cache_size = 1 << 20;
	o->meta_size = 2 << 20;
	o->log_segment_size = 4 << 20;	/* no recycling: the log keeps everything */
	o->target_file_size = 64 << 10;
	o->level_base_size = 64 << 10;
	o->level0_compaction_trigger = 2;
	o->sync_mode = TIDES_SYNC_NONE;
}

static size_t
mkey(char *b, uint32_t i)
{
	return (size_t) sprintf(b, "manifest-key-%06u", i);
}

static size_t
mval(uint8_t *b, uint32_t i)
{
	size_t		n = 20 + i % 50;

	for (size_t k = 0; k < n; k++)
		b[k] = (uint8_t) (i * 7 + k);
	return n;
}

static void
copy_dir(const char *from, const char *to)
{
	char		cmd[4096];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && cp -a '%s' '%s'", to, from, to);
	if (system(cmd) != 0)
		abort();
}

/* path of the manifest CURRENT names in dir */
static void
manifest_path(const char *dir, char *out, size_t cap)
{
	char		cur[1024],
				name[64] = {0};
	FILE	   *f;

	snprintf(cur, sizeof(cur), "%s/CURRENT", dir);
	f = fopen(cur, "r");
	if (f == NULL || fgets(name, sizeof(name), f) == NULL)
		abort();
	fclose(f);
	name[strcspn(name, "\n")] = 0;
	snprintf(out, cap, "%s/%s", dir, name);
}

/* offsets of the manifest's records */
static int
record_offsets(const char *path, uint64_t *offs, uint32_t *lens, int max, uint64_t *fsize)
{
	int			fd = open(path, O_RDONLY);
	uint64_t	pos = 0;
	int			n = 0;
	off_t		sz = lseek(fd, 0, SEEK_END);

	*fsize = (uint64_t) sz;
	while (n < max && pos + TIDES_REC_HEADER <= (uint64_t) sz)
	{
		uint8_t		h[TIDES_REC_HEADER];

		if (pread(fd, h, sizeof(h), (off_t) pos) != (ssize_t) sizeof(h))
			break;
		offs[n] = pos;
		lens[n] = tides_get32(h + 4);
		pos += TIDES_REC_HEADER + lens[n];
		n++;
	}
	close(fd);
	return n;
}

static void
xor_byte(const char *path, uint64_t off, uint8_t x)
{
	int			fd = open(path, O_RDWR);
	uint8_t		b;

	CHECK(pread(fd, &b, 1, (off_t) off) == 1);
	b ^= x;
	CHECK(pwrite(fd, &b, 1, (off_t) off) == 1);
	close(fd);
}

static bool
all_keys_ok(void)
{
	for (uint32_t i = 0; i < nkeys; i++)
	{
		char		k[32];
		uint8_t		want[128];
		size_t		kl = mkey(k, i),
					wl = mval(want, i),
					vl;
		void	   *v = NULL;
		tides_status s = tides_get(st.db, NULL, k, kl, &v, &vl);
		bool		ok = s == TIDES_OK && vl == wl && memcmp(v, want, wl) == 0;

		free(v);
		if (!ok)
		{
			fprintf(stderr, "key %s: %s %s\n", k, tides_status_name(s), tides_errmsg(st.db));
			return false;
		}
	}
	return true;
}

/* open a damaged copy; returns the status of recovery */
static tides_status
open_copy(const char *dir)
{
	tides_status s;

	memset(&st, 0, sizeof(st));
	opts(&st.opts);
	st.dir = (char *) dir;
	s = store_open(&st);
	return s;
}

static void
close_copy(void)
{
	store_crash(&st);
}

static void
expect_torn_ok(const char *what, const char *dir)
{
	tides_status s = open_copy(dir);

	if (s != TIDES_OK)
	{
		fprintf(stderr, "%s: recovery failed: %s: %s (seed %llu)\n", what, tides_status_name(s),
				st.db ? tides_errmsg(st.db) : "", (unsigned long long) test_seed);
		test_failures++;
	}
	else
	{
		if (!all_keys_ok())
		{
			fprintf(stderr, "%s: data lost after a torn manifest tail\n", what);
			test_failures++;
		}
		/* the store works on: a flush appends to the rewritten manifest */
		{
			tides_batch *b = tides_batch_new();
			bool		did;

			tides_batch_put(b, "after", 5, "x", 1);
			CHECK_OK(tides_write(st.db, b, NULL));
			tides_batch_free(b);
			CHECK(tides_seal_memtable(st.db) != TIDES_INVALID);
			CHECK_OK(tides_flush_work(st.db, &did));
			CHECK(tides_verify(st.db, report_problem, NULL) == 0);
		}
	}
	close_copy();
	/* and once more, after that crash */
	if (open_copy(dir) != TIDES_OK || !all_keys_ok())
	{
		fprintf(stderr, "%s: second recovery failed\n", what);
		test_failures++;
	}
	close_copy();
}

static void
expect_corruption(const char *what, const char *dir, const char *name_part)
{
	tides_status s = open_copy(dir);

	if (s == TIDES_OK)
	{
		fprintf(stderr, "%s: recovery succeeded on a damaged manifest (seed %llu)%s\n", what,
				(unsigned long long) test_seed, all_keys_ok() ? " (data intact)" : " AND DATA IS WRONG");
		test_failures++;
	}
	else
	{
		const char *msg = st.db ? tides_errmsg(st.db) : "";

		if ((s != TIDES_CORRUPTION && s != TIDES_IO_ERROR) || strstr(msg, name_part) == NULL)
		{
			fprintf(stderr, "%s: want an error naming %s, got %s: \"%s\"\n", what, name_part,
					tides_status_name(s), msg);
			test_failures++;
		}
	}
	close_copy();
}

int
main(int argc, char **argv)
{
	char		work[1200],
				mpath[1400];
	uint64_t	offs[256],
				fsize;
	uint32_t	lens[256];
	int			nrec;
	char	   *base;

	test_init(argc, argv);
	base = fast_tmpdir("manifest");
	pristine = malloc(1100);
	snprintf(pristine, 1100, "%s/pristine", base);
	snprintf(work, sizeof(work), "%s/work", base);

	/* build: a few thousand keys over several flushes and compactions */
	memset(&st, 0, sizeof(st));
	opts(&st.opts);
	st.dir = pristine;
	CHECK_OK(store_open(&st));
	nkeys = 6000;
	for (uint32_t i = 0; i < nkeys; i++)
	{
		char		k[32];
		uint8_t		v[128];
		size_t		kl = mkey(k, i),
					vl = mval(v, i);
		tides_batch *b = tides_batch_new();

		tides_batch_put(b, k, kl, v, vl);
		while (tides_write(st.db, b, NULL) == TIDES_BUSY)
			drain(st.db);
		tides_batch_free(b);
		if (i % 700 == 0)
			drain(st.db);
	}
	drain(st.db);

	/*
	 * The last append must be a flush's edit: a torn tail is an append whose
	 * write did not finish, so nothing acted on it, and the log still holds
	 * what a flush recorded.  A compaction's edit, once written, lets its
	 * inputs be deleted, which cutting it afterwards cannot undo.  So rewrite
	 * the last key and flush it, without compacting.
	 */
	{
		char		k[32];
		uint8_t		v[128];
		size_t		kl = mkey(k, nkeys - 1),
					vl = mval(v, nkeys - 1);
		tides_batch *b = tides_batch_new();
		bool		did;

		tides_batch_put(b, k, kl, v, vl);
		CHECK_OK(tides_write(st.db, b, NULL));
		tides_batch_free(b);
		CHECK_OK(tides_seal_memtable(st.db));
		do
			CHECK_OK(tides_flush_work(st.db, &did));
		while (did);
	}
	store_crash(&st);			/* leave the appended edits in place */

	manifest_path(pristine, mpath, sizeof(mpath));
	nrec = record_offsets(mpath, offs, lens, 256, &fsize);
	fprintf(stderr, "test_manifest: manifest has %d records, %llu bytes\n", nrec, (unsigned long long) fsize);
	CHECK(nrec >= 4);
	if (nrec < 4)
		return test_finish("test_manifest");

	/* sanity: the pristine copy opens with all data */
	copy_dir(pristine, work);
	expect_torn_ok("pristine", work);

	/* torn tails of the last record */
	{
		uint64_t	last = offs[nrec - 1];
		uint64_t	cuts[] = {last + 3, last + TIDES_REC_HEADER - 1, last + TIDES_REC_HEADER,
		last + TIDES_REC_HEADER + lens[nrec - 1] / 2, fsize - 1};

		for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++)
		{
			char		what[64];

			copy_dir(pristine, work);
			manifest_path(work, mpath, sizeof(mpath));
			CHECK(truncate(mpath, (off_t) cuts[c]) == 0);
			snprintf(what, sizeof(what), "torn tail cut at %llu", (unsigned long long) cuts[c]);
			expect_torn_ok(what, work);
		}
	}
	/* zeros after the last record (a torn append that extended the file) */
	{
		copy_dir(pristine, work);
		manifest_path(work, mpath, sizeof(mpath));
		CHECK(truncate(mpath, (off_t) (fsize + 300)) == 0);
		expect_torn_ok("zeros after the end", work);
	}
	/*
	 * The last record's data never arrived (its length did): zeros, torn.
	 * Sectors are written whole, so the zeros start at the first sector
	 * boundary after the record's start (or right after its header, when
	 * it ends in that sector): a header that crosses a boundary loses its
	 * second part too.
	 */
	{
		int			fd;
		uint8_t		z[4096];
		uint64_t	from = (offs[nrec - 1] + 512) & ~(uint64_t) 511;

		if (from >= fsize)
			from = offs[nrec - 1] + TIDES_REC_HEADER;
		memset(z, 0, sizeof(z));
		copy_dir(pristine, work);
		manifest_path(work, mpath, sizeof(mpath));
		fd = open(mpath, O_RDWR);
		CHECK(pwrite(fd, z, fsize - from, (off_t) from) == (ssize_t) (fsize - from));
		close(fd);
		expect_torn_ok("last record's payload zeros", work);
	}
	/* but a flipped byte in the complete last record is corruption... */
	{
		copy_dir(pristine, work);
		manifest_path(work, mpath, sizeof(mpath));
		xor_byte(mpath, offs[nrec - 1] + TIDES_REC_HEADER + lens[nrec - 1] - 1, 0x40);
		expect_corruption("last record's payload flipped", work, "MANIFEST-");
		copy_dir(pristine, work);
		manifest_path(work, mpath, sizeof(mpath));
		xor_byte(mpath, offs[nrec - 1], 0x02);
		expect_corruption("last record's checksum flipped", work, "MANIFEST-");
	}
	/* ...and so is a length that grew past the end of a complete record */
	{
		copy_dir(pristine, work);
		manifest_path(work, mpath, sizeof(mpath));
		xor_byte(mpath, offs[nrec - 1] + 5, 0x01);
		expect_corruption("last record's length flipped", work, "MANIFEST-");
	}

	/* damage inside earlier records: corruption, naming the manifest */
	{
		static const struct
		{
			int			field;	/* offset in the record; -1: payload middle */
			const char *what;
		}			dmg[] = {{-1, "payload"}, {0, "checksum"}, {4, "length"}, {7, "length high byte"}, {8, "position"}, {16, "type"}};

		for (size_t d = 0; d < sizeof(dmg) / sizeof(dmg[0]); d++)
			for (int which = 1; which < nrec - 1; which += (nrec - 2) / 2 + 1)
			{
				char		what[128];
				uint64_t	at = dmg[d].field < 0 ? offs[which] + TIDES_REC_HEADER + lens[which] / 2
					: offs[which] + (uint64_t) dmg[d].field;

				copy_dir(pristine, work);
				manifest_path(work, mpath, sizeof(mpath));
				xor_byte(mpath, at, dmg[d].field == 4 ? 0x01 : 0x10);
				snprintf(what, sizeof(what), "record %d of %d, %s damaged", which, nrec, dmg[d].what);
				expect_corruption(what, work, "MANIFEST-");
			}
	}

	/* the first record (the synced state record) is never a torn append */
	{
		copy_dir(pristine, work);
		manifest_path(work, mpath, sizeof(mpath));
		xor_byte(mpath, offs[0] + TIDES_REC_HEADER + lens[0] / 2, 0x08);
		expect_corruption("first record's payload damaged", work, "MANIFEST-");
	}
	/* a manifest holding only a damaged state record (as after a clean shutdown) */
	{
		copy_dir(pristine, work);
		manifest_path(work, mpath, sizeof(mpath));
		CHECK(truncate(mpath, (off_t) (offs[0] + TIDES_REC_HEADER + lens[0])) == 0);
		xor_byte(mpath, offs[0] + TIDES_REC_HEADER + 2, 0x08);
		expect_corruption("only record damaged", work, "MANIFEST-");
	}

	/* CURRENT */
	{
		char		cur[1300];
		FILE	   *f;

		copy_dir(pristine, work);
		snprintf(cur, sizeof(cur), "%s/CURRENT", work);
		f = fopen(cur, "w");
		fputs("MANIFEST-00000x\n", f);
		fclose(f);
		expect_corruption("CURRENT garbled", work, "CURRENT");

		copy_dir(pristine, work);
		manifest_path(work, mpath, sizeof(mpath));
		CHECK(unlink(mpath) == 0);
		expect_corruption("manifest missing", work, "MANIFEST-");
	}

	if (test_failures == 0)
		test_rmdir(base);
	else
		fprintf(stderr, "test_manifest: files kept in %s\n", base);
	free(base);
	free(pristine);
	return test_finish("test_manifest");
}
