# 017_idle_memtables.pl -- tides.memtable_discard_after: memtables that stay
# free give their shared memory back to the system (src/engine/db/maint.c,
# "Idle memtables"), on a running server, and a configuration reload
# reaches the maintenance worker that does it.
#
# Six memtables of 4 MB, four merged per flush, so that a load goes through
# at least five of them.  With the setting 0, none is discarded however
# long they stay free; reloaded to 200ms, all free ones but the one kept
# ready are, and the flush worker -- which read every one of them -- maps
# that much less shared memory (RssShmem: the pages are gone for every
# process).  A second load goes through the discarded ones again, every row
# reads back, and after a reload to 0 nothing more is discarded.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use TidesTap;

my $node = tides_node('idle_memtables', extra => <<'EOC');
tides.memtable_size = 4MB
tides.memtable_count = 6
tides.memtables_per_flush = 4
tides.memtable_discard_after = 0
EOC
$node->start;

sub stat_of
{
	my ($name) = @_;
	return $node->safe_psql('postgres', "SELECT value FROM tides_stats() WHERE name = '$name'");
}

sub reload_discard_after
{
	my ($value) = @_;
	$node->safe_psql('postgres', "ALTER SYSTEM SET tides.memtable_discard_after = '$value'");
	$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
	# every worker reloads when it next wakes, and the reload wakes it
	usleep(1_500_000);
}

# resident shared memory of the flush worker, in kB
sub flush_worker_rss_shmem
{
	my $pid = $node->safe_psql('postgres',
		q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'tides flush'});
	open(my $fh, '<', "/proc/$pid/status") or die "status of $pid: $!";
	my ($kb) = map { /^RssShmem:\s+(\d+) kB/ ? $1 : () } <$fh>;
	close($fh);
	return $kb;
}

sub load
{
	my ($from) = @_;
	$node->safe_psql('postgres', qq{
INSERT INTO t SELECT g, repeat(md5(g::text), 30) FROM generate_series($from, $from + 24999) g;
SELECT tides_flush();
});
}

$node->safe_psql('postgres', q{
CREATE EXTENSION tidesam;
CREATE TABLE t (id int, v text) USING tides;
});
load(1);
usleep(1_500_000);
is(stat_of('memtables_discarded'), '0', '0: no memtable discarded after a load');
is(stat_of('memtable_discards'), '0', '0: none ever was');
my $rss_before = flush_worker_rss_shmem();

reload_discard_after('200ms');
my $discarded;
for (my $i = 0; $i < 100; $i++)
{
	$discarded = stat_of('memtables_discarded');
	last if $discarded >= 4;
	usleep(200_000);
}
is($discarded, '4', 'reloaded to 200ms: every free memtable but the one kept ready is discarded');
my $rss_after = flush_worker_rss_shmem();
cmp_ok($rss_before - $rss_after, '>=', 8 * 1024,
	"the flush worker maps at least 8 MB less shared memory ($rss_before kB -> $rss_after kB)");

load(25001);
is($node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id), sum(length(v)) FROM t'),
	'50000|50000|48000000', 'rows written through discarded memtables read back');

reload_discard_after('0');
my $discards = stat_of('memtable_discards');
load(50001);
usleep(1_500_000);
is(stat_of('memtable_discards'), $discards, 'reloaded to 0: no more discards');
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'), '75000', 'and the rows are there');

$node->restart;
is($node->safe_psql('postgres', 'SELECT count(*), sum(length(v)) FROM t'), '75000|72000000',
	'after a restart too');

done_testing();
