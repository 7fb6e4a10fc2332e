#!/bin/bash
# sel.sh VERSION AM: pgbench select-only s=10, 4 clients, prepared; keeps the server
set -e
v=$1; am=$2
. "$(dirname "$0")/cluster.sh"
scratch_cluster $v /var/tmp/sel-$v-$am "default_table_access_method = $am\nhuge_pages = ${HP:-try}\n"
run "$bin/pgbench -h $d -p $port -i -s 10 -q postgres" > /dev/null 2>&1
run "$P -c 'VACUUM ANALYZE'"
[ $am = tides ] && run "$P -c 'SELECT tides_flush()'" > /dev/null && sleep 5
for r in 1; do
  run "$bin/pgbench -h $d -p $port -n -S -M prepared -c 4 -j 2 -T 3 postgres" | grep "^tps" | sed "s/^/$am run $r: /"
done
