#!/bin/bash
# A/B of the zstd dictionary change in the cached Insert Benchmark, tides_btree alone:
# a = 2f08775 (ZSTD_compressCCtx per block), n = the change (ZSTD_compress_usingCDict)
cd /work/main
for r in 1 2; do
 for v in a n; do
  cp /work/tidesam-z$v.so tidesam.so; touch tidesam.so
  out=/work/zab/$v-$r; rm -rf $out; mkdir -p $out
  BENCH_RESULTS=$out IBENCH_PROFILES=cached IBENCH_ENGINES=tides_btree IBENCH_STEPS=l.x,l.i1 \
    IBENCH_PERF=tides_btree:l.i1:20 IBENCH_PERF_PROFILE=cached IBENCH_PERF_DELAY=15 \
    bash bench/ibench/run.sh full > $out/log 2>&1
  data=/var/tmp/ibench-cached-tides_btree-li1.perf.data
  z=$(perf script -i $data -F dso -G 2>/dev/null | awk '{n++; if ($0 ~ /zstd/) z++} END{printf "%.2f", 100*z/n}')
  echo "r$r $v $(grep -E 'tides_btree (l.x|l.i1) ' $out/log | sed 's/.*tides_btree //' | awk '{printf "%s %s %s | ", $1, $2, $3}') zstd% $z $(grep -E 'tides_btree l.i1 ' $out/log | grep -o 'size [0-9]* MB')"
 done
done
cp /work/tidesam-zn.so tidesam.so; touch tidesam.so
