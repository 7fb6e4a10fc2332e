#!/usr/bin/env bash
# test.sh -- the whole test suite (the README's second command; .ci/run calls it).
#
# Installs what it needs, builds the extension and installs it into one private
# copy of the PostgreSQL installation for this run (test/harness; never into
# the system directories, so two checkouts can test at once), runs every
# suite against it and ends with the line "N passed, M failed" (the sum over
# all suites).
# Each suite prints its own "<suite>: P passed, F failed" line; a suite that
# prints none counts as one failure.  Logs: $TIDES_TEST_LOG (build/test-logs).
set -uo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)

if ! bash scripts/deps.sh; then
  echo "dependency installation failed"
  echo "0 passed, 1 failed"
  exit 1
fi

log_dir=${TIDES_TEST_LOG:-build/test-logs}
mkdir -p "$log_dir"
jobs=$(nproc 2>/dev/null || echo 2)
# this run's private installation (TIDES_PG_BINDIR, set by the build suite)
run_tmp=$(mktemp -d "${TMPDIR:-/tmp}/tidesam-test.XXXXXX")
chmod 755 "$run_tmp"
trap 'rm -rf "$run_tmp"' EXIT
total_pass=0
total_fail=0

# run_suite NAME COMMAND...: runs COMMAND, which prints "<name>: P passed, F failed"
run_suite() {
  local name=$1; shift
  local out="$log_dir/$name.log" t0=$(date +%s) line p f
  echo "=== $name: $*"
  "$@" >"$out" 2>&1
  line=$(grep -E '^[a-z_/ -]+: [0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
  if [ -z "$line" ]; then
    tail -n 30 "$out"
    echo "$name: did not report a result (see $out)"
    total_fail=$((total_fail + 1))
    return
  fi
  p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
  f=$(echo "$line" | sed -E 's/.*passed, ([0-9]+) failed.*/\1/')
  [ "$f" -eq 0 ] || grep -E 'FAIL|not ok|FAILED|failed:' "$out" | head -n 40
  echo "$line   ($(( $(date +%s) - t0 )) s)"
  total_pass=$((total_pass + p))
  total_fail=$((total_fail + f))
}

# the extension itself: build, and install into this run's private copy of
# PostgreSQL, which every suite below uses (a build failure fails them all)
build() {
  local bindir
  export TIDES_PG_BINDIR=$run_tmp/none
  if make -j"$jobs" && bindir=$(python3 test/harness/pgcluster.py install --no-build --dest "$run_tmp/pg"); then
    TIDES_PG_BINDIR=$bindir
    echo "private installation: $bindir"
    echo "build: 1 passed, 0 failed"
  else
    echo "build: 0 passed, 1 failed"
  fi
}

run_suite build            build
# the layering of ARCHITECTURE.md: include lines, symbols, no cycle, hooks only
# in src/module, no test file system in tidesam.so (needs the build above)
run_suite layers           bash scripts/check_layers.sh
run_suite engine           make -s -j"$jobs" engine-check
run_suite fuzz             make -s fuzz-smoke
run_suite pg_suites        bash test/pg_suites/run.sh --tides --quiet --timeout 1800 --outdir "$log_dir/pg_suites"
run_suite extension        bash test/ext/run.sh --outdir "$log_dir/ext"
# issue 17: test/ext's pg_dump and no_preload checks from a clone of HEAD in a
# mode-700 directory, which the server user cannot enter (builds there)
run_suite locked_clone     bash test/harness/locked_clone.sh
run_suite crash            make -s crash-check
# tides_btree: key encodings against the b-tree comparators (random seeds), and
# tides_verify_index after a short pgbench run and a kill -9 (src/index/README.md)
run_suite index_encode     bash test/index/encode_property.sh --cluster 3 2000
run_suite index_verify     bash test/index/verify_pgbench.sh 2 30 4
# TAP tests (PostgreSQL::Test::Cluster): standby, base backups, PITR, crashes,
# refusals, pg_upgrade; counted per assertion (test/tap/run.sh)
run_suite tap              bash test/tap/run.sh

echo "total time $(( $(date +%s) - started )) s"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
