/*
 * memtable.c -- memtable entries and iteration over the skiplist.
 */
#include "mem/memtable.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util/dbformat.h"
#include "util/assert.h"
#include "util/hash.h"

/* point-index buckets for an arena: a power of two, about one per 512 bytes */
static uint32_t
bucket_count(uint64_t arena_size)
{
	uint32_t	n = 64;

	while ((uint64_t) n * 2 * 512 <= arena_size && n < (UINT32_C(1) << 24))
		n *= 2;
	return n;
}

uint64_t
tides_memtable_base_bytes(uint64_t arena_size)
{
	/* the buckets, then as many words of stem filter */
	return tides_skip_head_size() + (uint64_t) bucket_count(arena_size) * 2 * sizeof(uint64_t);
}

static inline tides_mem_entry *
entry_at(const tides_memtable *m, uint32_t off)
{
	return (tides_mem_entry *) (m->arena + off);
}

static inline const tides_skip_node *
entry_node(const tides_memtable *m, uint32_t off)
{
	return tides_skip_node_at(&m->list, off + (uint32_t) sizeof(tides_mem_entry));
}

static inline bool
node_has_ukey(const tides_skip_node *n, const uint8_t *ukey, size_t ukey_len)
{
	return tides_ukey_cmp(tides_skip_node_key(n), n->key_len - TIDES_TRAILER, ukey, ukey_len) == 0;
}

static inline uint64_t
node_seq(const tides_skip_node *n)
{
	return tides_ikey_seq(tides_skip_node_key(n), n->key_len);
}

/*
 * A bucket word: the offset of the chain's first entry in the low half, and
 * in the high half a 32-bit filter with two bits set per user key in the
 * chain.  Both change in one CAS, so a key whose bits are not all set is not
 * in the chain: most inserts (a key new to the memtable) and most reads of a
 * key the memtable lacks never touch an entry -- each would be a cache miss
 * somewhere in the arena.
 */
typedef struct bucket_ref
{
	_Atomic uint64_t *word;
	uint64_t	bits;			/* the key's filter bits, in the high half */
} bucket_ref;

#define BUCKET_HEAD(w) ((uint32_t) (w))

static inline bucket_ref
bucket_of(const tides_memtable *m, const uint8_t *ukey, size_t ukey_len)
{
	uint64_t	h = tides_hash64(ukey, ukey_len, 0x6d656d);
	bucket_ref	b;

	/* bucket_mask has at most 24 bits; the filter bits come from above them */
	b.word = &m->buckets[h & m->bucket_mask];
	b.bits = ((UINT64_C(1) << ((h >> 52) & 31)) | (UINT64_C(1) << ((h >> 58) & 31))) << 32;
	return b;
}

static inline bool
bucket_may_hold(uint64_t word, uint64_t bits)
{
	return (word & bits) == bits;
}

/* the first entry of the bucket chain (word) whose user key is ukey, or 0 */
static uint32_t
bucket_find(const tides_memtable *m, uint64_t word, const uint8_t *ukey, size_t ukey_len)
{
	for (uint32_t e = BUCKET_HEAD(word); e != 0; e = atomic_load_explicit(&entry_at(m, e)->hnext, memory_order_acquire))
		if (node_has_ukey(entry_node(m, e), ukey, ukey_len))
			return e;
	return 0;
}

/* index the entry at off, whose node is linked (see "Point index" in memtable.h) */
static void
index_entry(tides_memtable *m, bucket_ref b, uint32_t off, const uint8_t *ukey, size_t ukey_len, uint64_t seq)
{
	tides_mem_entry *me = entry_at(m, off);

	atomic_store_explicit(&me->newest, off, memory_order_relaxed);
	for (;;)
	{
		uint64_t	word = atomic_load_explicit(b.word, memory_order_acquire);
		uint32_t	e = bucket_may_hold(word, b.bits) ? bucket_find(m, word, ukey, ukey_len) : 0;

		if (e != 0)
		{
			tides_mem_entry *first = entry_at(m, e);
			uint32_t	cur = atomic_load_explicit(&first->newest, memory_order_acquire);

			while (node_seq(entry_node(m, cur)) < seq &&
				   !atomic_compare_exchange_weak_explicit(&first->newest, &cur, off, memory_order_release,
														  memory_order_acquire))
				;
			return;
		}
		atomic_store_explicit(&me->hnext, BUCKET_HEAD(word), memory_order_relaxed);
		if (atomic_compare_exchange_strong_explicit(b.word, &word, (word & ~UINT64_C(0xffffffff)) | b.bits | off,
													memory_order_release, memory_order_relaxed))
			return;
	}
}

/* ---- stem filter (see "Stem filter" in memtable.h) */

uint64_t
tides_memtable_stem_hash(const uint8_t *stem, size_t len)
{
	return tides_hash64(stem, len, 0x7374656d);
}

/* the word tides_memtable_prefetch_stem loads */
static inline _Atomic uint64_t *
stem_word(const tides_memtable *m, uint64_t h)
{
	return &m->stems[h & m->bucket_mask];
}

/* two bits of the word, from hash bits above the word's index (24 bits at most) */
static inline uint64_t
stem_bits(uint64_t h)
{
	return (UINT64_C(1) << ((h >> 40) & 63)) | (UINT64_C(1) << ((h >> 52) & 63));
}

static void
add_stem(tides_memtable *m, const uint8_t *ukey, size_t ukey_len)
{
	uint64_t	h = tides_memtable_stem_hash(ukey, ukey_len - m->stem_suffix);
	_Atomic uint64_t *w = stem_word(m, h);
	uint64_t	bits = stem_bits(h);

	/* neighbours share stems: most words already have the bits, and a load is cheaper than an OR */
	if ((atomic_load_explicit(w, memory_order_relaxed) & bits) != bits)
		atomic_fetch_or(w, bits);
}

bool
tides_memtable_may_hold_stem(const tides_memtable *m, const uint8_t *stem, size_t len, uint32_t suffix,
							 uint64_t h)
{
	uint64_t	bits = stem_bits(h);

	TIDES_ASSERT(h == tides_memtable_stem_hash(stem, len));
	if (m->stem_suffix == suffix && suffix > 0 && len > 0 &&
		(atomic_load(stem_word(m, h)) & bits) != bits)
		return false;
	return tides_memtable_has_prefix(m, stem, len);
}

/* empty point index; done when a slot is freed, so no writer waits for it */
static void
clear_index(tides_memtable *m)
{
	memset((void *) m->buckets, 0, (size_t) (m->bucket_mask + 1) * sizeof(uint64_t));
	memset((void *) m->stems, 0, (size_t) (m->bucket_mask + 1) * sizeof(uint64_t));
}

void
tides_memtable_setup(tides_memtable *m, uint8_t *arena, uint64_t size, uint32_t stem_suffix)
{
	memset(m, 0, sizeof(*m));
	m->arena = arena;
	m->arena_size = size;
	m->buckets = (_Atomic uint64_t *) (arena + tides_skip_head_size());
	m->bucket_mask = bucket_count(size) - 1;
	m->stems = m->buckets + m->bucket_mask + 1;
	m->stem_suffix = stem_suffix;
	TIDES_ASSERT((uint8_t *) (m->stems + m->bucket_mask + 1) == arena + tides_memtable_base_bytes(size));
	clear_index(m);
	atomic_init(&m->state, TIDES_MEM_FREE);
	atomic_init(&m->pages, TIDES_PAGES_KEPT);
	atomic_init(&m->freed_us, 0);
}

void
tides_memtable_release(tides_memtable *m, uint64_t now_us)
{
	TIDES_ASSERT(atomic_load(&m->state) == TIDES_MEM_FLUSHED);
	TIDES_ASSERT(atomic_load(&m->refs) == 0);
	TIDES_ASSERT(atomic_load(&m->writers) == 0);
	TIDES_ASSERT(atomic_load(&m->pages) == TIDES_PAGES_KEPT);
	clear_index(m);
	atomic_store(&m->freed_us, now_us);
	atomic_store(&m->state, TIDES_MEM_FREE);
}

void
tides_memtable_activate(tides_memtable *m, uint64_t id, uint64_t first_lsn, uint64_t first_seq)
{
	TIDES_ASSERT(atomic_load(&m->state) == TIDES_MEM_FREE);
	TIDES_ASSERT(atomic_load(&m->refs) == 0);
	TIDES_ASSERT(atomic_load(&m->writers) == 0);
	TIDES_ASSERT(atomic_load(&m->pages) != TIDES_PAGES_DISCARDING);
	atomic_store(&m->pages, TIDES_PAGES_KEPT);
	tides_skip_init(&m->list, m->arena);
	atomic_store(&m->used, tides_memtable_base_bytes(m->arena_size));
	atomic_store(&m->placed, 0);
	atomic_store(&m->writers, 0);
	atomic_store(&m->refs, 0);
	m->id = id;
	m->first_lsn = first_lsn;
	m->end_lsn = 0;
	m->first_seq = first_seq;
	m->last_seq = 0;
	atomic_store(&m->entries, 0);
	atomic_store(&m->ext_max, 0);
	atomic_store(&m->deletions, 0);
	atomic_store(&m->state, TIDES_MEM_ACTIVE);
}

void
tides_memtable_seal(tides_memtable *m, uint64_t end_lsn, uint64_t last_seq)
{
	TIDES_ASSERT(atomic_load(&m->state) == TIDES_MEM_ACTIVE);
	TIDES_ASSERT(end_lsn >= m->first_lsn);
	TIDES_ASSERT(last_seq + 1 >= m->first_seq);	/* contiguous seqs, maybe none */
	m->end_lsn = end_lsn;
	m->last_seq = last_seq;
	atomic_store(&m->state, TIDES_MEM_SEALED);
}

void
tides_memtable_mark_flushed(tides_memtable *m)
{
	TIDES_ASSERT(atomic_load(&m->state) == TIDES_MEM_SEALED);
	TIDES_ASSERT(atomic_load(&m->writers) == 0);
	TIDES_ASSERT(atomic_load(&m->refs) > 0);	/* the superversion being replaced */
	atomic_store(&m->state, TIDES_MEM_FLUSHED);
}

/* write an entry's node at a reserved offset (not linked yet) */
static tides_skip_node *
build_node(tides_memtable *m, uint64_t off, uint32_t height, uint64_t seq, int type,
		   const uint8_t *ukey, size_t ukey_len, const uint8_t *val, size_t vlen)
{
	tides_skip_node *n = tides_skip_node_at(&m->list, (uint32_t) (off + sizeof(tides_mem_entry)));
	uint8_t    *k;

	TIDES_ASSERT(atomic_load(&m->state) == TIDES_MEM_ACTIVE ||
				 atomic_load(&m->state) == TIDES_MEM_SEALED);
	TIDES_ASSERT(type == TIDES_KT_VALUE || type == TIDES_KT_DELETE);
	TIDES_ASSERT(seq <= TIDES_MAX_SEQ);	/* not >= first_seq: see memtable.h */
	/* arena bounds: inside the bytes the caller reserved */
	TIDES_ASSERT(off >= tides_memtable_base_bytes(m->arena_size));
	TIDES_ASSERT(off + tides_memtable_entry_size(height, ukey_len, vlen) <= atomic_load(&m->used));
	TIDES_ASSERT(atomic_load(&m->used) <= m->arena_size);
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
	return n;
}

/* link a built node through sp, then index it and count it */
static void
link_entry(tides_memtable *m, tides_skip_splice *sp, uint64_t off, bucket_ref b, uint64_t seq, int type,
		   const uint8_t *ukey, size_t ukey_len)
{
	tides_skip_insert(&m->list, (uint32_t) (off + sizeof(tides_mem_entry)), sp);
	index_entry(m, b, (uint32_t) off, ukey, ukey_len, seq);
	if (m->stem_suffix > 0 && ukey_len > m->stem_suffix)
		add_stem(m, ukey, ukey_len);
	atomic_fetch_add_explicit(&m->entries, 1, memory_order_relaxed);
	if (type == TIDES_KT_DELETE)
		atomic_fetch_add_explicit(&m->deletions, 1, memory_order_relaxed);
}

void
tides_memtable_add(tides_memtable *m, tides_skip_splice *sp, uint64_t off, uint32_t height, uint64_t seq,
				   int type, const uint8_t *ukey, size_t ukey_len, const uint8_t *val, size_t vlen)
{
	bucket_ref	b = bucket_of(m, ukey, ukey_len);

	/* the bucket is a likely cache miss: start loading it while the node is built and linked */
	__builtin_prefetch((const void *) b.word, 1);
	build_node(m, off, height, seq, type, ukey, ukey_len, val, vlen);
	link_entry(m, sp, off, b, seq, type, ukey, ukey_len);
}

void
tides_memtable_add_group(tides_memtable *m, tides_mem_put *puts, int n)
{
	bucket_ref	b[TIDES_SKIP_GROUP];
	tides_skip_splice found[TIDES_SKIP_GROUP];
	const uint8_t *keys[TIDES_SKIP_GROUP];
	size_t		klens[TIDES_SKIP_GROUP];
	int			who[TIDES_SKIP_GROUP];	/* the put of each search */
	int			nsearch = 0;

	TIDES_ASSERT(n >= 0 && n <= TIDES_SKIP_GROUP);
	for (int i = 0; i < n; i++)
	{
		tides_mem_put *p = &puts[i];
		tides_skip_node *node;

		b[i] = bucket_of(m, p->ukey, p->ukey_len);
		__builtin_prefetch((const void *) b[i].word, 1);
		node = build_node(m, p->off, p->height, p->seq, p->type, p->ukey, p->ukey_len, p->val, p->vlen);
		/* judged before any of the group is linked: a run in order still holds after the first */
		if (!tides_skip_splice_holds(&m->list, p->sp, tides_skip_node_key(node), node->key_len))
		{
			keys[nsearch] = tides_skip_node_key(node);
			klens[nsearch] = node->key_len;
			who[nsearch++] = i;
		}
	}
	if (nsearch > 0)
		tides_skip_find_group(&m->list, nsearch, keys, klens, found);
	for (int i = 0, j = 0; i < n; i++)
	{
		tides_mem_put *p = &puts[i];

		if (j < nsearch && who[j] == i)
		{
			link_entry(m, &found[j], p->off, b[i], p->seq, p->type, p->ukey, p->ukey_len);
			/* as after a search from the head: the next key of the run may go next to it */
			*p->sp = found[j];
			p->sp->near = false;
			j++;
		}
		else
			link_entry(m, p->sp, p->off, b[i], p->seq, p->type, p->ukey, p->ukey_len);
	}
}

/*
 * Step along level 0 from the node at *off to the first version of ukey at
 * or below max_seq: 1 and *off at it, 0 when ukey has no such version, -1
 * after max_steps nodes above max_seq.
 */
static int
step_to_seq(const tides_memtable *m, uint32_t *off, const uint8_t *ukey, size_t ukey_len,
			uint64_t max_seq, int max_steps)
{
	for (int steps = 0; *off != 0; steps++, *off = tides_skip_next(&m->list, *off))
	{
		const tides_skip_node *n = tides_skip_node_at(&m->list, *off);

		if (!node_has_ukey(n, ukey, ukey_len))
			return 0;
		if (node_seq(n) <= max_seq)
			return 1;
		if (steps == max_steps)
			return -1;
	}
	return 0;
}

/* the newest version of ukey at or below max_seq through the point index */
#define INDEX_MAX_STEPS 8

bool
tides_memtable_get(const tides_memtable *m, const uint8_t *ukey, size_t ukey_len,
				   uint64_t max_seq, int *type, uint64_t *seq, const uint8_t **val, size_t *vlen)
{
	bucket_ref	b = bucket_of(m, ukey, ukey_len);
	uint64_t	word = atomic_load_explicit(b.word, memory_order_acquire);
	const tides_skip_node *n;
	uint8_t		stackbuf[256];
	uint8_t    *target = stackbuf;
	uint32_t	e,
				off;
	int			r;

	if (!bucket_may_hold(word, b.bits) || (e = bucket_find(m, word, ukey, ukey_len)) == 0)
		return false;
	/* versions newer than max_seq come first: step past a few */
	off = atomic_load_explicit(&entry_at(m, e)->newest, memory_order_acquire) + (uint32_t) sizeof(tides_mem_entry);
	r = step_to_seq(m, &off, ukey, ukey_len, max_seq, INDEX_MAX_STEPS);
	if (r < 0 && ukey_len + TIDES_TRAILER > sizeof(stackbuf) && (target = malloc(ukey_len + TIDES_TRAILER)) == NULL)
		r = step_to_seq(m, &off, ukey, ukey_len, max_seq, INT_MAX);	/* no memory to seek a long key */
	else if (r < 0)
	{
		/* many versions above max_seq (an old snapshot): seek */
		tides_ikey_make(target, ukey, ukey_len, max_seq, TIDES_KT_SEEK);
		off = tides_skip_seek(&m->list, target, ukey_len + TIDES_TRAILER);
		if (target != stackbuf)
			free(target);
		r = off != 0 && node_has_ukey(tides_skip_node_at(&m->list, off), ukey, ukey_len);
	}
	if (r <= 0)
		return false;

	n = tides_skip_node_at(&m->list, off);
	*type = tides_ikey_type(tides_skip_node_key(n), n->key_len);
	*seq = node_seq(n);
	*val = tides_skip_node_value(n);
	*vlen = n->val_len;
	return true;
}

/*
 * *off: the first node whose user key is at or after ukey (0: none), of any
 * seq.  false without memory for a long search key.
 */
static bool
seek_ukey(const tides_memtable *m, const uint8_t *ukey, size_t len, uint32_t *off)
{
	uint8_t		stackbuf[256];
	uint8_t    *target = stackbuf;

	if (len + TIDES_TRAILER > sizeof(stackbuf) && (target = malloc(len + TIDES_TRAILER)) == NULL)
		return false;
	tides_ikey_make(target, ukey, len, TIDES_MAX_SEQ, TIDES_KT_SEEK);
	*off = tides_skip_seek(&m->list, target, len + TIDES_TRAILER);
	if (target != stackbuf)
		free(target);
	return true;
}

/*
 * Does the memtable hold a key starting with prefix, of any seq?  Every
 * entry whose write returned is linked.  The first node at or after prefix
 * in user-key order tells: keys with the prefix are the contiguous run that
 * starts there.  Without memory for a long search key: true (the caller
 * treats true as "maybe").
 */
bool
tides_memtable_has_prefix(const tides_memtable *m, const uint8_t *prefix, size_t len)
{
	const tides_skip_node *n;
	uint32_t	off;

	if (!seek_ukey(m, prefix, len, &off))
		return true;
	if (off == 0)
		return false;
	n = tides_skip_node_at(&m->list, off);
	return n->key_len - TIDES_TRAILER >= len && memcmp(tides_skip_node_key(n), prefix, len) == 0;
}

bool
tides_memtable_newer_in_range(const tides_memtable *m, const uint8_t *lower, size_t llen,
							  const uint8_t *upper, size_t ulen, uint64_t since, int max_steps)
{
	uint32_t	off;

	if (!seek_ukey(m, lower, llen, &off))
		return true;
	for (int steps = 0; off != 0; steps++, off = tides_skip_next(&m->list, off))
	{
		const tides_skip_node *n = tides_skip_node_at(&m->list, off);

		if (tides_ukey_cmp(tides_skip_node_key(n), n->key_len - TIDES_TRAILER, upper, ulen) >= 0)
			return false;
		if (node_seq(n) > since || steps == max_steps)
			return true;
	}
	return false;
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
	if (mi->pos != 0)
		tides_skip_prefetch_next(&mi->m->list, mi->pos);
}

static void
mi_first(tides_iiter *it)
{
	mem_iter   *mi = (mem_iter *) it;

	mi->pos = tides_skip_first(&mi->m->list);
	if (mi->pos != 0)
		tides_skip_prefetch_next(&mi->m->list, mi->pos);
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
	if (mi->pos != 0)
		tides_skip_prefetch_next(&mi->m->list, mi->pos);
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
	mi_seek, mi_first, mi_last, mi_next, mi_prev, mi_valid, mi_key, mi_value, mi_destroy, NULL
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
