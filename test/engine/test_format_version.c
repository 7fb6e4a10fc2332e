/*
 * test_format_version.c -- the store format a manifest names.
 *
 *   - a new store's manifest starts with the format (TIDES_FORMAT_VERSION);
 *   - a store from before the field (every record re-encoded without it:
 *     what older engines wrote) opens, with every key, and its next
 *     manifest names the format;
 *   - a store of a newer format is refused with TIDES_INVALID and a message
 *     naming the manifest and both formats, and no file is changed (not
 *     even a torn-tail truncation or a new log segment); given back its own
 *     manifest, it opens again.
 */
#include "harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "db/version_edit.h"
#include "log/log_format.h"

#define NKEYS 3000

static store st;

static uint8_t *
read_all(const char *path, size_t *n)
{
	FILE	   *f = fopen(path, "rb");
	uint8_t    *buf;
	long		len;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(len > 0 ? len : 1);
	*n = fread(buf, 1, len, f);
	fclose(f);
	return buf;
}

static void
write_all(const char *path, const uint8_t *buf, size_t n)
{
	FILE	   *f = fopen(path, "wb");

	fwrite(buf, 1, n, f);
	fclose(f);
}

/* the manifest CURRENT names */
static void
manifest_path(char *path, size_t cap)
{
	char		cur[1024],
				name[128];
	size_t		n;
	uint8_t    *c;

	snprintf(cur, sizeof(cur), "%s/CURRENT", st.dir);
	c = read_all(cur, &n);
	CHECK(c != NULL && n > 10 && n < sizeof(name));
	memcpy(name, c, n);
	name[n - 1] = '\0';			/* the newline */
	free(c);
	snprintf(path, cap, "%s/%s", st.dir, name);
}

/*
 * Rewrite every record of a manifest with its format field set to `format`
 * (0: removed), re-framed at its new offset.  Returns the format field of
 * the first record as it was (0: none).
 */
static uint64_t
rewrite_manifest(const char *path, uint64_t format)
{
	size_t		n,
				pos = 0;
	uint8_t    *in = read_all(path, &n);
	tides_buf	out;
	uint64_t	first = 0;

	tides_buf_init(&out);
	while (pos + TIDES_REC_HEADER <= n)
	{
		uint32_t	len;
		tides_rec_type type;
		tides_edit	e;
		tides_error err;
		size_t		at = out.len;

		if (tides_rec_check_header(in + pos, pos, n - pos - TIDES_REC_HEADER, &len, &type) !=
			TIDES_REC_OK)
			break;
		tides_error_clear(&err);
		CHECK_OK(tides_edit_decode(&e, in + pos + TIDES_REC_HEADER, len, &err));
		if (pos == 0)
			first = e.has_format ? e.format : 0;
		else
			CHECK(!e.has_format);	/* only the first record of a manifest names it */
		e.has_format = pos == 0 && format != 0;
		e.format = format;
		/* format 1 knew no suffix bounds (tag 11) */
		for (uint32_t i = 0; format == 0 && i < e.nadded; i++)
			e.added[i].suffix_bound = 0;
		tides_buf_reserve(&out, out.len + TIDES_REC_HEADER);
		out.len += TIDES_REC_HEADER;
		tides_edit_encode(&e, &out);
		tides_rec_seal(out.data + at, (uint32_t) (out.len - at - TIDES_REC_HEADER), at,
					   TIDES_REC_EDIT);
		tides_edit_free(&e);
		pos += TIDES_REC_HEADER + len;
	}
	CHECK(pos == n);
	write_all(path, out.data, out.len);
	tides_buf_free(&out);
	free(in);
	return first;
}

/* names and sizes of the files in the store, as one string */
static char *
listing(void)
{
	DIR		   *d = opendir(st.dir);
	struct dirent *e;
	char	   *out = calloc(1, 1);
	size_t		len = 1;

	while ((e = readdir(d)) != NULL)
	{
		char		path[1024],
					line[1200];
		struct stat sb;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", st.dir, e->d_name);
		if (stat(path, &sb) != 0)
			continue;
		snprintf(line, sizeof(line), "%s:%lld:%lld\n", e->d_name, (long long) sb.st_size,
				 (long long) sb.st_mtime);
		len += strlen(line);
		out = realloc(out, len);
		strcat(out, line);
	}
	closedir(d);
	return out;
}

int
main(int argc, char **argv)
{
	char		path[1200];
	size_t		saved_n;
	uint8_t    *saved;
	char	   *before,
			   *after;
	tides_status s;

	test_init(argc, argv);
	memset(&st, 0, sizeof(st));
	small_store_opts(&st.opts);
	st.dir = fast_tmpdir("format");

	/* a store with tables and log, shut down cleanly */
	CHECK_OK(store_open(&st));
	for (int i = 0; i < NKEYS; i++)
	{
		put_numbered(st.db, i);
		if (i == NKEYS / 3)
		{
			CHECK_OK(tides_seal_memtable(st.db));
			CHECK_OK(drain(st.db));
		}
	}
	CHECK_OK(tides_shutdown(st.db));
	store_crash(&st);

	/* 1. the manifest names the format */
	manifest_path(path, sizeof(path));
	CHECK(rewrite_manifest(path, TIDES_FORMAT_VERSION) == TIDES_FORMAT_VERSION);

	/* 2. an older store: no format field anywhere */
	CHECK(rewrite_manifest(path, 0) == TIDES_FORMAT_VERSION);
	CHECK_OK(store_open(&st));
	CHECK(count_numbered(st.db, NKEYS) == NKEYS);
	CHECK_OK(tides_shutdown(st.db));	/* writes a new manifest */
	store_crash(&st);
	manifest_path(path, sizeof(path));
	CHECK(rewrite_manifest(path, TIDES_FORMAT_VERSION) == TIDES_FORMAT_VERSION);
	saved = read_all(path, &saved_n);

	/* 3. a newer store: refused, naming the manifest and both formats; nothing changed */
	rewrite_manifest(path, TIDES_FORMAT_VERSION + 1);
	before = listing();
	memset(&st.info, 0, sizeof(st.info));
	s = store_open(&st);
	CHECK(s == TIDES_INVALID);
	if (st.db != NULL)
	{
		const char *msg = tides_errmsg(st.db);
		char		want[64],
					upto[64];

		snprintf(want, sizeof(want), "store format %d;", TIDES_FORMAT_VERSION + 1);
		snprintf(upto, sizeof(upto), "formats up to %d", TIDES_FORMAT_VERSION);
		if (strstr(msg, "MANIFEST-") == NULL || strstr(msg, want) == NULL ||
			strstr(msg, upto) == NULL || strstr(msg, "corrupt") != NULL)
		{
			test_failures++;
			fprintf(stderr, "test_format_version: unclear error: \"%s\"\n", msg);
		}
	}
	store_crash(&st);
	after = listing();
	if (strcmp(before, after) != 0)
	{
		test_failures++;
		fprintf(stderr, "test_format_version: files changed.\nbefore:\n%safter:\n%s", before, after);
	}

	/* ...and with its own manifest back, it opens */
	write_all(path, saved, saved_n);
	CHECK_OK(store_open(&st));
	CHECK(count_numbered(st.db, NKEYS) == NKEYS);
	store_crash(&st);

	free(before);
	free(after);
	free(saved);
	test_rmdir(st.dir);
	return test_finish("test_format_version");
}
