#!/bin/bash
# ab_sort.sh ROUNDS BATCH: fillrandom, keys per batch BATCH; o = grouped search, s = sorted link (TIDES_SORTED_LINK=1)
cd /work/s19
for r in $(seq 1 ${1:-3}); do
 for v in o s; do
  rm -rf fr
  env $( [ $v = s ] && echo TIDES_SORTED_LINK=1 ) BENCH_DIR=/work/s19/fr BENCH_ENGINES=tides BENCH_COMPRESSION=none BENCH_VALUE_SIZES=100 BENCH_THREADS=${THREADS:-1} BENCH_BATCH=$2 BENCH_WORKLOADS=fillrandom BENCH_MEMTABLE_MB=${MT:-64} BENCH_OUT=/work/s19/fr-$v-$r.csv ./kv_s > /work/s19/fr-$v-$r.log 2>&1
  tail -n +2 fr-$v-$r.csv | awk -F, -v v=$v -v r=$r '{printf "r%s %s ops/s %d cpu/op %.3f us p99 %s\n", r, v, $9, ($31+$32)/$7*1e6, $12}'
 done
done
rm -rf fr
