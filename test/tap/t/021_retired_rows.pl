
# 021_retired_rows.pl -- VACUUM retires the run of dead versions at a
# table's low end (src/runtime/low_marks.c): one mark instead of a deletion
# per version and per index entry, flush and compaction drop what lies
# below it, scans step over it, and no block with a retired row id is
# marked all-visible.  docs/durability.md, D9.
#
#   queue     clients append to a queue and take its oldest rows while
#             another vacuums over and over; index-only, bitmap and index
#             counts agree with a sequential scan in every snapshot; the
#             mark moves up and compaction drops retired keys.
#   standby   a streaming standby replays the marks: the same rows by every
#             path, and its own flushes drop the retired keys too.
#   crash     with the WAL writer stopped, rows are deleted by asynchronous
#             commits and retired by VACUUM (which flushes the WAL before it
#             judges them), their keys compacted away, and the WAL writer is
#             killed (a crash restart that loses the WAL buffers): the rows
#             stay deleted, every path agrees, the next
#             VACUUM starts at the mark, and new rows get row ids above it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TidesTap;

sub filtered
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		q{SELECT value FROM tides_stats() WHERE name = 'filtered_dropped'});
}

# "N retired below row id M" of a VACUUM VERBOSE of q
sub vacuum_retired
{
	my ($node) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', 'VACUUM (VERBOSE, PROCESS_TOAST false) q');
	die "VACUUM failed: $err" if $ret != 0;
	$err =~ /(\d+) retired below row id (\d+).*blocks: (\d+) scanned/s
	  or die "no retirement in: $err";
	return ($1, $2, $3);
}

my $counts = q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) || '/' || coalesce(sum(id), 0) FROM q WHERE id > 0;
SELECT count(*) || '/' || coalesce(sum(k), 0) FROM q WHERE k >= 0;
RESET enable_seqscan; RESET enable_bitmapscan;
SET enable_indexscan = off; SET enable_indexonlyscan = off;
SELECT count(*) || '/' || coalesce(sum(id), 0) FROM q;
};

sub same_counts
{
	my ($node, $what) = @_;
	my @c = split /\n/, $node->safe_psql('postgres', $counts);
	my ($n, $s) = split m{/}, $c[2];
	is(scalar(@c), 3, "$what: three counts");
	is($c[0], $c[2], "$what: the id index finds what the sequential scan does ($c[2])");
	my ($kn) = split m{/}, $c[1];
	is($kn, $n, "$what: and so does the k index");
	return $c[2];
}

my $primary = tides_node('retire_primary',
	extra => "autovacuum = off\ncheckpoint_timeout = 1h\nrestart_after_crash = on\n");
$primary->start;
$primary->safe_psql('postgres', q{
CREATE EXTENSION tidesam;
CREATE TABLE q (id bigserial, k int, pad text) USING tides;
CREATE UNIQUE INDEX q_id ON q USING tides_btree (id);
CREATE INDEX q_k ON q USING tides_btree (k);
INSERT INTO q (k, pad) SELECT g % 1000, repeat('x', 40) FROM generate_series(1, 20000) g;
});
$primary->backup('bk', backup_options => [ '-X', 'stream' ]);
my $standby = from_backup($primary, 'bk', 'retire_standby', has_streaming => 1);
$standby->start;

# ---- the queue, under load
my %scripts = (
	'append@4' => q{
INSERT INTO q (k, pad) SELECT (random() * 999)::int, 'new' FROM generate_series(1, 5);
},
	'take@4' => q{
DELETE FROM q WHERE id IN (SELECT id FROM q ORDER BY id LIMIT 5);
},
	'vacuum@1' => q{
VACUUM q;
},
	'check@2' => q{
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SET LOCAL enable_indexscan = off;
SELECT count(*) AS ios_n, coalesce(sum(k), 0) AS ios_sum FROM q WHERE k >= 0 \gset
SET LOCAL enable_indexonlyscan = off;
SET LOCAL enable_indexscan = on;
SELECT count(*) AS ix_n, coalesce(sum(k), 0) AS ix_sum FROM q WHERE id > 0 \gset
SET LOCAL enable_indexscan = off;
SET LOCAL enable_bitmapscan = on;
SELECT count(*) AS bm_n FROM q WHERE k >= 0 \gset
SET LOCAL enable_bitmapscan = off;
SET LOCAL enable_seqscan = on;
SELECT count(*) AS seq_n, coalesce(sum(k), 0) AS seq_sum FROM q \gset
SELECT CASE WHEN :ios_n = :seq_n AND :ios_sum = :seq_sum AND :bm_n = :seq_n
             AND :ix_n = :seq_n AND :ix_sum = :seq_sum THEN 1
            ELSE 1 / (0 * length('index-only ' || :ios_n || '/' || :ios_sum || ' index ' || :ix_n ||
                                 ' bitmap ' || :bm_n || ' seq ' || :seq_n || '/' || :seq_sum)) END;
COMMIT;
},);
my @f = script_args(\%scripts);
my $f0 = filtered($primary);
my ($out, $err);
my $ok = IPC::Run::run(
	[ 'pgbench', '-n', '-c', 6, '-j', 2, '-T', 20, @f, '-h', $primary->host, '-p', $primary->port,
		'postgres' ],
	'>', \$out, '2>', \$err);
ok($ok, 'queue: every scan path agrees with the sequential scan while VACUUM retires beside writers')
  or note $out . $err;
note "pgbench: " . join(' | ', grep { /actually processed|failed|tps/ } split /\n/, $out);
# the rows were taken in id order, and the first 20,000 have row ids id - 1
my $first = $primary->safe_psql('postgres', 'SELECT min(id) FROM q');
my ($n, $mark) = vacuum_retired($primary);
cmp_ok($mark, '>=', ($first > 20001 ? 20000 : $first - 1),
	"queue: the mark is past every row taken (oldest id left $first, row id $mark)");
cmp_ok($mark, '>', 1000, 'queue: the clients took rows');
$primary->safe_psql('postgres', 'SELECT tides_flush(); SELECT tides_compact();');
my $f1 = filtered($primary);
cmp_ok($f1 - $f0, '>=', $mark,
	"queue: flush and compaction dropped a key of every retired row at least ($f0 -> $f1)");
my $state = same_counts($primary, 'queue, after');
is($primary->safe_psql('postgres', q{SELECT count(*) FROM tides_verify_index('q_id')}), '0',
	'queue: tides_verify_index(q_id) is clean');
is($primary->safe_psql('postgres', q{SELECT count(*) FROM tides_verify_index('q_k')}), '0',
	'queue: tides_verify_index(q_k) is clean');

# ---- the standby
my $lsn = $primary->lsn('insert');
$standby->poll_query_until('postgres', "SELECT pg_last_wal_replay_lsn() >= '$lsn'")
  or die 'standby did not catch up';
is(same_counts($standby, 'standby'), $state, 'standby: the same rows as the primary');
my $sf0 = filtered($standby);
# a checkpoint on the primary makes the standby flush its memtables (checkpoint.c)
$primary->safe_psql('postgres', 'CHECKPOINT');
$standby->poll_query_until('postgres',
	qq{SELECT value > $sf0 FROM tides_stats() WHERE name = 'filtered_dropped'})
  or fail('standby: its flush dropped no retired key');
pass('standby: its flush dropped retired keys (the marks were replayed)');
$standby->stop;

# ---- a crash after retiring rows deleted by asynchronous commits
my $walwriter = $primary->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'walwriter'});
ok($walwriter =~ /^\d+$/, "crash: the WAL writer's pid");
my $before = $primary->safe_psql('postgres', 'SELECT min(id) FROM q');
kill 'STOP', $walwriter;
$primary->safe_psql('postgres', q{
SET synchronous_commit = off;
DELETE FROM q WHERE id IN (SELECT id FROM q ORDER BY id LIMIT 3000);
});
my ($n2, $mark2) = vacuum_retired($primary);
cmp_ok($mark2, '>', $mark, "crash: VACUUM retired the rows the asynchronous DELETE took ($n2, row id $mark2)");
$primary->safe_psql('postgres', 'SELECT tides_flush(); SELECT tides_compact();');
my $after = same_counts($primary, 'crash, before the kill');
# a kill -9 of the stopped WAL writer: PostgreSQL restarts every process and
# what the WAL buffers held is lost -- but VACUUM flushed the DELETE's commit
kill('KILL', $walwriter) == 1 or die "could not kill the WAL writer $walwriter: $!";
$primary->poll_query_until('postgres', 'SELECT true') or die 'no restart after the crash';
is(same_counts($primary, 'crash, after the restart'), $after,
	'crash: after kill -9 the same rows, the taken ones still gone');
cmp_ok($primary->safe_psql('postgres', 'SELECT min(id) FROM q'), '>', $before + 2999,
	'crash: the oldest rows left are those after the DELETE');
is($primary->safe_psql('postgres', q{SELECT count(*) FROM tides_verify_index('q_id')}), '0',
	'crash: tides_verify_index(q_id) is clean');
$primary->safe_psql('postgres', q{
DELETE FROM q WHERE id IN (SELECT id FROM q ORDER BY id LIMIT 100);
INSERT INTO q (k, pad) VALUES (1, 'after the crash');
});
my ($n3, $mark3, $blocks) = vacuum_retired($primary);
cmp_ok($mark3, '>', $mark2, "crash: the next VACUUM starts at the mark and retires from there ($n3, row id $mark3)");
is($primary->safe_psql('postgres', q{
SET enable_seqscan = off; SELECT count(*) FROM q WHERE id > 0 AND pad = 'after the crash'}), '1',
	'crash: a row inserted after the crash is found by its index');
same_counts($primary, 'crash, at the end');

done_testing();
