#!/bin/bash
# COPY parse-only cost (WHERE false) against heap unlogged load
set -e
v=new; rows=$1; bin=/work/wt/$v/build/pg-private/usr/lib/postgresql/15/bin
d=/var/tmp/copyab-$v; rm -rf $d; mkdir -p $d; chown postgres $d
run() { su postgres -c "$*"; }
run "$bin/initdb -D $d/data -A trust >/dev/null"
cat >> $d/data/postgresql.conf <<CONF
shared_preload_libraries = 'tidesam'
port = 56$((RANDOM%90+10))
unix_socket_directories = '$d'
listen_addresses = ''
shared_buffers = 256MB
tides.block_cache_size = 256MB
tides.sync_mode = none
synchronous_commit = off
autovacuum = off
max_wal_size = 8GB
CONF
port=$(grep ^port $d/data/postgresql.conf | awk '{print $3}')
run "$bin/pg_ctl -D $d/data -l $d/log -w start >/dev/null"
P="$bin/psql -h $d -p $port -d postgres -qAt"
run "$P -c 'CREATE EXTENSION tidesam'"
csv=/var/tmp/copy_$rows.csv
cat $csv > /dev/null
for r in 1 2 3; do
for what in parse heap tides; do
  am=$what; [ $what = parse ] && am=heap
  run "$P -c 'DROP TABLE IF EXISTS copy_t'" 2>/dev/null
  run "$P -c 'CREATE UNLOGGED TABLE copy_t (id bigint NOT NULL, k int NOT NULL, v int NOT NULL, ts timestamptz NOT NULL, category text NOT NULL, digest text NOT NULL, note text NOT NULL) USING $am'"
  w=""; [ $what = parse ] && w="WHERE false"
  t0=$(date +%s.%N)
  run "$P -c \"COPY copy_t FROM '$csv' (FORMAT csv) $w\""
  t1=$(date +%s.%N)
  echo "$what: $(echo "$rows / ($t1 - $t0)" | bc) rows/s ($(echo "$t1 - $t0" | bc) s)"
done; done
run "$bin/pg_ctl -D $d/data -m fast stop >/dev/null"
