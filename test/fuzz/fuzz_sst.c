/*
 * fuzz_sst.c -- the SSTable reader on arbitrary bytes.
 *
 * Input: one control byte, then the file.  The file is opened with
 * tides_sst_open (with or without a block cache, per the control byte),
 * then iterated forward and backward, sought to keys taken from the input,
 * probed with tides_sst_get and the prefix filter, and verified.  Any
 * outcome is fine except a crash, a sanitizer report, or an entry whose key
 * is not a well-formed internal key.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/block_cache.h"
#include "util/dbformat.h"
#include "memvfs.h"
#include "table/sst.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static memvfs mfs;
static void *cache_mem;
static tides_block_cache *cache;

static void
found(void *arg, const uint8_t *ikey, size_t iklen, const uint8_t *val, size_t vlen)
{
	volatile uint8_t sink = 0;

	(void) arg;
	if (iklen > 0)
		sink ^= ikey[0] ^ ikey[iklen - 1];
	if (vlen > 0)
		sink ^= val[0] ^ val[vlen - 1];
	(void) sink;
}

static void
touch(tides_iiter *it)
{
	size_t		kl,
				vl;
	const uint8_t *k = tides_iiter_key(it, &kl);
	const uint8_t *v = tides_iiter_value(it, &vl);
	volatile uint8_t sink = 0;

	if (!tides_ikey_valid(k, kl))
		abort();				/* the reader must never yield a malformed key */
	if (kl > 0)
		sink ^= k[kl - 1];
	if (vl > 0)
		sink ^= v[vl - 1];
	(void) sink;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tides_table_env env;
	tides_sst  *t = NULL;
	tides_error err;
	uint8_t		ctl;
	int			fd;
	int			n;

	if (size < 1)
		return 0;
	ctl = data[0];
	data++;
	size--;
	if (cache_mem == NULL)
	{
		size_t		cs = tides_block_cache_shmem_size(1 << 20);

		cache_mem = aligned_alloc(64, (cs + 63) & ~(size_t) 63);
	}
	/* a fresh cache each time: stale blocks from another input would mislead */
	cache = (ctl & 1) ? tides_block_cache_init(cache_mem, 1 << 20) : NULL;
	memvfs_reset(&mfs);
	memvfs_put(&mfs, "/f/000001.sst", data, size);

	memset(&env, 0, sizeof(env));
	env.vfs = &mfs.vfs;
	env.cache = cache;
	env.block_size = 4096;
	env.restart_interval = 16;
	env.bloom_bits_per_key = 10;
	tides_error_clear(&err);
	fd = mfs.vfs.open(&mfs.vfs, "/f/000001.sst", O_RDONLY, 0);
	if (tides_sst_open(&env, fd, 1, size, "000001.sst", &t, &err) != TIDES_OK)
		return 0;

	{
		tides_iiter *it = tides_sst_iter_new(t, (ctl & 2) != 0);

		n = 0;
		for (tides_iiter_first(it); tides_iiter_valid(it) && n < 100000; tides_iiter_next(it), n++)
			touch(it);
		n = 0;
		for (tides_iiter_last(it); tides_iiter_valid(it) && n < 2000; tides_iiter_prev(it), n++)
			touch(it);
		/* seeks to keys cut out of the input itself */
		for (size_t off = 0; off + 9 < size && off < 4096; off += 1 + size / 16)
		{
			size_t		kl = 9 + (data[off] % 24);
			uint8_t		key[40];

			if (off + kl > size)
				break;
			memcpy(key, data + off, kl);
			key[kl - 8] &= 1;	/* a known type in the trailer */
			tides_iiter_seek(it, key, kl);
			for (int s = 0; s < 3 && tides_iiter_valid(it); s++)
			{
				touch(it);
				if (s == 1)
					tides_iiter_prev(it);
				else
					tides_iiter_next(it);
			}
			tides_sst_get(t, key, kl, found, NULL, &err);
			tides_sst_approximate_offset(t, key, kl);
			tides_sst_may_contain_prefix(t, key, kl - 8 < 8 ? kl - 8 : 8);
		}
		tides_iiter_destroy(it);
	}
	tides_sst_verify(t, &err);
	tides_sst_close(t);
	return 0;
}
