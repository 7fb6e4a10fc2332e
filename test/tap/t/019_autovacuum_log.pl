# 019_autovacuum_log.pl -- log_autovacuum_min_duration reports autovacuum's
# visits to tides tables (src/am/vacuum.c, report_vacuum), as heap's
# autovacuum reports its own: a DBA reading the server log sees which tables
# were vacuumed, what went and what it cost.
#
# A table with a unique and a non-unique tides_btree index loses half of its
# 2,000 rows in one statement; autovacuum (naptime 1 s) removes them, and its
# LOG line names the table and says 1,000 tuples removed with their entries
# deleted by key in both indexes (none retired: the first row lives), 1,000 remaining, the removable cutoff, and
# at least 3,000 engine entries written (per row: its version and its two
# index entries).  With log_autovacuum_min_duration = -1 after a reload, a
# second round of deletions is vacuumed without a line.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TidesTap;

my $node = tides_node('autovacuum_log', extra => <<'EOC');
autovacuum_naptime = 1s
log_autovacuum_min_duration = 0
EOC
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION tidesam;
CREATE TABLE av (id int NOT NULL, v text) USING tides;
CREATE UNIQUE INDEX av_id ON av USING tides_btree (id);
CREATE INDEX av_v ON av USING tides_btree (v);
INSERT INTO av SELECT g, md5(g::text) FROM generate_series(1, 2000) g;
});

# the dead rows' vacuum: the first visit may come before the DELETE (the
# insertions alone pass autovacuum_vacuum_insert_threshold)
my $offset = -s $node->logfile;
$node->safe_psql('postgres', 'DELETE FROM av WHERE id % 2 = 0');
$node->wait_for_log(qr/automatic vacuum of table "postgres\.public\.av": index passes: \d+\n[^\n]*\n\s*tuples: 1000 removed/,
	$offset);
my $log = slurp_file($node->logfile, $offset);
my ($report) = $log =~ /(automatic vacuum of table "postgres\.public\.av"(?:(?!automatic vacuum).)*?tuples: 1000 removed.*?system usage: [^\n]*)/s;
ok(defined $report, 'the autovacuum of av is logged') or diag($log);
$report //= '';
like($report,
	qr/tuples: 1000 removed \(0 retired below row id 0, 1000 with their entries deleted by key in 2 of 2 indexes\), 1000 remain, 0 are dead but not yet removable/,
	'the line counts the tuples removed, none retired (the lowest row lives), their index entries and the tuples left');
like($report, qr/removable cutoff: \d+, which was \d+ XIDs old/, 'the line gives the removable cutoff');
my ($entries) = $report =~ /engine writes: (\d+) entries/;
ok(defined $entries && $entries >= 3000, "the engine writes: a version and two index entries per row (" .
	($entries // 'none') . ")");
like($report, qr/system usage: CPU: /, 'the line gives the resources used');
is($node->safe_psql('postgres', 'SELECT count(*) FROM av'), '1000', 'the rows left read back');

# the setting is honoured: -1 logs nothing, though autovacuum still runs
$node->safe_psql('postgres', 'ALTER SYSTEM SET log_autovacuum_min_duration = -1');
$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
my $count0 = $node->safe_psql('postgres',
	q{SELECT autovacuum_count FROM pg_stat_user_tables WHERE relname = 'av'});
$offset = -s $node->logfile;
$node->safe_psql('postgres', 'DELETE FROM av WHERE id % 4 = 1');
$node->poll_query_until('postgres',
	qq{SELECT autovacuum_count > $count0 AND n_dead_tup = 0 FROM pg_stat_user_tables WHERE relname = 'av'})
  or die 'autovacuum did not come back';
unlike(slurp_file($node->logfile, $offset), qr/automatic vacuum of table "postgres\.public\.av"/,
	'with log_autovacuum_min_duration = -1 the vacuum is not logged');

$node->stop;
done_testing();
