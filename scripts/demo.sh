#!/usr/bin/env bash
# scripts/demo.sh -- the README's first command: set up everything and run the
# pgbench comparison of tides against heap on a throwaway cluster.
#
#   bash scripts/demo.sh              install packages, build and install the
#                                     extension, compare tides with heap
#                                     (~5 minutes after the build: 6 runs of 30 s)
#   DEMO_QUICK=1 bash scripts/demo.sh the same in about 2 minutes
#   bash scripts/demo.sh bench        the whole benchmark instead (make bench,
#                                     < 30 min; bench/results/pg_summary.md)
#   bash scripts/demo.sh bench-quick  its smoke version (make bench-quick)
#
# The extension is installed into a private copy of the server under
# build/pg-private (test/harness/pgcluster.py install; /var/tmp/tidesam-pg.*
# when the postgres user cannot enter the clone), never into the system
# directories.  DEMO_SKIP_BUILD=1 skips packages and build and uses the
# extension installed in the server that PG_BINDIR (or pg_config) names.
#
# The comparison: pgbench tpcb-like and select-only at scale DEMO_SCALE
# (20, fits in shared_buffers), DEMO_CLIENTS (4) clients, DEMO_DURATION (30)
# seconds a run, tides against heap at matched durability:
#   relaxed  heap synchronous_commit=off  vs  tides.sync_mode=none
#   strict   heap synchronous_commit=on   vs  tides.sync_mode=full
# Every run starts from a fresh pgbench -i, and after each run
# sum(pgbench_accounts.abalance) must equal sum(pgbench_history.delta).
# Prints tps, tides/heap ratios and p99 latency, then stops and removes the
# cluster (also on Ctrl-C).  Run as root on Debian 12 (scripts/deps.sh
# installs packages; initdb and the server run as the postgres user).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
source test/harness/cluster.sh

mode=${1:-demo}
case $mode in
  demo|bench|bench-quick) ;;
  -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
  *) echo "usage: $0 [demo|bench|bench-quick]" >&2; exit 2 ;;
esac

say() { printf '\n[demo] %s\n' "$*"; }

# ---- 1. packages, build, install (DEMO_SKIP_BUILD=1: use what is installed)
if [[ ${DEMO_SKIP_BUILD:-0} != 1 ]]; then
  if [[ $EUID -eq 0 ]]; then
    say "installing packages (scripts/deps.sh)"
    bash scripts/deps.sh
  else
    say "not root: skipping scripts/deps.sh and assuming the packages are installed"
  fi
  say "building the extension (make)"
  make -s -j"$(nproc)"
  # installed into a private copy of the server (test/harness), not into the
  # system directories: the demo must not change what other clusters on
  # this machine load, and a later build of someone else's must not change
  # what the demo measures
  say "installing it into a private copy of PostgreSQL (test/harness/pgcluster.py install)"
  PG_BINDIR=$(pgc install --no-build)
  export PG_BINDIR
fi

if [[ $mode == bench ]]; then exec bash bench/pg/run.sh full; fi
if [[ $mode == bench-quick ]]; then exec bash bench/pg/run.sh quick; fi

# ---- 2. settings
if [[ ${DEMO_QUICK:-0} == 1 ]]; then
  SCALE=${DEMO_SCALE:-10}; DURATION=${DEMO_DURATION:-12}
else
  SCALE=${DEMO_SCALE:-20}; DURATION=${DEMO_DURATION:-30}
fi
CLIENTS=${DEMO_CLIENTS:-4}
THREADS=$(( CLIENTS < $(nproc) ? CLIENTS : $(nproc) ))
PGBIN=${PG_BINDIR:-$(pg_config --bindir)}

# ---- 3. the throwaway cluster (test/harness: initdb and the server run as postgres)
WORK=$(mktemp -d "${DEMO_DIR:-/var/tmp}/tidesam-demo.XXXXXX")
# the port only names the socket in $WORK/sock; DEMO_PORT, or one of 56300-56399
PORT=${DEMO_PORT:-$(( 56300 + RANDOM % 100 ))}

cleaned=0
cleanup() {
  local rc=${1:-0}
  [[ $cleaned == 1 ]] && return
  cleaned=1
  if [[ $rc != 0 && -s $WORK/server.log ]]; then
    echo "[demo] failed (exit $rc); the end of the server log:" >&2
    tail -n 25 "$WORK/server.log" >&2
  fi
  pgc destroy "$WORK" >/dev/null 2>&1 || rm -rf "$WORK"
}
trap 'cleanup $?' EXIT
trap 'echo; echo "[demo] interrupted: removing the cluster" >&2; cleanup; exit 130' INT TERM HUP

say "creating a throwaway cluster in $WORK (socket $WORK/sock, port $PORT)"
pgc init "$WORK" --bindir "$PGBIN" --port "$PORT" --set "max_connections = 50" --set "shared_buffers = 1GB" \
  --set "wal_buffers = 16MB" --set "max_wal_size = 8GB" --set "min_wal_size = 1GB" \
  --set "checkpoint_timeout = 30min" --set "jit = off" --set "client_min_messages = warning" \
  --set "tides.memtable_size = 64MB" --set "tides.block_cache_size = 512MB" --set "tides.compression = lz4"
pgc start "$WORK" --timeout 120

export PGHOST=$(pgc get "$WORK" sock) PGPORT=$PORT PGUSER=$(pgc user)
unset PGDATABASE PGOPTIONS
psql_q() { "$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

set_durability() {  # relaxed | strict
  if [[ $1 == strict ]]; then
    psql_q -d postgres -c "ALTER SYSTEM SET tides.sync_mode = 'full'" -c "ALTER SYSTEM SET synchronous_commit = 'on'"
  else
    psql_q -d postgres -c "ALTER SYSTEM SET tides.sync_mode = 'none'" -c "ALTER SYSTEM SET synchronous_commit = 'off'"
  fi
  psql_q -d postgres -c "SELECT pg_reload_conf()" >/dev/null
  sleep 0.5
}

fresh_db() {  # am
  psql_q -d postgres -c "DROP DATABASE IF EXISTS bench_$1" -c "CREATE DATABASE bench_$1"
  psql_q -d "bench_$1" -c "CREATE EXTENSION tidesam"
  PGOPTIONS="-c default_table_access_method=$1" "$PGBIN/pgbench" -i -q -s "$SCALE" "bench_$1" >"$WORK/init.log" 2>&1 ||
    { cat "$WORK/init.log"; exit 1; }
  psql_q -d "bench_$1" -c "CHECKPOINT"
}

p99_ms() {  # per-transaction log files -> 99th percentile latency in ms
  local n idx
  n=$(cat "$@" | awk '$3 ~ /^[0-9]+$/' | wc -l)
  (( n > 0 )) || { echo "-"; return; }
  idx=$(( (n * 99 + 99) / 100 ))
  cat "$@" | awk '$3 ~ /^[0-9]+$/ { print $3 }' | sort -n | sed -n "${idx}p" | awk '{ printf "%.2f", $1 / 1000 }'
}

declare -A TPS P99 CHECK
run_one() {  # workload durability am
  local wl=$1 dur=$2 am=$3 flags=() logdir out
  [[ $wl == select-only ]] && flags=(-S)
  fresh_db "$am"
  logdir=$WORK/log.$wl.$dur.$am
  mkdir -p "$logdir"
  out=$(cd "$logdir" && "$PGBIN/pgbench" -n "${flags[@]}" -c "$CLIENTS" -j "$THREADS" -T "$DURATION" \
          -l --log-prefix="$logdir/pgb" "bench_$am" 2>&1) || { echo "$out"; exit 1; }
  TPS[$wl.$dur.$am]=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' <<<"$out")
  P99[$wl.$dur.$am]=$(p99_ms "$logdir"/pgb.*)
  rm -rf "$logdir"
  local sums
  sums=$(psql_q -d "bench_$am" -c "SELECT (SELECT coalesce(sum(abalance), 0) FROM pgbench_accounts) || ' ' || (SELECT coalesce(sum(delta), 0) FROM pgbench_history)")
  if [[ ${sums% *} == "${sums#* }" ]]; then CHECK[$wl.$dur.$am]=ok; else CHECK[$wl.$dur.$am]="MISMATCH($sums)"; fi
  local failed
  failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")
  [[ -z $failed || $failed == 0 ]] || CHECK[$wl.$dur.$am]+=" failed=$failed"
  printf '[demo]   %-11s %-7s %-5s  tps %10.1f   p99 %7s ms   check %s\n' "$wl" "$dur" "$am" \
    "${TPS[$wl.$dur.$am]}" "${P99[$wl.$dur.$am]}" "${CHECK[$wl.$dur.$am]}"
  psql_q -d postgres -c "DROP DATABASE bench_$am"
}

RUNS=("tpcb-like relaxed" "tpcb-like strict" "select-only relaxed")
say "pgbench -s $SCALE, $CLIENTS clients, $DURATION s per run; heap and tides alternate, fresh init before each run"
first=heap
for r in "${RUNS[@]}"; do
  read -r wl dur <<<"$r"
  set_durability "$dur"
  if [[ $first == heap ]]; then order=(heap tides); first=tides; else order=(tides heap); first=heap; fi
  for am in "${order[@]}"; do run_one "$wl" "$dur" "$am"; done
done

# ---- 4. the table
say "results ($(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo) RAM, $("$PGBIN/postgres" --version | sed 's/.*) //'), load average $(cut -d' ' -f1-3 /proc/loadavg))"
printf '\n%-12s %-33s %10s %10s %11s %12s %12s  %s\n' workload durability "heap tps" "tides tps" "tides/heap" \
  "heap p99 ms" "tides p99 ms" "sum check (heap, tides)"
bad=0
for r in "${RUNS[@]}"; do
  read -r wl dur <<<"$r"
  if [[ $dur == strict ]]; then d="strict (sc=on / sync_mode=full)"; else d="relaxed (sc=off / sync_mode=none)"; fi
  [[ $wl == select-only ]] && d="read-only"
  h=${TPS[$wl.$dur.heap]}; t=${TPS[$wl.$dur.tides]}
  ratio=$(awk -v h="$h" -v t="$t" 'BEGIN { if (h > 0) printf "%.2fx", t / h; else print "-" }')
  printf '%-12s %-33s %10.0f %10.0f %11s %12s %12s  %s, %s\n' "$wl" "$d" "$h" "$t" "$ratio" \
    "${P99[$wl.$dur.heap]}" "${P99[$wl.$dur.tides]}" "${CHECK[$wl.$dur.heap]}" "${CHECK[$wl.$dur.tides]}"
  [[ ${CHECK[$wl.$dur.heap]} == ok && ${CHECK[$wl.$dur.tides]} == ok ]] || bad=1
done
echo
echo "One run per point on a shared machine: for medians of repeated runs, latency percentiles,"
echo "bytes written, sizes and the other workloads run 'make bench' (bench/results/pg_summary.md)."
say "stopping and removing the cluster"
cleanup
exit $bad
