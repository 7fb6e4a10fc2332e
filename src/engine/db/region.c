/*
 * region.c -- options and the layout of the shared region.
 */
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "db/db_impl.h"
#include "table/compress.h"

#define ALIGN64(x) (((x) + 63) & ~(uint64_t) 63)

void
tides_options_default(tides_options *o)
{
	memset(o, 0, sizeof(*o));
	o->memtable_size = 64ull << 20;
	o->memtable_count = 4;
	o->memtables_per_flush = 1;
	o->memtable_discard_ms = 10000;
	o->block_cache_size = 128ull << 20;
	o->meta_size = 16ull << 20;
	o->max_open_tags = 4096;
	o->log_mode = TIDES_LOG_OWN;
	o->block_size = 4096;
	o->restart_interval = 16;
	o->bloom_bits_per_key = 10;
	o->prefix_len = 0;
	o->filter_stem_suffix = 0;
	o->range_prefix_len = 0;
	o->compression = TIDES_COMPRESS_LZ4;
	o->compression_level = 3;
	o->bottommost_compression = TIDES_COMPRESS_LZ4;
	o->bottommost_compression_level = 3;
	o->target_file_size = 64ull << 20;
	o->level0_compaction_trigger = 4;
	o->level0_adaptive_trigger = false;
	o->level0_tiered = false;
	o->level0_slowdown_trigger = 12;
	o->level0_stop_trigger = 20;
	o->level_base_size = 256ull << 20;
	o->level_size_ratio = 10;
	o->delayed_write_rate = 16ull << 20;
	o->log_segment_size = 64ull << 20;
	o->sync_mode = TIDES_SYNC_FULL;
	o->sync_interval_ms = 200;
	o->max_open_files = 256;
}

static bool
options_valid(const tides_options *o)
{
	return o->memtable_size >= (64u << 10) && o->memtable_size <= (uint64_t) UINT32_MAX &&
		o->memtable_count >= 2 && o->memtable_count <= TIDES_MAX_MEMTABLES &&
		o->memtables_per_flush >= 1 && o->memtables_per_flush < o->memtable_count &&
		o->meta_size >= (1u << 20) &&
		o->max_open_tags >= 16 && o->max_open_tags <= 16384 &&
		o->block_size >= 256 && o->block_size <= (1u << 20) &&
		o->restart_interval >= 1 &&
		o->bloom_bits_per_key <= 64 &&
		o->prefix_len <= TIDES_MAX_PREFIX_LEN &&
		o->filter_stem_suffix <= TIDES_MAX_STEM_SUFFIX &&
		o->range_prefix_len <= TIDES_MAX_PREFIX_LEN &&
		tides_compression_valid(o->compression, o->compression_level) &&
		tides_compression_valid(o->bottommost_compression, o->bottommost_compression_level) &&
		o->target_file_size >= (64u << 10) &&
		o->level0_compaction_trigger >= 1 &&
		o->level0_slowdown_trigger >= o->level0_compaction_trigger &&
		o->level0_stop_trigger >= o->level0_slowdown_trigger &&
		o->level_size_ratio >= 2 &&
		o->log_segment_size >= (64u << 10) &&
		o->log_segment_size >= 2 * (o->memtable_size / 8) &&
		(o->sync_mode == TIDES_SYNC_NONE || o->sync_mode == TIDES_SYNC_INTERVAL ||
		 o->sync_mode == TIDES_SYNC_FULL) &&
		(o->log_mode == TIDES_LOG_OWN || o->log_mode == TIDES_LOG_EXTERNAL) &&
		o->max_open_files >= 4;
}

static uint32_t
tag_capacity(const tides_options *o)
{
	uint32_t	cap = 16;

	while (cap < 2 * o->max_open_tags)
		cap *= 2;
	return cap;
}

size_t
tides_region_size(const tides_options *o)
{
	if (!options_valid(o))
		return 0;
	return ALIGN64(sizeof(tides_shared)) +
		ALIGN64(o->meta_size) +
		ALIGN64(tides_block_cache_shmem_size(o->block_cache_size)) +
		(size_t) o->memtable_count * ALIGN64(o->memtable_size);
}

tides_status
tides_region_init(void *region, size_t size, const tides_options *o)
{
	tides_shared *sh = region;
	uint8_t    *p = region;
	size_t		need = tides_region_size(o);

	if (need == 0 || size < need || ((uintptr_t) region & 63) != 0)
		return TIDES_INVALID;
	memset(sh, 0, sizeof(*sh));
	sh->magic = TIDES_REGION_MAGIC;
	sh->region_size = size;
	sh->ropts = *o;
	sh->ropts.wakeup = NULL;
	sh->ropts.wakeup_arg = NULL;
	atomic_init(&sh->state, TIDES_STATE_INIT);
	p += ALIGN64(sizeof(tides_shared));

	tides_shm_heap_init(&sh->heap, p, o->meta_size);
	p += ALIGN64(o->meta_size);

	sh->cache = tides_block_cache_init(p, o->block_cache_size);
	p += ALIGN64(tides_block_cache_shmem_size(o->block_cache_size));

	sh->nmemtables = o->memtable_count;
	for (uint32_t i = 0; i < o->memtable_count; i++)
	{
		tides_memtable_setup(&sh->memtables[i], p, o->memtable_size, o->filter_stem_suffix);
		p += ALIGN64(o->memtable_size);
	}

	tides_spin_init(&sh->write_lock);
	tides_log_shared_init(&sh->log, o->log_segment_size);
	tides_mutex_init(&sh->version_mutex);
	tides_rwlock_init(&sh->sv_lock);
	tides_mutex_init(&sh->flush_mutex);
	tides_spin_init(&sh->obsolete_lock);
	tides_spin_init(&sh->tag_lock);
	atomic_init(&sh->next_file_number, 1);
	tides_spin_init(&sh->failure_lock);
	tides_error_clear(&sh->flush_failure);
	tides_error_clear(&sh->compact_failure);
	for (int i = 0; i < TIDES_MAX_SNAPSHOTS; i++)
		atomic_init(&sh->snapshots[i], 0);

	sh->tag_cap = tag_capacity(o);
	sh->tags = tides_shm_alloc_zero(&sh->heap, sh->tag_cap * sizeof(tides_tag_entry));
	if (sh->tags == NULL)
		return TIDES_NO_MEMORY;
	return TIDES_OK;
}

uint64_t
tides_wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

uint64_t
tides_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}
