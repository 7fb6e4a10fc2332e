/*
 * vfs_keep.h -- a test vfs that keeps unsynced log writes in shared memory.
 *
 * Used by the test module tidesam_keepvfs (test/crash/keepvfs, docs/durability.md).
 * Writes to log segments (files whose name ends in ".log") do not go to the
 * file: they are queued, with their data, in a buffer that lives in memory
 * shared by every process of the engine, and reach the file only when that
 * file is fsynced (through this vfs, by any process).  Killing every process
 * at once then loses exactly the log writes that were never fsynced, as an
 * operating system crash would, while everything else on disk (PostgreSQL's
 * WAL, SSTables, the manifest) survives.
 *
 * The model is the kernel page cache, per inode:
 *   - pending writes belong to the file (device, inode), not to a name: a
 *     rename keeps them with the file, an unlink discards them;
 *   - reads through this vfs see pending writes (by any process), as reads
 *     of a page cache do; file_size() covers them;
 *   - fsync of a file writes its pending writes, in order, then fsyncs;
 *   - when the buffer is full, the oldest pending writes are written to
 *     their files ("synced early": allowed, the kernel may write back any
 *     dirty page at any time) -- so at most `capacity` bytes can be lost;
 *   - writes to a file this vfs created (open with O_CREAT of a missing
 *     file) go straight through until its first fsync: the engine fsyncs a
 *     new segment (its zero fill) before any record goes into it, so
 *     nothing may depend on those writes before that fsync;
 *   - truncate of a file first writes its pending writes.
 *   SSTables, the manifest and CURRENT are fsynced by the engine before
 *   anything depends on them, so they pass straight through.
 *
 * Concurrency: one process-shared mutex guards the buffer.  A process that
 * dies holding it leaves it held; PostgreSQL then restarts every process and
 * the postmaster calls tides_vfs_keep_apply_all() (lock-free, everyone else
 * is gone) before the shared memory is reinitialised, so a backend crash
 * with the machine up loses nothing.  Published entries are only ever
 * appended, marked done after they were written, and dropped from the tail
 * after that, so a kill at any point leaves a buffer that apply_all can
 * replay (writing a pending entry twice is harmless: same bytes, same
 * place, same order).
 *
 * Nothing here includes a PostgreSQL header.
 */
#ifndef TIDES_TEST_VFS_KEEP_H
#define TIDES_TEST_VFS_KEEP_H

#include <stddef.h>
#include <stdint.h>

#include "tides_engine.h"

/* bytes of shared memory for a buffer of data_bytes (plus bookkeeping) */
size_t		tides_vfs_keep_shared_size(size_t data_bytes);

/* lay out the shared part in mem (size bytes, 8-byte aligned); once, one process */
int			tides_vfs_keep_init(void *mem, size_t size);

/*
 * This process's keep vfs over base (normally tides_vfs_posix()).  One
 * instance per process; calling again returns the same vfs (re-pointed at
 * mem, which may have moved after a shared-memory reinitialisation).
 */
tides_vfs  *tides_vfs_keep_attach(void *mem, tides_vfs *base);

/*
 * Write every pending entry to its file, without locking and without fsync
 * (the machine stays up).  Only when no other process uses the buffer.
 * Returns the number of bytes written, or a negative errno.
 */
int64_t		tides_vfs_keep_apply_all(void *mem);

typedef struct tides_keep_stats
{
	uint64_t	kept_writes;		/* writes queued */
	uint64_t	kept_bytes;
	uint64_t	synced_bytes;		/* written at an fsync of their file */
	uint64_t	early_bytes;		/* written early: buffer full, truncate, oversize */
	uint64_t	dropped_bytes;		/* discarded: file unlinked or truncated to zero */
	uint64_t	pending_bytes;		/* queued now */
	uint32_t	pending_files;
} tides_keep_stats;

void		tides_vfs_keep_stats(void *mem, tides_keep_stats *st);

#endif
