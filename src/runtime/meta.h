/*
 * meta.h -- the keys of tree 0, the runtime's metadata, built and parsed in
 * one place (meta.c); and what the files that keep trees (trees.c, vids.c,
 * copies.c, drops.c) call in each other.  Private to src/runtime.
 *
 * Every engine key starts with an 8-byte big-endian tree id; tree 0 holds
 * the runtime's own metadata, keyed `tree 0 | kind byte | ...` with every
 * number after the kind big-endian (so a kind's keys sort by it):
 *
 *   kind  after the kind byte               value
 *   'T'   --                                uint64: tree ids below are handed out
 *   'V'   tree                              uint64: vids of the tree below are handed out
 *   'R'   db, spc, relfilenode, backend     TrtTreeMapValue
 *   'r'   tree                              TrtTreeOwnerValue
 *   'D'   tree                              up to 64 drop conditions (drops.c)
 *   'I'   --                                uint32: the current incarnation
 *   'N'   incarnation                       next xid and multixact it started from
 *   'A'   incarnation, top xid              1 byte: a transaction recovery found unsealed
 *   'S'   tree                              uint64: vids below may have lost rows
 *   'L'   tree                              uint64, uint8: vids below are retired,
 *                                           the tree is an index's (low_marks.c)
 *
 * (db, spc, relfilenode and backend are 4 bytes each.)  src/runtime/README.md
 * says who writes each and when.
 */
#ifndef TRT_META_H
#define TRT_META_H

#include "postgres.h"

#include "storage/backendid.h"
#include "storage/relfilenode.h"

typedef enum TrtMetaKind
{
	TRT_META_TREE_RESERVED = 'T',
	TRT_META_VID_RESERVED = 'V',
	TRT_META_RELMAP = 'R',
	TRT_META_TREEMAP = 'r',
	TRT_META_DROP = 'D',
	TRT_META_INCARNATION = 'I',
	TRT_META_INC_START = 'N',
	TRT_META_ABORTED = 'A',
	TRT_META_SUSPECT = 'S',
	TRT_META_LOW_MARK = 'L',
	TRT_META_BINARY_UPGRADE = 'U'
} TrtMetaKind;

/* key lengths */
#define TRT_META_HEAD_LEN		9	/* tree 0, kind: the 'T', 'I' and 'U' keys */
#define TRT_META_TREE_KEY_LEN	17	/* + tree: 'V', 'r', 'D', 'S', 'L' */
#define TRT_META_RELMAP_KEY_LEN 25	/* + db, spc, relfilenode, backend: 'R' */
#define TRT_META_RELMAP_DB_LEN	13	/* + db: the prefix of a database's 'R' keys */
#define TRT_META_INC_KEY_LEN	13	/* + incarnation: 'N' */
#define TRT_META_ABORTED_KEY_LEN 17 /* + incarnation, top xid: 'A' */
#define TRT_META_KEY_MAX		TRT_META_RELMAP_KEY_LEN

/* 'R': a relation's storage -> its tree */
typedef struct TrtTreeMapValue
{
	uint64		tree;
	char		persistence;
} TrtTreeMapValue;

/* 'r': a tree -> the relation storage it belongs to (where its files are) */
typedef struct TrtTreeOwnerValue
{
	Oid			db;
	Oid			spc;
	Oid			rel;
	int32		backend;
	char		persistence;
} TrtTreeOwnerValue;

/* ---- building keys (each returns the key's length) */

/* tree 0 and the kind: a 'T' or 'I' key, or the start of a kind's range */
extern size_t trt_meta_key(uint8 *key, TrtMetaKind kind);
/* [lower, upper) of every key of a kind (TRT_META_HEAD_LEN bytes each) */
extern void trt_meta_kind_range(uint8 *lower, uint8 *upper, TrtMetaKind kind);
/*
 * an engine iterator over every key of a kind, bounded by lower and upper
 * (the caller's, TRT_META_HEAD_LEN bytes each, kept until it is freed), owned
 * by no resource owner: for the postmaster; NULL when out of engine memory
 */
extern tides_iter *trt_meta_kind_iter_raw(tides_db *db, TrtMetaKind kind, uint8 *lower, uint8 *upper);
/* 'V', 'r', 'D', 'S', 'L' */
extern size_t trt_meta_tree_key(uint8 *key, TrtMetaKind kind, uint64 tree);
/* 'R' */
extern size_t trt_meta_relmap_key(uint8 *key, const RelFileNode *rnode, BackendId backend);
/* [lower, upper) of the 'R' keys of database db */
extern void trt_meta_relmap_db_range(uint8 *lower, size_t *llen, uint8 *upper, size_t *ulen,
									 Oid db);
/* 'N' */
extern size_t trt_meta_inc_start_key(uint8 *key, uint32 inc);
/* 'A' */
extern size_t trt_meta_aborted_key(uint8 *key, uint32 inc, TransactionId top);

/* ---- parsing keys and values (false: not of that shape) */

extern bool trt_meta_parse_tree_key(const uint8 *key, size_t klen, TrtMetaKind kind,
									uint64 *tree);
extern bool trt_meta_parse_relmap_key(const uint8 *key, size_t klen, RelFileNode *rnode,
									  BackendId *backend);
extern bool trt_meta_parse_inc_start_key(const uint8 *key, size_t klen, uint32 *inc);
extern bool trt_meta_parse_aborted_key(const uint8 *key, size_t klen, uint32 *inc,
									   TransactionId *top);
extern bool trt_meta_map_value(const void *val, size_t vlen, TrtTreeMapValue *mv);
extern bool trt_meta_owner_value(const void *val, size_t vlen, TrtTreeOwnerValue *ov);

/* every mapping ('R') of database db, palloc'd, in key order */
typedef struct TrtRelmapEntry
{
	RelFileNode rnode;
	BackendId	backend;
	TrtTreeMapValue map;
} TrtRelmapEntry;

extern TrtRelmapEntry *trt_meta_relmaps_of_db(Oid db, int *n);

/* ---- values */

/* a uint64 value ('T', 'V', 'S'), or dflt if the key is absent */
extern uint64 trt_meta_read_u64(const uint8 *key, size_t klen, uint64 dflt);
/* write one key in a batch of its own and fsync it (reservations) */
extern void trt_meta_write_durable(const uint8 *key, size_t klen, const void *val, size_t vlen);

/* ---- between trees.c, vids.c, copies.c and drops.c */

extern uint64 trt_alloc_tree_id(void);
extern void trt_write_mapping(const RelFileNode *rnode, BackendId backend, uint64 tree,
							  char persistence);
extern void trt_forget_vid_counter(uint64 tree);

#endif
