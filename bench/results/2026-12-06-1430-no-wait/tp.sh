#!/bin/bash
# tpcb-like 30 s per engine with progress; args: mode(relaxed|strict) engines...
set -e
cd /work/main
source test/harness/cluster.sh
PGBIN=/work/main/build/pg-private/usr/lib/postgresql/15/bin
W=${W:-/var/tmp/tp13}; PORT=56411
MODE=${1:-relaxed}; shift
DUR=${DUR:-30}; CL=${CL:-4}; SCALE=${SCALE:-20}; PROTO=${PROTO:-simple}; SCRIPT=${SCRIPT:-tpcb-like}
pgc destroy $W >/dev/null 2>&1 || rm -rf $W
pgc init "$W" --bindir "$PGBIN" --port $PORT --set "max_connections = 50" --set "shared_buffers = 1GB" \
  --set "wal_buffers = 16MB" --set "max_wal_size = 8GB" --set "min_wal_size = 1GB" \
  --set "checkpoint_timeout = 30min" --set "jit = off" --set "client_min_messages = warning" \
  --set "tides.memtable_size = 64MB" --set "tides.block_cache_size = 512MB" --set "tides.compression = lz4" $EXTRA >/dev/null
pgc start "$W" --timeout 120 >/dev/null
P() { $PGBIN/psql -h $W/sock -p $PORT -U postgres -X -q "$@"; }
if [[ $MODE == strict ]]; then P -d postgres -c "ALTER SYSTEM SET tides.sync_mode='full'" -c "ALTER SYSTEM SET synchronous_commit=on";
else P -d postgres -c "ALTER SYSTEM SET tides.sync_mode='none'" -c "ALTER SYSTEM SET synchronous_commit=off"; fi
P -d postgres -c "select pg_reload_conf()" >/dev/null
for am in "$@"; do
  P -d postgres -c "DROP DATABASE IF EXISTS b_$am" -c "CREATE DATABASE b_$am"
  P -d b_$am -c "CREATE EXTENSION tidesam"
  PGOPTIONS="-c default_table_access_method=$am" $PGBIN/pgbench -h $W/sock -p $PORT -U postgres -i -q -s $SCALE b_$am >/dev/null 2>&1
  P -d b_$am -c CHECKPOINT
  echo "== $am $MODE"
  [[ $am == tides ]] && P -d b_$am -At -F ' ' -c "select * from tides_stats()" > /work/s13/st0.txt
  read -r _ u n s i w q sq st _ < /proc/stat
  $PGBIN/pgbench -h $W/sock -p $PORT -U postgres -n $( [[ -n $FILE ]] && echo "-f $FILE -D scale=$SCALE" || echo "-b $SCRIPT") -M $PROTO -c $CL -j 2 -T $DUR -P 5 b_$am 2>&1 | grep -E "progress|tps =|latency average|rror|invalid"
  read -r _ u2 n2 s2 i2 w2 q2 sq2 st2 _ < /proc/stat
  echo "cpu jiffies: user $((u2+n2-u-n)) sys $((s2+q2+sq2-s-q-sq)) idle $((i2+w2-i-w)) steal $((st2-st))"
  [[ $am == tides ]] && P -d b_$am -At -F ' ' -c "select * from tides_stats()" > /work/s13/st1.txt && join /work/s13/st0.txt /work/s13/st1.txt | awk '{d=$3-$2; if (d!=0) print $1, d}' > /work/s13/stats_$MODE.txt || true
done
pgc stop $W >/dev/null; 
