/*
 * iterator.c -- the empty iterator, used where a source has nothing to give
 * or could not be opened (it then carries the error).
 */
#include "util/iterator.h"

#include <stdlib.h>

static void empty_seek(tides_iiter *it, const uint8_t *k, size_t n) { (void) it; (void) k; (void) n; }
static void empty_move(tides_iiter *it) { (void) it; }
static bool empty_valid(const tides_iiter *it) { (void) it; return false; }

static const uint8_t *
empty_kv(const tides_iiter *it, size_t *n)
{
	(void) it;
	*n = 0;
	return NULL;
}

static void
empty_destroy(tides_iiter *it)
{
	free(it);
}

static const tides_iiter_ops empty_ops = {
	empty_seek, empty_move, empty_move, empty_move, empty_move,
	empty_valid, empty_kv, empty_kv, empty_destroy, NULL
};

tides_iiter *
tides_iiter_empty(const tides_error *err)
{
	tides_iiter *it = malloc(sizeof(*it));

	if (it == NULL)
		return NULL;
	tides_iiter_base_init(it, &empty_ops);
	if (err != NULL)
		it->err = *err;
	return it;
}
