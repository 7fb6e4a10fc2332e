/*
 * tuple.c -- row versions between the engine and memory.
 *
 * Loading a version also applies what only this layer knows: an xmin or
 * xmax written by a transaction that can never count as committed (forgotten
 * by PostgreSQL in a crash, or cut short: src/runtime/incarnation.c) is marked
 * invalid in the in-memory copy, so the visibility rules in visibility.c can
 * stay exactly heap's.
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/xact.h"

#include "am/tam.h"

static void
normalize_lost_writers(TamTuple *t)
{
	HeapTupleHeader h = t->htup.t_data;

	if (t->meta.xmin_inc != 0 && t->meta.xmin_inc != trt_shared->incarnation &&
		!HeapTupleHeaderXminFrozen(h) &&
		trt_writer_lost(t->meta.xmin_inc, t->meta.xmin_top, HeapTupleHeaderGetRawXmin(h)))
	{
		h->t_infomask &= ~HEAP_XMIN_COMMITTED;
		h->t_infomask |= HEAP_XMIN_INVALID;
	}
	if (t->meta.xmax_inc != 0 && t->meta.xmax_inc != trt_shared->incarnation &&
		!(h->t_infomask & HEAP_XMAX_INVALID))
	{
		TransactionId xmax = HeapTupleHeaderGetRawXmax(h);
		bool		lost;

		if (h->t_infomask & HEAP_XMAX_IS_MULTI)
		{
			/*
			 * A multixact written by an updater whose tides writes were cut
			 * short stands for that lost update.  One written by a lost
			 * locker keeps its updater, who is judged on its own (its new
			 * version carries its fate); the lost lock is harmless.
			 */
			lost = trt_multi_lost(t->meta.xmax_inc, xmax) ||
				((t->meta.flags & TAM_VF_XMAX_BY_UPDATER) &&
				 trt_writer_lost(t->meta.xmax_inc, t->meta.xmax_top, t->meta.xmax_top));
		}
		else
			lost = trt_writer_lost(t->meta.xmax_inc, t->meta.xmax_top, xmax);
		if (lost)
		{
			h->t_infomask &= ~(HEAP_XMAX_COMMITTED | HEAP_XMAX_IS_MULTI | HEAP_XMAX_BITS);
			h->t_infomask |= HEAP_XMAX_INVALID;
			h->t_infomask2 &= ~HEAP_KEYS_UPDATED;
		}
	}
}

TamTuple *
tam_tuple_from_value(const char *val, size_t vlen, uint64 vid, Oid relid, TamTupleBuf *buf)
{
	TamTuple *t;
	uint32		len;
	Size		need;
	TamVersionMeta meta;

	if (vlen < TAM_META_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("tides: row version %llu of relation %u is too short (%zu bytes)",
						(unsigned long long) vid, relid, vlen)));
	memcpy(&meta, val, TAM_META_SIZE);
	len = (uint32) (vlen - TAM_META_SIZE);
	if ((meta.flags & TAM_VF_STUB) ? len != 0 : len < SizeofHeapTupleHeader)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("tides: row version %llu of relation %u has a bad length (%zu bytes, flags %x)",
						(unsigned long long) vid, relid, vlen, meta.flags)));
	need = MAXALIGN(sizeof(TamTuple)) + len;
	if (buf->t == NULL || buf->size < need)
	{
		Size		cap = Max(need, 1024);

		if (buf->t != NULL)
			pfree(buf->t);
		buf->t = MemoryContextAlloc(buf->cxt, cap);
		buf->size = cap;
	}
	t = buf->t;
	t->meta = meta;
	t->vid = vid;
	t->htup.t_len = len;
	t->htup.t_tableOid = relid;
	trt_vid_to_tid(vid, &t->htup.t_self);
	if (meta.flags & TAM_VF_STUB)
	{
		t->htup.t_data = NULL;
		t->stored_infomask = 0;
		return t;
	}
	t->htup.t_data = TAM_TUPLE_DATA(t);
	memcpy(t->htup.t_data, val + TAM_META_SIZE, len);
	if (t->htup.t_data->t_hoff > len || t->htup.t_data->t_hoff < SizeofHeapTupleHeader)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("tides: row version %llu of relation %u has a bad header",
						(unsigned long long) vid, relid)));
	t->stored_infomask = t->htup.t_data->t_infomask;
	normalize_lost_writers(t);
	return t;
}

TamTuple *
tam_fetch_entry(uint64 tree, uint64 vid, Oid relid, TamTupleBuf *buf)
{
	uint8		key[TRT_ROW_KEY_LEN];
	char	   *val;
	size_t		vlen;
	TamTuple *t;

	tam_bulk_before_read(tree, vid, vid + 1);
	trt_row_key(key, tree, vid);
	if (!trt_read_row(key, sizeof(key), &val, &vlen))
		return NULL;
	t = tam_tuple_from_value(val, vlen, vid, relid, buf);
	pfree(val);
	return t;
}

TamTuple *
tam_fetch_version(uint64 tree, uint64 vid, Oid relid, TamTupleBuf *buf)
{
	TamTuple *t = tam_fetch_entry(tree, vid, relid, buf);

	return t != NULL && TAM_IS_STUB(t) ? NULL : t;
}

void
tam_batch_add_stub(tides_batch *b, uint64 tree, uint64 vid, uint16 flags, uint64 link,
					 uint16 target_depth)
{
	uint8		key[TRT_ROW_KEY_LEN];
	TamVersionMeta m;

	Assert(flags == TAM_VF_REDIRECT || flags == TAM_VF_DEAD);
	memset(&m, 0, sizeof(m));
	m.flags = flags;
	m.link = link;
	m.hot_depth = target_depth;
	trt_row_key(key, tree, vid);
	if (tides_batch_put(b, key, sizeof(key), &m, sizeof(m)) != TIDES_OK)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory building a tides batch")));
}

/* a version's value, meta then tuple, in buf when it fits (else palloc'd) */
static char *
version_value(const TamVersionMeta *meta, HeapTupleHeader data, uint32 len, char *buf, size_t bufsize)
{
	char	   *val = buf;

	if (TAM_META_SIZE + len > bufsize)
		val = palloc(TAM_META_SIZE + len);
	memcpy(val, meta, TAM_META_SIZE);
	memcpy(val + TAM_META_SIZE, data, len);
	return val;
}

void
tam_batch_add_version(tides_batch *b, uint64 tree, uint64 vid, const TamVersionMeta *meta,
						HeapTupleHeader data, uint32 len)
{
	uint8		key[TRT_ROW_KEY_LEN];
	char		stackbuf[1024];
	char	   *val = version_value(meta, data, len, stackbuf, sizeof(stackbuf));
	tides_status s;

	trt_row_key(key, tree, vid);
	s = tides_batch_put(b, key, sizeof(key), val, TAM_META_SIZE + len);
	if (val != stackbuf)
		pfree(val);
	if (s != TIDES_OK)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory building a tides batch")));
}

void
tam_ingest_add_version(TrtIngest *ti, uint64 tree, uint64 vid, const TamVersionMeta *meta,
						 HeapTupleHeader data, uint32 len)
{
	uint8		key[TRT_ROW_KEY_LEN];
	char		stackbuf[1024];
	char	   *val = version_value(meta, data, len, stackbuf, sizeof(stackbuf));

	trt_row_key(key, tree, vid);
	trt_ingest_put(ti, key, sizeof(key), val, TAM_META_SIZE + len);
	if (val != stackbuf)
		pfree(val);
}

void
tam_meta_init_insert(TamVersionMeta *m)
{
	memset(m, 0, sizeof(*m));
	m->xmin_inc = trt_shared->incarnation;
	m->xmin_top = GetTopTransactionId();
}

void
tam_meta_set_xmax_writer(TamVersionMeta *m, bool is_update)
{
	m->xmax_inc = trt_shared->incarnation;
	m->xmax_top = GetTopTransactionId();
	if (is_update)
		m->flags |= TAM_VF_XMAX_BY_UPDATER;
	else
		m->flags &= ~TAM_VF_XMAX_BY_UPDATER;
}

HeapTuple
tam_tuple_copy_heap(const TamTuple *t)
{
	HeapTuple	h = (HeapTuple) palloc(HEAPTUPLESIZE + t->htup.t_len);

	h->t_len = t->htup.t_len;
	h->t_self = t->htup.t_self;
	h->t_tableOid = t->htup.t_tableOid;
	h->t_data = (HeapTupleHeader) ((char *) h + HEAPTUPLESIZE);
	memcpy(h->t_data, t->htup.t_data, t->htup.t_len);
	return h;
}
