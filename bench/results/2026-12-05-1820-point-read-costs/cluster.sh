#!/bin/bash
# cluster.sh, sourced: scratch_cluster VERSION DIR [CONF LINES]: a fresh tides-enabled cluster of a
# private installation (/work/wt/VERSION), started; sets bin, d, port, P (psql) and run (as postgres)
run() { su postgres -c "$*"; }
scratch_cluster() {
  bin=/work/wt/$1/build/pg-private/usr/lib/postgresql/15/bin; d=$2
  rm -rf $d; mkdir -p $d; chown postgres $d
  run "$bin/initdb -D $d/data -A trust >/dev/null"
  port=$((55000 + RANDOM % 2000))
  printf "shared_preload_libraries = 'tidesam'\nport = $port\nunix_socket_directories = '$d'\nlisten_addresses = ''\nshared_buffers = 256MB\ntides.block_cache_size = 256MB\ntides.sync_mode = none\nsynchronous_commit = off\n%b" "$3" >> $d/data/postgresql.conf
  echo $port > $d/port
  run "$bin/pg_ctl -D $d/data -l $d/log -w start >/dev/null"
  P="$bin/psql -h $d -p $port -d postgres -qAt"
  run "$P -c 'CREATE EXTENSION tidesam'"
}
