
# 009_bulk_load.pl -- bulk loads written as table files (src/am/bulk.c,
# docs/durability.md "Bulk loads") with tides.wal = on reach a streaming
# standby and base backups:
#   - a load on the primary (files installed there) is on the standby, row
#     for row, through the WAL records of its rows;
#   - a load whose rows were logged before a base backup's checkpoint and
#     whose files were installed only after it (the transaction stays open
#     across pg_basebackup) is on a standby made from that backup: the
#     install logs those rows again after the redo point;
#   - a load rolled back after its install is on neither;
#   - a crash of the primary right after a committed load keeps it whole.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TidesTap;

my $primary = tides_node('primary');
$primary->start;
$primary->safe_psql('postgres', q{
CREATE EXTENSION tidesam;
CREATE TABLE bl (id int, v text) USING tides;
CREATE TABLE bl_mid (id int, v text) USING tides;
});
$primary->backup('bk0', backup_options => [ '-X', 'stream' ]);
my $standby = from_backup($primary, 'bk0', 'standby', has_streaming => 1);
$standby->start;

sub ingested
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		"SELECT value FROM tides_stats() WHERE name = 'ingested_files'");
}

sub catch_up
{
	my ($node) = @_;
	my $lsn = $primary->lsn('insert');
	$node->poll_query_until('postgres', "SELECT pg_last_wal_replay_lsn() >= '$lsn'")
	  or die 'standby did not catch up';
	return;
}

my $load = "SELECT g, md5(g::text) FROM generate_series";

# a load on the primary, and one rolled back after its install
my $before = ingested($primary);
$primary->safe_psql('postgres', qq{
SET tides.bulk_load_threshold = 0;
INSERT INTO bl $load(1, 200000) g;
BEGIN;
INSERT INTO bl $load(200001, 300000) g;
SELECT count(*) FROM bl;
ROLLBACK;
});
cmp_ok(ingested($primary), '>', $before, 'the loads were installed as table files on the primary');
my $expect = '200000|20000100000|200000';
my $q = 'SELECT count(*), sum(id), count(DISTINCT v) FROM bl';
is($primary->safe_psql('postgres', $q), $expect, 'primary: the committed load, not the rolled back one');
catch_up($standby);
is($standby->safe_psql('postgres', $q), $expect, 'standby: the same rows');

# a load open across a base backup: rows logged before its checkpoint,
# installed after it
my $s = $primary->background_psql('postgres');
$s->query_safe('SET tides.bulk_load_threshold = 0');
$s->query_safe('BEGIN');
$s->query_safe("INSERT INTO bl_mid $load(1, 150000) g");
$primary->backup('bk1', backup_options => [ '-X', 'stream' ]);
$s->query_safe("INSERT INTO bl_mid $load(150001, 250000) g");
$s->query_safe('COMMIT');
$s->quit;
my $q_mid = 'SELECT count(*), sum(id), count(DISTINCT v) FROM bl_mid';
my $expect_mid = '250000|31250125000|250000';
is($primary->safe_psql('postgres', $q_mid), $expect_mid, 'primary: the load open across the backup');

my $from_mid = from_backup($primary, 'bk1', 'from_mid', has_streaming => 1);
$from_mid->start;
catch_up($from_mid);
is($from_mid->safe_psql('postgres', $q_mid), $expect_mid,
	'standby from a backup taken mid-load: every row of the load');
is($from_mid->safe_psql('postgres', $q), $expect, 'standby from that backup: the earlier load');
catch_up($standby);
is($standby->safe_psql('postgres', $q_mid), $expect_mid, 'first standby: the load open across the backup');

# promote the standby made mid-load: its own rows and engine are consistent
$from_mid->promote;
$from_mid->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()') or die 'no promotion';
$from_mid->safe_psql('postgres', "SET tides.bulk_load_threshold = 0; INSERT INTO bl_mid $load(250001, 260000) g");
is($from_mid->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM bl_mid'), '260000|260000',
	'promoted: a new load adds to the old one, no row id reused');
check_verify($from_mid, 'promoted standby');

# a crash right after a committed load
$primary->safe_psql('postgres', qq{
SET tides.bulk_load_threshold = 0;
CREATE TABLE bl_crash (id int, v text) USING tides;
INSERT INTO bl_crash $load(1, 120000) g;
});
$primary->stop('immediate');
$primary->start;
is($primary->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM bl_crash'), '120000|120000',
	'primary after a crash: the committed load whole');
is($primary->safe_psql('postgres', $q), $expect, 'primary after a crash: the earlier load');
check_verify($primary, 'primary after the crash');
catch_up($standby);
is($standby->safe_psql('postgres', 'SELECT count(*) FROM bl_crash'), '120000', 'standby: the load before the crash');
check_verify($standby, 'standby');

done_testing();
