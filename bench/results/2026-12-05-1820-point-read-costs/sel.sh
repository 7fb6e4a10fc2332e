#!/bin/bash
# sel.sh VERSION AM: pgbench select-only s=10, 4 clients, prepared; keeps the server
set -e
v=$1; am=$2; bin=/work/wt/$v/build/pg-private/usr/lib/postgresql/15/bin
d=/var/tmp/sel-$v-$am; rm -rf $d; mkdir -p $d; chown postgres $d
run() { su postgres -c "$*"; }
run "$bin/initdb -D $d/data -A trust >/dev/null"
cat >> $d/data/postgresql.conf <<CONF
shared_preload_libraries = 'tidesam'
port = 57$((RANDOM%90+10))
unix_socket_directories = '$d'
listen_addresses = ''
shared_buffers = 256MB
tides.block_cache_size = 256MB
tides.sync_mode = none
synchronous_commit = off
default_table_access_method = $am
huge_pages = ${HP:-try}
CONF
port=$(grep ^port $d/data/postgresql.conf | awk '{print $3}')
echo $port > $d/port
run "$bin/pg_ctl -D $d/data -l $d/log -w start >/dev/null"
P="$bin/psql -h $d -p $port -d postgres -qAt"
run "$P -c 'CREATE EXTENSION tidesam'"
run "$bin/pgbench -h $d -p $port -i -s 10 -q postgres" > /dev/null 2>&1
run "$P -c 'VACUUM ANALYZE'"
[ $am = tides ] && run "$P -c 'SELECT tides_flush()'" > /dev/null && sleep 5
for r in 1; do
  run "$bin/pgbench -h $d -p $port -n -S -M prepared -c 4 -j 2 -T 3 postgres" | grep "^tps" | sed "s/^/$am run $r: /"
done
