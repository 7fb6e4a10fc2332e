#!/bin/bash
# replay time of ~56 MB of memtable holding rows and three random-keyed tides_btree indexes; args: so... (alternated, from copies of one crashed data dir)
cd /work/main
source test/harness/cluster.sh
PGBIN=/work/main/build/pg-private/usr/lib/postgresql/15/bin
LIB=/work/main/build/pg-private/usr/lib/postgresql/15/lib/tidesam.so
W=/var/tmp/rp15; PORT=56416
P() { $PGBIN/psql -h $1/sock -p $PORT -U postgres -X -q -d postgres "${@:2}"; }
pgc destroy $W >/dev/null 2>&1 || rm -rf $W
cp /work/s15/base.so $LIB
pgc init "$W" --bindir "$PGBIN" --port $PORT --set "shared_buffers = 128MB" --set "max_wal_size = 8GB" --set "autovacuum = off" \
  --set "tides.memtable_size = 64MB" --set "tides.sync_mode = none" --set "synchronous_commit = off" $EXTRA >/dev/null
pgc start $W --timeout 120 >/dev/null
P $W -c "CREATE EXTENSION tidesam" -c "CREATE TABLE t (id bigserial PRIMARY KEY, a int, b int, c int, d text) USING tides" \
  -c "CREATE INDEX ON t USING tides_btree (a, b)" -c "CREATE INDEX ON t USING tides_btree (b, c)" -c "CREATE INDEX ON t USING tides_btree (c, a)" >/dev/null
P $W -c "select tides_flush()" >/dev/null
for i in $(seq 1 2000); do
  P $W -c "INSERT INTO t (a,b,c,d) SELECT (random()*1e6)::int, (random()*1e6)::int, (random()*1e6)::int, md5(g::text) FROM generate_series(1,1000) g"
  (( i >= ${ROWS_K:-600} )) && break
done
echo "memtable bytes $mb after $i statements"
pid=$(head -1 $W/data/postmaster.pid); kill -9 $pid; sleep 2; pkill -9 -f "$W/data" ; sleep 1
rm -rf $W.crashed; cp -a $W $W.crashed
for r in 1 2; do for so in "$@"; do
  rm -rf $W; cp -a $W.crashed $W; cp /work/s15/$so.so $LIB
  s=$(date +%s.%N); pgc start $W --timeout 300 >/dev/null; e=$(date +%s.%N)
  echo "$so: $(grep -ho "${GREP:-redo done at.*}" $W/server.log | tail -1); start $(echo "$e - $s" | bc) s; rows $(P $W -At -c 'select count(*) from t')"
  pgc stop $W >/dev/null
done; done
