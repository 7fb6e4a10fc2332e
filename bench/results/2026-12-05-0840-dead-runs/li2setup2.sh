#!/bin/bash
# scratch: two l.i2-like tables (ibench columns, tides_btree PK + 3 secondary), ibench's autovacuum settings
export TIDES_PG_BINDIR=/work/main/build/pg-private/usr/lib/postgresql/15/bin; B=$TIDES_PG_BINDIR
P="python3 /work/main/test/harness/pgcluster.py"
PS="$B/psql -h /tmp/xi/sock -p 5494 -U postgres -d postgres -qAt"
$P stop /tmp/xi >/dev/null 2>&1; rm -rf /tmp/xi
$P init /tmp/xi --port 5494 --set shared_buffers=128MB --set tides.memtable_size=32MB --set tides.memtable_count=4 --set tides.block_cache_size=256MB --set synchronous_commit=off --set max_wal_size=8GB --set tides.index_method=tides_btree --set autovacuum_naptime=10s --set autovacuum_vacuum_scale_factor=0.02 --set autovacuum_vacuum_insert_scale_factor=0.05 --set autovacuum_analyze_scale_factor=0.05 --set autovacuum_vacuum_cost_limit=2000 --set log_autovacuum_min_duration=0 >/dev/null && $P start /tmp/xi >/dev/null
su postgres -c "$PS -c 'CREATE EXTENSION tidesam'"
for n in t1 t2; do
su postgres -c "$PS -c 'CREATE TABLE $n (transactionid bigserial PRIMARY KEY, dateandtime timestamp, cashregisterid int NOT NULL, customerid int NOT NULL, productid int NOT NULL, price int NOT NULL, data varchar(4000)) USING tides' -c \"INSERT INTO $n (dateandtime, cashregisterid, customerid, productid, price, data) SELECT now(), floor(random() * 1000)::int, floor(random() * 100000)::int, floor(random() * 10000)::int, floor(random() * 500)::int, substr(md5(random()::text), 1, 10) FROM generate_series(1, 1000000)\" -c 'CREATE INDEX ON $n (productid, customerid, price)' -c 'CREATE INDEX ON $n (cashregisterid, customerid, price)' -c 'CREATE INDEX ON $n (price, dateandtime, customerid)' -c 'VACUUM ANALYZE $n'"
sed "s/ t / $n /g; s/FROM t /FROM $n /; s/INTO t /INTO $n /" /tmp/li2.sql > /tmp/li2_$n.sql; chmod 644 /tmp/li2_$n.sql
done
