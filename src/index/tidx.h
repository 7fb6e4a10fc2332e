/*
 * tidx.h -- the index access method "tides_btree": B-tree semantics,
 * entries stored in the tides engine.  See src/index/README.md.
 *
 * An entry is one engine key/value pair:
 *
 *     key   = index tree (8, BE) || column 1 || ... || column k || heap TID (6)
 *     value = the IndexTuple of the entry (key and INCLUDE columns), or
 *             nothing when the key gives every column back (key-only
 *             entries, tidx_decode.c)
 *
 * where each key column is a marker byte (NULL before or after values) and,
 * for a non-NULL value, a memcomparable, self-delimiting encoding of the
 * value (inverted for DESC columns), so that memcmp order of keys is the
 * index order of nbtree.  The heap TID is block (4, BE) || offset (2, BE);
 * for tides tables that is the order of vids (vid = block * 291 + offset - 1).
 */
#ifndef TIDX_H
#define TIDX_H

#include "postgres.h"

#include "access/amapi.h"
#include "access/genam.h"
#include "access/itup.h"
#include "access/relscan.h"
#include "catalog/objectaccess.h"
#include "executor/execdesc.h"
#include "nodes/execnodes.h"
#include "tcop/utility.h"
#include "lib/stringinfo.h"
#include "storage/sharedfileset.h"
#include "datatype/timestamp.h"
#include "utils/pg_locale.h"
#include "utils/rel.h"

#include "runtime/trt.h"

/* null markers: NULLS FIRST puts NULL before values, NULLS LAST after */
#define TIDX_NULL_FIRST		0x00
#define TIDX_VALUE			0x01
#define TIDX_NULL_LAST		0x02

#define TIDX_TID_LEN		6
/* an entry's whole engine key (tree prefix, encoded columns, TID) */
#define TIDX_MAX_KEY_LEN	TIDES_MAX_KEY_LEN

/* how a column's values are encoded (decided by its comparison function) */
typedef enum TidxKind
{
	TK_INVALID = 0,
	TK_INT2,
	TK_INT4,
	TK_INT8,
	TK_OID,
	TK_FLOAT4,
	TK_FLOAT8,
	TK_NUMERIC,
	TK_BOOL,
	TK_CHAR,					/* "char" */
	TK_BYTEA,
	TK_TEXT,					/* text, varchar: collation */
	TK_NAME,					/* name: collation */
	TK_BPCHAR,					/* char(n): trailing spaces ignored, collation */
	TK_TEXT_PATTERN,			/* text_pattern_ops: bytes */
	TK_BPCHAR_PATTERN,			/* bpchar_pattern_ops: bytes, trailing spaces ignored */
	TK_UUID,
	TK_DATE,
	TK_TIME,
	TK_TIMETZ,
	TK_TIMESTAMP,
	TK_TIMESTAMPTZ,
	TK_INTERVAL,
	TK_ENUM,
	TK_MONEY
} TidxKind;

/* how strings are collated */
typedef enum TidxCollMode
{
	TC_NONE = 0,				/* not a collatable kind */
	TC_BYTES,					/* C collation: the bytes */
	TC_LIBC,					/* strxfrm, then the bytes */
	TC_ICU						/* ICU sort key, then the bytes */
} TidxCollMode;

typedef struct TidxCol
{
	TidxKind	kind;
	Oid			typid;			/* type of the stored datum */
	Oid			collation;
	bool		desc;
	bool		nulls_first;
	TidxCollMode coll_mode;
	pg_locale_t locale;			/* TC_LIBC (NULL: the database default), TC_ICU */
} TidxCol;

/* what the AM needs to know about one index (built per scan/insert/build) */
typedef struct TidxDesc
{
	Relation	index;
	uint64		tree;
	int			nkeys;			/* key columns */
	int			natts;			/* key + INCLUDE columns */
	bool		unique;
	bool		nulls_not_distinct;
	bool		key_only;		/* entries store no value (tidx_decode.c) */
	TidxCol		cols[INDEX_MAX_KEYS];
} TidxDesc;

/*
 * Appending to a key.  Keys are built a byte or a few at a time (a marker,
 * a column, a TID), and appendStringInfoChar / appendBinaryStringInfo cost
 * two calls per append (enlargeStringInfo, memcpy): a tenth of an index
 * build's CPU went there.  These inline the common case, with the same
 * contract (buf->data stays NUL-terminated).
 */
static inline void
tidx_put_bytes(StringInfo buf, const void *p, int n)
{
	Assert(n >= 0);
	if (unlikely(buf->len + n >= buf->maxlen))
		enlargeStringInfo(buf, n);
	memcpy(buf->data + buf->len, p, n);
	buf->len += n;
	buf->data[buf->len] = '\0';
}

static inline void
tidx_put_byte(StringInfo buf, uint8 c)
{
	if (unlikely(buf->len + 1 >= buf->maxlen))
		enlargeStringInfo(buf, 1);
	buf->data[buf->len++] = (char) c;
	buf->data[buf->len] = '\0';
}

/* ---- tidx_encode.c */

/* the kind of an opclass's comparison function, or TK_INVALID */
extern TidxKind tidx_kind_of_cmp_proc(Oid procid);

/* name of a kind (for messages) */
extern const char *tidx_kind_name(TidxKind kind);

/*
 * Fill a column description for type typid compared by cmpproc under
 * collation.  With TIDX_COL_ERROR, errors that name the type/collation are
 * raised for what cannot be indexed; otherwise returns false.  libc
 * collations (other than C) need tides.trust_strxfrm or TIDX_COL_ANY_LIBC.
 */
#define TIDX_COL_ERROR		1
#define TIDX_COL_ANY_LIBC	2
extern bool tidx_col_init(TidxCol *col, Oid cmpproc, Oid typid, Oid collation,
						  bool desc, bool nulls_first, int flags, const char *what);

/* setting tides.trust_strxfrm (tidx_init.c) */
extern bool tidx_trust_strxfrm;

/* append the ascending, marker-less encoding of a non-NULL value */
extern void tidx_encode_value(StringInfo buf, const TidxCol *col, Datum value);

/* append one key column: marker, and for a value its encoding (inverted if DESC) */
extern void tidx_encode_column(StringInfo buf, const TidxCol *col, Datum value, bool isnull);

/* the marker byte of a NULL / non-NULL in this column */
static inline uint8
tidx_null_marker(const TidxCol *col)
{
	return col->nulls_first ? TIDX_NULL_FIRST : TIDX_NULL_LAST;
}

/* tree || key columns (the unique-check prefix) */
extern void tidx_encode_prefix(StringInfo buf, const TidxDesc *d, const Datum *values,
							   const bool *isnull);

/* append the TID suffix */
extern void tidx_append_tid(StringInfo buf, ItemPointer tid);
extern void tidx_decode_tid(const uint8 *key, size_t klen, ItemPointer tid);

/* smallest byte string greater than every string that starts with p; false if none */
extern bool tidx_prefix_successor(uint8 *p, int *len);

/* ---- tidx_decode.c: key-only entries */

/* does the column's encoding give its value back exactly? */
extern bool tidx_col_decodable(const TidxCol *col);

/*
 * The key columns of tree || columns (plen bytes, no TID) of a key-only
 * index; by-reference values are palloc'd.  False if the bytes do not
 * decode.
 */
extern bool tidx_decode_prefix(const TidxDesc *d, const uint8 *k, size_t plen, Datum *values,
							   bool *isnull);

/*
 * The IndexTuple of an entry (key, value), palloc'd, with the entry's TID:
 * a copy of the stored value, or formed from the key when there is none.
 * NULL if the entry is malformed.
 */
extern IndexTuple tidx_entry_tuple(const TidxDesc *d, const uint8 *k, size_t klen, const void *v,
								   size_t vlen);

/* is itup, an aligned copy of a stored value of vlen bytes under a key of klen, whole? */
extern bool tidx_stored_tuple_ok(IndexTuple itup, size_t klen, size_t vlen);

/*
 * The value an entry of d stores for these columns and TID: the IndexTuple
 * (palloc'd), or NULL -- no value -- when d is key-only.
 */
extern IndexTuple tidx_entry_value(const TidxDesc *d, Datum *values, bool *isnull, ItemPointer tid);
#define TIDX_VALUE_LEN(itup) ((itup) ? IndexTupleSize(itup) : 0)

/* ---- tidx_desc.c */

/* describe an index (tree, columns); with for_build, unsupported columns error */
extern void tidx_desc_init(TidxDesc *d, Relation index, bool for_build);

/* the engine tree of the index's current storage (errors if it has none) */
extern uint64 tidx_index_tree(Relation index);

/* OID of the tides_btree access method (InvalidOid if not installed) */
extern Oid	tidx_am_oid(void);

/* the index's heap is a tides table (TIDs are never reused) */
extern bool tidx_heap_is_tides(Relation heap);


/* ---- tidx_build.c */

extern IndexBuildResult *tidx_build(Relation heap, Relation index, IndexInfo *indexInfo);
extern void tidx_buildempty(Relation index);

/* ---- tidx_sort.c: the sort of a build's entries (by a prefix, then byte order) */

typedef struct TidxSort TidxSort;

/*
 * A sort in mem_kb of memory.  fileset NULL: runs go to private temporary
 * files; else into fileset, named by participant (a parallel build's).
 */
extern TidxSort *tidx_sort_begin(int mem_kb, SharedFileSet *fileset, int participant);

/*
 * Copy an entry in.  Entries sort by prefix, then bytes, then length: a
 * caller's prefixes must follow that order (a < b: prefix(a) <= prefix(b)).
 */
extern void tidx_sort_put(TidxSort *s, uint64 prefix, const void *entry, uint32 len);

/* a parallel participant: the rest as a run, every run closed in the fileset; how many */
extern int	tidx_sort_write_runs(TidxSort *s);

/*
 * No more entries: sort, and merge what this sort holds with runs[p] runs
 * of each of nparticipants participants in fileset (a parallel leader's).
 */
extern void tidx_sort_performsort(TidxSort *s, SharedFileSet *fileset, const int *runs,
								  int nparticipants);

/*
 * The next entry in order, false after the last.  *entry stays valid until
 * the next call.
 */
extern bool tidx_sort_next(TidxSort *s, const uint8 **entry, uint32 *len);

/* files and memory released (on error the memory context and resource owner do it) */
extern void tidx_sort_end(TidxSort *s);

/* ---- tidx_sortkey.c: the 8-byte prefix a build sorts by */

/* the leading key columns of a fixed width that the sort key packs */
typedef struct TidxSortKey
{
	int			ncols;
	uint8		widths[INDEX_MAX_KEYS];	/* each one's encoded width: 2, 4 or 8 */
	uint64		origins[INDEX_MAX_KEYS];	/* each one's origin, an encoded value */
} TidxSortKey;

/* the columns of d, with dates and timestamps measured from near */
extern void tidx_sortkey_init(TidxSortKey *sk, const TidxDesc *d, TimestampTz near);
/*
 * The first 8 bytes of the sort key of key (without its tree), big-endian,
 * zero-padded: a < b gives prefix(a) <= prefix(b).
 */
extern uint64 tidx_sortkey_prefix(const uint8 *key, size_t klen, const TidxSortKey *sk);

/* ---- tidx_insert.c */

extern bool tidx_insert(Relation index, Datum *values, bool *isnull, ItemPointer heap_tid,
						Relation heap, IndexUniqueCheck checkUnique, bool indexUnchanged,
						IndexInfo *indexInfo);

/* write one (non-transactional) batch of deletes of dead entries */
extern void tidx_delete_keys(Relation heap, uint8 **keys, size_t *lens, int n);
extern void tidx_check_key_size(Relation index, Relation heap, int klen, ItemPointer tid);

/* ---- tidx_hint.c: where a scan from the start of a unique index may begin */
extern void tidx_hint_shmem_request(void);
extern void tidx_hint_write_begin(uint64 tree, const uint8 *k, int klen);
extern void tidx_hint_write_end(uint64 tree, const uint8 *k, int klen);
extern uint64 tidx_hint_generation(uint64 tree);
extern uint64 tidx_hint_snapshot_xmin(Snapshot snapshot);
extern bool tidx_hint_lookup(uint64 tree, const uint8 *start, int slen, uint64 snap_xmin,
							 struct GlobalVisState *vistest, uint8 *to, int *tolen);
extern void tidx_hint_set(uint64 tree, uint64 gen, const uint8 *start, int slen,
						  const uint8 *first, int flen, TransactionId deleted_by);
#define TIDX_HINT_KEY_MAX	64

/* ---- tidx_vacuum.c: entries of a dead row version by key (trt_register_index_keys) */
extern void *tidx_keys_begin(Relation index);
extern bool tidx_keys_delete(void *state, HeapTuple tuple, TupleDesc tupdesc, ItemPointer tid,
							 tides_batch *b);

/* ---- tidx_scankeys.c */

/* an interval [lo, hi) of encoded keys that a scan reads */
typedef struct TidxKeyRange
{
	uint8	   *lo;				/* inclusive */
	int			lolen;
	uint8	   *hi;				/* exclusive */
	int			hilen;
	bool		stem;			/* every key column equal: the entries are lo || TID */
} TidxKeyRange;

/* a scan key, and for = ANY / < ANY ... arrays its non-NULL elements */
typedef struct TidxFilterKey
{
	ScanKey		sk;				/* NULL once the intervals enforce it */
	Datum	   *elems;			/* SK_SEARCHARRAY: the non-NULL elements */
	int			nelems;
} TidxFilterKey;

/*
 * The sorted, disjoint intervals that hold every entry satisfying the keys
 * (palloc'd in the current memory context); keys the intervals enforce get
 * sk = NULL.  False if no entry can satisfy the keys.
 */
extern bool tidx_build_intervals(const TidxDesc *d, TidxFilterKey *filter, int nfilter,
								 TidxKeyRange **intervals, int *nintervals);

/* memcmp, then length */
static inline int
tidx_cmp_bytes(const char *a, int alen, const char *b, int blen)
{
	int			c = memcmp(a, b, Min(alen, blen));

	if (c != 0)
		return c;
	return alen < blen ? -1 : (alen > blen);
}

/* ---- tidx_scan.c */

extern IndexScanDesc tidx_beginscan(Relation index, int nkeys, int norderbys);
extern void tidx_rescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys, int norderbys);
extern bool tidx_gettuple(IndexScanDesc scan, ScanDirection dir);
extern int64 tidx_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);
extern void tidx_endscan(IndexScanDesc scan);
extern void tidx_markpos(IndexScanDesc scan);
extern void tidx_restrpos(IndexScanDesc scan);

/* ---- tidx_parallel.c */

extern Size tidx_estimateparallelscan(void);
extern void tidx_initparallelscan(void *target);
extern void tidx_parallelrescan(IndexScanDesc scan);

/* ---- tidx_vacuum.c */

extern IndexBulkDeleteResult *tidx_bulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
											  IndexBulkDeleteCallback callback, void *callback_state);
extern IndexBulkDeleteResult *tidx_vacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats);

/*
 * Long walks over an index's entries step through a TrtIter (src/runtime/
 * iterators.c), which trades its engine iterator for a fresh one every
 * TRT_ITER_REFRESH_MS.  That is safe for index entries: every row a
 * snapshot sees had its entry written before the snapshot was taken, and
 * entries are deleted only for rows dead to every snapshot, so a later view
 * holds at least the entries an earlier one held for the rows the walk can
 * see.
 */

/* ---- tidx_compat.c: PostgreSQL 15's b-tree-only corners */

/* the ambuild step that lets foreign keys reference the index */
extern void tidx_use_btree_opclasses(Relation heap, Relation index);

/* present a tides_btree index as a b-tree to code that insists (see tidx_compat.c) */
extern void tidx_masquerade_push(Relation index);
extern void tidx_masquerade_pop(Relation index);
extern void tidx_masquerade_push_oid(Oid indexoid);
extern void tidx_masquerade_pop_oid(Oid indexoid);
extern List *tidx_masquerade_indexes(Oid relid, bool unique_only, LOCKMODE lockmode);
extern void tidx_unmasquerade(List *opened);
extern List *tidx_masquerade_indexes_oid(Oid relid, bool unique_only);
extern void tidx_unmasquerade_oids(List *oids);
/* masquerade tides_btree indexes created under these names (char *) in nsp until _end */
extern void *tidx_masquerade_names_begin(Oid nsp, List *names);
extern void tidx_masquerade_names_end(void *prev);

/* keep ALTER TABLE ... ALTER TYPE from reusing a tides_btree index's storage for a btree */
extern List *tidx_guard_reuse(Oid relid, List *colnames);
extern void tidx_unguard_reuse(List *guard);

extern void tidx_lock_stripes_request(void);
extern LWLock *tidx_stripe_lock(uint64 tree, const uint8 *prefix, size_t len);

/* the hooks' index parts; src/module/module.c installs the hooks (tidx_compat.c) */
extern void tidx_object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId);
extern List *tidx_masquerade_for_query(QueryDesc *qd);
extern bool tidx_planner_begin(void);
extern void tidx_planner_end(void);
extern void tidx_relcache_callback(Datum arg, Oid relid);
extern void tidx_xact_callback(XactEvent event);

/* ---- tidx_init.c: settings and shared memory */

/* setting tides.index_method */
#define TIDX_INDEX_METHOD_BTREE		0
#define TIDX_INDEX_METHOD_TIDES_BTREE	1
extern int	tidx_index_method;

extern void tidx_define_settings(void);
extern void tidx_shmem_request(void);

/* ---- tidx_utility.c: the utility hook's index part */

typedef struct TidxUtilityState
{
	List	   *masq;			/* index OIDs masqueraded as btree for the command */
	List	   *guard;			/* tidx_guard_reuse's state */
	List	   *dropped_trees;	/* DROP INDEX CONCURRENTLY: trees (uint64 *) to drop */
	List	   *masq_names;		/* ADD CONSTRAINT ... USING INDEX names (char *) */
	Oid			masq_nsp;
	void	   *prev_names;		/* tidx_masquerade_names_begin's answer */
	Oid			moved;			/* ALTER INDEX ... SET TABLESPACE of a tides_btree index */
	Oid			move_all_spc;	/* ALTER INDEX ALL IN TABLESPACE ... SET TABLESPACE: target */
} TidxUtilityState;

extern void tidx_utility_before(PlannedStmt **pstmt, bool *readOnlyTree, const char *queryString,
								ProcessUtilityContext context, TidxUtilityState *st);
extern void tidx_utility_cleanup(TidxUtilityState *st);
extern void tidx_utility_after(TidxUtilityState *st);

#endif
