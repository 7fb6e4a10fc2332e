/*
 * write_batch.h -- the encoding of a write batch, which is also the payload
 * of a log record, so a batch is written to the log without re-encoding.
 *
 * Layout (the batch buffer reserves the 20-byte record header in front):
 *
 *     [record header, 20 bytes: filled by the write path]
 *     u64  seq of the first entry (filled by the write path)
 *     u32  count of entries
 *     u64  tag (0: none)
 *     u8   flags: 1 = this batch seals its tag
 *     entries: u8 type (TIDES_KT_*), varint key length, key,
 *              and for TIDES_KT_VALUE: varint value length, value
 *
 * Entry i gets sequence number seq + i.
 */
#ifndef TIDES_DB_WRITE_BATCH_H
#define TIDES_DB_WRITE_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "log/log_format.h"
#include "util/buf.h"
#include "util/status.h"

#define TIDES_BATCH_HEADER 21
#define TIDES_BATCH_FLAG_SEAL 1

struct tides_batch
{
	tides_buf	rep;			/* record header + batch header + entries */
	uint32_t	count;
	uint64_t	arena_bytes;	/* memtable bytes needed at height 1 */
	uint32_t	max_key_len;
	bool		defer_sync;		/* see tides_batch_defer_sync */
};

/* the payload (what follows the record header) */
static inline const uint8_t *
tides_batch_payload(const tides_batch *b, size_t *len)
{
	*len = b->rep.len - TIDES_REC_HEADER;
	return b->rep.data + TIDES_REC_HEADER;
}

/* callback per entry of an encoded batch payload */
typedef tides_status (*tides_batch_entry_fn) (void *arg, uint64_t seq, int type,
											  const uint8_t *key, size_t klen,
											  const uint8_t *val, size_t vlen);

typedef struct tides_batch_header
{
	uint64_t	seq;
	uint32_t	count;
	uint64_t	tag;
	bool		seal;
} tides_batch_header;

/*
 * Decode a payload (from the log) and call fn for each entry.  Any malformed
 * byte gives TIDES_CORRUPTION with a message in err; fn's own error stops
 * the walk and is returned.
 */
tides_status tides_batch_decode(const uint8_t *payload, size_t len, tides_batch_header *hdr,
								tides_batch_entry_fn fn, void *arg, tides_error *err);

#endif
