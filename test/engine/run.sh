#!/usr/bin/env bash
# run.sh -- run engine test programs, one line per program, and a summary.
# Usage: run.sh PROGRAM...
# A failing program's whole output is kept in build/test-logs/engine/NAME.log
# (the summary shows its last 30 lines): model and crash tests print the
# operation and keys of every failed check, which a flaky failure needs.
set -uo pipefail
keep=build/test-logs/engine
pass=0; fail=0
for t in "$@"; do
  name=$(basename "$t")
  log=$(mktemp)
  start=$(date +%s.%N)
  if "$t" >"$log" 2>&1; then
    printf 'PASS engine/%s (%.1fs)\n' "$name" "$(echo "$(date +%s.%N) - $start" | bc)"
    pass=$((pass+1))
  else
    printf 'FAIL engine/%s (whole output: %s/%s.log)\n' "$name" "$keep" "$name"
    tail -n 30 "$log" | sed 's/^/    /'
    mkdir -p "$keep" && cp "$log" "$keep/$name.log"
    fail=$((fail+1))
  fi
  rm -f "$log"
done
echo "engine: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
