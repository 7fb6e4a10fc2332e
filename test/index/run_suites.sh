#!/usr/bin/env bash
# test/index/run_suites.sh -- PostgreSQL's own suites with tides tables and
# tides.index_method = tides_btree (every PRIMARY KEY, UNIQUE and CREATE INDEX
# without USING on a tides table becomes a tides_btree index).
#
#   test/index/run_suites.sh [run.sh options]     e.g. --port 56250 --quiet
#
# Accepted differences: test/pg_suites/accepted_differences (those of the
# tides table access method and the extension's catalog rows) plus
# test/index/accepted_differences.tides_btree (output that names the index
# access method, and plans), concatenated.  The server: as run.sh --tides finds it
# (TIDES_PG_BINDIR, else a private installation of this tree).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
accepted="$(mktemp "${TMPDIR:-/tmp}/tidesam-index-accepted.XXXXXX")"
trap 'rm -f "$accepted"' EXIT
cat "$repo/test/pg_suites/accepted_differences" "$here/accepted_differences.tides_btree" >"$accepted"
chmod a+r "$accepted"
bash "$repo/test/pg_suites/run.sh" --tides --set 'tides.index_method = tides_btree' \
    --accepted "$accepted" "$@"
