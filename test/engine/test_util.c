/*
 * test_util.c -- coding, crc32c, hash distribution, shared heap.
 */
#include <string.h>

#include "testlib.h"
#include "util/buf.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/hash.h"
#include "util/random.h"
#include "util/shm_heap.h"

static void
test_varint(void)
{
	uint64_t	vals[] = {0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX, (uint64_t) 1 << 35, UINT64_MAX};
	uint8_t		buf[16];

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
	{
		uint8_t    *end = tides_encode_varint64(buf, vals[i]);
		uint64_t	v = 0;
		const uint8_t *p = tides_decode_varint64(buf, end, &v);

		CHECK(p == end);
		CHECK(v == vals[i]);
		CHECK(end - buf == tides_varint_length(vals[i]));
		/* truncated input is rejected, never over-read */
		CHECK(tides_decode_varint64(buf, end - 1, &v) == NULL);
	}
	memset(buf, 0xff, sizeof(buf));
	{
		uint64_t	v;

		CHECK(tides_decode_varint64(buf, buf + sizeof(buf), &v) == NULL);
	}
}

static void
test_crc(void)
{
	/* the standard CRC-32C check value */
	CHECK(tides_crc32c("123456789", 9) == 0xE3069283u);
	CHECK(tides_crc32c_extend(tides_crc32c("1234", 4), "56789", 5) == 0xE3069283u);
	CHECK(tides_crc_unmask(tides_crc_mask(0x12345678u)) == 0x12345678u);
	CHECK(tides_crc_mask(0x12345678u) != 0x12345678u);
	/* three streams joined (long buffers) against one (pg_comp_crc32c) */
	{
		static uint8_t buf[3 * 8192 * 2 + 3 * 256 * 3 + 64];
		tides_rand	r;

		tides_rand_seed(&r, test_seed);
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t) tides_rand_next(&r);
		for (int round = 0; round < 3000; round++)
		{
			size_t		off = tides_rand_uniform(&r, 64);
			size_t		len = round < 64 ? (size_t) 3 * 256 - 32 + round : /* around the cut-over */
				tides_rand_uniform(&r, sizeof(buf) - off + 1);
			uint32_t	start = (uint32_t) tides_rand_next(&r);

			if (tides_crc32c_raw(start, buf + off, len) != pg_comp_crc32c(start, buf + off, len))
			{
				fprintf(stderr, "crc32c: %zu bytes at offset %zu differ (seed %llu)\n", len, off,
						(unsigned long long) test_seed);
				test_failures++;
				break;
			}
		}
	}
}

static void
test_hash(void)
{
	/* bucket 100k sequential keys into 64 buckets; each should be near 1/64 */
	int			buckets[64] = {0};
	uint8_t		key[14] = {0};

	for (uint64_t i = 0; i < 100000; i++)
	{
		tides_put_be64(key + 6, i);
		buckets[tides_hash64(key, sizeof(key), 0) & 63]++;
	}
	for (int i = 0; i < 64; i++)
		CHECK(buckets[i] > 1400 && buckets[i] < 1750);
	CHECK(tides_hash64("a", 1, 0) != tides_hash64("a", 1, 1));
	CHECK(tides_hash64("ab", 2, 0) != tides_hash64("ba", 2, 0));
}

static void
test_heap(void)
{
	size_t		size = 1 << 20;
	void	   *mem = malloc(size);
	tides_shm_heap h;
	void	   *ptrs[1000];
	tides_rand	r;

	tides_rand_seed(&r, test_seed);
	tides_shm_heap_init(&h, mem, size);
	for (int round = 0; round < 20; round++)
	{
		for (int i = 0; i < 1000; i++)
		{
			size_t		n = 1 + tides_rand_uniform(&r, 600);

			ptrs[i] = tides_shm_alloc(&h, n);
			CHECK(ptrs[i] != NULL);
			if (ptrs[i])
				memset(ptrs[i], i & 0xff, n);
		}
		for (int i = 0; i < 1000; i++)
			tides_shm_free(&h, ptrs[i]);
	}
	CHECK(h.bytes_in_use == 0);
	CHECK(tides_shm_alloc(&h, TIDES_SHM_MAX_ALLOC + 1) == NULL);
	free(mem);
}

static void
test_buf(void)
{
	tides_buf	b;

	tides_buf_init(&b);
	for (int i = 0; i < 10000; i++)
		tides_buf_put_varint(&b, (uint64_t) i);
	CHECK(!b.oom);
	{
		const uint8_t *p = b.data;
		const uint8_t *end = b.data + b.len;

		for (int i = 0; i < 10000; i++)
		{
			uint64_t	v = 0;

			p = tides_decode_varint64(p, end, &v);
			CHECK(p != NULL && v == (uint64_t) i);
			if (p == NULL)
				break;
		}
		CHECK(p == end);
	}
	tides_buf_free(&b);
}

int
main(int argc, char **argv)
{
	test_init(argc, argv);
	test_varint();
	test_crc();
	test_hash();
	test_heap();
	test_buf();
	return test_finish("test_util");
}
