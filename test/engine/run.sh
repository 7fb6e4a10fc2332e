#!/usr/bin/env bash
# run.sh -- run engine test programs, one line per program, and a summary.
# Usage: run.sh PROGRAM...
set -uo pipefail
pass=0; fail=0
for t in "$@"; do
  name=$(basename "$t")
  log=$(mktemp)
  start=$(date +%s.%N)
  if "$t" >"$log" 2>&1; then
    printf 'PASS engine/%s (%.1fs)\n' "$name" "$(echo "$(date +%s.%N) - $start" | bc)"
    pass=$((pass+1))
  else
    printf 'FAIL engine/%s\n' "$name"; tail -n 30 "$log" | sed 's/^/    /'
    fail=$((fail+1))
  fi
  rm -f "$log"
done
echo "engine: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
