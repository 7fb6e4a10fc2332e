/*
 * settings.c -- the runtime's settings: every tides.* GUC except the index
 * access method's two (src/index/tidx_init.c), their variables, and the
 * assign hooks that push a reloaded sync mode and compression into this
 * process's engine handle (every process: backends and the background
 * workers, which process reloads in their loop).  Every sighup setting
 * reaches every process at its next reload: tides.sync_mode and
 * tides.compression / tides.compression_level through these hooks,
 * tides.sync_interval because the sync worker reads the variable each round.
 * tides.wal chooses the log (src/runtime/wal.c).
 * The module (src/module/module.c) defines them in _PG_init and then
 * reserves the "tides" prefix.  The table of all settings is in
 * docs/operations.md.
 */
#include "postgres.h"

#include "utils/guc.h"

#include "runtime/trt.h"

int			trt_memtable_size_mb = 64;
int			trt_memtable_count = 4;
int			trt_memtables_per_flush = 1;
int			trt_memtable_discard_ms = 10000;
int			trt_block_cache_mb = 128;
int			trt_meta_size_mb = 16;
int			trt_guc_sync_mode = TIDES_SYNC_FULL;
int			trt_sync_interval_ms = 200;
int			trt_guc_compression = TIDES_COMPRESS_LZ4;
int			trt_compression_level = 1;
int			trt_guc_bottommost_compression = TIDES_COMPRESS_ZSTD;
int			trt_compaction_workers = 1;
int			trt_l0_slowdown = 12;
int			trt_l0_stop = 20;
int			trt_delayed_write_rate_kb = 16 * 1024;
int			trt_max_relations = 16384;
int			trt_row_lock_stripes = 4096;
int			trt_tablespaces = TRT_TABLESPACES_REFUSE;
bool		trt_wal = true;
bool		trt_check_publications = true;
int			trt_bulk_load_threshold_kb = 32 * 1024;
bool		trt_bulk_load_helper = true;
bool		trt_bulk_read_helper = true;
bool		trt_transparent_huge_pages = true;

static const struct config_enum_entry sync_mode_options[] = {
	{"none", TIDES_SYNC_NONE, false},
	{"interval", TIDES_SYNC_INTERVAL, false},
	{"full", TIDES_SYNC_FULL, false},
	{NULL, 0, false}
};

static const struct config_enum_entry tablespaces_options[] = {
	{"refuse", TRT_TABLESPACES_REFUSE, false},
	{"ignore", TRT_TABLESPACES_IGNORE, false},
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

static void
assign_compression(int newval, void *extra)
{
	trt_guc_compression = newval;
	trt_compression_changed();
}

static void
assign_memtable_discard(int newval, void *extra)
{
	trt_memtable_discard_ms = newval;
	trt_memtable_discard_changed();
}

static void
assign_bottommost_compression(int newval, void *extra)
{
	trt_guc_bottommost_compression = newval;
	trt_compression_changed();
}

/* zstd's level 0 means "its default": ask for the level itself */
static bool
check_compression_level(int *newval, void **extra, GucSource source)
{
	if (*newval != 0)
		return true;
	GUC_check_errdetail("zstd levels are 1 .. 19, or -1 .. %d for its fast levels.", TIDES_ZSTD_FASTEST);
	return false;
}

static void
assign_compression_level(int newval, void *extra)
{
	trt_compression_level = newval;
	trt_compression_changed();
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
	DefineCustomIntVariable("tides.memtables_per_flush",
							"Sealed memtables a flush merges into one level-0 file.",
							"The flush worker waits until this many memtables are sealed; less than tides.memtable_count.",
							&trt_memtables_per_flush, 1, 1, 15,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.memtable_discard_after",
							"Time a memtable stays unused before its shared memory goes back to the system.",
							"Idle memtables' memory then serves the page cache; one free memtable is always kept ready.  0 keeps all of it.",
							&trt_memtable_discard_ms, 10000, 0, 3600000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, assign_memtable_discard, NULL);
	DefineCustomIntVariable("tides.block_cache_size",
							"Size of the shared block cache for SSTable blocks.",
							NULL, &trt_block_cache_mb, 128, 1, INT_MAX / 2,
							PGC_POSTMASTER, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.metadata_size",
							"Shared memory for engine metadata (file lists, versions).",
							NULL, &trt_meta_size_mb, 16, 1, 4096,
							PGC_POSTMASTER, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomBoolVariable("tides.wal",
							 "Log tides changes in PostgreSQL's WAL.",
							 "on: tides changes are WAL records, durable with the commit's WAL flush, replicated to standbys, in base backups and point-in-time recovery; tides.sync_mode does not apply.  off: the engine's own log, which none of those see.",
							 &trt_wal, true,
							 PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("tides.transparent_huge_pages",
							 "Ask the kernel for transparent huge pages for the engine's shared memory.",
							 "on: the memtables, block cache and metadata are advised MADV_HUGEPAGE when the server starts; the kernel uses 2 MB pages for them where /sys/kernel/mm/transparent_hugepage/shmem_enabled is advise or always, and nothing changes where it is never.  off: no advice.",
							 &trt_transparent_huge_pages, true,
							 PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("tides.check_publications",
							 "Refuse publications that name tides tables.",
							 "Logical decoding does not see tides changes: on, CREATE/ALTER PUBLICATION naming a tides table fails and FOR ALL TABLES / TABLES IN SCHEMA warn.  off: accepted silently (PostgreSQL's own regression suite on tides tables).",
							 &trt_check_publications, true,
							 PGC_SUSET, 0, NULL, NULL, NULL);
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
							 PGC_SIGHUP, 0, NULL, assign_compression, NULL);
	DefineCustomEnumVariable("tides.bottommost_compression",
							 "Compression of SSTable blocks written from now on into the last level, and of bulk loads and index builds written as files.",
							 "The last level holds nearly all of the data and is rewritten least often per byte: a stronger compression there shrinks the store for little CPU.",
							 &trt_guc_bottommost_compression, TIDES_COMPRESS_ZSTD, compression_options,
							 PGC_SIGHUP, 0, NULL, assign_bottommost_compression, NULL);
	DefineCustomIntVariable("tides.compression_level",
							"zstd compression level (tides.compression and tides.bottommost_compression).",
							"1 .. 19; negative: zstd's fast levels, less CPU for larger files.",
							&trt_compression_level, 1, TIDES_ZSTD_FASTEST, 19,
							PGC_SIGHUP, 0, check_compression_level, assign_compression_level, NULL);
	DefineCustomIntVariable("tides.compaction_workers",
							"Number of background compaction workers.",
							NULL, &trt_compaction_workers, 1, 1, TRT_MAX_COMPACTION_WORKERS,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.l0_slowdown_files",
							"Level-0 files at which writers are slowed down.",
							"At least 4, the level-0 files that start a compaction.",
							&trt_l0_slowdown, 12, 4, 1000,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.l0_stop_files",
							"Level-0 files at which writers wait for compaction.",
							"At least 4, the level-0 files that start a compaction.",
							&trt_l0_stop, 20, 4, 1000,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.delayed_write_rate",
							"Write rate per second of each writing process at tides.l0_slowdown_files level-0 files.",
							"Halved with each further level-0 file, so that compaction catches up before tides.l0_stop_files; 0 never delays writes.",
							&trt_delayed_write_rate_kb, 16 * 1024, 0, INT_MAX / 2,
							PGC_POSTMASTER, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.bulk_load_threshold",
							"Rows a transaction writes into one table before the rest goes into table files directly.",
							"COPY and INSERT into a permanent or unlogged tides table without indexes, or one created or truncated in the same transaction: past this many bytes of rows, the rows are written as sorted table files installed in the bottom level, not through the memtables.  -1 disables it.",
							&trt_bulk_load_threshold_kb, 32 * 1024, -1, INT_MAX / 2,
							PGC_USERSET, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomBoolVariable("tides.bulk_load_helper",
							 "Compress a bulk load's table files in a helper thread of the backend.",
							 "on: while the backend parses and encodes rows, one thread of it compresses and checksums the finished data blocks (the files are the same either way).  off: the backend compresses them itself.",
							 &trt_bulk_load_helper, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("tides.bulk_read_helper",
							 "Read and decompress a bulk read's blocks ahead of it in a helper thread of the backend.",
							 "on: a sequential scan of a table larger than a quarter of the block cache, an index build's scan, a rewrite's or VACUUM's pass leave the reading and decompression of each table file's data blocks to a thread of the backend, ahead of the rows' processing.  off: the backend reads them itself.",
							 &trt_bulk_read_helper, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("tides.tablespaces",
							 "What a tablespace other than the database's default means for tides storage.",
							 "refuse: creating or moving a tides table or tides_btree index there fails; "
							 "ignore: it is accepted, and its rows stay in pg_tides like every other's.",
							 &trt_tablespaces, TRT_TABLESPACES_REFUSE, tablespaces_options,
							 PGC_SUSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("tides.max_relations",
							"Relations with tides storage that can be in use at once.",
							NULL, &trt_max_relations, 16384, 128, 1 << 24,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);

	/*
	 * A flush that waited for every memtable to be sealed would leave none
	 * for new writes: as for a value out of range, warn and keep the default.
	 */
	if (trt_memtables_per_flush >= trt_memtable_count)
	{
		ereport(WARNING,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tides.memtables_per_flush (%d) must be less than tides.memtable_count (%d); using 1",
						trt_memtables_per_flush, trt_memtable_count)));
		SetConfigOption("tides.memtables_per_flush", "1", PGC_POSTMASTER, PGC_S_OVERRIDE);
	}
}

