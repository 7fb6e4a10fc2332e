/*
 * read.c -- point reads: memtables newest first, then level 0 newest first,
 * then one binary-searched file per deeper level.  The first entry found for
 * the key (at or below the read sequence number) decides.
 */
#include <stdlib.h>
#include <string.h>

#include "db/db_impl.h"
#include "util/testpoint.h"

typedef struct get_state
{
	const uint8_t *ukey;
	size_t		klen;
	bool		found;			/* an entry for the key was met */
	int			type;
	uint64_t	seq;
	/* where the value goes */
	void	  **out;			/* tides_get: malloc a copy */
	void	   *buf;			/* tides_get_into */
	size_t		cap;
	size_t	   *vlen;
	tides_status copy_status;
} get_state;

static void
deliver(get_state *g, const uint8_t *val, size_t vlen)
{
	*g->vlen = vlen;
	if (g->out != NULL)
	{
		void	   *p = malloc(vlen ? vlen : 1);

		if (p == NULL)
		{
			g->copy_status = TIDES_NO_MEMORY;
			return;
		}
		memcpy(p, val, vlen);
		*g->out = p;
	}
	else if (vlen <= g->cap)
		memcpy(g->buf, val, vlen);
	else
		g->copy_status = TIDES_INVALID;
}

static void
sst_found(void *arg, const uint8_t *ikey, size_t iklen, const uint8_t *val, size_t vlen)
{
	get_state  *g = arg;

	if (tides_ukey_cmp(ikey, iklen - TIDES_TRAILER, g->ukey, g->klen) != 0)
		return;
	g->found = true;
	g->type = tides_ikey_type(ikey, iklen);
	g->seq = tides_ikey_seq(ikey, iklen);
	if (g->type == TIDES_KT_VALUE)
		deliver(g, val, vlen);
}

static bool
file_may_hold(const tides_file_meta *f, const uint8_t *ukey, size_t klen)
{
	return tides_ukey_cmp(tides_file_smallest(f), f->smallest_len - TIDES_TRAILER, ukey, klen) <= 0 &&
		tides_ukey_cmp(tides_file_largest(f), f->largest_len - TIDES_TRAILER, ukey, klen) >= 0;
}

static tides_status
search_file(tides_db *db, const tides_file_meta *f, const uint8_t *ikey, size_t iklen,
			get_state *g, tides_error *err)
{
	tides_sst  *t;
	tides_status s = tides_table_cache_get(db->tcache, f->number, f->size, &t, err);

	if (s != TIDES_OK)
		return s;
	s = tides_sst_get(t, ikey, iklen, sst_found, g, err);
	tides_table_cache_release(db->tcache, t);
	return s == TIDES_NOT_FOUND ? TIDES_OK : s;
}

static tides_status
get_internal(tides_db *db, const tides_snapshot *snap, const void *key, size_t klen, get_state *g)
{
	tides_shared *sh = db->sh;
	uint64_t	seq;
	tides_superversion *sv;
	uint8_t		stackkey[256];
	uint8_t    *ikey = stackkey;
	size_t		iklen = klen + TIDES_TRAILER;
	tides_error err;
	tides_status s = TIDES_OK;

	if (atomic_load(&sh->state) != TIDES_STATE_OPEN)
		return tides_fail(&db->err, TIDES_UNAVAILABLE, "engine is not open");
	if (klen == 0 || klen > TIDES_MAX_KEY_LEN)
		return tides_fail(&db->err, TIDES_INVALID, "bad key length %zu", klen);
	tides_error_clear(&err);
	if (iklen > sizeof(stackkey) && (ikey = malloc(iklen)) == NULL)
		return tides_fail(&db->err, TIDES_NO_MEMORY, "out of memory");
	/* the read point: seq and superversion taken together (superversion.c) */
	if (snap != NULL)
	{
		seq = snap->seq;
		sv = tides_sv_acquire(db);
	}
	else
		sv = tides_sv_acquire_at(db, &seq);
	TIDES_TEST_POINT("read.pinned", db);
	tides_ikey_make(ikey, key, klen, seq, TIDES_KT_SEEK);
	g->ukey = key;
	g->klen = klen;
	g->found = false;
	g->copy_status = TIDES_OK;

	for (uint32_t i = 0; i < sv->nmem && !g->found; i++)
	{
		const uint8_t *v;
		size_t		vlen;

		if (tides_memtable_get(sv->mems[i], key, klen, seq, &g->type, &g->seq, &v, &vlen))
		{
			g->found = true;
			if (g->type == TIDES_KT_VALUE)
				deliver(g, v, vlen);
		}
	}
	for (uint32_t i = 0; !g->found && s == TIDES_OK && i < sv->version->nfiles[0]; i++)
	{
		const tides_file_meta *f = sv->version->files[0][i];

		if (f->min_seq <= seq && file_may_hold(f, key, klen))
			s = search_file(db, f, ikey, iklen, g, &err);
	}
	for (int l = 1; !g->found && s == TIDES_OK && l < TIDES_MAX_LEVELS; l++)
	{
		uint32_t	i = tides_version_find_file(sv->version, l, ikey, iklen);

		if (i < sv->version->nfiles[l] && file_may_hold(sv->version->files[l][i], key, klen))
			s = search_file(db, sv->version->files[l][i], ikey, iklen, g, &err);
	}
	if (g->found && tides_dropped_hides(sv->dropped, sv->ndropped, key, klen, g->seq))
	{
		if (g->type == TIDES_KT_VALUE && g->out != NULL && g->copy_status == TIDES_OK)
		{
			free(*g->out);
			*g->out = NULL;		/* the caller may free() it on NOT_FOUND too */
		}
		*g->vlen = 0;
		g->type = TIDES_KT_DELETE;
	}
	tides_sv_release(db, sv);
	if (ikey != stackkey)
		free(ikey);
	if (s != TIDES_OK)
		return tides_db_fail(db, &err);
	if (!g->found || g->type == TIDES_KT_DELETE)
		return TIDES_NOT_FOUND;
	if (g->copy_status != TIDES_OK)
		return tides_fail(&db->err, g->copy_status, g->copy_status == TIDES_INVALID ?
						  "value of %zu bytes does not fit the buffer" : "out of memory (%zu bytes)",
						  *g->vlen);
	return TIDES_OK;
}

tides_status
tides_get(tides_db *db, const tides_snapshot *snap, const void *key, size_t klen,
		  void **val, size_t *vlen)
{
	get_state	g = {.out = val, .vlen = vlen};

	*val = NULL;
	*vlen = 0;
	return get_internal(db, snap, key, klen, &g);
}

tides_status
tides_get_into(tides_db *db, const tides_snapshot *snap, const void *key, size_t klen,
			   void *buf, size_t cap, size_t *vlen)
{
	get_state	g = {.buf = buf, .cap = cap, .vlen = vlen};

	*vlen = 0;
	return get_internal(db, snap, key, klen, &g);
}
