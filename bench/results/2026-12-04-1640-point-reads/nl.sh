#!/bin/bash
# nl.sh table rounds so... : nested-loop point lookups, ms per run (1 warm + 3 timed per restart)
t=$1; rounds=$2; shift 2
B=/work/main/build/pg-private/usr/lib/postgresql/15/bin
P="python3 /work/main/test/harness/pgcluster.py"
Q="SET enable_hashjoin=off; SET enable_mergejoin=off; SET enable_seqscan=off; \\timing on
SELECT count(t.data) FROM (SELECT ((i::bigint*7919) % 999983)+1 AS k FROM generate_series(1,300000) i) g JOIN $t t ON t.transactionid = g.k;"
for round in $(seq $rounds); do
 for so in "$@"; do
  $P stop /tmp/xq >/dev/null 2>&1
  cp $so /work/main/build/pg-private/usr/lib/postgresql/15/lib/tidesam.so
  $P start /tmp/xq >/dev/null
  out=$(for i in 1 2 3 4; do echo "$Q"; done | su postgres -c "$B/psql -h /tmp/xq/sock -p 5492 -U postgres -d postgres -qAt" 2>&1 | grep Time | awk "\$2 > 100" | tail -3 | awk '{printf "%s ", $2}')
  echo "$(basename $so .so) $out"
 done
done
