/*
 * zbench.c -- zstd (and lz4) on 4 KiB blocks the way an SSTable builder
 * compresses them: every block its own frame, one context reused.
 *
 *     gcc -O2 zbench.c -o zbench -lzstd -llz4
 *     ./zbench FILE BLOCK_BYTES LEVEL
 *
 * compressCCtx: ZSTD_compressCCtx(level) per block (tidesam before);
 * usingCDict: ZSTD_compress_usingCDict with a dictionary of no content made
 * once at the level (tidesam after); compress2: the level set once as a
 * parameter of the context.  Prints the ratio and MB/s of input over three
 * passes of FILE.  The inputs are made by gen_samples.py.
 */
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <zstd.h>

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

int
main(int argc, char **argv)
{
	static const char *names[] = {"compressCCtx", "lz4", "usingCDict", "compress2"};
	static char out[1 << 17];
	FILE	   *f;
	long		n;
	char	   *b;
	size_t		bs;
	int			level;
	ZSTD_CCtx  *c = ZSTD_createCCtx();

	if (argc != 4 || (f = fopen(argv[1], "rb")) == NULL)
		return 2;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc(n);
	if (fread(b, 1, n, f) != (size_t) n)
		return 2;
	fclose(f);
	bs = (size_t) atoi(argv[2]);
	level = atoi(argv[3]);
	if (bs == 0 || bs > sizeof(out) / 2)
		return 2;
	for (int mode = 0; mode < 4; mode++)
	{
		ZSTD_CDict *cd = mode == 2 ? ZSTD_createCDict(NULL, 0, level) : NULL;
		size_t		in = 0,
					tot = 0;
		double		t0;

		if (mode == 3)
		{
			ZSTD_CCtx_reset(c, ZSTD_reset_session_and_parameters);
			ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
		}
		t0 = now();
		for (int pass = 0; pass < 3; pass++)
			for (long o = 0; o + (long) bs <= n; o += bs)
			{
				size_t		r;

				if (mode == 0)
					r = ZSTD_compressCCtx(c, out, sizeof(out), b + o, bs, level);
				else if (mode == 1)
					r = (size_t) LZ4_compress_default(b + o, out, (int) bs, (int) sizeof(out));
				else if (mode == 2)
					r = ZSTD_compress_usingCDict(c, out, sizeof(out), b + o, bs, cd);
				else
					r = ZSTD_compress2(c, out, sizeof(out), b + o, bs);
				if (ZSTD_isError(r) || r == 0)
					return 1;
				tot += r;
				in += bs;
			}
		printf("%-12s level %d: ratio %.3f, %.1f MB/s\n", names[mode], level, (double) in / tot,
			   in / (now() - t0) / 1e6);
		ZSTD_freeCDict(cd);
	}
	return 0;
}
