#!/bin/bash
# A/B of old.so / new.so on tpcb-like (tp.sh); args: rounds mode
LIB=/work/main/build/pg-private/usr/lib/postgresql/15/lib/tidesam.so
R=${1:-3}; MODE=${2:-relaxed}
for r in $(seq 1 $R); do
  for v in ${VARIANTS:-old new}; do
    cp /work/s13/$v.so $LIB
    ( sleep 22; perf stat -e page-faults -a -x, -o /work/s13/pf.txt -- sleep 10 ) &
    out=$(DUR=${DUR:-20} /work/s13/tp.sh $MODE tides 2>&1)
    wait
    tps=$(echo "$out" | grep "tps =" | awk '{print $3}')
    pf=$(grep page-faults /work/s13/pf.txt | cut -d, -f1)
    st=/work/s13/stats_$MODE.txt
    echo "$r $v tps $tps faults10s $pf keys $(awk '/keys_written/{print $2}' $st) reads $(awk '/reads_(un)?changed/{s+=$2} END{print s}' $st) waits $(awk '/publish_waits/{print $2}' $st)"
  done
done
cp /work/main/tidesam.so $LIB
