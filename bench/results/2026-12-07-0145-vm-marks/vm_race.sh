#!/bin/bash
# scratch: the 020 workload; args: pgbench -f specs...
cd /work/main; source test/harness/cluster.sh
PGBIN=/work/main/build/pg-private/usr/lib/postgresql/15/bin
W=/var/tmp/vmt15; PORT=56417
P() { $PGBIN/psql -h $W/sock -p $PORT -U postgres -X -q -d postgres "$@"; }
pgc destroy $W >/dev/null 2>&1 || rm -rf $W
pgc init "$W" --bindir "$PGBIN" --port $PORT --set "autovacuum = off" --set "log_statement = none" >/dev/null
pgc start "$W" --timeout 120 >/dev/null
P -c "CREATE EXTENSION tidesam" -c "CREATE TABLE vm (id int, k int, pad text) USING tides" -c "CREATE UNIQUE INDEX vm_id ON vm USING tides_btree (id)" -c "CREATE INDEX vm_k ON vm USING tides_btree (k)" -c "INSERT INTO vm SELECT g, g, repeat('x', 20) FROM generate_series(1, 20000) g" -c "CREATE SEQUENCE vm_next START 20001" -c "VACUUM vm" -c "CREATE TABLE res (ios int, isc int, seq int, ts int, bm int)"
cd /work/s15/vmt
$PGBIN/pgbench -n -c 6 -j 2 -T ${T:-15} "$@" -h $W/sock -p $PORT -U postgres postgres > pgb.out 2>&1; grep -E "aborted|processed|division|rror" pgb.out | head -5
P -c "select count(*), count(*) filter (where ios<>seq or ios<>isc or ios<>ts or bm<>seq) from res" -c "select * from res where ios<>seq or ios<>isc or ios<>ts or bm<>seq limit 10"
[[ -n $KEEP ]] || pgc stop $W >/dev/null
