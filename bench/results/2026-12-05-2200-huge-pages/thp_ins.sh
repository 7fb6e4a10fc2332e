#!/bin/bash
# thp_ins.sh ROUNDS: l.i0-like load (100-row INSERTs, tides_btree PK) into a fresh cluster, 2 clients, 1M rows, on the
# build in /work/wt/$V (V=thp), tides.transparent_huge_pages on vs off (run with shmem_enabled = advise), alternating;
# rows/s, backend minor faults per row, server CPU us per row
. "$(dirname "$0")/../2026-12-05-1820-point-read-costs/cluster.sh"
rounds=$1
cat > /tmp/ins100.sql <<'SQL'
INSERT INTO pi1 (dateandtime, cashregisterid, customerid, productid, price, data)
SELECT now(), (random()*999)::int, (random()*99999)::int, (random()*9999)::int, (random()*499)::int, substr(md5(random()::text), 1, 10)
FROM generate_series(1, 100);
SQL
chmod 644 /tmp/ins100.sql
T=${T:-5000}
for r in $(seq 1 $rounds); do
  for g in on off; do v=${V:-thp}
    scratch_cluster $v /var/tmp/ins-$g "huge_pages = off\ntides.transparent_huge_pages = $g\nautovacuum = off\ntides.memtable_size = 64MB\ntides.memtable_count = 4\n"
    run "$P -c \"SET tides.index_method = tides_btree; CREATE TABLE pi1 (transactionid bigserial PRIMARY KEY, dateandtime timestamp, cashregisterid int NOT NULL, customerid int NOT NULL, productid int NOT NULL, price int NOT NULL, data varchar(4000)) USING tides\""
    pm=$(head -1 $d/data/postmaster.pid)
    c0=$(bash "$(dirname "$0")/../2026-12-05-1820-point-read-costs/cpu_of.sh" $d/data)
    run "$bin/pgbench -h $d -p $port -n -f /tmp/ins100.sql -c 2 -j 2 -t $T postgres" > /tmp/ins.out 2>&1 &
    sleep 1; pids=$(pgrep -P $pm -f "postgres: postgres postgres")
    flt=0
    while kill -0 $! 2>/dev/null; do
      f=0; for p in $pids; do x=$(awk '{print $10}' /proc/$p/stat 2>/dev/null); f=$((f + ${x:-0})); done
      [ $f -gt $flt ] && flt=$f; sleep 0.2
    done
    c1=$(bash "$(dirname "$0")/../2026-12-05-1820-point-read-costs/cpu_of.sh" $d/data)
    tps=$(awk '/^tps/{print $3}' /tmp/ins.out)
    rows=$((2 * T * 100))
    echo "thp=$g round $r: $(echo "$tps * 100" | bc | cut -d. -f1) rows/s, backend minflt/row $(echo "scale=3; $flt / $rows" | bc), server cpu us/row $(echo "scale=2; ($c1 - $c0) * 10000 / $rows" | bc)"
    run "$bin/pg_ctl -D $d/data -m immediate stop" > /dev/null
  done
done
