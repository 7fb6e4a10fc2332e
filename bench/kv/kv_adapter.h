/*
 * kv_adapter.h -- the small interface every engine under test implements.
 *
 * The workload code in kvbench.c only talks to engines through this table,
 * so the tides engine and RocksDB run exactly the same workload code.
 *
 *   kv_db      one open database (one per benchmark child process)
 *   kv_handle  per worker thread state (tides needs one tides_db handle per
 *              thread; RocksDB just keeps a reusable write batch)
 *   kv_iter    an iterator created from a handle
 *
 * All functions return 0 on success; get returns KV_NOTFOUND for absent keys;
 * errors are negative and the message is in the handle/db error buffer.
 */
#ifndef KV_ADAPTER_H
#define KV_ADAPTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KV_NOTFOUND 1

typedef enum kv_comp
{
	KV_COMP_NONE = 0,
	KV_COMP_LZ4 = 1
} kv_comp;

/* settings shared by both engines (see README.md for the mapping) */
typedef struct kv_config
{
	const char *dir;			/* database directory */
	kv_comp		compression;
	bool		create;			/* directory is new (else reopen) */
	int			nthreads;		/* worker threads that will attach */
	uint64_t	memtable_bytes; /* write buffer / memtable size (64 MiB) */
	uint32_t	memtable_count; /* active + immutable memtables (4) */
	uint64_t	block_cache_bytes;	/* (128 MiB) */
	uint32_t	block_size;		/* (4096) */
	uint32_t	bloom_bits;		/* (10) */
	uint64_t	target_file_bytes;	/* (64 MiB) */
	uint64_t	level_base_bytes;	/* (256 MiB) */
	uint32_t	l0_compact, l0_slowdown, l0_stop;	/* (4, 12, 20) */
	int			bg_threads;		/* background threads (2) */
} kv_config;

typedef struct kv_pair
{
	const void *key;
	size_t		klen;
	const void *val;
	size_t		vlen;
} kv_pair;

/* engine counters the driver reports (zero when not applicable) */
typedef struct kv_counters
{
	uint64_t	busy_waits;		/* writer waits after TIDES_BUSY */
	uint64_t	bg_errors;		/* failed background work calls */
	uint64_t	stalls;			/* engine-reported write stalls/slowdowns */
} kv_counters;

typedef struct kv_db kv_db;
typedef struct kv_handle kv_handle;
typedef struct kv_iter kv_iter;

typedef struct kv_engine
{
	const char *name;

	kv_db	   *(*open) (const kv_config *cfg, char *err, size_t errlen);
	/* clean close; returns 0 or -1 */
	int			(*close) (kv_db *db, char *err, size_t errlen);

	kv_handle  *(*attach) (kv_db *db, char *err, size_t errlen);
	void		(*detach) (kv_handle *h);

	/* apply n puts atomically */
	int			(*put_batch) (kv_handle *h, const kv_pair *kv, int n);
	/* copy the value into buf (cap bytes); KV_NOTFOUND when absent */
	int			(*get) (kv_handle *h, const void *key, size_t klen,
						void *buf, size_t cap, size_t *vlen);

	kv_iter    *(*iter_new) (kv_handle *h);
	void		(*iter_seek) (kv_iter *it, const void *key, size_t klen);
	void		(*iter_next) (kv_iter *it);
	bool		(*iter_valid) (kv_iter *it);
	const void *(*iter_key) (kv_iter *it, size_t *len);
	const void *(*iter_value) (kv_iter *it, size_t *len);
	/* frees the iterator; returns its final status (0 ok, -1 error) */
	int			(*iter_free) (kv_iter *it);

	/* flush memtables and wait until no flush/compaction is pending */
	int			(*flush_wait_idle) (kv_db *db, char *err, size_t errlen);
	/*
	 * bytes (st_size) of all files in the database directory; *allocated
	 * gets st_blocks * 512, *table_bytes the st_size of the *.sst files
	 */
	uint64_t	(*size_on_disk) (kv_db *db, uint64_t *allocated, uint64_t *table_bytes);
	void		(*counters) (kv_db *db, kv_counters *c);
	/* last error message of a handle */
	const char *(*errmsg) (kv_handle *h);
} kv_engine;

extern const kv_engine kv_engine_rocksdb;
#ifdef HAVE_TIDES
extern const kv_engine kv_engine_tides;
#endif

/* helpers in kv_util.c */
uint64_t	kv_dir_size(const char *dir, uint64_t *allocated, uint64_t *table_bytes);
int			kv_rmtree(const char *dir);
uint64_t	kv_now_ns(void);
void		kv_sleep_us(unsigned us);
/* BENCH_IDLE_TIMEOUT (seconds, default 1800): limit for flush_wait_idle */
uint64_t	kv_idle_timeout_s(void);

#endif							/* KV_ADAPTER_H */
