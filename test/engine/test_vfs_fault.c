/*
 * test_vfs_fault.c -- the fault-injecting vfs itself, so that the crash and
 * fault tests rest on a model that is right:
 *
 *   - a crash drops writes, truncations and allocations not fsynced, and
 *     keeps fsynced ones;
 *   - a file created since its directory's last sync disappears; a renamed
 *     file goes back to its old name (and a file the rename replaced comes
 *     back); an unlinked file reappears with its synced contents; synced
 *     directory changes stay;
 *   - an fsync failing with "lost pages" semantics makes the pending writes
 *     never durable, even after a later successful fsync;
 *   - rules fail the Nth matching call, only on matching paths, and torn
 *     writes leave a prefix; a freeze fails every later mutating call;
 *   - descriptors open at a crash are dead (EIO) but can be closed.
 */
#include "harness.h"
#include "vfs_fault.h"

#include <fcntl.h>

static char *dir;
static tides_vfs *v;
static tides_vfs_fault *f;

static void
path_of(char *buf, const char *name)
{
	sprintf(buf, "%s/%s", dir, name);
}

/* the real contents of a file ("" if missing: returns -1) */
static int64_t
real_read(const char *name, char *buf, size_t cap)
{
	char		p[1024];
	int			fd;
	ssize_t		n;

	path_of(p, name);
	fd = open(p, O_RDONLY);
	if (fd < 0)
	{
		buf[0] = 0;
		return -1;
	}
	n = pread(fd, buf, cap - 1, 0);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

static int
vopen(const char *name, int flags)
{
	char		p[1024];

	path_of(p, name);
	return v->open(v, p, flags, 0600);
}

static void
vwrite(int fd, const char *s, uint64_t off)
{
	CHECK(v->pwrite(v, fd, s, strlen(s), off) == (int64_t) strlen(s));
}

static void
expect(const char *name, const char *want)
{
	char		buf[4096];
	int64_t		n = real_read(name, buf, sizeof(buf));

	if (want == NULL ? n >= 0 : (n < 0 || strcmp(buf, want) != 0))
	{
		fprintf(stderr, "file %s: have %s\"%s\", want %s\"%s\"\n", name, n < 0 ? "(missing) " : "", buf,
				want ? "" : "(missing) ", want ? want : "");
		test_failures++;
	}
}

int
main(int argc, char **argv)
{
	int			fd,
				fd2;
	char		p1[1024],
				p2[1024];

	test_init(argc, argv);
	dir = fast_tmpdir("vfsfault");
	f = tides_vfs_fault_new(NULL, test_seed);
	v = tides_vfs_fault_vfs(f);

	/* data: synced survives, unsynced goes */
	fd = vopen("a", O_RDWR | O_CREAT);
	CHECK(fd >= 0);
	vwrite(fd, "hello", 0);
	CHECK(v->fsync(v, fd) == 0);
	CHECK(v->sync_dir(v, dir) == 0);
	vwrite(fd, "HELLO world", 0);
	CHECK(tides_vfs_fault_unsynced_bytes(f) == 11);
	CHECK(tides_vfs_fault_crash(f, 0) == 0);
	expect("a", "hello");
	/* the descriptor died with the machine */
	CHECK(v->pwrite(v, fd, "x", 1, 0) == -EIO);
	CHECK(v->fsync(v, fd) == -EIO);
	CHECK(v->close(v, fd) == 0);

	/* truncation and allocation revert too */
	fd = vopen("a", O_RDWR);
	CHECK(v->truncate(v, fd, 2) == 0);
	expect("a", "he");
	CHECK(tides_vfs_fault_crash(f, 0) == 0);
	expect("a", "hello");
	v->close(v, fd);
	fd = vopen("a", O_RDWR);
	CHECK(v->allocate(v, fd, 0, 4096) == 0);
	CHECK(v->file_size(v, fd) == 4096);
	CHECK(tides_vfs_fault_crash(f, 0) == 0);
	v->close(v, fd);
	fd = vopen("a", O_RDWR);
	CHECK(v->file_size(v, fd) == 5);
	v->close(v, fd);

	/* names: creation without a directory sync disappears, even if fsynced */
	fd = vopen("b", O_RDWR | O_CREAT);
	vwrite(fd, "bee", 0);
	CHECK(v->fsync(v, fd) == 0);
	v->close(v, fd);
	CHECK(tides_vfs_fault_crash(f, 0) == 0);
	expect("b", NULL);
	/* and stays once the directory is synced */
	fd = vopen("b", O_RDWR | O_CREAT);
	vwrite(fd, "bee", 0);
	CHECK(v->fsync(v, fd) == 0);
	CHECK(v->sync_dir(v, dir) == 0);
	v->close(v, fd);
	CHECK(tides_vfs_fault_crash(f, 0) == 0);
	expect("b", "bee");

	/* rename over an existing file, not synced: both come back */
	fd = vopen("c.tmp", O_RDWR | O_CREAT);
	vwrite(fd, "new", 0);
	CHECK(v->fsync(v, fd) == 0);
	v->close(v, fd);
	path_of(p1, "c.tmp");
	path_of(p2, "b");
	CHECK(v->rename(v, p1, p2) == 0);
	expect("b", "new");
	CHECK(tides_vfs_fault_crash(f, 0) == 0);
	expect("b", "bee");
	expect("c.tmp", NULL);		/* its creation was never synced either */
	/* the same, synced: the new one stays */
	fd = vopen("c.tmp", O_RDWR | O_CREAT);
	vwrite(fd, "new", 0);
	CHECK(v->fsync(v, fd) == 0);
	v->close(v, fd);
	CHECK(v->rename(v, p1, p2) == 0);
	CHECK(v->sync_dir(v, dir) == 0);
	CHECK(tides_vfs_fault_crash(f, 0) == 0);
	expect("b", "new");
	expect("c.tmp", NULL);

	/* unlink without a directory sync: back, with its synced contents */
	fd = vopen("b", O_RDWR);
	vwrite(fd, "NEW", 0);		/* not synced */
	v->close(v, fd);
	path_of(p1, "b");
	CHECK(v->unlink(v, p1) == 0);
	expect("b", NULL);
	CHECK(tides_vfs_fault_crash(f, 0) == 0);
	expect("b", "new");
	CHECK(v->unlink(v, p1) == 0);
	CHECK(v->sync_dir(v, dir) == 0);
	CHECK(tides_vfs_fault_crash(f, 0) == 0);
	expect("b", NULL);

	/* an fsync that loses the pages: never durable, even after a good fsync */
	{
		tides_fault_rule r = {.ops = TIDES_FAULT_SYNC, .pattern = "/a", .err = EIO, .count = 1, .sync_loses = true};

		fd = vopen("a", O_RDWR);
		vwrite(fd, "JELLO", 0);
		tides_vfs_fault_add_rule(f, &r);
		CHECK(v->fsync(v, fd) == -EIO);
		tides_vfs_fault_clear_rules(f);
		expect("a", "JELLO");	/* the page cache still shows it */
		vwrite(fd, "!", 5);
		CHECK(v->fsync(v, fd) == 0);
		CHECK(tides_vfs_fault_crash(f, 0) == 0);
		expect("a", "hello!");	/* the lost write is gone, the later one stayed */
		v->close(v, fd);
	}
	/* an fsync that keeps the pages pending: a later fsync makes them durable */
	{
		tides_fault_rule r = {.ops = TIDES_FAULT_SYNC, .err = EIO, .count = 1};

		fd = vopen("a", O_RDWR);
		vwrite(fd, "Y", 0);
		tides_vfs_fault_add_rule(f, &r);
		CHECK(v->fsync(v, fd) == -EIO);
		tides_vfs_fault_clear_rules(f);
		CHECK(v->fsync(v, fd) == 0);
		CHECK(tides_vfs_fault_crash(f, 0) == 0);
		expect("a", "Yello!");
		v->close(v, fd);
	}

	/* rules: the Nth matching call, on matching paths only; torn writes */
	{
		tides_fault_rule r = {.ops = TIDES_FAULT_WRITE, .pattern = ".log", .skip = 2, .count = 1, .err = ENOSPC};

		uint64_t	before = tides_vfs_fault_injected(f);

		fd = vopen("x.log", O_RDWR | O_CREAT);
		fd2 = vopen("a", O_RDWR);
		tides_vfs_fault_add_rule(f, &r);
		CHECK(v->pwrite(v, fd2, "a", 1, 0) == 1);	/* no match */
		CHECK(v->pwrite(v, fd, "1", 1, 0) == 1);
		CHECK(v->pwrite(v, fd, "2", 1, 1) == 1);
		CHECK(v->pwrite(v, fd, "3", 1, 2) == -ENOSPC);
		CHECK(v->pwrite(v, fd, "4", 1, 3) == 1);	/* count exhausted */
		CHECK(tides_vfs_fault_injected(f) == before + 1);
		tides_vfs_fault_clear_rules(f);
		r.skip = 0;
		r.count = 1;
		r.torn = true;
		r.err = EIO;
		tides_vfs_fault_add_rule(f, &r);
		CHECK(v->pwrite(v, fd, "abcdefghijklmnop", 16, 0) == -EIO);
		tides_vfs_fault_clear_rules(f);
		{
			char		buf[64];
			int64_t		n = real_read("x.log", buf, sizeof(buf));

			/* a prefix of the torn write over "12 4" */
			CHECK(n == 4 || n <= 16);
			CHECK(n < 1 || buf[0] == 'a' || buf[0] == '1');
		}
		v->close(v, fd);
		v->close(v, fd2);
	}

	/* freeze: after n mutating calls everything fails and nothing changes */
	fd = vopen("a", O_RDWR);
	tides_vfs_fault_freeze_after(f, 1);
	CHECK(v->pwrite(v, fd, "Z", 1, 0) == 1);
	CHECK(v->pwrite(v, fd, "Q", 1, 1) == -EIO);
	CHECK(v->fsync(v, fd) == -EIO);
	CHECK(vopen("new", O_RDWR | O_CREAT) == -EIO);
	CHECK(tides_vfs_fault_frozen(f));
	expect("new", NULL);
	CHECK(tides_vfs_fault_crash(f, 0) == 0);
	CHECK(!tides_vfs_fault_frozen(f));
	expect("a", "Yello!");
	v->close(v, fd);

	/* a partial crash keeps some pending writes: over many rounds, both outcomes */
	{
		int			kept = 0,
					lost = 0;

		for (int i = 0; i < 60; i++)
		{
			char		buf[64];

			fd = vopen("a", O_RDWR);
			vwrite(fd, "W", 0);
			CHECK(tides_vfs_fault_crash(f, 50) == 0);
			v->close(v, fd);
			real_read("a", buf, sizeof(buf));
			if (buf[0] == 'W')
			{
				kept++;
				/* it is durable now: put the old byte back, durably */
				fd = vopen("a", O_RDWR);
				vwrite(fd, "Y", 0);
				v->fsync(v, fd);
				v->close(v, fd);
			}
			else
				lost++;
		}
		CHECK(kept > 0 && lost > 0);
	}

	tides_vfs_fault_free(f);
	if (test_failures == 0)
		test_rmdir(dir);
	free(dir);
	return test_finish("test_vfs_fault");
}
