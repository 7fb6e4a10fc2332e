/*
 * tips.c -- where a row's newest versions are, as a hint.
 *
 * A HOT chain is walked from its root, one engine read per member, until
 * the member a snapshot sees.  Heap walks the same chain inside one pinned
 * page; here every member is a point read, and a row updated by many
 * clients at once keeps a long tail of members no prune may remove yet
 * (pgbench_branches at 16 clients: 17 reads per index fetch).  So the
 * updater of a row leaves, under its chain's root, the row id of the
 * version it wrote and of the one it replaced (src/am/hot.c tries them
 * first: while the writer is in progress, readers see the one it
 * replaced).
 *
 * A direct-mapped table in shared memory, TRT_TIPS entries of two 64-bit
 * words (a 24-bit tag of tree and root, a 40-bit row id), written and read
 * without a lock: a torn pair, a stale or an overwritten entry only makes
 * a hint wrong, and the caller checks every hint against the version it
 * reads (src/am/hot.c: the version must name the root as its chain's).
 * Shared memory only: a restart begins without hints.
 */
#include "postgres.h"

#include "storage/shmem.h"

#include "runtime/trt.h"

#define TRT_TIPS (1 << 16)
#define TIP_VID_BITS 40
#define TIP_VID_MASK ((UINT64CONST(1) << TIP_VID_BITS) - 1)

typedef struct TipEntry
{
	pg_atomic_uint64 newest;
	pg_atomic_uint64 previous;
} TipEntry;

static TipEntry *tips = NULL;

Size
trt_tips_shmem_size(void)
{
	return mul_size(TRT_TIPS, sizeof(TipEntry));
}

void
trt_tips_shmem_init(void)
{
	bool		found;

	tips = ShmemInitStruct("tides chain tips", trt_tips_shmem_size(), &found);
	if (!found)
		for (int i = 0; i < TRT_TIPS; i++)
		{
			pg_atomic_init_u64(&tips[i].newest, 0);
			pg_atomic_init_u64(&tips[i].previous, 0);
		}
}

static uint64
tip_hash(uint64 tree, uint64 root)
{
	uint64		h = (tree * UINT64CONST(0x9E3779B97F4A7C15)) ^ (root * UINT64CONST(0xC2B2AE3D27D4EB4F));

	return h ^ (h >> 29);
}

/* the tag of (tree, root) in the top 24 bits; never 0, so 0 is "empty" */
static uint64
tip_word(uint64 h, uint64 vid)
{
	uint64		tag = (h >> 40) | 1;

	Assert(vid <= TIP_VID_MASK);
	return (tag << TIP_VID_BITS) | vid;
}

void
trt_tips_set(uint64 tree, uint64 root, uint64 newest, uint64 previous)
{
	uint64		h = tip_hash(tree, root);
	TipEntry   *e;

	if (tips == NULL)
		return;
	e = &tips[h & (TRT_TIPS - 1)];
	pg_atomic_write_u64(&e->previous, tip_word(h, previous));
	pg_atomic_write_u64(&e->newest, tip_word(h, newest));
}

/* up to two row ids a reader may try first (newest first); how many */
int
trt_tips_get(uint64 tree, uint64 root, uint64 out[2])
{
	uint64		h = tip_hash(tree, root);
	TipEntry   *e;
	uint64		w[2];
	int			n = 0;

	if (tips == NULL)
		return 0;
	e = &tips[h & (TRT_TIPS - 1)];
	w[0] = pg_atomic_read_u64(&e->newest);
	w[1] = pg_atomic_read_u64(&e->previous);
	for (int i = 0; i < 2; i++)
		if ((w[i] & ~TIP_VID_MASK) == (tip_word(h, 0) & ~TIP_VID_MASK))
			out[n++] = w[i] & TIP_VID_MASK;
	return n;
}
