#!/usr/bin/env bash
# bench/ibench/run.sh -- the Insert Benchmark (bench/ibench/README.md).
#
#   bash bench/ibench/run.sh [full|quick]
#
# full  (make ibench):       both profiles (io, cached), three engines, < 60 min
# quick (make ibench-quick): small cap, small data, a few minutes
#
# Needs root (memory cgroups, loop devices; initdb/pg_ctl run as postgres),
# the extension built (the make targets build it; it is installed into a
# private copy of the server, bench/pg/install_private.sh), pgbench and
# /usr/bin/python3 with matplotlib (installed with apt-get when missing).
# Output: bench/results/ibench_{steps,timeseries}.csv, ibench_meta.json,
# ibench_summary.md, ibench_*.png (quick: ibench_quick_*).
set -uo pipefail
cd "$(dirname "$0")/../.."

mode=${1:-full}
case $mode in
  full) prefix=ibench_ ;;
  quick) prefix=ibench_quick_ ;;
  *) echo "usage: $0 [full|quick]" >&2; exit 2 ;;
esac
PY=${PYTHON:-/usr/bin/python3}

[[ $EUID -eq 0 ]] || { echo "ibench needs root (memory cgroups, loop devices)" >&2; exit 1; }
need=()
"$PY" -c 'import matplotlib' 2>/dev/null || need+=(python3-matplotlib)
command -v mkfs.ext4 >/dev/null || need+=(e2fsprogs)
command -v losetup >/dev/null || need+=(util-linux)
command -v pgbench >/dev/null || [[ -x /usr/lib/postgresql/15/bin/pgbench ]] || need+=(postgresql-client-15)
if (( ${#need[@]} )); then
  echo "=== apt-get install ${need[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" ||
    { echo "apt-get install ${need[*]} failed" >&2; exit 1; }
fi
if [[ ! -e /sys/fs/cgroup/memory/memory.limit_in_bytes ]] &&
   ! grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
  echo "no memory cgroup controller (v1 /sys/fs/cgroup/memory or v2 memory.max)" >&2
  exit 1
fi

results=${BENCH_RESULTS:-bench/results}
mkdir -p "$results"
rm -f "$results/${prefix}"steps.csv "$results/${prefix}"timeseries.csv "$results/${prefix}"meta.json

if [[ ${BENCH_PG:-private} != system ]]; then
  PG_BINDIR=$(bash bench/pg/install_private.sh) || exit 1
  export PG_BINDIR
  echo "=== private PostgreSQL installation with this tree's tidesam: $PG_BINDIR"
fi

trap 'echo "interrupted" >&2; exit 130' INT TERM
start=$(date +%s)
rc=0
"$PY" bench/ibench/ibench.py --mode "$mode" || rc=1
"$PY" bench/ibench/report.py --prefix "$prefix" || rc=1
echo "=== ibench $mode finished in $(( $(date +%s) - start )) s; see $results/${prefix}summary.md"
exit $rc
