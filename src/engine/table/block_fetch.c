/*
 * block_fetch.c -- data blocks read and decoded ahead of a forward reader
 * by a helper thread (block_fetch.h).
 *
 * The slots form a ring, ordered by two counters: `fetched` moves only in
 * the helper, `taken` only in the reader; each reads the other's without a
 * lock (sequentially consistent atomics: a slot's contents are published
 * by the counter that passes it).  Slot i % DEPTH is the helper's while
 * taken + DEPTH > i >= fetched, the reader's while taken <= i < fetched.
 * The mutex and the two conditions serve only for sleeping, with
 * block_pipe.c's handshake: a side that goes to sleep first says so (a
 * flag, or the count it waits for, set under the mutex), then looks at the
 * other's counter again; the other first moves its counter, then looks at
 * the flag -- one of them sees the other, and the sleeper is woken under
 * the mutex it waits with.  An idle helper (ring full) is woken when BATCH
 * slots are free, not one: fewer wakeups.
 *
 * The helper stops for good (`ended`) at the table's last block, at a stop
 * request, and at any failure of its own (a read, a checksum, memory): it
 * does not report failures, the reader's own read of the same block does.
 */
#include "table/block_fetch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "table/block.h"
#include "util/assert.h"
#include "util/thread.h"

typedef struct fetch_slot
{
	tides_block_handle h;
	tides_buf	buf;			/* the block's contents (decoded) */
} fetch_slot;

struct tides_block_fetch
{
	const tides_block_source *src;
	pthread_t	helper;
	tides_helper_sync sync;		/* to_helper: slots freed, or stop; to_caller: fetched moved, or ended */
	atomic_bool stop;
	atomic_bool ended;			/* the helper fetches no more */
	atomic_bool helper_idle;	/* the helper sleeps (or is about to) for room */
	_Atomic uint64_t reader_wants;	/* the reader sleeps until fetched >= this (0: no) */
	_Atomic uint64_t fetched;
	_Atomic uint64_t taken;
	_Atomic uint64_t bytes_read;	/* by the helper; the reader counts them */
	_Atomic uint64_t blocks_read;
	uint64_t	bytes_counted;
	uint64_t	blocks_counted;
	/* the helper's own walk over the index */
	tides_block_iter top;
	tides_block_iter part;
	tides_buf	part_buf;
	tides_buf	top_key;		/* where the walk starts */
	tides_buf	part_key;
	tides_readahead ra;
	tides_error err;			/* the helper's; never reported */
	fetch_slot	slots[TIDES_BLOCK_FETCH_DEPTH];
};

/* read the block at h into out through the helper's window */
static bool
fetch_block(tides_block_fetch *f, const uint8_t *hv, size_t hlen, tides_buf *out,
			tides_block_handle *h)
{
	const uint8_t *d;
	size_t		n;
	uint64_t	nread = 0;
	tides_status s;

	if (tides_handle_decode(hv, hv + hlen, h) == NULL)
		return false;
	s = tides_read_block_ahead(f->src, *h, &f->ra, out, &d, &n, &f->err, &nread);
	atomic_fetch_add(&f->bytes_read, nread);
	if (s != TIDES_OK)
		return false;
	atomic_fetch_add(&f->blocks_read, 1);
	TIDES_ASSERT(d == out->data && n == out->len);
	return true;
}

/* load the partition under the top entry into f->part */
static bool
enter_part(tides_block_fetch *f)
{
	tides_block_handle h;

	return fetch_block(f, f->top.val, f->top.vlen, &f->part_buf, &h) &&
		tides_block_iter_reset(&f->part, f->part_buf.data, f->part_buf.len, f->src->fname, h.offset);
}

/* position both index levels on the reader's block (entries compared whole) */
static bool
walk_start(tides_block_fetch *f)
{
	tides_block_iter_seek(&f->top, f->top_key.data, f->top_key.len);
	if (!f->top.valid || f->top.klen != f->top_key.len ||
		memcmp(f->top.key, f->top_key.data, f->top_key.len) != 0 || !enter_part(f))
		return false;
	tides_block_iter_seek(&f->part, f->part_key.data, f->part_key.len);
	return f->part.valid && f->part.klen == f->part_key.len &&
		memcmp(f->part.key, f->part_key.data, f->part_key.len) == 0;
}

/* the next data block's handle entry (in f->part); false at the end */
static bool
walk_next(tides_block_fetch *f)
{
	tides_block_iter_next(&f->part);
	while (!f->part.valid)
	{
		if (f->err.code != TIDES_OK)
			return false;
		tides_block_iter_next(&f->top);
		if (!f->top.valid || !enter_part(f))
			return false;
		tides_block_iter_first(&f->part);
	}
	return true;
}

/* wait for BATCH free slots (or a stop); false: stop */
static bool
wait_room(tides_block_fetch *f, uint64_t fetched)
{
	bool		stop;

	pthread_mutex_lock(&f->sync.mu);
	atomic_store(&f->helper_idle, true);
	while (fetched - atomic_load(&f->taken) > TIDES_BLOCK_FETCH_DEPTH - TIDES_BLOCK_FETCH_BATCH &&
		   !atomic_load(&f->stop))
		pthread_cond_wait(&f->sync.to_helper, &f->sync.mu);
	atomic_store(&f->helper_idle, false);
	stop = atomic_load(&f->stop);
	pthread_mutex_unlock(&f->sync.mu);
	return !stop;
}

static void
wake_reader(tides_block_fetch *f)
{
	pthread_mutex_lock(&f->sync.mu);
	pthread_cond_signal(&f->sync.to_caller);
	pthread_mutex_unlock(&f->sync.mu);
}

static void *
helper_main(void *arg)
{
	tides_block_fetch *f = arg;

	if (walk_start(f))
	{
		while (!atomic_load(&f->stop) && walk_next(f))
		{
			uint64_t	i = atomic_load(&f->fetched);
			fetch_slot *s = &f->slots[i % TIDES_BLOCK_FETCH_DEPTH];
			uint64_t	want;

			if (i - atomic_load(&f->taken) == TIDES_BLOCK_FETCH_DEPTH && !wait_room(f, i))
				break;
			if (!fetch_block(f, f->part.val, f->part.vlen, &s->buf, &s->h))
				break;
			atomic_store(&f->fetched, i + 1);
			want = atomic_load(&f->reader_wants);
			if (want != 0 && i + 1 >= want)
				wake_reader(f);
		}
	}
	atomic_store(&f->ended, true);
	wake_reader(f);
	return NULL;
}

static bool
buf_copy(tides_buf *b, const uint8_t *p, size_t n)
{
	tides_buf_reset(b);
	tides_buf_append(b, p, n);
	return !b->oom;
}

static void
release(tides_block_fetch *f)
{
	tides_block_iter_free(&f->top);
	tides_block_iter_free(&f->part);
	tides_buf_free(&f->part_buf);
	tides_buf_free(&f->top_key);
	tides_buf_free(&f->part_key);
	tides_readahead_free(&f->ra);
	for (int i = 0; i < TIDES_BLOCK_FETCH_DEPTH; i++)
		tides_buf_free(&f->slots[i].buf);
	free(f);
}

tides_block_fetch *
tides_block_fetch_new(const tides_block_source *src, const uint8_t *top, size_t top_len,
					  const uint8_t *top_key, size_t top_klen,
					  const uint8_t *part_key, size_t part_klen)
{
	tides_block_fetch *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return NULL;
	f->src = src;
	tides_error_clear(&f->err);
	tides_block_iter_init(&f->top, true, &f->err);
	tides_block_iter_init(&f->part, true, &f->err);
	tides_buf_init(&f->part_buf);
	tides_buf_init(&f->top_key);
	tides_buf_init(&f->part_key);
	tides_readahead_init(&f->ra);
	for (int i = 0; i < TIDES_BLOCK_FETCH_DEPTH; i++)
		tides_buf_init(&f->slots[i].buf);
	if (!tides_block_iter_reset(&f->top, top, top_len, src->fname, 0) ||
		!buf_copy(&f->top_key, top_key, top_klen) || !buf_copy(&f->part_key, part_key, part_klen) ||
		!tides_helper_start(&f->helper, &f->sync, helper_main, f))
	{
		release(f);
		return NULL;
	}
	return f;
}

void
tides_block_fetch_free(tides_block_fetch *f)
{
	if (f == NULL)
		return;
	pthread_mutex_lock(&f->sync.mu);
	atomic_store(&f->stop, true);
	pthread_cond_signal(&f->sync.to_helper);
	pthread_mutex_unlock(&f->sync.mu);
	pthread_join(f->helper, NULL);
	tides_helper_sync_destroy(&f->sync);
	tides_block_fetch_account(f);
	release(f);
}

/* wait until the helper has fetched block i, or ended */
static void
wait_fetched(tides_block_fetch *f, uint64_t i)
{
	pthread_mutex_lock(&f->sync.mu);
	atomic_store(&f->reader_wants, i + 1);
	while (atomic_load(&f->fetched) <= i && !atomic_load(&f->ended))
		pthread_cond_wait(&f->sync.to_caller, &f->sync.mu);
	atomic_store(&f->reader_wants, 0);
	pthread_mutex_unlock(&f->sync.mu);
}

bool
tides_block_fetch_take(tides_block_fetch *f, tides_block_handle h, tides_buf *into)
{
	uint64_t	i = atomic_load(&f->taken);
	fetch_slot *s = &f->slots[i % TIDES_BLOCK_FETCH_DEPTH];
	tides_buf	t;

	if (atomic_load(&f->fetched) <= i)
	{
		wait_fetched(f, i);
		if (atomic_load(&f->fetched) <= i)
			return false;		/* ended before it */
	}
	if (s->h.offset != h.offset || s->h.size != h.size)
		return false;
	t = *into;
	*into = s->buf;
	s->buf = t;
	atomic_store(&f->taken, i + 1);
	/* a helper waiting for room is woken once a batch of slots is free */
	if (atomic_load(&f->helper_idle) &&
		atomic_load(&f->fetched) - (i + 1) <= TIDES_BLOCK_FETCH_DEPTH - TIDES_BLOCK_FETCH_BATCH)
	{
		pthread_mutex_lock(&f->sync.mu);
		pthread_cond_signal(&f->sync.to_helper);
		pthread_mutex_unlock(&f->sync.mu);
	}
	return true;
}

void
tides_block_fetch_account(tides_block_fetch *f)
{
	uint64_t	bytes = atomic_load(&f->bytes_read);
	uint64_t	blocks = atomic_load(&f->blocks_read);

	if (bytes != f->bytes_counted || blocks != f->blocks_counted)
		tides_count_reads(f->src, bytes - f->bytes_counted, blocks - f->blocks_counted);
	f->bytes_counted = bytes;
	f->blocks_counted = blocks;
}
