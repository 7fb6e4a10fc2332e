/*
 * write_batch.h -- the encoding of a write batch, which is also the payload
 * of a log record, so a batch is written to the log without re-encoding.
 *
 * Layout (the batch buffer reserves the 20-byte record header in front):
 *
 *     [record header, 20 bytes: filled by the write path]
 *     payload + 0   u64  seq of the first entry (filled by the write path)
 *     payload + 8   u32  count of entries
 *     payload + 12  u64  tag (0: none)
 *     payload + 20  u8   flags: 1 = this batch seals its tag; others must be 0
 *     payload + 21  entries: u8 type (TIDES_KT_*), varint key length, key,
 *                   and for TIDES_KT_VALUE: varint value length, value
 *
 * Entry i gets sequence number seq + i.  This header owns the layout: code
 * elsewhere reads and writes the batch header through the accessors below,
 * never at raw offsets.
 */
#ifndef TIDES_DB_WRITE_BATCH_H
#define TIDES_DB_WRITE_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "log/log_format.h"
#include "util/buf.h"
#include "util/coding.h"
#include "util/status.h"

/* offsets of the batch header's fields in the payload */
#define TIDES_BATCH_OFF_SEQ 0
#define TIDES_BATCH_OFF_COUNT 8
#define TIDES_BATCH_OFF_TAG 12
#define TIDES_BATCH_OFF_FLAGS 20
#define TIDES_BATCH_HEADER 21	/* where the entries begin */

#define TIDES_BATCH_FLAG_SEAL 1

struct tides_batch
{
	tides_buf	rep;			/* record header + batch header + entries */
	uint32_t	count;
	uint64_t	arena_bytes;	/* memtable bytes needed at height 1 */
	uint32_t	max_key_len;
	bool		defer_sync;		/* see tides_batch_defer_sync */
	bool		unpaced;		/* see tides_batch_unpaced */
	bool		no_wait;		/* see tides_batch_no_wait */
};

/* the payload (what follows the record header) */
static inline const uint8_t *
tides_batch_payload(const tides_batch *b, size_t *len)
{
	*len = b->rep.len - TIDES_REC_HEADER;
	return b->rep.data + TIDES_REC_HEADER;
}

/*
 * Header fields of a batch being built.  The buffer always holds the record
 * and batch headers (batch_reset) unless it ran out of memory (rep.oom), in
 * which case the setters do nothing and the getters must not be called.
 */
static inline uint64_t
tides_batch_tag_of(const tides_batch *b)
{
	return tides_get64(b->rep.data + TIDES_REC_HEADER + TIDES_BATCH_OFF_TAG);
}

static inline bool
tides_batch_seals(const tides_batch *b)
{
	return (b->rep.data[TIDES_REC_HEADER + TIDES_BATCH_OFF_FLAGS] & TIDES_BATCH_FLAG_SEAL) != 0;
}

/* the write path assigns the first sequence number once it has reserved them */
static inline void
tides_batch_set_seq(tides_batch *b, uint64_t seq)
{
	tides_put64(b->rep.data + TIDES_REC_HEADER + TIDES_BATCH_OFF_SEQ, seq);
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
	uint8_t		flags;			/* all flag bits, to reject unknown ones */
} tides_batch_header;

/* the header of an encoded payload of at least TIDES_BATCH_HEADER bytes */
static inline void
tides_batch_read_header(const uint8_t *payload, tides_batch_header *hdr)
{
	hdr->seq = tides_get64(payload + TIDES_BATCH_OFF_SEQ);
	hdr->count = tides_get32(payload + TIDES_BATCH_OFF_COUNT);
	hdr->tag = tides_get64(payload + TIDES_BATCH_OFF_TAG);
	hdr->flags = payload[TIDES_BATCH_OFF_FLAGS];
	hdr->seal = (hdr->flags & TIDES_BATCH_FLAG_SEAL) != 0;
}

/*
 * Decode a payload (from the log) and call fn for each entry.  Any malformed
 * byte gives TIDES_CORRUPTION with a message in err; fn's own error stops
 * the walk and is returned.
 */
tides_status tides_batch_decode(const uint8_t *payload, size_t len, tides_batch_header *hdr,
								tides_batch_entry_fn fn, void *arg, tides_error *err);

#endif
