/*
 * memtable.c -- memtable entries and iteration over the skiplist.
 */
#include "mem/memtable.h"

#include <stdlib.h>
#include <string.h>

#include "db/dbformat.h"

void
tides_memtable_setup(tides_memtable *m, uint8_t *arena, uint64_t size)
{
	memset(m, 0, sizeof(*m));
	m->arena = arena;
	m->arena_size = size;
	atomic_init(&m->state, TIDES_MEM_FREE);
}

void
tides_memtable_activate(tides_memtable *m, uint64_t id, uint64_t first_lsn, uint64_t first_seq)
{
	tides_skip_init(&m->list, m->arena);
	atomic_store(&m->used, (uint64_t) tides_skip_head_size());
	atomic_store(&m->writers, 0);
	atomic_store(&m->refs, 0);
	m->id = id;
	m->first_lsn = first_lsn;
	m->end_lsn = 0;
	m->first_seq = first_seq;
	m->last_seq = 0;
	atomic_store(&m->entries, 0);
	atomic_store(&m->deletions, 0);
	atomic_store(&m->state, TIDES_MEM_ACTIVE);
}

void
tides_memtable_add(tides_memtable *m, uint64_t off, uint32_t height, uint64_t seq, int type,
				   const uint8_t *ukey, size_t ukey_len, const uint8_t *val, size_t vlen)
{
	tides_skip_node *n = tides_skip_node_at(&m->list, (uint32_t) off);
	uint8_t    *k;

	n->key_len = (uint32_t) (ukey_len + TIDES_TRAILER);
	n->val_len = (uint32_t) vlen;
	n->height = height;
	for (uint32_t i = 0; i < height; i++)
		atomic_init(&n->next[i], 0);
	k = (uint8_t *) tides_skip_node_key(n);
	memcpy(k, ukey, ukey_len);
	tides_put64(k + ukey_len, tides_pack_trailer(seq, (tides_key_type) type));
	if (vlen)
		memcpy(k + n->key_len, val, vlen);
	tides_skip_insert(&m->list, (uint32_t) off);
	atomic_fetch_add_explicit(&m->entries, 1, memory_order_relaxed);
	if (type == TIDES_KT_DELETE)
		atomic_fetch_add_explicit(&m->deletions, 1, memory_order_relaxed);
}

bool
tides_memtable_get(const tides_memtable *m, const uint8_t *ukey, size_t ukey_len,
				   uint64_t max_seq, int *type, uint64_t *seq, const uint8_t **val, size_t *vlen)
{
	uint8_t		stackbuf[256];
	uint8_t    *target = stackbuf;
	uint32_t	off;
	bool		found = false;

	if (ukey_len + TIDES_TRAILER > sizeof(stackbuf))
	{
		target = malloc(ukey_len + TIDES_TRAILER);
		if (target == NULL)
			return false;
	}
	tides_ikey_make(target, ukey, ukey_len, max_seq, TIDES_KT_SEEK);
	off = tides_skip_seek(&m->list, target, ukey_len + TIDES_TRAILER);
	if (off != 0)
	{
		const tides_skip_node *n = tides_skip_node_at(&m->list, off);
		const uint8_t *k = tides_skip_node_key(n);

		if (tides_ukey_cmp(k, n->key_len - TIDES_TRAILER, ukey, ukey_len) == 0)
		{
			*type = tides_ikey_type(k, n->key_len);
			*seq = tides_ikey_seq(k, n->key_len);
			*val = tides_skip_node_value(n);
			*vlen = n->val_len;
			found = true;
		}
	}
	if (target != stackbuf)
		free(target);
	return found;
}

/* ---- iterator */

typedef struct mem_iter
{
	tides_iiter base;
	tides_memtable *m;
	uint32_t	pos;			/* node offset, 0 = invalid */
} mem_iter;

static void
mi_seek(tides_iiter *it, const uint8_t *k, size_t n)
{
	mem_iter   *mi = (mem_iter *) it;

	mi->pos = tides_skip_seek(&mi->m->list, k, n);
}

static void
mi_first(tides_iiter *it)
{
	mem_iter   *mi = (mem_iter *) it;

	mi->pos = tides_skip_first(&mi->m->list);
}

static void
mi_last(tides_iiter *it)
{
	mem_iter   *mi = (mem_iter *) it;

	mi->pos = tides_skip_last(&mi->m->list);
}

static void
mi_next(tides_iiter *it)
{
	mem_iter   *mi = (mem_iter *) it;

	mi->pos = tides_skip_next(&mi->m->list, mi->pos);
}

static void
mi_prev(tides_iiter *it)
{
	mem_iter   *mi = (mem_iter *) it;
	const tides_skip_node *n = tides_skip_node_at(&mi->m->list, mi->pos);

	/* no back links: search for the last node before this one */
	mi->pos = tides_skip_seek_lt(&mi->m->list, tides_skip_node_key(n), n->key_len);
}

static bool
mi_valid(const tides_iiter *it)
{
	return ((const mem_iter *) it)->pos != 0;
}

static const uint8_t *
mi_key(const tides_iiter *it, size_t *n)
{
	const mem_iter *mi = (const mem_iter *) it;
	const tides_skip_node *node = tides_skip_node_at(&mi->m->list, mi->pos);

	*n = node->key_len;
	return tides_skip_node_key(node);
}

static const uint8_t *
mi_value(const tides_iiter *it, size_t *n)
{
	const mem_iter *mi = (const mem_iter *) it;
	const tides_skip_node *node = tides_skip_node_at(&mi->m->list, mi->pos);

	*n = node->val_len;
	return tides_skip_node_value(node);
}

static void
mi_destroy(tides_iiter *it)
{
	free(it);
}

static const tides_iiter_ops mem_iter_ops = {
	mi_seek, mi_first, mi_last, mi_next, mi_prev, mi_valid, mi_key, mi_value, mi_destroy
};

tides_iiter *
tides_memtable_iter_new(tides_memtable *m)
{
	mem_iter   *mi = malloc(sizeof(*mi));

	if (mi == NULL)
		return NULL;
	tides_iiter_base_init(&mi->base, &mem_iter_ops);
	mi->m = m;
	mi->pos = 0;
	return &mi->base;
}
