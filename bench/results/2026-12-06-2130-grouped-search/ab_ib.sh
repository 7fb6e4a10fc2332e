#!/bin/bash
# A/B of builds (/work/s15/{X}.so, swapped into the private installation) on ibench's cached steps; args: rounds; env VARIANTS, STEPS, ROWS
LIB=/work/main/build/pg-private/usr/lib/postgresql/15/lib/tidesam.so
R=${1:-2}
for r in $(seq 1 $R); do
  for v in ${VARIANTS:-b c}; do
    cp /work/s15/$v.so $LIB
    d=/work/s15/abib-$v-$r; rm -rf $d; mkdir -p $d
    BENCH_RESULTS=$d IBENCH_PROFILES=cached IBENCH_ENGINES=${ENG:-tides_btree} IBENCH_STEPS=${STEPS:-l.i0} IBENCH_CACHED_ROWS=${ROWS:-2000000} \
      timeout 1200 /usr/bin/python3 /work/main/bench/ibench/ibench.py --mode full --profiles cached > $d/log.txt 2>&1
    echo "$r $v: $(cut -d, -f3,7,11 $d/ibench_steps.csv | tail -n +2 | tr '\n' ' ')"
  done
done
cp /work/main/tidesam.so $LIB
