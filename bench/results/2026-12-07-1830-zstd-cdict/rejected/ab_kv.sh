#!/bin/bash
# same files for both builds: ab_kv.sh ROUNDS; a = without the interval prefetch, n = with
cd /work/s19
for r in $(seq 1 ${1:-3}); do
 for v in a n; do
  rm -rf run; cp -a master run
  BENCH_REUSE=1 BENCH_DIR=/work/s19/run BENCH_ENGINES=tides BENCH_COMPRESSION=none BENCH_VALUE_SIZES=100 BENCH_THREADS=1 BENCH_WORKLOADS=readrandom,readrandom BENCH_READ_FRAC=3 BENCH_CACHE_MB=512 BENCH_OUT=/work/s19/kv-$v-$r.csv ./kv_$v > /work/s19/kv-$v-$r.log 2>&1
  tail -n +2 kv-$v-$r.csv | awk -F, -v v=$v -v r=$r '{printf "r%s %s ops/s %d cpu/op %.3f us p99 %s\n", r, v, $9, ($31+$32)/$7*1e6, $12}'
 done
done
rm -rf run
