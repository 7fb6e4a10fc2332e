#!/bin/bash
# thp_ibench.sh MODE... (build in /work/wt/$V, V=thp; results under $OUT, /var/tmp; PROFILE=cached or io,
# STEPS as IBENCH_STEPS, default l.i0,l.x,l.i1,qr100,qp100; the io run of the write-up used every step):
# make ibench (heap, tides_btree) with
# /sys/kernel/mm/transparent_hugepage/shmem_enabled = MODE; the largest ShmemHugePages seen
T=/sys/kernel/mm/transparent_hugepage/shmem_enabled
for m in "$@"; do
  echo $m > $T
  out=${OUT:-/var/tmp}/thp-ib-${PROFILE:-cached}-$m; rm -rf $out; mkdir -p $out
  ( while true; do grep ShmemHugePages /proc/meminfo | awk '{print $2}'; sleep 2; done ) > $out/hp.txt &
  s=$!
  (cd /work/wt/${V:-thp} && PG_BINDIR=/work/wt/${V:-thp}/build/pg-private/usr/lib/postgresql/15/bin BENCH_RESULTS=$out \
    IBENCH_ENGINES=heap,tides_btree IBENCH_STEPS=${STEPS:-l.i0,l.x,l.i1,qr100,qp100} \
    /usr/bin/python3 bench/ibench/ibench.py --mode full --profiles ${PROFILE:-cached} > $out/log 2>&1)
  kill $s
  echo "== $m: ShmemHugePages max $(sort -n $out/hp.txt | tail -1) kB"
  grep -E "(heap|tides_btree) +(l\.i0|l\.x|l\.i1|l\.i2|qr100|qp100) " $out/log | sed 's/^\[bench [0-9:]*\] //' | cut -c1-110
done
echo never > $T
