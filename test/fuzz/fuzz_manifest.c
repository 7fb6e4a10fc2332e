/*
 * fuzz_manifest.c -- the manifest edit decoder and manifest loading on
 * arbitrary bytes.
 *
 * Input: a control byte, then data.  By ctl % 4:
 *   0  data is one edit payload: tides_edit_decode, and if it decodes, a
 *      re-encode must decode to the same bytes again;
 *   1  data is a manifest file (named by CURRENT): full recovery on a fresh
 *      region over an in-memory file system, then reads and tides_verify;
 *   2  data is a sequence of (u16 length, payload) chunks that this harness
 *      frames as manifest records with valid checksums (so the fuzzer gets
 *      past the checksums into the decoder and the state merging), then as 1;
 *   3  data is the contents of CURRENT, with a small valid manifest beside.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/version_edit.h"
#include "log/log_format.h"
#include "memvfs.h"
#include "util/buf.h"
#include "util/coding.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static memvfs mfs;
static void *region;
static size_t region_size;
static tides_options opts;

static void
decode_only(const uint8_t *data, size_t size)
{
	tides_edit	e,
				e2;
	tides_error err;
	tides_buf	b,
				b2;

	if (tides_edit_decode(&e, data, size, &err) != TIDES_OK)
		return;
	tides_buf_init(&b);
	tides_buf_init(&b2);
	tides_edit_encode(&e, &b);
	if (b.oom || tides_edit_decode(&e2, b.data, b.len, &err) != TIDES_OK)
		abort();				/* what we encode we must decode */
	tides_edit_encode(&e2, &b2);
	if (b2.len != b.len || (b.len > 0 && memcmp(b.data, b2.data, b.len) != 0))
		abort();
	tides_edit_free(&e);
	tides_edit_free(&e2);
	tides_buf_free(&b);
	tides_buf_free(&b2);
}

static void
ignore_problem(void *arg, const char *file, const char *problem)
{
	(void) arg;
	(void) file;
	(void) problem;
}

static void
recover_with(const uint8_t *manifest, size_t n, const char *current, size_t clen)
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
		opts.log_segment_size = 64 << 10;
		opts.target_file_size = 64 << 10;
		opts.sync_mode = TIDES_SYNC_NONE;
		region_size = tides_region_size(&opts);
		region = aligned_alloc(64, (region_size + 63) & ~(size_t) 63);
	}
	memvfs_reset(&mfs);
	memvfs_put(&mfs, "/d/CURRENT", current, clen);
	memvfs_put(&mfs, "/d/MANIFEST-000005", manifest, n);
	if (tides_region_init(region, region_size, &opts) != TIDES_OK)
		abort();
	if (tides_open(region, "/d", &opts, &mfs.vfs, true, &info, &db) == TIDES_OK)
	{
		tides_iter *it = tides_iter_new(db, NULL);
		void	   *v = NULL;
		size_t		vl;
		bool		did;

		for (tides_iter_first(it); tides_iter_valid(it); tides_iter_next(it))
			;
		tides_iter_free(it);
		tides_get(db, NULL, "k", 1, &v, &vl);
		free(v);
		tides_verify(db, ignore_problem, NULL);
		tides_compact_work(db, &did);
		tides_maint_work(db, &did);
	}
	tides_close(db);
}

/* frame chunks as edit records from offset 0 */
static size_t
frame(const uint8_t *data, size_t size, uint8_t *out, size_t cap)
{
	uint64_t	pos = 0;
	size_t		off = 0;

	while (off + 2 <= size)
	{
		size_t		len = (size_t) data[off] | ((size_t) data[off + 1] << 8);

		off += 2;
		if (len > size - off)
			len = size - off;
		if (pos + TIDES_REC_HEADER + len > cap)
			break;
		memcpy(out + pos + TIDES_REC_HEADER, data + off, len);
		tides_rec_seal(out + pos, (uint32_t) len, pos, TIDES_REC_EDIT);
		pos += TIDES_REC_HEADER + len;
		off += len;
	}
	return (size_t) pos;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char current[] = "MANIFEST-000005\n";
	static uint8_t buf[1 << 20];
	uint8_t		ctl;

	if (size < 1)
		return 0;
	ctl = data[0];
	data++;
	size--;
	switch (ctl % 4)
	{
		case 0:
			decode_only(data, size);
			break;
		case 1:
			recover_with(data, size, current, strlen(current));
			break;
		case 2:
			recover_with(buf, frame(data, size, buf, sizeof(buf)), current, strlen(current));
			break;
		default:
			{
				/* a valid manifest: one empty state edit */
				uint8_t		m[TIDES_REC_HEADER + 2];

				m[TIDES_REC_HEADER] = 1;	/* replay_lsn */
				m[TIDES_REC_HEADER + 1] = 0;
				tides_rec_seal(m, 2, 0, TIDES_REC_EDIT);
				recover_with(m, sizeof(m), (const char *) data, size);
			}
			break;
	}
	return 0;
}
