/*
 * fuzz_log.c -- the log record reader, the batch decoder and log recovery
 * on arbitrary bytes.
 *
 * Input: a control byte, then data.  By ctl % 4:
 *   0  data is a log segment file: tides_log_replay from position 0, each
 *      batch payload then decoded;
 *   1  data is one batch payload: tides_batch_decode;
 *   2  data is a sequence of (u16 length, payload) chunks framed by this
 *      harness as log records with valid checksums at their positions (so
 *      the fuzzer reaches the decoder through the record checks), replayed;
 *   3  like 2, but the segment goes through a full recovery (tides_open on a
 *      fresh region), which inserts the batches into memtables, and the
 *      recovered store is read.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/version_edit.h"
#include "db/write_batch.h"
#include "log/log.h"
#include "memvfs.h"
#include "util/coding.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SEG (64u << 10)

static memvfs mfs;
static void *region;
static size_t region_size;
static tides_options opts;

static tides_status
entry(void *arg, uint64_t seq, int type, const uint8_t *key, size_t klen,
	  const uint8_t *val, size_t vlen)
{
	volatile uint8_t sink = 0;

	(void) arg;
	(void) seq;
	(void) type;
	if (klen)
		sink ^= key[klen - 1];
	if (vlen)
		sink ^= val[vlen - 1];
	(void) sink;
	return TIDES_OK;
}

static tides_status
record(void *arg, uint64_t lsn, const uint8_t *payload, uint32_t len)
{
	tides_batch_header h;
	tides_error err;

	(void) arg;
	(void) lsn;
	return tides_batch_decode(payload, len, &h, entry, NULL, &err);
}

/* frame (u16 len, payload) chunks as records from position 0 */
static size_t
frame(const uint8_t *data, size_t size, uint8_t *seg)
{
	uint64_t	pos = 0;
	size_t		off = 0;

	memset(seg, 0, SEG);
	while (off + 2 <= size)
	{
		size_t		len = tides_get32((const uint8_t[]) {data[off], data[off + 1], 0, 0});

		off += 2;
		if (len > size - off)
			len = size - off;
		if (pos + TIDES_REC_HEADER + len > SEG)
			break;
		memcpy(seg + pos + TIDES_REC_HEADER, data + off, len);
		tides_rec_seal(seg + pos, (uint32_t) len, pos, TIDES_REC_BATCH);
		pos += TIDES_REC_HEADER + len;
		off += len;
	}
	return (size_t) pos;
}

static void
replay_segment(const uint8_t *seg, size_t n)
{
	tides_log_shared sh;
	tides_log	lg;
	tides_error err;
	uint64_t	end;
	bool		damaged;

	memvfs_reset(&mfs);
	memvfs_put(&mfs, "/d/000000000000.log", seg, n);
	tides_log_shared_init(&sh, SEG);
	tides_log_attach(&lg, &sh, &mfs.vfs, NULL, "/d");
	tides_error_clear(&err);
	tides_log_replay(&lg, 0, NULL, 0, record, NULL, &end, &damaged, &err);
	if (end > n + SEG)
		abort();
	tides_log_detach(&lg);
}

static void
recover_segment(const uint8_t *seg, size_t n)
{
	tides_db   *db = NULL;
	tides_recovery_info info;

	if (region == NULL)
	{
		tides_options_default(&opts);
		opts.memtable_size = 64 << 10;
		opts.memtable_count = 2;
		opts.block_cache_size = 256 << 10;
		opts.meta_size = 1 << 20;
		opts.log_segment_size = SEG;
		opts.target_file_size = 64 << 10;
		opts.sync_mode = TIDES_SYNC_NONE;
		region_size = tides_region_size(&opts);
		region = aligned_alloc(64, (region_size + 63) & ~(size_t) 63);
	}
	memvfs_reset(&mfs);
	memvfs_put(&mfs, "/d/000000000000.log", seg, n);
	if (tides_region_init(region, region_size, &opts) != TIDES_OK)
		abort();
	if (tides_open(region, "/d", &opts, &mfs.vfs, true, &info, &db) == TIDES_OK)
	{
		tides_iter *it = tides_iter_new(db, NULL);
		int			k = 0;

		for (tides_iter_first(it); tides_iter_valid(it) && k < 10000; tides_iter_next(it), k++)
		{
			size_t		kl;
			const uint8_t *key = tides_iter_key(it, &kl);
			void	   *v = NULL;
			size_t		vl;

			if (k % 7 == 0 && tides_get(db, NULL, key, kl, &v, &vl) != TIDES_OK)
				abort();		/* what the iterator shows, a point read must find */
			free(v);
		}
		tides_iter_free(it);
	}
	tides_close(db);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t seg[SEG];
	uint8_t		ctl;

	if (size < 1)
		return 0;
	ctl = data[0];
	data++;
	size--;
	switch (ctl % 4)
	{
		case 0:
			replay_segment(data, size < SEG ? size : SEG);
			break;
		case 1:
			{
				tides_batch_header h;
				tides_error err;

				tides_batch_decode(data, size, &h, entry, NULL, &err);
				break;
			}
		case 2:
			replay_segment(seg, frame(data, size, seg));
			break;
		default:
			{
				size_t		n = frame(data, size, seg) + 64;	/* and a little clean end */

				recover_segment(seg, n < SEG ? n : SEG);
			}
			break;
	}
	return 0;
}
