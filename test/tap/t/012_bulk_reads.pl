
# 012_bulk_reads.pl -- a sequential scan of a table larger than a quarter
# of the block cache (and an index build's scan of it) leaves the cache as
# it was: blocks it reads from files are not added (src/am/scan.c,
# scan_is_bulk), as heap's scans of such tables cycle through a small ring
# of buffers; and a helper thread reads and decodes most of them ahead of
# the scan (blocks_fetched: src/engine/table/block_fetch.h).  With an 8 MB cache and no compression, a table of ~4.5 MB in
# files -- more than a quarter of the cache, less than all of it -- is read
# from the files again by a second scan (without bulk reads the second scan
# hit the cache: checked), while a small table's second scan finds its
# blocks in the cache.  Counts must be right either way.  Then an index
# build of ~6 MB of entries through the memtables (below
# tides.bulk_load_threshold) with the 2 MB memtables of these tests: its
# batches must fit a memtable (trt_batch_limit; with 1 MB batches it failed
# with "write batch ... exceeds a memtable"), as must a transaction's
# deferred index entries (the same error at 1 MB).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TidesTap;

my $node = tides_node('bulkreads',
	extra => "tides.compression = none\ntides.bottommost_compression = none\n");
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION tidesam;
CREATE TABLE big (id int, pad text) USING tides;
INSERT INTO big SELECT g, md5(g::text) || md5((g + 1)::text) || md5((g + 2)::text) FROM generate_series(1, 35000) g;
CREATE TABLE small (id int, pad text) USING tides;
INSERT INTO small SELECT g, md5(g::text) FROM generate_series(1, 2000) g;
SELECT tides_flush();
SELECT tides_compact();
});
# an empty cache
$node->restart;

sub tides_stat
{
	my ($name) = @_;
	return $node->safe_psql('postgres',
		"SELECT value FROM tides_stats() WHERE name = '$name'");
}

# the blocks read from files by running $sql (cache misses, and blocks a
# helper fetched ahead of a bulk read without looking in the cache), the
# fetched ones among them, and its result
sub run_counted
{
	my ($sql) = @_;
	my ($m, $f) = (tides_stat('cache_misses'), tides_stat('blocks_fetched'));
	my $out = $node->safe_psql('postgres', $sql);
	my $fetched = tides_stat('blocks_fetched') - $f;
	return (tides_stat('cache_misses') - $m + $fetched, $out, $fetched);
}

my ($big1, $n1, $f1) = run_counted('SELECT count(*) FROM big');
my ($big2, $n2) = run_counted('SELECT count(*) FROM big');
is($n1, '35000', 'first bulk scan counts every row');
is($n2, '35000', 'second bulk scan counts every row');
cmp_ok($big1, '>', 100, "a bulk scan reads its blocks from files ($big1 blocks)");
cmp_ok($f1, '>=', $big1 * 0.8,
	"most of them read and decoded ahead by a helper thread ($f1 blocks)");
cmp_ok($big2, '>=', $big1 * 0.9, "and so does the next one: nothing was cached ($big2 blocks)");

# with tides.bulk_read_helper off the scan reads every block itself
my $f0 = tides_stat('blocks_fetched');
is($node->safe_psql('postgres', 'SET tides.bulk_read_helper = off; SELECT count(*) FROM big'),
	'35000', 'a bulk scan without helpers counts every row');
is(tides_stat('blocks_fetched'), $f0, 'and no block was fetched ahead of it');

# a bulk scan cancelled while its helpers read ahead: the session goes on
my ($rc, $out, $err) = $node->psql('postgres', q{
SET statement_timeout = '300ms';
SELECT count(pg_sleep(0.0002)) FROM big;
RESET statement_timeout;
SELECT count(*) FROM big;
}, on_error_stop => 0);
like($err, qr/canceling statement due to statement timeout/, 'a bulk scan is cancelled mid-way');
is($out, '35000', 'and the session scans the table again, whole');

my ($small1, $s1) = run_counted('SELECT count(*) FROM small');
my ($small2, $s2) = run_counted('SELECT count(*) FROM small');
is($s2, '2000', 'small table counted');
cmp_ok($small1, '>', 0, "a small table's first scan misses ($small1)");
cmp_ok($small2, '<=', $small1 / 10, "its second scan hits the cache ($small2 misses)");

# an index build's scan of the big table is a bulk read too
my ($ix1) = run_counted('CREATE INDEX big_id ON big USING tides_btree (id)');
my ($ix2) = run_counted('REINDEX INDEX big_id');
cmp_ok($ix2, '>=', $big1 * 0.9, "an index build's scan leaves the cache as it was ($ix1, $ix2 blocks)");
is($node->safe_psql('postgres', 'SELECT count(*) FROM tides_verify_index(\'big_id\')'), '0',
	'the index built in bulk is whole');
is($node->safe_psql('postgres',
	'SET enable_seqscan = off; SELECT count(*) FROM big WHERE id > 0'), '35000',
	'and counts every row');

# an index build through the memtables, in batches that fit them; and a
# transaction whose index entries wait in the backend (deferred, every index
# a tides_btree one) past a memtable's eighth
$node->safe_psql('postgres', q{
CREATE TABLE many (id int) USING tides;
INSERT INTO many SELECT g FROM generate_series(1, 200000) g;
CREATE INDEX many_id ON many USING tides_btree (id);
CREATE TABLE twice (id int, v int) USING tides;
CREATE INDEX twice_id ON twice USING tides_btree (id);
CREATE INDEX twice_v ON twice USING tides_btree (v);
BEGIN;
INSERT INTO twice SELECT g, g FROM generate_series(1, 200000) g;
COMMIT;
});
is($node->safe_psql('postgres', 'SELECT count(*) FROM twice'), '200000',
	'a transaction deferring 200,000 rows of index entries through 2 MB memtables commits');
is($node->safe_psql('postgres', 'SELECT count(*) FROM tides_verify_index(\'many_id\')'), '0',
	'an index built through 2 MB memtables is whole');
is($node->safe_psql('postgres',
	'SET enable_seqscan = off; SELECT count(*) FROM many WHERE id > 0'), '200000',
	'and counts every row');

$node->stop;
done_testing();
