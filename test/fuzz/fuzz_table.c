/*
 * fuzz_table.c -- libFuzzer target for every SSTable parser.
 *
 * The first input byte picks the parser, the rest is its input:
 *   0/1  block iterator (bytewise / internal keys): first, next, last, prev, seek
 *   2    in-place block seek over a view cut into 16-byte pieces
 *   3/4  lz4 / zstd block decompression
 *   5    properties block
 *   6    footer
 *   7    bloom filter probes (copy and view)
 *   8    a whole table file through an in-memory vfs: open, iterate both
 *        ways, seek, get, verify (checksums gate most mutations, so this
 *        mostly exercises the footer, handles and the checksum gate)
 * Build and run: make fuzz-build fuzz-corpus, then
 *   build/fuzz/fuzz_table -max_total_time=60 build/fuzz/work/table build/fuzz/seeds/table
 * (make fuzz-smoke and make fuzz run it with the other targets).
 * Without libFuzzer (-DFUZZ_MAIN) it replays the files named on the command line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/dbformat.h"
#include "table/block.h"
#include "table/compress.h"
#include "table/filter.h"
#include "table/format.h"
#include "table/sst.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_block(const uint8_t *d, size_t n, bool ikey)
{
	tides_block_iter it;
	tides_error err;
	uint8_t		target[12] = "keyk\1\0\0\0\0\0\0\0";
	int			steps;

	tides_error_clear(&err);
	tides_block_iter_init(&it, ikey, &err);
	if (tides_block_iter_reset(&it, d, n, "fuzz", 0))
	{
		for (steps = 0, tides_block_iter_first(&it); it.valid && steps < 1000000; steps++)
			tides_block_iter_next(&it);
		for (steps = 0, tides_block_iter_last(&it); it.valid && steps < 1000000; steps++)
			tides_block_iter_prev(&it);
		tides_block_iter_seek(&it, target, ikey ? 12 : 4);
		if (it.valid)
			tides_block_iter_prev(&it);
	}
	tides_block_iter_free(&it);
}

static void
fuzz_view(const uint8_t *d, size_t n)
{
	const uint8_t *pieces[4096];
	tides_block_view v;
	tides_buf	k,
				val;
	size_t		np = (n + 15) / 16;

	if (np > 4096)
		return;
	for (size_t i = 0; i < np; i++)
		pieces[i] = d + i * 16;
	v.pieces = pieces;
	v.npieces = (uint32_t) np;
	v.piece_shift = 4;
	v.len = n;
	tides_buf_init(&k);
	tides_buf_init(&val);
	(void) tides_block_view_seek(&v, true, (const uint8_t *) "keyk\1\0\0\0\0\0\0\0", 12, &k, &val);
	(void) tides_block_view_seek(&v, false, (const uint8_t *) "k", 1, &k, &val);
	(void) tides_filter_may_match_view(&v, 0x123456789abcdefull);
	tides_buf_free(&k);
	tides_buf_free(&val);
}

/* ---- an in-memory, read-only vfs over the fuzz input */

static const uint8_t *mem_data;
static size_t mem_size;

static int64_t
mem_pread(tides_vfs *v, int fd, void *buf, size_t n, uint64_t off)
{
	(void) v;
	(void) fd;
	if (off >= mem_size)
		return 0;
	if (n > mem_size - off)
		n = mem_size - off;
	memcpy(buf, mem_data + off, n);
	return (int64_t) n;
}

static int
mem_close(tides_vfs *v, int fd)
{
	(void) v;
	(void) fd;
	return 0;
}

static int64_t
mem_file_size(tides_vfs *v, int fd)
{
	(void) v;
	(void) fd;
	return (int64_t) mem_size;
}

static void
found_cb(void *arg, const uint8_t *k, size_t kl, const uint8_t *v, size_t vl)
{
	volatile uint8_t sink = 0;

	(void) arg;
	if (kl)
		sink ^= k[kl - 1];
	if (vl)
		sink ^= v[vl - 1];
	(void) sink;
}

static void
fuzz_file(const uint8_t *d, size_t n)
{
	static tides_vfs vfs;
	tides_table_env env = {0};
	tides_sst  *t;
	tides_error err;
	tides_iiter *it;
	uint8_t		key[24];
	int			steps;

	vfs.pread = mem_pread;
	vfs.close = mem_close;
	vfs.file_size = mem_file_size;
	mem_data = d;
	mem_size = n;
	env.vfs = &vfs;
	if (tides_sst_open(&env, 0, 1, 0, "fuzz.sst", &t, &err) != TIDES_OK)
		return;
	it = tides_sst_iter_new(t, false);
	for (steps = 0, tides_iiter_first(it); tides_iiter_valid(it) && steps < 100000; steps++)
		tides_iiter_next(it);
	for (steps = 0, tides_iiter_last(it); tides_iiter_valid(it) && steps < 100000; steps++)
		tides_iiter_prev(it);
	tides_ikey_make(key, "keykeykeykey", 12, 100, TIDES_KT_SEEK);
	tides_iiter_seek(it, key, 20);
	tides_iiter_destroy(it);
	(void) tides_sst_get(t, key, 20, found_cb, NULL, &err);
	(void) tides_sst_may_contain_prefix(t, key, 8);
	(void) tides_sst_approximate_offset(t, key, 20);
	(void) tides_sst_verify(t, &err);
	tides_sst_close(t);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tides_error err;
	tides_buf	out;

	if (size < 1)
		return 0;
	tides_buf_init(&out);
	switch (data[0] % 9)
	{
		case 0:
		case 1:
			fuzz_block(data + 1, size - 1, data[0] % 9 == 1);
			break;
		case 2:
			fuzz_view(data + 1, size - 1);
			break;
		case 3:
		case 4:
			(void) tides_decompress(data[0] % 9 == 3 ? TIDES_COMPRESS_LZ4 : TIDES_COMPRESS_ZSTD,
									data + 1, size - 1, &out, "fuzz", 0, &err);
			break;
		case 5:
			{
				tides_sst_props p;
				tides_props_ext x;

				if (tides_props_decode(data + 1, size - 1, &p, &x, "fuzz", &err) == TIDES_OK)
					tides_sst_props_free(&p);
				break;
			}
		case 6:
			if (size - 1 >= TIDES_FOOTER_SIZE)
			{
				tides_footer f;

				(void) tides_footer_decode(data + 1, &f, "fuzz", &err);
			}
			break;
		case 7:
			for (uint64_t h = 0; h < 64; h++)
				(void) tides_filter_may_match_hash(data + 1, size - 1, h * 0x9E3779B97F4A7C15ull);
			break;
		case 8:
			fuzz_file(data + 1, size - 1);
			break;
	}
	tides_buf_free(&out);
	return 0;
}

#ifdef FUZZ_MAIN
int
main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
	{
		FILE	   *f = fopen(argv[i], "rb");
		uint8_t    *buf;
		long		n;

		if (f == NULL)
			continue;
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		fseek(f, 0, SEEK_SET);
		buf = malloc(n > 0 ? (size_t) n : 1);
		if (fread(buf, 1, (size_t) n, f) == (size_t) n)
			LLVMFuzzerTestOneInput(buf, (size_t) n);
		free(buf);
		fclose(f);
	}
	return 0;
}
#endif
