/*
 * copies.c -- trees copied and re-mapped: SET TABLESPACE (a copy of one
 * tree), CREATE DATABASE (a copy of every tree of the template), ALTER
 * DATABASE SET TABLESPACE (the mappings follow the files).
 * src/runtime/README.md, section 5.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "runtime/trt.h"
#include "runtime/meta.h"

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
	tides_iter *it;
	tides_batch *b = NULL;
	uint8	   *key = NULL;
	size_t		keycap = 0;

	trt_xact_note_write();
	trt_key_put_tree(lower, from);
	trt_key_put_tree(upper, from + 1);
	it = trt_open_range_iter(trt_engine(), lower, sizeof(lower), upper, sizeof(upper), false);
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
		if (tides_batch_bytes(b) >= trt_batch_limit())
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
	if (b == NULL)
	{
		b = trt_local_batch();
		trt_xact_tag_batch(b);
	}
	/* the same row ids, retired in the copy as in the original */
	(void) trt_copy_low_mark(from, to, b);
	if (tides_batch_count(b) > 0)
		trt_write_batch(b);
	if (key)
		pfree(key);
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
	int			n;
	TrtRelmapEntry *src;

	trt_xact_note_write();
	trt_xact_force_durable();
	src = trt_meta_relmaps_of_db(src_db, &n);
	for (int i = 0; i < n; i++)
	{
		RelFileNode dst = src[i].rnode;
		uint64		tree;

		if (src[i].backend != InvalidBackendId)
			continue;			/* temporary relations stay behind */
		tree = trt_alloc_tree_id();
		dst.dbNode = dst_db;
		if (dst.spcNode == src_spc)
			dst.spcNode = dst_spc;
		trt_write_mapping(&dst, InvalidBackendId, tree, src[i].map.persistence);
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
	int			n;
	TrtRelmapEntry *maps;

	trt_xact_note_write();
	trt_xact_force_durable();
	maps = trt_meta_relmaps_of_db(db, &n);
	for (int i = 0; i < n; i++)
	{
		RelFileNode rnode = maps[i].rnode;
		tides_batch *b;
		uint8		key[TRT_META_RELMAP_KEY_LEN];

		if (rnode.spcNode != old_spc)
			continue;
		rnode.spcNode = new_spc;
		if (finish)
		{
			/* the new forward mapping exists; now the owner, and the old one goes */
			trt_write_mapping(&rnode, maps[i].backend, maps[i].map.tree, maps[i].map.persistence);
			b = trt_local_batch();
			trt_xact_tag_batch(b);
			if (tides_batch_delete(b, key, trt_meta_relmap_key(key, &maps[i].rnode, maps[i].backend)) != TIDES_OK)
				ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
		}
		else
		{
			b = trt_local_batch();
			trt_xact_tag_batch(b);
			if (tides_batch_put(b, key, trt_meta_relmap_key(key, &rnode, maps[i].backend),
								&maps[i].map, sizeof(maps[i].map)) != TIDES_OK)
				ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
		}
		trt_write_batch(b);
	}
	if (maps)
		pfree(maps);
}
