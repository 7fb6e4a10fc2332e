/*
 * tidx_sort.c -- the sort of a tides_btree build: byte strings into byte
 * order, in memory while they fit in the build's share of
 * maintenance_work_mem, else as sorted runs in temporary files merged at
 * the end.
 *
 * Why not tuplesort: a build's entries are byte strings that compare with
 * memcmp, and tuplesort's datum sort of bytea spent a third of a build
 * (CREATE INDEX over 3M rows, perf): a palloc'd copy of every entry (its
 * chunk header and SortTuple make ~60 bytes of memory for a 24-byte entry,
 * so more runs), the abbreviation's hashing, a varlena comparator through
 * a function pointer, and a palloc'd copy of every entry again on the way
 * out.  Here an entry is copied once into an arena, behind its header; the
 * sort permutes 16-byte items (the entry's prefix, and where it lives), so
 * nearly every comparison is one integer comparison on memory read in
 * order; runs are written and read as entries with their header, and the
 * merge hands out each entry where it lies.
 *
 * Order: by the caller's 64-bit prefix, then by bytes, then by length (a
 * string before its extensions: the order of the engine's keys).  The
 * caller's prefixes must never contradict that: a < b must give prefix(a)
 * <= prefix(b) (a build's are the first 8 bytes of its sort key,
 * tidx_sortkey.c); equal prefixes fall back to the strings.
 *
 * Runs: a serial build's are private temporary files (BufFileCreateTemp:
 * deleted when closed, or by the resource owner on error); a parallel
 * build's participants write theirs into the build's SharedFileSet, named
 * by participant and number, which the leader opens for its merge and
 * which go away with the parallel context's DSM segment.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/buffile.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "index/tidx.h"

/* an entry in memory and in a run: this header, then its bytes */
typedef struct EntryHeader
{
	uint64		prefix;
	uint32		len;
} EntryHeader;

#define HEADER_LEN (offsetof(EntryHeader, len) + sizeof(uint32))

/* what the sort permutes: the prefix again (read in order), and the entry */
typedef struct SortItem
{
	uint64		prefix;
	const uint8 *e;				/* its EntryHeader (unaligned), then its bytes */
} SortItem;

/* where the merge takes entries from: a run file, or the sorted memory */
typedef struct SortSource
{
	BufFile    *file;			/* NULL: the items in memory */
	uint64		prefix;			/* of the current entry */
	const uint8 *cur;			/* the current entry */
	uint32		len;
	uint8	   *buf;			/* a file's current entry */
	uint32		cap;
} SortSource;

struct TidxSort
{
	MemoryContext cxt;			/* the sort's, with everything below */
	MemoryContext arena_cxt;	/* the entries in memory, reset per run */
	uint8	   *chunk;			/* the arena's chunk being filled */
	Size		chunk_used;
	Size		chunk_size;
	Size		chunk_default;
	SortItem   *items;
	int64		nitems;
	int64		maxitems;
	Size		mem_used;		/* arena chunks and the items array */
	Size		mem_limit;
	int64		entries;		/* put in all */
	/* runs */
	SharedFileSet *fileset;		/* NULL: private temporary files */
	int			participant;
	int			nruns;			/* written by this sort */
	List	   *files;			/* this sort's run files (private, or shared not yet closed) */
	/* merge */
	bool		merging;
	bool		handed_out;		/* tidx_sort_next returned the top source's entry */
	int64		next_item;		/* the memory source's next item */
	int			nsources;
	SortSource *sources;
	int		   *heap;			/* source numbers, the smallest current entry first */
	int			nheap;
};

/*
 * Sorted, the items point all over the arena: a walk in order fetches the
 * entries this far ahead (one cache miss each otherwise, the largest cost
 * of writing a run).
 */
#define PREFETCH_AHEAD 16
#if defined(__GNUC__)
#define prefetch_entry(p) __builtin_prefetch(p)
#else
#define prefetch_entry(p) ((void) 0)
#endif

static inline uint32
entry_len(const uint8 *e)
{
	uint32		len;

	memcpy(&len, e + offsetof(EntryHeader, len), sizeof(len));
	return len;
}

/* byte order, then length; prefixes first */
static inline int
compare_entries(uint64 pa, const uint8 *a, uint32 alen, uint64 pb, const uint8 *b, uint32 blen)
{
	int			c;

	if (pa != pb)
		return pa < pb ? -1 : 1;
	c = memcmp(a, b, Min(alen, blen));
	if (c != 0)
		return c;
	return alen < blen ? -1 : (alen > blen ? 1 : 0);
}

static inline int
compare_items(const SortItem *a, const SortItem *b)
{
	if (a->prefix != b->prefix)
		return a->prefix < b->prefix ? -1 : 1;
	return compare_entries(a->prefix, a->e + HEADER_LEN, entry_len(a->e),
						   b->prefix, b->e + HEADER_LEN, entry_len(b->e));
}

#define ST_SORT sort_items
#define ST_ELEMENT_TYPE SortItem
#define ST_COMPARE(a, b) compare_items(a, b)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

TidxSort *
tidx_sort_begin(int mem_kb, SharedFileSet *fileset, int participant)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "tides_btree build sort",
											  ALLOCSET_DEFAULT_SIZES);
	TidxSort   *s = MemoryContextAllocZero(cxt, sizeof(TidxSort));

	s->cxt = cxt;
	s->arena_cxt = AllocSetContextCreate(cxt, "tides_btree build entries", ALLOCSET_DEFAULT_SIZES);
	s->mem_limit = (Size) Max(mem_kb, 64) * 1024;
	/* chunks of at most 1 MB, sixteen at least in the budget */
	s->chunk_default = Max(BLCKSZ, Min((Size) 1024 * 1024, s->mem_limit / 16));
	s->maxitems = 1024;
	s->items = MemoryContextAlloc(cxt, s->maxitems * sizeof(SortItem));
	s->mem_used = s->maxitems * sizeof(SortItem);
	s->fileset = fileset;
	s->participant = participant;
	return s;
}

/* a new run file, for writing */
static BufFile *
run_create(TidxSort *s)
{
	MemoryContext old = MemoryContextSwitchTo(s->cxt);
	BufFile    *f;

	if (s->fileset)
	{
		char		name[64];

		snprintf(name, sizeof(name), "tidx.%d.%d", s->participant, s->nruns);
		f = BufFileCreateFileSet(&s->fileset->fs, name);
	}
	else
		f = BufFileCreateTemp(false);
	s->files = lappend(s->files, f);
	MemoryContextSwitchTo(old);
	return f;
}

/* the items in memory, sorted, as a new run; the memory is free again */
static void
write_run(TidxSort *s)
{
	BufFile    *f;

	sort_items(s->items, s->nitems);
	f = run_create(s);
	for (int64 i = 0; i < s->nitems; i++)
	{
		const uint8 *e = s->items[i].e;

		if (i + PREFETCH_AHEAD < s->nitems)
			prefetch_entry(s->items[i + PREFETCH_AHEAD].e);
		BufFileWrite(f, unconstify(uint8 *, e), HEADER_LEN + entry_len(e));
	}
	if (trace_sort)
		elog(LOG, "tides_btree build sort %d: run %d of " INT64_FORMAT " entries written",
			 s->participant, s->nruns, s->nitems);
	s->nruns++;
	s->nitems = 0;
	MemoryContextReset(s->arena_cxt);
	s->mem_used = s->maxitems * sizeof(SortItem);
	s->chunk = NULL;
	s->chunk_used = s->chunk_size = 0;
}

void
tidx_sort_put(TidxSort *s, uint64 prefix, const void *entry, uint32 len)
{
	Size		need = MAXALIGN(HEADER_LEN + (Size) len);
	uint8	   *e;

	Assert(!s->merging);
	if (len > MaxAllocSize - 2 * HEADER_LEN)
		elog(ERROR, "tides_btree: build entry of %u bytes", len);
	if (s->nitems == s->maxitems)
	{
		Size		grown = s->maxitems * sizeof(SortItem);

		/* double while the memory allows, else start a run */
		if (s->mem_used + grown > s->mem_limit || s->maxitems * 2 > (int64) (MaxAllocHugeSize / sizeof(SortItem)))
			write_run(s);
		else
		{
			s->items = repalloc_huge(s->items, s->maxitems * 2 * sizeof(SortItem));
			s->maxitems *= 2;
			s->mem_used += grown;
		}
	}
	if (s->chunk == NULL || s->chunk_used + need > s->chunk_size)
	{
		Size		size = Max(s->chunk_default, need);

		if (s->nitems > 0 && s->mem_used + size > s->mem_limit)
			write_run(s);
		s->chunk = MemoryContextAlloc(s->arena_cxt, size);
		s->chunk_size = size;
		s->chunk_used = 0;
		s->mem_used += size;
	}
	e = s->chunk + s->chunk_used;
	s->chunk_used += need;
	memcpy(e, &prefix, sizeof(prefix));
	memcpy(e + offsetof(EntryHeader, len), &len, sizeof(len));
	memcpy(e + HEADER_LEN, entry, len);
	s->items[s->nitems].prefix = prefix;
	s->items[s->nitems].e = e;
	s->nitems++;
	s->entries++;
}

int
tidx_sort_write_runs(TidxSort *s)
{
	ListCell   *lc;

	Assert(s->fileset != NULL && !s->merging);
	if (s->nitems > 0)
		write_run(s);
	/* closed, the files stay in the set for the leader */
	foreach(lc, s->files)
		BufFileClose((BufFile *) lfirst(lc));
	list_free(s->files);
	s->files = NIL;
	return s->nruns;
}

/* ------------------------------------------------------------ the merge */

/* the source's next entry into cur/len; false at its end */
static bool
source_next(TidxSort *s, SortSource *src)
{
	uint8		h[HEADER_LEN];
	uint32		len;
	size_t		got;

	if (src->file == NULL)
	{
		const uint8 *e;

		if (s->next_item >= s->nitems)
			return false;
		if (s->next_item + PREFETCH_AHEAD < s->nitems)
			prefetch_entry(s->items[s->next_item + PREFETCH_AHEAD].e);
		e = s->items[s->next_item].e;
		src->prefix = s->items[s->next_item].prefix;
		s->next_item++;
		src->len = entry_len(e);
		src->cur = e + HEADER_LEN;
		return true;
	}
	got = BufFileRead(src->file, h, HEADER_LEN);
	if (got == 0)
		return false;
	if (got != HEADER_LEN)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read a tides_btree build run: %zu of %zu bytes", got, HEADER_LEN)));
	memcpy(&src->prefix, h, sizeof(src->prefix));
	memcpy(&len, h + offsetof(EntryHeader, len), sizeof(len));
	if (len > src->cap)
	{
		src->cap = Max(len, 2 * src->cap);
		src->buf = src->buf ? repalloc(src->buf, src->cap) : MemoryContextAlloc(s->cxt, src->cap);
	}
	got = BufFileRead(src->file, src->buf, len);
	if (got != len)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read a tides_btree build run: %zu of %u bytes", got, len)));
	src->cur = src->buf;
	src->len = len;
	return true;
}

static inline bool
source_below(const TidxSort *s, int a, int b)
{
	const SortSource *x = &s->sources[a];
	const SortSource *y = &s->sources[b];

	return compare_entries(x->prefix, x->cur, x->len, y->prefix, y->cur, y->len) < 0;
}

/* restore the heap below position i */
static void
sift_down(TidxSort *s, int i)
{
	for (;;)
	{
		int			l = 2 * i + 1;
		int			m = i;
		int			t;

		if (l < s->nheap && source_below(s, s->heap[l], s->heap[m]))
			m = l;
		if (l + 1 < s->nheap && source_below(s, s->heap[l + 1], s->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

static void
add_source(TidxSort *s, BufFile *file)
{
	SortSource *src = &s->sources[s->nsources];

	memset(src, 0, sizeof(*src));
	src->file = file;
	s->nsources++;
}

void
tidx_sort_performsort(TidxSort *s, SharedFileSet *runs_fileset, const int *runs, int nparticipants)
{
	int			nfiles = list_length(s->files);
	int			n;
	ListCell   *lc;
	MemoryContext old = MemoryContextSwitchTo(s->cxt);

	Assert(!s->merging);
	for (int p = 0; p < nparticipants; p++)
		nfiles += runs[p];
	sort_items(s->items, s->nitems);
	s->merging = true;
	s->next_item = 0;
	s->sources = palloc0((nfiles + 1) * sizeof(SortSource));
	s->heap = palloc((nfiles + 1) * sizeof(int));
	foreach(lc, s->files)
	{
		BufFile    *f = lfirst(lc);

		if (BufFileSeek(f, 0, 0, SEEK_SET) != 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not rewind a tides_btree build run: %m")));
		add_source(s, f);
	}
	for (int p = 0; p < nparticipants; p++)
	{
		for (int r = 0; r < runs[p]; r++)
		{
			char		name[64];
			BufFile    *f;

			snprintf(name, sizeof(name), "tidx.%d.%d", p, r);
			f = BufFileOpenFileSet(&runs_fileset->fs, name, O_RDONLY, false);
			s->files = lappend(s->files, f);
			add_source(s, f);
		}
	}
	if (s->nitems > 0)
		add_source(s, NULL);
	if (trace_sort)
		elog(LOG, "tides_btree build sort: merging %d runs and " INT64_FORMAT " entries in memory",
			 nfiles, s->nitems);
	MemoryContextSwitchTo(old);

	n = 0;
	for (int i = 0; i < s->nsources; i++)
		if (source_next(s, &s->sources[i]))
			s->heap[n++] = i;
	s->nheap = n;
	for (int i = n / 2 - 1; i >= 0; i--)
		sift_down(s, i);
}

bool
tidx_sort_next(TidxSort *s, const uint8 **entry, uint32 *len)
{
	Assert(s->merging);
	/* the entry handed out last stayed valid until this call: move past it now */
	if (s->handed_out && s->nheap > 0)
	{
		if (!source_next(s, &s->sources[s->heap[0]]))
			s->heap[0] = s->heap[--s->nheap];
		if (s->nheap > 0)
			sift_down(s, 0);
	}
	s->handed_out = true;
	if (s->nheap == 0)
		return false;
	*entry = s->sources[s->heap[0]].cur;
	*len = s->sources[s->heap[0]].len;
	return true;
}

void
tidx_sort_end(TidxSort *s)
{
	ListCell   *lc;

	foreach(lc, s->files)
		BufFileClose((BufFile *) lfirst(lc));
	MemoryContextDelete(s->cxt);
}
