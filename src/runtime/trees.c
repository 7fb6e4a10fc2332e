/*
 * trees.c -- relation storage as engine trees, and row ids within them.
 *
 * A tree is the key range of one relation storage (a relfilenode): every
 * key starts with its 8-byte tree id.  Tree ids come from a counter and are
 * never reused; a new relfilenode (CREATE, TRUNCATE, a rewrite, SET
 * TABLESPACE) gets a new tree.  The mapping from relfilenode to tree is kept
 * in the metadata tree (TRT_META_RELMAP and its reverse, TRT_META_TREEMAP), cached
 * per backend in the relcache entry's rd_amcache.
 *
 * Row ids (vids) are per tree, increasing, never reused, even across a crash
 * that loses rows: b-tree indexes are WAL-logged and may outlive rows lost
 * in a relaxed-durability crash, and a reused TID would make such a stale
 * entry point at a different row (DESIGN.md D6).  So vids are reserved in
 * chunks, and a reservation is made durable before any vid of it is used;
 * after a restart a tree continues above its last reservation.  Chunks grow
 * with use (1k .. 1M vids), so the fsync this costs is rare.
 *
 * Dropping a tree is transactional: the transaction that drops or creates a
 * relation writes a TRT_META_DROP marker naming the tree, its xid and whether
 * the tree goes when that xid commits (DROP, TRUNCATE's old storage) or
 * aborts (new storage).  The maintenance worker resolves markers once their
 * transaction has ended, drops the tree's keys (tides_drop_prefix, which
 * frees whole files at once), and removes the marker and the mapping.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/catalog.h"
#include "miscadmin.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "runtime/trt.h"

typedef struct VidCounter
{
	uint64		tree;			/* hash key */
	slock_t		mutex;
	uint64		next;
	uint64		reserved;
	uint32		chunk;
	pg_atomic_uint32 vm_pages;	/* see trt_tree_vm_pages */
} VidCounter;

typedef struct RelCache
{
	uint64		tree;
	char		persistence;
	VidCounter *counter;
	uint64		bytes_estimate; /* trt_rel_bytes_estimate's answer ... */
	TimestampTz bytes_estimated_at; /* ... and when it was made (0: never) */
} RelCache;

/* how long a relation's size estimate is reused (the planner asks at every plan) */
#define TRT_SIZE_ESTIMATE_MS 1000

static HTAB *vid_counters = NULL;
static LWLock *counters_lock = NULL;

#define FIRST_CHUNK 1024
#define MAX_CHUNK (1u << 20)
#define TREE_CHUNK 64

/* ---- metadata keys */

static size_t
meta_key(uint8 *key, char kind)
{
	trt_key_put_tree(key, TRT_TREE_META);
	key[8] = (uint8) kind;
	return 9;
}

static void
put32be(uint8 *p, uint32 v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static uint32
get32be(const uint8 *p)
{
	return ((uint32) p[0] << 24) | ((uint32) p[1] << 16) | ((uint32) p[2] << 8) | p[3];
}

static size_t
relmap_key(uint8 *key, const RelFileNode *rnode, BackendId backend)
{
	size_t		n = meta_key(key, TRT_META_RELMAP);

	put32be(key + n, rnode->dbNode);
	put32be(key + n + 4, rnode->spcNode);
	put32be(key + n + 8, rnode->relNode);
	put32be(key + n + 12, (uint32) backend);
	return n + 16;
}

static size_t
tree_meta_key(uint8 *key, char kind, uint64 tree)
{
	size_t		n = meta_key(key, kind);

	trt_key_put_tree(key + n, tree);
	return n + 8;
}

static uint64
read_u64_value(const uint8 *key, size_t klen, uint64 dflt)
{
	char	   *val;
	size_t		vlen;
	uint64		v = dflt;

	if (trt_read(key, klen, &val, &vlen))
	{
		if (vlen >= 8)
			memcpy(&v, val, 8);
		pfree(val);
	}
	return v;
}

/*
 * Write one key and make it durable before returning.  Row ids are reserved
 * this way in the middle of other writers' batches (CLUSTER fills the local
 * batch while it allocates vids), so this has a batch of its own.
 */
static void
write_durable(const uint8 *key, size_t klen, const void *val, size_t vlen)
{
	static tides_batch *b = NULL;
	uint64		lsn;
	tides_status s;

	if (b == NULL && (b = tides_batch_new()) == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	tides_batch_clear(b);
	if (tides_batch_put(b, key, klen, val, vlen) != TIDES_OK)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	lsn = trt_write_batch(b);
	s = tides_sync(trt_engine(), lsn, true);
	if (s != TIDES_OK)
		trt_engine_error(s, "make a reservation durable");
}

/* ---- shared memory */

Size
trt_trees_shmem_size(void)
{
	return hash_estimate_size(trt_max_relations, sizeof(VidCounter));
}

void
trt_trees_shmem_init(void)
{
	HASHCTL		info;

	info.keysize = sizeof(uint64);
	info.entrysize = sizeof(VidCounter);
	vid_counters = ShmemInitHash("tides vid counters", trt_max_relations, trt_max_relations,
								 &info, HASH_ELEM | HASH_BLOBS);
}

static LWLock *
get_counters_lock(void)
{
	if (counters_lock == NULL)
		counters_lock = &(GetNamedLWLockTranche("tides"))[2].lock;
	return counters_lock;
}

static VidCounter *
counter_for(uint64 tree)
{
	VidCounter *c;
	bool		found;
	uint8		key[32];
	size_t		klen;
	uint64		reserved;

	LWLockAcquire(get_counters_lock(), LW_SHARED);
	c = hash_search(vid_counters, &tree, HASH_FIND, NULL);
	LWLockRelease(get_counters_lock());
	if (c != NULL)
		return c;

	klen = tree_meta_key(key, TRT_META_VID_RESERVED, tree);
	reserved = read_u64_value(key, klen, 0);
	LWLockAcquire(get_counters_lock(), LW_EXCLUSIVE);
	c = hash_search(vid_counters, &tree, HASH_ENTER_NULL, &found);
	if (c == NULL)
	{
		LWLockRelease(get_counters_lock());
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many relations with tides storage in use"),
				 errhint("Increase tides.max_relations.")));
	}
	if (!found)
	{
		SpinLockInit(&c->mutex);
		c->next = reserved;
		c->reserved = reserved;
		c->chunk = FIRST_CHUNK;
		pg_atomic_init_u32(&c->vm_pages, TRT_VM_PAGES_UNKNOWN);
	}
	LWLockRelease(get_counters_lock());
	return c;
}

static void
forget_counter(uint64 tree)
{
	LWLockAcquire(get_counters_lock(), LW_EXCLUSIVE);
	hash_search(vid_counters, &tree, HASH_REMOVE, NULL);
	LWLockRelease(get_counters_lock());
}

uint64
trt_alloc_vids(uint64 tree, uint32 n)
{
	VidCounter *c = counter_for(tree);
	uint64		v;
	uint64		new_reserved;
	uint8		key[32];
	size_t		klen;

	SpinLockAcquire(&c->mutex);
	if (c->next + n <= c->reserved)
	{
		v = c->next;
		c->next += n;
		SpinLockRelease(&c->mutex);
		return v;
	}
	SpinLockRelease(&c->mutex);

	LWLockAcquire(trt_shared->reserve_lock, LW_EXCLUSIVE);
	SpinLockAcquire(&c->mutex);
	if (c->next + n > c->reserved)
	{
		new_reserved = c->next + Max(c->chunk, n);
		if (c->chunk < MAX_CHUNK)
			c->chunk *= 2;
		SpinLockRelease(&c->mutex);
		if (new_reserved > TRT_VID_MAX)
		{
			LWLockRelease(trt_shared->reserve_lock);
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("tides relation has used all row ids"),
					 errhint("Rewrite the table with VACUUM FULL or CLUSTER to renumber its rows.")));
		}
		klen = tree_meta_key(key, TRT_META_VID_RESERVED, tree);
		write_durable(key, klen, &new_reserved, sizeof(new_reserved));
		SpinLockAcquire(&c->mutex);
		c->reserved = new_reserved;
	}
	v = c->next;
	c->next += n;
	SpinLockRelease(&c->mutex);
	LWLockRelease(trt_shared->reserve_lock);
	return v;
}

/* a copied tree continues numbering where the original stands */
void
trt_copy_vid_counter(uint64 from_tree, uint64 to_tree)
{
	uint64		high = trt_vid_high_water(from_tree);
	VidCounter *c = counter_for(to_tree);
	uint8		key[32];
	size_t		klen = tree_meta_key(key, TRT_META_VID_RESERVED, to_tree);

	LWLockAcquire(trt_shared->reserve_lock, LW_EXCLUSIVE);
	write_durable(key, klen, &high, sizeof(high));
	SpinLockAcquire(&c->mutex);
	c->next = c->reserved = high;
	SpinLockRelease(&c->mutex);
	LWLockRelease(trt_shared->reserve_lock);
}

/*
 * How many pages the tree's relation has in its visibility map fork, shared
 * by all backends so that changing a row need not ask the kernel whether a
 * map page exists (src/am/vm.c keeps it, under the relation extension lock).
 */
uint64
trt_tree_suspect_below(uint64 tree)
{
	uint8		key[32];
	size_t		klen = tree_meta_key(key, TRT_META_SUSPECT, tree);

	return read_u64_value(key, klen, 0);
}

/* lift the mark; durable with VACUUM's final sync (or it is checked again) */
void
trt_tree_clear_suspect(uint64 tree)
{
	uint8		key[32];
	size_t		klen = tree_meta_key(key, TRT_META_SUSPECT, tree);
	tides_batch *b = trt_local_batch();

	if (tides_batch_delete(b, key, klen) != TIDES_OK)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	trt_write_batch(b);
}

pg_atomic_uint32 *
trt_tree_vm_pages(uint64 tree)
{
	return &counter_for(tree)->vm_pages;
}

uint64
trt_vid_high_water(uint64 tree)
{
	VidCounter *c = counter_for(tree);
	uint64		v;

	SpinLockAcquire(&c->mutex);
	v = c->next;
	SpinLockRelease(&c->mutex);
	return v;
}

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

static uint64
alloc_tree_id(void)
{
	uint64		t;
	uint8		key[16];
	size_t		klen = meta_key(key, TRT_META_TREE_RESERVED);

	LWLockAcquire(trt_shared->reserve_lock, LW_EXCLUSIVE);
	if (trt_shared->reserved_tree == 0)
	{
		uint64		r = read_u64_value(key, klen, TRT_TREE_FIRST);

		trt_shared->next_tree = trt_shared->reserved_tree = Max(r, TRT_TREE_FIRST);
	}
	if (trt_shared->next_tree >= trt_shared->reserved_tree)
	{
		uint64		r = trt_shared->next_tree + TREE_CHUNK;

		write_durable(key, klen, &r, sizeof(r));
		trt_shared->reserved_tree = r;
	}
	t = trt_shared->next_tree++;
	LWLockRelease(trt_shared->reserve_lock);
	return t;
}

/* ---- relation <-> tree */

typedef struct TreeMapValue
{
	uint64		tree;
	char		persistence;
} TreeMapValue;

typedef struct TreeOwnerValue
{
	Oid			db;
	Oid			spc;
	Oid			rel;
	int32		backend;
	char		persistence;
} TreeOwnerValue;

static void
write_mapping(const RelFileNode *rnode, BackendId backend, uint64 tree, char persistence)
{
	tides_batch *b = trt_local_batch();
	uint8		key[40],
				rkey[32];
	size_t		klen = relmap_key(key, rnode, backend);
	size_t		rklen = tree_meta_key(rkey, TRT_META_TREEMAP, tree);
	TreeMapValue mv;
	TreeOwnerValue ov;

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

static RelCache *
set_rel_cache(Relation rel, uint64 tree, char persistence)
{
	RelCache   *rc;

	if (rel->rd_amcache == NULL)
		rel->rd_amcache = MemoryContextAllocZero(CacheMemoryContext, sizeof(RelCache));
	rc = rel->rd_amcache;
	rc->tree = tree;
	rc->persistence = persistence;
	rc->counter = NULL;
	rc->bytes_estimated_at = 0;
	return rc;
}

uint64
trt_rel_tree(Relation rel)
{
	RelCache   *rc = rel->rd_amcache;
	uint8		key[40];
	size_t		klen;
	char	   *val;
	size_t		vlen;
	TreeMapValue mv;

	if (rc != NULL)
		return rc->tree;
	klen = relmap_key(key, &rel->rd_node, rel->rd_backend);
	if (trt_read(key, klen, &val, &vlen) && vlen >= sizeof(mv))
	{
		memcpy(&mv, val, sizeof(mv));
		pfree(val);
		return set_rel_cache(rel, mv.tree, mv.persistence)->tree;
	}
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

uint64
trt_create_tree(Relation rel, const RelFileNode *rnode, char persistence)
{
	uint64		tree = alloc_tree_id();

	write_mapping(rnode, rel->rd_backend, tree, persistence);
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
	uint64		tree = alloc_tree_id();

	write_mapping(&rel->rd_node, rel->rd_backend, tree, rel->rd_rel->relpersistence);
	trt_drop_tree_at_end(tree, false);
	/* the old tree goes whatever happens: the truncation is not transactional */
	trt_drop_tree_at_end(old, false);
	trt_drop_tree_at_end(old, true);
	set_rel_cache(rel, tree, rel->rd_rel->relpersistence);
	return tree;
}

/*
 * Copy every key of one tree into another, byte for byte.  Row versions keep
 * their vids, xmin and xmax, so the copy is visible exactly as the original
 * is, and index entries keep pointing at the same TIDs.  The writes carry the
 * current transaction's tag: a copy whose transaction does not commit never
 * appears (and the new tree's drop marker removes what was written).
 */
void
trt_copy_tree(uint64 from, uint64 to)
{
	uint8		lower[8],
				upper[8];
	tides_iter_options o;
	tides_iter *it;
	tides_batch *b = NULL;
	uint8	   *key = NULL;
	size_t		keycap = 0;

	trt_xact_note_write();
	trt_key_put_tree(lower, from);
	trt_key_put_tree(upper, from + 1);
	memset(&o, 0, sizeof(o));
	o.lower = lower;
	o.lower_len = sizeof(lower);
	o.upper = upper;
	o.upper_len = sizeof(upper);
	o.fill_cache = false;
	it = trt_open_iter(trt_engine(), &o);
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
	{
		size_t		klen,
					vlen;
		const uint8 *k = tides_iter_key(it, &klen);
		const char *v = tides_iter_value(it, &vlen);

		CHECK_FOR_INTERRUPTS();
		if (klen > keycap)
		{
			keycap = Max(klen, 64);
			key = key ? repalloc(key, keycap) : palloc(keycap);
		}
		memcpy(key, k, klen);
		trt_key_put_tree(key, to);
		if (b == NULL)
		{
			b = trt_local_batch();
			trt_xact_tag_batch(b);
		}
		if (tides_batch_put(b, key, klen, v, vlen) != TIDES_OK)
			ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
		if (tides_batch_bytes(b) >= (1 << 20))
		{
			trt_write_batch(b);
			b = NULL;
		}
	}
	if (tides_iter_status(it) != TIDES_OK)
	{
		tides_status s = tides_iter_status(it);

		trt_close_iter(it);
		trt_engine_error(s, "read a tree to copy it");
	}
	trt_close_iter(it);
	if (b != NULL && tides_batch_count(b) > 0)
		trt_write_batch(b);
	if (key)
		pfree(key);
}

/*
 * An iterator over the relation map entries of database db (keys: meta(9)
 * db spc rel backend).  lower and upper hold the bounds while it lives.
 */
static tides_iter *
open_relmap_of_db(Oid db, uint8 lower[13], uint8 upper[13])
{
	tides_iter_options o;

	meta_key(lower, TRT_META_RELMAP);
	put32be(lower + 9, db);
	memset(&o, 0, sizeof(o));
	o.lower = lower;
	o.lower_len = 13;
	o.upper = upper;
	if (db == UINT32_MAX)
		o.upper_len = meta_key(upper, TRT_META_RELMAP + 1);	/* no db + 1: the next kind */
	else
	{
		meta_key(upper, TRT_META_RELMAP);
		put32be(upper + 9, db + 1);
		o.upper_len = 13;
	}
	return trt_open_iter(trt_engine(), &o);
}

/*
 * CREATE DATABASE: give the new database a copy of every tides tree of its
 * template.  PostgreSQL copies the catalogs and the relation files (empty
 * for tides, apart from visibility maps); the rows live here, under the
 * template's relfilenodes, so each is copied to a new tree mapped to the same
 * relfilenode in the new database.  Relations in the template's default
 * tablespace move to the new database's default tablespace, as their files
 * do.  Runs inside the CREATE DATABASE transaction: if it does not commit,
 * the new trees are dropped.
 */
void
trt_copy_database(Oid src_db, Oid src_spc, Oid dst_db, Oid dst_spc)
{
	uint8		lower[13],
				upper[13];
	tides_iter *it;
	typedef struct
	{
		RelFileNode rnode;
		TreeMapValue map;
	} Source;
	Source	   *src = NULL;
	int			n = 0,
				cap = 0;

	trt_xact_note_write();
	trt_xact_force_durable();
	it = open_relmap_of_db(src_db, lower, upper);
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
	{
		size_t		klen,
					vlen;
		const uint8 *k = tides_iter_key(it, &klen);
		const char *v = tides_iter_value(it, &vlen);

		/* key: meta(9) db spc rel backend; temporary relations stay behind */
		if (klen != 25 || vlen < sizeof(TreeMapValue) ||
			get32be(k + 21) != (uint32) InvalidBackendId)
			continue;
		if (n == cap)
		{
			cap = cap ? cap * 2 : 64;
			src = src ? repalloc(src, cap * sizeof(Source)) : palloc(cap * sizeof(Source));
		}
		src[n].rnode.spcNode = get32be(k + 13);
		src[n].rnode.dbNode = src_db;
		src[n].rnode.relNode = get32be(k + 17);
		memcpy(&src[n].map, v, sizeof(TreeMapValue));
		n++;
	}
	trt_close_iter(it);

	for (int i = 0; i < n; i++)
	{
		RelFileNode dst = src[i].rnode;
		uint64		tree = alloc_tree_id();

		dst.dbNode = dst_db;
		if (dst.spcNode == src_spc)
			dst.spcNode = dst_spc;
		write_mapping(&dst, InvalidBackendId, tree, src[i].map.persistence);
		trt_drop_tree_at_end(tree, false);
		if (trt_vid_high_water(src[i].map.tree) > 0)
			trt_copy_vid_counter(src[i].map.tree, tree);
		trt_copy_tree(src[i].map.tree, tree);
	}
	if (src)
		pfree(src);
}

/*
 * ALTER DATABASE SET TABLESPACE: PostgreSQL moves the files of every relation
 * in the database's default tablespace, keeping their relfilenodes; the
 * mappings of their trees follow, in two steps because movedb() commits the
 * catalog change in the middle of the command.  Before it, each tree gets a
 * second mapping under the new tablespace (either catalog state then finds
 * its rows); after it, the old mappings go and the owners say where the
 * files are now.
 */
void
trt_move_database(Oid db, Oid old_spc, Oid new_spc, bool finish)
{
	uint8		lower[13],
				upper[13];
	tides_iter *it;

	trt_xact_note_write();
	trt_xact_force_durable();
	it = open_relmap_of_db(db, lower, upper);
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
	{
		size_t		klen,
					vlen;
		const uint8 *k = tides_iter_key(it, &klen);
		const char *v = tides_iter_value(it, &vlen);
		RelFileNode rnode;
		BackendId	backend;
		TreeMapValue mv;
		tides_batch *b;
		uint8		key[40];

		if (klen != 25 || vlen < sizeof(mv) || get32be(k + 13) != old_spc)
			continue;
		memcpy(&mv, v, sizeof(mv));
		rnode.spcNode = new_spc;
		rnode.dbNode = db;
		rnode.relNode = get32be(k + 17);
		backend = (BackendId) get32be(k + 21);
		if (finish)
		{
			/* the new forward mapping exists; now the owner, and the old one goes */
			write_mapping(&rnode, backend, mv.tree, mv.persistence);
			b = trt_local_batch();
			trt_xact_tag_batch(b);
			if (tides_batch_delete(b, k, klen) != TIDES_OK)
				ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
		}
		else
		{
			b = trt_local_batch();
			trt_xact_tag_batch(b);
			if (tides_batch_put(b, key, relmap_key(key, &rnode, backend), v, vlen) != TIDES_OK)
				ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
		}
		trt_write_batch(b);
	}
	trt_close_iter(it);
}

/* ---- transactional drops */

/*
 * A drop marker lists conditions; the tree goes as soon as one holds.  Each
 * condition names a (sub)transaction and whether its commit or its abort
 * drops the tree.  CREATE adds "abort of the creator", DROP and the old side
 * of TRUNCATE add "commit of the dropper"; a table created and dropped in one
 * transaction carries both and goes either way.
 */
typedef struct DropCondition
{
	TransactionId xid;
	TransactionId top;
	uint32		inc;
	uint32		at_commit;
} DropCondition;

#define MAX_DROP_CONDITIONS 64

static LWLock *
markers_lock(void)
{
	return &(GetNamedLWLockTranche("tides"))[3].lock;
}

void
trt_drop_tree_at_end(uint64 tree, bool at_commit)
{
	tides_batch *b;
	uint8		key[24];
	size_t		klen = tree_meta_key(key, TRT_META_DROP, tree);
	DropCondition conds[MAX_DROP_CONDITIONS];
	int			n = 0;
	char	   *val;
	size_t		vlen;

	trt_xact_note_write();
	LWLockAcquire(markers_lock(), LW_EXCLUSIVE);
	if (trt_read(key, klen, &val, &vlen))
	{
		n = Min(vlen / sizeof(DropCondition), MAX_DROP_CONDITIONS - 1);
		memcpy(conds, val, n * sizeof(DropCondition));
		pfree(val);
	}
	memset(&conds[n], 0, sizeof(conds[n]));
	conds[n].xid = GetCurrentTransactionId();
	conds[n].top = GetTopTransactionId();
	conds[n].inc = trt_shared->incarnation;
	conds[n].at_commit = at_commit;
	n++;
	b = trt_local_batch();
	if (tides_batch_put(b, key, klen, conds, n * sizeof(DropCondition)) != TIDES_OK)
	{
		LWLockRelease(markers_lock());
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	}
	trt_xact_tag_batch(b);
	trt_write_batch(b);
	LWLockRelease(markers_lock());
}

void
trt_schedule_relation_drop(Relation rel)
{
	trt_drop_tree_at_end(trt_rel_tree(rel), true);
}

#define SMALL_TREE_KEYS 4096

/*
 * Delete every key of a small tree with tombstones; false (nothing written)
 * if the tree holds more than SMALL_TREE_KEYS keys.  Small trees are most
 * trees (temporary work tables, tests); a dropped-prefix entry for each
 * would cost every read a check until compaction frees its files.
 */
static bool
delete_small_tree(tides_db *db, uint64 tree)
{
	uint8		lower[8],
				upper[8];
	tides_iter_options o;
	tides_iter *it;
	tides_batch *b = tides_batch_new();
	int			n = 0;
	bool		small = true;
	tides_status s;

	if (b == NULL)
		return false;
	trt_key_put_tree(lower, tree);
	trt_key_put_tree(upper, tree + 1);
	memset(&o, 0, sizeof(o));
	o.lower = lower;
	o.lower_len = sizeof(lower);
	o.upper = upper;
	o.upper_len = sizeof(upper);
	o.fill_cache = false;
	it = trt_open_iter(db, &o);
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
	{
		size_t		klen;
		const void *k = tides_iter_key(it, &klen);

		if (++n > SMALL_TREE_KEYS)
		{
			small = false;
			break;
		}
		tides_batch_delete(b, k, klen);
	}
	small = small && tides_iter_status(it) == TIDES_OK;
	trt_close_iter(it);
	if (small && n > 0)
	{
		for (int attempt = 0;; attempt++)
		{
			s = tides_write(db, b, NULL);
			if (s != TIDES_BUSY || attempt > 1000)
				break;
			pg_usleep(1000L);
		}
		small = s == TIDES_OK;
	}
	tides_batch_free(b);
	return small;
}

/*
 * Remove a tree's data, counter, mappings and marker.  False if the engine
 * is too busy now (the marker stays; the next round retries).
 */
static bool
drop_tree(uint64 tree)
{
	tides_db   *db = trt_engine();
	uint8		prefix[8];
	uint8		key[40],
				rkey[24],
				dkey[24];
	size_t		rklen = tree_meta_key(rkey, TRT_META_TREEMAP, tree);
	size_t		dklen = tree_meta_key(dkey, TRT_META_DROP, tree);
	size_t		vklen;
	uint8		vkey[24];
	char	   *val;
	size_t		vlen;
	tides_batch *b;

	if (!delete_small_tree(db, tree))
	{
		tides_status s;

		trt_key_put_tree(prefix, tree);
		s = tides_drop_prefix(db, prefix, sizeof(prefix));
		if (s == TIDES_BUSY)
			return false;
		if (s != TIDES_OK)
			trt_engine_error(s, "drop a tree");
	}

	b = trt_local_batch();
	if (trt_read(rkey, rklen, &val, &vlen) && vlen >= sizeof(TreeOwnerValue))
	{
		TreeOwnerValue ov;
		RelFileNode rnode;
		TreeMapValue mv;
		char	   *mval;
		size_t		mlen;
		size_t		klen;

		memcpy(&ov, val, sizeof(ov));
		rnode.dbNode = ov.db;
		rnode.spcNode = ov.spc;
		rnode.relNode = ov.rel;
		/* the relfilenode may map to a newer tree by now: only remove our own mapping */
		klen = relmap_key(key, &rnode, ov.backend);
		if (trt_read(key, klen, &mval, &mlen) && mlen >= sizeof(mv))
		{
			memcpy(&mv, mval, sizeof(mv));
			if (mv.tree == tree)
				tides_batch_delete(b, key, klen);
			pfree(mval);
		}
		pfree(val);
	}
	vklen = tree_meta_key(vkey, TRT_META_VID_RESERVED, tree);
	tides_batch_delete(b, rkey, rklen);
	tides_batch_delete(b, vkey, vklen);
	tides_batch_delete(b, dkey, dklen);
	trt_write_batch(b);
	forget_counter(tree);
	return true;
}

/* what a marker's conditions say: drop now, keep for good, or wait */
typedef enum
{
	MARKER_WAIT, MARKER_DROP, MARKER_KEEP
} MarkerVerdict;

static MarkerVerdict
judge_marker(const DropCondition *conds, int n)
{
	bool		all_ended = true;

	for (int i = 0; i < n; i++)
	{
		const DropCondition *c = &conds[i];
		bool		committed;

		if (trt_writer_lost(c->inc, c->top, c->xid))
			committed = false;	/* PostgreSQL never saw it commit */
		else if (TransactionIdIsInProgress(c->xid))
		{
			all_ended = false;
			continue;
		}
		else
			committed = TransactionIdDidCommit(c->xid);
		if (committed == (bool) c->at_commit)
			return MARKER_DROP;
	}
	return all_ended ? MARKER_KEEP : MARKER_WAIT;
}

/*
 * Resolve drop markers whose transactions have ended.  Runs in the
 * maintenance worker (no transaction needed: only the commit log is read).
 */
void
trt_process_drops(void)
{
	tides_db   *db = trt_engine();
	uint8		lower[9],
				upper[9];
	tides_iter_options o;
	tides_iter *it;
	uint64	   *todo = NULL;
	bool	   *drop = NULL;
	int			ntodo = 0,
				cap = 0;

	meta_key(lower, TRT_META_DROP);
	meta_key(upper, TRT_META_DROP + 1);
	memset(&o, 0, sizeof(o));
	o.lower = lower;
	o.lower_len = sizeof(lower);
	o.upper = upper;
	o.upper_len = sizeof(upper);
	LWLockAcquire(markers_lock(), LW_EXCLUSIVE);
	it = trt_open_iter(db, &o);
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
	{
		size_t		klen,
					vlen;
		const uint8 *k = tides_iter_key(it, &klen);
		const char *v = tides_iter_value(it, &vlen);
		DropCondition conds[MAX_DROP_CONDITIONS];
		int			n = Min(vlen / sizeof(DropCondition), MAX_DROP_CONDITIONS);
		MarkerVerdict verdict;

		if (klen != 17)
			continue;
		memcpy(conds, v, n * sizeof(DropCondition));
		verdict = judge_marker(conds, n);
		if (verdict == MARKER_WAIT)
			continue;
		if (ntodo == cap)
		{
			cap = cap ? cap * 2 : 16;
			todo = todo ? repalloc(todo, cap * sizeof(uint64)) : palloc(cap * sizeof(uint64));
			drop = drop ? repalloc(drop, cap * sizeof(bool)) : palloc(cap * sizeof(bool));
		}
		todo[ntodo] = trt_key_get_tree(k + 9);
		drop[ntodo] = verdict == MARKER_DROP;
		ntodo++;
	}
	trt_close_iter(it);
	LWLockRelease(markers_lock());

	/*
	 * Act without the markers lock: dropping waits for the engine, and
	 * transactions adding conditions must not wait for that.  A marker that
	 * gained a condition meanwhile belongs to a tree someone still uses, and
	 * its verdict is looked at again first.
	 */
	for (int i = 0; i < ntodo; i++)
	{
		uint8		dkey[24];
		size_t		dklen = tree_meta_key(dkey, TRT_META_DROP, todo[i]);
		char	   *val;
		size_t		vlen;
		bool		still;

		LWLockAcquire(markers_lock(), LW_EXCLUSIVE);
		still = trt_read(dkey, dklen, &val, &vlen);
		if (still)
		{
			MarkerVerdict v = judge_marker((const DropCondition *) val,
										   Min(vlen / sizeof(DropCondition), MAX_DROP_CONDITIONS));

			still = (v == MARKER_DROP) == drop[i] && v != MARKER_WAIT;
			pfree(val);
		}
		LWLockRelease(markers_lock());
		if (!still)
			continue;
		if (drop[i])
			drop_tree(todo[i]);
		else
		{
			tides_batch *b = trt_local_batch();

			tides_batch_delete(b, dkey, dklen);
			trt_write_batch(b);
		}
	}
	if (todo)
	{
		pfree(todo);
		pfree(drop);
	}
}

/* DROP DATABASE: every tree of the database goes when the drop commits */
void
trt_schedule_database_drop(Oid dboid)
{
	/* DROP DATABASE forces a synchronous commit, which xact.c cannot see */
	trt_xact_note_write();
	trt_xact_force_durable();
	uint8		lower[13],
				upper[13];
	tides_iter *it;
	uint64	   *trees = NULL;
	int			n = 0,
				cap = 0;

	it = open_relmap_of_db(dboid, lower, upper);
	for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
	{
		size_t		vlen;
		const char *v = tides_iter_value(it, &vlen);
		TreeMapValue mv;

		if (vlen < sizeof(mv))
			continue;
		memcpy(&mv, v, sizeof(mv));
		if (n == cap)
		{
			cap = cap ? cap * 2 : 64;
			trees = trees ? repalloc(trees, cap * sizeof(uint64)) : palloc(cap * sizeof(uint64));
		}
		trees[n++] = mv.tree;
	}
	trt_close_iter(it);
	for (int i = 0; i < n; i++)
		trt_drop_tree_at_end(trees[i], true);
	if (trees)
		pfree(trees);
}
