/*
 * init.c -- what tides_btree sets up in _PG_init: the stripe locks of
 * unique checks (shared memory) and the executor/planner hooks of compat.c.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"

#include "index/tidx.h"

extern void tidx_compat_init(void);
void		tides_index_init(void);

static shmem_request_hook_type prev_shmem_request = NULL;

static void
tidx_shmem_request(void)
{
	if (prev_shmem_request)
		prev_shmem_request();
	tidx_lock_stripes_request();
}

void
tides_index_init(void)
{
	prev_shmem_request = shmem_request_hook;
	shmem_request_hook = tidx_shmem_request;
	tidx_compat_init();
}
