/*
 * tidx_init.c -- what tides_btree sets up in _PG_init: its two settings, and the
 * shared memory of its unique-check stripe locks and scan hints.  The hooks that carry the
 * rest (tidx_utility.c, tidx_compat.c) are installed by src/module/module.c.
 */
#include "postgres.h"

#include "utils/guc.h"

#include "index/tidx.h"

int			tidx_index_method = TIDX_INDEX_METHOD_BTREE;
bool		tidx_trust_strxfrm = false;

static const struct config_enum_entry index_method_options[] = {
	{"btree", TIDX_INDEX_METHOD_BTREE, false},
	{"tides_btree", TIDX_INDEX_METHOD_TIDES_BTREE, false},
	{NULL, 0, false}
};

/* _PG_init: tides.index_method and tides.trust_strxfrm */
void
tidx_define_settings(void)
{
	DefineCustomEnumVariable("tides.index_method",
							 "Access method of b-tree indexes not named by USING on tides tables.",
							 "tides_btree: PRIMARY KEY, UNIQUE and CREATE INDEX without USING on tides tables use tides_btree where it supports the key columns; btree: they use btree.",
							 &tidx_index_method, TIDX_INDEX_METHOD_BTREE, index_method_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("tides.trust_strxfrm",
							 "Lets tides_btree index strings under libc collations.",
							 "Their keys come from strxfrm(), which in glibc does not always order as strcoll() does; turn on only if the C library's two agree.",
							 &tidx_trust_strxfrm, false,
							 PGC_SUSET, 0, NULL, NULL, NULL);
}

/* shmem_request hook: the stripe locks of unique checks */
void
tidx_shmem_request(void)
{
	tidx_lock_stripes_request();
	tidx_hint_shmem_request();
}
