#!/bin/bash
# tpcb-like -c4 -M prepared 30 s, scale 10, with a REPEATABLE READ snapshot held open ("held") or not ("free")
# Needs: B = the bin directory of a private PostgreSQL installation whose
# lib directory tidesam.so is swapped (bench/pg/install_private.sh makes one),
# a cluster of it running on /tmp/pr port 5499 with shared_preload_libraries
# = 'tidesam', databases dbh (heap) and dbt (tides, CREATE EXTENSION
# tidesam) initialised with pgbench -i -s 10, and $LIBS/{base,new}.so built
# from 0b0752d and 52f3590.
B="${B:?the bin directory of the private installation}"
LIBS="${LIBS:?the directory holding base.so and new.so}"
L="$B/../lib/tidesam.so"
H="-h /tmp/pr -p 5499"
SECS=${SECS:-30}
run() { # label db mode
  su postgres -c "$B/psql $H -d $2 -X -q -c 'VACUUM' -c 'CHECKPOINT'" >/dev/null 2>&1
  if [[ $3 == held ]]; then
    su postgres -c "$B/psql $H -d $2 -X -q -c 'BEGIN ISOLATION LEVEL REPEATABLE READ' -c 'SELECT count(*) FROM pgbench_branches' -c 'SELECT pg_sleep($SECS + 3)' -c 'COMMIT'" >/dev/null 2>&1 &
    sleep 1
  fi
  out=$(su postgres -c "$B/pgbench $H -n -c 4 -j 2 -T $SECS -P 5 -M prepared $2" 2>&1)
  echo "$1,$3,$(echo "$out" | grep -oP 'tps = \K[0-9.]+'),$(echo "$out" | grep progress | awk '{print $4}' | tr '\n' ' ')"
  wait
}
echo "build,mode,tps,tps per 5 s"
for v in ${VARIANTS:-base new}; do
  install -m755 $LIBS/$v.so $L
  su postgres -c "$B/pg_ctl -D /tmp/pr/data -l /tmp/pr/log -w restart >/dev/null"
  for mode in free held; do run "tides-$v" dbt $mode; done
done
for mode in free held; do run heap dbh $mode; done
