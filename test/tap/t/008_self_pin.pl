
# 008_self_pin.pl -- statements that write while they walk tides data, with
# memtables small enough (TidesTap's 2 MB x 3) that the walk's own engine
# iterator can pin every memtable but the one being written.  The write
# then waits for a free memtable that only the walk's next step would give
# back; the wait repins the walk in place (trt_repin_iters,
# tides_iter_repin).  Before that, CREATE INDEX ... USING tides_btree over
# 80,000 rows waited forever, and with tides.wal = on every checkpoint
# behind it.  Each statement runs under a statement_timeout, so a hang
# fails the test instead of the run; the results are checked against heap.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TidesTap;

my $node = tides_node('selfpin', extra => "autovacuum = off\nstatement_timeout = '180s'\n");
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION tidesam;
CREATE TABLE src (id int, t text) USING tides;
CREATE TABLE ref (id int, t text) USING heap;
INSERT INTO src SELECT g, md5(g::text) || md5((g + 1)::text) FROM generate_series(1, 80000) g;
INSERT INTO ref SELECT * FROM src;
});

my $sums = q{SELECT count(*) || '/' || sum(id) || '/' || sum(length(t))};

# CREATE INDEX: the table scan's callback writes the entries in 1 MB batches
my ($rc, $out, $err) = $node->psql('postgres', q{
CREATE INDEX src_t ON src USING tides_btree (t);
CREATE INDEX src_id_t ON src USING tides_btree (id, t);
});
is($rc, 0, 'CREATE INDEX USING tides_btree over 80,000 rows completes') or note $err;
is($node->safe_psql('postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM src WHERE t > ''}), '80000', 'the index holds every row');
is($node->safe_psql('postgres', q{
SELECT count(*) FROM tides_verify_index('src_t')}) . '/' .
   $node->safe_psql('postgres', q{SELECT count(*) FROM tides_verify_index('src_id_t')}),
	'0/0', 'tides_verify_index() clean for both indexes');

# INSERT ... SELECT between tides tables: a scan of one, writes to the other
($rc, $out, $err) = $node->psql('postgres', q{
CREATE TABLE dst (id int, t text) USING tides;
INSERT INTO dst SELECT * FROM src;
INSERT INTO dst SELECT id + 80000, t FROM src;
});
is($rc, 0, 'INSERT ... SELECT from a tides table into another completes') or note $err;
is($node->safe_psql('postgres', "$sums FROM dst"),
	$node->safe_psql('postgres', "$sums FROM (SELECT * FROM ref UNION ALL SELECT id + 80000, t FROM ref) r"),
	'dst holds both copies');

# an UPDATE of every row, driven by a sequential scan of the same table
($rc, $out, $err) = $node->psql('postgres', q{
UPDATE src SET t = t || 'x';
UPDATE ref SET t = t || 'x';
});
is($rc, 0, 'UPDATE of every row of an indexed tides table completes') or note $err;
is($node->safe_psql('postgres', "$sums FROM src"), $node->safe_psql('postgres', "$sums FROM ref"),
	'src = ref after the update');
is($node->safe_psql('postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM src WHERE t LIKE '%x'}), '80000', 'the index finds every updated row');

# nothing left stuck: a checkpoint completes (the guards flush behind it)
($rc, $out, $err) = $node->psql('postgres', 'CHECKPOINT');
is($rc, 0, 'a checkpoint completes after them') or note $err;
is($node->safe_psql('postgres', 'SELECT count(*) FROM tides_verify()'), '0', 'tides_verify() clean');

$node->stop;
done_testing();
