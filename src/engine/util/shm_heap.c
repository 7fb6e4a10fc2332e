/*
 * shm_heap.c -- size-class allocator over a fixed shared range.
 *
 * Each chunk starts with a 16-byte header holding its class, so that free()
 * needs no size; the header also keeps payloads 16-byte aligned.  Its magic
 * is set while the chunk is allocated and cleared when it is freed, which
 * lets free() assert that it gets a live chunk of this heap (no double or
 * wild free).
 */
#include "util/shm_heap.h"

#include <string.h>

#define HDR 16
#define MIN_SHIFT 5

typedef struct chunk_hdr
{
	uint32_t	cls;
	uint32_t	magic;
	uint64_t	pad;
} chunk_hdr;

#define CHUNK_MAGIC 0x54494445u	/* "TIDE" */

void
tides_shm_heap_init(tides_shm_heap *h, void *mem, size_t size)
{
	tides_spin_init(&h->lock);
	h->start = mem;
	h->top = mem;
	h->end = (uint8_t *) mem + size;
	for (int i = 0; i < TIDES_SHM_CLASSES; i++)
		h->free_list[i] = NULL;
	h->bytes_in_use = 0;
	h->peak_in_use = 0;
	h->limit = 0;
}

void
tides_shm_heap_set_limit(tides_shm_heap *h, uint64_t limit)
{
	tides_spin_lock(&h->lock);
	h->limit = limit;
	tides_spin_unlock(&h->lock);
}

static int
size_class(size_t n)
{
	size_t		total = n + HDR;
	int			cls = 0;

	while (((size_t) 1 << (cls + MIN_SHIFT)) < total)
		cls++;
	return cls;
}

void *
tides_shm_alloc(tides_shm_heap *h, size_t n)
{
	int			cls;
	size_t		csize;
	chunk_hdr  *c;

	if (n > TIDES_SHM_MAX_ALLOC)
		return NULL;
	cls = size_class(n);
	csize = (size_t) 1 << (cls + MIN_SHIFT);
	TIDES_ASSERT(cls < TIDES_SHM_CLASSES && csize >= n + HDR);

	tides_spin_lock(&h->lock);
	c = h->free_list[cls];
	if (h->limit != 0 && h->bytes_in_use + csize > h->limit)
		c = NULL;
	else if (c != NULL)
	{
		TIDES_ASSERT(c->magic == 0 && c->cls == (uint32_t) cls);	/* a freed chunk of its class */
		memcpy(&h->free_list[cls], (uint8_t *) c + HDR, sizeof(void *));
	}
	else if ((size_t) (h->end - h->top) >= csize)
	{
		c = (chunk_hdr *) h->top;
		h->top += csize;
	}
	if (c != NULL)
	{
		/* inside the heap, and not handed out already */
		TIDES_ASSERT((uint8_t *) c >= h->start && (uint8_t *) c + csize <= h->top);
		h->bytes_in_use += csize;
		if (h->bytes_in_use > h->peak_in_use)
			h->peak_in_use = h->bytes_in_use;
	}
	tides_spin_unlock(&h->lock);

	if (c == NULL)
		return NULL;
	c->cls = (uint32_t) cls;
	c->magic = CHUNK_MAGIC;
	return (uint8_t *) c + HDR;
}

void *
tides_shm_alloc_zero(tides_shm_heap *h, size_t n)
{
	void	   *p = tides_shm_alloc(h, n);

	if (p != NULL)
		memset(p, 0, n);
	return p;
}

void
tides_shm_free(tides_shm_heap *h, void *p)
{
	chunk_hdr  *c;
	int			cls;

	if (p == NULL)
		return;
	c = (chunk_hdr *) ((uint8_t *) p - HDR);
	cls = (int) c->cls;
	TIDES_ASSERT((uint8_t *) c >= h->start && (uint8_t *) c < h->top);
	TIDES_ASSERT(c->magic == CHUNK_MAGIC && cls >= 0 && cls < TIDES_SHM_CLASSES);
	c->magic = 0;
	tides_spin_lock(&h->lock);
	TIDES_ASSERT(h->bytes_in_use >= (size_t) 1 << (cls + MIN_SHIFT));
	memcpy(p, &h->free_list[cls], sizeof(void *));
	h->free_list[cls] = c;
	h->bytes_in_use -= (size_t) 1 << (cls + MIN_SHIFT);
	tides_spin_unlock(&h->lock);
}
