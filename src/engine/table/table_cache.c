/*
 * table_cache.c -- per-process LRU of open SSTable readers.
 *
 * A small chained hash table maps file numbers to nodes; unpinned nodes sit
 * on an LRU list (pinned ones are off it, so eviction never has to skip
 * them).  When a new table would exceed max_open, the least recently used
 * unpinned readers are closed first; if every reader is pinned the cache
 * goes over its limit rather than fail a read, and shrinks back as pins are
 * released.  A node evicted while pinned (its file was deleted) is "doomed":
 * it leaves the hash table at once and is closed by its last release.
 *
 * A pthread mutex makes the cache safe for a process's threads (the
 * standalone driver's workers); it is held while a table is opened, which
 * is a few reads, so that two threads never open the same file twice.
 */
#include "table/table_cache.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/assert.h"

typedef struct tc_node
{
	uint64_t	file_number;
	tides_sst  *sst;
	uint32_t	pins;
	bool		doomed;
	struct tc_node *hnext;		/* hash chain */
	struct tc_node *prev,
			   *next;			/* LRU list, only while unpinned */
} tc_node;

struct tides_table_cache
{
	tides_table_env env;
	char	   *dir;
	uint32_t	max_open;
	uint32_t	count;			/* nodes in the hash table */
	uint32_t	nbuckets;
	tc_node   **buckets;
	tc_node		lru;			/* sentinel: lru.next is the oldest */
	tc_node    *doomed;			/* evicted while pinned, chained by hnext */
	pthread_mutex_t mu;
};

void
tides_sst_file_name(char *buf, size_t cap, uint64_t file_number)
{
	snprintf(buf, cap, "%06llu.sst", (unsigned long long) file_number);
}

tides_table_cache *
tides_table_cache_new(const tides_table_env *env, const char *dir, uint32_t max_open)
{
	tides_table_cache *tc = calloc(1, sizeof(*tc));

	if (tc == NULL)
		return NULL;
	tc->env = *env;
	tc->dir = strdup(dir);
	tc->max_open = max_open ? max_open : 1;
	tc->nbuckets = 64;
	while (tc->nbuckets < tc->max_open * 2 && tc->nbuckets < (1u << 20))
		tc->nbuckets <<= 1;
	tc->buckets = calloc(tc->nbuckets, sizeof(tc_node *));
	if (tc->dir == NULL || tc->buckets == NULL)
	{
		free(tc->dir);
		free(tc->buckets);
		free(tc);
		return NULL;
	}
	tc->lru.next = tc->lru.prev = &tc->lru;
	pthread_mutex_init(&tc->mu, NULL);
	return tc;
}

static inline uint32_t
bucket_of(const tides_table_cache *tc, uint64_t fn)
{
	return (uint32_t) ((fn * 0x9E3779B97F4A7C15ull) >> 40) & (tc->nbuckets - 1);
}

static void
lru_remove(tc_node *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = NULL;
}

static void
lru_append(tides_table_cache *tc, tc_node *n)
{
	n->next = &tc->lru;
	n->prev = tc->lru.prev;
	n->prev->next = n;
	tc->lru.prev = n;
}

static void
hash_remove(tides_table_cache *tc, tc_node *n)
{
	tc_node   **pp = &tc->buckets[bucket_of(tc, n->file_number)];

	while (*pp != NULL && *pp != n)
		pp = &(*pp)->hnext;
	if (*pp == n)
		*pp = n->hnext;
	tc->count--;
}

/* close unpinned readers, oldest first, until at most target remain */
static void
shrink(tides_table_cache *tc, uint32_t target)
{
	while (tc->count > target && tc->lru.next != &tc->lru)
	{
		tc_node    *n = tc->lru.next;

		lru_remove(n);
		hash_remove(tc, n);
		tides_sst_close(n->sst);
		free(n);
	}
}

tides_status
tides_table_cache_get(tides_table_cache *tc, uint64_t file_number, uint64_t file_size,
					  tides_sst **out, tides_error *err)
{
	tc_node    *n;
	char		name[32];
	char	   *path;
	int			fd;
	tides_status s;

	pthread_mutex_lock(&tc->mu);
	for (n = tc->buckets[bucket_of(tc, file_number)]; n != NULL; n = n->hnext)
	{
		if (n->file_number == file_number)
		{
			if (n->pins++ == 0)
				lru_remove(n);
			*out = n->sst;
			pthread_mutex_unlock(&tc->mu);
			return TIDES_OK;
		}
	}

	tides_sst_file_name(name, sizeof(name), file_number);
	path = malloc(strlen(tc->dir) + sizeof(name) + 2);
	n = calloc(1, sizeof(*n));
	if (path == NULL || n == NULL)
	{
		pthread_mutex_unlock(&tc->mu);
		free(path);
		free(n);
		return tides_fail(err, TIDES_NO_MEMORY, "out of memory opening %s", name);
	}
	sprintf(path, "%s/%s", tc->dir, name);

	/* make room first: the new descriptor must fit under the limit */
	shrink(tc, tc->max_open - 1);
	fd = tc->env.vfs->open(tc->env.vfs, path, O_RDONLY, 0);
	if (fd < 0)
	{
		pthread_mutex_unlock(&tc->mu);
		s = tides_fail_io(err, fd, "open", path);
		free(path);
		free(n);
		return s;
	}
	s = tides_sst_open(&tc->env, fd, file_number, file_size, path, &n->sst, err);
	free(path);
	if (s != TIDES_OK)
	{
		pthread_mutex_unlock(&tc->mu);
		free(n);
		return s;
	}
	n->file_number = file_number;
	n->pins = 1;
	n->hnext = tc->buckets[bucket_of(tc, file_number)];
	tc->buckets[bucket_of(tc, file_number)] = n;
	tc->count++;
	*out = n->sst;
	pthread_mutex_unlock(&tc->mu);
	return TIDES_OK;
}

/* find the node of a pinned reader: in the hash table or among the doomed */
static tc_node *
find_node(tides_table_cache *tc, tides_sst *t, tc_node ***slot)
{
	tc_node   **pp;

	for (pp = &tc->buckets[bucket_of(tc, tides_sst_file_number(t))]; *pp; pp = &(*pp)->hnext)
		if ((*pp)->sst == t)
		{
			*slot = pp;
			return *pp;
		}
	for (pp = &tc->doomed; *pp; pp = &(*pp)->hnext)
		if ((*pp)->sst == t)
		{
			*slot = pp;
			return *pp;
		}
	return NULL;
}

void
tides_table_cache_release(tides_table_cache *tc, tides_sst *t)
{
	tc_node    *n;
	tc_node   **slot;

	if (t == NULL)
		return;
	pthread_mutex_lock(&tc->mu);
	n = find_node(tc, t, &slot);
	TIDES_ASSERT(n != NULL && n->pins > 0);	/* a pin is released once */
	if (n == NULL || n->pins == 0)
	{
		/* releasing what was never pinned: a caller bug; ignore it */
		pthread_mutex_unlock(&tc->mu);
		return;
	}
	if (--n->pins == 0)
	{
		if (n->doomed)
		{
			*slot = n->hnext;
			tides_sst_close(n->sst);
			free(n);
		}
		else
		{
			lru_append(tc, n);
			if (tc->count > tc->max_open)
				shrink(tc, tc->max_open);
		}
	}
	pthread_mutex_unlock(&tc->mu);
}

/* close n if unpinned, else doom it (caller holds the mutex) */
static void
evict_node(tides_table_cache *tc, tc_node *n)
{
	hash_remove(tc, n);
	if (n->pins == 0)
	{
		lru_remove(n);
		tides_sst_close(n->sst);
		free(n);
	}
	else
	{
		n->doomed = true;
		n->hnext = tc->doomed;
		tc->doomed = n;
	}
}

void
tides_table_cache_evict(tides_table_cache *tc, uint64_t file_number)
{
	pthread_mutex_lock(&tc->mu);
	for (tc_node *n = tc->buckets[bucket_of(tc, file_number)]; n != NULL; n = n->hnext)
	{
		if (n->file_number == file_number)
		{
			evict_node(tc, n);
			break;
		}
	}
	pthread_mutex_unlock(&tc->mu);
}

void
tides_table_cache_evict_all(tides_table_cache *tc)
{
	pthread_mutex_lock(&tc->mu);
	shrink(tc, 0);
	pthread_mutex_unlock(&tc->mu);
}

/* ---- iterators that hold a pin */

static void
iter_unpin(void *arg, tides_sst *t)
{
	tides_table_cache_release((tides_table_cache *) arg, t);
}

tides_iiter *
tides_table_cache_iter(tides_table_cache *tc, uint64_t file_number, uint64_t file_size,
					   bool fill_cache)
{
	tides_error err;
	tides_sst  *t;
	tides_iiter *it;

	tides_error_clear(&err);
	if (tides_table_cache_get(tc, file_number, file_size, &t, &err) != TIDES_OK)
		return tides_iiter_empty(&err);
	it = tides_sst_iter_new(t, fill_cache);
	if (it == NULL)
	{
		tides_table_cache_release(tc, t);
		tides_fail(&err, TIDES_NO_MEMORY, "out of memory creating an iterator");
		return tides_iiter_empty(&err);
	}
	tides_sst_iter_on_destroy(it, iter_unpin, tc);
	return it;
}

/* number of readers open (for tests and stats) */
uint32_t
tides_table_cache_open_count(tides_table_cache *tc)
{
	uint32_t	n = 0;

	pthread_mutex_lock(&tc->mu);
	n = tc->count;
	for (tc_node *d = tc->doomed; d != NULL; d = d->hnext)
		n++;
	pthread_mutex_unlock(&tc->mu);
	return n;
}

void
tides_table_cache_free(tides_table_cache *tc)
{
	if (tc == NULL)
		return;
	/* every pin must have been released; close whatever is left anyway */
	for (uint32_t b = 0; b < tc->nbuckets; b++)
	{
		tc_node    *n = tc->buckets[b];

		while (n != NULL)
		{
			tc_node    *nx = n->hnext;

			tides_sst_close(n->sst);
			free(n);
			n = nx;
		}
	}
	while (tc->doomed != NULL)
	{
		tc_node    *nx = tc->doomed->hnext;

		tides_sst_close(tc->doomed->sst);
		free(tc->doomed);
		tc->doomed = nx;
	}
	pthread_mutex_destroy(&tc->mu);
	free(tc->buckets);
	free(tc->dir);
	free(tc);
}
