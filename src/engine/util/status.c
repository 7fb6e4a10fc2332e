/*
 * status.c -- status names and error formatting.
 */
#include "util/status.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *
tides_status_name(tides_status s)
{
	switch (s)
	{
		case TIDES_OK:
			return "ok";
		case TIDES_NOT_FOUND:
			return "not found";
		case TIDES_BUSY:
			return "busy";
		case TIDES_INVALID:
			return "invalid argument";
		case TIDES_IO_ERROR:
			return "I/O error";
		case TIDES_NO_SPACE:
			return "no space left on device";
		case TIDES_CORRUPTION:
			return "corruption";
		case TIDES_NO_MEMORY:
			return "out of shared memory";
		case TIDES_UNAVAILABLE:
			return "engine unavailable";
	}
	return "unknown status";
}

tides_status
tides_fail(tides_error *err, tides_status code, const char *fmt,...)
{
	va_list		ap;

	if (err == NULL)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

tides_status
tides_status_from_errno(int neg_errno)
{
	switch (-neg_errno)
	{
		case 0:
			return TIDES_OK;
		case ENOSPC:
		case EDQUOT:
			return TIDES_NO_SPACE;
		case ENOENT:
			return TIDES_NOT_FOUND;
		case ENOMEM:
			return TIDES_NO_MEMORY;
		case EINVAL:
			return TIDES_INVALID;
		default:
			return TIDES_IO_ERROR;
	}
}

tides_status
tides_fail_io(tides_error *err, int neg_errno, const char *what, const char *path)
{
	tides_status s = tides_status_from_errno(neg_errno);

	/*
	 * A file the engine needs that is missing is an I/O error: returned as
	 * TIDES_NOT_FOUND it would read as "key absent" (a wrong answer) to a
	 * caller of tides_get().  Code that expects a missing file checks the
	 * errno itself (tides_status_from_errno).
	 */
	if (s == TIDES_NOT_FOUND)
		s = TIDES_IO_ERROR;
	return tides_fail(err, s, "could not %s \"%s\": %s", what, path, strerror(-neg_errno));
}
