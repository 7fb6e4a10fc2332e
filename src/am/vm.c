/*
 * vm.c -- a visibility map for tides tables, so index-only scans can skip
 * the table for versions every snapshot sees.
 *
 * PostgreSQL's index-only scan consults the table's visibility map fork by
 * the TID's block number.  tides keeps a real VISIBILITYMAP_FORKNUM file in
 * PostgreSQL's own format, one ALL_VISIBLE bit per virtual block (291 vids).
 * ALL_FROZEN is not used; VACUUM skips runs of all-visible blocks unless it
 * is aggressive, as heap's page skipping does (vacuum.c).
 *
 *   - VACUUM sets a block's bit when every version in it is live, inserted
 *     by a transaction older than OldestXmin (so visible to every snapshot)
 *     and not deleted, updated or locked, the block holds no dead stub (an
 *     index entry may still point there), and each redirect in it leads to
 *     a version that is visible to all in the same way.  It decides while
 *     holding the map page's buffer lock, re-reading the block under it.
 *   - Every change to a version (insert, delete, update, lock, a failed
 *     speculative insertion) clears the bit of the version's block, and of
 *     its HOT chain root's block, AFTER the engine write, taking the same
 *     buffer lock.  Either the writer's clear
 *     comes after VACUUM's set, or VACUUM's re-read comes after the write and
 *     sees it -- VACUUM first waits for every write reserved so far to be
 *     published, since a HOT update returns before its write is (row.c) --:
 *     a set bit is never stale.
 *   - The re-read is skipped when VACUUM's scan judged the whole block from
 *     one engine view, at read point P, and the engine proves (from its
 *     memtables and its files' sequence-number ranges, without a block
 *     read: tides_range_changed_since) that no version in the block was
 *     written after P: a re-read would show what the scan judged.  A write
 *     whose clear came before the lock was published before it, so it is
 *     either at or below P (the scan saw it) or above P (the proof fails and
 *     the block is re-read).
 *   - A new row held back with the transaction's deferred entries
 *     (src/runtime/xact.c) would break that: its index entry becomes
 *     visible in the same write as the row, before any clear after it.  Its
 *     bit is cleared BEFORE the write instead, after the backend published
 *     the row as waiting; VACUUM asks trt_rows_waiting under the lock before
 *     it re-reads, and sets nothing while such a row may wait in the block.
 *   - An index-only (or bitmap) scan reads an entry, then the bit of its
 *     row's block, and trusts the bit: the entry must not be one VACUUM has
 *     deleted before it removed the row and set the bit, which a scan's
 *     engine view older than the deletion still shows.  Such scans hold
 *     their views (src/runtime/held_views.c), VACUUM notes each removal of
 *     rows, and sets no bit of the tree while a view older than its last
 *     removal is held: it waits a little for them to end, then leaves the
 *     block to the next VACUUM.
 *     Either VACUUM's look comes after the publication (and it sets
 *     nothing), or the clear takes the lock after VACUUM's set, or the map
 *     page did not exist for the writer, in which case the full barriers
 *     on both sides make VACUUM see the publication; once the row is
 *     withdrawn it is written, and the re-read sees it.
 *
 * The map is not WAL-logged.  A bit set on disk is always valid on its own
 * (VACUUM makes the commits it relies on durable first), but a lost clear
 * would not be: so after any crash that needed WAL redo, the startup
 * process deletes the map forks of all tides relations before the first
 * connection (src/runtime/incarnation.c).  Without redo, no transaction since the
 * last checkpoint is durable, so no change the map could miss survives.
 */
#include "postgres.h"

#include "access/visibilitymap.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/smgr.h"
#include "utils/inval.h"

#include "am/tam.h"

#define MAPSIZE (BLCKSZ - MAXALIGN(SizeOfPageHeaderData))
#define HEAPBLOCKS_PER_BYTE (BITS_PER_BYTE / BITS_PER_HEAPBLOCK)
#define HEAPBLOCKS_PER_PAGE (MAPSIZE * HEAPBLOCKS_PER_BYTE)
#define HEAPBLK_TO_MAPBLOCK(x) ((x) / HEAPBLOCKS_PER_PAGE)
#define HEAPBLK_TO_MAPBYTE(x) (((x) % HEAPBLOCKS_PER_PAGE) / HEAPBLOCKS_PER_BYTE)
#define HEAPBLK_TO_OFFSET(x) (((x) % HEAPBLOCKS_PER_BYTE) * BITS_PER_HEAPBLOCK)

/* the virtual block a row id lies in */
static inline BlockNumber
vid_block(uint64 vid)
{
	return (BlockNumber) (vid / TRT_ROWS_PER_BLOCK);
}

/*
 * How many pages the map fork has, as every backend knows it (a counter in
 * shared memory next to the tree's row-id counter, set under the relation
 * extension lock by whoever creates or extends the fork).  A change to a row
 * reads it after its engine write, and VACUUM sets it before it judges a
 * block, both across a full barrier: either the writer sees the new page
 * and clears its bit, or VACUUM's judgement sees the write.  So a change to
 * a never-vacuumed table costs no system call.
 */
static uint32
map_pages(Relation rel)
{
	pg_atomic_uint32 *known = trt_tree_vm_pages(trt_rel_tree(rel));
	uint32		n;

	pg_memory_barrier();
	n = pg_atomic_read_u32(known);
	if (n != TRT_VM_PAGES_UNKNOWN)
		return n;
	LockRelationForExtension(rel, ExclusiveLock);
	n = pg_atomic_read_u32(known);
	if (n == TRT_VM_PAGES_UNKNOWN)
	{
		SMgrRelation reln = RelationGetSmgr(rel);

		reln->smgr_cached_nblocks[VISIBILITYMAP_FORKNUM] = InvalidBlockNumber;
		n = smgrexists(reln, VISIBILITYMAP_FORKNUM) ? smgrnblocks(reln, VISIBILITYMAP_FORKNUM) : 0;
		pg_atomic_write_u32(known, n);
	}
	UnlockRelationForExtension(rel, ExclusiveLock);
	return n;
}

/* the map page for blk, if the fork has it (never extends) */
static Buffer
map_page(Relation rel, BlockNumber blk)
{
	SMgrRelation reln;
	BlockNumber cached;
	Buffer		buf = InvalidBuffer;

	if (HEAPBLK_TO_MAPBLOCK(blk) >= map_pages(rel))
		return InvalidBuffer;
	/* the page exists; this backend's smgr may not know yet */
	reln = RelationGetSmgr(rel);
	cached = reln->smgr_cached_nblocks[VISIBILITYMAP_FORKNUM];
	if (cached == InvalidBlockNumber || HEAPBLK_TO_MAPBLOCK(blk) >= cached)
		reln->smgr_cached_nblocks[VISIBILITYMAP_FORKNUM] = InvalidBlockNumber;
	visibilitymap_pin(rel, blk, &buf);
	return buf;
}

/*
 * Is vid's block all-visible?  Read without the map page's lock, as
 * index-only scans read heap's map; *vmbuf keeps the map page pinned for the
 * next call (release it when done).  A table never vacuumed answers from the
 * shared page count, without a system call.
 */
bool
tam_vm_all_visible(Relation rel, uint64 vid, Buffer *vmbuf)
{
	BlockNumber blk = vid_block(vid);

	if (!BufferIsValid(*vmbuf) || BufferGetBlockNumber(*vmbuf) != HEAPBLK_TO_MAPBLOCK(blk))
	{
		if (BufferIsValid(*vmbuf))
			ReleaseBuffer(*vmbuf);
		*vmbuf = map_page(rel, blk);
		if (!BufferIsValid(*vmbuf))
			return false;
	}
	return VM_ALL_VISIBLE(rel, blk, vmbuf);
}

/*
 * Copy the map page that holds vid's block into copy, as it is now
 * (copy->page Invalid if the fork has no such page).  For readers whose
 * engine view opens after the copy (seqread.c): a bit set in the copy was
 * set before anything that view holds was read.
 */
void
tam_vm_copy_page(Relation rel, uint64 vid, TamVmCopy *copy)
{
	BlockNumber blk = vid_block(vid);
	Buffer		buf = map_page(rel, blk);

	StaticAssertStmt(sizeof(copy->bits) == MAPSIZE, "map page size");
	copy->page = InvalidBlockNumber;
	if (!BufferIsValid(buf))
		return;
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	memcpy(copy->bits, PageGetContents(BufferGetPage(buf)), MAPSIZE);
	UnlockReleaseBuffer(buf);
	copy->page = HEAPBLK_TO_MAPBLOCK(blk);
}

/* in the copy: was vid's block all-visible?  (false if the copy is of another page) */
bool
tam_vm_copy_all_visible(const TamVmCopy *copy, uint64 vid)
{
	BlockNumber blk = vid_block(vid);

	return copy->page == HEAPBLK_TO_MAPBLOCK(blk) &&
		(copy->bits[HEAPBLK_TO_MAPBYTE(blk)] & (VISIBILITYMAP_ALL_VISIBLE << HEAPBLK_TO_OFFSET(blk))) != 0;
}

void
tam_vm_clear(Relation rel, uint64 vid)
{
	BlockNumber blk = vid_block(vid);
	Buffer		buf = map_page(rel, blk);

	if (BufferIsValid(buf))
	{
		visibilitymap_clear(rel, blk, buf, VISIBILITYMAP_VALID_BITS);
		ReleaseBuffer(buf);
	}
}

/*
 * A version changed: its own block's bit goes, and its chain root's, which
 * stands for the whole HOT chain in index-only scans (index entries point
 * at roots; see hot.c).
 */
void
tam_vm_clear_chain(Relation rel, uint64 vid, uint64 root_vid)
{
	tam_vm_clear(rel, vid);
	if (vid_block(root_vid) != vid_block(vid))
		tam_vm_clear(rel, root_vid);
}

void
tam_vm_clear_range(Relation rel, uint64 first_vid, uint64 nvids)
{
	BlockNumber first = vid_block(first_vid);
	BlockNumber last = vid_block(first_vid + nvids - 1);

	for (BlockNumber b = first; b <= last; b++)
		tam_vm_clear(rel, (uint64) b * TRT_ROWS_PER_BLOCK);
}

/* make sure the map fork has the page for blk (as visibilitymap.c's vm_extend) */
static void
extend_map(Relation rel, BlockNumber blk)
{
	BlockNumber want = HEAPBLK_TO_MAPBLOCK(blk) + 1;
	SMgrRelation reln;
	PGAlignedBlock pg;
	BlockNumber now;

	PageInit((Page) pg.data, BLCKSZ, 0);
	LockRelationForExtension(rel, ExclusiveLock);
	reln = RelationGetSmgr(rel);
	if (!smgrexists(reln, VISIBILITYMAP_FORKNUM))
		smgrcreate(reln, VISIBILITYMAP_FORKNUM, false);
	reln->smgr_cached_nblocks[VISIBILITYMAP_FORKNUM] = InvalidBlockNumber;
	now = smgrnblocks(reln, VISIBILITYMAP_FORKNUM);
	while (now < want)
	{
		PageSetChecksumInplace((Page) pg.data, now);
		smgrextend(reln, VISIBILITYMAP_FORKNUM, now, pg.data, false);
		now++;
	}
	pg_atomic_write_u32(trt_tree_vm_pages(trt_rel_tree(rel)), now);
	pg_memory_barrier();
	CacheInvalidateSmgr(reln->smgr_rnode);
	UnlockRelationForExtension(rel, ExclusiveLock);
}

bool
tam_vm_block_visible_to_all(TamTuple *t, TransactionId oldest_xmin)
{
	HeapTupleHeader h = t->htup.t_data;
	TransactionId dead_after;

	if (tam_satisfies_vacuum(t, oldest_xmin, &dead_after) != HEAPTUPLE_LIVE)
		return false;
	if (!HeapTupleHeaderXminFrozen(h) &&
		!TransactionIdPrecedes(HeapTupleHeaderGetXmin(h), oldest_xmin))
		return false;
	return (h->t_infomask & HEAP_XMAX_INVALID) != 0;
}

/* read the block's versions now: all visible to all, no dead stub? */
static bool
reread_visible_to_all(Relation rel, uint64 tree, uint64 lo, TransactionId oldest_xmin)
{
	TamCursor  *c = tam_cursor_open(tree, RelationGetRelid(rel), lo, lo + TRT_ROWS_PER_BLOCK, false);
	TamTuple   *t;
	bool		all = true;

	tam_cursor_include_stubs(c);
	while (all && (t = tam_cursor_next(c, ForwardScanDirection)) != NULL)
	{
		if (TAM_IS_REDIRECT(t))
		{
			TamTupleBuf tbuf;
			TamTuple   *target;

			tam_tuple_buf_init(&tbuf, CurrentMemoryContext);
			target = tam_fetch_version(tree, t->meta.link, RelationGetRelid(rel), &tbuf);
			all = target != NULL && tam_vm_block_visible_to_all(target, oldest_xmin);
			tam_tuple_buf_free(&tbuf);
		}
		else
			all = !TAM_IS_STUB(t) && tam_vm_block_visible_to_all(t, oldest_xmin);
	}
	tam_cursor_close(c);
	return all;
}

/*
 * Wait up to OLD_VIEWS_WAIT_US for the index views older than the tree's
 * last removal to be let go (new views are never that old; an index-only
 * probe holds one for well under a millisecond); false if one is still
 * held.  A view this process already waited for in vain (a long bitmap
 * scan, an open cursor) costs the blocks after it no wait.
 */
#define OLD_VIEWS_WAIT_US 50000
#define OLD_VIEWS_POLL_US 100

static bool
old_views_gone(uint64 tree)
{
	static uint64 waited_for = 0;
	uint64		removed = trt_tree_removed_at(tree);
	uint64		oldest;

	for (int waited = 0;; waited++)
	{
		oldest = trt_held_views_oldest();
		if (oldest == 0 || oldest >= removed)
			return true;
		if (oldest == waited_for || waited * OLD_VIEWS_POLL_US >= OLD_VIEWS_WAIT_US)
			break;
		CHECK_FOR_INTERRUPTS();
		pg_usleep(OLD_VIEWS_POLL_US);
	}
	waited_for = oldest;
	return false;
}

/*
 * Set blk's bit if every version in it is visible to all (see the file
 * comment).  judged_at: 0, or the read point of a view the caller found
 * every version of the block in, each visible to all, and no redirect
 * (whose target the caller did not judge).
 */
bool
tam_vm_mark_block(Relation rel, uint64 tree, BlockNumber blk, TransactionId oldest_xmin,
				  uint64 judged_at)
{
	Buffer		buf;
	Page		page;
	uint8	   *map;
	bool		all = true;
	uint32		byte = HEAPBLK_TO_MAPBYTE(blk);
	uint8		bit = VISIBILITYMAP_ALL_VISIBLE << HEAPBLK_TO_OFFSET(blk);
	uint64		lo = (uint64) blk * TRT_ROWS_PER_BLOCK;

	if (!old_views_gone(tree))
	{
		/* nothing is set now; a bit already set still counts (relallvisible) */
		buf = InvalidBuffer;
		all = tam_vm_all_visible(rel, lo, &buf);
		if (BufferIsValid(buf))
			ReleaseBuffer(buf);
		return all;
	}
	buf = map_page(rel, blk);
	if (!BufferIsValid(buf))
	{
		extend_map(rel, blk);
		buf = map_page(rel, blk);
		if (!BufferIsValid(buf))
			return false;
	}
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	page = BufferGetPage(buf);
	map = (uint8 *) PageGetContents(page);
	if (!(map[byte] & bit))
	{
		/*
		 * Decide under the lock every clear takes: see the file comment.  A
		 * row held back with its entries (src/runtime/xact.c) is in no
		 * re-read, so that look comes first.
		 */
		all = !trt_rows_waiting(tree, lo + TRT_ROWS_PER_BLOCK);
		/* a write that returned before it was published is in the re-read too */
		tides_await_reserved(trt_engine());
		if (all && (judged_at == 0 ||
					trt_rows_changed_since(tree, lo, lo + TRT_ROWS_PER_BLOCK, judged_at)))
			all = reread_visible_to_all(rel, tree, lo, oldest_xmin);
		if (all)
		{
			map[byte] |= bit;
			MarkBufferDirty(buf);
		}
	}
	UnlockReleaseBuffer(buf);
	return all;
}
