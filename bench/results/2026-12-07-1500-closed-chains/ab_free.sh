#!/bin/bash
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
echo "round,build,clients,tps"
for r in $(seq 1 ${ROUNDS:-3}); do
for v in ${VARIANTS:-base new heap}; do
  db=dbt; [[ $v == heap ]] && db=dbh
  if [[ $v != heap ]]; then install -m755 $LIBS/$v.so $L; su postgres -c "$B/pg_ctl -D /tmp/pr/data -l /tmp/pr/log -w restart >/dev/null"; fi
  for c in ${CLIENTS:-4}; do
  su postgres -c "$B/psql $H -d $db -X -q -c 'VACUUM' -c 'CHECKPOINT'" >/dev/null 2>&1
  echo "$r,$v,$c,$(su postgres -c "$B/pgbench $H -n -c $c -j 2 -T ${SECS:-20} -M prepared $db" 2>&1 | grep -oP 'tps = \K[0-9.]+')"
  done
done; done
