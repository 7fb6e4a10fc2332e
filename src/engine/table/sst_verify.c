/*
 * sst_verify.c -- reading a whole SSTable from its file to check it
 * (tides_sst_verify): every block's checksum, the order of its keys, the
 * key ranges and counts its properties claim.
 */
#include "table/sst_impl.h"

/* keys come in order: is this one inside run *run, or a later one (*run moves there)? */
static bool
key_in_runs(const tides_sst *t, uint32_t *run, const uint8_t *ukey, size_t ulen)
{
	while (*run < t->nranges &&
		   tides_ukey_cmp(t->ranges[*run].last, t->ranges[*run].last_len, ukey, ulen) < 0)
		(*run)++;
	return *run < t->nranges &&
		tides_ukey_cmp(t->ranges[*run].first, t->ranges[*run].first_len, ukey, ulen) <= 0;
}

tides_status
tides_sst_verify(tides_sst *t, tides_error *err)
{
	tides_error e;
	sst_cursor	c;
	tides_buf	prev;
	uint64_t	entries = 0,
				blocks = 0;
	uint32_t	run = 0;		/* the run the keys are in (ranges) */
	tides_status s = TIDES_OK;

	tides_error_clear(&e);
	sst_cursor_init(&c, t, TIDES_READ_BYPASS, &e);
	tides_buf_init(&prev);

	/* every partition, its filter, and every data block, from the file */
	for (tides_block_iter_first(&c.top); c.top.valid && !sst_failed(&c);
		 tides_block_iter_next(&c.top))
	{
		c.part_off = UINT64_MAX;
		if (!sst_load_part(&c))
			break;
		(void) sst_filter_may_match(&c, 0);	/* BYPASS mode: reads and checksums it */
		for (tides_block_iter_first(&c.part); c.part.valid && !sst_failed(&c);
			 tides_block_iter_next(&c.part))
		{
			c.data_off = UINT64_MAX;
			if (!sst_load_data(&c))
				break;
			blocks++;
			for (tides_block_iter_first(&c.data); c.data.valid; tides_block_iter_next(&c.data))
			{
				if ((entries > 0 &&
					 tides_ikey_cmp(prev.data, prev.len, c.data.key, c.data.klen) >= 0) ||
					tides_ikey_cmp(c.data.key, c.data.klen, c.part.key, c.part.klen) > 0 ||
					tides_ikey_cmp(c.part.key, c.part.klen, c.top.key, c.top.klen) > 0)
				{
					tides_fail(&e, TIDES_CORRUPTION, "keys out of order in block at offset %llu of %s",
							   (unsigned long long) c.data_off, t->fname);
					break;
				}
				if (t->nranges > 0 && !key_in_runs(t, &run, c.data.key, c.data.klen - TIDES_TRAILER))
				{
					tides_fail(&e, TIDES_CORRUPTION,
							   "a key in block at offset %llu of %s lies outside the key ranges of its properties",
							   (unsigned long long) c.data_off, t->fname);
					break;
				}
				tides_buf_reset(&prev);
				tides_buf_append(&prev, c.data.key, c.data.klen);
				entries++;
			}
		}
	}
	if (!sst_failed(&c) && (entries != t->props.num_entries || blocks != t->props.num_data_blocks))
		tides_fail(&e, TIDES_CORRUPTION,
				   "%s holds %llu entries in %llu blocks, its properties say %llu in %llu",
				   t->fname, (unsigned long long) entries, (unsigned long long) blocks,
				   (unsigned long long) t->props.num_entries,
				   (unsigned long long) t->props.num_data_blocks);
	if (prev.oom && !sst_failed(&c))
		tides_fail(&e, TIDES_NO_MEMORY, "out of memory verifying %s", t->fname);
	if (sst_failed(&c))
	{
		s = e.code;
		if (err != NULL)
			*err = e;
	}
	sst_cursor_free(&c);
	tides_buf_free(&prev);
	return s;
}
