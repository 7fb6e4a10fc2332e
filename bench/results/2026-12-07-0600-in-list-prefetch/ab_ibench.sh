#!/bin/bash
# A/B of builds (/work/s15/{X}.so, swapped into the private installation) on ibench steps;
# (TIDES_PG_BINDIR set: otherwise ibench.py builds and installs the working tree over the swapped library)
# args: rounds; env PROFILE (cached or io), VARIANTS, STEPS, ROWS (cached profile only), ENG
export TIDES_PG_BINDIR=/work/main/build/pg-private/usr/lib/postgresql/15/bin
LIB=/work/main/build/pg-private/usr/lib/postgresql/15/lib/tidesam.so
PROFILE=${PROFILE:-cached}
R=${1:-2}
for r in $(seq 1 $R); do
  for v in ${VARIANTS:-b c}; do
    rm -f $LIB; cp /work/s15/$v.so $LIB
    d=/work/s15/ab0/ab-$PROFILE-$v-$r; rm -rf $d; mkdir -p $d
    env BENCH_RESULTS=$d IBENCH_PROFILES=$PROFILE IBENCH_ENGINES=${ENG:-tides_btree} IBENCH_STEPS=${STEPS:-l.i0} \
      ${ROWS:+IBENCH_CACHED_ROWS=$ROWS} timeout 1200 /usr/bin/python3 /work/main/bench/ibench/ibench.py --mode full --profiles $PROFILE > $d/log.txt 2>&1
    echo "$r $v ($(md5sum < $LIB | cut -c1-8) after the run): $(cut -d, -f3,7,11 $d/ibench_steps.csv | tail -n +2 | tr '\n' ' ')"
  done
done
rm -f $LIB; cp /work/main/tidesam.so $LIB
