#!/bin/bash
# A/B of builds (/work/s15/{X}.so, swapped into the private installation) on bench/pg/oltp_idx.py points; args: rounds; env VARIANTS, POINTS, REP, DUR
LIB=/work/main/build/pg-private/usr/lib/postgresql/15/lib/tidesam.so
R=${1:-2}
for r in $(seq 1 $R); do
  for v in ${VARIANTS:-a b}; do
    cp /work/s15/$v.so $LIB
    mkdir -p /work/s15/out-$v-$r
    BENCH_RESULTS=/work/s15/out-$v-$r BENCH_ENGINES=${ENG:-tides} BENCH_POINTS=${POINTS:-update-indexed:relaxed:4} \
      BENCH_REPEATS=${REP:-3} BENCH_DURATION=${DUR:-5} python3 /work/main/bench/pg/oltp_idx.py > /work/s15/out-$v-$r/log.txt 2>&1
    echo "$r $v: $(grep -h tides /work/s15/out-$v-$r/*oltp.csv | cut -c1-200 | tr '\n' ' ')"
  done
done
cp /work/main/tidesam.so $LIB
