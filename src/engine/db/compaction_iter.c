/*
 * compaction_iter.c -- the survival rules of compaction_iter.h.
 */
#include "db/compaction_iter.h"

#include "db/db_impl.h"
#include "util/buf.h"

/* index of the stripe of seq: the first snapshot >= seq (nsnapshots if none) */
static uint32_t
stripe_of(const tides_compaction_rules *r, uint64_t seq)
{
	uint32_t	lo = 0,
				hi = r->nsnapshots;

	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo) / 2;

		if (r->snapshots[mid] < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

tides_status
tides_compaction_run(tides_iiter *in, const tides_compaction_rules *r, tides_emit_fn emit, void *arg,
					 tides_compaction_counts *counts, tides_error *err)
{
	tides_buf	cur_key;		/* user key of the group being processed */
	tides_buf	out_key;		/* scratch internal key for rewritten entries */
	bool		have_key = false;
	uint32_t	last_stripe = 0;
	bool		first_in_key = true;
	tides_status s = TIDES_OK;

	/* stripes need the snapshots in increasing order, each once (tides_snapshot_list) */
	for (uint32_t i = 1; i < r->nsnapshots; i++)
		TIDES_ASSERT(r->snapshots[i - 1] < r->snapshots[i]);
	tides_buf_init(&cur_key);
	tides_buf_init(&out_key);
	for (; s == TIDES_OK && tides_iiter_valid(in); tides_iiter_next(in))
	{
		size_t		iklen,
					vlen,
					ulen;
		const uint8_t *ikey = tides_iiter_key(in, &iklen);
		const uint8_t *val = tides_iiter_value(in, &vlen);
		uint64_t	seq;
		int			type;
		uint32_t	stripe;

		if (++counts->input_entries % TIDES_PROGRESS_EVERY == 0 && r->progress != NULL)
			r->progress(r->progress_arg, counts->input_entries);
		if (!tides_ikey_valid(ikey, iklen))
		{
			s = tides_fail(err, TIDES_CORRUPTION, "malformed internal key during compaction");
			break;
		}
		ulen = iklen - TIDES_TRAILER;
		seq = tides_ikey_seq(ikey, iklen);
		type = tides_ikey_type(ikey, iklen);

		if (!have_key || tides_ukey_cmp(ikey, ulen, cur_key.data, cur_key.len) != 0)
		{
			cur_key.len = 0;
			tides_buf_append(&cur_key, ikey, ulen);
			have_key = true;
			first_in_key = true;
		}
		if (r->ndropped > 0 && tides_dropped_hides(r->dropped, r->ndropped, ikey, ulen, seq))
		{
			counts->dropped_prefix++;
			continue;
		}
		stripe = stripe_of(r, seq);
		if (!first_in_key && stripe == last_stripe)
		{
			counts->dropped_shadowed++;
			continue;			/* a newer version serves every reader of this stripe */
		}
		{
			bool		newest = first_in_key;

			first_in_key = false;
			last_stripe = stripe;

			/* a deletion every snapshot sees, with nothing deeper to hide */
			if (type == TIDES_KT_DELETE && stripe == 0 &&
				(r->deeper_may_hold == NULL || !r->deeper_may_hold(r->deeper_arg, ikey, ulen)))
			{
				counts->dropped_deletions++;
				continue;
			}
			if (type == TIDES_KT_VALUE && newest && r->filter != NULL && seq <= r->filter_horizon &&
				stripe == 0)
			{
				const void *nv = NULL;
				size_t		nvlen = 0;
				tides_filter_decision d = r->filter(r->filter_arg, ikey, ulen, val, vlen, &nv, &nvlen);

				if (d == TIDES_FILTER_DROP)
				{
					counts->filtered_dropped++;
					if (r->deeper_may_hold == NULL || !r->deeper_may_hold(r->deeper_arg, ikey, ulen))
						continue;
					/* older versions below must stay hidden: leave a deletion */
					out_key.len = 0;
					tides_buf_reserve(&out_key, iklen);
					out_key.len = tides_ikey_make(out_key.data, ikey, ulen, seq, TIDES_KT_DELETE);
					s = emit(arg, out_key.data, out_key.len, NULL, 0);
					continue;
				}
				if (d == TIDES_FILTER_CHANGE)
				{
					counts->filtered_changed++;
					val = nv;
					vlen = nvlen;
				}
			}
			s = emit(arg, ikey, iklen, val, vlen);
		}
	}
	if (s == TIDES_OK && tides_iiter_status(in) != TIDES_OK)
	{
		*err = in->err;
		s = err->code;
	}
	if (s == TIDES_OK && (cur_key.oom || out_key.oom))
		s = tides_fail(err, TIDES_NO_MEMORY, "out of memory during compaction");
	tides_buf_free(&cur_key);
	tides_buf_free(&out_key);
	return s;
}
