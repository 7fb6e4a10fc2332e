/*
 * meta.c -- building and parsing the keys of tree 0 (meta.h has the table
 * of kinds), and the two ways its uint64 values are read and made durable.
 * Every number after the kind byte is big-endian.
 */
#include "postgres.h"

#include "runtime/trt.h"
#include "runtime/meta.h"

static void
put32be(uint8 *p, uint32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static uint32
get32be(const uint8 *p)
{
	return ((uint32) p[0] << 24) | ((uint32) p[1] << 16) | ((uint32) p[2] << 8) | p[3];
}

static bool
is_kind(const uint8 *key, size_t klen, size_t want_len, TrtMetaKind kind)
{
	static const uint8 meta_tree[8] = {0};

	return klen == want_len && memcmp(key, meta_tree, 8) == 0 && key[8] == (uint8) kind;
}

size_t
trt_meta_key(uint8 *key, TrtMetaKind kind)
{
	trt_key_put_tree(key, TRT_TREE_META);
	key[8] = (uint8) kind;
	return TRT_META_HEAD_LEN;
}

void
trt_meta_kind_range(uint8 *lower, uint8 *upper, TrtMetaKind kind)
{
	trt_meta_key(lower, kind);
	trt_meta_key(upper, kind);
	upper[8]++;					/* the next kind byte */
}

tides_iter *
trt_meta_kind_iter_raw(tides_db *db, TrtMetaKind kind, uint8 *lower, uint8 *upper)
{
	tides_iter_options io;

	trt_meta_kind_range(lower, upper, kind);
	memset(&io, 0, sizeof(io));
	io.lower = lower;
	io.lower_len = TRT_META_HEAD_LEN;
	io.upper = upper;
	io.upper_len = TRT_META_HEAD_LEN;
	return tides_iter_new(db, &io);
}

size_t
trt_meta_tree_key(uint8 *key, TrtMetaKind kind, uint64 tree)
{
	Assert(kind == TRT_META_VID_RESERVED || kind == TRT_META_TREEMAP ||
		   kind == TRT_META_DROP || kind == TRT_META_SUSPECT || kind == TRT_META_LOW_MARK);
	trt_meta_key(key, kind);
	trt_key_put_tree(key + TRT_META_HEAD_LEN, tree);
	return TRT_META_TREE_KEY_LEN;
}

size_t
trt_meta_relmap_key(uint8 *key, const RelFileNode *rnode, BackendId backend)
{
	trt_meta_key(key, TRT_META_RELMAP);
	put32be(key + 9, rnode->dbNode);
	put32be(key + 13, rnode->spcNode);
	put32be(key + 17, rnode->relNode);
	put32be(key + 21, (uint32) backend);
	return TRT_META_RELMAP_KEY_LEN;
}

void
trt_meta_relmap_db_range(uint8 *lower, size_t *llen, uint8 *upper, size_t *ulen, Oid db)
{
	trt_meta_key(lower, TRT_META_RELMAP);
	put32be(lower + 9, db);
	*llen = TRT_META_RELMAP_DB_LEN;
	if (db == UINT32_MAX)
	{
		/* no db + 1: up to the next kind */
		uint8		ignore[TRT_META_HEAD_LEN];

		trt_meta_kind_range(ignore, upper, TRT_META_RELMAP);
		*ulen = TRT_META_HEAD_LEN;
	}
	else
	{
		trt_meta_key(upper, TRT_META_RELMAP);
		put32be(upper + 9, db + 1);
		*ulen = TRT_META_RELMAP_DB_LEN;
	}
}

size_t
trt_meta_inc_start_key(uint8 *key, uint32 inc)
{
	trt_meta_key(key, TRT_META_INC_START);
	put32be(key + 9, inc);
	return TRT_META_INC_KEY_LEN;
}

size_t
trt_meta_aborted_key(uint8 *key, uint32 inc, TransactionId top)
{
	trt_meta_key(key, TRT_META_ABORTED);
	put32be(key + 9, inc);
	put32be(key + 13, top);
	return TRT_META_ABORTED_KEY_LEN;
}

bool
trt_meta_parse_tree_key(const uint8 *key, size_t klen, TrtMetaKind kind, uint64 *tree)
{
	if (!is_kind(key, klen, TRT_META_TREE_KEY_LEN, kind))
		return false;
	*tree = trt_key_get_tree(key + TRT_META_HEAD_LEN);
	return true;
}

bool
trt_meta_parse_relmap_key(const uint8 *key, size_t klen, RelFileNode *rnode, BackendId *backend)
{
	if (!is_kind(key, klen, TRT_META_RELMAP_KEY_LEN, TRT_META_RELMAP))
		return false;
	rnode->dbNode = get32be(key + 9);
	rnode->spcNode = get32be(key + 13);
	rnode->relNode = get32be(key + 17);
	*backend = (BackendId) get32be(key + 21);
	return true;
}

bool
trt_meta_parse_inc_start_key(const uint8 *key, size_t klen, uint32 *inc)
{
	if (!is_kind(key, klen, TRT_META_INC_KEY_LEN, TRT_META_INC_START))
		return false;
	*inc = get32be(key + 9);
	return true;
}

bool
trt_meta_parse_aborted_key(const uint8 *key, size_t klen, uint32 *inc, TransactionId *top)
{
	if (!is_kind(key, klen, TRT_META_ABORTED_KEY_LEN, TRT_META_ABORTED))
		return false;
	*inc = get32be(key + 9);
	*top = get32be(key + 13);
	return true;
}

bool
trt_meta_map_value(const void *val, size_t vlen, TrtTreeMapValue *mv)
{
	if (vlen < sizeof(TrtTreeMapValue))
		return false;
	memcpy(mv, val, sizeof(TrtTreeMapValue));
	return true;
}

/* written whole; read up to persistence (older readers asked no more) */
bool
trt_meta_owner_value(const void *val, size_t vlen, TrtTreeOwnerValue *ov)
{
	size_t		need = offsetof(TrtTreeOwnerValue, persistence) + 1;

	if (vlen < need)
		return false;
	memset(ov, 0, sizeof(*ov));
	memcpy(ov, val, Min(vlen, sizeof(TrtTreeOwnerValue)));
	return true;
}

TrtRelmapEntry *
trt_meta_relmaps_of_db(Oid db, int *n)
{
	uint8		lower[TRT_META_RELMAP_DB_LEN],
				upper[TRT_META_RELMAP_DB_LEN];
	size_t		llen,
				ulen;
	tides_iter *it;
	TrtRelmapEntry *all = NULL;
	int			cap = 0;

	*n = 0;
	trt_meta_relmap_db_range(lower, &llen, upper, &ulen, db);
	it = trt_open_range_iter(trt_engine(), lower, llen, upper, ulen, false);
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
	{
		size_t		klen,
					vlen;
		const uint8 *k = tides_iter_key(it, &klen);
		const char *v = tides_iter_value(it, &vlen);
		TrtRelmapEntry e;

		if (!trt_meta_parse_relmap_key(k, klen, &e.rnode, &e.backend) ||
			!trt_meta_map_value(v, vlen, &e.map))
			continue;
		if (*n == cap)
		{
			cap = cap ? cap * 2 : 64;
			all = all ? repalloc(all, cap * sizeof(e)) : palloc(cap * sizeof(e));
		}
		all[(*n)++] = e;
	}
	if (tides_iter_status(it) != TIDES_OK)
	{
		tides_status s = tides_iter_status(it);

		trt_close_iter(it);
		trt_engine_error(s, "read the relation map");
	}
	trt_close_iter(it);
	return all;
}

/* ---- values */

/* a uint64 value, or dflt if the key is absent */
uint64
trt_meta_read_u64(const uint8 *key, size_t klen, uint64 dflt)
{
	char	   *val;
	size_t		vlen;
	uint64		v = dflt;

	if (trt_read(key, klen, &val, &vlen))
	{
		if (vlen >= 8)
			memcpy(&v, val, 8);
		pfree(val);
	}
	return v;
}

/*
 * Write one key and make it durable before returning.  Row ids are reserved
 * this way in the middle of other writers' batches (CLUSTER fills the local
 * batch while it allocates vids), so this has a batch of its own.
 */
void
trt_meta_write_durable(const uint8 *key, size_t klen, const void *val, size_t vlen)
{
	static tides_batch *b = NULL;
	uint64		lsn;
	tides_status s;

	if (b == NULL && (b = tides_batch_new()) == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	tides_batch_clear(b);
	if (tides_batch_put(b, key, klen, val, vlen) != TIDES_OK)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	lsn = trt_write_batch(b);
	s = tides_sync(trt_engine(), lsn, true);
	if (s != TIDES_OK)
		trt_engine_error(s, "make a reservation durable");
}
