#!/bin/bash
# copy_ab.sh VERSION ROWS [perf]: COPY into UNLOGGED heap and UNLOGGED tides tables in one scratch cluster.
# WHAT (default "heap tides heap tides") lists the loads in order: heap, tides, or parse (COPY ... WHERE false
# into a heap table: every row parsed and converted, none stored).  With perf, a tides load is profiled
# 1 s after its start for 2.5 s (perf-copy-VERSION.data in /tmp).
set -e
v=$1; rows=$2
. "$(dirname "$0")/cluster.sh"
scratch_cluster $v /var/tmp/copyab-$v "autovacuum = off\nmax_wal_size = 8GB\n"
csv=/var/tmp/copy_$rows.csv
if [ ! -f $csv ]; then
run "$P -c \"COPY (SELECT g, abs(hashint8(g)) % 1000000, g % 1000, timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second', (ARRAY['alpha', 'beta', 'gamma', 'delta', 'epsilon'])[g % 5 + 1], md5(g::text), 'customer ' || (abs(hashint8(g)) % 50000) || ' ordered item ' || (g % 977) || ' from store ' || (g % 31) FROM generate_series(1, $rows) g) TO '$csv' (FORMAT csv)\""
fi
cat $csv > /dev/null
for what in ${WHAT:-heap tides heap tides}; do
  am=$what; w=""; [ $what = parse ] && am=heap && w="WHERE false"
  run "$P -c 'DROP TABLE IF EXISTS copy_t'" 2>/dev/null
  run "$P -c 'CREATE UNLOGGED TABLE copy_t (id bigint NOT NULL, k int NOT NULL, v int NOT NULL, ts timestamptz NOT NULL, category text NOT NULL, digest text NOT NULL, note text NOT NULL) USING $am'"
  if [ "$3" = perf ] && [ $what = tides ]; then
    (sleep 1; perf record -F 1999 -g -a -o /tmp/perf-copy-$v.data -- sleep 2.5 >/dev/null 2>&1) &
  fi
  t0=$(date +%s.%N)
  run "$P -c \"COPY copy_t FROM '$csv' (FORMAT csv) $w\""
  t1=$(date +%s.%N)
  echo "$v $what: $(echo "$rows / ($t1 - $t0)" | bc) rows/s ($(echo "$t1 - $t0" | bc) s)"
  wait
done
run "$bin/pg_ctl -D $d/data -m fast stop >/dev/null"
