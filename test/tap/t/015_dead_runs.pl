
# 015_dead_runs.pl -- dead runs of tides_btree scan hints (src/index/tidx_hint.c)
# under a queue workload: a writer inserts rows at the top of a bigserial
# primary key and deletes the lowest ones (the Insert Benchmark's l.i1), a
# holder keeps REPEATABLE READ snapshots open for a moment (so deleted rows
# cannot be killed, and min() scans record runs of them with horizons), and
# every change is mirrored into a heap table in the same transaction.  In
# rounds, a checker compares min(id) and the five lowest ids of the tides
# table (through its tides_btree index) with the heap mirror, in a fresh
# snapshot and in one taken before a pause during which other scans record
# and extend runs: a run used by a snapshot older than its horizon would hide
# rows that snapshot still sees.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TidesTap;

my $node = tides_node('deadruns', extra => "autovacuum = off\n");
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION tidesam;
SET tides.index_method = tides_btree;
CREATE TABLE q (id bigserial PRIMARY KEY, v int) USING tides;
CREATE TABLE qh (id bigint PRIMARY KEY, v int) USING heap;
WITH ins AS (INSERT INTO q (v) SELECT g FROM generate_series(1, 5000) g RETURNING id, v)
INSERT INTO qh SELECT id, v FROM ins;
});
is($node->safe_psql('postgres', q{SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE relname = 'q_pkey'}),
	'tides_btree', 'the primary key is a tides_btree index');

my $dir = PostgreSQL::Test::Utils::tempdir;
my %scripts = (
	'writer' => q{
BEGIN;
WITH ins AS (INSERT INTO q (v) SELECT 1 FROM generate_series(1, 5) RETURNING id, v)
INSERT INTO qh SELECT id, v FROM ins;
WITH d AS (DELETE FROM q WHERE id >= (SELECT min(id) FROM q) AND id < (SELECT min(id) FROM q) + 5 RETURNING id)
DELETE FROM qh WHERE id IN (SELECT id FROM d);
END;
},
	'holder' => q{
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM q;
SELECT pg_sleep(0.3);
COMMIT;
},
	'scanner' => q{
SELECT min(id) FROM q;
SELECT id FROM q ORDER BY id LIMIT 3;
});
my @procs;
for my $name (sort keys %scripts)
{
	my $file = "$dir/$name.sql";
	open(my $fh, '>', $file) or die "could not write $file: $!";
	print $fh $scripts{$name};
	close $fh;
	chmod 0644, $file;
	push @procs, IPC::Run::start(
		[ 'pgbench', '-n', '-T', '20', '-c', '1', '-f', $file,
		  '-h', $node->host, '-p', $node->port, 'postgres' ],
		'>', "$dir/$name.out", '2>', "$dir/$name.err");
}

my $same = q{
SELECT (SELECT min(id) FROM q) IS NOT DISTINCT FROM (SELECT min(id) FROM qh)
   AND array(SELECT id FROM q ORDER BY id LIMIT 5) = array(SELECT id FROM qh ORDER BY id LIMIT 5)};
my ($rounds, $bad) = (0, 0);
my $end = time() + 18;
while (time() < $end)
{
	my $out = $node->safe_psql('postgres', qq{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
BEGIN ISOLATION LEVEL REPEATABLE READ;
$same;
COMMIT;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) > 0 FROM qh;
DO \$\$ BEGIN PERFORM pg_sleep(0.2); END \$\$;
$same;
COMMIT;
});
	$rounds++;
	if ($out ne "t\nt\nt")
	{
		$bad++;
		diag("round $rounds: $out");
	}
}
$_->finish for @procs;
for my $name (sort keys %scripts)
{
	my $err = slurp_file("$dir/$name.out") . slurp_file("$dir/$name.err");
	like($err, qr/number of failed transactions: 0/, "$name: no transaction failed");
	my ($n) = $err =~ /number of transactions actually processed: (\d+)/;
	ok(defined $n && $n > 0, "$name: transactions ran") or diag($err);
}
ok($rounds >= 10, "$rounds rounds of comparisons");
is($bad, 0, 'min(id) and the lowest ids of the tides table equal the heap mirror, in fresh and in older snapshots');
is($node->safe_psql('postgres', 'SELECT count(*) FROM q') . ' ' . $node->safe_psql('postgres', 'SELECT count(*) FROM qh'),
	'5000 5000', 'the queue kept its length');
$node->stop;

done_testing();
