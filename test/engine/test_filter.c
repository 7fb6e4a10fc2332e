/*
 * test_filter.c -- bloom filters: no false negatives, a false-positive rate
 * near theory, the prefix filter, and robustness to odd filter bytes.
 */
#include <math.h>
#include <string.h>

#include "testlib.h"
#include "table/filter.h"
#include "util/coding.h"
#include "util/random.h"

static void
key_of(uint8_t *k, uint64_t i)
{
	tides_put_be64(k, 42);		/* a tree id */
	tides_put_be64(k + 8, i);
}

static void
test_fp_rate(uint32_t bits, size_t n)
{
	tides_filter_builder fb;
	tides_buf	out;
	uint8_t		k[16];
	size_t		fp = 0,
				probes = 100000;
	double		rate,
				theory;
	int			kp = tides_filter_num_probes(bits);

	tides_filter_builder_init(&fb, bits, 0);
	tides_buf_init(&out);
	for (size_t i = 0; i < n; i++)
	{
		key_of(k, i * 2);
		tides_filter_builder_add(&fb, k, 16);
		tides_filter_builder_add(&fb, k, 16);	/* duplicates count once */
	}
	CHECK(tides_filter_builder_count(&fb) == n);
	tides_filter_builder_finish(&fb, &out);
	CHECK(tides_filter_builder_count(&fb) == 0);
	for (size_t i = 0; i < n; i++)
	{
		key_of(k, i * 2);
		CHECK(tides_filter_may_match(out.data, out.len, k, 16));
	}
	for (size_t i = 0; i < probes; i++)
	{
		key_of(k, i * 2 + 1);
		fp += tides_filter_may_match(out.data, out.len, k, 16);
	}
	rate = (double) fp / probes;
	theory = pow(1 - exp(-(double) kp / bits), kp);
	printf("bits %u keys %zu: fp rate %.4f (theory %.4f)\n", bits, n, rate, theory);
	if (n >= 10000)
		CHECK(rate < theory * 1.5 + 0.001 && rate > theory * 0.5);
	tides_filter_builder_free(&fb);
	tides_buf_free(&out);
}

static void
test_prefix(void)
{
	tides_filter_builder fb;
	tides_buf	out;
	uint8_t		k[24];
	size_t		fp = 0;

	/* keys: 8-byte tree, 8-byte vid; prefix filter on the tree */
	tides_filter_builder_init(&fb, 10, 8);
	tides_buf_init(&out);
	for (uint64_t tree = 0; tree < 1000; tree += 2)
		for (uint64_t v = 0; v < 5; v++)
		{
			tides_put_be64(k, tree);
			tides_put_be64(k + 8, v);
			tides_filter_builder_add(&fb, k, 16);
		}
	/* a key shorter than the prefix: only the whole key goes in */
	tides_filter_builder_add(&fb, (const uint8_t *) "zz", 2);
	CHECK(tides_filter_builder_count(&fb) == 500 * 5 + 500 + 1);
	tides_filter_builder_finish(&fb, &out);
	for (uint64_t tree = 0; tree < 1000; tree++)
	{
		tides_put_be64(k, tree);
		if (tree % 2 == 0)
			CHECK(tides_filter_may_match(out.data, out.len, k, 8));
		else
			fp += tides_filter_may_match(out.data, out.len, k, 8);
	}
	CHECK(fp < 30);
	CHECK(tides_filter_may_match(out.data, out.len, (const uint8_t *) "zz", 2));
	tides_filter_builder_free(&fb);
	tides_buf_free(&out);
}

static void
test_odd(void)
{
	uint8_t		f[9] = {0};
	tides_filter_builder fb;
	tides_buf	out;

	/* empty, too short, or unknown k: always "may match" */
	CHECK(tides_filter_may_match(f, 0, (const uint8_t *) "a", 1));
	CHECK(tides_filter_may_match(f, 1, (const uint8_t *) "a", 1));
	f[8] = 31;
	CHECK(tides_filter_may_match(f, 9, (const uint8_t *) "a", 1));
	f[8] = 0;
	CHECK(tides_filter_may_match(f, 9, (const uint8_t *) "a", 1));
	f[8] = 3;
	CHECK(!tides_filter_may_match(f, 9, (const uint8_t *) "a", 1));
	CHECK(tides_filter_num_probes(10) == 7);
	CHECK(tides_filter_num_probes(1) == 1);
	CHECK(tides_filter_num_probes(100) == 30);
	/* a filter of nothing rejects everything */
	tides_filter_builder_init(&fb, 10, 0);
	tides_buf_init(&out);
	tides_filter_builder_finish(&fb, &out);
	CHECK(out.len == 9);
	CHECK(!tides_filter_may_match(out.data, out.len, (const uint8_t *) "a", 1));
	tides_filter_builder_free(&fb);
	tides_buf_free(&out);
}

int
main(int argc, char **argv)
{
	test_init(argc, argv);
	test_fp_rate(10, 100000);
	test_fp_rate(10, 10000);
	test_fp_rate(6, 50000);
	test_fp_rate(16, 50000);
	test_fp_rate(10, 3);
	test_prefix();
	test_odd();
	return test_finish("test_filter");
}
