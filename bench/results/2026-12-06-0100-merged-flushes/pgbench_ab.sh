#!/bin/bash
# pgbench_ab.sh [rounds]: pgbench on tides (default_table_access_method = tides,
# relaxed durability, scale 10, 4 clients, -M prepared) on two clusters of the
# installation in /work/main/build/pg-private that differ only in their
# memtables: A = the defaults (4 x 64 MB, 1 per flush), B = 16 x 16 MB, 4 per
# flush.  tpcb-like 15 s and select-only 10 s per round, A and B alternating.
rounds=${1:-3}
bin=/work/main/build/pg-private/usr/lib/postgresql/15/bin
run() { su postgres -c "$*"; }
start() {  # start NAME CONF
  d=/var/tmp/mf-$1; rm -rf $d; mkdir -p $d; chown postgres $d
  run "$bin/initdb -D $d/data -A trust >/dev/null"
  port=$((56000 + RANDOM % 2000)); echo $port > $d/port
  printf "shared_preload_libraries = 'tidesam'\nport = $port\nunix_socket_directories = '$d'\nlisten_addresses = ''\nshared_buffers = 256MB\ntides.block_cache_size = 256MB\ntides.sync_mode = none\nsynchronous_commit = off\ndefault_table_access_method = tides\n%b" "$2" >> $d/data/postgresql.conf
  run "$bin/pg_ctl -D $d/data -l $d/log -w start >/dev/null"
  run "$bin/psql -h $d -p $port -d postgres -qAt -c 'CREATE EXTENSION tidesam'"
  run "$bin/pgbench -h $d -p $port -i -q -s 10 postgres" >/dev/null 2>&1
}
start A ""
start B "tides.memtable_size = 16MB\ntides.memtable_count = 16\ntides.memtables_per_flush = 4\n"
for r in $(seq 1 $rounds); do
  for v in A B; do
    d=/var/tmp/mf-$v; port=$(cat $d/port)
    t=$(run "$bin/pgbench -h $d -p $port -n -M prepared -c 4 -j 2 -T 15 postgres" 2>&1 | grep "^tps" | awk '{print $3}')
    s=$(run "$bin/pgbench -h $d -p $port -n -S -M prepared -c 4 -j 2 -T 10 postgres" 2>&1 | grep "^tps" | awk '{print $3}')
    echo "round $r $v: tpcb-like $t select-only $s"
  done
done
for v in A B; do run "$bin/pg_ctl -D /var/tmp/mf-$v/data -m fast stop" >/dev/null; rm -rf /var/tmp/mf-$v; done
