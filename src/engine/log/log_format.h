/*
 * log_format.h -- the record framing shared by the log and the manifest.
 *
 * A record is a 20-byte header followed by `len` payload bytes:
 *
 *     offset 0   u32  masked crc32c of bytes 4 .. 20+len
 *     offset 4   u32  len
 *     offset 8   u64  lsn: the position of this header in the stream
 *     offset 16  u8   type (TIDES_REC_*)
 *     offset 17  u8[3] durable claim (BATCH records; zero in every other type)
 *
 * The position check is what makes recycled log segments safe: a stale
 * record left in a reused file carries the position it had in its old life,
 * which never equals its position in the new one.  Readers stop at the first
 * record that fails any check; they never trust a length before checking it
 * against the bytes that remain.
 *
 * The durable claim (a little-endian 24-bit value c) records what the
 * writer knew about the log before it when it wrote the record: c = 0
 * claims nothing; otherwise every byte of the stream below
 * lsn - (c - 1) * TIDES_REC_CLAIM_UNIT had been fsynced.  It is covered by
 * the checksum.  Recovery uses it to tell a torn tail (unsynced records
 * lost in an OS crash, in any order) from damage to records that were
 * already durable: see tides_log_replay and src/engine/README.md.
 */
#ifndef TIDES_LOG_LOG_FORMAT_H
#define TIDES_LOG_LOG_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/coding.h"

#define TIDES_REC_HEADER 20

/* offsets of the header's fields; this header owns them */
#define TIDES_REC_OFF_CRC 0
#define TIDES_REC_OFF_LEN 4
#define TIDES_REC_OFF_LSN 8
#define TIDES_REC_OFF_TYPE 16
#define TIDES_REC_OFF_CLAIM 17

typedef enum tides_rec_type
{
	TIDES_REC_BATCH = 1,		/* a write batch (db/write_batch.h) */
	TIDES_REC_PAD = 2,			/* rest of the segment unused */
	TIDES_REC_EDIT = 3			/* a manifest version edit */
} tides_rec_type;

/* fill the header of a record whose payload is already at hdr + 20 */
void		tides_rec_seal(uint8_t *hdr, uint32_t len, uint64_t lsn, tides_rec_type type);

/* the same, claiming that the stream below `durable` (<= lsn) was fsynced */
#define TIDES_REC_CLAIM_UNIT 256
void		tides_rec_seal_durable(uint8_t *hdr, uint32_t len, uint64_t lsn, tides_rec_type type,
								   uint64_t durable);

/*
 * The position below which a checked record (header and crc) claims the
 * stream was durable when it was written; 0 if it claims nothing.
 */
uint64_t	tides_rec_durable_claim(const uint8_t *hdr);

typedef enum tides_rec_check
{
	TIDES_REC_OK = 0,
	TIDES_REC_BAD_HEADER,		/* zero, wrong position, bad type, or too long */
	TIDES_REC_BAD_CRC
} tides_rec_check;

/*
 * Validate a header read at position lsn with at most `room` bytes after the
 * header available for the payload; on success sets *len and *type.
 */
tides_rec_check tides_rec_check_header(const uint8_t *hdr, uint64_t lsn, uint64_t room,
									   uint32_t *len, tides_rec_type *type);

/* verify the crc once the payload (len bytes at hdr + 20) has been read */
bool		tides_rec_check_crc(const uint8_t *hdr, uint32_t len);

/*
 * Raw fields of a header not (yet) checked, for scans that slide over bytes
 * looking for records and for the manifest's torn-tail rules; anything that
 * acts on a record uses tides_rec_check_header first.
 */
static inline uint32_t
tides_rec_len(const uint8_t *hdr)
{
	return tides_get32(hdr + TIDES_REC_OFF_LEN);
}

static inline uint64_t
tides_rec_lsn(const uint8_t *hdr)
{
	return tides_get64(hdr + TIDES_REC_OFF_LSN);
}

#endif
