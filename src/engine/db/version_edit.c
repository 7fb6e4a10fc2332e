/*
 * version_edit.c -- encoding and decoding of manifest edits.  The decoder is
 * fed untrusted bytes (fuzzed by test/fuzz/fuzz_manifest.c): every length is
 * checked before use.
 */
#include "db/version_edit.h"

#include <stdlib.h>
#include <string.h>

#include "util/dbformat.h"

enum
{
	TAG_REPLAY_LSN = 1, TAG_NEXT_FILE, TAG_LAST_SEQ, TAG_SEGMENT_SIZE,
	TAG_ADD_FILE, TAG_DELETE_FILE, TAG_SKIPS, TAG_DROPPED, TAG_PENDING, TAG_FORMAT,
	TAG_FILE_SUFFIX
};

void
tides_edit_init(tides_edit *e)
{
	memset(e, 0, sizeof(*e));
}

void
tides_edit_free(tides_edit *e)
{
	for (uint32_t i = 0; i < e->nadded; i++)
	{
		free(e->added[i].smallest);
		free(e->added[i].largest);
	}
	free(e->added);
	free(e->deleted);
	free(e->skips);
	free(e->dropped);
	free(e->pending);
	tides_edit_init(e);
}

static void *
grow(void *arr, uint32_t n, size_t elem)
{
	/* capacity doubles at powers of two */
	if (n == 0 || (n & (n - 1)) == 0)
		return realloc(arr, (n ? n * 2 : 4) * elem);
	return arr;
}

static uint8_t *
dup_bytes(const uint8_t *p, size_t n)
{
	uint8_t    *d = malloc(n ? n : 1);

	if (d != NULL && n)
		memcpy(d, p, n);
	return d;
}

tides_status
tides_edit_add_file(tides_edit *e, const tides_edit_file *f)
{
	tides_edit_file *arr = grow(e->added, e->nadded, sizeof(*arr));
	tides_edit_file *nf;

	if (arr == NULL)
		return TIDES_NO_MEMORY;
	e->added = arr;
	nf = &arr[e->nadded];
	*nf = *f;
	nf->smallest = dup_bytes(f->smallest, f->smallest_len);
	nf->largest = dup_bytes(f->largest, f->largest_len);
	if (nf->smallest == NULL || nf->largest == NULL)
	{
		free(nf->smallest);
		free(nf->largest);
		return TIDES_NO_MEMORY;
	}
	e->nadded++;
	return TIDES_OK;
}

tides_status
tides_edit_delete_file(tides_edit *e, int level, uint64_t number)
{
	void	   *arr = grow(e->deleted, e->ndeleted, sizeof(*e->deleted));

	if (arr == NULL)
		return TIDES_NO_MEMORY;
	e->deleted = arr;
	e->deleted[e->ndeleted].level = level;
	e->deleted[e->ndeleted].number = number;
	e->ndeleted++;
	return TIDES_OK;
}

#define SET_LIST(field, nfield, flag, src, n) \
	do { \
		void *copy_ = NULL; \
		if ((n) > 0) { \
			copy_ = malloc((size_t) (n) * sizeof(*(src))); \
			if (copy_ == NULL) \
				return TIDES_NO_MEMORY; \
			memcpy(copy_, (src), (size_t) (n) * sizeof(*(src))); \
		} \
		free(e->field); \
		e->field = copy_; \
		e->nfield = (n); \
		e->flag = true; \
	} while (0)

tides_status
tides_edit_set_skips(tides_edit *e, const tides_log_skip *s, uint32_t n)
{
	SET_LIST(skips, nskips, has_skips, s, n);
	return TIDES_OK;
}

tides_status
tides_edit_set_dropped(tides_edit *e, const tides_dropped_prefix *d, uint32_t n)
{
	SET_LIST(dropped, ndropped, has_dropped, d, n);
	return TIDES_OK;
}

tides_status
tides_edit_set_pending(tides_edit *e, const uint64_t *tags, uint32_t n)
{
	SET_LIST(pending, npending, has_pending, tags, n);
	return TIDES_OK;
}

static void
put_tagged(tides_buf *out, int tag, uint64_t v)
{
	tides_buf_put_varint(out, (uint64_t) tag);
	tides_buf_put_varint(out, v);
}

void
tides_edit_encode(const tides_edit *e, tides_buf *out)
{
	/* first, so that a reader checks it before any tag it may not know */
	if (e->has_format)
		put_tagged(out, TAG_FORMAT, e->format);
	if (e->has_replay_lsn)
		put_tagged(out, TAG_REPLAY_LSN, e->replay_lsn);
	if (e->has_next_file)
		put_tagged(out, TAG_NEXT_FILE, e->next_file);
	if (e->has_last_seq)
		put_tagged(out, TAG_LAST_SEQ, e->last_seq);
	if (e->has_segment_size)
		put_tagged(out, TAG_SEGMENT_SIZE, e->segment_size);
	for (uint32_t i = 0; i < e->ndeleted; i++)
	{
		tides_buf_put_varint(out, TAG_DELETE_FILE);
		tides_buf_append(out, &(uint8_t) {(uint8_t) e->deleted[i].level}, 1);
		tides_buf_put_varint(out, e->deleted[i].number);
	}
	for (uint32_t i = 0; i < e->nadded; i++)
	{
		const tides_edit_file *f = &e->added[i];

		tides_buf_put_varint(out, TAG_ADD_FILE);
		tides_buf_append(out, &(uint8_t) {(uint8_t) f->level}, 1);
		tides_buf_put_varint(out, f->number);
		tides_buf_put_varint(out, f->size);
		tides_buf_put_varint(out, f->min_seq);
		tides_buf_put_varint(out, f->max_seq);
		tides_buf_put_varint(out, f->entries);
		tides_buf_put_varint(out, f->deletions);
		tides_buf_put_slice(out, f->smallest, f->smallest_len);
		tides_buf_put_slice(out, f->largest, f->largest_len);
		if (f->suffix_bound != 0)
		{
			tides_buf_put_varint(out, TAG_FILE_SUFFIX);
			tides_buf_put_varint(out, f->number);
			tides_buf_put_varint(out, f->suffix_bound);
		}
	}
	if (e->has_skips)
	{
		tides_buf_put_varint(out, TAG_SKIPS);
		tides_buf_put_varint(out, e->nskips);
		for (uint32_t i = 0; i < e->nskips; i++)
		{
			tides_buf_put_varint(out, e->skips[i].from);
			tides_buf_put_varint(out, e->skips[i].to);
		}
	}
	if (e->has_dropped)
	{
		tides_buf_put_varint(out, TAG_DROPPED);
		tides_buf_put_varint(out, e->ndropped);
		for (uint32_t i = 0; i < e->ndropped; i++)
		{
			tides_buf_put_varint(out, e->dropped[i].id);
			tides_buf_put_varint(out, e->dropped[i].seq);
			tides_buf_put_slice(out, e->dropped[i].bytes, e->dropped[i].len);
		}
	}
	if (e->has_pending)
	{
		tides_buf_put_varint(out, TAG_PENDING);
		tides_buf_put_varint(out, e->npending);
		for (uint32_t i = 0; i < e->npending; i++)
			tides_buf_put_varint(out, e->pending[i]);
	}
}

/* ---- decoding */

typedef struct reader
{
	const uint8_t *p;
	const uint8_t *end;
	bool		bad;
} reader;

static uint64_t
rd_varint(reader *r)
{
	uint64_t	v = 0;

	if (r->bad)
		return 0;
	r->p = tides_decode_varint64(r->p, r->end, &v);
	if (r->p == NULL)
	{
		r->bad = true;
		r->p = r->end;
		return 0;
	}
	return v;
}

static int
rd_byte(reader *r)
{
	if (r->bad || r->p >= r->end)
	{
		r->bad = true;
		return 0;
	}
	return *r->p++;
}

static const uint8_t *
rd_slice(reader *r, size_t *len, size_t max)
{
	uint64_t	n = rd_varint(r);
	const uint8_t *s;

	if (r->bad || n > max || n > (uint64_t) (r->end - r->p))
	{
		r->bad = true;
		*len = 0;
		return NULL;
	}
	s = r->p;
	r->p += n;
	*len = (size_t) n;
	return s;
}

/* a list count can't exceed the bytes left (each element takes >= 1 byte) */
static uint32_t
rd_count(reader *r)
{
	uint64_t	n = rd_varint(r);

	if (n > (uint64_t) (r->end - r->p) || n > UINT32_MAX)
	{
		r->bad = true;
		return 0;
	}
	return (uint32_t) n;
}

tides_status
tides_edit_decode(tides_edit *e, const uint8_t *p, size_t len, tides_error *err)
{
	reader		r = {p, p != NULL ? p + len : p, false};	/* NULL + 0 is undefined */
	tides_status s = TIDES_OK;

	tides_edit_init(e);
	while (!r.bad && r.p < r.end && s == TIDES_OK)
	{
		uint64_t	tag = rd_varint(&r);

		switch (tag)
		{
			case TAG_FORMAT:
				e->format = rd_varint(&r);
				e->has_format = true;
				if (e->format == 0)
					r.bad = true;
				else if (!r.bad && e->format > TIDES_FORMAT_VERSION)
				{
					uint64_t	f = e->format;

					tides_edit_free(e);
					return tides_fail(err, TIDES_INVALID,
									  "written in store format %llu; this engine reads formats up to %d",
									  (unsigned long long) f, TIDES_FORMAT_VERSION);
				}
				break;
			case TAG_REPLAY_LSN:
				e->replay_lsn = rd_varint(&r);
				e->has_replay_lsn = true;
				break;
			case TAG_NEXT_FILE:
				e->next_file = rd_varint(&r);
				e->has_next_file = true;
				break;
			case TAG_LAST_SEQ:
				e->last_seq = rd_varint(&r);
				e->has_last_seq = true;
				break;
			case TAG_SEGMENT_SIZE:
				e->segment_size = rd_varint(&r);
				e->has_segment_size = true;
				break;
			case TAG_ADD_FILE:
				{
					tides_edit_file f;

					f.level = rd_byte(&r);
					f.number = rd_varint(&r);
					f.size = rd_varint(&r);
					f.min_seq = rd_varint(&r);
					f.max_seq = rd_varint(&r);
					f.entries = rd_varint(&r);
					f.deletions = rd_varint(&r);
					f.smallest = (uint8_t *) rd_slice(&r, &f.smallest_len, TIDES_MAX_KEY_LEN + TIDES_TRAILER);
					f.largest = (uint8_t *) rd_slice(&r, &f.largest_len, TIDES_MAX_KEY_LEN + TIDES_TRAILER);
					f.suffix_bound = 0;
					if (r.bad || f.level >= TIDES_MAX_LEVELS ||
						!tides_ikey_valid(f.smallest, f.smallest_len) ||
						!tides_ikey_valid(f.largest, f.largest_len))
					{
						r.bad = true;
						break;
					}
					s = tides_edit_add_file(e, &f);
					break;
				}
			case TAG_FILE_SUFFIX:
				{
					uint64_t	number = rd_varint(&r);
					uint64_t	bound = rd_varint(&r);

					/* the file this edit added last under that number */
					r.bad = r.bad || bound == 0 || e->nadded == 0 ||
						e->added[e->nadded - 1].number != number;
					if (!r.bad)
						e->added[e->nadded - 1].suffix_bound = bound;
					break;
				}
			case TAG_DELETE_FILE:
				{
					int			level = rd_byte(&r);
					uint64_t	number = rd_varint(&r);

					if (r.bad || level >= TIDES_MAX_LEVELS)
					{
						r.bad = true;
						break;
					}
					s = tides_edit_delete_file(e, level, number);
					break;
				}
			case TAG_SKIPS:
				{
					uint32_t	n = rd_count(&r);
					tides_log_skip *sk = calloc(n ? n : 1, sizeof(*sk));

					if (sk == NULL)
					{
						s = TIDES_NO_MEMORY;
						break;
					}
					for (uint32_t i = 0; i < n && !r.bad; i++)
					{
						sk[i].from = rd_varint(&r);
						sk[i].to = rd_varint(&r);
						if (sk[i].to < sk[i].from)
							r.bad = true;
					}
					if (!r.bad)
						s = tides_edit_set_skips(e, sk, n);
					free(sk);
					break;
				}
			case TAG_DROPPED:
				{
					uint32_t	n = rd_count(&r);
					tides_dropped_prefix *d = calloc(n ? n : 1, sizeof(*d));

					if (d == NULL)
					{
						s = TIDES_NO_MEMORY;
						break;
					}
					for (uint32_t i = 0; i < n && !r.bad; i++)
					{
						size_t		plen;
						const uint8_t *pb;

						d[i].id = rd_varint(&r);
						d[i].seq = rd_varint(&r);
						pb = rd_slice(&r, &plen, TIDES_MAX_PREFIX_LEN);
						if (!r.bad)
						{
							d[i].len = (uint32_t) plen;
							memcpy(d[i].bytes, pb, plen);
						}
					}
					if (!r.bad)
						s = tides_edit_set_dropped(e, d, n);
					free(d);
					break;
				}
			case TAG_PENDING:
				{
					uint32_t	n = rd_count(&r);
					uint64_t   *t = calloc(n ? n : 1, sizeof(*t));

					if (t == NULL)
					{
						s = TIDES_NO_MEMORY;
						break;
					}
					for (uint32_t i = 0; i < n && !r.bad; i++)
					{
						t[i] = rd_varint(&r);
						if (t[i] == 0)
							r.bad = true;	/* 0 means "no tag": never pending */
					}
					if (!r.bad)
						s = tides_edit_set_pending(e, t, n);
					free(t);
					break;
				}
			default:
				r.bad = true;
				break;
		}
	}
	if (s != TIDES_OK)
	{
		tides_edit_free(e);
		return tides_fail(err, s, "out of memory decoding a manifest edit");
	}
	if (r.bad)
	{
		tides_edit_free(e);
		return tides_fail(err, TIDES_CORRUPTION, "malformed manifest edit at byte %zu",
						  (size_t) (r.p - p));
	}
	return TIDES_OK;
}
