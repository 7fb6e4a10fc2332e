#!/usr/bin/env bash
# test/harness/locked_clone.sh -- the test harness from a clone that the
# server user cannot enter (issue 17).
#
#   bash test/harness/locked_clone.sh [TESTS...]     default: pg_dump no_preload
#
# git-clones the committed HEAD of this tree into a new mode-700 directory
# (as a clone under root's home is), and runs test/ext/run.sh TESTS from
# there: a build and a private installation made in that clone, and clients
# (psql, pg_dump, pg_restore) run as the server user.  Each must work and
# print what it prints from anywhere else.  Uncommitted changes are not in
# the clone (a note says so).  Ends with "locked_clone: P passed, F failed"
# (the counts of run.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
tests=("$@")
[[ ${#tests[@]} -gt 0 ]] || tests=(pg_dump no_preload)
source test/harness/cluster.sh
user=$(pgc user)

fail() { echo "$*"; echo "locked_clone: 0 passed, 1 failed"; exit 1; }
rev=$(git rev-parse HEAD) || fail "not a git checkout"
[[ -z "$(git status --porcelain --untracked-files=no)" ]] ||
  echo "note: uncommitted changes are not in the clone; it tests HEAD $rev"

# mktemp -d makes the directory mode 700
top=$(mktemp -d "${TMPDIR:-/tmp}/tidesam-locked.XXXXXX") || fail "mktemp failed"
trap 'rm -rf "$top"' EXIT
clone=$top/tidesam
if [[ $EUID -eq 0 ]] && runuser -u "$user" -- test -x "$top" 2>/dev/null; then
  fail "$user can enter $top: the check would prove nothing"
fi
git clone -q --no-checkout "$PWD" "$clone" && git -C "$clone" fetch -q origin HEAD &&
  git -C "$clone" checkout -q --detach FETCH_HEAD || fail "git clone of $PWD failed"
[[ "$(git -C "$clone" rev-parse HEAD)" == "$rev" ]] || fail "the clone is at $(git -C "$clone" rev-parse HEAD), not $rev"
echo "clone of $rev in $clone (mode $(stat -c %a "$top") $(stat -c %U "$top"))"

# the clone builds and installs on its own: no installation of this run
out=$(cd "$clone" && env -u TIDES_PG_BINDIR -u PG_BINDIR bash test/ext/run.sh "${tests[@]}" --outdir "$top/out" 2>&1)
rc=$?
printf '%s\n' "$out"
line=$(grep -E '^extension: [0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -n 1)
[[ -n $line ]] || fail "test/ext/run.sh printed no result (exit $rc)"
if grep -q FAILED <<<"$out"; then
  for f in "$top"/out/diffs/*.diffs; do [[ -f $f ]] && { echo "--- $f"; head -n 40 "$f"; }; done
fi
echo "locked_clone: ${line#extension: }"
