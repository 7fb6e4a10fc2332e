#!/usr/bin/env bash
# bench/pg/install_private.sh -- install the tidesam built in this tree into a
# private copy of the PostgreSQL installation, and print its bin directory.
#
#   bin=$(bash bench/pg/install_private.sh)     # after make
#
# The benchmark starts many throwaway clusters over half an hour; with the
# extension in the system directories, anyone's `make install` meanwhile
# would change the build under test between clusters.  The shared harness
# does the work (test/harness/pgcluster.py install): a copy of the installed
# server under build/pg-private (or, when the postgres user cannot reach the
# tree, /var/tmp/tidesam-pg.<hash of the tree's path>; BENCH_PG_ROOT/root if
# set), refreshed when the installed server changes, with `make install
# DESTDIR=...` on top.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ -f tidesam.so ]] || { echo "tidesam.so not built: run make first" >&2; exit 1; }
exec python3 test/harness/pgcluster.py install --no-build ${BENCH_PG_ROOT:+--dest "$BENCH_PG_ROOT/root"}
