/*
 * test_skiplist.c -- the memtable's lock-free skiplist, shared by forked
 * processes.
 *
 * One memtable lives in MAP_SHARED memory.  INSERTERS processes insert
 * concurrently into it, each into its own pre-reserved slice of the arena
 * (as the write path reserves a batch's bytes), through a splice of its own
 * kept across all its inserts: user keys from a small space, in ascending
 * runs mixed with random jumps and backward steps, so that many keys have
 * several versions (sequence numbers interleave between processes), random
 * heights, some deletions.  Each inserter publishes how many of its entries
 * are linked.  Half the inserters link their entries in groups of 1 to
 * TIDES_SKIP_GROUP (tides_memtable_add_group: the keys whose splice does
 * not hold them searched together), through two splices, one for the
 * ascending runs and one for the rest.  A reader process
 * meanwhile checks that everything published is findable (tides_memtable_get
 * at and below its sequence number), that forward iteration is strictly * ordered, and that backward steps agree, and that the stem filter lets
 * every published key's stem through.  At the end the parent checks the
 * whole list against the complete set of entries: order, every entry present
 * once, newest-version lookups at random sequence numbers, seek and
 * seek-before semantics, the iterator both ways, and that the stem filter
 * turns away stems that only a key of another length starts with.
 */
#include "harness.h"
#include "util/dbformat.h"
#include "mem/memtable.h"

#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/wait.h>

#define INSERTERS 4
#define PER_PROC 6000
#define UKEYS 3000
#define ARENA (32u << 20)
#define STEM_SUFFIX 4			/* stem of "key/12/00345": "key/12/0" */

typedef struct ent
{
	uint32_t	ukey;			/* index into the key space */
	uint64_t	seq;
	int			type;
	uint32_t	vlen;
	uint32_t	height;
	uint64_t	off;
} ent;

typedef struct shared
{
	tides_memtable mem;
	_Atomic uint64_t published[INSERTERS];
	_Atomic int	go;
	_Atomic int done;
	ent			ents[INSERTERS][PER_PROC];
} shared;

static shared *S;

#define Max1(x) ((x) > 0 ? (x) : 1)
static uint8_t *arena;

static size_t
make_ukey(uint32_t k, uint8_t *out)
{
	return (size_t) sprintf((char *) out, "key/%02u/%05u%s", k % 97, k, (k % 7 == 0) ? "-long-suffix" : "");
}

static size_t
make_val(const ent *e, uint8_t *out)
{
	for (uint32_t i = 0; i < e->vlen; i++)
		out[i] = (uint8_t) (e->seq * 31 + i);
	return e->vlen;
}

/* seqs: process p's i-th entry gets seq i * INSERTERS + p + 1 (interleaved) */
static void
plan(void)
{
	tides_rand	r;
	uint64_t	off = tides_memtable_base_bytes(ARENA);

	tides_rand_seed(&r, test_seed);
	for (int p = 0; p < INSERTERS; p++)
		for (int i = 0; i < PER_PROC; i++)
		{
			ent		   *e = &S->ents[p][i];
			uint8_t		k[64];

			/* ascending runs (a splice's fast path), some descending steps and jumps */
			uint32_t	step = (uint32_t) tides_rand_uniform(&r, 10);

			if (i > 0 && step < 4)
				e->ukey = (S->ents[p][i - 1].ukey + 1) % UKEYS;
			else if (i > 0 && step == 4)
				e->ukey = (S->ents[p][i - 1].ukey + UKEYS - 1) % UKEYS;
			else
				e->ukey = (uint32_t) tides_rand_uniform(&r, UKEYS);
			e->seq = (uint64_t) i * INSERTERS + (uint64_t) p + 1;
			e->type = tides_rand_uniform(&r, 8) == 0 ? TIDES_KT_DELETE : TIDES_KT_VALUE;
			e->vlen = e->type == TIDES_KT_VALUE ? (uint32_t) tides_rand_uniform(&r, 100) : 0;
			e->height = tides_skip_random_height(tides_rand_next(&r));
			e->off = off;
			off += tides_memtable_entry_size(e->height, make_ukey(e->ukey, k), e->vlen);
		}
	CHECK(off <= ARENA);
	/* reserve it all at once, as the write path reserves a batch (memtable.h) */
	atomic_store(&S->mem.used, off);
}

/* inserters at or above this link in groups */
#define GROUPED_FROM (INSERTERS / 2)

static void
insert_grouped(int p)
{
	tides_skip_splice runs,
				jumps;
	tides_rand	r;
	static uint8_t k[TIDES_SKIP_GROUP][64],
				v[TIDES_SKIP_GROUP][128];

	tides_skip_splice_init(&runs);
	tides_skip_splice_init(&jumps);
	tides_rand_seed(&r, test_seed + 1000 + (uint64_t) p);
	for (int i = 0; i < PER_PROC;)
	{
		tides_mem_put puts[TIDES_SKIP_GROUP];
		int			n = 1 + (int) tides_rand_uniform(&r, TIDES_SKIP_GROUP);

		if (n > PER_PROC - i)
			n = PER_PROC - i;
		for (int j = 0; j < n; j++)
		{
			const ent  *e = &S->ents[p][i + j];
			bool		in_run = i + j > 0 && e->ukey == (S->ents[p][i + j - 1].ukey + 1) % UKEYS;

			puts[j].off = e->off;
			puts[j].height = e->height;
			puts[j].seq = e->seq;
			puts[j].type = e->type;
			puts[j].ukey = k[j];
			puts[j].ukey_len = make_ukey(e->ukey, k[j]);
			puts[j].val = v[j];
			puts[j].vlen = make_val(e, v[j]);
			puts[j].sp = in_run ? &runs : &jumps;
		}
		tides_memtable_add_group(&S->mem, puts, n);
		i += n;
		atomic_store(&S->published[p], (uint64_t) i);
		if (tides_rand_uniform(&r, 32) == 0)
			sched_yield();
	}
}

static void
inserter(int p)
{
	tides_skip_splice splice;

	tides_skip_splice_init(&splice);
	while (!atomic_load(&S->go))
		sched_yield();
	if (p >= GROUPED_FROM)
	{
		insert_grouped(p);
		return;
	}
	for (int i = 0; i < PER_PROC; i++)
	{
		const ent  *e = &S->ents[p][i];
		uint8_t		k[64],
					v[128];
		size_t		kl = make_ukey(e->ukey, k);

		make_val(e, v);
		tides_memtable_add(&S->mem, &splice, e->off, e->height, e->seq, e->type, k, kl, v, e->vlen);
		atomic_store(&S->published[p], (uint64_t) i + 1);
		if (i % 512 == 0)
			sched_yield();
	}
}

/* entry (ukey, seq) must be findable as of seq */
static bool
find_exact(const ent *e)
{
	uint8_t		k[64];
	size_t		kl = make_ukey(e->ukey, k);
	int			type;
	uint64_t	seq;
	const uint8_t *v;
	size_t		vl;

	if (!tides_memtable_may_hold_stem(&S->mem, k, kl - STEM_SUFFIX, STEM_SUFFIX,
									  tides_memtable_stem_hash(k, kl - STEM_SUFFIX)))
		return false;
	if (!tides_memtable_get(&S->mem, k, kl, e->seq, &type, &seq, &v, &vl))
		return false;
	if (seq != e->seq || type != e->type || vl != e->vlen)
		return false;
	if (vl > 0)
	{
		uint8_t		want[128];

		make_val(e, want);
		return memcmp(v, want, vl) == 0;
	}
	return true;
}

/*
 * Every seventh key is only "key/MM/NNNNN-long-suffix": "key/MM/NNNNN" is a
 * prefix of a key there, but the stem of no key (no key is it plus exactly
 * STEM_SUFFIX bytes).  The filter must turn most of those away -- it does
 * not fall back to the prefix seek, which would find the long key -- and the
 * same stems under another suffix length must get the seek's answer.
 */
static void
check_stem_filter(void)
{
	int			asked = 0,
				turned_away = 0;

	for (uint32_t uk = 0; uk < UKEYS; uk += 7)
	{
		uint8_t		k[64];
		size_t		kl = make_ukey(uk, k) - strlen("-long-suffix");
		uint64_t	h = tides_memtable_stem_hash(k, kl);

		asked++;
		if (!tides_memtable_may_hold_stem(&S->mem, k, kl, STEM_SUFFIX, h))
			turned_away++;
		CHECK(tides_memtable_has_prefix(&S->mem, k, kl));
		CHECK(tides_memtable_may_hold_stem(&S->mem, k, kl, STEM_SUFFIX + 1, h));
	}
	fprintf(stderr, "test_skiplist: stem filter turned away %d of %d stems of no key\n", turned_away, asked);
	CHECK(turned_away * 10 >= asked * 9);
}

static int
check_order(tides_iiter *it, uint64_t *count)
{
	uint8_t		prev[128];
	size_t		prevlen = 0;
	int			bad = 0;

	*count = 0;
	for (tides_iiter_first(it); tides_iiter_valid(it); tides_iiter_next(it))
	{
		size_t		n;
		const uint8_t *k = tides_iiter_key(it, &n);

		if (*count > 0 && tides_ikey_cmp(prev, prevlen, k, n) >= 0)
			bad++;
		memcpy(prev, k, n);
		prevlen = n;
		(*count)++;
	}
	return bad;
}

static void
reader(void)
{
	tides_rand	r;
	int			rounds = 0;

	tides_rand_seed(&r, test_seed + 99);
	while (!atomic_load(&S->go))
		sched_yield();
	while (atomic_load(&S->done) < INSERTERS)
	{
		tides_iiter *it = tides_memtable_iter_new(&S->mem);
		uint64_t	count;

		if (check_order(it, &count) != 0)
		{
			fprintf(stderr, "reader: iteration out of order (seed %llu)\n", (unsigned long long) test_seed);
			test_failures++;
		}
		tides_iiter_destroy(it);
		for (int k = 0; k < 200; k++)
		{
			int			p = (int) tides_rand_uniform(&r, INSERTERS);
			uint64_t	pub = atomic_load(&S->published[p]);

			if (pub == 0)
				continue;
			if (!find_exact(&S->ents[p][tides_rand_uniform(&r, pub)]))
			{
				fprintf(stderr, "reader: a published entry is not findable (seed %llu)\n",
						(unsigned long long) test_seed);
				test_failures++;
				break;
			}
		}
		rounds++;
		if (test_failures > 5)
			break;
	}
	fprintf(stderr, "test_skiplist: reader did %d rounds while inserts ran\n", rounds);
}

static int
cmp_ent_ikey(const void *a, const void *b)
{
	const ent  *x = *(const ent * const *) a,
			   *y = *(const ent * const *) b;
	uint8_t		kx[80],
				ky[80];
	size_t		lx = make_ukey(x->ukey, kx),
				ly = make_ukey(y->ukey, ky);

	lx = tides_ikey_make(kx, kx, lx, x->seq, (tides_key_type) x->type);
	ly = tides_ikey_make(ky, ky, ly, y->seq, (tides_key_type) y->type);
	return tides_ikey_cmp(kx, lx, ky, ly);
}

int
main(int argc, char **argv)
{
	pid_t		pids[INSERTERS + 1];
	ent		  **all;
	uint64_t	n = (uint64_t) INSERTERS * PER_PROC,
				count;
	tides_iiter *it;
	tides_rand	r;

	test_init(argc, argv);
	S = test_shared_alloc(sizeof(shared));
	arena = test_shared_alloc(ARENA);
	tides_memtable_setup(&S->mem, arena, ARENA, STEM_SUFFIX);
	tides_memtable_activate(&S->mem, 1, 0, 1);
	plan();

	for (int p = 0; p <= INSERTERS; p++)
	{
		pids[p] = fork();
		if (pids[p] == 0)
		{
			if (p < INSERTERS)
				inserter(p);
			else
				reader();
			atomic_fetch_add(&S->done, p < INSERTERS ? 1 : 0);
			_exit(test_failures ? 1 : 0);
		}
	}
	atomic_store(&S->go, 1);
	for (int p = 0; p <= INSERTERS; p++)
	{
		int			st;

		waitpid(pids[p], &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}

	/* the complete list */
	all = malloc(n * sizeof(ent *));
	for (int p = 0; p < INSERTERS; p++)
		for (int i = 0; i < PER_PROC; i++)
			all[p * PER_PROC + i] = &S->ents[p][i];
	qsort(all, n, sizeof(ent *), cmp_ent_ikey);

	it = tides_memtable_iter_new(&S->mem);
	CHECK(check_order(it, &count) == 0);
	CHECK(count == n);
	/* forward: exactly the sorted entries */
	{
		uint64_t	i = 0;

		for (tides_iiter_first(it); tides_iiter_valid(it) && i < n; tides_iiter_next(it), i++)
		{
			size_t		kl;
			const uint8_t *k = tides_iiter_key(it, &kl);

			if (tides_ikey_seq(k, kl) != all[i]->seq)
			{
				CHECK(false);
				break;
			}
		}
	}
	/* backward */
	{
		uint64_t	i = n;

		for (tides_iiter_last(it); tides_iiter_valid(it) && i > 0; tides_iiter_prev(it))
		{
			size_t		kl;
			const uint8_t *k = tides_iiter_key(it, &kl);

			i--;
			if (tides_ikey_seq(k, kl) != all[i]->seq)
			{
				CHECK(false);
				break;
			}
		}
		CHECK(i == 0 && !tides_iiter_valid(it));
	}
	/*
	 * Searches in groups: every level's pair surrounds its key (prev < key
	 * <= next, the head and the end counting as outside every key), and
	 * the pair at level 0 is adjacent there -- the place of a new entry.
	 */
	tides_rand_seed(&r, test_seed + 7);
	for (int round = 0; round < 200; round++)
	{
		int			g = 1 + (int) tides_rand_uniform(&r, TIDES_SKIP_GROUP);
		uint8_t		kb[TIDES_SKIP_GROUP][96];
		const uint8_t *keys[TIDES_SKIP_GROUP];
		size_t		klens[TIDES_SKIP_GROUP];
		tides_skip_splice sp[TIDES_SKIP_GROUP];
		const tides_skiplist *sl = &S->mem.list;
		uint32_t	maxh = atomic_load(&sl->max_height);

		for (int j = 0; j < g; j++)
		{
			/* an inserted key's newest version, or a key between two */
			size_t		kl = make_ukey((uint32_t) tides_rand_uniform(&r, UKEYS + UKEYS / 4), kb[j]);

			if (tides_rand_uniform(&r, 2) == 0)
				kb[j][kl++] = 0;
			klens[j] = tides_ikey_make(kb[j], kb[j], kl, tides_rand_uniform(&r, n + 2), TIDES_KT_VALUE);
			keys[j] = kb[j];
		}
		tides_skip_find_group(sl, g, keys, klens, sp);
		for (int j = 0; j < g; j++)
		{
			CHECK(sp[j].height == maxh);
			for (uint32_t l = 0; l < maxh; l++)
			{
				uint32_t	prev = sp[j].prev[l],
							next = sp[j].next[l];
				const tides_skip_node *pn = tides_skip_node_at(sl, prev);
				const tides_skip_node *nn = tides_skip_node_at(sl, next);

				CHECK(prev == 0 || tides_ikey_cmp(tides_skip_node_key(pn), pn->key_len, keys[j], klens[j]) < 0);
				CHECK(next == 0 || tides_ikey_cmp(tides_skip_node_key(nn), nn->key_len, keys[j], klens[j]) >= 0);
				CHECK(atomic_load(&pn->next[l]) == next);
			}
		}
	}
	/* every entry findable at its own seq; newest <= a random seq wins */
	for (uint64_t i = 0; i < n; i++)
		CHECK(find_exact(all[i]));
	tides_rand_seed(&r, test_seed + 5);
	for (int q = 0; q < 20000; q++)
	{
		/* a fifth of the keys asked were never inserted: the point index must say so */
		uint32_t	uk = (uint32_t) tides_rand_uniform(&r, UKEYS + UKEYS / 4);
		uint64_t	at = 1 + tides_rand_uniform(&r, n + 2);
		const ent  *best = NULL;
		uint8_t		k[64];
		size_t		kl = make_ukey(uk, k);
		int			type;
		uint64_t	seq;
		const uint8_t *v;
		size_t		vl;
		bool		found;

		for (uint64_t i = 0; i < n; i++)
			if (all[i]->ukey == uk && all[i]->seq <= at)
			{
				best = all[i];	/* sorted newest first within a key */
				break;
			}
		found = tides_memtable_get(&S->mem, k, kl, at, &type, &seq, &v, &vl);
		CHECK(found == (best != NULL));
		if (found && best != NULL)
			CHECK(seq == best->seq && type == best->type);
		if (q > 2000)
			q += 9;				/* the linear oracle is slow: fewer rounds */
	}
	/* seek: first entry >= a key that sits between two user keys */
	{
		uint8_t		k[80];
		size_t		kl = make_ukey(1234, k);

		k[kl++] = 0;			/* just after "key..01234" */
		kl = tides_ikey_make(k, k, kl, TIDES_MAX_SEQ, TIDES_KT_SEEK);
		tides_iiter_seek(it, k, kl);
		if (tides_iiter_valid(it))
		{
			size_t		n2;
			const uint8_t *got = tides_iiter_key(it, &n2);

			CHECK(tides_ikey_cmp(got, n2, k, kl) >= 0);
			tides_iiter_prev(it);
			if (tides_iiter_valid(it))
			{
				got = tides_iiter_key(it, &n2);
				CHECK(tides_ikey_cmp(got, n2, k, kl) < 0);
			}
		}
	}
	tides_iiter_destroy(it);
	check_stem_filter();
	/*
	 * Range estimates (tides_skip_estimate_range, for the planner's size
	 * estimate): exact for small ranges and unbounded ones at level 0 ends,
	 * within a factor of three for large ones, and close (15%) on average.
	 */
	{
		uint8_t		klo[80],
					khi[80];
		double		sum_rel = 0;
		double		worst = 0;
		int			large = 0;

		CHECK(tides_skip_estimate_range(&S->mem.list, NULL, 0, NULL, 0) > n / 2);
		CHECK(tides_skip_estimate_range(&S->mem.list, NULL, 0, NULL, 0) < 2 * n);
		for (int q = 0; q < 400; q++)
		{
			uint64_t	a = tides_rand_uniform(&r, n),
						b = tides_rand_uniform(&r, n);
			size_t		ll,
						hl;
			uint64_t	est,
						want;

			if (q % 4 == 0)
				b = a + tides_rand_uniform(&r, TIDES_SKIP_ESTIMATE_NODES);	/* small */
			if (b >= n)
				b = n - 1;
			if (a > b)
			{
				uint64_t	t = a;

				a = b;
				b = t;
			}
			want = b - a;
			ll = make_ukey(all[a]->ukey, klo);
			ll = tides_ikey_make(klo, klo, ll, all[a]->seq, (tides_key_type) all[a]->type);
			hl = make_ukey(all[b]->ukey, khi);
			hl = tides_ikey_make(khi, khi, hl, all[b]->seq, (tides_key_type) all[b]->type);
			est = tides_skip_estimate_range(&S->mem.list, klo, ll, khi, hl);
			if (want < TIDES_SKIP_ESTIMATE_NODES)
				CHECK(est == want);
			else if (want >= 1000)
			{
				double		rel = (double) est / (double) want;

				CHECK(rel > 1.0 / 3 && rel < 3.0);
				sum_rel += fabs(rel - 1.0);
				worst = fmax(worst, fabs(rel - 1.0));
				large++;
			}
		}
		fprintf(stderr, "test_skiplist: range estimates of %d ranges of 1000+ entries: mean error %.0f%%, worst %.0f%%\n",
				large, 100.0 * sum_rel / Max1(large), 100.0 * worst);
		CHECK(large == 0 || sum_rel / large < 0.15);
	}
	fprintf(stderr, "test_skiplist: %llu entries from %d processes, %u user keys\n",
			(unsigned long long) n, INSERTERS, UKEYS);
	free(all);
	test_shared_free(arena, ARENA);
	test_shared_free(S, sizeof(shared));
	return test_finish("test_skiplist");
}
