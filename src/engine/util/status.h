/*
 * status.h -- error reporting inside the engine.
 *
 * Every fallible internal function returns a tides_status and, on failure,
 * fills a tides_error with a message that names the file concerned.  The
 * error travels up to the tides_db handle, where tides_errmsg() shows it.
 * Nothing here allocates, so reporting an error can never fail.
 */
#ifndef TIDES_UTIL_STATUS_H
#define TIDES_UTIL_STATUS_H

#include "tides_engine.h"

#define TIDES_ERRMSG_LEN 512

typedef struct tides_error
{
	tides_status code;
	char		msg[TIDES_ERRMSG_LEN];
} tides_error;

/* record an error and return its code (so callers can "return tides_fail(...)") */
tides_status tides_fail(tides_error *err, tides_status code, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/* map a negative errno from the vfs to a status */
tides_status tides_status_from_errno(int neg_errno);

/* tides_fail() for a vfs error: "<what> <path>: <strerror>" */
tides_status tides_fail_io(tides_error *err, int neg_errno, const char *what,
						   const char *path);

static inline void
tides_error_clear(tides_error *err)
{
	err->code = TIDES_OK;
	err->msg[0] = '\0';
}

#endif
