#!/usr/bin/env bash
# bench/pg/run.sh -- run every tides-vs-heap comparison and write the summary.
#
#   bash bench/pg/run.sh [full|quick]
#
# full  (make bench):       about 40 minutes on the 2-core project machine
# quick (make bench-quick): a few minutes, smoke test
#
# Needs the extension built (make; the make targets do that; it is then
# installed into a private copy of the server, see install_private.sh), root (initdb/pg_ctl run as the postgres user; the data
# directories go on loop devices), and /usr/bin/python3 with matplotlib.
# Output: bench/results/pg_*.csv, pg_*.png, pg_summary.md (quick: pg_quick_*).
# BENCH_SUITES=pgbench,oltp,copy selects suites; see bench/pg/README.md for
# the other BENCH_* variables.
set -uo pipefail
cd "$(dirname "$0")/../.."

profile=${1:-full}
case $profile in
  full) prefix=pg_ ;;
  quick) prefix=pg_quick_ ;;
  *) echo "usage: $0 [full|quick]" >&2; exit 2 ;;
esac
PY=${PYTHON:-/usr/bin/python3}

# what the harness needs beyond the build: Debian's python3 with matplotlib
# (the charts; a pyenv or venv python on PATH would not see Debian's
# package, hence /usr/bin/python3), pgbench (postgresql-client-15), losetup
# and mkfs.ext4 for the per-cluster loop filesystems, findmnt/lsblk for the
# machine description.  Installed with apt-get when missing, as root.
need=()
"$PY" -c 'import matplotlib' 2>/dev/null || need+=(python3-matplotlib)
command -v mkfs.ext4 >/dev/null || need+=(e2fsprogs)
command -v losetup >/dev/null || need+=(util-linux)
if (( ${#need[@]} )); then
  if [[ $EUID -eq 0 ]]; then
    echo "=== apt-get install ${need[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" ||
      { echo "apt-get install ${need[*]} failed" >&2; exit 1; }
  else
    echo "missing ${need[*]} (run as root to install them with apt-get)" >&2
    exit 1
  fi
fi
results=${BENCH_RESULTS:-bench/results}
suites=${BENCH_SUITES:-pgbench,oltp,copy}
mkdir -p "$results"

# the summary must come from this run only
for s in pgbench oltp copy; do
  if [[ ",$suites," == *",$s,"* ]]; then
    rm -f "$results/${prefix}${s}.csv" "$results/${prefix}${s}.meta.json"
  fi
done

# the build under test, in a private installation (BENCH_PG=system: use the
# extension installed in the system directories instead)
if [[ ${BENCH_PG:-private} != system ]]; then
  PG_BINDIR=$(bash bench/pg/install_private.sh) || exit 1
  export PG_BINDIR
  echo "=== private PostgreSQL installation with this tree's tidesam: $PG_BINDIR"
fi

trap 'echo "interrupted" >&2; exit 130' INT TERM
start=$(date +%s)
rc=0
declare -A script=([pgbench]=pgbench_std.py [oltp]=oltp_idx.py [copy]=copy_load.py)
for s in pgbench oltp copy; do
  [[ ",$suites," == *",$s,"* ]] || continue
  echo "=== bench/pg/${script[$s]} --profile $profile"
  if ! "$PY" "bench/pg/${script[$s]}" --profile "$profile"; then
    echo "*** ${script[$s]} failed" >&2
    rc=1
  fi
done
"$PY" bench/pg/report.py --prefix "$prefix" || rc=1
echo "=== $profile benchmark finished in $(( $(date +%s) - start )) s; see $results/${prefix}summary.md"
exit $rc
