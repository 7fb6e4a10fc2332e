/*
 * thread.c -- starting helper threads (thread.h).
 */
#include "util/thread.h"

#include <signal.h>

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
