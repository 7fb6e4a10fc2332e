
# 007_monitoring.pl -- the DBA features of 1.1 where the WAL matters:
#   - tides_engine_stats' log figures in both modes: with tides.wal = on
#     log_bytes_written counts the tides WAL records this server inserted
#     (no more than the WAL grew by, most of it for a tides-only load),
#     log_syncs and the engine's log positions are NULL, and a standby,
#     which inserts none, counts none; with tides.wal = off they are the
#     engine's own log;
#   - a dropped tides_btree index frees its tree on the primary, and the
#     drop reaches a streaming standby through the WAL: the standby's
#     engine gives the index's bytes back too, keeps them given back over
#     an immediate restart, and is clean after promotion;
#   - the monitoring views and size functions answer on a hot standby.
# (sql/monitor_views.sql and sql/space_drop_index.sql test the same on one
# server; docs/operations.md, "Monitoring".)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TidesTap;

# engine bytes of every level after a flush and a full compaction
my $settled = q{SELECT tides_flush(); SELECT tides_compact();
SELECT sum(bytes) FROM tides_levels};

# settled level bytes of $node, polled (up to 60 s) until at most $target
sub wait_settled_at_most
{
	my ($node, $target) = @_;
	my $b;
	for (1 .. 120)
	{
		$b = (split /\n/, $node->safe_psql('postgres', $settled))[-1];
		return $b if $b <= $target;
		sleep 0.5;
	}
	note "settled bytes $b > target $target";
	return $b;
}

sub settled
{
	my ($node) = @_;
	return (split /\n/, $node->safe_psql('postgres', $settled))[-1];
}

# ---- the log figures, tides.wal = off: the engine's own log

my $off = tides_node('walOff', wal => 0, sync_mode => 'full', extra => "autovacuum = off\n");
$off->start;
$off->safe_psql('postgres', q{
CREATE EXTENSION tidesam;
CREATE TABLE t (id int, v text) USING tides;
SELECT tides_stats_reset();
INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1, 20000) g;
});
is($off->safe_psql('postgres', q{
SELECT log_bytes_written > user_bytes_written AND user_bytes_written > 20000 * 32,
       log_syncs > 0, log_written_lsn IS NOT NULL AND log_durable_lsn <= log_written_lsn
FROM tides_engine_stats}), 't|t|t',
	'tides.wal = off: the engine log counts its bytes (headers too), its fsyncs and its positions');
$off->stop;

# ---- tides.wal = on: the primary

my $primary = tides_node('primary', extra => "autovacuum = off\n");
$primary->start;
$primary->safe_psql('postgres', q{
CREATE EXTENSION tidesam;
CREATE TABLE t (id int, v text) USING tides;
});
my $lsn0 = $primary->lsn('insert');
$primary->safe_psql('postgres', q{
SELECT tides_stats_reset();
INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1, 20000) g;
});
my $lsn1 = $primary->lsn('insert');
my $wal = $primary->safe_psql('postgres', "SELECT pg_wal_lsn_diff('$lsn1', '$lsn0')");
my ($logged, $user, $nulls) = split /\|/, $primary->safe_psql('postgres', q{
SELECT log_bytes_written, user_bytes_written,
       log_syncs IS NULL AND log_written_lsn IS NULL AND log_durable_lsn IS NULL
FROM tides_engine_stats});
note "tides WAL bytes $logged, user bytes $user, WAL written $wal";
ok($logged > $user && $user > 20000 * 32,
	'tides.wal = on: log_bytes_written counts the WAL records (more than their payload)');
ok($logged <= $wal, 'tides.wal = on: log_bytes_written is no more than the WAL grew by');
ok($logged > $wal / 2, 'tides.wal = on: a tides-only load is most of the WAL');
is($nulls, 't', 'tides.wal = on: log_syncs and the engine log positions are NULL');
is($primary->safe_psql('postgres', q{
SELECT write_amplification >= (log_bytes_written::float8 / user_bytes_written) FROM tides_engine_stats}),
	't', 'tides.wal = on: write amplification counts the WAL copy');

# a table with a large tides_btree index, and its standby
$primary->safe_psql('postgres', q{
CREATE TABLE di_t (id int, v text) USING tides;
INSERT INTO di_t SELECT g, md5(g::text) || md5((g + 1)::text) FROM generate_series(1, 80000) g;
});
# what the index adds to the settled store: the bytes its drop must give
# back (tides_relation_size prorates files that span the index's key range
# without holding it, so it can overstate them)
my $p_unindexed = settled($primary);
$primary->safe_psql('postgres', 'CREATE INDEX di_v ON di_t USING tides_btree (v)');
my $p_ibytes = settled($primary) - $p_unindexed;
$primary->backup('bk', backup_options => [ '-X', 'stream' ]);
my $standby = from_backup($primary, 'bk', 'standby', has_streaming => 1);
$standby->start;
# rows after the backup, so that the standby's replay has a memtable to
# flush (the backup's checkpoint flushed everything written before it)
$primary->safe_psql('postgres',
	"INSERT INTO t SELECT g, 'after the backup' FROM generate_series(20001, 21000) g");
$primary->wait_for_catchup($standby, 'replay');

my $p_isize = $primary->safe_psql('postgres', q{SELECT tides_flush(); SELECT tides_relation_size('di_v')});
$p_isize = (split /\n/, $p_isize)[-1];
my $s_isize = $standby->safe_psql('postgres', q{SELECT tides_flush(); SELECT tides_relation_size('di_v')});
$s_isize = (split /\n/, $s_isize)[-1];
note "index bytes: primary $p_isize, standby $s_isize";
ok($p_isize > 3000000 && $s_isize > 3000000, 'the tides_btree index is large on both');
my $p_indexed = settled($primary);
my $s_indexed = settled($standby);

# the views on a hot standby
is($standby->safe_psql('postgres', q{
SELECT (SELECT count(*) FROM tides_levels),
       (SELECT string_agg(relid::text || ':' || kind, ',' ORDER BY relid::text) FROM tides_relations),
       (SELECT count(*) FROM tides_compactions) >= 0,
       tides_database_size() > 0 AND tides_engine_size() > tides_database_size(),
       (SELECT flushes > 0 AND log_bytes_written = 0 FROM tides_engine_stats)}),
	'7|di_t:table,di_v:index,t:table|t|t|t',
	'hot standby: the views and sizes answer; replayed records are not counted as written');

# DROP INDEX on the primary: its tree goes there, then on the standby
$primary->safe_psql('postgres', 'DROP INDEX di_v');
note "index bytes on the primary, settled: $p_ibytes";
my $p_after = wait_settled_at_most($primary, $p_indexed - $p_ibytes * 0.8);
ok($p_ibytes > 3000000 && $p_after <= $p_indexed - $p_ibytes * 0.8,
	"primary: the dropped index's bytes are given back ($p_indexed -> $p_after)");
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
my $s_after = wait_settled_at_most($standby, $s_indexed - $s_isize * 0.8);
ok($s_after <= $s_indexed - $s_isize * 0.8,
	"standby: the replayed drop gives the index's bytes back ($s_indexed -> $s_after)");

# an immediate restart replays from the last restartpoint: the drop stays done
$standby->stop('immediate');
$standby->start;
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
my $s_restarted = settled($standby);
ok($s_restarted <= $s_indexed - $s_isize * 0.8,
	"standby after an immediate restart: the index's bytes stay given back ($s_restarted)");
is($standby->safe_psql('postgres', q{
SELECT count(*), count(DISTINCT v), sum(id) FROM di_t;
SELECT string_agg(relid::text, ',' ORDER BY relid::text) FROM tides_relations}),
	"80000|80000|3200040000\ndi_t,t", 'standby: the table is whole, the index gone from tides_relations');

# promotion: the new primary's engine is clean and takes a new index
$primary->stop;
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'promotion did not finish';
check_verify($standby, 'promoted after the index drop');
is($standby->safe_psql('postgres', q{
CREATE INDEX di_v2 ON di_t USING tides_btree (v);
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT id FROM di_t WHERE v = md5('7') || md5('8');
SELECT count(*) FROM tides_verify_index('di_v2')}), "7\n0",
	'promoted: a new tides_btree index is built and found clean');

done_testing();
