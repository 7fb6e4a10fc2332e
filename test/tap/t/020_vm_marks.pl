# 020_vm_marks.pl -- VACUUM sets a block's visibility-map bit only when every
# version in it is visible to all, and a change after its judgement must
# keep the bit clear (src/am/vm.c).  VACUUM either reads the block again
# under the map page's lock or, when the engine proves nothing was written to
# the block since its scan read it, trusts the scan
# (tides_range_changed_since; counted in tides_stats() as ranges_unchanged
# and ranges_changed).  And an index-only or bitmap scan whose engine view
# still shows entries VACUUM deleted must not meet the bit VACUUM set after
# removing their rows (src/runtime/held_views.c).  A wrong bit makes such a
# scan count a version that is gone: so clients insert, update (moving the
# indexed column), delete and roll back while another runs VACUUM over and
# over, and index-only and bitmap counts are compared with a sequential scan
# in the same snapshot.  Both of VACUUM's ways must have been taken.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TidesTap;

my $node = tides_node('vm_marks', extra => "autovacuum = off\n");
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION tidesam;
CREATE TABLE vm (id int, k int, pad text) USING tides;
CREATE UNIQUE INDEX vm_id ON vm USING tides_btree (id);
CREATE INDEX vm_k ON vm USING tides_btree (k);
INSERT INTO vm SELECT g, g, repeat('x', 20) FROM generate_series(1, 20000) g;
CREATE SEQUENCE vm_next START 20001;
VACUUM vm;
});

my %scripts = (
	'move@5' => q{
\set id random(1, 30000)
UPDATE vm SET k = k + 100000 WHERE id = :id;
},
	'insert@3' => q{
INSERT INTO vm VALUES (nextval('vm_next'), currval('vm_next'), 'new');
},
	'delete@2' => q{
\set id random(1, 30000)
DELETE FROM vm WHERE id = :id;
},
	'rollback@1' => q{
\set id random(1, 30000)
BEGIN;
UPDATE vm SET k = -k WHERE id = :id;
INSERT INTO vm VALUES (-:id, -1, 'aborted');
ROLLBACK;
},
	'vacuum@1' => q{
VACUUM vm;
},
	'check@2' => q{
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SET LOCAL enable_indexscan = off;
SELECT count(*) AS ios_n, coalesce(sum(k), 0) AS ios_sum FROM vm WHERE k > -1000000 \gset
SET LOCAL enable_indexonlyscan = off;
SET LOCAL enable_bitmapscan = on;
SELECT count(*) AS bm_n FROM vm WHERE k > -1000000 \gset
SET LOCAL enable_bitmapscan = off;
SET LOCAL enable_seqscan = on;
SELECT count(*) AS seq_n, coalesce(sum(k), 0) AS seq_sum FROM vm \gset
SELECT CASE WHEN :ios_n = :seq_n AND :ios_sum = :seq_sum AND :bm_n = :seq_n THEN 1
            ELSE 1 / (0 * length('index-only ' || :ios_n || '/' || :ios_sum || ' bitmap ' || :bm_n ||
                                 ' seq ' || :seq_n || '/' || :seq_sum)) END;
COMMIT;
},);
my @f = script_args(\%scripts);

my $plan = $node->safe_psql('postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(k) FROM vm WHERE k > -1000000});
like($plan, qr/Index Only Scan/, 'the check reads vm_k by index-only scan');

my $before = $node->safe_psql('postgres', q{
SELECT string_agg(value::text, '/' ORDER BY name) FROM tides_stats() WHERE name LIKE 'ranges%'});
my ($out, $err);
my $ok = IPC::Run::run(
	[ 'pgbench', '-n', '-c', 6, '-j', 2, '-T', 25, @f, '-h', $node->host, '-p', $node->port, 'postgres' ],
	'>', \$out, '2>', \$err);
ok($ok, 'pgbench: index-only and bitmap counts agree with sequential scans while VACUUM runs beside writers')
  or note $out . $err;
note "pgbench: " . join(' | ', grep { /actually processed|failed|tps/ } split /\n/, $out);

# settled: everything visible to all, the bits set by the last VACUUM
$node->safe_psql('postgres', 'VACUUM vm');
my $after = $node->safe_psql('postgres', q{
SELECT string_agg(value::text, '/' ORDER BY name) FROM tides_stats() WHERE name LIKE 'ranges%'});
my ($c0, $u0) = split m{/}, $before;
my ($c1, $u1) = split m{/}, $after;
cmp_ok($u1 - $u0, '>', 0, "VACUUM trusted its scan for blocks nothing was written to ($u0 -> $u1)");
cmp_ok($c1 - $c0, '>', 0, "and read blocks written to since again ($c0 -> $c1)");

my $same = q{
SELECT count(*) || '/' || coalesce(sum(k), 0) FROM vm};
my $seq = $node->safe_psql('postgres',
	"SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;" . $same);
my $ios = $node->safe_psql('postgres',
	"SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexscan = off;" . $same
	  . " WHERE k > -1000000");
is($ios, $seq, 'after the run: the index-only scan agrees with the sequential scan');
is($node->safe_psql('postgres', q{SELECT relallvisible > 0 FROM pg_class WHERE relname = 'vm'}),
	't', 'and VACUUM left blocks all-visible');

done_testing();
