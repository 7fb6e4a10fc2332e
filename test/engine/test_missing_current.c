/*
 * test_missing_current.c -- a store whose CURRENT is missing or unreadable
 * is not a new store: recovery must fail with an error that names the
 * problem and must not delete (or change) any file.  Once CURRENT is back,
 * everything is there.
 *
 * Cases: CURRENT deleted from a store with tables and log segments; from a
 * store with only log segments; CURRENT replaced by something unreadable (a
 * directory).  And the one case that is a new store after all: a directory
 * holding only what an interrupted creation leaves (MANIFEST-000001,
 * CURRENT.tmp), which never held data.
 */
#include "harness.h"

#include <dirent.h>
#include <sys/stat.h>

#define NKEYS 2000

static store st;

/* names and sizes of the files in dir, as one string */
static char *
listing(const char *dir)
{
	DIR		   *d = opendir(dir);
	struct dirent *e;
	char	  **names = NULL;
	int			n = 0;
	size_t		len = 1;
	char	   *out;

	while ((e = readdir(d)) != NULL)
	{
		char		path[1024];
		struct stat sb;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &sb) != 0)
			continue;
		names = realloc(names, (n + 1) * sizeof(char *));
		if (asprintf(&names[n], "%s:%lld\n", e->d_name, (long long) sb.st_size) < 0)
			abort();
		len += strlen(names[n]);
		n++;
	}
	closedir(d);
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (strcmp(names[i], names[j]) > 0)
			{
				char	   *t = names[i];

				names[i] = names[j];
				names[j] = t;
			}
	out = calloc(1, len);
	for (int i = 0; i < n; i++)
	{
		strcat(out, names[i]);
		free(names[i]);
	}
	free(names);
	return out;
}

/* recovery must fail, name CURRENT and a store file, and change nothing */
static void
expect_refused(const char *what, const char *must_name)
{
	char	   *before = listing(st.dir);
	char	   *after;
	tides_status s;

	memset(&st.info, 0, sizeof(st.info));
	s = store_open(&st);
	if (s == TIDES_OK)
	{
		test_failures++;
		fprintf(stderr, "test_missing_current: %s: recovery succeeded (as a new store: %d of the "
				"keys are visible)\n", what, count_numbered(st.db, NKEYS));
	}
	else
	{
		const char *msg = st.db ? tides_errmsg(st.db) : "";

		CHECK(s == TIDES_CORRUPTION || s == TIDES_IO_ERROR);
		if (strstr(msg, "CURRENT") == NULL || (must_name != NULL && strstr(msg, must_name) == NULL))
		{
			test_failures++;
			fprintf(stderr, "test_missing_current: %s: the error does not name %s: \"%s\"\n", what,
					must_name ? must_name : "CURRENT", msg);
		}
	}
	store_crash(&st);
	after = listing(st.dir);
	if (strcmp(before, after) != 0)
	{
		test_failures++;
		fprintf(stderr, "test_missing_current: %s: files changed.\nbefore:\n%safter:\n%s", what, before,
				after);
	}
	free(before);
	free(after);
}

static void
write_file(const char *dir, const char *name, const char *content)
{
	char		path[1024];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	fputs(content, f);
	fclose(f);
}

static char *
read_current(const char *dir)
{
	char		path[1024],
				buf[128];
	FILE	   *f;
	size_t		n;

	snprintf(path, sizeof(path), "%s/CURRENT", dir);
	f = fopen(path, "r");
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return strdup(buf);
}

int
main(int argc, char **argv)
{
	char	   *root;
	char		dir[900],
				path[1024];
	char	   *current;
	int			quiet = 0;

	test_init(argc, argv);
	root = fast_tmpdir("current");

	/* a store with tables on several levels and entries in the log */
	snprintf(dir, sizeof(dir), "%s/store", root);
	memset(&st, 0, sizeof(st));
	small_store_opts(&st.opts);
	st.dir = dir;
	CHECK_OK(store_open(&st));
	for (int i = 0; i < NKEYS; i++)
	{
		put_numbered(st.db, i);
		if (i == NKEYS / 2 || i == NKEYS - 100)
		{
			CHECK_OK(tides_seal_memtable(st.db));
			CHECK_OK(drain(st.db));
		}
	}
	CHECK_OK(tides_shutdown(st.db));
	store_crash(&st);
	current = read_current(dir);
	snprintf(path, sizeof(path), "%s/CURRENT", dir);

	/* 1. CURRENT deleted: tables and log segments remain */
	unlink(path);
	expect_refused("CURRENT deleted", "MANIFEST-");

	/* 2. CURRENT unreadable */
	mkdir(path, 0700);
	expect_refused("CURRENT unreadable", NULL);
	rmdir(path);

	/* and back: everything is there */
	write_file(dir, "CURRENT", current);
	CHECK_OK(store_open(&st));
	CHECK(count_numbered(st.db, NKEYS) == NKEYS);
	CHECK(tides_verify(st.db, report_problem, &quiet) == 0);
	store_crash(&st);

	/* 3. only log segments (nothing flushed yet) */
	snprintf(dir, sizeof(dir), "%s/logonly", root);
	memset(&st, 0, sizeof(st));
	small_store_opts(&st.opts);
	st.dir = dir;
	CHECK_OK(store_open(&st));
	for (int i = 0; i < 50; i++)
		put_numbered(st.db, i);
	store_crash(&st);
	free(current);
	current = read_current(dir);
	snprintf(path, sizeof(path), "%s/CURRENT", dir);
	unlink(path);
	expect_refused("CURRENT deleted, log only", "MANIFEST-");
	write_file(dir, "CURRENT", current);
	CHECK_OK(store_open(&st));
	CHECK(count_numbered(st.db, 50) == 50);
	store_crash(&st);

	/* 4. an interrupted creation is a new store */
	snprintf(dir, sizeof(dir), "%s/interrupted", root);
	mkdir(dir, 0700);
	write_file(dir, "MANIFEST-000001", "");
	write_file(dir, "CURRENT.tmp", "MANIFEST-0000");
	memset(&st, 0, sizeof(st));
	small_store_opts(&st.opts);
	st.dir = dir;
	CHECK_OK(store_open(&st));
	if (st.db != NULL)
	{
		put_numbered(st.db, 1);
		CHECK(count_numbered(st.db, 2) == 1);
	}
	store_crash(&st);

	free(current);
	if (test_failures == 0)
		test_rmdir(root);
	else
		fprintf(stderr, "test_missing_current: stores kept under %s\n", root);
	free(root);
	return test_finish("test_missing_current");
}
