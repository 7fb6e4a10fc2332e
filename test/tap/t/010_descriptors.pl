
# 010_descriptors.pl -- the engine's open files count against the
# descriptors PostgreSQL allows a backend (src/runtime/descriptors.c).
# A server with max_files_per_process = 64 (fd.c then keeps about 50 of
# its own files open at most) runs under a hard limit of 110 descriptors per
# process, set on the postmaster after start so every backend inherits it.
# 150 tides tables, each written in a file of its own, and 150 heap tables
# are read twice, interleaved, in one session: an engine holding its table
# files outside fd.c's count (64 of them, as before) would take the backend
# past the limit, and a read would fail with "Too many open files".  The
# counts must be right, and the server log must not mention EMFILE.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TidesTap;

my $ntables = 150;
my $node = tides_node('fds', extra => "max_files_per_process = 64\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION tidesam');

# each table's rows fill a good part of a 2 MB memtable: its flush places them in a file of the table's own
for my $i (1 .. $ntables)
{
	$node->safe_psql('postgres', qq{
CREATE TABLE t$i (id int, pad text) USING tides;
INSERT INTO t$i SELECT g, repeat('x', 200) FROM generate_series(1, 300 + $i) g;
CREATE TABLE h$i (id int, pad text);
INSERT INTO h$i SELECT g, 'h' FROM generate_series(1, $i) g;
});
}
$node->safe_psql('postgres', 'SELECT tides_flush()');
my $files = $node->safe_psql('postgres',
	q{SELECT count(*) FROM pg_ls_dir('pg_tides') f WHERE f LIKE '%.sst'});
cmp_ok($files, '>=', $ntables, "at least $ntables table files ($files)");

my $pid = $node->{_pid};
my ($stdout, $stderr);
IPC::Run::run([ 'prlimit', '--pid', $pid, '--nofile=110:110' ], '>', \$stdout, '2>', \$stderr)
  or die "prlimit failed: $stderr";

my $sql = '';
for my $round (1 .. 2)
{
	for my $i (1 .. $ntables)
	{
		$sql .= "SELECT 't', $i, count(*), sum(length(pad)) FROM t$i;\n";
		$sql .= "SELECT 'h', $i, count(*) FROM h$i;\n";
	}
}
my ($ret, $out, $err) = $node->psql('postgres', $sql);
is($ret, 0, 'one session reads every table twice under a 110-descriptor limit');
unlike($err, qr/open files/i, 'no read ran out of descriptors');
my $bad = 0;
for my $line (split /\n/, $out)
{
	my @f = split /\|/, $line;
	my $want = $f[0] eq 't' ? 300 + $f[1] : $f[1];
	$bad++ if $f[2] != $want || ($f[0] eq 't' && $f[3] != 200 * $want);
}
is(scalar(split /\n/, $out), 4 * $ntables, 'every read returned a row');
is($bad, 0, 'every table has its rows');
unlike(slurp_file($node->logfile), qr/Too many open files/, 'the server log has no EMFILE');

$node->stop;
done_testing();
