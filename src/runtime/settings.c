/*
 * settings.c -- the runtime's settings: every tides.* GUC except the index
 * access method's two (src/index/tidx_init.c), their variables, and the
 * reload hook that pushes a new sync mode into this process's engine handle.
 * The module (src/module/module.c) defines them in _PG_init and then
 * reserves the "tides" prefix.  The table of all settings is in
 * docs/operations.md.
 */
#include "postgres.h"

#include "utils/guc.h"

#include "runtime/trt.h"

int			trt_memtable_size_mb = 64;
int			trt_memtable_count = 4;
int			trt_block_cache_mb = 128;
int			trt_meta_size_mb = 16;
int			trt_guc_sync_mode = TIDES_SYNC_FULL;
int			trt_sync_interval_ms = 200;
int			trt_guc_compression = TIDES_COMPRESS_LZ4;
int			trt_compression_level = 3;
int			trt_compaction_workers = 1;
int			trt_l0_slowdown = 12;
int			trt_l0_stop = 20;
int			trt_max_relations = 16384;
int			trt_row_lock_stripes = 4096;

static const struct config_enum_entry sync_mode_options[] = {
	{"none", TIDES_SYNC_NONE, false},
	{"interval", TIDES_SYNC_INTERVAL, false},
	{"full", TIDES_SYNC_FULL, false},
	{NULL, 0, false}
};

static const struct config_enum_entry compression_options[] = {
	{"none", TIDES_COMPRESS_NONE, false},
	{"lz4", TIDES_COMPRESS_LZ4, false},
	{"zstd", TIDES_COMPRESS_ZSTD, false},
	{NULL, 0, false}
};

static void
assign_sync_mode(int newval, void *extra)
{
	trt_guc_sync_mode = newval;
	trt_sync_mode_changed();
}

void
trt_define_settings(void)
{
	DefineCustomIntVariable("tides.memtable_size",
							"Size of each engine memtable.",
							"Writes collect in a memtable in shared memory until it is flushed to an SSTable.",
							&trt_memtable_size_mb, 64, 1, 4095,
							PGC_POSTMASTER, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.memtable_count",
							"Number of memtables (one active, the rest waiting for flush).",
							NULL, &trt_memtable_count, 4, 2, 16,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.block_cache_size",
							"Size of the shared block cache for SSTable blocks.",
							NULL, &trt_block_cache_mb, 128, 1, INT_MAX / 2,
							PGC_POSTMASTER, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.metadata_size",
							"Shared memory for engine metadata (file lists, versions).",
							NULL, &trt_meta_size_mb, 16, 1, 4096,
							PGC_POSTMASTER, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomEnumVariable("tides.sync_mode",
							 "When the tides log is flushed to disk.",
							 "none: written to the kernel at commit; interval: fsynced every tides.sync_interval; full: fsynced before commit returns.",
							 &trt_guc_sync_mode, TIDES_SYNC_FULL, sync_mode_options,
							 PGC_SIGHUP, 0, NULL, assign_sync_mode, NULL);
	DefineCustomIntVariable("tides.sync_interval",
							"Time between log fsyncs in interval mode.",
							NULL, &trt_sync_interval_ms, 200, 1, 60000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomEnumVariable("tides.compression",
							 "Compression of SSTable blocks written from now on.",
							 NULL, &trt_guc_compression, TIDES_COMPRESS_LZ4, compression_options,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.compression_level",
							"zstd compression level.",
							NULL, &trt_compression_level, 3, 1, 19,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.compaction_workers",
							"Number of background compaction workers.",
							NULL, &trt_compaction_workers, 1, 1, TRT_MAX_COMPACTION_WORKERS,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.l0_slowdown_files",
							"Level-0 files at which writers are slowed down.",
							NULL, &trt_l0_slowdown, 12, 2, 1000,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.l0_stop_files",
							"Level-0 files at which writers wait for compaction.",
							NULL, &trt_l0_stop, 20, 2, 1000,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.max_relations",
							"Relations with tides storage that can be in use at once.",
							NULL, &trt_max_relations, 16384, 128, 1 << 24,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
}

