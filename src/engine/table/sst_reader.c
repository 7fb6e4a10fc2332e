/*
 * sst_reader.c -- opening and closing SSTables, point lookups, filters.
 *
 * Point lookups use a cursor (sst_cursor.c) embedded in the table, guarded
 * by an atomic flag, so a second thread using the same reader concurrently
 * falls back to a temporary cursor instead of corrupting the first one's
 * buffers.
 *
 * Filters: partition i's filter holds every user key of the data blocks
 * under index partition i.  A user key U can span partitions only when a
 * partition's separator has user key U (versions of U split across the
 * boundary), so a lookup that a filter answers "absent" for moves on to the
 * next partition in exactly that case and otherwise returns NOT_FOUND.
 */
#include "table/sst_impl.h"

#include <stdlib.h>
#include <string.h>

#include "cache/block_cache.h"
#include "table/filter.h"
#include "util/assert.h"

typedef struct seek_ctx
{
	const uint8_t *target;
	size_t		tlen;
	tides_buf  *key;
	tides_buf  *val;
	tides_view_result res;
} seek_ctx;

static void
seek_cb(void *arg, const tides_block_view *v)
{
	seek_ctx   *sc = arg;

	sc->res = tides_block_view_seek(v, true, sc->target, sc->tlen, sc->key, sc->val);
}

/*
 * Point lookup when the index partition and the data block are both in the
 * block cache and the answer lies in that block: search both in place and
 * copy out only the entry found.  Returns false when the general path must
 * run (a miss, a torn read, or the answer is in a later block).
 */
static bool
get_in_place(sst_cursor *c, const uint8_t *ikey, size_t iklen,
			 tides_sst_found_fn found, void *arg)
{
	tides_block_cache *bc = c->t->src.cache;
	uint64_t	fno = c->t->src.file_number;
	tides_block_handle h;
	seek_ctx	sc;

	if (tides_handle_decode(c->top.val, c->top.val + c->top.vlen, &h) == NULL)
		return false;
	sc.target = ikey;
	sc.tlen = iklen;
	sc.key = &c->key;
	sc.val = &c->val;
	if (!tides_block_cache_visit(bc, fno, h.offset, seek_cb, &sc) || sc.res != TIDES_VIEW_FOUND ||
		tides_handle_decode(c->val.data, c->val.data + c->val.len, &h) == NULL)
		return false;
	if (!tides_block_cache_visit(bc, fno, h.offset, seek_cb, &sc) || sc.res != TIDES_VIEW_FOUND)
		return false;
	if (c->t->src.counters)
		tides_count(c->t->src.counters, cache_hits, 2);
	if (c->t->gseq != 0 && c->key.len >= TIDES_TRAILER)
		sst_patch_trailer(c->key.data, c->key.len, c->t->gseq);
	tides_process_io.cache_hits += 2;
	found(arg, c->key.data, c->key.len, c->val.data, c->val.len);
	return true;
}

/* -------------------------------------------------------------- open/close */

/* check every top index entry once, so lookups can trust its shape */
static tides_status
validate_top(tides_sst *t, tides_error *err)
{
	tides_block_iter it;
	tides_error e;
	uint32_t	n = 0;
	tides_buf	prev;

	/* err is output only: the block iterator reports into a clean one */
	tides_error_clear(&e);
	tides_buf_init(&prev);
	tides_block_iter_init(&it, true, &e);
	if (tides_block_iter_reset(&it, t->top.data, t->top.len, t->fname, 0))
	{
		for (tides_block_iter_first(&it); it.valid; tides_block_iter_next(&it))
		{
			tides_block_handle ph,
						fh;
			const uint8_t *p = tides_handle_decode(it.val, it.val + it.vlen, &ph);

			if (p == NULL || tides_handle_decode(p, it.val + it.vlen, &fh) == NULL ||
				(n > 0 && tides_ikey_cmp(prev.data, prev.len, it.key, it.klen) >= 0))
			{
				tides_fail(&e, TIDES_CORRUPTION, "malformed top index of %s", t->fname);
				break;
			}
			tides_buf_reset(&prev);
			tides_buf_append(&prev, it.key, it.klen);
			n++;
		}
	}
	if (e.code == TIDES_OK && n != t->ext.num_partitions)
		tides_fail(&e, TIDES_CORRUPTION, "top index of %s has %u partitions, expected %u",
				   t->fname, n, t->ext.num_partitions);
	tides_block_iter_free(&it);
	tides_buf_free(&prev);
	if (e.code != TIDES_OK && err != NULL)
		*err = e;
	return e.code;
}

/*
 * Decode the key ranges of the table's runs (payload of the properties'
 * RANGES item) into t->ranges.  Runs are in key order, disjoint, and span
 * exactly the table's smallest to largest user key; anything else is damage.
 */
static tides_status
load_ranges(tides_sst *t, const uint8_t *payload, size_t len, tides_error *err)
{
	const uint8_t *p = payload;
	const uint8_t *limit = payload + len;
	uint32_t	n;
	uint8_t    *keys;

	p = tides_decode_varint32(p, limit, &n);
	if (p == NULL || n == 0 || n > TIDES_SST_MAX_RANGES || t->props.num_entries == 0 ||
		t->props.smallest_len < TIDES_TRAILER || t->props.largest_len < TIDES_TRAILER)
		goto bad;
	t->ranges = malloc(n * sizeof(sst_range) + (size_t) (limit - p));
	if (t->ranges == NULL)
		return tides_fail(err, TIDES_NO_MEMORY, "out of memory opening %s", t->fname);
	keys = (uint8_t *) (t->ranges + n);
	memcpy(keys, p, limit - p);
	limit = keys + (limit - p);
	p = keys;
	for (uint32_t i = 0; i < n; i++)
	{
		sst_range  *r = &t->ranges[i];
		uint64_t	fl,
					ll;

		if ((p = tides_decode_varint64(p, limit, &fl)) == NULL || fl > (uint64_t) (limit - p))
			goto bad;
		r->first = p;
		r->first_len = (uint32_t) fl;
		p += fl;
		if ((p = tides_decode_varint64(p, limit, &ll)) == NULL || ll > (uint64_t) (limit - p))
			goto bad;
		r->last = p;
		r->last_len = (uint32_t) ll;
		p += ll;
		if (tides_ukey_cmp(r->first, r->first_len, r->last, r->last_len) > 0 ||
			(i > 0 && tides_ukey_cmp(t->ranges[i - 1].last, t->ranges[i - 1].last_len,
									 r->first, r->first_len) >= 0))
			goto bad;
	}
	if (p != limit ||
		tides_ukey_cmp(t->ranges[0].first, t->ranges[0].first_len, t->props.smallest,
					   t->props.smallest_len - TIDES_TRAILER) != 0 ||
		tides_ukey_cmp(t->ranges[n - 1].last, t->ranges[n - 1].last_len, t->props.largest,
					   t->props.largest_len - TIDES_TRAILER) != 0)
		goto bad;
	t->nranges = n;
	return TIDES_OK;

bad:
	free(t->ranges);
	t->ranges = NULL;
	return tides_fail(err, TIDES_CORRUPTION, "malformed key ranges in properties of %s", t->fname);
}

/*
 * May the table hold a user key that starts with p[0, len)?  False when its
 * runs leave no room for one: every such key is >= p, and a run holds one
 * only if its last key is >= p and its first key is not past them all.
 */
static bool
ranges_may_hold(const tides_sst *t, const uint8_t *p, size_t len)
{
	uint32_t	lo = 0,
				hi = t->nranges;
	const sst_range *r;

	if (t->nranges == 0)
		return true;
	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo) / 2;

		if (tides_ukey_cmp(t->ranges[mid].last, t->ranges[mid].last_len, p, len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == t->nranges)
		return false;
	r = &t->ranges[lo];
	return memcmp(r->first, p, r->first_len < len ? r->first_len : len) <= 0;
}

tides_status
tides_sst_open(const tides_table_env *env, int fd, uint64_t file_number,
			   uint64_t file_size, const char *fname, tides_sst **out, tides_error *err)
{
	tides_sst  *t = calloc(1, sizeof(*t));
	uint8_t		fbuf[TIDES_FOOTER_SIZE];
	tides_footer footer;
	tides_buf	pbuf,
				tmp;
	const uint8_t *d;
	size_t		n;
	int64_t		r;
	tides_status s;

	*out = NULL;
	tides_buf_init(&pbuf);
	tides_buf_init(&tmp);
	if (t == NULL || (t->fname = strdup(fname ? fname : "")) == NULL)
	{
		free(t);
		env->vfs->close(env->vfs, fd);
		return tides_fail(err, TIDES_NO_MEMORY, "out of memory opening %s", fname);
	}
	tides_buf_init(&t->top);
	atomic_flag_clear(&t->busy);
	t->src.vfs = env->vfs;
	t->src.fd = fd;
	t->src.file_number = file_number;
	t->src.fname = t->fname;
	t->src.cache = env->cache;
	t->src.counters = env->counters;
	tides_error_clear(&t->scratch_err);

	if (file_size == 0)
	{
		int64_t		sz = env->vfs->file_size(env->vfs, fd);

		if (sz < 0)
		{
			s = tides_fail_io(err, (int) sz, "stat", t->fname);
			goto fail;
		}
		file_size = (uint64_t) sz;
	}
	if (file_size < TIDES_FOOTER_SIZE + TIDES_BLOCK_TRAILER)
	{
		s = tides_fail(err, TIDES_CORRUPTION, "file %s too short to be a table (%llu bytes)",
					   t->fname, (unsigned long long) file_size);
		goto fail;
	}
	r = env->vfs->pread(env->vfs, fd, fbuf, sizeof(fbuf), file_size - TIDES_FOOTER_SIZE);
	if (r < 0)
	{
		s = tides_fail_io(err, (int) r, "read", t->fname);
		goto fail;
	}
	if (r != TIDES_FOOTER_SIZE)
	{
		s = tides_fail(err, TIDES_CORRUPTION, "short read of footer of %s", t->fname);
		goto fail;
	}
	if ((s = tides_footer_decode(fbuf, &footer, t->fname, err)) != TIDES_OK)
		goto fail;
	t->src.limit = file_size - TIDES_FOOTER_SIZE;

	if ((s = tides_read_block(&t->src, footer.props, TIDES_READ_BYPASS, &pbuf, &tmp, &d, &n,
							  err)) != TIDES_OK ||
		(s = tides_props_decode(d, n, &t->props, &t->ext, t->fname, err)) != TIDES_OK)
		goto fail;
	if (t->props.file_size != file_size)
	{
		s = tides_fail(err, TIDES_CORRUPTION, "%s is %llu bytes, its properties say %llu",
					   t->fname, (unsigned long long) file_size,
					   (unsigned long long) t->props.file_size);
		goto fail;
	}
	t->top_off = footer.top_index.offset;
	if ((s = tides_read_block(&t->src, footer.top_index, TIDES_READ_BYPASS, &t->top, &tmp, &d,
							  &n, err)) != TIDES_OK ||
		(s = validate_top(t, err)) != TIDES_OK)
		goto fail;
	if (t->ext.ranges_len > 0 &&
		(s = load_ranges(t, t->ext.ranges, t->ext.ranges_len, err)) != TIDES_OK)
		goto fail;
	t->ext.ranges = NULL;		/* it pointed into pbuf */
	t->has_filter = t->ext.bloom_bits_per_key > 0;
	if (t->ext.has_global_seq && t->ext.global_seq != 0)
	{
		/* report the installed sequence number in the properties too */
		t->gseq = t->ext.global_seq;
		t->props.min_seq = t->props.max_seq = t->gseq;
		if (t->props.num_entries > 0 && t->props.smallest_len >= TIDES_TRAILER &&
			t->props.largest_len >= TIDES_TRAILER)
		{
			sst_patch_trailer(t->props.smallest, t->props.smallest_len, t->gseq);
			sst_patch_trailer(t->props.largest, t->props.largest_len, t->gseq);
		}
	}
	sst_cursor_init(&t->scratch, t, TIDES_READ_FILL_CACHE, &t->scratch_err);
	tides_buf_free(&pbuf);
	tides_buf_free(&tmp);
	*out = t;
	return TIDES_OK;

fail:
	tides_buf_free(&pbuf);
	tides_buf_free(&tmp);
	tides_buf_free(&t->top);
	tides_sst_props_free(&t->props);
	free(t->ranges);
	env->vfs->close(env->vfs, fd);
	free(t->fname);
	free(t);
	return s;
}

void
tides_sst_close(tides_sst *t)
{
	if (t == NULL)
		return;
	sst_cursor_free(&t->scratch);
	tides_buf_free(&t->top);
	tides_sst_props_free(&t->props);
	free(t->ranges);
	t->src.vfs->close(t->src.vfs, t->src.fd);
	free(t->fname);
	free(t);
}

const tides_sst_props *
tides_sst_properties(const tides_sst *t)
{
	return &t->props;
}

uint64_t
tides_sst_file_number(const tides_sst *t)
{
	return t->src.file_number;
}

/* the embedded cursor if free, else a temporary one (freed by put_cursor) */
static sst_cursor *
get_cursor(tides_sst *t, sst_cursor *tmp, tides_error *tmp_err)
{
	if (!atomic_flag_test_and_set_explicit(&t->busy, memory_order_acquire))
	{
		tides_error_clear(&t->scratch_err);
		t->scratch.part.valid = t->scratch.data.valid = false;
		return &t->scratch;
	}
	sst_cursor_init(tmp, t, TIDES_READ_FILL_CACHE, tmp_err);
	return tmp;
}

static void
put_cursor(tides_sst *t, sst_cursor *c)
{
	if (c == &t->scratch)
		atomic_flag_clear_explicit(&t->busy, memory_order_release);
	else
		sst_cursor_free(c);
}

/* ------------------------------------------------------------------ reads */

tides_status
tides_sst_get(tides_sst *t, const uint8_t *ikey, size_t iklen,
			  tides_sst_found_fn found, void *arg, tides_error *err)
{
	return tides_sst_get_filtered(t, ikey, iklen, true, found, arg, err);
}

/*
 * With c's top level on ikey's entry: does a filter prove ikey's user key
 * absent from the table (counted as bloom_useful)?  On "maybe", the top
 * level is on the first entry whose partition may hold it (or invalid, or
 * the cursor failed: the caller looks).
 */
static bool
filters_rule_out(sst_cursor *c, const uint8_t *ikey, size_t iklen)
{
	tides_sst  *t = c->t;
	uint64_t	h;

	if (!t->has_filter)
		return false;
	h = tides_filter_hash(ikey, iklen - TIDES_TRAILER);
	if (t->src.counters)
		tides_count(t->src.counters, bloom_checked, 1);
	while (c->top.valid)
	{
		if (sst_filter_may_match(c, h))
			return false;
		/* absent here; it may only continue past a separator with its user key */
		if (tides_ukey_cmp(c->top.key, c->top.klen - TIDES_TRAILER,
						   ikey, iklen - TIDES_TRAILER) != 0)
		{
			if (t->src.counters)
				tides_count(t->src.counters, bloom_useful, 1);
			return true;
		}
		tides_block_iter_next(&c->top);
	}
	return false;
}

tides_status
tides_sst_get_filtered(tides_sst *t, const uint8_t *ikey, size_t iklen, bool use_filter,
					   tides_sst_found_fn found, void *arg, tides_error *err)
{
	sst_cursor	tmpc;
	tides_error tmp_err;
	sst_cursor *c;
	tides_status s = TIDES_NOT_FOUND;

	if (!tides_ikey_valid(ikey, iklen))
		return tides_fail(err, TIDES_INVALID, "invalid lookup key for %s", t->fname);
	/*
	 * No run of the table can hold the key: absent, decided in process
	 * memory.  A level-0 table holds several trees, so its smallest and
	 * largest keys let through the keys of a tree it lacks, whose filter
	 * would be one more block to visit (README "Key ranges").
	 */
	if (!ranges_may_hold(t, ikey, iklen - TIDES_TRAILER))
		return TIDES_NOT_FOUND;
	c = get_cursor(t, &tmpc, &tmp_err);

	if (t->gseq > tides_ikey_seq(ikey, iklen))
	{
		/* a read older than the ingestion: the general path, which passes the user key */
		sst_cursor_seek_reported(c, ikey, iklen);
		sst_cursor_out(c);
		if (c->data.valid)
		{
			found(arg, c->okey, c->oklen, c->data.val, c->data.vlen);
			s = TIDES_OK;
		}
		goto done;
	}
	tides_block_iter_seek(&c->top, ikey, iklen);
	if (use_filter && filters_rule_out(c, ikey, iklen))
		goto done;
	if (!c->top.valid || sst_failed(c))
		goto done;
	if (t->src.cache != NULL && get_in_place(c, ikey, iklen, found, arg))
	{
		s = TIDES_OK;
		goto done;
	}
	sst_idx_enter_seek(c, ikey, iklen);
	sst_data_enter_seek(c, ikey, iklen);
	sst_cursor_out(c);
	if (c->data.valid)
	{
		found(arg, c->okey, c->oklen, c->data.val, c->data.vlen);
		s = TIDES_OK;
	}

done:
	if (sst_failed(c))
	{
		s = c->err->code;
		if (err != NULL)
			*err = *c->err;
	}
	put_cursor(t, c);
	return s;
}

bool
tides_sst_prefetch(tides_sst *t, const uint8_t *ikey, size_t iklen, bool use_filter, bool *asked)
{
	sst_cursor	tmpc;
	tides_error tmp_err;
	sst_cursor *c;
	tides_block_handle h;
	seek_ctx	sc;
	bool		ends = false;

	TIDES_ASSERT(tides_ikey_valid(ikey, iklen));
	*asked = false;
	if (!ranges_may_hold(t, ikey, iklen - TIDES_TRAILER))
		return false;
	c = get_cursor(t, &tmpc, &tmp_err);
	tides_block_iter_seek(&c->top, ikey, iklen);
	if (use_filter && filters_rule_out(c, ikey, iklen))
		goto done;
	if (!c->top.valid || sst_failed(c))
		goto done;
	/* the data block the search would read: through the partition (read if not cached) */
	sst_idx_enter_seek(c, ikey, iklen);
	if (!c->part.valid || tides_handle_decode(c->part.val, c->part.val + c->part.vlen, &h) == NULL)
		goto done;
	sc.target = ikey;
	sc.tlen = iklen;
	sc.key = &c->key;
	sc.val = &c->val;
	if (t->src.cache != NULL && tides_block_cache_visit(t->src.cache, t->src.file_number, h.offset,
													   seek_cb, &sc))
	{
		/* cached: the search ends here if the key is in it */
		ends = sc.res == TIDES_VIEW_FOUND &&
			tides_ukey_cmp(c->key.data, c->key.len - TIDES_TRAILER, ikey, iklen - TIDES_TRAILER) == 0;
		goto done;
	}
	if (t->src.vfs->will_need != NULL)
	{
		t->src.vfs->will_need(t->src.vfs, t->src.fd, h.offset, h.size + TIDES_BLOCK_TRAILER);
		*asked = true;
		if (t->src.counters)
			tides_count(t->src.counters, blocks_prefetched, 1);
	}
	ends = true;

done:
	/* a failure is the get's to report; it would stop there too */
	if (sst_failed(c))
		ends = true;
	put_cursor(t, c);
	return ends;
}

/*
 * May the table hold a key starting with prefix[0, plen) whose filter hash
 * (of the prefix or of a stem) is h?  Probes the filters of every partition
 * that can hold such a key.
 */
static bool
may_contain_hashed(tides_sst *t, const uint8_t *prefix, size_t plen, uint64_t h)
{
	sst_cursor	tmpc;
	tides_error tmp_err;
	sst_cursor *c;
	bool		result = false;

	if (t->src.counters)
		tides_count(t->src.counters, bloom_checked, 1);
	c = get_cursor(t, &tmpc, &tmp_err);
	tides_buf_reset(&c->key);
	tides_buf_append(&c->key, prefix, plen);
	tides_buf_put64(&c->key, tides_pack_trailer(TIDES_MAX_SEQ, TIDES_KT_SEEK));
	if (c->key.oom)
	{
		put_cursor(t, c);
		return true;
	}
	/* every partition that can hold a key starting with the prefix */
	for (tides_block_iter_seek(&c->top, c->key.data, c->key.len); c->top.valid;
		 tides_block_iter_next(&c->top))
	{
		if (sst_filter_may_match(c, h))
		{
			result = true;
			break;
		}
		if (c->top.klen - TIDES_TRAILER < plen || memcmp(c->top.key, prefix, plen) != 0)
			break;				/* this separator is past every such key */
	}
	if (sst_failed(c))
		result = true;			/* unsure: let the read find the error */
	if (!result && t->src.counters)
		tides_count(t->src.counters, bloom_useful, 1);
	put_cursor(t, c);
	return result;
}

bool
tides_sst_may_contain_prefix(tides_sst *t, const uint8_t *prefix, size_t len)
{
	size_t		plen = t->props.prefix_len;

	if (!ranges_may_hold(t, prefix, len))
		return false;
	if (!t->has_filter || plen == 0 || len < plen)
		return true;
	return may_contain_hashed(t, prefix, plen, tides_filter_hash(prefix, plen));
}

bool
tides_sst_may_contain_stem(tides_sst *t, const uint8_t *stem, size_t len, uint32_t suffix)
{
	/* every key stem || suffix starts with the stem: its runs may tell */
	if (!ranges_may_hold(t, stem, len))
		return false;
	/* a table without a stem filter of this suffix length cannot tell */
	if (!t->has_filter || suffix == 0 || t->props.stem_suffix != suffix || len == 0)
		return true;
	/* every key stem || suffix starts with the stem */
	return may_contain_hashed(t, stem, len, tides_filter_hash(stem, len));
}

uint64_t
tides_sst_approximate_offset(tides_sst *t, const uint8_t *ikey, size_t iklen)
{
	sst_cursor	tmpc;
	tides_error tmp_err;
	sst_cursor *c;
	uint64_t	off = t->top_off;	/* past the last key */
	tides_block_handle h;

	if (!tides_ikey_valid(ikey, iklen))
		return 0;
	c = get_cursor(t, &tmpc, &tmp_err);
	tides_block_iter_seek(&c->top, ikey, iklen);
	sst_idx_enter_seek(c, ikey, iklen);
	if (c->part.valid && tides_handle_decode(c->part.val, c->part.val + c->part.vlen, &h) != NULL)
		off = h.offset;
	put_cursor(t, c);
	return off;
}

/* --------------------------------------------------------- ingested tables */

uint64_t
tides_sst_global_seq(const tides_sst *t)
{
	return t->gseq;
}

tides_status
tides_sst_set_global_seq(const tides_table_env *env, int fd, uint64_t file_size, uint64_t seq,
						 const char *fname, tides_error *err)
{
	uint8_t		fbuf[TIDES_FOOTER_SIZE];
	tides_footer footer;
	tides_sst_props props;
	tides_props_ext ext;
	uint8_t    *blk = NULL;
	size_t		n;
	int64_t		r;
	tides_status s;

	if (seq == 0 || seq > TIDES_MAX_SEQ)
		return tides_fail(err, TIDES_INVALID, "bad global sequence number for %s", fname);
	if (file_size < TIDES_FOOTER_SIZE)
		return tides_fail(err, TIDES_CORRUPTION, "file %s too short to be a table", fname);
	r = env->vfs->pread(env->vfs, fd, fbuf, sizeof(fbuf), file_size - TIDES_FOOTER_SIZE);
	if (r != TIDES_FOOTER_SIZE)
		return r < 0 ? tides_fail_io(err, (int) r, "read", fname) :
			tides_fail(err, TIDES_CORRUPTION, "short read of footer of %s", fname);
	if ((s = tides_footer_decode(fbuf, &footer, fname, err)) != TIDES_OK)
		return s;
	n = (size_t) footer.props.size;
	if (n < TIDES_PROPS_ITEM_SIZE || footer.props.offset + n + TIDES_BLOCK_TRAILER > file_size ||
		(blk = malloc(n + TIDES_BLOCK_TRAILER)) == NULL)
		return blk == NULL && n >= TIDES_PROPS_ITEM_SIZE ?
			tides_fail(err, TIDES_NO_MEMORY, "out of memory") :
			tides_fail(err, TIDES_CORRUPTION, "bad properties handle in %s", fname);
	r = env->vfs->pread(env->vfs, fd, blk, n + TIDES_BLOCK_TRAILER, footer.props.offset);
	if (r != (int64_t) (n + TIDES_BLOCK_TRAILER))
	{
		free(blk);
		return r < 0 ? tides_fail_io(err, (int) r, "read", fname) :
			tides_fail(err, TIDES_CORRUPTION, "short read of properties of %s", fname);
	}
	/* decode: the item must be there, and where */
	s = tides_props_decode(blk, n, &props, &ext, fname, err);
	if (s != TIDES_OK)
	{
		free(blk);
		return s;
	}
	tides_sst_props_free(&props);
	if (!ext.has_global_seq)
	{
		free(blk);
		return tides_fail(err, TIDES_INVALID, "%s was not built for ingestion", fname);
	}
	tides_put64(blk + ext.global_seq_off + 1, seq);
	tides_block_trailer(blk + n, blk, n, TIDES_COMPRESS_NONE);
	r = env->vfs->pwrite(env->vfs, fd, blk, n + TIDES_BLOCK_TRAILER, footer.props.offset);
	free(blk);
	if (r < 0)
		return tides_fail_io(err, (int) r, "write", fname);
	return TIDES_OK;
}
