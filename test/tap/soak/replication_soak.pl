
# replication_soak.pl -- the long run of issue 14 (make replication-soak; not
# in CI): pgbench against a tides.wal = on primary with a streaming standby
# for SOAK_SECONDS (default 600); three pg_basebackups taken during it
# (-X stream, -X fetch, -X stream -F t), each restored, started and checked;
# the standby checked under load every 30 s; at the end the standby is
# compared with the primary at the same LSN and promoted, takes writes, and
# is checked again.  Every check compares tides tables with heap tables
# written in the same transactions, index scans with sequential scans, and
# runs tides_verify() and tides_verify_index().  Zero differences = every
# assertion passes.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use TidesTap;

my $seconds = $ENV{SOAK_SECONDS} || 600;
my $t0 = time;
sub elapsed { return sprintf('%4ds', time - $t0); }

my $primary = tides_node('primary', extra => "wal_keep_size = 1GB\nmax_wal_size = 1GB\n");
$primary->start;
setup_workload($primary, 10000);
$primary->backup('standby_base');
my $standby = from_backup($primary, 'standby_base', 'standby', has_streaming => 1);
$standby->start;
$primary->wait_for_catchup($standby, 'replay');
note elapsed() . ' primary and standby up';

my $load = start_load($primary, 4, [ '-T', $seconds ], 10000);
my @backups = (
	[ 0.20, 'stream', [ '-X', 'stream' ] ],
	[ 0.45, 'fetch', [ '-X', 'fetch' ] ],
	[ 0.70, 'tar', [ '-X', 'stream', '-F', 't' ] ]);
my $next_standby_check = 30;
while (time - $t0 < $seconds - 5)
{
	my $at = (time - $t0) / $seconds;
	if (@backups && $at >= $backups[0][0])
	{
		my ($frac, $name, $opts) = @{ shift @backups };
		note elapsed() . " pg_basebackup @$opts";
		$primary->backup($name, backup_options => $opts);
		my $r = from_backup($primary, $name, "restored_$name",
			$name eq 'tar' ? (tar_program => 'tar') : ());
		$r->start;
		$r->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
		  or die "restored_$name: recovery did not end";
		check_mirror($r, "backup $name (" . elapsed() . ')');
		check_indexes($r, "backup $name");
		check_verify($r, "backup $name");
		$r->stop;
		$r->clean_node;
		PostgreSQL::Test::Utils::system_or_bail('rm', '-rf', $primary->backup_dir . "/$name");
		note elapsed() . " backup $name checked";
	}
	elsif (time - $t0 >= $next_standby_check)
	{
		check_mirror($standby, 'standby under load (' . elapsed() . ')');
		$next_standby_check += 30;
	}
	else
	{
		sleep 1;
	}
}
is(finish_load($load), 0, 'pgbench ran ' . $seconds . ' s without errors');

my $state = state_of($primary);
my $lsn = $primary->lsn('insert');
$standby->poll_query_until('postgres', "SELECT pg_last_wal_replay_lsn() >= '$lsn'")
  or die 'standby did not catch up';
is(state_of($standby), $state, "standby = primary at the same LSN ($lsn)");
check_indexes($standby, 'standby at the end');
check_verify($primary, 'primary at the end');

$primary->stop;
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'promotion did not finish';
note elapsed() . ' standby promoted';
is(run_load($standby, 4, [ '-T', 30 ], 10000), 0, 'pgbench on the promoted standby ran without errors');
check_mirror($standby, 'promoted standby');
check_indexes($standby, 'promoted standby');
check_verify($standby, 'promoted standby');
my $stats = $standby->safe_psql('postgres',
	"SELECT (SELECT count(*) FROM hist) || ' history rows, ' || (SELECT count(*) FROM pgbench_history) || ' pgbench history rows'");
note elapsed() . " done: $stats";
$standby->stop;
done_testing();
