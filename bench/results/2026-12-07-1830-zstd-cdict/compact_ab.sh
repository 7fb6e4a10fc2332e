#!/bin/bash
# compact_ab.sh ROUNDS: tides_compact() of a freshly loaded table with the Insert Benchmark's
# three tides_btree indexes (8 flushes of 150,000 rows), builds a and n alternating on one
# cluster; prints the wall time of tides_compact() (one process, CPU-bound) and the bytes
# compaction wrote meanwhile
source /work/s18/pg.sh
L=/work/main/build/pg-private/usr/lib/postgresql/15/lib
P="$B/psql -h /tmp/pr -p 5499 -d dbt -X -qAt"
for r in $(seq 1 $1); do
 for v in a n; do
  install -m755 /work/tidesam-z$v.so $L/tidesam.so
  su postgres -c "$B/pg_ctl -D /tmp/pr/data -l /tmp/pr/log -w restart >/dev/null"
  su postgres -c "$P" >/dev/null <<'S'
DROP TABLE IF EXISTS zc;
CREATE TABLE zc (transactionid bigserial, dateandtime timestamp, cashregisterid int, customerid int, productid int, price int, data varchar(4000)) USING tides;
CREATE INDEX zc_m ON zc USING tides_btree (productid, customerid, price);
CREATE INDEX zc_r ON zc USING tides_btree (cashregisterid, customerid, price);
CREATE INDEX zc_p ON zc USING tides_btree (price, dateandtime, customerid);
SELECT tides_compact();
S
  for i in $(seq 1 8); do
   su postgres -c "$P -c \"INSERT INTO zc (dateandtime, cashregisterid, customerid, productid, price, data) SELECT now() + g * interval '1 ms', (random()*999)::int, (random()*99999)::int, (random()*9999)::int, (random()*499)::int, md5(g::text)::varchar(10) FROM generate_series(1, 150000) g\""
   su postgres -c "$P -c 'select tides_flush()'" >/dev/null
  done
  sleep 5
  su postgres -c "$P" <<'S' | tr '\n' ' '
SELECT value FROM tides_stats() WHERE name = 'compaction_bytes_written' \gset w0_
\timing on
SELECT tides_compact();
\timing off
SELECT 'written', value - :w0_value FROM tides_stats() WHERE name = 'compaction_bytes_written';
SELECT 'size', pg_size_pretty(tides_total_relation_size('zc'));
S
  echo " <- r$r $v"
 done
done
