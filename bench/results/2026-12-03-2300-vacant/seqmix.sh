# seqmix.sh BIN HOST PORT DB SECS : tellers+branches updates by seq scan, 16 clients
export PGOPTIONS="-c enable_indexscan=off -c enable_bitmapscan=off -c enable_indexonlyscan=off"
$1/pgbench -h $2 -p $3 -U postgres -n -M prepared -T $5 -c 16 -j 2 -f /dev/stdin $4 2>&1 <<'X' | grep -E "^tps|latency average"
\set bid random(1, 10)
\set tid random(1, 100)
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
END;
X
