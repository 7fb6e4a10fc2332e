#!/usr/bin/env bash
# test/index/verify_pgbench.sh -- tides_verify_index after a concurrent
# pgbench run with tides.index_method = tides_btree, and after a kill -9 of
# the whole server and a restart.
#
#   test/index/verify_pgbench.sh [SCALE] [SECONDS] [CLIENTS]     default 10 120 4
#
# On a throwaway cluster (test/harness: TIDES_PG_BINDIR, PORT) with
# default_table_access_method = tides and tides.index_method = tides_btree:
#   1. pgbench -i -s SCALE: its primary keys must be tides_btree indexes;
#   2. pgbench -c CLIENTS -j 2 -T SECONDS (TPC-B-like): no client errors;
#      then every tides_btree index of the database must verify clean, and
#      the TPC-B balances must agree (sum of account, teller and branch
#      balances = sum of history deltas);
#   3. pgbench again, and SECONDS / 4 into it the postmaster and every
#      backend get SIGKILL; start again (the engine replays its log), then
#      the same checks as in 2, plus pgbench_accounts's row count = 100000 *
#      SCALE (read through its primary key and with a sequential scan).
# The last line is "index_verify: P passed, F failed" (one per check).
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SCALE="${1:-10}"
SECONDS_RUN="${2:-120}"
CLIENTS="${3:-4}"
source "$REPO/test/harness/cluster.sh"
CL="$(mktemp -d "${TMPDIR:-/tmp}/tidesam-index.XXXXXX")"
trap 'pgc destroy "$CL"' EXIT
cpsql() { pgc psql "$CL" "$@"; }

pass=0
fail=0
check() {  # NAME CONDITION-RESULT(0/1) [DETAIL]
    if [[ "$2" == 0 ]]; then
        pass=$((pass + 1)); echo "ok    $1"
    else
        fail=$((fail + 1)); echo "FAIL  $1${3:+: $3}"
    fi
}
finish() {
    echo "index_verify: $pass passed, $fail failed"
    [[ $fail -eq 0 ]]
    exit
}
pgb() { pgc run "$CL" "$(pgc get "$CL" bindir)/pgbench" "$@"; }

# every tides_btree index of the database, verified: prints the problems
verify_all() {
    cpsql -d bench -At -c "
        SELECT c.relname || ': ' || p.problem
        FROM pg_class c JOIN pg_am a ON a.oid = c.relam AND a.amname = 'tides_btree',
             LATERAL tides_verify_index(c.oid) p
        WHERE c.relkind = 'i'"
}

balances() {  # prints 't' when the TPC-B sums agree
    cpsql -d bench -At -c "
        SELECT (SELECT sum(abalance) FROM pgbench_accounts) = (SELECT coalesce(sum(delta), 0) FROM pgbench_history)
           AND (SELECT sum(tbalance) FROM pgbench_tellers) = (SELECT coalesce(sum(delta), 0) FROM pgbench_history)
           AND (SELECT sum(bbalance) FROM pgbench_branches) = (SELECT coalesce(sum(delta), 0) FROM pgbench_history)"
}

checks_after() {  # PHASE
    local problems n
    problems="$(verify_all 2>&1)"
    n="$(printf '%s' "$problems" | grep -c . || true)"
    check "$1: tides_verify_index clean on every tides_btree index" "$([[ -z "$problems" ]]; echo $?)" \
        "$n problems, first: $(printf '%s\n' "$problems" | head -n 3 | tr '\n' ';')"
    check "$1: TPC-B balances agree with the history" "$([[ "$(balances 2>&1)" == t ]]; echo $?)"
}

pgc init "$CL" --regress-conf ${PORT:+--port "$PORT"} --set "default_table_access_method = tides" \
    --set "tides.index_method = tides_btree" --set "max_connections = 50" || { check "initdb" 1; finish; }
echo "== cluster $CL (binaries $(pgc get "$CL" bindir), port $(pgc get "$CL" port))"
pgc start "$CL" --timeout 300 || { check "server start" 1; finish; }
cpsql -d postgres -c "CREATE DATABASE bench" && cpsql -d bench -c "CREATE EXTENSION tidesam" ||
    { check "create database and extension" 1; finish; }

echo "== 1. pgbench -i -s $SCALE"
t0=$(date +%s)
pgb -i -q -s "$SCALE" bench >"$CL/init.log" 2>&1
rc=$?
check "pgbench -i ($(( $(date +%s) - t0 )) s)" "$rc" "$(tail -n 3 "$CL/init.log" | tr '\n' ' ')"
nidx="$(cpsql -d bench -At -c "
    SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    JOIN pg_am a ON a.oid = c.relam
    WHERE a.amname = 'tides_btree' AND i.indrelid::regclass::text IN
          ('pgbench_accounts', 'pgbench_branches', 'pgbench_tellers') AND i.indisprimary")"
check "pgbench's three primary keys are tides_btree" "$([[ "$nidx" == 3 ]]; echo $?)" "found $nidx"

echo "== 2. pgbench -c $CLIENTS -T $SECONDS_RUN"
pgb -n -c "$CLIENTS" -j 2 -T "$SECONDS_RUN" bench >"$CL/run.log" 2>&1
rc=$?
grep -E "^(number of (transactions actually processed|failed)|tps)" "$CL/run.log"
check "pgbench run without errors" "$rc" "$(grep -iE 'error|abort' "$CL/run.log" | head -n 3 | tr '\n' ' ')"
checks_after "after pgbench"

echo "== 3. pgbench, kill -9 after $((SECONDS_RUN / 4)) s, restart"
pgb -n -c "$CLIENTS" -j 2 -T "$SECONDS_RUN" bench >"$CL/run2.log" 2>&1 &
bench_pid=$!
sleep $((SECONDS_RUN / 4))
pgc kill9 "$CL"
sleep 1
wait "$bench_pid" 2>/dev/null
pgc start "$CL" --timeout 300
check "restart after kill -9" $?
checks_after "after kill -9 and restart"
rows="$(cpsql -d bench -At -c "
    SET enable_seqscan = off; SET enable_bitmapscan = off;
    SELECT count(*) FROM pgbench_accounts WHERE aid > 0;
    RESET enable_seqscan; SET enable_indexscan = off; SET enable_indexonlyscan = off;
    SELECT count(*) FROM pgbench_accounts;" | tr '\n' ' ')"
check "pgbench_accounts has $((SCALE * 100000)) rows by index and by sequential scan" \
    "$([[ "$rows" == "$((SCALE * 100000)) $((SCALE * 100000)) " ]]; echo $?)" "got $rows"
pgc log-problems "$(pgc get "$CL" log)" >"$CL/crashes.txt"
check "no server process crashed by itself" "$([[ ! -s "$CL/crashes.txt" ]]; echo $?)" \
    "$(head -n 3 "$CL/crashes.txt" | tr '\n' ' ')"
finish
