#!/bin/bash
# ab_sel.sh ROUNDS CLIENTS SECS: select-only prepared, a and n builds alternating, same cluster/files
source /work/s18/pg.sh
L=/work/main/build/pg-private/usr/lib/postgresql/15/lib
for r in $(seq 1 $1); do
 for v in a n; do
  install -m755 /work/tidesam-$v.so $L/tidesam.so
  su postgres -c "$B/pg_ctl -D /tmp/pr/data -l /tmp/pr/log -w restart >/dev/null"
  # warm the block cache: one pass over the table
  su postgres -c "$B/psql -h /tmp/pr -p 5499 -d dbt -X -qAt -c 'select count(*) from pgbench_accounts where aid > 0'" >/dev/null
  su postgres -c "$B/pgbench -h /tmp/pr -p 5499 -S -M prepared -c 1 -T 5 dbt" >/dev/null 2>&1
  t=$(su postgres -c "$B/pgbench -h /tmp/pr -p 5499 -S -M prepared -c $2 -j $(( $2 < 2 ? 1 : 2 )) -T $3 dbt" 2>&1 | awk '/^tps/{print $3}')
  echo "r$r $v c$2 $t"
 done
done
