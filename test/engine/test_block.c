/*
 * test_block.c -- data/index blocks: round trips with several restart
 * intervals, every kind of positioning, and decoding of corrupt blocks
 * (every truncation, every flipped byte, random garbage) without reading
 * out of bounds (ASan checks that) or looping.
 */
#include <string.h>

#include "testlib.h"
#include "util/dbformat.h"
#include "table/block.h"
#include "table/block_builder.h"
#include "util/random.h"

typedef struct kv
{
	uint8_t		key[64];
	size_t		klen;
	uint8_t		val[64];
	size_t		vlen;
} kv;

static int
kv_cmp_bytes(const void *a, const void *b)
{
	const kv   *x = a,
			   *y = b;

	return tides_ukey_cmp(x->key, x->klen, y->key, y->klen);
}

/* n distinct sorted byte keys with shared prefixes */
static size_t
make_keys(tides_rand *r, kv *kvs, size_t n)
{
	size_t		m = 0;

	for (size_t i = 0; i < n; i++)
	{
		kv		   *e = &kvs[i];

		e->klen = 1 + tides_rand_uniform(r, 20);
		for (size_t j = 0; j < e->klen; j++)
			e->key[j] = (uint8_t) ("abcd"[tides_rand_uniform(r, 4)] + (j > 6 ? tides_rand_uniform(r, 200) : 0));
		e->vlen = tides_rand_uniform(r, 40);
		for (size_t j = 0; j < e->vlen; j++)
			e->val[j] = (uint8_t) tides_rand_next(r);
	}
	qsort(kvs, n, sizeof(kv), kv_cmp_bytes);
	for (size_t i = 0; i < n; i++)
		if (m == 0 || kv_cmp_bytes(&kvs[m - 1], &kvs[i]) != 0)
			kvs[m++] = kvs[i];
	return m;
}

static bool
at(const tides_block_iter *it, const kv *e)
{
	return it->valid && it->klen == e->klen && memcmp(it->key, e->key, e->klen) == 0 &&
		it->vlen == e->vlen && (e->vlen == 0 || memcmp(it->val, e->val, e->vlen) == 0);
}

static void
test_roundtrip(uint32_t interval, size_t n)
{
	tides_rand	r;
	kv		   *kvs = malloc(sizeof(kv) * (n ? n : 1));
	tides_block_builder b;
	tides_block_iter it;
	tides_error err;
	const uint8_t *data;
	size_t		len;

	tides_rand_seed(&r, test_seed + interval * 1000 + n);
	n = make_keys(&r, kvs, n);
	tides_block_builder_init(&b, interval);
	for (size_t i = 0; i < n; i++)
		tides_block_builder_add(&b, kvs[i].key, kvs[i].klen, kvs[i].val, kvs[i].vlen);
	data = tides_block_builder_finish(&b, &len);
	CHECK(!tides_block_builder_oom(&b));

	tides_error_clear(&err);
	tides_block_iter_init(&it, false, &err);
	CHECK(tides_block_iter_reset(&it, data, len, "test", 0));

	/* forward */
	{
		size_t		i = 0;

		for (tides_block_iter_first(&it); it.valid; tides_block_iter_next(&it), i++)
			CHECK(i < n && at(&it, &kvs[i]));
		CHECK(i == n);
	}
	/* backward */
	{
		size_t		i = n;

		for (tides_block_iter_last(&it); it.valid; tides_block_iter_prev(&it))
		{
			CHECK(i > 0 && at(&it, &kvs[i - 1]));
			i--;
		}
		CHECK(i == 0);
	}
	/* seek to every key, and just past it (key + 0x00 sorts right after) */
	for (size_t i = 0; i < n; i++)
	{
		uint8_t		t[80];

		tides_block_iter_seek(&it, kvs[i].key, kvs[i].klen);
		CHECK(at(&it, &kvs[i]));
		memcpy(t, kvs[i].key, kvs[i].klen);
		t[kvs[i].klen] = 0;
		tides_block_iter_seek(&it, t, kvs[i].klen + 1);
		if (i + 1 < n)
			CHECK(at(&it, &kvs[i + 1]));
		else
			CHECK(!it.valid);
		/* a step back from there lands on the key again */
		if (i + 1 < n)
		{
			tides_block_iter_prev(&it);
			CHECK(at(&it, &kvs[i]));
		}
	}
	/* before the first key */
	tides_block_iter_seek(&it, (const uint8_t *) "", 0);
	CHECK(n == 0 ? !it.valid : at(&it, &kvs[0]));
	/* random walk */
	if (n > 0)
	{
		size_t		i = 0;

		tides_block_iter_first(&it);
		for (int step = 0; step < 2000; step++)
		{
			if (tides_rand_uniform(&r, 2) && i + 1 < n)
			{
				tides_block_iter_next(&it);
				i++;
			}
			else if (i > 0)
			{
				tides_block_iter_prev(&it);
				i--;
			}
			CHECK(at(&it, &kvs[i]));
		}
	}
	CHECK(err.code == TIDES_OK);
	tides_block_iter_free(&it);
	tides_block_builder_free(&b);
	free(kvs);
}

/* exercise every entry point on a block; only memory safety and termination matter */
static void
poke(const uint8_t *data, size_t len, bool ikey)
{
	tides_block_iter it;
	tides_error err;
	uint8_t		target[16] = "bbbb\0\0\0\0\1\0\0\0\0\0\0";
	int			steps;

	tides_error_clear(&err);
	tides_block_iter_init(&it, ikey, &err);
	if (tides_block_iter_reset(&it, data, len, "fuzz", 7))
	{
		for (steps = 0, tides_block_iter_first(&it); it.valid && steps < 100000; steps++)
			tides_block_iter_next(&it);
		CHECK(steps < 100000);
		for (steps = 0, tides_block_iter_last(&it); it.valid && steps < 100000; steps++)
			tides_block_iter_prev(&it);
		CHECK(steps < 100000);
		tides_block_iter_seek(&it, target, ikey ? 12 : 4);
		if (it.valid)
		{
			tides_block_iter_prev(&it);
			tides_block_iter_next(&it);
		}
	}
	if (err.code != TIDES_OK)
		CHECK(err.code == TIDES_CORRUPTION || err.code == TIDES_NO_MEMORY);
	if (err.code == TIDES_CORRUPTION)
		CHECK(strstr(err.msg, "offset 7 of fuzz") != NULL);
	tides_block_iter_free(&it);
}

static void
test_corrupt(void)
{
	tides_rand	r;
	tides_block_builder b;
	const uint8_t *data;
	size_t		len;
	uint8_t    *copy;
	bool		ikey_mode[2] = {false, true};

	tides_rand_seed(&r, test_seed + 7);
	for (int mode = 0; mode < 2; mode++)
	{
		tides_block_builder_init(&b, 3);
		for (int i = 0; i < 40; i++)
		{
			uint8_t		k[24];
			size_t		kl;

			kl = (size_t) snprintf((char *) k, sizeof(k), "key%04d", i * 3);
			if (ikey_mode[mode])
				kl = tides_ikey_make(k, k, kl, 100 - i, TIDES_KT_VALUE);
			tides_block_builder_add(&b, k, kl, (const uint8_t *) "value", (size_t) (i % 6));
		}
		data = tides_block_builder_finish(&b, &len);
		copy = malloc(len);
		/* every truncation (as its own allocation so ASan sees overreads) */
		for (size_t l = 0; l <= len; l++)
		{
			uint8_t    *t = malloc(l ? l : 1);

			memcpy(t, data, l);
			poke(t, l, ikey_mode[mode]);
			/* keep the restart trailer but drop entries: offsets dangle */
			free(t);
		}
		/* every byte flipped, several ways */
		for (size_t pos = 0; pos < len; pos++)
		{
			static const uint8_t xors[] = {0x01, 0x80, 0xff, 0x55};

			for (size_t x = 0; x < sizeof(xors); x++)
			{
				memcpy(copy, data, len);
				copy[pos] ^= xors[x];
				poke(copy, len, ikey_mode[mode]);
			}
		}
		free(copy);
		tides_block_builder_free(&b);
	}
	/* random garbage with a plausible trailer */
	for (int i = 0; i < 3000; i++)
	{
		size_t		l = tides_rand_uniform(&r, 200);
		uint8_t    *t = malloc(l ? l : 1);

		for (size_t j = 0; j < l; j++)
			t[j] = (uint8_t) (tides_rand_uniform(&r, 4) ? tides_rand_uniform(&r, 8) : tides_rand_next(&r));
		if (l >= 8 && tides_rand_uniform(&r, 2))
			tides_put32(t + l - 4, (uint32_t) tides_rand_uniform(&r, 4) + 1);
		poke(t, l, i & 1);
		free(t);
	}
}

/* a view of a contiguous block cut into pieces of 1 << shift bytes */
typedef struct pieced
{
	const uint8_t *pieces[4096];
	tides_block_view v;
} pieced;

static void
make_view(pieced *pc, const uint8_t *data, size_t len, uint32_t shift)
{
	size_t		n = (len + ((size_t) 1 << shift) - 1) >> shift;

	for (size_t i = 0; i < n && i < 4096; i++)
		pc->pieces[i] = data + (i << shift);
	pc->v.pieces = pc->pieces;
	pc->v.npieces = (uint32_t) n;
	pc->v.piece_shift = shift;
	pc->v.len = len;
}

/* the in-place seek agrees with the iterator for every key and gap */
static void
test_view_seek(uint32_t interval, size_t n)
{
	tides_rand	r;
	kv		   *kvs = malloc(sizeof(kv) * (n ? n : 1));
	tides_block_builder b;
	tides_buf	key,
				val;
	const uint8_t *data;
	size_t		len;
	static pieced pc;

	tides_rand_seed(&r, test_seed + interval * 77 + n);
	n = make_keys(&r, kvs, n);
	tides_block_builder_init(&b, interval);
	for (size_t i = 0; i < n; i++)
		tides_block_builder_add(&b, kvs[i].key, kvs[i].klen, kvs[i].val, kvs[i].vlen);
	data = tides_block_builder_finish(&b, &len);
	tides_buf_init(&key);
	tides_buf_init(&val);
	for (uint32_t shift = 3; shift <= 10; shift += 7)
	{
		make_view(&pc, data, len, shift);
		for (size_t i = 0; i <= n; i++)
		{
			uint8_t		t[80];
			tides_view_result res;

			if (i < n)
			{
				res = tides_block_view_seek(&pc.v, false, kvs[i].key, kvs[i].klen, &key, &val);
				CHECK(res == TIDES_VIEW_FOUND && key.len == kvs[i].klen &&
					  memcmp(key.data, kvs[i].key, key.len) == 0 && val.len == kvs[i].vlen &&
					  (val.len == 0 || memcmp(val.data, kvs[i].val, val.len) == 0));
				memcpy(t, kvs[i].key, kvs[i].klen);
				t[kvs[i].klen] = 0;
				res = tides_block_view_seek(&pc.v, false, t, kvs[i].klen + 1, &key, &val);
				if (i + 1 < n)
					CHECK(res == TIDES_VIEW_FOUND && key.len == kvs[i + 1].klen &&
						  memcmp(key.data, kvs[i + 1].key, key.len) == 0);
				else
					CHECK(res == TIDES_VIEW_END);
			}
		}
		/* corrupt copies: any answer, but no out-of-bounds read */
		for (size_t pos = 0; pos < len && len < 3000; pos++)
		{
			uint8_t    *copy = malloc(len);

			memcpy(copy, data, len);
			copy[pos] ^= (uint8_t) (1u << (pos % 8));
			make_view(&pc, copy, len, shift);
			(void) tides_block_view_seek(&pc.v, false, (const uint8_t *) "bbb", 3, &key, &val);
			free(copy);
		}
	}
	tides_buf_free(&key);
	tides_buf_free(&val);
	tides_block_builder_free(&b);
	free(kvs);
}

static void
test_empty(void)
{
	tides_block_builder b;
	tides_block_iter it;
	tides_error err;
	const uint8_t *data;
	size_t		len;

	tides_block_builder_init(&b, 16);
	data = tides_block_builder_finish(&b, &len);
	CHECK(len == 8);
	tides_error_clear(&err);
	tides_block_iter_init(&it, true, &err);
	CHECK(tides_block_iter_reset(&it, data, len, "e", 0));
	tides_block_iter_first(&it);
	CHECK(!it.valid);
	tides_block_iter_last(&it);
	CHECK(!it.valid);
	tides_block_iter_seek(&it, (const uint8_t *) "abcdefghij", 10);
	CHECK(!it.valid);
	CHECK(err.code == TIDES_OK);
	tides_block_iter_free(&it);
	tides_block_builder_free(&b);
}

int
main(int argc, char **argv)
{
	uint32_t	intervals[] = {1, 2, 3, 16, 1000};
	size_t		sizes[] = {0, 1, 2, 17, 500};

	test_init(argc, argv);
	for (size_t i = 0; i < sizeof(intervals) / sizeof(intervals[0]); i++)
		for (size_t j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++)
			test_roundtrip(intervals[i], sizes[j]);
	test_empty();
	test_corrupt();
	test_view_seek(1, 300);
	test_view_seek(16, 500);
	test_view_seek(4, 1);
	test_view_seek(4, 0);
	test_view_seek(3, 60);
	return test_finish("test_block");
}
