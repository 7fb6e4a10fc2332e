/*
 * vfs_fault.h -- a fault-injecting vfs for tests, wrapping another vfs
 * (normally tides_vfs_posix()).
 *
 * It models what a disk and an OS page cache guarantee, and lets a test
 * break them:
 *
 *   - Durability of data.  Every file the vfs has seen keeps a "durable
 *     image": its contents as of its last successful fsync.  Writes,
 *     truncations and allocations go through to the real file at once (so
 *     reads see them, as with a page cache) and are also queued as pending
 *     until the next fsync of that file moves them into the image.
 *
 *   - Durability of names.  A directory entry (file creation, rename, unlink)
 *     is durable only after sync_dir() of its directory.  Until then a crash
 *     reverts it: files created since the last sync_dir disappear, renamed
 *     files go back to their old names (and a file a rename replaced comes
 *     back), unlinked files reappear with their durable contents.
 *
 *   - tides_vfs_fault_crash() simulates an OS crash: every file is put back
 *     to its durable image and every name to its durable entry.  With
 *     keep_percent > 0 each pending change survives with that probability
 *     instead (in order; a surviving write may be torn to a prefix), which
 *     models the kernel writing back some dirty pages before the crash.
 *     Descriptors open at the crash are dead: every call on them fails with
 *     EIO except close().
 *
 *   - Fault rules fail chosen calls with a chosen errno (ENOSPC, EIO): the
 *     Nth call of some kinds, optionally only on paths containing a pattern
 *     (".log", ".sst", "MANIFEST", "CURRENT").  A failed write may be torn
 *     (a prefix reaches the file).  A failed fsync either keeps its pending
 *     writes pending, or -- like Linux after writeback errors -- loses them:
 *     they stay visible in the file but will never become durable, even if
 *     a later fsync succeeds.
 *
 *   - tides_vfs_fault_freeze_after(n): after n more mutating calls the
 *     "machine is dead": every mutating call fails with EIO without touching
 *     anything.  A test uses it to crash at an arbitrary point inside the
 *     engine (mid-flush, mid-manifest-write), then calls crash().
 *
 * Limits: the state is process-local (use it from one process); paths are
 * compared as strings, and a file's directory is its path up to the last
 * '/' (the engine always builds paths as "<dir>/<name>"); directories
 * themselves are assumed durable.  Durable images are kept in memory, which
 * suits test-sized stores.
 */
#ifndef TIDES_TEST_VFS_FAULT_H
#define TIDES_TEST_VFS_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "tides_engine.h"

typedef struct tides_vfs_fault tides_vfs_fault;

/* kinds of calls a rule can fail (bit mask) */
#define TIDES_FAULT_WRITE		0x001	/* pwrite */
#define TIDES_FAULT_SYNC		0x002	/* fsync */
#define TIDES_FAULT_SYNC_DIR	0x004	/* sync_dir */
#define TIDES_FAULT_CREATE		0x008	/* open with O_CREAT of a missing file */
#define TIDES_FAULT_ALLOCATE	0x010	/* allocate */
#define TIDES_FAULT_TRUNCATE	0x020	/* truncate, and open with O_TRUNC */
#define TIDES_FAULT_RENAME		0x040	/* rename */
#define TIDES_FAULT_UNLINK		0x080	/* unlink */
#define TIDES_FAULT_READ		0x100	/* pread */
#define TIDES_FAULT_OPEN		0x200	/* any open */

typedef struct tides_fault_rule
{
	int			ops;			/* TIDES_FAULT_* mask; 0 disables the rule */
	const char *pattern;		/* substring the path must contain; NULL: any */
	uint64_t	skip;			/* let this many matching calls succeed first */
	uint64_t	count;			/* then fail this many (0: every one, until cleared) */
	int			err;			/* positive errno to fail with (EIO, ENOSPC, ...) */
	bool		torn;			/* failed writes leave a random prefix in the file */
	bool		sync_loses;		/* failed fsyncs lose the pending writes */
} tides_fault_rule;

#define TIDES_FAULT_MAX_RULES 4

tides_vfs_fault *tides_vfs_fault_new(tides_vfs *base, uint64_t seed);
void		tides_vfs_fault_free(tides_vfs_fault *f);
tides_vfs  *tides_vfs_fault_vfs(tides_vfs_fault *f);

/* add a rule (returns its index, or -1 if all slots are used) */
int			tides_vfs_fault_add_rule(tides_vfs_fault *f, const tides_fault_rule *r);
void		tides_vfs_fault_clear_rules(tides_vfs_fault *f);
/* failures injected so far (by rules and by a freeze) */
uint64_t	tides_vfs_fault_injected(const tides_vfs_fault *f);

/* mutating calls seen so far (writes, fsyncs, creates, renames, ...) */
uint64_t	tides_vfs_fault_mutations(const tides_vfs_fault *f);
/* fail every mutating call once n more have happened (UINT64_MAX: never) */
void		tides_vfs_fault_freeze_after(tides_vfs_fault *f, uint64_t n);
bool		tides_vfs_fault_frozen(const tides_vfs_fault *f);

/*
 * Simulate an OS crash (see above) and unfreeze.  Returns 0, or a negative
 * errno if the real files could not be restored.
 */
int			tides_vfs_fault_crash(tides_vfs_fault *f, unsigned keep_percent);

/* bytes written but not yet durable, over all files (for tests) */
uint64_t	tides_vfs_fault_unsynced_bytes(const tides_vfs_fault *f);

#endif
