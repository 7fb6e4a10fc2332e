/*
 * thread.c -- the calling thread's id, and starting helper threads
 * (thread.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "util/thread.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread uint32_t tides_thread_id_cached __attribute__((tls_model("initial-exec")));

/* a forked child is another thread, with an id of its own */
static void
forget_thread_id(void)
{
	tides_thread_id_cached = 0;
}

static void
register_forget_thread_id(void)
{
	pthread_atfork(NULL, NULL, forget_thread_id);
}

uint32_t
tides_thread_id_slow(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, register_forget_thread_id);
	tides_thread_id_cached = (uint32_t) syscall(SYS_gettid);
	return tides_thread_id_cached;
}

bool
tides_helper_start(pthread_t *thread, tides_helper_sync *s, void *(*fn) (void *), void *arg)
{
	sigset_t	all,
				old;
	bool		ok;

	if (pthread_mutex_init(&s->mu, NULL) != 0)
		return false;
	if (pthread_cond_init(&s->to_helper, NULL) != 0)
	{
		pthread_mutex_destroy(&s->mu);
		return false;
	}
	if (pthread_cond_init(&s->to_caller, NULL) != 0)
	{
		pthread_cond_destroy(&s->to_helper);
		pthread_mutex_destroy(&s->mu);
		return false;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ok = pthread_create(thread, NULL, fn, arg) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!ok)
		tides_helper_sync_destroy(s);
	return ok;
}

void
tides_helper_sync_destroy(tides_helper_sync *s)
{
	pthread_cond_destroy(&s->to_caller);
	pthread_cond_destroy(&s->to_helper);
	pthread_mutex_destroy(&s->mu);
}
