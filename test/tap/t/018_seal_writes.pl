# 018_seal_writes.pl -- engine writes per transaction with tides.wal = off:
# rows that wait for the commit go with the transaction's seal, in one
# engine write (tides_stats()'s `writes`), and a crash keeps exactly the
# committed ones.
#
# A row of a table without indexes is staged (src/am/bulk.c) and, at commit,
# handed to the sealing batch (spill at commit); a row of a table with only
# non-unique tides_btree indexes waits with its entries (src/runtime/xact.c,
# "Deferred rows").  So a one-row INSERT writes once, a transaction of
# several INSERTs into one such table once, and one into two such tables
# twice (one table's rows wait at a time); a unique tides_btree index's entry
# is written with its row before the seal (two), as is a serializable
# transaction's row (two); a rollback writes only the aborted tag's seal.
# Nothing else writes to the engine meanwhile: autovacuum is off, and the
# warm-up rows made the first write after the start and each table's and
# index's first (which registers its tree).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TidesTap;

my $node = tides_node('seal_writes', wal => 0, extra => "autovacuum = off\n");
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION tidesam;
CREATE FUNCTION writes() RETURNS bigint LANGUAGE sql
  AS $$ SELECT value FROM tides_stats() WHERE name = 'writes' $$;
CREATE TABLE t0 (id int, v text) USING tides;
CREATE TABLE t1 (id int, v text) USING tides;
CREATE TABLE tb (id int, v text) USING tides;
CREATE INDEX tb_id ON tb USING tides_btree (id);
CREATE TABLE tp (id int NOT NULL, v text) USING tides;
CREATE UNIQUE INDEX tp_id ON tp USING tides_btree (id);
-- a table's or index's first write also registers its tree: done here
INSERT INTO t0 VALUES (0, 'warm-up');
INSERT INTO t1 VALUES (0, 'warm-up');
INSERT INTO tb VALUES (0, 'warm-up');
INSERT INTO tp VALUES (0, 'warm-up');
});

# engine writes made by $sql, run in one session after a mark
sub writes_of
{
	my ($sql) = @_;
	return $node->safe_psql('postgres', "SELECT writes() AS w0 \\gset\n$sql\nSELECT writes() - :w0;");
}

is(writes_of(q{INSERT INTO t0 VALUES (1, 'one row');}),
	1, 'a one-row INSERT into a table without indexes: one write (the row with the seal)');
is(writes_of(q{BEGIN;
INSERT INTO t0 VALUES (2, 'first');
INSERT INTO t0 VALUES (3, 'second');
INSERT INTO t0 SELECT g, 'more' FROM generate_series(4, 10) g;
COMMIT;}),
	1, 'three INSERTs into that table in one transaction: one write');
is(writes_of(q{BEGIN;
INSERT INTO t0 VALUES (11, 'both tables');
INSERT INTO t1 VALUES (11, 'both tables');
COMMIT;}),
	2, 'rows of two such tables: two writes (one table\'s rows go with the seal)');
is(writes_of(q{BEGIN;
INSERT INTO t0 VALUES (12, 'rolled back');
ROLLBACK;}),
	1, 'a rollback writes only the aborted transaction\'s seal');
is(writes_of(q{INSERT INTO tb VALUES (1, 'indexed');}),
	1, 'a one-row INSERT into a table with a non-unique tides_btree index: one write');
is(writes_of(q{INSERT INTO tp VALUES (1, 'keyed');}),
	2, 'a one-row INSERT under a unique tides_btree index: the row with its key entry, then the seal');
is(writes_of(q{BEGIN ISOLATION LEVEL SERIALIZABLE;
INSERT INTO t0 VALUES (13, 'serializable');
COMMIT;}),
	2, 'a serializable transaction\'s row is written before the seal');

# a crash keeps every committed row and nothing of the rolled-back one
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*), sum(id) FROM t0'),
	'13|79', 't0 after the crash: the committed rows (0-11, 13), not the rolled-back 12');
is($node->safe_psql('postgres', 'SELECT count(*), sum(id) FROM t1'), '2|11', 't1 after the crash');
is($node->safe_psql('postgres', q{SET enable_seqscan = off; SELECT v FROM tb WHERE id = 1}),
	'indexed', 'tb\'s row through its index after the crash');
is($node->safe_psql('postgres', q{SET enable_seqscan = off; SELECT v FROM tp WHERE id = 1}),
	'keyed', 'tp\'s row through its key after the crash');
is($node->safe_psql('postgres', 'SELECT count(*) FROM tides_verify()'), '0', 'tides_verify() is clean');

$node->stop;
done_testing();
