#!/bin/bash
# usage: qp.sh setup | run tag table(tp|hp) [perf]
export TIDES_PG_BINDIR=/work/main/build/pg-private/usr/lib/postgresql/15/bin; B=$TIDES_PG_BINDIR
P="python3 /work/main/test/harness/pgcluster.py"
PS="$B/psql -h /tmp/xq/sock -p 5492 -U postgres -d postgres -qAt"
if [ "$1" = setup ]; then
$P stop /tmp/xq >/dev/null 2>&1; rm -rf /tmp/xq
$P init /tmp/xq --port 5492 --set shared_buffers=256MB --set tides.memtable_size=64MB --set tides.memtable_count=4 --set tides.block_cache_size=192MB --set tides.sync_mode=none --set synchronous_commit=off --set max_wal_size=8GB >/dev/null && $P start /tmp/xq >/dev/null
su postgres -c "$PS -c 'CREATE EXTENSION tidesam'"
for t in tp hp; do
  u=$([ $t = tp ] && echo "USING tides" || echo "USING heap")
  su postgres -c "$PS -c 'SET tides.index_method = tides_btree' -c 'CREATE TABLE $t (transactionid bigserial PRIMARY KEY, dateandtime timestamp, cashregisterid int NOT NULL, customerid int NOT NULL, productid int NOT NULL, price int NOT NULL, data varchar(4000)) $u' -c \"INSERT INTO $t (dateandtime, cashregisterid, customerid, productid, price, data) SELECT now(), floor(random() * 1000)::int, floor(random() * 100000)::int, floor(random() * 10000)::int, floor(random() * 500)::int, substr(md5(random()::text), 1, 10) FROM generate_series(1, 1000000)\" -c 'VACUUM ANALYZE $t'"
done
su postgres -c "$PS -c 'CHECKPOINT'"
exit 0
fi
tag=$2; t=$3
( for i in 0 1 2 3 4 5 6 7 8 9; do echo "\\set k$i random(1, 1000000)"; done
  echo "SELECT transactionid, productid, data FROM $t WHERE transactionid IN (:k0, :k1, :k2, :k3, :k4, :k5, :k6, :k7, :k8, :k9);" ) > /tmp/qp_$t.sql
chmod 644 /tmp/qp_$t.sql
PB="$B/pgbench -h /tmp/xq/sock -p 5492 -U postgres -n -M prepared -c 2 -j 2 -T ${T:-20}"
if [ -n "$4" ]; then
  su postgres -c "$PB -f /tmp/qp_$t.sql postgres" > /tmp/qp_$tag.out 2>&1 &
  sleep 5; perf record -a -g -o /tmp/perf_$tag.data -- sleep 10 >/dev/null 2>&1; wait
else
  su postgres -c "$PB -f /tmp/qp_$t.sql postgres" > /tmp/qp_$tag.out 2>&1
fi
grep "^tps" /tmp/qp_$tag.out
