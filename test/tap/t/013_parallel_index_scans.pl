
# 013_parallel_index_scans.pl -- parallel index scans of tides_btree indexes
# while the mirrored workload writes (TidesTap.pm): each participant reads
# the index through its own engine iterator, opened at its own moment, and
# the chunks it claims (src/index/README.md, "Scans") must still give every
# entry visible to the query's snapshot to exactly one participant.  In one
# REPEATABLE READ snapshot, repeatedly under load, a parallel index scan of
# hist's unique tides_btree index and of acc's tides_btree index on abal
# must equal the serial index scan of the same index and the heap mirror
# (hist_heap, acc_heap); the workload's updates move acc's entries under the
# scans, its deletes leave dead rows whose entries the scans kill.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TidesTap;

my $node = tides_node('pscan', extra => "max_parallel_workers = 8\n");
$node->start;
setup_workload($node, 5000);
# history to scan from the start
run_load($node, 4, [ '-t', 300 ], 5000);
$node->safe_psql('postgres', 'VACUUM ANALYZE hist; VACUUM ANALYZE acc;');

my $force = q{
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_index_scan_size = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SET LOCAL enable_indexonlyscan = off;
};
my $hist_q = 'SELECT count(*) || \'/\' || coalesce(sum(delta), 0) || \'/\' || coalesce(sum(hid), 0) FROM hist WHERE hid > 0';
my $acc_q = 'SELECT count(*) || \'/\' || coalesce(sum(abal), 0) || \'/\' || coalesce(sum(aid::bigint * abal), 0) FROM acc WHERE abal > -2000000000';

my $plans = $node->safe_psql('postgres', "BEGIN; $force EXPLAIN (COSTS OFF) $hist_q; EXPLAIN (COSTS OFF) $acc_q; COMMIT;");
like($plans, qr/Parallel Index Scan using hist_hid on hist/, 'hist is read by a parallel scan of its tides_btree index');
like($plans, qr/Parallel Index Scan using acc_abal on acc/, 'acc is read by a parallel scan of acc_abal');

my $load = start_load($node, 4, [ '-T', 20 ], 5000);
my ($rounds, $bad, $parallel) = (0, 0, 0);
my $end = time() + 18;
while (time() < $end)
{
	my $out = $node->safe_psql('postgres', qq{
BEGIN ISOLATION LEVEL REPEATABLE READ;
$force
SELECT 'p', ($hist_q), ($acc_q);
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT 's', ($hist_q), ($acc_q);
SELECT 'h', (SELECT count(*) || '/' || coalesce(sum(delta), 0) || '/' || coalesce(sum(hid), 0) FROM hist_heap),
  (SELECT count(*) || '/' || coalesce(sum(abal), 0) || '/' || coalesce(sum(aid::bigint * abal), 0) FROM acc_heap);
COMMIT;
});
	my %r = map { my @f = split /\|/; ($f[0] => "$f[1] $f[2]") } split /\n/, $out;
	$rounds++;
	if (!defined $r{p} || $r{p} ne $r{s} || $r{s} ne $r{h})
	{
		$bad++;
		diag("round $rounds: parallel $r{p}, serial $r{s}, heap $r{h}");
	}
}
is(finish_load($load), 0, 'the workload ran without errors');
ok($rounds >= 5, "$rounds rounds of scans under load");
is($bad, 0, 'every parallel index scan equals the serial scan and the heap mirror in its snapshot');

# the workers run: launched for a scan the leader leaves to them
my $json = $node->safe_psql('postgres', "BEGIN; $force SET LOCAL parallel_leader_participation = off;"
	  . " EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON, COSTS OFF, TIMING OFF) $hist_q; COMMIT;");
like($json, qr/"Workers Launched": 2/, 'two workers launched');
my $total = $node->safe_psql('postgres', 'SELECT count(*) FROM hist WHERE hid > 0');
ok($total > 1000, "hist holds $total rows");
check_mirror($node, 'after the load');
check_indexes($node, 'after the load');

$node->stop;
done_testing();
