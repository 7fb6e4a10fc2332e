#!/bin/bash
# ANALYZE on an ibench-shaped table after l.i1-like churn; args: am idxam rows churn
set -e
cd /work/main
source test/harness/cluster.sh
PGBIN=/work/main/build/pg-private/usr/lib/postgresql/15/bin
W=${W:-/var/tmp/an15}; PORT=56415
AM=${1:-tides}; IAM=${2:-tides_btree}; ROWS=${3:-1000000}; CH=${4:-1500000}
pgc destroy $W >/dev/null 2>&1 || rm -rf $W
pgc init "$W" --bindir "$PGBIN" --port $PORT --set "shared_buffers = 256MB" \
  --set "max_wal_size = 8GB" --set "jit = off" --set "synchronous_commit = off" --set "autovacuum = off" \
  --set "tides.memtable_size = 64MB" --set "tides.block_cache_size = 256MB" --set "tides.sync_mode = none" $EXTRA >/dev/null
pgc start "$W" --timeout 120 >/dev/null
P() { $PGBIN/psql -h $W/sock -p $PORT -U postgres -X -q -d postgres "$@"; }
P -c "CREATE EXTENSION tidesam" >/dev/null
P -c "CREATE TABLE t (transactionid bigserial PRIMARY KEY, dateandtime timestamp, cashregisterid int, customerid int, productid int, price int, data varchar(4000)) USING $AM"
G="SELECT now(), (random()*1000)::int, (random()*100000)::int, (random()*10000)::int, (random()*500)::int, md5(g::text)::varchar(10) FROM generate_series(1,100000) g"
for i in $(seq 1 $((ROWS/100000))); do P -c "INSERT INTO t (dateandtime, cashregisterid, customerid, productid, price, data) $G"; done
P -c "CREATE INDEX ON t USING $IAM (productid, customerid, price)" -c "CREATE INDEX ON t USING $IAM (cashregisterid, customerid, price)" -c "CREATE INDEX ON t USING $IAM (price, dateandtime, customerid)"
for i in $(seq 1 $((CH/100000))); do
  P -c "INSERT INTO t (dateandtime, cashregisterid, customerid, productid, price, data) $G"
  P -c "DELETE FROM t WHERE transactionid <= (SELECT min(transactionid) FROM t) + 99999"
  if (( i % 5 == 0 )); then P -c "VACUUM t"; fi
done
P -c "VACUUM t"
P -At -c "select count(*), pg_relation_size('t')/8192 from t"
for i in 1 2 3 4 5; do
  s=$(date +%s.%N); P -c "ANALYZE t"; e=$(date +%s.%N)
  echo "$AM analyze $i: $(echo "$e - $s" | bc) s"
done
if [[ -n $PERF ]]; then
  ( sleep 1; BP=$(P -At -c "select pid from pg_stat_activity where application_name='an15'"); perf record -F 2999 -g -p $BP -o /work/s15/churn-$AM.perf -- sleep $PERF >/dev/null 2>&1 ) &
  PGAPPNAME=an15 P -c "select pg_sleep(1.5)" -c "ANALYZE t" -c "ANALYZE t" -c "ANALYZE t" -c "ANALYZE t" -c "ANALYZE t" -c "ANALYZE t" -c "ANALYZE t" -c "ANALYZE t" -c "ANALYZE t" -c "ANALYZE t" -c "ANALYZE t" -c "ANALYZE t"
  wait
fi
[[ -n $KEEP ]] || pgc stop $W >/dev/null
