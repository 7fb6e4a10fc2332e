
# 014_index_kills.pl -- when an index scan may forget the entry of a deleted
# row (kill_prior_tuple; src/am/visibility.c, tam_surely_dead).  A crash must
# not bring back a row its index forgot, and an asynchronous commit is lost
# whole in an OS crash, so no index forgets a row before its deleter's commit
# record is flushed -- heap's SetHintBits rule.  The WAL writer is stopped
# (SIGSTOP), so a DELETE committed with synchronous_commit = off stays
# unflushed until a synchronous commit flushes the WAL past it.
#
#   tides.wal = on:  a tides_btree kill is a WAL record after the commit
#                    record, so it is written at once; nbtree's LP_DEAD hint
#                    (which may reach the disk before the WAL) waits for the
#                    flush.
#   tides.wal = off: a tides_btree kill is a tides log write after the
#                    deletion's records, so it waits only for the commit
#                    record, not for the sync worker's durable horizon --
#                    but for the commit record it must: a kill -9 of the
#                    WAL writer (PostgreSQL then restarts every process, and
#                    the WAL buffers are lost) after a sync worker round
#                    keeps the kill in the tides log and loses the commit,
#                    and the 400 rows come back; every path must find them.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TidesTap;

my $scan = q{
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
SELECT count(*) FROM ik WHERE id <= 1000;
SELECT count(*) FROM ik WHERE v <= 1000;
SELECT tides_index_entries('ik_t');
SELECT count(*) FROM generate_series(1, pg_relation_size('ik_b') / 8192 - 1) p,
  bt_page_items('ik_b', p::int) WHERE dead;
};

for my $wal (1, 0)
{
	my $mode = $wal ? 'tides.wal = on' : 'tides.wal = off';
	my $node = tides_node('kills' . $wal, wal => $wal, sync_mode => 'none',
		extra => "autovacuum = off\ncheckpoint_timeout = 1h\nrestart_after_crash = on\n");
	$node->start;
	$node->safe_psql('postgres', q{
CREATE EXTENSION tidesam;
CREATE EXTENSION pageinspect;
CREATE TABLE ik (id int, v int) USING tides;
CREATE UNIQUE INDEX ik_t ON ik USING tides_btree (id);
CREATE INDEX ik_b ON ik USING btree (v);
INSERT INTO ik SELECT g, g FROM generate_series(1, 1000) g;
CREATE TABLE flusher (n int);
});
	my $walwriter = $node->safe_psql('postgres',
		q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'walwriter'});
	ok($walwriter =~ /^\d+$/, "$mode: the WAL writer's pid");
	kill 'STOP', $walwriter;

	my ($flush_before, $out) = split /\n/, $node->safe_psql('postgres', q{
SET synchronous_commit = off;
DELETE FROM ik WHERE id <= 400;
SELECT pg_current_wal_flush_lsn() < pg_current_wal_insert_lsn();
} . $scan), 2;
	is($flush_before, 't', "$mode: the asynchronous DELETE's commit record is not flushed");
	my ($rows_t, $rows_b, $entries, $dead) = split /\n/, $out;
	is("$rows_t $rows_b", '600 600', "$mode: both indexes find the 600 rows left");
	is($entries, $wal ? 600 : 1000,
		$wal ? "$mode: tides_btree forgot the 400 entries at once (its kill follows the commit record in the WAL)"
			 : "$mode: tides_btree keeps the 400 entries until the commit record is flushed");
	is($dead, 0, "$mode: nbtree marks no entry dead before the commit record is flushed");

	if (!$wal)
	{
		# the sync worker's round (every 10 s in mode none) makes the
		# deletion's tides records durable, not its commit record
		sleep 11;
		($rows_t, $rows_b, $entries, $dead) = split /\n/, $node->safe_psql('postgres', $scan);
		is($entries, 1000, "$mode: after a sync worker round, tides_btree still keeps the entries");
		kill('KILL', $walwriter) == 1 or die "could not kill the WAL writer $walwriter: $!";
		$node->poll_query_until('postgres', 'SELECT true') or die 'no restart after the crash';
		is(join(' ', split /\n/, $node->safe_psql('postgres', 'SELECT count(*) FROM ik;' . $scan)),
			'1000 1000 1000 1000 0',
			"$mode: the DELETE's commit was lost in the crash: all 1000 rows, by every path");
		$walwriter = $node->safe_psql('postgres',
			q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'walwriter'});
		kill 'STOP', $walwriter;
		$node->safe_psql('postgres', 'SET synchronous_commit = off; DELETE FROM ik WHERE id <= 400;');
	}

	# a synchronous commit flushes the WAL past the DELETE's commit record
	$node->safe_psql('postgres', 'SET synchronous_commit = on; INSERT INTO flusher VALUES (1);');
	($rows_t, $rows_b, $entries, $dead) = split /\n/, $node->safe_psql('postgres', $scan);
	is("$rows_t $rows_b", '600 600', "$mode: after the flush, both indexes still find 600 rows");
	is($entries, 600, "$mode: after the flush, tides_btree has forgotten the 400 entries");
	if ($wal)
	{
		is($dead, 400, "$mode: after the flush, nbtree marks the 400 entries dead");
	}
	kill 'CONT', $walwriter;
	$node->stop;
}

done_testing();
