
# 001_standby.pl -- a streaming standby of a primary with tides.wal = on,
# made with pg_basebackup -R -X stream under pgbench load: hot-standby reads
# of tides tables agree with their heap mirrors while replay runs and with
# the primary at the same replay LSN; index scans (btree and tides_btree)
# agree with sequential scans; a fast and an immediate restart of the
# standby change nothing; after promotion the new primary keeps writing,
# tides_verify() and tides_verify_index() are clean, and no row id or index
# entry is reused across the failover.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TidesTap;

my $primary = tides_node('primary');
$primary->start;
setup_workload($primary);

# rows whose ids the failover must not reuse: 1..100 before the backup
$primary->safe_psql('postgres', q{
CREATE TABLE ids (id int NOT NULL, pad text) USING tides;
CREATE INDEX ids_bt ON ids (id);
CREATE INDEX ids_tb ON ids USING tides_btree (id);
INSERT INTO ids SELECT g, 'before backup' FROM generate_series(1, 100) g;
});

# the backup under load
my $load = start_load($primary, 4, [ '-T', 25 ]);
sleep 3;
$primary->backup('bk', backup_options => [ '-X', 'stream' ]);
my $standby = from_backup($primary, 'bk', 'standby', has_streaming => 1);
$standby->start;

# more ids after the backup, some deleted: the standby must have exactly these
$primary->safe_psql('postgres', q{
INSERT INTO ids SELECT g, 'after backup' FROM generate_series(101, 2000) g;
DELETE FROM ids WHERE id % 10 = 0;
CREATE TABLE later (x int) USING tides;
INSERT INTO later SELECT generate_series(1, 777);
});

my ($ret, $out, $err);
ok($primary->safe_psql('postgres', 'SELECT count(*) FROM ulog') > 0, 'the unlogged table has rows on the primary');

# hot-standby reads while replay runs: every snapshot agrees with its heap half
for my $i (1 .. 3)
{
	sleep 3;
	check_mirror($standby, "standby under load, read $i");
}
is(finish_load($load), 0, 'pgbench on the primary ran without errors');

# the load has stopped: the primary's state is the state at its current LSN,
# and the standby's once it has replayed up to there
my $state = state_of($primary);
my $lsn = $primary->lsn('insert');
$standby->poll_query_until('postgres', "SELECT pg_last_wal_replay_lsn() >= '$lsn'")
  or die 'standby did not catch up';
is(state_of($standby), $state, "standby = primary at the same replay LSN ($lsn)");
check_mirror($standby, 'standby after catch-up');
check_indexes($standby, 'hot standby');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM later'), '777',
	'a tides table created after the backup has its rows on the standby');
($ret, $out, $err) = $standby->psql('postgres', 'SELECT count(*) FROM ulog');
like($err, qr/cannot access temporary or unlogged relations during recovery/,
	'unlogged tides table: not readable on the standby, as heap');

# writes are refused on a hot standby
($ret, $out, $err) = $standby->psql('postgres', 'INSERT INTO acc VALUES (-1, 0)');
like($err, qr/read-only transaction/, 'hot standby refuses tides writes');

# restarts of the standby, fast and immediate, under load
$load = start_load($primary, 4, [ '-T', 20 ]);
sleep 4;
$standby->restart;
check_mirror($standby, 'standby after a fast restart under load');
sleep 4;
$standby->stop('immediate');
$standby->start;
check_mirror($standby, 'standby after an immediate stop under load');
is(finish_load($load), 0, 'pgbench ran without errors during the restarts');
$primary->wait_for_catchup($standby, 'replay');
is(state_of($standby), state_of($primary), 'standby = primary after its restarts');
check_indexes($standby, 'hot standby after restarts');
# replay is the standby's only writer and must never delay itself: before a
# restarted standby is consistent no worker compacts level 0, so a delayed
# replay crawled (1 MB of WAL per second) and its restart timed out
is($standby->safe_psql('postgres', 'SELECT slowdown_count FROM tides_engine_stats'), '0',
	'replay on the standby never waited in the level-0 slowdown');

# failover: the primary goes away, the standby is promoted and takes writes
$primary->stop('immediate');
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'promotion did not finish';
is($standby->safe_psql('postgres', 'SELECT count(*) FROM ulog'), '0',
	'unlogged tides table: empty after promotion');
is(run_load($standby, 4, [ '-T', 10 ]), 0, 'pgbench on the promoted server ran without errors');
check_mirror($standby, 'promoted');
check_indexes($standby, 'promoted');
check_verify($standby, 'promoted');

# no row id reused: new rows on the promoted server, and range scans by
# both indexes return exactly the rows that must be there
$standby->safe_psql('postgres', q{
INSERT INTO ids SELECT g, 'after promote' FROM generate_series(20001, 20500) g;
});
for my $idx ([ 'btree', 'ids_bt' ], [ 'tides_btree', 'ids_tb' ])
{
	my ($kind, $name) = @$idx;
	# make the planner take the index under test: the other one is dropped in a transaction rolled back
	my $other = $name eq 'ids_bt' ? 'ids_tb' : 'ids_bt';
	my $r = $standby->safe_psql('postgres', qq{
BEGIN;
SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
DROP INDEX $other;
EXPLAIN (COSTS OFF) SELECT * FROM ids WHERE id BETWEEN 101 AND 20000;
SELECT count(*) || '/' || sum(id) || '/' || count(DISTINCT ctid) || '/' || bool_and(pad <> 'after promote')
  FROM ids WHERE id BETWEEN 101 AND 20000;
SELECT count(*) || '/' || sum(id) || '/' || bool_and(pad = 'after promote') FROM ids WHERE id > 20000;
SELECT count(*) FROM ids WHERE id BETWEEN 1 AND 100;
ROLLBACK;});
	my @all = split /\n/, $r;
	my @plan = grep { /Scan/ } @all;
	like($plan[0], qr/Index (Only )?Scan using $name/, "$kind index: used for the range scans");
	my @lines = grep { !/Scan|Index Cond|Filter/ } @all;
	# 101..2000 without multiples of 10: 1710 rows
	my $sum = 0;
	$sum += $_ for grep { $_ % 10 } 101 .. 2000;
	is($lines[0], "1710/$sum/1710/true", "$kind index: ids 101..20000 are exactly the rows written before the failover");
	my $sum2 = 0;
	$sum2 += $_ for 20001 .. 20500;
	is($lines[1], "500/$sum2/true", "$kind index: ids above 20000 are exactly the rows written after it");
	is($lines[2], '90', "$kind index: ids 1..100 as before the backup");
}
is($standby->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT ctid) FROM ids'), 't',
	'no two rows share a TID');
check_verify($standby, 'promoted, after new rows');

$standby->stop;
done_testing();
