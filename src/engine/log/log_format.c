/*
 * log_format.c -- record header encoding and checks.
 */
#include "log/log_format.h"

#include <string.h>

#include "util/coding.h"
#include "util/crc32c.h"

void
tides_rec_seal(uint8_t *hdr, uint32_t len, uint64_t lsn, tides_rec_type type)
{
	tides_put32(hdr + 4, len);
	tides_put64(hdr + 8, lsn);
	hdr[16] = (uint8_t) type;
	hdr[17] = hdr[18] = hdr[19] = 0;
	tides_put32(hdr, tides_crc_mask(tides_crc32c(hdr + 4, TIDES_REC_HEADER - 4 + (size_t) len)));
}

tides_rec_check
tides_rec_check_header(const uint8_t *hdr, uint64_t lsn, uint64_t room,
					   uint32_t *len, tides_rec_type *type)
{
	uint32_t	l = tides_get32(hdr + 4);
	uint8_t		t = hdr[16];

	if (tides_get64(hdr + 8) != lsn)
		return TIDES_REC_BAD_HEADER;
	if (t < TIDES_REC_BATCH || t > TIDES_REC_EDIT || hdr[17] || hdr[18] || hdr[19])
		return TIDES_REC_BAD_HEADER;
	if ((uint64_t) l > room)
		return TIDES_REC_BAD_HEADER;
	*len = l;
	*type = (tides_rec_type) t;
	return TIDES_REC_OK;
}

bool
tides_rec_check_crc(const uint8_t *hdr, uint32_t len)
{
	uint32_t	want = tides_crc_unmask(tides_get32(hdr));

	return tides_crc32c(hdr + 4, TIDES_REC_HEADER - 4 + (size_t) len) == want;
}
