/*
 * counters.c -- this process's block I/O counters (util/counters.h).
 */
#include "util/counters.h"

tides_io_stats tides_process_io;

void
tides_get_process_io(tides_io_stats *io)
{
	*io = tides_process_io;
}
