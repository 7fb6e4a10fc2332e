/*
 * checkpoint.c -- named copies of the file set, for physical backups.
 *
 * A backup tool copies the engine's directory file by file while writers,
 * flushes and compactions go on.  The copy's CURRENT and manifest say
 * whatever they said when the tool reached them, and may name files the
 * tool had already passed (created later) or that were deleted before it
 * got there.  A checkpoint fixes one file set: the state saved as a manifest
 * of its own, "CKPT-<name>", with every file it names kept (the caller holds
 * deletion, tides_hold_file_deletion) until the copy is done.  Those files
 * existed before the copy began and are never changed, so the copy holds
 * all of them whole, and restoring the checkpoint makes the copy the store
 * it was when the checkpoint was saved.
 *
 * Restoring writes the checkpoint's bytes as a fresh manifest and points
 * CURRENT at it.  Recovery then checks that every file the state names is
 * there (recovery_check_files in recovery.c: an incomplete copy fails loudly
 * instead of at the first read) and deletes the files it does not name.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db_impl.h"

#define CKPT_PREFIX "CKPT-"

static bool
valid_name(const char *name)
{
	size_t		n = strlen(name);

	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
	{
		char		c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  c == '-' || c == '_'))
			return false;
	}
	return true;
}

tides_status
tides_checkpoint_save(tides_db *db, const char *name)
{
	tides_shared *sh = db->sh;
	char		file[128];
	tides_error err;
	tides_status s;

	if (!valid_name(name))
		return tides_fail(&db->err, TIDES_INVALID, "bad checkpoint name \"%s\"", name);
	if (atomic_load(&sh->state) != TIDES_STATE_OPEN)
		return tides_fail(&db->err, TIDES_UNAVAILABLE, "engine is not open");
	snprintf(file, sizeof(file), CKPT_PREFIX "%s", name);
	tides_error_clear(&err);
	tides_lock_version(sh);
	s = tides_manifest_save_as(db, file, &err);
	tides_mutex_unlock(&sh->version_mutex);
	return s == TIDES_OK ? s : tides_db_fail(db, &err);
}

tides_status
tides_checkpoint_remove(tides_db *db, const char *name)
{
	char		path[1024];
	int			r;

	if (!valid_name(name))
		return tides_fail(&db->err, TIDES_INVALID, "bad checkpoint name \"%s\"", name);
	snprintf(path, sizeof(path), "%s/" CKPT_PREFIX "%s", db->dir, name);
	r = db->vfs->unlink(db->vfs, path);
	if (r != 0 && tides_status_from_errno(r) != TIDES_NOT_FOUND)
		return tides_fail_io(&db->err, r, "remove", path);
	return TIDES_OK;
}

/* ---- restore (no handle: the store is not open) */

typedef struct manifest_scan
{
	uint64_t	max;
} manifest_scan;

static void
note_manifest(const char *name, void *arg)
{
	manifest_scan *m = arg;
	char	   *end;
	uint64_t	n;

	if (strncmp(name, "MANIFEST-", 9) != 0)
		return;
	n = strtoull(name + 9, &end, 10);
	if (*end == '\0' && n > m->max)
		m->max = n;
}

/* read a whole small file into a malloc'd buffer */
static int
read_file(tides_vfs *vfs, const char *path, uint8_t **data, size_t *len)
{
	int			fd = vfs->open(vfs, path, O_RDONLY, 0);
	int64_t		size,
				r;

	if (fd < 0)
		return fd;
	size = vfs->file_size(vfs, fd);
	if (size < 0)
	{
		vfs->close(vfs, fd);
		return (int) size;
	}
	*data = malloc(size > 0 ? (size_t) size : 1);
	if (*data == NULL)
	{
		vfs->close(vfs, fd);
		return -12;				/* ENOMEM */
	}
	r = vfs->pread(vfs, fd, *data, (size_t) size, 0);
	vfs->close(vfs, fd);
	if (r != size)
	{
		free(*data);
		return r < 0 ? (int) r : -5;	/* EIO: the file shrank under us */
	}
	*len = (size_t) size;
	return 0;
}

/* write data to path and fsync it */
static int
write_file(tides_vfs *vfs, const char *path, const void *data, size_t len)
{
	int			fd = vfs->open(vfs, path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	int64_t		w;
	int			r;

	if (fd < 0)
		return fd;
	w = vfs->pwrite(vfs, fd, data, len, 0);
	r = w < 0 ? (int) w : (w != (int64_t) len ? -5 : vfs->fsync(vfs, fd));
	vfs->close(vfs, fd);
	return r;
}

tides_status
tides_checkpoint_restore(const char *dir, tides_vfs *vfs, const char *name)
{
	char		ckpt[1024],
				manifest[1024],
				tmp[1024],
				cur[1024],
				content[64];
	manifest_scan m = {0};
	uint8_t    *data = NULL;
	size_t		len = 0;
	int			r;

	if (vfs == NULL)
		vfs = tides_vfs_posix();
	if (!valid_name(name))
		return TIDES_INVALID;
	snprintf(ckpt, sizeof(ckpt), "%s/" CKPT_PREFIX "%s", dir, name);
	r = read_file(vfs, ckpt, &data, &len);
	if (r != 0)
		return tides_status_from_errno(r);
	/* a number above every manifest present: recovery moves the file counter past it */
	r = vfs->list_dir(vfs, dir, note_manifest, &m);
	if (r == 0)
	{
		snprintf(manifest, sizeof(manifest), "%s/MANIFEST-%06llu", dir,
				 (unsigned long long) (m.max + 1));
		r = write_file(vfs, manifest, data, len);
	}
	free(data);
	if (r == 0)
	{
		snprintf(tmp, sizeof(tmp), "%s/CURRENT.tmp", dir);
		snprintf(cur, sizeof(cur), "%s/CURRENT", dir);
		snprintf(content, sizeof(content), "MANIFEST-%06llu\n", (unsigned long long) (m.max + 1));
		r = write_file(vfs, tmp, content, strlen(content));
	}
	if (r == 0)
		r = vfs->rename(vfs, tmp, cur);
	if (r == 0)
		r = vfs->sync_dir(vfs, dir);
	return r == 0 ? TIDES_OK : tides_status_from_errno(r);
}
