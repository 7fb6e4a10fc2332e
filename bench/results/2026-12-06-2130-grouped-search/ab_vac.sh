#!/bin/bash
# A/B of VACUUM after deleting 200K rows (ibench-shaped table, 3 tides_btree indexes); args: rounds so...
cd /work/main
source test/harness/cluster.sh
PGBIN=/work/main/build/pg-private/usr/lib/postgresql/15/bin
LIB=/work/main/build/pg-private/usr/lib/postgresql/15/lib/tidesam.so
W=/var/tmp/an15; PORT=56415
ROUNDS=$1; shift
P() { $PGBIN/psql -h $W/sock -p $PORT -U postgres -X -q -d postgres "$@"; }
G="SELECT now(), (random()*1000)::int, (random()*100000)::int, (random()*10000)::int, (random()*500)::int, md5(g::text)::varchar(10) FROM generate_series(1,200000) g"
for r in $(seq 1 $ROUNDS); do
 for so in "$@"; do
  pgc stop $W >/dev/null 2>&1; cp /work/s15/$so.so $LIB; pgc start $W --timeout 120 >/dev/null
  P -c "INSERT INTO t (dateandtime, cashregisterid, customerid, productid, price, data) $G" -c "DELETE FROM t WHERE transactionid <= (SELECT min(transactionid) FROM t) + 199999" -c "select tides_flush()" >/dev/null 2>&1
  s=$(date +%s.%N); P -c "VACUUM t"; e=$(date +%s.%N)
  t2s=$(date +%s.%N); P -c "INSERT INTO t (dateandtime, cashregisterid, customerid, productid, price, data) $G"; t2e=$(date +%s.%N)
  echo "$so round $r: vacuum $(echo "$e - $s" | bc) s; insert 200K $(echo "$t2e - $t2s" | bc) s"
  P -c "DELETE FROM t WHERE transactionid <= (SELECT min(transactionid) FROM t) + 199999" -c "VACUUM t" 
 done
done
