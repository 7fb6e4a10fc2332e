/*
 * tags.c -- the table of open batch tags (multi-batch atomicity).
 *
 * A tag is open from its first batch until its sealing batch has been
 * flushed into an SSTable.  At every flush the engine records in the manifest
 * which tags had records at or before the flushed position without a seal
 * there: after a crash, those tags (and tags seen in the replayed log without
 * a seal) are reported as unsealed, even when all their records had already
 * left the log.  The table is a linear-probing hash with backward-shift
 * deletion (no tombstones), protected by tag_lock.
 *
 * seal_lsn holds the sealing record's position plus one, so that a seal at
 * position 0 (the first record of a new store) is not mistaken for "not
 * sealed" (0).
 *
 * Invariants (asserted): tag 0 is never registered (it means "no tag");
 * tag_cap is a power of two and the table is at most half full, so a
 * probe always meets an empty slot; a tag is in the table at most once,
 * in the probe run of its home slot.
 */
#include <stdlib.h>

#include "db/db_impl.h"
#include "util/hash.h"

static uint32_t
slot_of(const tides_shared *sh, uint64_t tag)
{
	return (uint32_t) tides_hash_mix(tag, 0x7461677321ull) & (sh->tag_cap - 1);
}

static void delete_slot(tides_shared *sh, uint32_t i);

tides_status
tides_tags_note(tides_db *db, uint64_t tag, uint64_t lsn, bool seal, uint64_t memtable_start)
{
	tides_shared *sh = db->sh;
	uint32_t	i;
	tides_status s = TIDES_OK;

	TIDES_ASSERT(tag != 0);
	tides_lock_tags(sh);
	TIDES_ASSERT(sh->tag_cap > 0 && (sh->tag_cap & (sh->tag_cap - 1)) == 0);
	TIDES_ASSERT(sh->ntags <= sh->tag_cap / 2);
	for (i = slot_of(sh, tag);; i = (i + 1) & (sh->tag_cap - 1))
	{
		tides_tag_entry *t = &sh->tags[i];

		if (t->tag == tag)
		{
			/* an ingestion registers its tag at 0: every later flush must record it */
			if (!seal && lsn < t->first_lsn)
				t->first_lsn = lsn;
			if (seal && t->seal_lsn == 0)
			{
				/*
				 * Records and seal in one memtable: no flush can ever end
				 * between them, so no flush will report the tag pending.
				 */
				if (t->first_lsn >= memtable_start)
					delete_slot(sh, i);
				else
					t->seal_lsn = lsn + 1;
			}
			break;
		}
		if (t->tag == 0)
		{
			/* keep the table at most half full so probes stay short */
			if (sh->ntags + 1 > sh->tag_cap / 2)
			{
				s = TIDES_BUSY;
				break;
			}
			t->tag = tag;
			t->first_lsn = lsn;
			t->seal_lsn = seal ? lsn + 1 : 0;
			sh->ntags++;
			TIDES_ASSERT(sh->ntags <= sh->tag_cap / 2);
			break;
		}
	}
	tides_spin_unlock(&sh->tag_lock);
	return s;
}

uint64_t *
tides_tags_pending_at(tides_db *db, uint64_t end_lsn, uint32_t *n)
{
	tides_shared *sh = db->sh;
	uint64_t   *out;
	uint32_t	count = 0;

	tides_lock_tags(sh);
	out = malloc((sh->ntags + 1) * sizeof(uint64_t));
	if (out != NULL)
		for (uint32_t i = 0; i < sh->tag_cap; i++)
		{
			const tides_tag_entry *t = &sh->tags[i];

			if (t->tag != 0 && t->first_lsn < end_lsn &&
				(t->seal_lsn == 0 || t->seal_lsn > end_lsn))
				out[count++] = t->tag;
		}
	tides_spin_unlock(&sh->tag_lock);
	*n = count;
	return out;
}

/* remove slot i, shifting later members of its probe run back */
static void
delete_slot(tides_shared *sh, uint32_t i)
{
	uint32_t	mask = sh->tag_cap - 1;
	uint32_t	j = i;

	TIDES_ASSERT(tides_spin_held(&sh->tag_lock));
	TIDES_ASSERT(sh->tags[i].tag != 0 && sh->ntags > 0);
	for (;;)
	{
		uint32_t	home;

		j = (j + 1) & mask;
		if (sh->tags[j].tag == 0)
			break;
		home = slot_of(sh, sh->tags[j].tag);
		/* can the entry at j move to i?  only if its home is not in (i, j] */
		if (((j - home) & mask) >= ((j - i) & mask))
		{
			sh->tags[i] = sh->tags[j];
			i = j;
		}
	}
	sh->tags[i].tag = 0;
	sh->ntags--;
}

void
tides_tags_forget_settled(tides_db *db, uint64_t end_lsn)
{
	tides_shared *sh = db->sh;

	tides_lock_tags(sh);
	for (uint32_t i = 0; i < sh->tag_cap;)
	{
		tides_tag_entry *t = &sh->tags[i];

		if (t->tag != 0 && t->seal_lsn != 0 && t->seal_lsn <= end_lsn)
			delete_slot(sh, i); /* slot i may now hold a shifted entry: recheck */
		else
			i++;
	}
	tides_spin_unlock(&sh->tag_lock);
}
