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

	tides_filter_builder_init(&fb, bits, 0, 0);
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
	tides_filter_builder_init(&fb, 10, 8, 0);
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

/*
 * Stems (the key without its last 6 bytes) beside prefixes: index-like keys
 * tree || a || b || 6-byte row id, with versions of one key in a row, runs
 * of keys sharing a prefix and runs sharing a stem, row-like keys exactly
 * prefix-long, keys no longer than the suffix.  The builder's count is that
 * of the distinct consecutive hashes (what it would add hashing everything),
 * every key, prefix and stem matches, and absent stems mostly do not.
 */
static void
test_stem(void)
{
	tides_filter_builder fb;
	tides_buf	out;
	uint8_t		k[32];
	uint64_t	last_k = 0,
				last_p = 0,
				last_s = 0;
	bool		hk = false,
				hp = false,
				hs = false;
	size_t		want = 0,
				fp = 0;

	tides_filter_builder_init(&fb, 10, 14, 6);
	tides_buf_init(&out);
	for (uint64_t a = 0; a < 300; a++)
		for (uint64_t b = 0; b < 4; b++)
			for (uint64_t rid = 0; rid < 3; rid++)
				for (int version = 0; version < 1 + (int) (rid % 2); version++)
				{
					size_t		len = 8 + 8 + 4 + 6;
					uint64_t	h,
								ph,
								sh;

					tides_put_be64(k, 7);
					tides_put_be64(k + 8, a / 3);	/* shared by three a's: prefix runs */
					test_put_be32(k + 16, (uint32_t) (a * 4 + b));
					test_put_be32(k + 20, (uint32_t) rid);
					k[24] = k[25] = 0;
					tides_filter_builder_add(&fb, k, len);
					/* what hashing everything adds (filter.c's rules) */
					h = tides_filter_hash(k, len);
					if (!hk || h != last_k)
						want++, last_k = h, hk = true;
					ph = tides_filter_hash(k, 14);
					if (!hp || ph != last_p)
						want++, last_p = ph, hp = true;
					sh = tides_filter_hash(k, len - 6);
					if ((!hs || sh != last_s) && !(hp && sh == last_p))
						want++;
					last_s = sh, hs = true;
				}
	/* a row-like key exactly prefix-long, and a key no longer than the suffix */
	memset(k, 9, 14);
	tides_filter_builder_add(&fb, k, 14);
	tides_filter_builder_add(&fb, (const uint8_t *) "short", 5);
	want += 1 + 1 + 1;			/* key 14 (= its prefix), its stem, "short" */
	CHECK(tides_filter_builder_count(&fb) == want);
	tides_filter_builder_finish(&fb, &out);
	for (uint64_t a = 0; a < 600; a++)
		for (uint64_t b = 0; b < 4; b++)
		{
			bool		m;

			tides_put_be64(k, 7);
			tides_put_be64(k + 8, a / 3);
			test_put_be32(k + 16, (uint32_t) (a * 4 + b));
			m = tides_filter_may_match(out.data, out.len, k, 20);
			if (a < 300)
				CHECK(m);
			else
				fp += m;
		}
	CHECK(fp < 60);
	memset(k, 9, 14);
	CHECK(tides_filter_may_match(out.data, out.len, k, 14));
	CHECK(tides_filter_may_match(out.data, out.len, k, 8));
	CHECK(tides_filter_may_match(out.data, out.len, (const uint8_t *) "short", 5));
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
	tides_filter_builder_init(&fb, 10, 0, 0);
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
	test_stem();
	test_odd();
	return test_finish("test_filter");
}
