
# 002_basebackup.pl -- base backups of a tides.wal = on server taken under
# pgbench load, restored and started: the tides half and the heap half of
# the workload (written in the same transactions) agree, tides_verify() and
# tides_verify_index() are clean.  Three ways of taking the backup:
# pg_basebackup -X fetch, pg_basebackup -X stream in tar format, and the
# low-level API (pg_backup_start, a file copy while the load runs,
# pg_backup_stop, backup_label written from its result).
use strict;
use warnings;
use File::Copy;
use File::Find;
use File::Path qw(make_path);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TidesTap;

my $primary = tides_node('primary', has_archiving => 1);
$primary->start;
setup_workload($primary);

# the restored node started: it agrees with itself, verifies clean, takes writes
sub check_restored
{
	my ($node, $what) = @_;
	$node->start;
	$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die "$what: recovery did not end";
	ok($node->log_contains('tides: engine files restored to their checkpoint at'),
		"$what: the engine was restored to the backup's checkpoint");
	check_mirror($node, $what);
	check_indexes($node, $what);
	check_verify($node, $what);
	is(run_load($node, 2, [ '-t', 200 ]), 0, "$what: takes writes");
	check_mirror($node, "$what, after writes");
	$node->stop;
	return;
}

# pg_basebackup -X fetch, under load
my $load = start_load($primary, 4, [ '-T', 15 ]);
sleep 3;
$primary->backup('fetch', backup_options => [ '-X', 'fetch' ]);
is(finish_load($load), 0, 'pgbench ran without errors during the -X fetch backup');
check_restored(from_backup($primary, 'fetch', 'restored_fetch'), 'pg_basebackup -X fetch');

# pg_basebackup -X stream, tar format, under load
$load = start_load($primary, 4, [ '-T', 15 ]);
sleep 3;
$primary->backup('tar', backup_options => [ '-X', 'stream', '-F', 't' ]);
is(finish_load($load), 0, 'pgbench ran without errors during the tar backup');
check_restored(from_backup($primary, 'tar', 'restored_tar', tar_program => 'tar'),
	'pg_basebackup -X stream -F t');

# the low-level API: pg_backup_start in a session that stays open, a copy of
# the data directory while the load runs, pg_backup_stop, backup_label
$load = start_load($primary, 4, [ '-T', 20 ]);
sleep 2;
my $bsession = $primary->background_psql('postgres');
$bsession->query_safe('SET client_min_messages = warning');
my $log_offset = -s $primary->logfile;
$bsession->query_safe("SELECT pg_backup_start('tap lowlevel', true)");
# the hold must be in place before the copy starts: nothing tells other
# backends about a low-level backup, tides counts the session in itself
ok($primary->log_contains('tides: a base backup is running', $log_offset),
	'low-level API: obsolete engine files are kept from pg_backup_start on');
# every file of the backup's checkpoint becomes obsolete before the copy
# reaches it; without the hold the copy lacks them and the restore refuses
$primary->safe_psql('postgres', 'SELECT tides_flush(); SELECT tides_compact()');
my $node = PostgreSQL::Test::Cluster->new('restored_lowlevel');
my $src = $primary->data_dir;
my $dst = $node->data_dir;
make_path($dst);
my $copied = 0;
find({
	no_chdir => 1,
	wanted => sub {
		my $rel = substr($File::Find::name, length($src));
		return if $rel eq '';
		if ($rel =~ m{^/(pg_wal|pg_replslot|pg_stat_tmp)/.}
			|| $rel =~ m{^/(postmaster\.pid|postmaster\.opts)$})
		{
			return;
		}
		if (-d $File::Find::name)
		{
			make_path("$dst$rel");
			chmod 0700, "$dst$rel";
		}
		elsif (copy($File::Find::name, "$dst$rel"))
		{
			$copied++;
		}
		elsif (-e $File::Find::name)
		{
			die "copy $rel: $!";    # a file that vanished meanwhile is fine
		}
		# slow the copy down, so that the engine flushes and compacts during it
		select(undef, undef, undef, 0.002) if $rel =~ m{pg_tides};
	}
}, $src);
chmod 0700, $dst;
ok($copied > 100, "low-level API: $copied files copied while the load ran");
$log_offset = -s $primary->logfile;
my $stop = $bsession->query_safe("SELECT labelfile FROM pg_backup_stop(true)");
$primary->wait_for_log(qr/tides: no base backup is running any more/, $log_offset);
pass('low-level API: obsolete engine files are deleted again after pg_backup_stop');
$bsession->quit;
is(finish_load($load), 0, 'pgbench ran without errors during the low-level backup');
open my $lf, '>', "$dst/backup_label" or die;
print $lf $stop;
print $lf "\n" unless $stop =~ /\n$/;
close $lf;
like($stop, qr/START WAL LOCATION: /, 'pg_backup_stop returned the backup label');
# recover from the archive: the copy holds no WAL
$node->append_conf('postgresql.conf', "port = " . $node->port . "\narchive_mode = off\n");
$node->enable_restoring($primary, 0);
check_restored($node, 'low-level API backup');

check_verify($primary, 'primary after three backups');
$primary->stop;
done_testing();
