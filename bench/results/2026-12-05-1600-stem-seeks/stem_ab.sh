#!/bin/bash
# stem_ab.sh VERSION (a worktree under /work/wt with its private installation): point-lookup IN-lists against a tides_btree PK whose keys
# lie in several levels (last level + newer upper-level files), 2 clients
set -e
v=$1; bin=/work/wt/$v/build/pg-private/usr/lib/postgresql/15/bin
d=/var/tmp/stemab-$v; rm -rf $d; mkdir -p $d; chown postgres $d
run() { su postgres -c "$*"; }
run "$bin/initdb -D $d/data -A trust >/dev/null"
cat >> $d/data/postgresql.conf <<CONF
shared_preload_libraries = 'tidesam'
port = 55$((RANDOM%90+10))
unix_socket_directories = '$d'
listen_addresses = ''
shared_buffers = 64MB
tides.block_cache_size = 256MB
tides.memtable_size = 16MB
tides.sync_mode = none
synchronous_commit = off
autovacuum = off
CONF
port=$(grep ^port $d/data/postgresql.conf | awk '{print $3}')
run "$bin/pg_ctl -D $d/data -l $d/log -w start >/dev/null"
P="$bin/psql -h $d -p $port -d postgres -qAt"
run "$P -c 'CREATE EXTENSION tidesam'"
run "$P" <<SQL
CREATE TABLE t (k bigint, v int, pad text) USING tides;
CREATE UNIQUE INDEX t_k ON t USING tides_btree (k);
INSERT INTO t SELECT i, i, repeat('x', 60) FROM generate_series(1, 2000000) i;
SELECT tides_flush(); SELECT tides_compact();
-- newer files above the last level: three rounds of updates of 5% of the keys
UPDATE t SET k = k + 10000000 WHERE k % 20 = 1; SELECT tides_flush();
UPDATE t SET k = k + 10000000 WHERE k % 20 = 2; SELECT tides_flush();
UPDATE t SET k = k + 10000000 WHERE k % 20 = 3; SELECT tides_flush();
VACUUM t;
SELECT tides_flush();
SQL
# wait for compactions to finish: the shape must not move under the measurement
for i in $(seq 1 120); do n=$(run "$P -c 'SELECT count(*) FROM tides_compactions'"); [ "$n" = 0 ] && break; sleep 1; done
run "$P -c 'SELECT name, value FROM tides_stats() WHERE name LIKE '\''level%files'\'' AND value > 0'" | tr '\n' ' '; echo
sets=""; ks=""
for i in 0 1 2 3 4 5 6 7 8 9; do sets="$sets\\set k$i random(1, 2000000)
"; ks="$ks${ks:+, }:k$i"; done
printf "%bSELECT k, v FROM t WHERE k IN (%s);\n" "$sets" "$ks" > $d/q.sql
chmod 644 $d/q.sql
blocks() { run "$P -c \"SELECT sum(value) FROM tides_stats() WHERE name IN ('cache_hits', 'cache_misses')\""; }
for r in 1 2 3; do
  b0=$(blocks)
  out=$(run "$bin/pgbench -h $d -p $port -n -M prepared -c 2 -j 2 -T 15 -f $d/q.sql postgres")
  b1=$(blocks)
  tps=$(echo "$out" | grep -E "^tps" | awk '{print $3}')
  nq=$(echo "$out" | grep "number of transactions actually processed" | awk '{print $NF}')
  echo "$v run $r: tps $tps blocks/query $(echo "scale=2; ($b1 - $b0) / $nq" | bc)"
done
run "$P -c 'SELECT name, value FROM tides_stats() WHERE name LIKE '\''level%files'\'' AND value > 0'" | tr '\n' ' '; echo
run "$bin/pg_ctl -D $d/data -m fast stop >/dev/null"
