/*
 * buf.c -- growth policy of tides_buf.
 */
#include "util/buf.h"

#include <stdlib.h>

void
tides_buf_init(tides_buf *b)
{
	b->data = NULL;
	b->len = b->cap = 0;
	b->oom = false;
}

void
tides_buf_free(tides_buf *b)
{
	free(b->data);
	tides_buf_init(b);
}

bool
tides_buf_grow(tides_buf *b, size_t extra)
{
	size_t		need = b->len + extra;
	size_t		cap;
	uint8_t    *p;

	if (b->oom)
		return false;
	if (need <= b->cap)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	p = realloc(b->data, cap);
	if (p == NULL)
	{
		b->oom = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}
