
# 005_refusals.pl -- what is not supported is refused loudly:
#   - tides.wal = off: a streaming standby, a restored base backup and a
#     point-in-time recovery start (heap tables work) but every tides access
#     errors with the reason, and keeps erroring after promotion and restarts;
#   - a backup of a tides.wal = off server restored with tides.wal = on;
#   - publications naming tides tables (ERROR), FOR ALL TABLES and TABLES IN
#     SCHEMA (WARNING);
#   - too few max_worker_processes: the server refuses to start.
# (Binary upgrade: 006_pg_upgrade.pl.)
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TidesTap;

my ($ret, $out, $err);

my $primary = tides_node('nowal', wal => 0, sync_mode => 'full', has_archiving => 1);
$primary->start;
$primary->safe_psql('postgres', q{
CREATE EXTENSION tidesam;
CREATE TABLE t (id int PRIMARY KEY, v text) USING tides;
CREATE TABLE h (id int PRIMARY KEY, v text) USING heap;
INSERT INTO t SELECT g, 'x' FROM generate_series(1, 1000) g;
INSERT INTO h SELECT g, 'x' FROM generate_series(1, 1000) g;
});
# a copy of the stopped cluster (no backup_label), and a base backup
$primary->stop;
$primary->backup_fs_cold('cold');
$primary->start;
$primary->backup('bk');
$primary->safe_psql('postgres', q{
INSERT INTO t SELECT g, 'y' FROM generate_series(1001, 2000) g;
INSERT INTO h SELECT g, 'y' FROM generate_series(1001, 2000) g;
});
my $walfile = $primary->safe_psql('postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn())');
$primary->safe_psql('postgres', 'SELECT pg_switch_wal()');
$primary->poll_query_until('postgres',
	"SELECT last_archived_wal >= '$walfile' FROM pg_stat_archiver")
  or die 'WAL not archived';

# tides access fails with $why on $node, while heap reads work
sub refuses
{
	my ($node, $what, $why) = @_;
	($ret, $out, $err) = $node->psql('postgres', 'SELECT count(*) FROM t');
	like($err, qr/tides storage is unavailable: .*$why/, "$what: tides access refused ($why)");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM h') > 0 ? 'ok' : 'empty', 'ok',
		"$what: heap tables are readable");
	return;
}

# a streaming standby of a tides.wal = off primary, from a base backup
my $standby = from_backup($primary, 'bk', 'nowal_standby', has_streaming => 1);
$standby->start;
$primary->wait_for_catchup($standby, 'replay');
refuses($standby, 'standby, tides.wal = off',
	'the data directory is a copy made by a base backup \(backup_label\), and with tides.wal = off the tides files copied from a running server are not consistent');
ok($standby->log_contains('tides: tides storage is unavailable'), 'standby: the server log says so at start');
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'promotion did not finish';
refuses($standby, 'promoted standby, tides.wal = off', 'a copy made by a base backup \(backup_label\)');
$standby->restart;
refuses($standby, 'promoted standby after a restart', 'backup_label.*recorded in .*pg_tides/UNAVAILABLE');
$standby->stop;

# a standby made from a copy of the stopped primary: no backup_label, but standby.signal
my $standby2 = from_backup($primary, 'cold', 'nowal_standby_cold', has_streaming => 1, has_restoring => 1);
$standby2->start;
$primary->wait_for_catchup($standby2, 'replay');
refuses($standby2, 'standby from a cold copy, tides.wal = off',
	'the server runs WAL recovery \(standby.signal\), and with tides.wal = off tides data is not in the WAL');
$standby2->promote;
$standby2->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'promotion did not finish';
refuses($standby2, 'standby from a cold copy, promoted', 'the server runs WAL recovery \(standby.signal\)');
$standby2->restart;
refuses($standby2, 'standby from a cold copy, promoted and restarted', 'standby.signal.*recorded in .*pg_tides/UNAVAILABLE');
$standby2->stop;

# a base backup restored (no recovery target, no standby)
my $restored = from_backup($primary, 'bk', 'nowal_restored');
$restored->start;
refuses($restored, 'restored base backup, tides.wal = off', 'a copy made by a base backup \(backup_label\)');
$restored->restart;
refuses($restored, 'restored base backup after a restart', 'backup_label.*recorded in');
# the documented way out: give up the copy's tides data
$restored->stop;
PostgreSQL::Test::Utils::system_or_bail('rm', '-rf', $restored->data_dir . '/pg_tides');
$restored->start;
($ret, $out, $err) = $restored->psql('postgres', 'SELECT count(*) FROM t');
is($out, '0', 'pg_tides removed: the tides table reads as empty');
like($err, qr/WARNING:  tides storage of relation "t" is missing; it is treated as empty/, '... with a WARNING');
# its btree index still holds the old entries: TRUNCATE (new storage for both)
$restored->safe_psql('postgres', "TRUNCATE t; INSERT INTO t VALUES (1, 'again')");
is($restored->safe_psql('postgres', 'SET enable_seqscan = off; SELECT v FROM t WHERE id = 1'), 'again',
	'... and after TRUNCATE takes rows again');
$restored->stop;

# point-in-time recovery from the archive
my $pitr = from_backup($primary, 'cold', 'nowal_pitr', has_restoring => 1, standby => 0);
$pitr->start;
$pitr->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'recovery did not finish';
is($pitr->safe_psql('postgres', 'SELECT count(*) FROM h'), '2000', 'PITR: heap rows replayed');
refuses($pitr, 'archive recovery, tides.wal = off', 'the server runs WAL recovery \(recovery.signal\)');
$pitr->stop;

# a backup of a tides.wal = off server, restored with tides.wal = on
my $mixed = from_backup($primary, 'bk', 'nowal_restored_walon');
$mixed->append_conf('postgresql.conf', 'tides.wal = on');
$mixed->start;
refuses($mixed, 'backup of a tides.wal = off server started with tides.wal = on',
	'pg_tides holds no engine checkpoint for it \(CKPT-[0-9A-F]{16}\): the backup was not taken from a server running with tides.wal = on');
$mixed->stop;

# the primary itself is fine
is($primary->safe_psql('postgres', 'SELECT count(*) FROM t'), '2000', 'the primary reads its tides table');

# ---- publications
$primary->safe_psql('postgres', q{
CREATE TABLE pt (id int) PARTITION BY RANGE (id);
CREATE TABLE pt_heap PARTITION OF pt FOR VALUES FROM (0) TO (10);
CREATE TABLE pt_tides PARTITION OF pt FOR VALUES FROM (10) TO (20) USING tides;
CREATE TABLE parent_h (id int) USING heap;
CREATE TABLE child_t () INHERITS (parent_h) USING tides;
CREATE SCHEMA other;
CREATE TABLE other.h2 (id int) USING heap;
});
($ret, $out, $err) = $primary->psql('postgres', 'CREATE PUBLICATION p1 FOR TABLE t');
like($err, qr/ERROR:  publication "p1" cannot include tides table "t"/, 'CREATE PUBLICATION FOR TABLE a tides table: ERROR');
like($err, qr/Logical decoding does not see the changes/, '... with the reason');
($ret, $out, $err) = $primary->psql('postgres', 'CREATE PUBLICATION p1 FOR TABLE h, pt');
like($err, qr/ERROR:  publication "p1" cannot include tides table "pt_tides"/,
	'a partitioned table with a tides partition: ERROR naming the partition');
($ret, $out, $err) = $primary->psql('postgres', 'CREATE PUBLICATION p1 FOR TABLE parent_h');
like($err, qr/ERROR:  publication "p1" cannot include tides table "child_t"/,
	'an inheritance parent with a tides child: ERROR naming the child');
($ret, $out, $err) = $primary->psql('postgres', 'CREATE PUBLICATION p1 FOR TABLE ONLY parent_h');
ok($ret == 0 && $err !~ /tides/, 'ONLY the heap parent: accepted');
($ret, $out, $err) = $primary->psql('postgres', 'CREATE PUBLICATION p2 FOR TABLE h');
ok($ret == 0 && $err !~ /tides/, 'a publication of heap tables: accepted, no warning');
($ret, $out, $err) = $primary->psql('postgres', 'ALTER PUBLICATION p2 ADD TABLE t');
like($err, qr/ERROR:  publication "p2" cannot include tides table "t"/, 'ALTER PUBLICATION ADD TABLE a tides table: ERROR');
($ret, $out, $err) = $primary->psql('postgres', 'ALTER PUBLICATION p2 SET TABLE h, t');
like($err, qr/ERROR:  publication "p2" cannot include tides table "t"/, 'ALTER PUBLICATION SET TABLE with a tides table: ERROR');
is($primary->safe_psql('postgres', "SELECT string_agg(tablename, ',') FROM pg_publication_tables WHERE pubname = 'p2'"),
	'h', 'the refused publication changes were not made');
($ret, $out, $err) = $primary->psql('postgres', 'CREATE PUBLICATION p3 FOR ALL TABLES');
like($err, qr/WARNING:  publication "p3" does not publish the changes of tides tables/, 'FOR ALL TABLES: WARNING');
is($ret, 0, 'FOR ALL TABLES: created');
($ret, $out, $err) = $primary->psql('postgres', 'CREATE PUBLICATION p4 FOR TABLES IN SCHEMA public');
like($err, qr/WARNING:  publication "p4" does not publish the changes of tides tables/, 'TABLES IN SCHEMA: WARNING');
($ret, $out, $err) = $primary->psql('postgres', 'ALTER PUBLICATION p2 ADD TABLES IN SCHEMA other');
like($err, qr/WARNING:  publication "p2" does not publish the changes of tides tables/, 'ALTER PUBLICATION ADD TABLES IN SCHEMA: WARNING');
($ret, $out, $err) = $primary->psql('postgres', 'ALTER PUBLICATION p2 DROP TABLE h');
ok($ret == 0 && $err !~ /tides/, 'ALTER PUBLICATION DROP TABLE: no warning');
($ret, $out, $err) = $primary->psql('postgres', 'SET tides.check_publications = off; CREATE PUBLICATION p6 FOR TABLE t');
ok($ret == 0 && $err !~ /tides/, 'tides.check_publications = off: accepted without a word');
$primary->safe_psql('postgres', 'CREATE DATABASE plain');
($ret, $out, $err) = $primary->psql('plain', 'CREATE PUBLICATION p5 FOR ALL TABLES');
unlike($err, qr/tides/, 'FOR ALL TABLES in a database without tidesam: no warning');
$primary->stop;

# ---- too few background worker slots
my $small = tides_node('few_workers', wal => 1, allows_streaming => 0);
# the logical replication launcher, then flush, compaction, two guards,
# maintenance: 6 with tides.wal = on
$small->append_conf('postgresql.conf', 'max_worker_processes = 5');
is($small->start(fail_ok => 1), 0, 'max_worker_processes = 5 with tides.wal = on: the server does not start');
ok($small->log_contains('FATAL:  tidesam needs 5 background workers, but max_worker_processes = 5 left room for only 4 of them'),
	'... FATAL naming max_worker_processes and the number tides needs');
ok($small->log_contains('HINT:  Set max_worker_processes to at least 6'), '... with a hint counting the launcher too');
$small->append_conf('postgresql.conf', "tides.wal = off\n");
# flush, compaction, sync, maintenance: 4 (+ the launcher) with tides.wal = off
is($small->start(fail_ok => 1), 1, 'max_worker_processes = 5 with tides.wal = off: starts');
ok($small->poll_query_until('postgres',
		"SELECT count(*) = 4 FROM pg_stat_activity WHERE backend_type LIKE 'tides%'"),
	'... and runs the four tides workers');
$small->stop;

done_testing();
