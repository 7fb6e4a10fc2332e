/*
 * make_seeds.c -- writes a seed corpus for fuzz_table into the directory
 * given as argument: one valid input per parser (the selector byte first),
 * so that mutations start from deep inside each format instead of having to
 * discover it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/dbformat.h"
#include "table/block_builder.h"
#include "table/compress.h"
#include "table/filter.h"
#include "table/format.h"
#include "table/sst.h"

static void
write_seed(const char *dir, const char *name, uint8_t sel, const uint8_t *d, size_t n)
{
	char		path[1024];
	FILE	   *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL)
	{
		perror(path);
		exit(1);
	}
	fwrite(&sel, 1, 1, f);
	fwrite(d, 1, n, f);
	fclose(f);
}

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	tides_block_builder b;
	const uint8_t *blk;
	size_t		len;
	uint8_t		k[64];
	tides_buf	buf;

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
		write_seed(dir, ikey ? "block_ikey" : "block_bytes", (uint8_t) ikey, blk, len);
		if (ikey)
		{
			tides_compressor c;

			write_seed(dir, "view", 2, blk, len);
			for (int t = 1; t <= 2; t++)
			{
				tides_compressor_init(&c, (tides_compression) t, 1);
				if (tides_compress(&c, blk, len, &buf) != TIDES_COMPRESS_NONE)
					write_seed(dir, t == 1 ? "lz4" : "zstd", (uint8_t) (2 + t), buf.data, buf.len);
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
		write_seed(dir, "props", 5, buf.data, buf.len);
		tides_footer_encode(footer, &f);
		write_seed(dir, "footer", 6, footer, sizeof(footer));
	}
	{
		tides_filter_builder fb;

		tides_filter_builder_init(&fb, 10, 0);
		for (int i = 0; i < 20; i++)
			tides_filter_builder_add(&fb, (const uint8_t *) &i, sizeof(i));
		tides_buf_reset(&buf);
		tides_filter_builder_finish(&fb, &buf);
		write_seed(dir, "filter", 7, buf.data, buf.len);
		tides_filter_builder_free(&fb);
	}
	/* whole tables, one per compression type */
	for (int t = 0; t <= 2; t++)
	{
		char		path[1024];
		tides_table_env env = {0};
		tides_sst_builder *sb;
		tides_sst_props props;
		tides_error err;
		int			fd;
		uint8_t    *file;
		char		name[32];

		snprintf(path, sizeof(path), "%s/.tmp.sst", dir);
		env.vfs = tides_vfs_posix();
		env.block_size = 128;
		env.restart_interval = 4;
		env.bloom_bits_per_key = 10;
		env.prefix_len = 4;
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
		{
			snprintf(name, sizeof(name), "table%d", t);
			write_seed(dir, name, 8, file, props.file_size);
		}
		free(file);
		tides_sst_props_free(&props);
		env.vfs->close(env.vfs, fd);
		unlink(path);
	}
	tides_buf_free(&buf);
	return 0;
}
