/*
 * block_pipe.c -- data blocks encoded in order, at once or by a helper
 * thread (block_pipe.h).
 *
 * The slots form a ring.  Three counters order everything: `submitted` and
 * `taken` move only in the caller, `encoded` only in the helper; the first
 * two sides read each other's counter without a lock (sequentially
 * consistent atomics: a slot's contents are published by the counter that
 * passes it).  The mutex and the two conditions serve only for sleeping,
 * and each side wakes the other for a batch, not a block: an idle helper
 * when BATCH blocks wait, a waiting caller when BATCH blocks (or all
 * submitted) are encoded.  A side that goes to sleep first says so (flag
 * under the mutex), then looks at the other's counter again; the other
 * first moves its counter, then looks at the flag -- so one of them sees
 * the other, and the sleeper is woken under the mutex it waits with.  Block i's slot
 * (i % DEPTH) is the caller's while it fills it (i == submitted), the
 * helper's while encoded <= i < submitted, and the caller's to read while
 * taken <= i < encoded.  Submit needs submitted - taken < DEPTH, so the
 * slot it fills held a block already released, hence encoded: the helper
 * is done with it.
 */
#include "table/block_pipe.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "table/format.h"
#include "util/assert.h"
#include "util/thread.h"

typedef struct pipe_slot
{
	tides_buf	raw;			/* the block as submitted (helper mode) */
	size_t		raw_len;
	bool		lost;			/* the copy for the helper ran out of memory */
	tides_buf	out;			/* stored bytes + trailer */
	uint64_t	stored_size;
	bool		oom;
} pipe_slot;

struct tides_block_pipe
{
	tides_compressor comp;		/* the encoder's (helper's or caller's) */
	tides_buf	scratch;
	bool		compress;
	bool		threaded;
	uint32_t	depth;			/* slots in use: DEPTH with a helper, else 1 */
	pthread_t	helper;
	tides_helper_sync sync;		/* to_helper: submitted moved, or stop; to_caller: encoded moved */
	bool		stop;			/* under mu */
	atomic_bool helper_idle;	/* the helper sleeps (or is about to) for work */
	_Atomic uint64_t caller_wants;	/* the caller sleeps until encoded >= this (0: no) */
	_Atomic uint64_t submitted;
	_Atomic uint64_t encoded;
	uint64_t	taken;
	uint64_t	raw_pending;	/* raw bytes submitted and not yet taken */
	pipe_slot	slots[TIDES_BLOCK_PIPE_DEPTH];
};

void
tides_block_encode(tides_compressor *c, tides_buf *scratch, const uint8_t *raw, size_t n,
				   bool compress, tides_buf *dest, uint64_t *rel, uint64_t *size)
{
	tides_compression type = TIDES_COMPRESS_NONE;
	const uint8_t *stored = raw;
	uint8_t		trailer[TIDES_BLOCK_TRAILER];

	if (compress)
	{
		type = tides_compress(c, raw, n, scratch);
		if (type != TIDES_COMPRESS_NONE)
		{
			stored = scratch->data;
			n = scratch->len;
		}
	}
	tides_block_trailer(trailer, stored, n, (uint8_t) type);
	*rel = dest->len;
	*size = n;
	tides_buf_append(dest, stored, n);
	tides_buf_append(dest, trailer, sizeof(trailer));
}

static void
encode_slot(tides_block_pipe *p, pipe_slot *s, const uint8_t *raw, size_t n)
{
	uint64_t	rel;

	tides_buf_reset(&s->out);
	tides_block_encode(&p->comp, &p->scratch, raw, n, p->compress, &s->out, &rel, &s->stored_size);
	s->oom = s->out.oom || p->scratch.oom;
	if (p->scratch.oom)
	{
		/* the sticky flag would fail every later block: start afresh */
		tides_buf_free(&p->scratch);
		tides_buf_init(&p->scratch);
	}
}

static void *
helper_main(void *arg)
{
	tides_block_pipe *p = arg;

	for (;;)
	{
		uint64_t	e = atomic_load(&p->encoded);
		uint64_t	want;
		pipe_slot  *s;

		if (e == atomic_load(&p->submitted))
		{
			bool		stop;

			pthread_mutex_lock(&p->sync.mu);
			atomic_store(&p->helper_idle, true);
			while (e == atomic_load(&p->submitted) && !p->stop)
				pthread_cond_wait(&p->sync.to_helper, &p->sync.mu);
			atomic_store(&p->helper_idle, false);
			stop = p->stop;
			pthread_mutex_unlock(&p->sync.mu);
			if (stop)
				return NULL;
			continue;
		}
		s = &p->slots[e % p->depth];
		if (!s->lost)
			encode_slot(p, s, s->raw.data, s->raw_len);
		atomic_store(&p->encoded, e + 1);
		want = atomic_load(&p->caller_wants);
		if (want != 0 && e + 1 >= want)
		{
			pthread_mutex_lock(&p->sync.mu);
			pthread_cond_signal(&p->sync.to_caller);
			pthread_mutex_unlock(&p->sync.mu);
		}
	}
}

tides_block_pipe *
tides_block_pipe_new(tides_compression type, int level, bool helper)
{
	tides_block_pipe *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	tides_compressor_init(&p->comp, type, level);
	p->compress = type != TIDES_COMPRESS_NONE;
	tides_buf_init(&p->scratch);
	for (int i = 0; i < TIDES_BLOCK_PIPE_DEPTH; i++)
	{
		tides_buf_init(&p->slots[i].raw);
		tides_buf_init(&p->slots[i].out);
	}
	p->depth = helper ? TIDES_BLOCK_PIPE_DEPTH : 1;	/* before the helper reads it */
	p->threaded = helper && tides_helper_start(&p->helper, &p->sync, helper_main, p);
	if (!p->threaded)
		p->depth = 1;
	return p;
}

bool
tides_block_pipe_threaded(const tides_block_pipe *p)
{
	return p->threaded;
}

void
tides_block_pipe_free(tides_block_pipe *p)
{
	if (p == NULL)
		return;
	if (p->threaded)
	{
		pthread_mutex_lock(&p->sync.mu);
		p->stop = true;
		pthread_cond_signal(&p->sync.to_helper);
		pthread_mutex_unlock(&p->sync.mu);
		pthread_join(p->helper, NULL);
		tides_helper_sync_destroy(&p->sync);
	}
	for (int i = 0; i < TIDES_BLOCK_PIPE_DEPTH; i++)
	{
		tides_buf_free(&p->slots[i].raw);
		tides_buf_free(&p->slots[i].out);
	}
	tides_buf_free(&p->scratch);
	tides_compressor_free(&p->comp);
	free(p);
}

uint32_t
tides_block_pipe_depth(const tides_block_pipe *p)
{
	return p->depth;
}

uint32_t
tides_block_pipe_pending(const tides_block_pipe *p)
{
	return (uint32_t) (atomic_load(&((tides_block_pipe *) p)->submitted) - p->taken);
}

static void
wake_helper(tides_block_pipe *p)
{
	pthread_mutex_lock(&p->sync.mu);
	pthread_cond_signal(&p->sync.to_helper);
	pthread_mutex_unlock(&p->sync.mu);
}

uint64_t
tides_block_pipe_raw_bytes(const tides_block_pipe *p)
{
	return p->raw_pending;
}

void
tides_block_pipe_submit(tides_block_pipe *p, const uint8_t *raw, size_t n)
{
	uint64_t	sub = atomic_load(&p->submitted);
	pipe_slot  *s = &p->slots[sub % p->depth];

	TIDES_ASSERT(tides_block_pipe_room(p));
	s->raw_len = n;
	p->raw_pending += n;
	if (!p->threaded)
	{
		s->lost = false;
		encode_slot(p, s, raw, n);
		atomic_store(&p->submitted, sub + 1);
		atomic_store(&p->encoded, sub + 1);
		return;
	}
	tides_buf_reset(&s->raw);
	tides_buf_append(&s->raw, raw, n);
	s->lost = s->raw.oom;
	if (s->lost)
	{
		/* nothing for the helper to encode: take reports the failure */
		tides_buf_free(&s->raw);
		tides_buf_init(&s->raw);
	}
	atomic_store(&p->submitted, sub + 1);
	/* an idle helper waits for a batch (or for take) */
	if (atomic_load(&p->helper_idle) &&
		sub + 1 - atomic_load(&p->encoded) >= TIDES_BLOCK_PIPE_BATCH)
		wake_helper(p);
}

bool
tides_block_pipe_take(tides_block_pipe *p, const uint8_t **data, size_t *len,
					  uint64_t *stored_size)
{
	pipe_slot  *s = &p->slots[p->taken % p->depth];

	TIDES_ASSERT(p->taken < atomic_load(&p->submitted));
	if (p->threaded && atomic_load(&p->encoded) <= p->taken)
	{
		uint64_t	sub = atomic_load(&p->submitted);
		uint64_t	want = p->taken + TIDES_BLOCK_PIPE_BATCH;

		/* wait for a batch, not the one block: fewer wakeups each side */
		if (want > sub)
			want = sub;
		pthread_mutex_lock(&p->sync.mu);
		atomic_store(&p->caller_wants, want);
		if (atomic_load(&p->helper_idle))
			pthread_cond_signal(&p->sync.to_helper);
		while (atomic_load(&p->encoded) < want)
			pthread_cond_wait(&p->sync.to_caller, &p->sync.mu);
		atomic_store(&p->caller_wants, 0);
		pthread_mutex_unlock(&p->sync.mu);
	}
	*data = s->out.data;
	*len = s->out.len;
	*stored_size = s->stored_size;
	return !s->oom && !s->lost;
}

void
tides_block_pipe_release(tides_block_pipe *p)
{
	pipe_slot  *s = &p->slots[p->taken % p->depth];

	TIDES_ASSERT(p->taken < atomic_load(&p->encoded));	/* take waited for it */
	p->raw_pending -= s->raw_len;
	p->taken++;
}
