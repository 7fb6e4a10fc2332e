/*
 * log.c -- segment files, record writes, group commit and replay.
 */
#include "log/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/assert.h"
#include "util/buf.h"
#include "util/coding.h"

/*
 * Segments are zero-filled in pieces of this size.  The page cache keeps a
 * file's pages in folios as large as the writes that created them, and a
 * small pwrite into a large folio walks all of its block buffers twice
 * (write_begin, commit): 130-byte records cost 2.0-2.9 us each in a
 * segment zero-filled by 1 MiB writes, 0.7-0.9 us by 16-64 KiB ones (ext4,
 * Linux 6.18).  This matters where records are still pwritten (a vfs
 * without map); mapped stores do not care.
 */
#define ZERO_CHUNK (1u << 16)
#define SPARE_SEGMENTS 2

void
tides_log_shared_init(tides_log_shared *sh, uint64_t segment_size)
{
	sh->segment_size = segment_size;
	atomic_init(&sh->written_lsn, 0);
	atomic_init(&sh->durable_lsn, 0);
	atomic_init(&sh->oldest_segment, 0);
	atomic_init(&sh->ready_segment, 0);
	tides_mutex_init(&sh->sync_mutex);
	tides_mutex_init(&sh->prepare_mutex);
}

void
tides_log_attach(tides_log *log, tides_log_shared *sh, tides_vfs *vfs,
				 tides_counters *counters, const char *dir)
{
	memset(log, 0, sizeof(*log));
	log->sh = sh;
	log->vfs = vfs;
	log->counters = counters;
	log->dir = dir;
	log->zero_fill = true;
	for (int i = 0; i < TIDES_LOG_FDS; i++)
		log->fds[i].fd = -1;
}

/* close a cached descriptor, and let go of its mapping */
static void
drop_slot(tides_log *log, int i)
{
	TIDES_ASSERT(log->fds[i].fd >= 0);
	if (log->fds[i].map != NULL)
		log->vfs->unmap(log->vfs, log->fds[i].map, log->sh->segment_size);
	log->vfs->close(log->vfs, log->fds[i].fd);
	log->fds[i].fd = -1;
	log->fds[i].map = NULL;
	log->fds[i].unmappable = false;
}

void
tides_log_detach(tides_log *log)
{
	for (int i = 0; i < TIDES_LOG_FDS; i++)
		if (log->fds[i].fd >= 0)
			drop_slot(log, i);
}

void
tides_log_segment_name(char *buf, size_t cap, const char *dir, uint64_t segment)
{
	snprintf(buf, cap, "%s/%012llu.log", dir, (unsigned long long) segment);
}

/* forget a cached descriptor (the file was renamed or deleted) */
static void
forget_fd(tides_log *log, uint64_t segment)
{
	for (int i = 0; i < TIDES_LOG_FDS; i++)
		if (log->fds[i].fd >= 0 && log->fds[i].segment == segment)
			drop_slot(log, i);
}

/* cache slot of a segment's descriptor, opened on demand; negative errno on failure */
static int
segment_slot(tides_log *log, uint64_t segment, char *path, size_t pathcap)
{
	int			victim = -1;
	int			fd;

	tides_log_segment_name(path, pathcap, log->dir, segment);
	log->clock++;
	for (int i = 0; i < TIDES_LOG_FDS; i++)
	{
		if (log->fds[i].fd >= 0 && log->fds[i].segment == segment)
		{
			log->fds[i].used = log->clock;
			return i;
		}
		if (victim < 0 || log->fds[i].fd < 0 ||
			(log->fds[victim].fd >= 0 && log->fds[i].used < log->fds[victim].used))
			victim = i;
	}
	fd = log->vfs->open(log->vfs, path, O_RDWR, 0600);
	if (fd < 0)
		return fd;
	if (log->fds[victim].fd >= 0)
		drop_slot(log, victim);
	log->fds[victim].fd = fd;
	log->fds[victim].segment = segment;
	log->fds[victim].used = log->clock;
	return victim;
}

/* descriptor of a segment, opened on demand; negative errno on failure */
static int
segment_fd(tides_log *log, uint64_t segment, char *path, size_t pathcap)
{
	int			i = segment_slot(log, segment, path, pathcap);

	return i < 0 ? i : log->fds[i].fd;
}

/*
 * The whole segment mapped for writes, made on first use; NULL: write with
 * pwrite.  Only a file of the full segment size is mapped: a store past its
 * end would raise SIGBUS where pwrite would extend it (a segment recycled
 * from a run with a smaller tides segment size).  Its blocks are allocated
 * (create_segment), or were written before (recycled), so a
 * store never needs space the file system might not have.
 */
static uint8_t *
slot_map(tides_log *log, int i)
{
	if (log->fds[i].map == NULL && !log->fds[i].unmappable)
	{
		uint64_t	size = log->sh->segment_size;

		/*
		 * One handle writes at rising positions, so it is done with every
		 * earlier segment: let their mappings go (the pages stay in the page
		 * cache; the process stops counting them as its own memory).
		 */
		for (int j = 0; j < TIDES_LOG_FDS; j++)
			if (log->fds[j].map != NULL && log->fds[j].segment < log->fds[i].segment)
			{
				log->vfs->unmap(log->vfs, log->fds[j].map, size);
				log->fds[j].map = NULL;
			}
		if (log->vfs->map != NULL && log->vfs->file_size(log->vfs, log->fds[i].fd) >= (int64_t) size)
			log->fds[i].map = log->vfs->map(log->vfs, log->fds[i].fd, size);
		log->fds[i].unmappable = log->fds[i].map == NULL;
	}
	return log->fds[i].map;
}

static tides_status
create_segment(tides_log *log, uint64_t segment, tides_error *err)
{
	char		path[1024];
	int			fd;
	int			r;
	uint8_t    *zeros;
	uint64_t	size = log->sh->segment_size;

	tides_log_segment_name(path, sizeof(path), log->dir, segment);
	fd = log->vfs->open(log->vfs, path, O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		return tides_fail_io(err, fd, "create log segment", path);
	r = log->vfs->allocate(log->vfs, fd, 0, size);
	zeros = calloc(1, ZERO_CHUNK);
	if (zeros == NULL && r == 0)
		r = -12;				/* ENOMEM */
	/*
	 * Zero-fill so that fdatasync never has to convert unwritten extents (a
	 * journal commit on top of every commit's sync).  Without it the blocks
	 * are allocated all the same, and read as zeros until written.
	 */
	for (uint64_t off = 0; r == 0 && log->zero_fill && off < size; off += ZERO_CHUNK)
	{
		uint64_t	n = size - off < ZERO_CHUNK ? size - off : ZERO_CHUNK;
		int64_t		w = log->vfs->pwrite(log->vfs, fd, zeros, n, off);

		if (w < 0)
			r = (int) w;
	}
	free(zeros);
	if (r == 0)
		r = log->vfs->fsync(log->vfs, fd);
	log->vfs->close(log->vfs, fd);
	if (r != 0)
	{
		log->vfs->unlink(log->vfs, path);
		return tides_fail_io(err, r, "preallocate log segment", path);
	}
	return TIDES_OK;
}

tides_status
tides_log_prepare(tides_log *log, uint64_t upto, uint64_t recycle_below, tides_error *err)
{
	tides_log_shared *sh = log->sh;
	tides_status s = TIDES_OK;
	bool		changed = false;
	char		from[1024],
				to[1024];

	tides_mutex_lock(&sh->prepare_mutex);
	while (s == TIDES_OK && atomic_load(&sh->ready_segment) <= upto)
	{
		uint64_t	ready = atomic_load(&sh->ready_segment);
		uint64_t	oldest = atomic_load(&sh->oldest_segment);

		/* segment files are [oldest, ready), and both ends only move forward */
		TIDES_ASSERT(oldest <= ready);

		if (oldest < recycle_below && oldest < ready)
		{
			int			r;

			tides_log_segment_name(from, sizeof(from), log->dir, oldest);
			tides_log_segment_name(to, sizeof(to), log->dir, ready);
			forget_fd(log, oldest);
			r = log->vfs->rename(log->vfs, from, to);
			if (r != 0)
			{
				s = tides_fail_io(err, r, "recycle log segment", from);
				break;
			}
			atomic_store(&sh->oldest_segment, oldest + 1);
		}
		else
		{
			s = create_segment(log, ready, err);
			if (s != TIDES_OK)
				break;
		}
		changed = true;
		atomic_store_explicit(&sh->ready_segment, ready + 1, memory_order_release);
	}
	/* keep a few recyclable segments, delete the rest */
	while (s == TIDES_OK)
	{
		uint64_t	oldest = atomic_load(&sh->oldest_segment);

		if (oldest + SPARE_SEGMENTS >= recycle_below || oldest + 1 >= atomic_load(&sh->ready_segment))
			break;
		tides_log_segment_name(from, sizeof(from), log->dir, oldest);
		forget_fd(log, oldest);
		log->vfs->unlink(log->vfs, from);
		atomic_store(&sh->oldest_segment, oldest + 1);
		changed = true;
	}
	if (s == TIDES_OK && changed)
	{
		int			r = log->vfs->sync_dir(log->vfs, log->dir);

		if (r != 0)
			s = tides_fail_io(err, r, "sync directory", log->dir);
	}
	tides_mutex_unlock(&sh->prepare_mutex);
	return s;
}

tides_status
tides_log_write(tides_log *log, uint64_t lsn, const uint8_t *rec, size_t len, tides_error *err)
{
	char		path[1024];
	uint64_t	seg = tides_log_segment_of(log->sh, lsn);
	int			slot;
	uint8_t    *map;
	int64_t		w;

	/*
	 * A whole record at its own position, inside one prepared segment
	 * (never across a segment boundary: recovery reads segment by segment).
	 */
	TIDES_ASSERT(len >= TIDES_REC_HEADER && tides_rec_lsn(rec) == lsn);
	TIDES_ASSERT(lsn % log->sh->segment_size + len <= log->sh->segment_size);
	TIDES_ASSERT(tides_log_segment_ready(log->sh, seg));
	slot = segment_slot(log, seg, path, sizeof(path));
	if (slot < 0)
		return tides_fail_io(err, slot, "open log segment", path);
	map = slot_map(log, slot);
	if (map != NULL)
	{
		/*
		 * Into the page cache without a system call.  Other processes'
		 * fsyncs find the pages dirty (the store's write fault marked them),
		 * and see the bytes once written_lsn, published after this
		 * returns, covers them.
		 */
		memcpy(map + lsn % log->sh->segment_size, rec, len);
	}
	else
	{
		w = log->vfs->pwrite(log->vfs, log->fds[slot].fd, rec, len, lsn % log->sh->segment_size);
		if (w < 0)
			return tides_fail_io(err, (int) w, "write log segment", path);
	}
	tides_count(log->counters, log_bytes_written, len);
	return TIDES_OK;
}

tides_status
tides_log_write_pad(tides_log *log, uint64_t lsn, tides_error *err)
{
	uint64_t	room = log->sh->segment_size - lsn % log->sh->segment_size;
	uint8_t		hdr[TIDES_REC_HEADER];

	if (room < TIDES_REC_HEADER)
		return TIDES_OK;
	/* the pad's payload is whatever follows; only its header is checked */
	tides_rec_seal(hdr, 0, lsn, TIDES_REC_PAD);
	return tides_log_write(log, lsn, hdr, sizeof(hdr), err);
}

tides_status
tides_log_sync(tides_log *log, uint64_t lsn, tides_error *err)
{
	tides_log_shared *sh = log->sh;
	tides_status s = TIDES_OK;

	if (atomic_load_explicit(&sh->durable_lsn, memory_order_acquire) >= lsn)
		return TIDES_OK;
	tides_mutex_lock(&sh->sync_mutex);
	if (atomic_load(&sh->durable_lsn) < lsn)
	{
		uint64_t	durable = atomic_load(&sh->durable_lsn);
		uint64_t	target = atomic_load_explicit(&sh->written_lsn, memory_order_acquire);

		if (target > durable)
		{
			uint64_t	first = tides_log_segment_of(sh, durable);
			uint64_t	last = tides_log_segment_of(sh, target - 1);

			/* a segment below oldest was recycled: already durable */
			if (first < atomic_load(&sh->oldest_segment))
				first = atomic_load(&sh->oldest_segment);
			for (uint64_t seg = first; seg <= last && s == TIDES_OK; seg++)
			{
				char		path[1024];
				int			fd = segment_fd(log, seg, path, sizeof(path));
				int			r = fd < 0 ? fd : log->vfs->fsync(log->vfs, fd);

				if (r != 0)
					s = tides_fail_io(err, r, "fsync log segment", path);
			}
			if (s == TIDES_OK)
			{
				/* durable_lsn only grows, and never past what was written */
				TIDES_ASSERT(target > atomic_load(&sh->durable_lsn));
				TIDES_ASSERT(target <= atomic_load(&sh->written_lsn));
				atomic_store_explicit(&sh->durable_lsn, target, memory_order_release);
				tides_count(log->counters, log_syncs, 1);
			}
		}
	}
	tides_mutex_unlock(&sh->sync_mutex);
	return s;
}

static bool
all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* is pos inside one of the skips?  then *to is where it ends */
static bool
in_skip(const tides_log_skip *skips, uint32_t nskips, uint64_t pos, uint64_t *to)
{
	for (uint32_t i = 0; i < nskips; i++)
		if (skips[i].from <= pos && pos < skips[i].to)
		{
			*to = skips[i].to;
			return true;
		}
	return false;
}

/* the first position at or after pos outside every skip (skips may abut) */
static uint64_t
past_skips(const tides_log_skip *skips, uint32_t nskips, uint64_t pos)
{
	uint64_t	to;

	while (in_skip(skips, nskips, pos, &to))
		pos = to;
	return pos;
}

tides_status
tides_log_replay(tides_log *log, uint64_t from, const tides_log_skip *skips, uint32_t nskips,
				 tides_log_record_fn fn, void *arg, uint64_t *end, bool *damaged,
				 tides_error *err)
{
	uint64_t	size = log->sh->segment_size;
	uint64_t	pos = from;
	tides_buf	rec;
	tides_status s = TIDES_OK;
	char		path[1024];

	*damaged = false;
	tides_buf_init(&rec);
	for (;;)
	{
		uint64_t	seg,
					off,
					room;
		int			fd;
		int64_t		r;
		uint32_t	len;
		tides_rec_type type;

		pos = past_skips(skips, nskips, pos);
		seg = pos / size;
		off = pos % size;
		if (size - off < TIDES_REC_HEADER)
		{
			pos = (seg + 1) * size;
			continue;
		}
		fd = segment_fd(log, seg, path, sizeof(path));
		if (fd < 0)
			break;				/* no such segment: the log ends here */
		room = size - off - TIDES_REC_HEADER;
		if (!tides_buf_reserve(&rec, TIDES_REC_HEADER))
		{
			s = tides_fail(err, TIDES_NO_MEMORY, "out of memory replaying the log");
			break;
		}
		r = log->vfs->pread(log->vfs, fd, rec.data, TIDES_REC_HEADER, off);
		if (r < 0)
		{
			s = tides_fail_io(err, (int) r, "read log segment", path);
			break;
		}
		if (r < TIDES_REC_HEADER || all_zero(rec.data, TIDES_REC_HEADER))
			break;				/* clean end: never written */
		if (tides_rec_check_header(rec.data, pos, room, &len, &type) != TIDES_REC_OK)
		{
			*damaged = true;
			break;
		}
		if (type == TIDES_REC_PAD)
		{
			/* a pad has no payload, but its header is checksummed like any other */
			if (len != 0 || !tides_rec_check_crc(rec.data, 0))
			{
				*damaged = true;
				break;
			}
			pos = (seg + 1) * size;
			continue;
		}
		rec.len = 0;
		if (!tides_buf_reserve(&rec, TIDES_REC_HEADER + (size_t) len))
		{
			s = tides_fail(err, TIDES_NO_MEMORY, "out of memory replaying the log");
			break;
		}
		r = log->vfs->pread(log->vfs, fd, rec.data + TIDES_REC_HEADER, len,
							off + TIDES_REC_HEADER);
		if (r < 0)
		{
			s = tides_fail_io(err, (int) r, "read log segment", path);
			break;
		}
		if (r < (int64_t) len || !tides_rec_check_crc(rec.data, len) || type != TIDES_REC_BATCH)
		{
			*damaged = true;
			break;
		}
		s = fn(arg, pos, rec.data + TIDES_REC_HEADER, len);
		if (s == TIDES_CORRUPTION)
		{
			/* a record with a good checksum but bad contents: stop here */
			s = TIDES_OK;
			*damaged = true;
			break;
		}
		if (s != TIDES_OK)
			break;
		pos += TIDES_REC_HEADER + len;
	}
	tides_buf_free(&rec);
	*end = pos;
	return s;
}

tides_status
tides_log_sync_range(tides_log *log, uint64_t from, uint64_t to, const tides_log_skip *skips,
					 uint32_t nskips, tides_error *err)
{
	uint64_t	size = log->sh->segment_size;
	uint64_t	last = to > 0 ? tides_log_segment_of(log->sh, to - 1) : 0;
	uint64_t	seg = tides_log_segment_of(log->sh, from);

	/*
	 * Segments that lie wholly inside a skip are stepped over, not probed
	 * one by one: a skip may span any distance (a damaged manifest's does),
	 * and every other segment of the range was read by the replay, so the
	 * loop runs once per segment that exists, plus once per skip.
	 */
	while (to > from && seg <= last)
	{
		uint64_t	pos = past_skips(skips, nskips, seg * size);
		char		path[1024];
		int			fd;
		int			r;

		if (pos - seg * size >= size)
		{
			seg = pos / size;
			continue;
		}
		fd = segment_fd(log, seg, path, sizeof(path));
		seg++;
		if (fd == -ENOENT)		/* the log ends before `to`: nothing there */
			continue;
		r = fd < 0 ? fd : log->vfs->fsync(log->vfs, fd);
		if (r != 0)
			return tides_fail_io(err, r, "fsync log segment", path);
	}
	return TIDES_OK;
}

#define SCAN_CHUNK (1u << 20)

tides_status
tides_log_scan_after(tides_log *log, uint64_t end, uint64_t last_segment,
					 const tides_log_skip *skips, uint32_t nskips,
					 tides_log_found_fn fn, void *arg, tides_error *err)
{
	uint64_t	size = log->sh->segment_size;
	uint8_t    *buf = malloc(SCAN_CHUNK + TIDES_REC_HEADER);
	tides_buf	rec;
	tides_status s = TIDES_OK;
	bool		stop = false;

	if (buf == NULL)
		return tides_fail(err, TIDES_NO_MEMORY, "out of memory scanning the log");
	tides_buf_init(&rec);
	for (uint64_t seg = end / size; !stop && s == TIDES_OK && seg <= last_segment; seg++)
	{
		char		path[1024];
		int			fd = segment_fd(log, seg, path, sizeof(path));
		uint64_t	off = seg == end / size ? end % size + 1 : 0;

		if (fd < 0)
			continue;			/* missing: nothing to find there */
		/*
		 * Every byte offset is a candidate: a record's header holds its own
		 * position, so a match found by sliding over the bytes is a record
		 * that was written there in this life of the stream, not an
		 * accident (stale records of a recycled segment carry their old
		 * positions).
		 */
		while (!stop && s == TIDES_OK && off + TIDES_REC_HEADER <= size)
		{
			uint64_t	n = size - off < SCAN_CHUNK + TIDES_REC_HEADER ? size - off : SCAN_CHUNK + TIDES_REC_HEADER;
			int64_t		r = log->vfs->pread(log->vfs, fd, buf, n, off);
			uint64_t	got;

			if (r < 0)
			{
				s = tides_fail_io(err, (int) r, "read log segment", path);
				break;
			}
			got = (uint64_t) r;
			if (got < TIDES_REC_HEADER)
				break;
			for (uint64_t q = 0; !stop && q + TIDES_REC_HEADER <= got && q < SCAN_CHUNK; q++)
			{
				uint64_t	lsn = seg * size + off + q;
				uint64_t	skip_to;
				uint32_t	len;
				tides_rec_type type;

				if (buf[q + TIDES_REC_OFF_LSN] != (uint8_t) lsn)
				{
					/*
					 * Runs of zeros (the unwritten part of a prepared
					 * segment) cannot hold a position field (lsn > 0
					 * here): jump to where the next nonzero word could
					 * be the last byte of one.
					 */
					if (buf[q + 8] == 0 && q + 24 <= got &&
						tides_get64(buf + q + 8) == 0 && tides_get64(buf + q + 16) == 0)
					{
						uint64_t	z = q + 24;

						while (z + 8 <= got && tides_get64(buf + z) == 0)
							z += 8;
						q = z - 16;	/* the loop's q++ makes it z - 15 */
					}
					continue;
				}
				if (tides_rec_lsn(buf + q) != lsn)
					continue;
				if (in_skip(skips, nskips, lsn, &skip_to))
					continue;
				if (tides_rec_check_header(buf + q, lsn, size - (off + q) - TIDES_REC_HEADER,
										   &len, &type) != TIDES_REC_OK || type != TIDES_REC_BATCH)
					continue;
				rec.len = 0;
				if (!tides_buf_reserve(&rec, TIDES_REC_HEADER + (size_t) len))
				{
					s = tides_fail(err, TIDES_NO_MEMORY, "out of memory scanning the log");
					break;
				}
				r = log->vfs->pread(log->vfs, fd, rec.data, TIDES_REC_HEADER + (size_t) len, off + q);
				if (r < 0)
				{
					s = tides_fail_io(err, (int) r, "read log segment", path);
					break;
				}
				if (r == (int64_t) (TIDES_REC_HEADER + len) && tides_rec_check_crc(rec.data, len))
					stop = fn(arg, lsn, rec.data, rec.data + TIDES_REC_HEADER, len);
			}
			if (got < n)
				break;
			off += SCAN_CHUNK;
		}
	}
	tides_buf_free(&rec);
	free(buf);
	return s;
}
