#!/usr/bin/env bash
# test.sh -- the whole test suite (README's second command; .ci/run calls it).
# Installs what it needs, builds, runs every suite, and ends with the line
# "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh || { echo "dependency installation failed"; echo "0 passed, 1 failed"; exit 1; }

total_pass=0; total_fail=0
log_dir=${TIDES_TEST_LOG:-build/test-logs}
mkdir -p "$log_dir"

# run_suite NAME COMMAND...: the command prints "<name>: P passed, F failed"
run_suite() {
  local name=$1; shift
  local out="$log_dir/$name.log"
  echo "=== $name"
  "$@" 2>&1 | tee "$out" | grep -E '^(PASS|FAIL|ok|not ok|  )' || true
  local line
  line=$(grep -E '^[a-z_/ -]+: [0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
  if [ -z "$line" ]; then
    echo "$name: did not report a result (see $out)"
    total_fail=$((total_fail+1)); return
  fi
  local p f
  p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
  f=$(echo "$line" | sed -E 's/.*passed, ([0-9]+) failed.*/\1/')
  echo "$line"
  total_pass=$((total_pass+p)); total_fail=$((total_fail+f))
}

run_suite engine make -s engine-check

echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
