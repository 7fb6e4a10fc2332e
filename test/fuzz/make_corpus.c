/*
 * make_corpus.c -- seed corpora for the fuzz targets, cut from real files.
 *
 * Builds small stores (one per compression type) with the posix vfs in a
 * scratch directory, with flushes and compactions, deletions and tags, and
 * leaves them by a process crash so that manifests hold several records and
 * logs hold unflushed batches.  Then writes, in the layout each target
 * expects (a control byte first, see the targets' headers):
 *
 *   OUT/sst/       every table, with and without a block cache
 *   OUT/log/       segments, single batch payloads, framed record chains
 *   OUT/manifest/  edit payloads, manifest files, framed chains, CURRENT
 *   OUT/table/     hand-built blocks, payloads, properties, footer, filter,
 *                  tables: one per parser of fuzz_table
 *
 * Usage: make_corpus OUTDIR
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/dbformat.h"
#include "table/block_builder.h"
#include "table/compress.h"
#include "table/filter.h"
#include "table/format.h"
#include "table/sst.h"
#include "tides_engine.h"

static const char *out;
static int	nfiles;

static void
emit(const char *sub, uint8_t ctl, const void *data, size_t n)
{
	char		path[4096];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s/seed-%05d", out, sub, nfiles++);
	f = fopen(path, "wb");
	if (f == NULL)
	{
		perror(path);
		exit(1);
	}
	fputc(ctl, f);
	if (n > 0)
		fwrite(data, 1, n, f);
	fclose(f);
}

static uint8_t *
slurp(const char *path, size_t *n)
{
	FILE	   *f = fopen(path, "rb");
	uint8_t    *buf;
	long		len;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(len > 0 ? (size_t) len : 1);
	*n = fread(buf, 1, (size_t) len, f);
	fclose(f);
	return buf;
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

/* walk the records of a log segment or manifest: payloads, and the chain */
static void
records(const char *sub, const uint8_t *d, size_t n, int single_ctl, int chain_ctl, int chain_ctl2)
{
	size_t		pos = 0;
	uint8_t    *chain = malloc(n + 16);
	size_t		clen = 0;
	int			count = 0;

	while (pos + 20 <= n)
	{
		uint32_t	len = get32(d + pos + 4);
		uint8_t		type = d[pos + 16];

		if (len == 0 && type == 0)
			break;
		if (pos + 20 + len > n)
			break;
		if (type == 2)			/* pad: rest of the segment */
			break;
		if (count < 40)
			emit(sub, (uint8_t) single_ctl, d + pos + 20, len);
		if (len <= 0xffff && clen + 2 + len <= n + 16)
		{
			chain[clen++] = (uint8_t) (len & 0xff);
			chain[clen++] = (uint8_t) (len >> 8);
			memcpy(chain + clen, d + pos + 20, len);
			clen += len;
		}
		pos += 20 + len;
		count++;
	}
	if (clen > 0)
	{
		emit(sub, (uint8_t) chain_ctl, chain, clen);
		if (chain_ctl2 >= 0)
			emit(sub, (uint8_t) chain_ctl2, chain, clen < 8000 ? clen : 8000);
	}
	free(chain);
	(void) pos;
}

static void
put(tides_db *db, const char *k, const char *v, uint64_t tag, int seal)
{
	tides_batch *b = tides_batch_new();

	tides_batch_put(b, k, strlen(k), v, strlen(v));
	if (tag)
		tides_batch_set_tag(b, tag, seal);
	while (tides_write(db, b, NULL) == TIDES_BUSY)
	{
		int			did;
		bool		d;

		tides_flush_work(db, &d);
		did = d;
		tides_compact_work(db, &d);
		(void) did;
	}
	tides_batch_free(b);
}

static void
build_store(const char *dir, tides_compression comp)
{
	tides_options o;
	void	   *region;
	size_t		size;
	tides_db   *db;
	char		k[64],
				v[256];
	bool		did;

	tides_options_default(&o);
	o.memtable_size = 64 << 10;
	o.memtable_count = 2;
	o.block_cache_size = 1 << 20;
	o.meta_size = 2 << 20;
	o.log_segment_size = 128 << 10;
	o.target_file_size = 64 << 10;
	o.level_base_size = 64 << 10;
	o.level0_compaction_trigger = 2;
	o.block_size = 1024;
	o.compression = comp;
	o.prefix_len = comp == TIDES_COMPRESS_ZSTD ? 4 : 0;
	o.range_prefix_len = comp == TIDES_COMPRESS_NONE ? 0 : 3;
	o.sync_mode = TIDES_SYNC_NONE;
	size = tides_region_size(&o);
	region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	tides_region_init(region, size, &o);
	if (tides_open(region, dir, &o, NULL, true, NULL, &db) != TIDES_OK)
	{
		fprintf(stderr, "make_corpus: cannot open a store in %s\n", dir);
		exit(1);
	}
	for (int i = 0; i < 3000; i++)
	{
		snprintf(k, sizeof(k), "key%05d", (i * 7919) % 2000);
		snprintf(v, sizeof(v), "value-%d-%0*d", i, i % 120, 0);
		put(db, k, v, i % 10 == 0 ? (uint64_t) (i / 10 + 1) : 0, i % 20 == 0);
		if (i % 13 == 0)
		{
			tides_batch *b = tides_batch_new();

			tides_batch_delete(b, k, strlen(k));
			tides_write(db, b, NULL);
			tides_batch_free(b);
		}
		if (i == 1500)
			tides_drop_prefix(db, "key01", 5);
	}
	tides_seal_memtable(db);
	while (tides_flush_work(db, &did) == TIDES_OK && did)
		;
	while (tides_compact_work(db, &did) == TIDES_OK && did)
		;
	tides_maint_work(db, &did);
	for (int i = 0; i < 200; i++)
	{
		snprintf(k, sizeof(k), "late%04d", i);
		put(db, k, "in the log only", (uint64_t) (5000 + i / 3), i % 3 == 2);
	}
	tides_close(db);			/* a process crash: no shutdown */
	munmap(region, size);
}

static void
harvest(const char *dir)
{
	DIR		   *d = opendir(dir);
	struct dirent *e;

	while ((e = readdir(d)) != NULL)
	{
		char		path[4600];
		size_t		n;
		uint8_t    *data;
		size_t		len = strlen(e->d_name);

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		data = slurp(path, &n);
		if (data == NULL)
			continue;
		if (len > 4 && strcmp(e->d_name + len - 4, ".sst") == 0)
		{
			emit("sst", 0, data, n);
			emit("sst", 3, data, n);
		}
		else if (len > 4 && strcmp(e->d_name + len - 4, ".log") == 0)
		{
			size_t		used = n;

			while (used > 0 && data[used - 1] == 0)
				used--;
			if (used > 0)
			{
				emit("log", 0, data, used + 64 < n ? used + 64 : n);
				records("log", data, used, 1, 2, 3);
			}
		}
		else if (strncmp(e->d_name, "MANIFEST-", 9) == 0)
		{
			emit("manifest", 1, data, n);
			records("manifest", data, n, 0, 2, -1);
		}
		else if (strcmp(e->d_name, "CURRENT") == 0)
			emit("manifest", 3, data, n);
		free(data);
	}
	closedir(d);
}

/*
 * OUT/table/: one valid input per parser of fuzz_table (the selector byte
 * first), so that mutations start inside each format: blocks (bytewise and
 * internal keys, a view), lz4 and zstd payloads, properties, a footer, a
 * filter, and whole tables, one per compression type.
 */
static void
table_seeds(void)
{
	char		dir[4096];
	tides_block_builder b;
	const uint8_t *blk;
	size_t		len;
	uint8_t		k[64];
	tides_buf	buf;

	snprintf(dir, sizeof(dir), "%s/table", out);
	tides_buf_init(&buf);
	for (int ikey = 0; ikey < 2; ikey++)
	{
		tides_block_builder_init(&b, 3);
		for (int i = 0; i < 12; i++)
		{
			size_t		kl = (size_t) snprintf((char *) k, sizeof(k), "key%03d", i * 7);

			if (ikey)
				kl = tides_ikey_make(k, k, kl, 50 - i, TIDES_KT_VALUE);
			tides_block_builder_add(&b, k, kl, (const uint8_t *) "valuevalue", (size_t) i % 11);
		}
		blk = tides_block_builder_finish(&b, &len);
		emit("table", (uint8_t) ikey, blk, len);
		if (ikey)
		{
			tides_compressor c;

			emit("table", 2, blk, len);
			for (int t = 1; t <= 2; t++)
			{
				tides_compressor_init(&c, (tides_compression) t, 1);
				if (tides_compress(&c, blk, len, &buf) != TIDES_COMPRESS_NONE)
					emit("table", (uint8_t) (2 + t), buf.data, buf.len);
				tides_compressor_free(&c);
			}
		}
		tides_block_builder_free(&b);
	}
	{
		tides_sst_props p = {0};
		tides_props_ext x = {0};
		uint8_t		footer[TIDES_FOOTER_SIZE];
		tides_footer f = {{10, 20}, {30, 40}, TIDES_SST_FORMAT_VERSION};

		p.num_entries = 5;
		p.smallest = (uint8_t *) "aaaaaaaaa";
		p.smallest_len = 9;
		p.largest = (uint8_t *) "zzzzzzzzz";
		p.largest_len = 9;
		tides_buf_reset(&buf);
		tides_props_encode(&buf, &p, &x);
		emit("table", 5, buf.data, buf.len);
		tides_footer_encode(footer, &f);
		emit("table", 6, footer, sizeof(footer));
	}
	{
		tides_filter_builder fb;

		tides_filter_builder_init(&fb, 10, 0, 0);
		for (int i = 0; i < 20; i++)
			tides_filter_builder_add(&fb, (const uint8_t *) &i, sizeof(i));
		tides_buf_reset(&buf);
		tides_filter_builder_finish(&fb, &buf);
		emit("table", 7, buf.data, buf.len);
		tides_filter_builder_free(&fb);
	}
	/* whole tables, one per compression type */
	for (int t = 0; t <= 2; t++)
	{
		char		path[4200];
		tides_table_env env = {0};
		tides_sst_builder *sb;
		tides_sst_props props;
		tides_error err;
		int			fd;
		uint8_t    *file;

		snprintf(path, sizeof(path), "%s/.tmp.sst", dir);
		env.vfs = tides_vfs_posix();
		env.block_size = 128;
		env.restart_interval = 4;
		env.bloom_bits_per_key = 10;
		env.prefix_len = 4;
		env.range_prefix_len = 2;	/* key ranges of runs too (README "Key ranges") */
		env.compression = (tides_compression) t;
		env.compression_level = 1;
		fd = env.vfs->open(env.vfs, path, O_CREAT | O_RDWR | O_TRUNC, 0644);
		sb = tides_sst_builder_new(&env, fd, path);
		for (int i = 0; i < 30; i++)
		{
			char		u[16];
			size_t		ul = (size_t) snprintf(u, sizeof(u), "keyk%04d", i * 3);
			size_t		kl = tides_ikey_make(k, u, ul, 100 + (uint64_t) i, i % 7 ? TIDES_KT_VALUE : TIDES_KT_DELETE);

			tides_sst_builder_add(sb, k, kl, (const uint8_t *) "some value some value", (size_t) i % 20, &err);
		}
		tides_sst_builder_finish(sb, &props, &err);
		tides_sst_builder_free(sb);
		file = malloc(props.file_size);
		if (env.vfs->pread(env.vfs, fd, file, props.file_size, 0) == (int64_t) props.file_size)
			emit("table", 8, file, props.file_size);
		free(file);
		tides_sst_props_free(&props);
		env.vfs->close(env.vfs, fd);
		unlink(path);
	}
	tides_buf_free(&buf);
}

int
main(int argc, char **argv)
{
	static const tides_compression comps[] = {TIDES_COMPRESS_LZ4, TIDES_COMPRESS_ZSTD, TIDES_COMPRESS_NONE};
	char		tmpl[] = "/tmp/tides-corpus-XXXXXX";
	char	   *base;
	char		cmd[4200];

	if (argc != 2)
	{
		fprintf(stderr, "usage: make_corpus OUTDIR\n");
		return 2;
	}
	out = argv[1];
	for (int i = 0; i < 4; i++)
	{
		const char *subs[] = {"sst", "log", "manifest", "table"};
		char		p[4096];

		snprintf(p, sizeof(p), "%s/%s", out, subs[i]);
		mkdir(out, 0755);
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
		{
			perror(p);
			return 1;
		}
	}
	base = mkdtemp(tmpl);
	for (int c = 0; c < 3; c++)
	{
		char		dir[4200];

		snprintf(dir, sizeof(dir), "%s/store%d", base, c);
		build_store(dir, comps[c]);
		harvest(dir);
	}
	/* a few hand-made inputs */
	emit("manifest", 0, "", 0);
	emit("log", 1, "", 0);
	table_seeds();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd) != 0)
		return 1;
	printf("make_corpus: %d seed files in %s\n", nfiles, out);
	return 0;
}
