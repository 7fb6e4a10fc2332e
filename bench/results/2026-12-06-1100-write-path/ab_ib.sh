#!/bin/bash
# ab_ib.sh ROUNDS V1 V2...: cached tides_btree l.i0,l.x,l.i1 with /work/s13/V.so swapped into the private install
LIB=/work/main/build/pg-private/usr/lib/postgresql/15/lib/tidesam.so
rounds=$1; shift
for r in $(seq 1 $rounds); do
  for v in "$@"; do
    cp /work/s13/$v.so $LIB
    out=/work/s13/ib/$v-$r; rm -rf $out; mkdir -p $out
    (cd /work/main && PG_BINDIR=/work/main/build/pg-private/usr/lib/postgresql/15/bin BENCH_RESULTS=$out \
      IBENCH_ENGINES=${ENG:-tides_btree} IBENCH_STEPS=${STEPS:-l.i0,l.x,l.i1} \
      /usr/bin/python3 bench/ibench/ibench.py --mode full --profiles ${PROF:-cached} > $out/log 2>&1)
    echo "$v round $r: $(grep -oE "(l\.i0|l\.x|l\.i1|l\.i2) +[0-9]+ rows/s" $out/log | tr '\n' ' ')"
  done
done
cp /work/main/tidesam.so $LIB
