/*
 * log_format.c -- record header encoding and checks.
 */
#include "log/log_format.h"

#include <string.h>

#include "util/coding.h"
#include "util/crc32c.h"

#define CLAIM_MAX 0xffffffu

static void
seal(uint8_t *hdr, uint32_t len, uint64_t lsn, tides_rec_type type, uint32_t claim)
{
	uint8_t    *c = hdr + TIDES_REC_OFF_CLAIM;

	tides_put32(hdr + TIDES_REC_OFF_LEN, len);
	tides_put64(hdr + TIDES_REC_OFF_LSN, lsn);
	hdr[TIDES_REC_OFF_TYPE] = (uint8_t) type;
	c[0] = (uint8_t) claim;
	c[1] = (uint8_t) (claim >> 8);
	c[2] = (uint8_t) (claim >> 16);
	tides_put32(hdr + TIDES_REC_OFF_CRC,
				tides_crc_mask(tides_crc32c(hdr + TIDES_REC_OFF_LEN,
											TIDES_REC_HEADER - TIDES_REC_OFF_LEN + (size_t) len)));
}

void
tides_rec_seal(uint8_t *hdr, uint32_t len, uint64_t lsn, tides_rec_type type)
{
	seal(hdr, len, lsn, type, 0);
}

void
tides_rec_seal_durable(uint8_t *hdr, uint32_t len, uint64_t lsn, tides_rec_type type,
					   uint64_t durable)
{
	uint32_t	claim = 0;

	/*
	 * Round the distance up to whole units, so the claim never reaches past
	 * `durable`; a distance too long to encode, or nothing durable yet,
	 * claims nothing.  Only batches claim (other types must keep zero).
	 */
	if (type == TIDES_REC_BATCH && durable > 0 && durable <= lsn)
	{
		uint64_t	back = (lsn - durable + TIDES_REC_CLAIM_UNIT - 1) / TIDES_REC_CLAIM_UNIT;

		if (back < CLAIM_MAX && back * TIDES_REC_CLAIM_UNIT < lsn)
			claim = (uint32_t) back + 1;
	}
	seal(hdr, len, lsn, type, claim);
}

uint64_t
tides_rec_durable_claim(const uint8_t *hdr)
{
	const uint8_t *c = hdr + TIDES_REC_OFF_CLAIM;
	uint32_t	claim = c[0] | ((uint32_t) c[1] << 8) | ((uint32_t) c[2] << 16);

	if (claim == 0)
		return 0;
	return tides_rec_lsn(hdr) - (uint64_t) (claim - 1) * TIDES_REC_CLAIM_UNIT;
}

tides_rec_check
tides_rec_check_header(const uint8_t *hdr, uint64_t lsn, uint64_t room,
					   uint32_t *len, tides_rec_type *type)
{
	uint32_t	l = tides_rec_len(hdr);
	uint8_t		t = hdr[TIDES_REC_OFF_TYPE];
	const uint8_t *c = hdr + TIDES_REC_OFF_CLAIM;

	if (tides_rec_lsn(hdr) != lsn)
		return TIDES_REC_BAD_HEADER;
	if (t < TIDES_REC_BATCH || t > TIDES_REC_EDIT)
		return TIDES_REC_BAD_HEADER;
	if (t != TIDES_REC_BATCH && (c[0] || c[1] || c[2]))
		return TIDES_REC_BAD_HEADER;	/* only batches carry a durable claim */
	if ((uint64_t) l > room)
		return TIDES_REC_BAD_HEADER;
	*len = l;
	*type = (tides_rec_type) t;
	return TIDES_REC_OK;
}

bool
tides_rec_check_crc(const uint8_t *hdr, uint32_t len)
{
	uint32_t	want = tides_crc_unmask(tides_get32(hdr + TIDES_REC_OFF_CRC));

	return tides_crc32c(hdr + TIDES_REC_OFF_LEN, TIDES_REC_HEADER - TIDES_REC_OFF_LEN + (size_t) len) == want;
}
