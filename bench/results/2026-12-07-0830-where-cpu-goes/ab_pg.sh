#!/bin/bash
# usage: WL="select-only point-lookup" ARGS="--protocol prepared" VARIANTS="a b" ab_pg.sh ROUNDS
export TIDES_PG_BINDIR=/work/main/build/pg-private/usr/lib/postgresql/15/bin
LIB=/work/main/build/pg-private/usr/lib/postgresql/15/lib/tidesam.so
cd /work/main
for r in $(seq 1 ${1:-2}); do
 for wl in $WL; do
  for v in ${VARIANTS:-a b}; do
   rm -f $LIB; cp /work/s16/$v.so $LIB
   out=$(timeout 900 python3 bench/pg/profile.py $wl --engine ${ENGINE:-tides} --clients ${CLIENTS:-4} --seconds ${SECS:-15} --no-perf --tag ab$v$r --out /work/s16/out $ARGS 2>&1 | grep -o "tps = [0-9.]*" | head -1)
   echo "$wl $v r$r $(md5sum < $LIB | cut -c1-8) $out"
  done
 done
done
