
# TidesTap.pm -- what the tidesam TAP tests share: a node with tidesam
# preloaded, the mirrored workload (tides tables and a heap table written in
# the same transactions), and the checks that compare them.
#
# The workload, in database "postgres":
#   acc       (tides)  aid int PRIMARY KEY (btree), abal int; tides_btree on abal
#   hist      (tides)  hid bigint, aid int, delta int; tides_btree UNIQUE on hid,
#                      btree on aid
#   acc_heap  (heap)   the same as acc
#   hist_heap (heap)   hid bigint PRIMARY KEY, aid int, delta int
#   ulog      (unlogged tides) id int, written by the same transactions
# Each transaction of the pgbench script moves a random account's balance by
# delta in acc and acc_heap and records the move in hist and hist_heap with
# the same hid; one in ten deletes one history row from both.  So in every
# snapshot the tides tables hold exactly what their heap mirrors hold.
package TidesTap;

use strict;
use warnings;

use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT = qw(tides_node from_backup tides_conf setup_workload workload_files
  run_load start_load finish_load state_of check_mirror check_indexes
  check_verify snapshot_sql script_args);

# the settings every test node gets; %p: wal (default 1), sync_mode, extra
sub tides_conf
{
	my (%p) = @_;
	my $wal = defined $p{wal} ? $p{wal} : 1;
	my $conf = <<"EOC";
shared_preload_libraries = 'tidesam'
tides.wal = @{[ $wal ? 'on' : 'off' ]}
tides.memtable_size = 2MB
tides.memtable_count = 3
tides.block_cache_size = 8MB
tides.metadata_size = 8MB
max_worker_processes = 16
max_connections = 30
shared_buffers = 16MB
max_wal_size = 256MB
wal_keep_size = 128MB
checkpoint_timeout = 30s
EOC
	$conf .= "tides.sync_mode = $p{sync_mode}\n" if $p{sync_mode};
	$conf .= $p{extra} if $p{extra};
	return $conf;
}

# a new node, initialised, with tidesam preloaded; not started
sub tides_node
{
	my ($name, %p) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(
		allows_streaming => (defined $p{allows_streaming} ? $p{allows_streaming} : 1),
		has_archiving => $p{has_archiving} || 0);
	$node->append_conf('postgresql.conf', tides_conf(%p));
	return $node;
}

# a node made from a backup of $primary, which does not archive into the
# primary's archive (its copied archive_command would otherwise overwrite
# the primary's segments with its own on the same timeline)
sub from_backup
{
	my ($primary, $backup, $name, %p) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init_from_backup($primary, $backup, %p);
	$node->append_conf('postgresql.conf', "archive_mode = off\n");
	return $node;
}

# the tables of the workload (on a started primary); $rows accounts
sub setup_workload
{
	my ($node, $rows) = @_;
	$rows ||= 2000;
	$node->safe_psql('postgres', qq{
CREATE EXTENSION IF NOT EXISTS tidesam;
CREATE TABLE acc (aid int PRIMARY KEY, abal int NOT NULL) USING tides;
CREATE INDEX acc_abal ON acc USING tides_btree (abal);
CREATE TABLE hist (hid bigint NOT NULL, aid int NOT NULL, delta int NOT NULL) USING tides;
CREATE UNIQUE INDEX hist_hid ON hist USING tides_btree (hid);
CREATE INDEX hist_aid ON hist (aid);
CREATE TABLE hist_heap (hid bigint PRIMARY KEY, aid int NOT NULL, delta int NOT NULL) USING heap;
CREATE TABLE acc_heap (aid int PRIMARY KEY, abal int NOT NULL) USING heap;
CREATE UNLOGGED TABLE ulog (id int) USING tides;
CREATE SEQUENCE hid_seq;
INSERT INTO acc SELECT g, 0 FROM generate_series(1, $rows) g;
INSERT INTO acc_heap SELECT g, 0 FROM generate_series(1, $rows) g;
});
	# pgbench's own tables, as tides tables (its tpcb-like script runs too)
	local $ENV{PGOPTIONS} = '-c default_table_access_method=tides';
	$node->command_ok([ 'pgbench', '-i', '-q', '-s', '1', 'postgres' ],
		'pgbench -i with default_table_access_method = tides');
	return;
}

# pgbench's -f arguments for scripts given as { "name\@weight" => text }, each
# written to a file of a new temporary directory
sub script_args
{
	my ($scripts) = @_;
	my $dir = PostgreSQL::Test::Utils::tempdir;
	my @f;
	for my $name (sort keys %$scripts)
	{
		(my $file = $name) =~ s/@.*//;
		open my $fh, '>', "$dir/$file.sql" or die "$dir/$file.sql: $!";
		print $fh $scripts->{$name};
		close $fh;
		push @f, '-f', "$dir/$file.sql" . ($name =~ /(@\d+)/)[0];
	}
	return @f;
}

# the pgbench scripts (name => text) for $rows accounts
sub workload_files
{
	my ($rows) = @_;
	$rows ||= 2000;
	return {
		'tides_move' => qq{
\\set aid random(1, $rows)
\\set delta random(-500, 500)
BEGIN;
UPDATE acc SET abal = abal + :delta WHERE aid = :aid;
INSERT INTO hist VALUES (nextval('hid_seq'), :aid, :delta);
INSERT INTO hist_heap VALUES (currval('hid_seq'), :aid, :delta);
UPDATE acc_heap SET abal = abal + :delta WHERE aid = :aid;
INSERT INTO ulog VALUES (:aid);
END;
},
		'tides_forget' => q{
\set hid random(1, 100000)
BEGIN;
SELECT coalesce(max(hid), 0) AS victim FROM hist_heap WHERE hid <= :hid \gset
DELETE FROM hist WHERE hid = :victim;
DELETE FROM hist_heap WHERE hid = :victim;
END;
},
	};
}

# the pgbench command line for the workload
sub _pgbench_cmd
{
	my ($node, $clients, $opt, $rows) = @_;
	my $dir = PostgreSQL::Test::Utils::tempdir;
	my $files = workload_files($rows);
	my @f;
	for my $name (sort keys %$files)
	{
		my $path = "$dir/$name.sql";
		open my $fh, '>', $path or die "$path: $!";
		print $fh $files->{$name};
		close $fh;
		push @f, '-f', $path . ($name eq 'tides_forget' ? '@1' : '@9');
	}
	return [
		'pgbench', '-n', '-c', $clients, '-j', 2, @$opt, @f, '-b', 'tpcb-like@3',
		'-h', $node->host, '-p', $node->port, 'postgres'
	];
}

sub _note_pgbench
{
	my ($text) = @_;
	my @l = grep { /^(number of transactions actually|number of failed|tps =)|error|abort/i } split /\n/, $text;
	note "pgbench: " . join(' | ', @l[0 .. ($#l < 5 ? $#l : 5)]);
	return;
}

# run the workload to the end; returns pgbench's exit code
sub run_load
{
	my ($node, $clients, $opt, $rows) = @_;
	my ($out, $err);
	my $cmd = _pgbench_cmd($node, $clients, $opt, $rows);
	my $ok = IPC::Run::run($cmd, '>', \$out, '2>', \$err);
	_note_pgbench($out . $err);
	return $ok ? 0 : 1;
}

# start the workload in the background; finish_load waits for it
sub start_load
{
	my ($node, $clients, $opt, $rows) = @_;
	my %h = (out => '', err => '');
	my $cmd = _pgbench_cmd($node, $clients, $opt, $rows);
	$h{h} = IPC::Run::start($cmd, '>', \$h{out}, '2>', \$h{err});
	return \%h;
}

sub finish_load
{
	my ($h, %p) = @_;
	my $ok;
	if ($p{kill})
	{
		$h->{h}->kill_kill;
		eval { $h->{h}->finish };
		return 0;
	}
	$ok = $h->{h}->finish;
	_note_pgbench($h->{out} . $h->{err});
	return $ok ? 0 : 1;
}

# one line that sums up every table of the workload, read in one snapshot
sub snapshot_sql
{
	return q{
SELECT concat_ws(' ',
  'acc', (SELECT count(*) || '/' || coalesce(sum(abal), 0) || '/' || coalesce(sum(aid::bigint * abal), 0) FROM acc),
  'acc_heap', (SELECT count(*) || '/' || coalesce(sum(abal), 0) || '/' || coalesce(sum(aid::bigint * abal), 0) FROM acc_heap),
  'hist', (SELECT count(*) || '/' || coalesce(sum(delta), 0) || '/' || coalesce(sum(hid), 0) FROM hist),
  'hist_heap', (SELECT count(*) || '/' || coalesce(sum(delta), 0) || '/' || coalesce(sum(hid), 0) FROM hist_heap),
  'pgbench', (SELECT sum(abalance) FROM pgbench_accounts) || '/' || (SELECT sum(tbalance) FROM pgbench_tellers)
    || '/' || (SELECT sum(bbalance) FROM pgbench_branches) || '/' || (SELECT coalesce(sum(delta), 0) FROM pgbench_history)
    || '/' || (SELECT count(*) FROM pgbench_history))
};
}

# the snapshot line of a node (REPEATABLE READ, so every table at one point)
sub state_of
{
	my ($node, $db) = @_;
	return $node->safe_psql($db || 'postgres',
		"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY;" . snapshot_sql() . ";COMMIT;");
}

# the tides half of a snapshot agrees with the heap half
sub check_mirror
{
	my ($node, $what) = @_;
	my $s = state_of($node);
	my ($acc, $accheap, $hist, $heap, $pgb) =
	  $s =~ m{^acc (\S+) acc_heap (\S+) hist (\S+) hist_heap (\S+) pgbench (\S+)$};
	ok(defined $pgb, "$what: snapshot read ($s)") or return;
	my @b = split m{/}, $pgb;
	ok($b[0] == $b[1] && $b[1] == $b[2] && $b[2] == $b[3],
		"$what: pgbench balances (tides) agree with its history ($pgb)");
	is($acc, $accheap, "$what: tides accounts = heap accounts (count/sum/weighted sum)");
	is($hist, $heap, "$what: tides history = heap history (count/sum/hids)");
	return $s;
}

# index scans (btree and tides_btree) agree with sequential scans
sub check_indexes
{
	my ($node, $what) = @_;
	my $q = q{
SELECT concat_ws(' ',
  (SELECT count(*) || '/' || coalesce(sum(delta), 0) FROM hist WHERE hid BETWEEN 100 AND 100000000),
  (SELECT count(*) || '/' || coalesce(sum(delta), 0) FROM hist WHERE aid BETWEEN 10 AND 900),
  (SELECT count(*) || '/' || coalesce(sum(aid), 0) FROM acc WHERE abal BETWEEN -300 AND 300),
  (SELECT count(*) || '/' || coalesce(sum(abal), 0) FROM acc WHERE aid BETWEEN 5 AND 1500))
};
	my $iscan = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_bitmapscan = off; BEGIN ISOLATION LEVEL REPEATABLE READ; $q; COMMIT;");
	my $bscan = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_indexscan = off; BEGIN ISOLATION LEVEL REPEATABLE READ; $q; COMMIT;");
	my $sscan = $node->safe_psql('postgres',
		"SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off; BEGIN ISOLATION LEVEL REPEATABLE READ; $q; COMMIT;");
	my $plan = $node->safe_psql('postgres',
		"SET enable_seqscan = off; SET enable_bitmapscan = off; EXPLAIN (COSTS OFF) SELECT * FROM hist WHERE hid BETWEEN 100 AND 200");
	like($plan, qr/Index Scan using hist_hid/, "$what: the tides_btree index is used");
	is($iscan, $sscan, "$what: index scans agree with sequential scans");
	is($bscan, $sscan, "$what: bitmap scans agree with sequential scans");
	return;
}

# tides_verify() and tides_verify_index() of every tides_btree index: clean
sub check_verify
{
	my ($node, $what, $db) = @_;
	my $v = $node->safe_psql($db || 'postgres', 'SELECT file || \': \' || problem FROM tides_verify()');
	is($v, '', "$what: tides_verify() clean");
	my $vi = $node->safe_psql($db || 'postgres', q{
SELECT c.relname || ': ' || p.problem
FROM pg_class c JOIN pg_am a ON a.oid = c.relam AND a.amname = 'tides_btree',
     LATERAL tides_verify_index(c.oid) p
WHERE c.relkind = 'i'});
	is($vi, '', "$what: tides_verify_index() clean for every tides_btree index");
	return;
}

1;
