#!/bin/bash
# vac_ab.sh ROUNDS V1 V2 ... (builds in /work/wt/V; PERF=1: perf record -a of the VACUUM into $OUT): VACUUM of 150K deleted ibench rows (tides_btree indexes) after 300K
# rows inserted 50 per transaction; autovacuum off; alternating versions
. "$(dirname "$0")/../2026-12-05-1820-point-read-costs/cluster.sh"
rounds=$1; shift
cat > /tmp/ins50.sql <<'SQL'
INSERT INTO pi1 (dateandtime, cashregisterid, customerid, productid, price, data)
SELECT now(), (random()*999)::int, (random()*99999)::int, (random()*9999)::int, (random()*499)::int, substr(md5(random()::text), 1, 10)
FROM generate_series(1, 50);
SQL
chmod 644 /tmp/ins50.sql
for r in $(seq 1 $rounds); do
  for v in "$@"; do
    scratch_cluster $v /var/tmp/vac-$v "autovacuum = off\n"
    run "$P -c \"SET tides.index_method = tides_btree; CREATE TABLE pi1 (transactionid bigserial PRIMARY KEY, dateandtime timestamp, cashregisterid int NOT NULL, customerid int NOT NULL, productid int NOT NULL, price int NOT NULL, data varchar(4000)) USING tides\""
    run "$P -c 'CREATE INDEX ON pi1 USING tides_btree (productid, customerid, price)'"
    run "$P -c 'CREATE INDEX ON pi1 USING tides_btree (cashregisterid, customerid, price)'"
    run "$P -c 'CREATE INDEX ON pi1 USING tides_btree (price, dateandtime, customerid)'"
    run "$bin/pgbench -h $d -p $port -n -f /tmp/ins50.sql -c 2 -j 2 -t 3000 postgres" | grep "^tps" | sed "s/^/  $v insert: /"
    run "$P -c 'DELETE FROM pi1 WHERE transactionid <= 150000'"
    pm=$(head -1 $d/data/postmaster.pid)
    t0=$(date +%s.%N)
    if [ -n "$PERF" ]; then perf record -q -a -g -o ${OUT:-/var/tmp}/vac-$v.perf -- su postgres -c "$P -c 'VACUUM pi1'" 2>/dev/null; else run "$P -c 'VACUUM pi1'"; fi
    t1=$(date +%s.%N)
    echo "$v round $r: VACUUM $(echo "$t1 - $t0" | bc) s"
    run "$bin/pg_ctl -D $d/data -m fast stop" > /dev/null
  done
done
