#!/bin/bash
# li2.sh setup | run tag : l.i2-like on two tides_btree tables of 1M rows (cached)
export TIDES_PG_BINDIR=/work/main/build/pg-private/usr/lib/postgresql/15/bin; B=$TIDES_PG_BINDIR
P="python3 /work/main/test/harness/pgcluster.py"
PS="$B/psql -h /tmp/xl/sock -p 5493 -U postgres -d postgres -qAt"
if [ "$1" = setup ]; then
$P stop /tmp/xl >/dev/null 2>&1; rm -rf /tmp/xl
$P init /tmp/xl --port 5493 --set shared_buffers=64MB --set tides.memtable_size=64MB --set tides.memtable_count=4 --set tides.block_cache_size=192MB --set tides.sync_mode=none --set synchronous_commit=off --set max_wal_size=8GB --set autovacuum_naptime=10s --set autovacuum_vacuum_scale_factor=0.02 --set autovacuum_vacuum_insert_scale_factor=0.05 --set autovacuum_analyze_scale_factor=0.05 --set autovacuum_vacuum_cost_limit=2000 --set log_autovacuum_min_duration=0 >/dev/null && $P start /tmp/xl >/dev/null
su postgres -c "$PS -c 'CREATE EXTENSION tidesam'"
for t in t1 t2; do
  su postgres -c "$PS -c 'SET tides.index_method = tides_btree' -c 'CREATE TABLE $t (transactionid bigserial PRIMARY KEY, dateandtime timestamp, cashregisterid int NOT NULL, customerid int NOT NULL, productid int NOT NULL, price int NOT NULL, data varchar(4000)) USING tides' -c \"INSERT INTO $t (dateandtime, cashregisterid, customerid, productid, price, data) SELECT now(), floor(random() * 1000)::int, floor(random() * 100000)::int, floor(random() * 10000)::int, floor(random() * 500)::int, substr(md5(random()::text), 1, 10) FROM generate_series(1, 1000000)\" -c 'SET tides.index_method = tides_btree' -c 'CREATE INDEX ON $t USING tides_btree (productid, customerid, price)' -c 'CREATE INDEX ON $t USING tides_btree (cashregisterid, customerid, price)' -c 'CREATE INDEX ON $t USING tides_btree (price, dateandtime, customerid)' -c 'VACUUM ANALYZE $t'"
  sed "s/TBL/$t/g" li2_tmpl.sql > /tmp/li2_$t.sql; chmod 644 /tmp/li2_$t.sql
done
exit 0
fi
tag=$2
PB="$B/pgbench -h /tmp/xl/sock -p 5493 -U postgres -n -M prepared -c 1 -T ${T:-60}"
su postgres -c "$PB -f /tmp/li2_t1.sql postgres" > /tmp/l2_${tag}_a.out 2>&1 &
su postgres -c "$PB -f /tmp/li2_t2.sql postgres" > /tmp/l2_${tag}_b.out 2>&1 &
sleep 15; perf record -a -g -o /tmp/perf_$tag.data -- sleep 30 >/dev/null 2>&1; wait
cat /tmp/l2_${tag}_?.out | grep "^tps" | awk '{s+=$3} END {printf "tps sum %.0f rows/s %.0f\n", s, s*5}'
perf script -i /tmp/perf_$tag.data -F comm,pid,ip,sym 2>/dev/null > /tmp/ps_$tag.txt
