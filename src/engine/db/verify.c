/*
 * verify.c -- tides_verify(): every checksum of every live file, the level
 * invariants, the manifest, and the log from the replay position on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/db_impl.h"
#include "db/write_batch.h"

typedef struct verify_ctx
{
	tides_verify_report report;
	void	   *arg;
	int			problems;
} verify_ctx;

static void
level_problem(void *arg, const char *problem)
{
	verify_ctx *v = arg;

	v->report(v->arg, "MANIFEST", problem);
	v->problems++;
}

static tides_status
check_batch(void *arg, uint64_t lsn, const uint8_t *payload, uint32_t len)
{
	tides_batch_header h;
	tides_error err;

	return tides_batch_decode(payload, len, &h, NULL, NULL, &err);
}

int
tides_verify(tides_db *db, tides_verify_report report, void *arg)
{
	tides_shared *sh = db->sh;
	verify_ctx	v = {report, arg, 0};
	tides_superversion *sv;
	tides_error err;
	char		fname[64];
	uint64_t	end;
	bool		damaged;
	tides_log_skip skips[TIDES_MAX_SKIPS];
	uint32_t	nskips;
	uint64_t	from;

	if (atomic_load(&sh->state) != TIDES_STATE_OPEN)
		return -1;
	sv = tides_sv_acquire(db);
	tides_version_check(sv->version, level_problem, &v);
	for (int l = 0; l < TIDES_MAX_LEVELS; l++)
		for (uint32_t i = 0; i < sv->version->nfiles[l]; i++)
		{
			const tides_file_meta *f = sv->version->files[l][i];
			tides_sst  *t;

			tides_error_clear(&err);
			tides_sst_file_name(fname, sizeof(fname), f->number);
			if (tides_table_cache_get(db->tcache, f->number, f->size, &t, &err) == TIDES_OK)
			{
				tides_sst_verify(t, &err);
				tides_table_cache_release(db->tcache, t);
			}
			if (err.code != TIDES_OK)
			{
				report(arg, fname, err.msg);
				v.problems++;
			}
		}
	tides_sv_release(db, sv);

	tides_error_clear(&err);
	tides_lock_version(sh);
	if (tides_manifest_verify(db, &err) != TIDES_OK)
	{
		report(arg, "MANIFEST", err.msg);
		v.problems++;
	}
	nskips = sh->nskips;
	memcpy(skips, sh->skips, nskips * sizeof(skips[0]));
	from = sh->replay_lsn;
	tides_mutex_unlock(&sh->version_mutex);

	/* the log must be readable up to what was written before we started (if we keep one) */
	if (sh->ropts.log_mode == TIDES_LOG_OWN)
	{
		uint64_t	written = atomic_load(&sh->log.written_lsn);
		tides_log	log;

		tides_error_clear(&err);
		tides_log_attach(&log, &sh->log, db->vfs, NULL, db->dir);
		if (tides_log_replay(&log, from, skips, nskips, check_batch, NULL, &end, &damaged, &err) != TIDES_OK)
		{
			report(arg, "log", err.msg);
			v.problems++;
		}
		else if (end < written)
		{
			char		msg[1300],
						seg[1024];

			tides_log_segment_name(seg, sizeof(seg), ".", end / sh->log.segment_size);
			snprintf(msg, sizeof(msg), "log record at position %llu is damaged (file %s, offset %llu)",
					 (unsigned long long) end, seg + 2,
					 (unsigned long long) (end % sh->log.segment_size));
			report(arg, seg + 2, msg);
			v.problems++;
		}
		tides_log_detach(&log);
	}
	return v.problems;
}
