
# 004_crash.pl -- crashes under pgbench load, several cycles, with
# tides.wal = on (and the same with tides.wal = off, sync_mode = full):
# an immediate stop of the whole server, and a kill -9 of one backend
# (PostgreSQL then restarts every process); after each restart no committed
# transaction is lost -- every insert a client saw acknowledged is there,
# and the tides tables agree with their heap mirrors written in the same
# transactions -- unlogged tides tables are empty, tides_verify() and
# tides_verify_index() are clean.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TidesTap;

# a client that inserts 1, 2, 3, ... one transaction each, and logs each id
# once its COMMIT is acknowledged; it stops at the first failure
sub start_acker
{
	my ($node, $log) = @_;
	my $script = sprintf(q{
i=$(( $(tail -n 1 %s 2>/dev/null || echo 0) + 1 ))
end=$(( i + 100000 ))
while [ $i -lt $end ]; do
  PGAPPNAME=acker psql -XAtq -h '%s' -p %d -d postgres -c "INSERT INTO acked VALUES ($i, 'x')" >/dev/null 2>&1 || exit 0
  echo $i >> %s
  i=$(( i + 1 ))
done
}, $log, $node->host, $node->port, $log);
	return IPC::Run::start([ 'bash', '-c', $script ]);
}

sub acked_ids
{
	my ($log) = @_;
	return () unless -e $log;
	return split /\n/, slurp_file($log);
}

sub crash_cycles
{
	my ($node, $mode) = @_;
	my $log = PostgreSQL::Test::Utils::tempdir . "/acked.log";
	$node->start;
	setup_workload($node);
	$node->safe_psql('postgres', q{
CREATE TABLE acked (id int NOT NULL, pad text) USING tides;
CREATE UNIQUE INDEX acked_id ON acked USING tides_btree (id);
});
	for my $cycle (1 .. 3)
	{
		my $what = "$mode, crash $cycle";
		my $load = start_load($node, 4, [ '-T', 60 ]);
		my $acker = start_acker($node, $log);
		sleep 4 + $cycle;
		if ($cycle == 2)
		{
			# kill -9 of one backend: the postmaster restarts everything.  A
			# pgbench client's: the acker's backends live for one insert each,
			# and one picked here could be gone before the signal (a kill
			# that found nobody left the server running, and the wait below
			# timed out)
			my $pid = $node->safe_psql('postgres',
				"SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND application_name <> 'acker' ORDER BY random() LIMIT 1");
			die 'no pgbench backend to kill' unless $pid =~ /^\d+$/;
			kill('KILL', $pid) == 1 or die "could not kill backend $pid: $!";
			$node->wait_for_log(qr/all server processes terminated; reinitializing/);
			$node->poll_query_until('postgres', 'SELECT true')
			  or die 'no restart after the crash';
			ok($node->log_contains("terminated by signal 9"), "$what: a backend was killed");
		}
		else
		{
			$node->stop('immediate');
			$node->start;
		}
		finish_load($load, kill => 1);
		$acker->kill_kill;
		eval { $acker->finish };
		ok($node->log_contains('tides: engine recovered'), "$what: the engine recovered");

		my @ids = acked_ids($log);
		ok(@ids > 0, "$what: " . scalar(@ids) . ' inserts acknowledged so far');
		my $list = join(',', @ids);
		is($node->safe_psql('postgres',
				"SELECT count(*) FROM acked WHERE id IN ($list)"),
			scalar(@ids), "$what: every acknowledged insert is there");
		is($node->safe_psql('postgres',
				"SET enable_seqscan = off; SELECT count(*) FROM acked WHERE id BETWEEN 1 AND 1000000000"),
			$node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM acked"),
			"$what: the tides_btree index agrees with the table");
		check_mirror($node, $what);
		is($node->safe_psql('postgres', 'SELECT count(*) FROM ulog'), '0',
			"$what: the unlogged tides table is empty");
		check_verify($node, $what);
		# the unlogged table takes rows again
		$node->safe_psql('postgres', 'INSERT INTO ulog VALUES (1)');
	}
	check_indexes($node, "$mode, after the crashes");
	$node->stop;
	return;
}

my $on = tides_node('walon', extra => "restart_after_crash = on\n");
crash_cycles($on, 'tides.wal = on');

my $off = tides_node('waloff', wal => 0, sync_mode => 'full', extra => "restart_after_crash = on\n");
crash_cycles($off, 'tides.wal = off, full');

done_testing();
