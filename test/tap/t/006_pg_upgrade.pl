
# 006_pg_upgrade.pl -- pg_upgrade 15 -> 15 of clusters holding tides tables
# and tides_btree indexes, with tides.wal = off (sync_mode full and
# interval) and tides.wal = on, by the procedure of docs/operations.md
# ("Upgrading with pg_upgrade"): pg_upgrade, then the old cluster's pg_tides
# replaces the new one's, then start.  Rows, index scans, verification and
# new writes are checked.  Without the copy step the new server starts but
# refuses tides access, naming the procedure.
use strict;
use warnings;
use Cwd;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use TidesTap;

my $bindir = `pg_config --bindir`;
chomp $bindir;

my $fill = q{
CREATE EXTENSION tidesam;
CREATE TABLE t (id int PRIMARY KEY, k int NOT NULL, v text) USING tides;
CREATE INDEX t_k ON t USING tides_btree (k);
CREATE TABLE h (id int PRIMARY KEY, k int NOT NULL, v text) USING heap;
INSERT INTO t SELECT g, g % 997, repeat('x', g % 50) FROM generate_series(1, 30000) g;
INSERT INTO h SELECT g, g % 997, repeat('x', g % 50) FROM generate_series(1, 30000) g;
UPDATE t SET k = k + 1000 WHERE id % 7 = 0;
UPDATE h SET k = k + 1000 WHERE id % 7 = 0;
DELETE FROM t WHERE id % 11 = 0;
DELETE FROM h WHERE id % 11 = 0;
CREATE TABLE big (id bigint, payload text) USING tides;
INSERT INTO big SELECT g, md5(g::text) FROM generate_series(1, 50000) g;
CREATE SCHEMA s2;
CREATE TABLE s2.other (a int) USING tides;
INSERT INTO s2.other SELECT generate_series(1, 123);
};

my $summary = q{
SELECT concat_ws(' ',
  (SELECT count(*) || '/' || sum(id) || '/' || sum(k) || '/' || sum(length(v)) FROM t),
  (SELECT count(*) || '/' || sum(id) || '/' || sum(k) || '/' || sum(length(v)) FROM h),
  (SELECT count(*) || '/' || sum(id) FROM big),
  (SELECT count(*) FROM s2.other))
};

sub upgrade_case
{
	my ($name, %mode) = @_;
	my $old = tides_node("old_$name", %mode, allows_streaming => 0);
	$old->start;
	$old->safe_psql('postgres', $fill);
	$old->safe_psql('postgres', 'CREATE DATABASE second');
	$old->safe_psql('second', 'CREATE EXTENSION tidesam; CREATE TABLE t2 (x int) USING tides; INSERT INTO t2 SELECT generate_series(1, 500)');
	my $before = $old->safe_psql('postgres', $summary);
	my ($n, $hn) = split / /, $before;
	my ($nt) = split m{/}, $n;
	$old->stop;

	my $new = tides_node("new_$name", %mode, allows_streaming => 0);
	my $cwd = getcwd();
	my $work = PostgreSQL::Test::Utils::tempdir;
	chdir $work;
	command_ok(
		[
			'pg_upgrade', '--no-sync', '-d', $old->data_dir, '-D', $new->data_dir,
			'-b', $bindir, '-B', $bindir, '-s', $new->host,
			'-p', $old->port, '-P', $new->port
		],
		"$name: pg_upgrade");
	chdir $cwd;

	if ($name eq 'waloff_full')
	{
		# the copy step skipped: the server starts, tides access is refused
		$new->start;
		my ($ret, $out, $err) = $new->psql('postgres', 'SELECT count(*) FROM t');
		like($err,
			qr/tides storage is unavailable: this cluster was made by pg_upgrade.*replace it with the old cluster's pg_tides \(docs\/operations.md, "Upgrading with pg_upgrade"\)/,
			"$name: without the old pg_tides, tides access is refused, naming the procedure");
		is($new->safe_psql('postgres', 'SELECT count(*) FROM h'), $hn =~ s{/.*}{}r,
			"$name: ... while heap tables are there");
		ok($new->log_contains('HINT:  Stop the server, replace .*pg_tides with the old cluster'),
			"$name: ... and the server log says what to do");
		$new->stop;
	}

	# the procedure: the old cluster's pg_tides replaces the new one's
	PostgreSQL::Test::Utils::system_or_bail('rm', '-rf', $new->data_dir . '/pg_tides');
	PostgreSQL::Test::Utils::system_or_bail('cp', '-a', $old->data_dir . '/pg_tides', $new->data_dir . '/pg_tides');
	$new->start;
	is($new->safe_psql('postgres', $summary), $before, "$name: every table has its rows after the upgrade");
	is($new->safe_psql('second', 'SELECT count(*) || \'/\' || sum(x) FROM t2'), '500/125250',
		"$name: ... in the second database too");
	my $q = 'SELECT count(*) || \'/\' || sum(id) FROM t WHERE k BETWEEN 1000 AND 1500';
	my $iscan = $new->safe_psql('postgres', "SET enable_seqscan = off; SET enable_bitmapscan = off; $q");
	my $sscan = $new->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off; $q");
	is($iscan, $sscan, "$name: the tides_btree index agrees with the table");
	is($new->safe_psql('postgres', 'SET enable_seqscan = off; SET enable_bitmapscan = off; SELECT count(*) FROM t WHERE id > 0'),
		$nt, "$name: the btree primary key agrees with the table");
	check_verify($new, $name);
	# new rows: no false duplicate, no reused row id
	$new->safe_psql('postgres', q{
INSERT INTO t SELECT g, g % 997, 'new' FROM generate_series(30001, 31000) g;
INSERT INTO t SELECT g, 5, 'again' FROM generate_series(1, 30000) g WHERE g % 11 = 0;
});
	my ($ret, $out, $err) = $new->psql('postgres', 'INSERT INTO t VALUES (1, 1, \'dup\')');
	like($err, qr/duplicate key value violates unique constraint "t_pkey"/, "$name: a real duplicate is refused");
	is($new->safe_psql('postgres', 'SELECT count(*) = count(DISTINCT ctid) AND count(*) = 31000 FROM t'), 't',
		"$name: new rows have new row ids");
	check_verify($new, "$name, after new rows");
	$new->restart;
	is($new->safe_psql('postgres', 'SELECT count(*) FROM t'), '31000', "$name: rows kept across a restart");
	$new->stop;
	return;
}

upgrade_case('waloff_full', wal => 0, sync_mode => 'full');
upgrade_case('waloff_interval', wal => 0, sync_mode => 'interval');
upgrade_case('walon', wal => 1);

done_testing();
