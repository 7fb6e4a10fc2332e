
# 003_pitr.pl -- point-in-time recovery of a tides.wal = on server: a base
# backup, WAL archived to a directory, writes in phases with a named restore
# point, a time and an LSN between them, and a restore point taken while
# pgbench runs.  Recovery to each target gives tides rows exactly as of the
# target: equal to the primary's state recorded there, and equal to the heap
# rows written in the same transactions.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use TidesTap;

my $primary = tides_node('primary', has_archiving => 1);
$primary->start;
setup_workload($primary);
$primary->backup('bk');

# phase 1, then a named restore point
is(run_load($primary, 4, [ '-T', 4 ]), 0, 'phase 1 ran');
my $s1 = state_of($primary);
$primary->safe_psql('postgres', "SELECT pg_create_restore_point('rp1')");

# phase 2, then a point in time
is(run_load($primary, 4, [ '-T', 4 ]), 0, 'phase 2 ran');
my $s2 = state_of($primary);
sleep 1;
my $t2 = $primary->safe_psql('postgres', 'SELECT clock_timestamp()');
sleep 1;

# phase 3, then an LSN
is(run_load($primary, 4, [ '-T', 4 ]), 0, 'phase 3 ran');
my $s3 = state_of($primary);
my $l3 = $primary->lsn('insert');

# phase 4, with a restore point taken while it runs
my $load = start_load($primary, 4, [ '-T', 8 ]);
sleep 4;
$primary->safe_psql('postgres', "SELECT pg_create_restore_point('rp_busy')");
is(finish_load($load), 0, 'phase 4 ran');
my $s4 = state_of($primary);
isnt($s4, $s3, 'phase 4 changed the tables');

# everything archived
my $walfile = $primary->safe_psql('postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn())');
$primary->safe_psql('postgres', 'SELECT pg_switch_wal()');
$primary->poll_query_until('postgres', "SELECT last_archived_wal >= '$walfile' FROM pg_stat_archiver")
  or die 'WAL not archived';

# recover a copy of the backup to a target
sub recover_to
{
	my ($name, $target) = @_;
	my $node = from_backup($primary, 'bk', $name, has_restoring => 1, standby => 0);
	$node->append_conf('postgresql.conf', "$target\nrecovery_target_action = 'promote'\n");
	$node->start;
	$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die "$name: recovery did not end";
	return $node;
}

my $n = recover_to('pitr_name', "recovery_target_name = 'rp1'");
is(state_of($n), $s1, 'recovery to restore point rp1: tides and heap as they were there');
check_mirror($n, 'restore point rp1');
check_verify($n, 'restore point rp1');
$n->stop;

$n = recover_to('pitr_time', "recovery_target_time = '$t2'");
is(state_of($n), $s2, "recovery to time $t2: tides and heap as they were then");
check_mirror($n, 'target time');
check_indexes($n, 'target time');
$n->stop;

$n = recover_to('pitr_lsn', "recovery_target_lsn = '$l3'");
is(state_of($n), $s3, "recovery to LSN $l3: tides and heap as they were there");
check_mirror($n, 'target LSN');
check_verify($n, 'target LSN');
$n->stop;

$n = recover_to('pitr_busy', "recovery_target_name = 'rp_busy'");
my $sb = check_mirror($n, 'restore point taken under load');
ok($sb ne $s3 && $sb ne $s4, 'the restore point under load is between phase 3 and the end of phase 4');
check_verify($n, 'restore point taken under load');
is(run_load($n, 2, [ '-t', 200 ]), 0, 'the recovered server takes writes');
check_mirror($n, 'recovered server after writes');
$n->stop;

$n = recover_to('pitr_end', '');
is(state_of($n), $s4, 'recovery to the end of the archive: the primary\'s last state');
$n->stop;

$primary->stop;
done_testing();
