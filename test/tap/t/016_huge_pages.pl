# 016_huge_pages.pl -- tides.transparent_huge_pages: the postmaster advises
# the engine's shared memory MADV_HUGEPAGE when it creates it
# (src/runtime/shmem.c), so the postmaster and every process forked from it
# map the region with the kernel's "hg" flag (VmFlags in /proc/PID/smaps);
# with the setting off no shared mapping carries it.  Whether the kernel
# then backs the region with 2 MB pages is the system's choice
# (/sys/kernel/mm/transparent_hugepage/shmem_enabled); the advice is what
# tidesam controls, and what is checked, along with the engine working on
# top of it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TidesTap;

# bytes of shared mappings of process $pid that carry the "hg" flag
sub advised_shared_bytes
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/smaps") or die "smaps of $pid: $!";
	my ($shared, $size, $total) = (0, 0, 0);
	while (my $line = <$fh>)
	{
		if ($line =~ /^[0-9a-f]+-[0-9a-f]+\s+(\S+)/)
		{
			$shared = substr($1, 3, 1) eq 's';
			$size = 0;
		}
		elsif ($line =~ /^Size:\s+(\d+) kB/)
		{
			$size = $1 * 1024;
		}
		elsif ($line =~ /^VmFlags:(.*)$/)
		{
			$total += $size if $shared && " $1 " =~ / hg /;
		}
	}
	close($fh);
	return $total;
}

my $node = tides_node('hugepages');
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION tidesam;
CREATE TABLE t (id int PRIMARY KEY, v text) USING tides;
INSERT INTO t SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g;
SELECT tides_flush();
});

is($node->safe_psql('postgres', 'SHOW tides.transparent_huge_pages'), 'on', 'on by default');
my $cache = $node->safe_psql('postgres',
	q{SELECT setting::bigint * 1024 * 1024 FROM pg_settings WHERE name = 'tides.block_cache_size'});
my $child = $node->safe_psql('postgres', q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'});
my $postmaster = $node->{_pid};
cmp_ok(advised_shared_bytes($postmaster), '>=', $cache,
	'the postmaster maps at least the block cache advised MADV_HUGEPAGE');
cmp_ok(advised_shared_bytes($child), '>=', $cache, 'a process forked from it inherits the advice');
is($node->safe_psql('postgres', 'SELECT count(*), sum(length(v)) FROM t WHERE id % 7 = 0'), '2857|285700',
	'rows read back through the advised memory');

$node->append_conf('postgresql.conf', "tides.transparent_huge_pages = off\n");
$node->restart;
is($node->safe_psql('postgres', 'SHOW tides.transparent_huge_pages'), 'off', 'turned off');
is(advised_shared_bytes($node->{_pid}), 0, 'off: no shared mapping of the postmaster carries the advice');
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), '20000', 'the rows survive the restart');

done_testing();
