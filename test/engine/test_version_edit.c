/*
 * test_version_edit.c -- manifest edits: encode/decode round trips of
 * random edits with every field and list (empty lists included), exact
 * decoding of every prefix (a cut edit must fail with TIDES_CORRUPTION or
 * decode to a consistent prefix, never crash), and random byte flips and
 * random garbage through the decoder.
 */
#include "harness.h"
#include "util/dbformat.h"
#include "db/version_edit.h"
#include "util/buf.h"

static tides_rand rnd;

static void
random_ikey(uint8_t *buf, size_t *len)
{
	size_t		ulen = 1 + tides_rand_uniform(&rnd, tides_rand_uniform(&rnd, 10) == 0 ? 300 : 24);

	for (size_t i = 0; i < ulen; i++)
		buf[i] = (uint8_t) tides_rand_next(&rnd);
	*len = tides_ikey_make(buf, buf, ulen, tides_rand_uniform(&rnd, TIDES_MAX_SEQ),
						   (tides_key_type) tides_rand_uniform(&rnd, 2));
}

static uint64_t
rand_u64(void)
{
	/* small, medium and full-width values: every varint length */
	switch (tides_rand_uniform(&rnd, 4))
	{
		case 0:
			return tides_rand_uniform(&rnd, 128);
		case 1:
			return tides_rand_uniform(&rnd, 1u << 20);
		case 2:
			return tides_rand_next(&rnd) >> tides_rand_uniform(&rnd, 64);
		default:
			return tides_rand_next(&rnd);
	}
}

static void
random_edit(tides_edit *e)
{
	tides_edit_init(e);
	if ((e->has_replay_lsn = tides_rand_uniform(&rnd, 2)))
		e->replay_lsn = rand_u64();
	if ((e->has_next_file = tides_rand_uniform(&rnd, 2)))
		e->next_file = rand_u64();
	if ((e->has_last_seq = tides_rand_uniform(&rnd, 2)))
		e->last_seq = rand_u64();
	if ((e->has_segment_size = tides_rand_uniform(&rnd, 2)))
		e->segment_size = rand_u64();
	for (uint64_t n = tides_rand_uniform(&rnd, 6), i = 0; i < n; i++)
	{
		uint8_t		s[400],
					l[400];
		tides_edit_file f;

		random_ikey(s, &f.smallest_len);
		random_ikey(l, &f.largest_len);
		f.smallest = s;
		f.largest = l;
		f.level = (int) tides_rand_uniform(&rnd, TIDES_MAX_LEVELS);
		f.number = rand_u64();
		f.size = rand_u64();
		f.min_seq = rand_u64();
		f.max_seq = rand_u64();
		f.entries = rand_u64();
		f.deletions = rand_u64();
		CHECK_OK(tides_edit_add_file(e, &f));
	}
	for (uint64_t n = tides_rand_uniform(&rnd, 6), i = 0; i < n; i++)
		CHECK_OK(tides_edit_delete_file(e, (int) tides_rand_uniform(&rnd, TIDES_MAX_LEVELS), rand_u64()));
	if (tides_rand_uniform(&rnd, 2))
	{
		tides_log_skip sk[8];
		uint32_t	n = (uint32_t) tides_rand_uniform(&rnd, 8);

		for (uint32_t i = 0; i < n; i++)
		{
			sk[i].from = rand_u64() >> 1;
			sk[i].to = sk[i].from + tides_rand_uniform(&rnd, 1u << 20);
		}
		CHECK_OK(tides_edit_set_skips(e, sk, n));
	}
	if (tides_rand_uniform(&rnd, 2))
	{
		tides_dropped_prefix d[5];
		uint32_t	n = (uint32_t) tides_rand_uniform(&rnd, 5);

		memset(d, 0, sizeof(d));
		for (uint32_t i = 0; i < n; i++)
		{
			d[i].id = rand_u64();
			d[i].seq = rand_u64();
			d[i].len = (uint32_t) tides_rand_uniform(&rnd, TIDES_MAX_PREFIX_LEN + 1);
			for (uint32_t k = 0; k < d[i].len; k++)
				d[i].bytes[k] = (uint8_t) tides_rand_next(&rnd);
		}
		CHECK_OK(tides_edit_set_dropped(e, d, n));
	}
	if (tides_rand_uniform(&rnd, 2))
	{
		uint64_t	t[20];
		uint32_t	n = (uint32_t) tides_rand_uniform(&rnd, 20);

		for (uint32_t i = 0; i < n; i++)
			t[i] = rand_u64() | 1;	/* tags are never 0 */
		CHECK_OK(tides_edit_set_pending(e, t, n));
	}
}

static bool
edits_equal(const tides_edit *a, const tides_edit *b)
{
#define SAME(f) (a->f == b->f)
	if (!SAME(has_replay_lsn) || !SAME(has_next_file) || !SAME(has_last_seq) ||
		!SAME(has_segment_size) || !SAME(has_skips) || !SAME(has_dropped) || !SAME(has_pending))
		return false;
	if ((a->has_replay_lsn && !SAME(replay_lsn)) || (a->has_next_file && !SAME(next_file)) ||
		(a->has_last_seq && !SAME(last_seq)) || (a->has_segment_size && !SAME(segment_size)))
		return false;
	if (!SAME(nadded) || !SAME(ndeleted) || !SAME(nskips) || !SAME(ndropped) || !SAME(npending))
		return false;
	for (uint32_t i = 0; i < a->nadded; i++)
	{
		const tides_edit_file *x = &a->added[i],
				   *y = &b->added[i];

		if (x->level != y->level || x->number != y->number || x->size != y->size ||
			x->min_seq != y->min_seq || x->max_seq != y->max_seq || x->entries != y->entries ||
			x->deletions != y->deletions || x->smallest_len != y->smallest_len ||
			x->largest_len != y->largest_len ||
			memcmp(x->smallest, y->smallest, x->smallest_len) != 0 ||
			memcmp(x->largest, y->largest, x->largest_len) != 0)
			return false;
	}
	for (uint32_t i = 0; i < a->ndeleted; i++)
		if (a->deleted[i].level != b->deleted[i].level || a->deleted[i].number != b->deleted[i].number)
			return false;
	for (uint32_t i = 0; i < a->nskips; i++)
		if (a->skips[i].from != b->skips[i].from || a->skips[i].to != b->skips[i].to)
			return false;
	for (uint32_t i = 0; i < a->ndropped; i++)
		if (a->dropped[i].id != b->dropped[i].id || a->dropped[i].seq != b->dropped[i].seq ||
			a->dropped[i].len != b->dropped[i].len ||
			memcmp(a->dropped[i].bytes, b->dropped[i].bytes, a->dropped[i].len) != 0)
			return false;
	for (uint32_t i = 0; i < a->npending; i++)
		if (a->pending[i] != b->pending[i])
			return false;
	return true;
#undef SAME
}

int
main(int argc, char **argv)
{
	int			rounds = 3000;
	uint64_t	cut_ok = 0,
				cut_bad = 0,
				flip_bad = 0;

	test_init(argc, argv);
	tides_rand_seed(&rnd, test_seed);

	/* the empty edit */
	{
		tides_edit	e,
					d;
		tides_buf	b;
		tides_error err;

		tides_edit_init(&e);
		tides_buf_init(&b);
		tides_edit_encode(&e, &b);
		CHECK(b.len == 0);
		CHECK_OK(tides_edit_decode(&d, b.data, b.len, &err));
		CHECK(edits_equal(&e, &d));
		tides_edit_free(&d);
		tides_buf_free(&b);
	}

	for (int r = 0; r < rounds; r++)
	{
		tides_edit	e,
					d;
		tides_buf	b;
		tides_error err;

		random_edit(&e);
		tides_buf_init(&b);
		tides_edit_encode(&e, &b);
		CHECK(!b.oom);
		CHECK_OK(tides_edit_decode(&d, b.data, b.len, &err));
		if (!edits_equal(&e, &d))
		{
			fprintf(stderr, "round %d: decoded edit differs from the encoded one\n", r);
			CHECK(false);
		}
		tides_edit_free(&d);

		/* every proper prefix: corruption, or a well-formed shorter edit */
		for (size_t cut = 0; cut < b.len; cut += 1 + tides_rand_uniform(&rnd, 4))
		{
			tides_status s = tides_edit_decode(&d, b.data, cut, &err);

			if (s == TIDES_OK)
			{
				cut_ok++;
				tides_edit_free(&d);
			}
			else
			{
				CHECK(s == TIDES_CORRUPTION);
				CHECK(strstr(err.msg, "malformed") != NULL);
				cut_bad++;
			}
		}
		/* flipped bytes: anything but a crash */
		if (b.len > 0)
			for (int f = 0; f < 8; f++)
			{
				uint8_t    *copy = malloc(b.len);
				size_t		at = tides_rand_uniform(&rnd, b.len);

				memcpy(copy, b.data, b.len);
				copy[at] ^= (uint8_t) (1 + tides_rand_uniform(&rnd, 255));
				if (tides_edit_decode(&d, copy, b.len, &err) == TIDES_OK)
					tides_edit_free(&d);
				else
					flip_bad++;
				free(copy);
			}
		tides_edit_free(&e);
		tides_buf_free(&b);
	}

	/* garbage */
	for (int r = 0; r < 20000; r++)
	{
		uint8_t		g[64];
		size_t		n = tides_rand_uniform(&rnd, sizeof(g));
		tides_edit	d;
		tides_error err;

		for (size_t i = 0; i < n; i++)
			g[i] = (uint8_t) (tides_rand_uniform(&rnd, 3) ? tides_rand_uniform(&rnd, 12) : tides_rand_next(&rnd));
		if (tides_edit_decode(&d, g, n, &err) == TIDES_OK)
			tides_edit_free(&d);
	}
	fprintf(stderr, "test_version_edit: %d round trips; prefixes %llu decoded, %llu rejected; "
			"%llu flipped edits rejected\n", rounds, (unsigned long long) cut_ok,
			(unsigned long long) cut_bad, (unsigned long long) flip_bad);
	return test_finish("test_version_edit");
}
