#!/bin/bash
# same files for both builds: ab_kv2.sh ROUNDS (env THREADS, RF)
cd /work/s17
for r in $(seq 1 ${1:-3}); do
 for v in a n; do
  rm -rf run; cp -a master run
  BENCH_REUSE=1 BENCH_DIR=/work/s17/run BENCH_ENGINES=tides BENCH_COMPRESSION=none BENCH_VALUE_SIZES=100 BENCH_THREADS=${THREADS:-1} BENCH_WORKLOADS=readrandom,readrandom BENCH_READ_FRAC=${RF:-3} BENCH_CACHE_MB=512 BENCH_OUT=/work/s17/kv2-$v-$r.csv ./kv_$v > /work/s17/kv2-$v-$r.log 2>&1
  tail -n +2 kv2-$v-$r.csv | awk -F, -v v=$v -v r=$r '{printf "r%s %s ops/s %d cpu/op %.3f us p99 %s\n", r, v, $9, ($31+$32)/$7*1e6, $12}'
 done
done
rm -rf run
