#!/bin/bash
# pksetup.sh: ibench-like table pk_t (tides, tides_btree PK) in /tmp/xl: 2M rows in PK order,
# then the lowest 300K deleted and 300K more inserted (upper-level files over the key range)
B=/work/main/build/pg-private/usr/lib/postgresql/15/bin
PS="$B/psql -h /tmp/xl/sock -p 5493 -U postgres -d postgres -qAt"
COLS="dateandtime, cashregisterid, customerid, productid, price, data"
GEN="now(), floor(random() * 1000)::int, floor(random() * 100000)::int, floor(random() * 10000)::int, floor(random() * 500)::int, substr(md5(random()::text), 1, 10)"
su postgres -c "$PS -c 'DROP TABLE IF EXISTS pk_t' -c 'SET tides.index_method = tides_btree' -c 'CREATE TABLE pk_t (transactionid bigserial PRIMARY KEY, dateandtime timestamp, cashregisterid int NOT NULL, customerid int NOT NULL, productid int NOT NULL, price int NOT NULL, data varchar(4000)) USING tides'"
for i in $(seq 1 20); do su postgres -c "$PS -c \"INSERT INTO pk_t ($COLS) SELECT $GEN FROM generate_series(1, 100000)\""; done
for i in $(seq 1 30); do su postgres -c "$PS -c \"DELETE FROM pk_t WHERE transactionid <= $((i * 10000))\" -c \"INSERT INTO pk_t ($COLS) SELECT $GEN FROM generate_series(1, 10000)\""; done
su postgres -c "$PS -c 'VACUUM ANALYZE pk_t' -c 'SELECT min(transactionid), max(transactionid), count(*) FROM pk_t'"
su postgres -c "$PS -c \"SELECT level, count(*), sum(size) FROM tides_files() GROUP BY level ORDER BY level\"" 2>&1 | head
