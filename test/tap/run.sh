#!/usr/bin/env bash
# test/tap/run.sh -- the TAP tests (test/tap/t/*.pl), PostgreSQL's own style:
# PostgreSQL::Test::Cluster from the server's pgxs, run by prove's harness.
#
#   test/tap/run.sh [t/NNN_name.pl ...]        default: every file in t/
#   test/tap/run.sh soak/replication_soak.pl    the long run (make replication-soak)
#
# The extension must be built (make).  It is installed into a private copy of
# the PostgreSQL installation (bench/pg/install_private.sh; TIDES_PG_BIN names
# an existing one instead), whose bin directory comes first in PATH, so
# initdb, postgres, pg_config, pg_basebackup, pg_upgrade and pgbench are the
# private ones.  The tests run as the postgres user in a work directory under
# /var/tmp (TIDES_TAP_WORK); each file's clusters and logs stay in
# $work/tmp_check when it fails (PG_TEST_NOCLEAN=1 keeps them always).
#
# Counts are per assertion: P is the number of passing assertions over all
# files, F the failing ones plus one for every file that died, exited
# non-zero or ran a different number of assertions than it planned.
# The last line is "tap: P passed, F failed".
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$REPO"
tag=$(printf '%s' "$REPO" | sha1sum | cut -c1-12)
base=/var/tmp/tidesam-tap.$tag
# the soak gets an installation and a work directory of its own, so that it
# can run beside the tests
[[ " $* " == *soak/* ]] && base=/var/tmp/tidesam-soak.$tag

fail() { echo "$*" >&2; echo "tap: 0 passed, 1 failed"; exit 1; }

if [[ -n ${TIDES_PG_BIN:-} ]]; then
  bin=$TIDES_PG_BIN
else
  [[ -f tidesam.so ]] || fail "tidesam.so not built: run make first"
  bin=$(BENCH_PG_ROOT=$base/pg bash bench/pg/install_private.sh) || fail "private install failed"
fi
pgxs=$("$bin/pg_config" --pkglibdir)/pgxs
[[ -d $pgxs/src/test/perl/PostgreSQL/Test ]] || fail "no PostgreSQL::Test modules under $pgxs"
perl -MIPC::Run -e1 2>/dev/null || fail "IPC::Run missing: apt-get install libipc-run-perl (scripts/deps.sh)"

work=${TIDES_TAP_WORK:-$base/work}
rm -rf "$work"
mkdir -p "$work"
cp -r test/tap/t test/tap/soak test/tap/lib test/tap/harness.pl "$work/"
chown -R postgres:postgres "$work" 2>/dev/null || true

if [[ $# -gt 0 ]]; then
  tests=()
  for t in "$@"; do
    case $t in
      soak/*|*/soak/*) tests+=("soak/$(basename "$t")") ;;
      *) tests+=("t/$(basename "$t")") ;;
    esac
  done
else
  tests=()
  for t in test/tap/t/*.pl; do tests+=("t/$(basename "$t")"); done
fi
[[ ${#tests[@]} -gt 0 && -f test/tap/${tests[0]} ]] || fail "no test files: ${tests[*]}"

as_postgres=()
[[ $EUID -eq 0 ]] && as_postgres=(runuser -u postgres --)
cd "$work"
"${as_postgres[@]}" env PATH="$bin:$PATH" \
  PG_REGRESS="$pgxs/src/test/regress/pg_regress" \
  PERL5LIB="$pgxs/src/test/perl:$work/lib" \
  TESTDIR="$work" top_builddir="$work" \
  PG_TEST_TIMEOUT_DEFAULT="${PG_TEST_TIMEOUT_DEFAULT:-300}" \
  ${PG_TEST_NOCLEAN:+PG_TEST_NOCLEAN=1} ${SOAK_SECONDS:+SOAK_SECONDS=$SOAK_SECONDS} \
  perl harness.pl "${tests[@]/#/$work/}"
rc=$?
echo "logs: $work/tmp_check/log"
exit $rc
