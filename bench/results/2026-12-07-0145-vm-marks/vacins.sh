#!/bin/bash
# VACUUM of a freshly loaded (insert-only) ibench-shaped table; args: rounds so...
# each round and build: a new table of $ROWS rows with a tides_btree PK, flushed, then VACUUM timed
cd /work/main
source test/harness/cluster.sh
PGBIN=/work/main/build/pg-private/usr/lib/postgresql/15/bin
LIB=/work/main/build/pg-private/usr/lib/postgresql/15/lib/tidesam.so
W=/var/tmp/vi15; PORT=56416
ROWS=${ROWS:-1000000}
ROUNDS=$1; shift
P() { $PGBIN/psql -h $W/sock -p $PORT -U postgres -X -q -d postgres "$@"; }
pgc destroy $W >/dev/null 2>&1 || rm -rf $W
pgc init "$W" --bindir "$PGBIN" --port $PORT --set "shared_buffers = 256MB" \
  --set "max_wal_size = 8GB" --set "jit = off" --set "synchronous_commit = off" --set "autovacuum = off" \
  --set "tides.memtable_size = 64MB" --set "tides.block_cache_size = ${CACHE:-256MB}" --set "tides.sync_mode = none" >/dev/null
pgc start "$W" --timeout 120 >/dev/null
P -c "CREATE EXTENSION tidesam" >/dev/null
G="SELECT now(), (random()*1000)::int, (random()*100000)::int, (random()*10000)::int, (random()*500)::int, md5(g::text)::varchar(10) FROM generate_series(1,100000) g"
n=0
for r in $(seq 1 $ROUNDS); do
 for so in "$@"; do
  n=$((n+1))
  pgc stop $W >/dev/null 2>&1; cp /work/s15/$so.so $LIB; pgc start $W --timeout 120 >/dev/null
  P -c "CREATE TABLE t$n (transactionid bigserial PRIMARY KEY, dateandtime timestamp, cashregisterid int, customerid int, productid int, price int, data varchar(4000)) USING tides"
  for i in $(seq 1 $((ROWS/100000))); do P -c "INSERT INTO t$n (dateandtime, cashregisterid, customerid, productid, price, data) $G"; done
  P -c "select tides_flush()" -c checkpoint >/dev/null
  if [[ -n $PERF ]]; then perf record -a -g -o /work/s15/vacins-$so.perf -- $PGBIN/psql -h $W/sock -p $PORT -U postgres -X -q -d postgres -c "VACUUM t$n" >/dev/null 2>&1; P -c "VACUUM (DISABLE_PAGE_SKIPPING) t$n"; fi
  s=$(date +%s.%N); P -c "VACUUM t$n"; e=$(date +%s.%N)
  s2=$(date +%s.%N); P -c "ANALYZE t$n"; e2=$(date +%s.%N)
  echo "$so round $r: vacuum $(echo "$e - $s" | bc) s; analyze $(echo "$e2 - $s2" | bc) s; $(P -At -c "select count(*) from t$n")"
  P -c "DROP TABLE t$n"
 done
done
pgc stop $W >/dev/null
