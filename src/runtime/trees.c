/*
 * trees.c -- relation storage as engine trees: tree ids, the mapping between
 * relation storage and trees, and tree sizes.
 *
 * A tree is the key range of one relation storage (a relfilenode): every
 * key starts with its 8-byte tree id.  Tree ids come from a counter and are
 * never reused; a new relfilenode (CREATE, TRUNCATE, a rewrite, SET
 * TABLESPACE) gets a new tree.  The mapping from relfilenode to tree is kept
 * in the metadata tree ('R' and its reverse, 'r': meta.h), cached per
 * backend in the relcache entry's rd_amcache.  Tree ids are reserved durably
 * in chunks, as row ids are (vids.c).
 *
 * Row ids within a tree: vids.c.  Copies of trees (SET TABLESPACE, CREATE
 * DATABASE, ALTER DATABASE SET TABLESPACE): copies.c.  Transactional drops:
 * drops.c.  src/runtime/README.md, section 5.
 */
#include "postgres.h"

#include "access/genam.h"
#include "miscadmin.h"
#include "utils/relcache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "runtime/trt.h"
#include "runtime/meta.h"

typedef struct RelCache
{
	uint64		tree;
	char		persistence;
	uint64		bytes_estimate; /* trt_rel_bytes_estimate's answer ... */
	TimestampTz bytes_estimated_at; /* ... and when it was made (0: never) */
	uint64		bytes_planned;	/* the answer the last plan in this backend used */
	int8		only_tides_indexes; /* trt_rel_only_tides_indexes: 0 not known, 1 yes, -1 no */
} RelCache;

/* how long a relation's size estimate is reused (the planner asks at every plan) */
#define TRT_SIZE_ESTIMATE_MS 1000

#define TREE_CHUNK 64

/* a new tree id, never handed out before (durably reserved in chunks) */
uint64
trt_alloc_tree_id(void)
{
	uint64		t;
	uint8		key[TRT_META_HEAD_LEN];
	size_t		klen = trt_meta_key(key, TRT_META_TREE_RESERVED);

	LWLockAcquire(trt_shared->reserve_lock, LW_EXCLUSIVE);
	if (trt_shared->reserved_tree == 0)
	{
		uint64		r = trt_meta_read_u64(key, klen, TRT_TREE_FIRST);

		trt_shared->next_tree = trt_shared->reserved_tree = Max(r, TRT_TREE_FIRST);
	}
	if (trt_shared->next_tree >= trt_shared->reserved_tree)
	{
		uint64		r = trt_shared->next_tree + TREE_CHUNK;

		trt_meta_write_durable(key, klen, &r, sizeof(r));
		trt_shared->reserved_tree = r;
	}
	t = trt_shared->next_tree++;
	LWLockRelease(trt_shared->reserve_lock);
	return t;
}

/* ---- relation <-> tree */

/* relfilenode -> tree ('R') and tree -> owner ('r'), in the transaction's tag */
void
trt_write_mapping(const RelFileNode *rnode, BackendId backend, uint64 tree, char persistence)
{
	tides_batch *b = trt_local_batch();
	uint8		key[TRT_META_RELMAP_KEY_LEN],
				rkey[TRT_META_TREE_KEY_LEN];
	size_t		klen = trt_meta_relmap_key(key, rnode, backend);
	size_t		rklen = trt_meta_tree_key(rkey, TRT_META_TREEMAP, tree);
	TrtTreeMapValue mv;
	TrtTreeOwnerValue ov;

	memset(&mv, 0, sizeof(mv));
	mv.tree = tree;
	mv.persistence = persistence;
	memset(&ov, 0, sizeof(ov));
	ov.db = rnode->dbNode;
	ov.spc = rnode->spcNode;
	ov.rel = rnode->relNode;
	ov.backend = backend;
	ov.persistence = persistence;
	if (tides_batch_put(b, key, klen, &mv, sizeof(mv)) != TIDES_OK ||
		tides_batch_put(b, rkey, rklen, &ov, sizeof(ov)) != TIDES_OK)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	trt_xact_note_write();
	trt_xact_tag_batch(b);
	trt_write_batch(b);
}

/* the mapping of a relfilenode, if there is one */
static bool
read_mapping(const RelFileNode *rnode, BackendId backend, TrtTreeMapValue *mv)
{
	uint8		key[TRT_META_RELMAP_KEY_LEN];
	size_t		klen = trt_meta_relmap_key(key, rnode, backend);
	char	   *val;
	size_t		vlen;
	bool		ok;

	if (!trt_read(key, klen, &val, &vlen))
		return false;
	ok = trt_meta_map_value(val, vlen, mv);
	pfree(val);
	return ok;
}

/* the tree a relfilenode maps to, without creating one (false: none) */
bool
trt_lookup_tree(const RelFileNode *rnode, BackendId backend, uint64 *tree)
{
	TrtTreeMapValue mv;

	if (!read_mapping(rnode, backend, &mv))
		return false;
	*tree = mv.tree;
	trt_note_tree_persistence(mv.tree, mv.persistence);
	return true;
}

static RelCache *
set_rel_cache(Relation rel, uint64 tree, char persistence)
{
	RelCache   *rc;

	if (rel->rd_amcache == NULL)
		rel->rd_amcache = MemoryContextAllocZero(CacheMemoryContext, sizeof(RelCache));
	rc = rel->rd_amcache;
	rc->tree = tree;
	rc->persistence = persistence;
	/* with tides.wal, writes to an unlogged or temporary tree stay out of the WAL */
	trt_note_tree_persistence(tree, persistence);
	rc->bytes_estimated_at = 0;
	return rc;
}

uint64
trt_rel_tree(Relation rel)
{
	RelCache   *rc = rel->rd_amcache;
	TrtTreeMapValue mv;

	if (rc != NULL)
		return rc->tree;
	if (read_mapping(&rel->rd_node, rel->rd_backend, &mv))
		return set_rel_cache(rel, mv.tree, mv.persistence)->tree;
	/*
	 * The catalog knows a relation whose storage the engine does not: its
	 * creation was lost in a crash that kept the catalog (relaxed sync mode),
	 * or the database was copied without its tides data.  Start it empty.
	 */
	ereport(WARNING,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("tides storage of relation \"%s\" is missing; it is treated as empty",
					RelationGetRelationName(rel)),
			 errdetail("relfilenode %u/%u/%u, backend %d",
					   rel->rd_node.spcNode, rel->rd_node.dbNode, rel->rd_node.relNode, rel->rd_backend)));
	return trt_create_tree(rel, &rel->rd_node, rel->rd_rel->relpersistence);
}

/*
 * Does every index of rel, if any, belong to tides_btree?  Cached with the
 * tree: creating or dropping an index invalidates the table's relcache
 * entry, and with it rd_amcache.
 */
bool
trt_rel_only_tides_indexes(Relation rel)
{
	RelCache   *rc;
	List	   *indexes;
	ListCell   *lc;
	bool		all = true;

	(void) trt_rel_tree(rel);	/* sets rd_amcache */
	rc = rel->rd_amcache;
	if (rc->only_tides_indexes != 0)
		return rc->only_tides_indexes > 0;
	indexes = RelationGetIndexList(rel);
	foreach(lc, indexes)
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);

		all = trt_is_tides_index(index);
		index_close(index, AccessShareLock);
		if (!all)
			break;
	}
	list_free(indexes);
	/* index_open may have processed an invalidation that freed the cache */
	rc = rel->rd_amcache;
	if (rc != NULL)
		rc->only_tides_indexes = all ? 1 : -1;
	return all;
}

/*
 * Storage created in binary-upgrade mode (pg_upgrade restoring the schema
 * into the new cluster) is a placeholder: the rows are in the old cluster's
 * pg_tides, which the upgrade procedure copies over this one
 * (docs/operations.md).  The 'U' key says so; a server that starts normally
 * and finds it refuses tides access (trt_binary_upgrade_marked, shmem.c).
 */
static void
mark_binary_upgrade(void)
{
	static bool marked = false;
	uint8		key[TRT_META_HEAD_LEN];
	uint8		one = 1;

	if (marked)
		return;
	trt_meta_write_durable(key, trt_meta_key(key, TRT_META_BINARY_UPGRADE), &one, 1);
	marked = true;
}

bool
trt_binary_upgrade_marked(tides_db *db)
{
	uint8		key[TRT_META_HEAD_LEN];
	void	   *val;
	size_t		vlen;
	tides_status s = tides_get(db, NULL, key, trt_meta_key(key, TRT_META_BINARY_UPGRADE),
							   &val, &vlen);

	if (s == TIDES_OK)
		free(val);
	/* an error reading it: the engine's first real read reports it */
	return s == TIDES_OK;
}

uint64
trt_create_tree(Relation rel, const RelFileNode *rnode, char persistence)
{
	uint64		tree;

	if (IsBinaryUpgrade)
		mark_binary_upgrade();
	tree = trt_alloc_tree_id();

	trt_note_tree_persistence(tree, persistence);
	trt_write_mapping(rnode, rel->rd_backend, tree, persistence);
	/* new storage goes away if the creating (sub)transaction aborts */
	trt_drop_tree_at_end(tree, false);
	if (RelFileNodeEquals(*rnode, rel->rd_node))
		set_rel_cache(rel, tree, persistence);
	return tree;
}

uint64
trt_replace_tree(Relation rel)
{
	uint64		old = trt_rel_tree(rel);
	uint64		tree = trt_alloc_tree_id();

	trt_write_mapping(&rel->rd_node, rel->rd_backend, tree, rel->rd_rel->relpersistence);
	trt_drop_tree_at_end(tree, false);
	/* the old tree goes whatever happens: the truncation is not transactional */
	trt_drop_tree_at_end(old, false);
	trt_drop_tree_at_end(old, true);
	set_rel_cache(rel, tree, rel->rd_rel->relpersistence);
	return tree;
}

/* ---- sizes */

uint64
trt_tree_bytes(uint64 tree, bool estimate)
{
	uint8		lo[8],
				hi[8];

	trt_key_put_tree(lo, tree);
	trt_key_put_tree(hi, tree + 1);
	return estimate ?
		tides_estimate_size(trt_engine(), lo, sizeof(lo), hi, sizeof(hi)) :
		tides_approximate_size(trt_engine(), lo, sizeof(lo), hi, sizeof(hi));
}

/*
 * trt_tree_bytes(estimate) of a relation's tree, reused for a second: the
 * planner asks at every plan of every statement (a floor under the page
 * estimate, src/am/ddl.c), and in a workload of short statements the
 * estimate walked the memtables' skiplists often enough to cost 6% of the
 * CPU.  A second-old size is as good a floor.
 */
uint64
trt_rel_bytes_estimate(Relation rel)
{
	uint64		tree = trt_rel_tree(rel);	/* sets rd_amcache */
	RelCache   *rc = rel->rd_amcache;
	TimestampTz now = GetCurrentTimestamp();

	if (rc == NULL)
		return trt_tree_bytes(tree, true);
	if (rc->bytes_estimated_at == 0 ||
		TimestampDifferenceExceeds(rc->bytes_estimated_at, now, TRT_SIZE_ESTIMATE_MS))
	{
		rc->bytes_estimate = trt_tree_bytes(tree, true);
		rc->bytes_estimated_at = now;
	}
	return rc->bytes_estimate;
}

/*
 * The planner's view of a relation's size and the tree's real size part
 * ways as garbage builds up (src/am/ddl.c): a statement planned each time
 * sees the new size, but a cached plan -- a prepared statement's generic
 * plan, a PL/pgSQL statement -- keeps the size it was made with until
 * something invalidates it, and a sequential scan planned for a one-page
 * table then wades through all the dead versions written since.  Every
 * estimate made for planning is remembered here (trt_rel_plan_bytes), and
 * a sequential scan asks trt_rel_outgrew_plan whether the tree has since
 * grown `factor` times and by at least min_bytes; the caller then
 * invalidates the relation, so that cached plans are made again.  It
 * answers true once per growth (the new size becomes the remembered one).
 */
uint64
trt_rel_plan_bytes(Relation rel)
{
	uint64		b = trt_rel_bytes_estimate(rel);
	RelCache   *rc = rel->rd_amcache;

	if (rc != NULL)
		rc->bytes_planned = b;
	return b;
}

bool
trt_rel_outgrew_plan(Relation rel, double factor, uint64 min_bytes)
{
	uint64		b = trt_rel_bytes_estimate(rel);
	RelCache   *rc = rel->rd_amcache;

	if (rc == NULL || b < min_bytes || (double) b < factor * (double) rc->bytes_planned)
		return false;
	rc->bytes_planned = b;
	return true;
}
