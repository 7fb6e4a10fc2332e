
# 011_vacant_ranges.pl -- sequential scans record row-id ranges that hold
# nothing a snapshot can see and later scans seek past them
# (src/runtime/vacant.c).  A wrong range hides rows for as long as the
# server runs, so this drives them hard: clients insert rows that wait in
# their backend until the commit (deferred rows: every index of `q` is a
# tides_btree one) or in a bulk load's stage (`r`, threshold 0), roll back
# batches of rows (vacant runs between live ones), update ten rows over and
# over (dead versions) and hold their transactions open a moment, while
# other clients scan all three tables.  A heap ledger written in the same
# transactions says what must be there; every table is then counted by
# sequential scan, which uses the ranges, and by a path that does not, and
# again after a restart (the ranges are gone).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TidesTap;

my $node = tides_node('vacant');
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION tidesam;
CREATE TABLE q (who int, v int) USING tides;
CREATE INDEX q_who ON q USING tides_btree (who);
CREATE TABLE r (v int) USING tides;
CREATE TABLE small (id int, n bigint) USING tides;
INSERT INTO small SELECT g, 0 FROM generate_series(1, 10) g;
CREATE TABLE ledger (kind text) USING heap;
});

my %scripts = (
	'insert@6' => q{
\set k random(1, 10)
BEGIN;
INSERT INTO q VALUES (:client_id, 1);
INSERT INTO ledger VALUES ('q');
UPDATE small SET n = n + 1 WHERE id = :k;
SELECT pg_sleep(0.002);
COMMIT;
},
	'rollback@2' => q{
BEGIN;
INSERT INTO q SELECT -1, g FROM generate_series(1, 40) g;
UPDATE small SET n = n - 1000;
ROLLBACK;
},
	'bulk@1' => q{
BEGIN;
SET LOCAL tides.bulk_load_threshold = 0;
INSERT INTO r SELECT g FROM generate_series(1, 3) g;
SELECT pg_sleep(0.002);
INSERT INTO ledger VALUES ('r');
COMMIT;
},
	'scan@4' => q{
SELECT count(*) FROM q;
SELECT count(*) FROM r;
SELECT sum(n) FROM small;
},);
my @f = script_args(\%scripts);
my ($out, $err);
my $ok = IPC::Run::run(
	[ 'pgbench', '-n', '-c', 6, '-j', 2, '-T', 20, @f, '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$out, '2>', \$err);
ok($ok, 'pgbench with inserts, rollbacks, bulk loads, updates and scans') or note $out . $err;

# by sequential scan (ranges), and by paths that never use them: the index
# of q, and TABLESAMPLE SYSTEM (100), which reads every virtual block
my $expect = q{
SELECT (SELECT count(*) FROM ledger WHERE kind = 'q') || '/' ||
       (SELECT 3 * count(*) FROM ledger WHERE kind = 'r') || '/' ||
       (SELECT count(*) FROM ledger WHERE kind = 'q')};
my $by_seqscan = q{
SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT (SELECT count(*) FROM q) || '/' || (SELECT count(*) FROM r) || '/' ||
       (SELECT sum(n) FROM small)};
my $other_paths = q{
SET enable_seqscan = off;
SELECT (SELECT count(*) FROM q WHERE who >= -1) || '/' ||
       (SELECT count(*) FROM r TABLESAMPLE SYSTEM (100)) || '/' ||
       (SELECT sum(n) FROM small TABLESAMPLE SYSTEM (100))};

for my $when ('after the run', 'after a restart')
{
	my $want = $node->safe_psql('postgres', $expect);
	for my $i (1 .. 2)
	{
		is($node->safe_psql('postgres', $by_seqscan), $want,
			"$when: sequential scans find every committed row (scan $i)");
	}
	is($node->safe_psql('postgres', $other_paths), $want, "$when: so do the other paths");
	if ($when eq 'after the run')
	{
		my $stats = $node->safe_psql('postgres', q{
SELECT string_agg((value > 0)::text, '/' ORDER BY name) FROM tides_stats() WHERE name LIKE 'vacant%'});
		is($stats, 'true/true', 'the scans recorded ranges and jumped over them');
		$node->restart;
	}
}

done_testing();
