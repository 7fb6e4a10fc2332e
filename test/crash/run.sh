#!/usr/bin/env bash
# run.sh -- the crash, wraparound and fault tests against a private
# installation of the extension (test/harness: $TIDES_PG_BINDIR, which
# scripts/test.sh makes once per run, else one of this tree, built now).
# Each test prints its own "<name>: P passed, F failed" line; the last line
# sums them up.
#
#   test/crash/run.sh check   CI size: vfs_keep unit test, 20 kill -9 cycles per
#                             sync mode and variant, wraparound, faults
#   test/crash/run.sh soak    300 cycles per sync mode and variant
#   test/crash/run.sh bench   commit rates and recovery time (RESULTS.md)
#
# Environment: TIDES_PG_BINDIR (the installation), TIDES_CRASH_DIR (work
# directory, default a new /tmp/tidesam-crash.XXXXXX, removed when all
# passed), TIDES_CRASH_SEED (reproduce a crash loop), CRASH_CYCLES,
# CRASH_MODES (none,interval,full), CRASH_VARIANTS (check: kill,keep; soak:
# kill,keep,backend).
# As root the servers run as the harness's user (TIDES_TEST_USER, default postgres).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
what=${1:-check}
if [[ -n ${TIDES_CRASH_DIR:-} ]]; then base=$TIDES_CRASH_DIR; own_base=0
else base=$(mktemp -d "${TMPDIR:-/tmp}/tidesam-crash.XXXXXX"); own_base=1; fi
mkdir -p "$base" build/crash
chmod 755 "$base"
echo "work directory: $base"
TIDES_PG_BINDIR=$(python3 test/harness/pgcluster.py bindir --tidesam) ||
  { echo "crash-$what: 0 passed, 1 failed (no private installation)"; exit 1; }
export TIDES_PG_BINDIR
total_p=0; total_f=0
out=$(mktemp)

run() {   # run NAME CMD...: add up the test's summary line
  local name=$1; shift
  echo "=== $name"
  "$@" 2>&1 | tee "$out"
  local line
  line=$(grep -E "^$name: [0-9]+ passed, [0-9]+ failed" "$out" | tail -n 1)
  if [ -z "$line" ]; then
    echo "$name: 0 passed, 1 failed (no summary line)"
    total_f=$((total_f + 1)); return
  fi
  total_p=$((total_p + $(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')))
  total_f=$((total_f + $(echo "$line" | sed -E 's/.*passed, ([0-9]+) failed.*/\1/')))
}

keep_test() {
  make -s build/crash/test_vfs_keep && build/crash/test_vfs_keep
}

case "$what" in
  check)
    run vfs_keep keep_test
    run crash python3 "$here/crash_loop.py" --cycles "${CRASH_CYCLES:-20}" --dir "$base/loop" \
        --modes "${CRASH_MODES:-none,interval,full,wal}" --variants "${CRASH_VARIANTS:-kill,keep}"
    run l0_full python3 "$here/l0_full.py" --dir "$base/l0_full" --cycles "${L0_FULL_CYCLES:-16}"
    run wraparound python3 "$here/wraparound.py" --dir "$base/wraparound"
    run faults python3 "$here/fault_test.py" --dir "$base/faults"
    run lost_rows python3 "$here/lost_rows.py" --dir "$base/lost_rows"
    run bulk_crash python3 "$here/bulk_crash.py" --dir "$base/bulk_crash" --cycles "${BULK_CRASH_CYCLES:-3}"
    ;;
  soak)
    run vfs_keep keep_test
    run crash python3 "$here/crash_loop.py" --cycles "${CRASH_CYCLES:-300}" --dir "$base/soak" \
        --modes "${CRASH_MODES:-none,interval,full,wal}" --variants "${CRASH_VARIANTS:-kill,keep,backend}"
    run wraparound python3 "$here/wraparound.py" --dir "$base/wraparound"
    run faults python3 "$here/fault_test.py" --dir "$base/faults"
    run lost_rows python3 "$here/lost_rows.py" --dir "$base/lost_rows"
    run bulk_crash python3 "$here/bulk_crash.py" --dir "$base/bulk_crash" --cycles "${BULK_CRASH_CYCLES:-30}"
    ;;
  bench)
    run bench python3 "$here/bench.py" --dir "$base/bench"
    ;;
  *) echo "usage: $0 check|soak|bench" >&2; exit 2 ;;
esac
rm -f "$out"
[[ $own_base == 1 && $total_f == 0 ]] && rm -rf "$base"
echo "crash-$what: $total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
