#!/usr/bin/env bash
# test/ext/run.sh -- the extension's own tests on throwaway clusters.
#
#   test/ext/run.sh                 build, install, run everything on tides
#   test/ext/run.sh --am heap       the reference run: the same tests on heap
#                                   (no extension; "tides" is an access method
#                                   with heap's handler, and the tides_*
#                                   functions are stand-ins, see heap_reference.sql)
#   test/ext/run.sh T1 T2 ...       only these regress tests / isolation specs
#
# Needs root (or the user that owns the PostgreSQL installation's files for
# --system-install); as root the servers run as the postgres user.
#
# Options:
#   --am tides|heap   (default tides)
#   --commit REV      test a clean export (git archive) of commit REV instead
#                     of the working tree
#   --system-install  make install into the system's PostgreSQL (shared with
#                     everybody else on the machine).  Default: the private
#                     installation in $TIDES_PG_BINDIR (scripts/test.sh makes
#                     one per run), else a new private copy of the PostgreSQL
#                     installation in the run directory (test/harness:
#                     make install DESTDIR=...), so that runs and other
#                     people's installs do not interfere
#   --no-build        no make: test the tidesam already installed in the system
#   --keep            keep the cluster directory (stopped)
#   --outdir DIR      results (default build/ext-test); emptied first
#   --accept          with --am heap: copy the results over expected/ and
#                     test/isolation/expected/ (not for tests listed in
#                     NO_REFERENCE below, nor index_* unless named)
#   --timeout SECS    per pg_regress / pg_isolation_regress run (default 1800)
#
# What runs (tides):
#   1. make && make install (DESTDIR: a private copy of PostgreSQL), unless
#      $TIDES_PG_BINDIR names one already
#   2. cluster 1 (test/harness): initdb, postgresql.conf += test/regress.conf, start
#   3. pg_regress, phase 1: every sql/*.sql except *_restart and *_crash;
#      tests that have a *_restart / *_crash companion (same prefix before
#      "_<digit>") run last, since they leave prepared transactions behind
#   4. pg_ctl restart -m fast;  pg_regress --use-existing: sql/*_restart.sql
#   5. pg_ctl stop -m immediate; start;  pg_regress --use-existing: sql/*_crash.sql
#   6. pg_isolation_regress: test/isolation/*.spec
#   7. checks run here (expected output in test/ext/expected/):
#        pg_dump      pg_dump -Fc / createdb / pg_restore round trip, md5 of contents
#        pgbench      pgbench -i -s 10 and -c 4 for TIDES_PGBENCH_SECONDS (60) on
#                     tides: no failed transaction, balances = history deltas
#        monitor      cluster 1 restarted with pg_stat_statements: it counts tides
#                     blocks; a VACUUM's pg_stat_progress_vacuum sampled while it runs
#        no_preload   cluster 2 without shared_preload_libraries: the error and hint
#        bad_conf     cluster 2 with invalid tides.* values in postgresql.conf
#        packaging    META.json (PGXN spec, version = default_version), update chain
#        server_log   no server process crashed (both clusters' logs)
#   8. one line: "extension: P passed, F failed"
{
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PG_MAJOR="${PG_MAJOR:-15}"
SYS_BINDIR="/usr/lib/postgresql/$PG_MAJOR/bin"
PG_BINDIR="$SYS_BINDIR"
source "$REPO/test/harness/cluster.sh"
PGXS_TEST="/usr/lib/postgresql/$PG_MAJOR/lib/pgxs/src/test"
PG_REGRESS="$PGXS_TEST/regress/pg_regress"
PG_ISOLATION_REGRESS="$PGXS_TEST/isolation/pg_isolation_regress"
export LC_ALL=C LANG=C
unset LANGUAGE PGDATABASE PGHOST PGPORT PGUSER PGOPTIONS

# tests whose expected output cannot come from the heap reference run
# (tides-only settings and functions); their expected files are written by hand
NO_REFERENCE="bad_input scan_vacant vacant_held ext_privileges ext_versions ddl_tablespace monitor_io monitor_views settings_reload space_drop_index bulk_1 bulk_2_crash bulk_visibility flush_place unique_probe plan_cache"

AM=tides
BUILD=1
COMMIT=""
SYSTEM_INSTALL=0
KEEP=0
ACCEPT=0
TIMEOUT=1800
OUTDIR="$REPO/build/ext-test"
SELECTED=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --am) AM="$2"; shift ;;
        --no-build) BUILD=0 ;;
        --commit) COMMIT="$2"; shift ;;
        --system-install) SYSTEM_INSTALL=1 ;;
        --keep) KEEP=1 ;;
        --accept) ACCEPT=1 ;;
        --outdir) OUTDIR="$2"; shift ;;
        --timeout) TIMEOUT="$2"; shift ;;
        -h|--help) sed -n '2,48p' "$0"; exit 0 ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) SELECTED+=("$1") ;;
    esac
    shift
done
[[ "$AM" == tides || "$AM" == heap ]] || { echo "--am tides|heap" >&2; exit 2; }
[[ $ACCEPT -eq 0 || "$AM" == heap ]] || { echo "--accept needs --am heap" >&2; exit 2; }
[[ "$OUTDIR" = /* ]] || OUTDIR="$PWD/$OUTDIR"

log() { printf '[ext] %s\n' "$*" >&2; }

PASS=0
FAIL=0
FAILED_NAMES=()
result() {  # result NAME ok|FAILED [detail]
    if [[ "$2" == ok ]]; then
        PASS=$((PASS + 1))
    else
        FAIL=$((FAIL + 1))
        FAILED_NAMES+=("$1")
    fi
    printf '%-10s %-34s %s %s\n' "$3" "$1" "$2" "${4:-}" | tee -a "$OUTDIR/summary.txt"
}
finish() {
    echo
    if [[ ${#FAILED_NAMES[@]} -gt 0 ]]; then
        echo "failed: ${FAILED_NAMES[*]}"
    fi
    echo "results in $OUTDIR"
    echo "extension: $PASS passed, $FAIL failed"
    exit $([[ $FAIL -eq 0 ]] && echo 0 || echo 1)
}

rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"
: >"$OUTDIR/summary.txt"

# ------------------------------------------------------------- run user -----
# as root the servers and clients run as the harness's user (postgres), in
# the cluster's directory (test/harness/pgcluster.py)
RUN_USER="$(pgc user)"

W="$(mktemp -d "${TMPDIR:-/tmp}/tidesam-ext.XXXXXX")"
chmod 755 "$W"
# C1: the cluster of the tests; C2: the second one (no_preload, bad_conf).
# CUR: the one that psql_q, as_user and psql_script talk to
C1="$W/c1"
C2="$W/c2"
CUR="$C1"
as_user() { pgc run "$CUR" env LC_ALL=C PGTZ=America/Los_Angeles PGDATESTYLE="Postgres, MDY" PGISOLATIONTIMEOUT=60 "$@"; }

CLIENT_PID=""
cleanup() {
    local rc=$? d
    trap - EXIT INT TERM
    [[ -n "$CLIENT_PID" ]] && kill -TERM -- "-$CLIENT_PID" 2>/dev/null
    for d in "$C1" "$C2"; do
        [[ -f "$d/data/postmaster.pid" ]] && pgc stop "$d" --mode immediate --timeout 60 >/dev/null 2>&1
    done
    if [[ $KEEP -eq 1 ]]; then log "cluster kept in $W"; else rm -rf "$W"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- build -----
SRC="$REPO"
if [[ "$AM" == tides && $BUILD -eq 1 ]]; then
    if [[ -n "$COMMIT" ]]; then
        SRC="$W/src"
        mkdir -p "$SRC"
        (cd "$REPO" && git archive "$COMMIT") | tar -x -C "$SRC" ||
            { result build FAILED setup "git archive $COMMIT"; finish; }
    fi
    build_rc=0
    if [[ $SYSTEM_INSTALL -eq 1 ]]; then
        log "make && make install (source: ${COMMIT:-working tree})"
        (cd "$SRC" && make -s -j"$(nproc)" && make -s install) >"$OUTDIR/build.log" 2>&1 || build_rc=1
    elif [[ -n "${TIDES_PG_BINDIR:-}" && -z "$COMMIT" ]]; then
        PG_BINDIR="$TIDES_PG_BINDIR"
        log "the private installation of this run: $PG_BINDIR"
        : >"$OUTDIR/build.log"
    else
        # a private, relocated copy of the installation (test/harness)
        log "make && make install into a private PostgreSQL installation in $W/inst (source: ${COMMIT:-working tree})"
        PG_BINDIR="$(pgc install --src "$SRC" --dest "$W/inst" 2>"$OUTDIR/build.log")" || build_rc=1
    fi
    if [[ $build_rc -ne 0 || ! -x "$PG_BINDIR/postgres" ]]; then
        tail -n 40 "$OUTDIR/build.log" >&2
        result build FAILED setup "(see build.log)"
        finish
    fi
fi
if [[ "$AM" == tides && $BUILD -eq 0 && -n "${TIDES_PG_BINDIR:-}" ]]; then
    # --no-build means the system's tidesam; a private one named here is not it
    log "warning: --no-build tests the tidesam of $PG_BINDIR, not the one in TIDES_PG_BINDIR=$TIDES_PG_BINDIR (drop --no-build to test that)"
fi
SO="$("$PG_BINDIR/pg_config" --pkglibdir 2>/dev/null)/tidesam.so"
{
    echo "source: ${COMMIT:-working tree} of $REPO at $(cd "$REPO" && git rev-parse --short HEAD)$( [[ -z "$COMMIT" && -n "$(cd "$REPO" && git status --porcelain --untracked-files=no)" ]] && echo ' + uncommitted changes')"
    [[ "$AM" == tides ]] && echo "tidesam.so: $(md5sum <"$SO" 2>/dev/null | cut -c1-32) $SO"
} | tee "$OUTDIR/build-id.txt" >&2

# ---------------------------------------------------------- test inputs -----
mkdir -p "$W/regress/sql" "$W/regress/expected" "$W/isolation/specs" "$W/isolation/expected" "$W/checks"
cp "$REPO"/sql/*.sql "$W/regress/sql/" 2>/dev/null
cp "$REPO"/expected/*.out "$W/regress/expected/" 2>/dev/null
cp "$REPO"/test/isolation/*.spec "$W/isolation/specs/" 2>/dev/null
cp "$REPO"/test/isolation/expected/*.out "$W/isolation/expected/" 2>/dev/null
# pg_regress stops at the first test without an expected file: give those an
# empty one here (they fail, and their results are kept)
for f in "$REPO"/sql/*.sql; do
    [[ -f "$f" ]] || continue
    t="$(basename "$f" .sql)"
    [[ -f "$W/regress/expected/$t.out" ]] || : >"$W/regress/expected/$t.out"
done
for f in "$REPO"/test/isolation/*.spec; do
    [[ -f "$f" ]] || continue
    t="$(basename "$f" .spec)"
    [[ -f "$W/isolation/expected/$t.out" ]] || : >"$W/isolation/expected/$t.out"
done
# the checks' SQL files: read by psql as the server's user, who may not be
# able to enter the repository (issue 17)
cp "$REPO"/test/ext/*.sql "$W/checks/"
chown -R "$RUN_USER" "$W"

all_regress=()
for f in "$REPO"/sql/*.sql; do [[ -f "$f" ]] && all_regress+=("$(basename "$f" .sql)"); done
all_isolation=()
for f in "$REPO"/test/isolation/*.spec; do [[ -f "$f" ]] && all_isolation+=("$(basename "$f" .spec)"); done
selected() {  # is $1 selected (or nothing selected)?
    [[ ${#SELECTED[@]} -eq 0 ]] && return 0
    local s
    for s in "${SELECTED[@]}"; do [[ "$s" == "$1" ]] && return 0; done
    return 1
}
ALL_CHECKS=(pg_dump pgbench monitor no_preload bad_conf packaging)
for s in "${SELECTED[@]}"; do
    found=0
    for t in "${all_regress[@]}" "${all_isolation[@]}" "${ALL_CHECKS[@]}" server_log; do
        [[ "$t" == "$s" ]] && found=1
    done
    [[ $found -eq 1 ]] || { echo "no test named $s" >&2; exit 2; }
done

# regress phases
phase1=(); phase1_last=(); phase2=(); phase3=()
prefix_of() { sed -E 's/_[0-9].*$//' <<<"$1"; }
restart_prefixes=" "
for t in "${all_regress[@]}"; do
    case "$t" in *_restart|*_crash) restart_prefixes+="$(prefix_of "$t") " ;; esac
done
for t in "${all_regress[@]}"; do
    selected "$t" || continue
    if [[ "$AM" == heap && " $NO_REFERENCE " == *" $t "* ]]; then
        log "$t: no heap reference (expected output written by hand), skipped"
        continue
    fi
    case "$t" in
        *_restart) phase2+=("$t") ;;
        *_crash) phase3+=("$t") ;;
        *) if [[ "$restart_prefixes" == *" $(prefix_of "$t") "* ]]; then phase1_last+=("$t"); else phase1+=("$t"); fi ;;
    esac
done
phase1+=("${phase1_last[@]}")
iso=()
for t in "${all_isolation[@]}"; do
    selected "$t" || continue
    if [[ "$AM" == heap && " $NO_REFERENCE " == *" $t "* ]]; then
        log "$t: no heap reference (expected output written by hand), skipped"
        continue
    fi
    iso+=("$t")
done
run_check() { selected "$1" && [[ "$AM" == tides ]]; }

# -------------------------------------------------------------- clusters -----
# new_cluster DIR PRELOAD(yes|no) LOG: test/regress.conf (without the
# preload and tides.* lines for PRELOAD no), fsync off
new_cluster() {
    local preload=()
    [[ "$2" == yes ]] || preload=(--no-preload)
    pgc init "$1" --bindir "$PG_BINDIR" --log "$3" --regress-conf "${preload[@]}" --set "fsync = off"
}
start_cluster() {  # DIR [LOG]
    pgc start "$1" --core --timeout 120 ${2:+--log "$2"} >/dev/null 2>&1 ||
        { tail -n 30 "${2:-$(pgc get "$1" log)}" >&2; return 1; }
}
stop_cluster() {  # DIR MODE
    pgc stop "$1" --mode "$2" --timeout 120 >/dev/null 2>&1
}
psql_q() { as_user "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }

LOG1="$W/postmaster.log"
if ! new_cluster "$C1" "$([[ $AM == tides ]] && echo yes || echo no)" "$LOG1" || ! start_cluster "$C1"; then
    cp "$LOG1" "$OUTDIR/" 2>/dev/null
    result cluster FAILED setup
    finish
fi
cp "$C1/data/postgresql.conf" "$OUTDIR/postgresql.conf"
log "am=$AM, cluster $W, $(psql_q -d postgres -Atc 'select version()')"

# the heap reference run makes its databases itself: "tides" is heap there
make_reference_db() {  # DBNAME
    psql_q -d postgres -c "DROP DATABASE IF EXISTS \"$1\"" -c "CREATE DATABASE \"$1\" TEMPLATE=template0" >/dev/null &&
    psql_q -d "$1" -c "ALTER DATABASE \"$1\" SET lc_messages TO 'C'" -c "ALTER DATABASE \"$1\" SET lc_monetary TO 'C'" \
        -c "ALTER DATABASE \"$1\" SET lc_numeric TO 'C'" -c "ALTER DATABASE \"$1\" SET lc_time TO 'C'" \
        -c "ALTER DATABASE \"$1\" SET bytea_output TO 'hex'" -c "ALTER DATABASE \"$1\" SET timezone_abbreviations TO 'Default'" \
        -f "$W/checks/heap_reference.sql" >/dev/null
}

# run_regress KIND PHASE USE_EXISTING TESTS...   (KIND regress|isolation)
run_regress() {
    local kind="$1" phase="$2" existing="$3"; shift 3
    [[ $# -gt 0 ]] || return 0
    local out="$W/out-$phase" db cmd rc=0 t line status detail
    mkdir -p "$out/tablespace"
    chown -R "$RUN_USER" "$out"
    if [[ "$kind" == regress ]]; then
        db=contrib_regression
        cmd=("$PG_REGRESS" --inputdir="$W/regress" --bindir="$PG_BINDIR")
    else
        db=isolation_regression
        cmd=("$PG_ISOLATION_REGRESS" --inputdir="$W/isolation")
    fi
    cmd+=(--outputdir="$out" --host="$(pgc get "$C1" sock)" --port="$(pgc get "$C1" port)" --dbname="$db")
    if [[ "$existing" == yes ]]; then
        cmd+=(--use-existing)
    elif [[ "$AM" == heap ]]; then
        make_reference_db "$db" || { for t in "$@"; do result "$t" FAILED "$kind"; done; return; }
        cmd+=(--use-existing)
    else
        cmd+=(--load-extension=tidesam)
    fi
    log "$kind $phase: $*"
    printf '%q ' "${cmd[@]}" "$@" >"$OUTDIR/$phase.cmd"
    setsid timeout --kill-after=30 "$TIMEOUT" "$HARNESS_PYTHON" "$HARNESS_DIR/pgcluster.py" run "$C1" \
        env LC_ALL=C PGISOLATIONTIMEOUT=60 "${cmd[@]}" "$@" >"$out/pg_regress.log" 2>&1 &
    CLIENT_PID=$!
    wait "$CLIENT_PID" || rc=$?
    CLIENT_PID=""
    cat "$out/pg_regress.log" >>"$OUTDIR/pg_regress.log"
    [[ $rc -eq 124 || $rc -eq 137 ]] && log "$kind $phase timed out after ${TIMEOUT}s"
    mkdir -p "$OUTDIR/results" "$OUTDIR/diffs"
    [[ -d "$out/results" ]] && cp "$out"/results/*.out "$OUTDIR/results/" 2>/dev/null
    [[ -f "$out/regression.diffs" ]] && cp "$out/regression.diffs" "$OUTDIR/diffs/$phase.diffs"
    for t in "$@"; do
        line="$(grep -E "^(test| ) *$t +\.\.\. " "$out/pg_regress.log" | tail -n 1)"
        if [[ "$line" =~ \.\.\.\ ok ]]; then status=ok
        elif [[ -z "$line" ]]; then status=FAILED; line="not run"
        else status=FAILED
        fi
        detail=""
        if [[ $status != ok ]]; then
            detail="$(sed -E 's/.*\.\.\. *//; s/ +[0-9]+ ms$//; s/^FAILED *//' <<<"$line")"
            [[ -s "$out/results/$t.out.diff" || -f "$out/regression.diffs" ]] && detail+=" (see diffs/$phase.diffs)"
        fi
        result "$t" "$status" "$kind" "$detail"
    done
}

run_regress regress phase1 no "${phase1[@]}"
if [[ ${#phase2[@]} -gt 0 ]]; then
    log "restart (fast shutdown)"
    if stop_cluster "$C1" fast && start_cluster "$C1"; then
        run_regress regress phase2 yes "${phase2[@]}"
    else
        for t in "${phase2[@]}"; do result "$t" FAILED regress "server did not restart"; done
    fi
fi
if [[ ${#phase3[@]} -gt 0 ]]; then
    log "crash (immediate shutdown) and restart"
    if stop_cluster "$C1" immediate && start_cluster "$C1"; then
        run_regress regress phase3 yes "${phase3[@]}"
    else
        for t in "${phase3[@]}"; do result "$t" FAILED regress "server did not restart"; done
    fi
fi
run_regress isolation isolation no "${iso[@]}"

# ----------------------------------------------------------------- checks -----
# compare_check NAME: $W/checks/NAME.out against test/ext/expected/NAME.out
compare_check() {
    cp "$W/checks/$1.out" "$OUTDIR/results/$1.out"
    if diff -u "$REPO/test/ext/expected/$1.out" "$W/checks/$1.out" >"$OUTDIR/diffs/$1.diffs" 2>&1; then
        rm -f "$OUTDIR/diffs/$1.diffs"
        result "$1" ok check
    else
        result "$1" FAILED check "(see diffs/$1.diffs)"
    fi
}
# psql_script DB FILE: like pg_regress runs a test (echo, errors without file names)
psql_script() {
    as_user "$PG_BINDIR/psql" -X -a -q -d "$1" <"$2" 2>&1
}
mkdir -p "$OUTDIR/results" "$OUTDIR/diffs"
chown "$RUN_USER" "$W/checks"

if run_check pg_dump; then
    log "pg_dump / pg_restore round trip"
    {
        echo "-- tides_dump_src: CREATE EXTENSION tidesam; dump_setup.sql"
        psql_q -d postgres -c "CREATE DATABASE tides_dump_src" &&
        psql_q -d tides_dump_src -c "CREATE EXTENSION tidesam" -f "$W/checks/dump_setup.sql" >/dev/null &&
        echo "-- tides_dump_heap: heap_reference.sql; dump_setup.sql (the same on heap)" &&
        psql_q -d postgres -c "CREATE DATABASE tides_dump_heap TEMPLATE template0" &&
        psql_q -d tides_dump_heap -f "$W/checks/heap_reference.sql" -f "$W/checks/dump_setup.sql" >/dev/null &&
        echo "-- pg_dump -Fc tides_dump_src" &&
        as_user "$PG_BINDIR/pg_dump" -Fc -d tides_dump_src -f "$W/checks/dump.fc" &&
        echo "-- createdb tides_dump_dst; pg_restore -d tides_dump_dst" &&
        psql_q -d postgres -c "CREATE DATABASE tides_dump_dst TEMPLATE template0" &&
        as_user "$PG_BINDIR/pg_restore" --exit-on-error -d tides_dump_dst "$W/checks/dump.fc" &&
        echo "-- contents of tides_dump_src" &&
        psql_script tides_dump_src "$W/checks/dump_check.sql" | tee "$W/checks/src.txt" &&
        psql_script tides_dump_heap "$W/checks/dump_check.sql" >"$W/checks/heap.txt" &&
        psql_script tides_dump_dst "$W/checks/dump_check.sql" >"$W/checks/dst.txt" &&
        echo "-- tides_dump_src and tides_dump_heap hold the same" &&
        diff "$W/checks/heap.txt" "$W/checks/src.txt" &&
        echo "-- tides_dump_dst (restored) and tides_dump_src hold the same" &&
        diff "$W/checks/src.txt" "$W/checks/dst.txt" &&
        echo "ok"
    } >"$W/checks/pg_dump.out" 2>&1
    compare_check pg_dump
fi

# pgbench on tides (issue 3): initialise scale 10, run 4 clients, then every
# balance must equal the sum of its history deltas and no transaction failed
if run_check pgbench; then
    secs=${TIDES_PGBENCH_SECONDS:-60}
    log "pgbench -i -s 10, then -c 4 for $secs s"
    {
        psql_q -d postgres -c "CREATE DATABASE tides_pgbench" &&
        psql_q -d tides_pgbench -c "CREATE EXTENSION tidesam" \
            -c "ALTER DATABASE tides_pgbench SET default_table_access_method = tides" &&
        as_user "$PG_BINDIR/pgbench" -i -q -s 10 tides_pgbench >"$W/checks/pgbench-init.log" 2>&1 &&
        psql_q -d tides_pgbench -At -c "SELECT 'tables on tides: ' || count(*) FROM pg_class c JOIN pg_am a ON a.oid = c.relam
                                         WHERE c.relname LIKE 'pgbench\_%' AND c.relkind = 'r' AND a.amname = 'tides'" &&
        as_user "$PG_BINDIR/pgbench" -c 4 -j 2 -T "$secs" tides_pgbench >"$W/checks/pgbench-run.log" 2>&1 &&
        sed -nE 's/^number of failed transactions: ([0-9]+).*/failed transactions: \1/p' "$W/checks/pgbench-run.log" &&
        psql_q -d tides_pgbench -At \
            -c "SELECT 'transactions ran: ' || (count(*) > 1000) FROM pgbench_history" \
            -c "SELECT 'accounts match history: ' || ((SELECT sum(abalance) FROM pgbench_accounts) = (SELECT sum(delta) FROM pgbench_history))" \
            -c "SELECT 'tellers match history: ' || ((SELECT sum(tbalance) FROM pgbench_tellers) = (SELECT sum(delta) FROM pgbench_history))" \
            -c "SELECT 'branches match history: ' || ((SELECT sum(bbalance) FROM pgbench_branches) = (SELECT sum(delta) FROM pgbench_history))" \
            -c "SELECT 'accounts: ' || count(*) FROM pgbench_accounts"
    } >"$W/checks/pgbench.out" 2>&1
    grep -E '^(tps|number of failed|latency average)' "$W/checks/pgbench-run.log" >&2 || true
    cp "$W/checks/pgbench-init.log" "$W/checks/pgbench-run.log" "$OUTDIR/results/" 2>/dev/null || true
    compare_check pgbench
fi

# monitor: pg_stat_statements counts tides blocks (cluster 1 restarted with
# pg_stat_statements preloaded), and a VACUUM of a tides table shows its
# progress in pg_stat_progress_vacuum (sampled while it runs, slowed down by
# the cost-based delay, which counts engine blocks)
vacuum_progress() {
    local samples="$W/checks/vacuum-progress.txt" vblocks pid i
    vblocks="$(psql_q -d tides_monitor -At -c "SELECT (max(id) + 290) / 291 FROM mon_t")"
    : >"$samples"
    as_user "$PG_BINDIR/psql" -X -q -d tides_monitor \
        -c "SET vacuum_cost_delay = 5" -c "SET vacuum_cost_limit = 10" -c "VACUUM mon_t" &
    pid=$!
    for ((i = 0; i < 2400; i++)); do
        psql_q -d tides_monitor -At -F ' ' -c "SELECT phase, heap_blks_total, heap_blks_scanned, max_dead_tuples, num_dead_tuples
                                               FROM pg_stat_progress_vacuum WHERE relid = 'mon_t'::regclass" >>"$samples" 2>/dev/null
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    wait "$pid" || echo "VACUUM failed"
    cp "$samples" "$OUTDIR/results/" 2>/dev/null
    awk -v vb="$vblocks" '
        /^scanning heap / { scan++; if ($3 == vb) tot++; if ($4 > 0) seen[$4] = 1; if ($5 > 0) maxd++; if ($6 > 0) dead++ }
        { rows++ }
        END {
            n = 0; for (k in seen) n++
            print "progress rows seen: " (rows > 0 ? "yes" : "no")
            print "phase \"scanning heap\" seen: " (scan > 0 ? "yes" : "no")
            print "heap_blks_total = the table'"'"'s virtual blocks: " (scan > 0 && tot == scan ? "yes" : "no")
            print "heap_blks_scanned moved: " (n > 1 ? "yes" : "no")
            print "max_dead_tuples set: " (maxd > 0 ? "yes" : "no")
            print "num_dead_tuples counted: " (dead > 0 ? "yes" : "no")
        }' "$samples"
    psql_q -d tides_monitor -At -c "SELECT 'after VACUUM: progress rows ' || count(*) FROM pg_stat_progress_vacuum WHERE relid = 'mon_t'::regclass" \
        -c "SELECT 'after VACUUM: dead versions ' || n_dead_tup || ', vacuumed ' || (last_vacuum IS NOT NULL) FROM pg_stat_user_tables WHERE relname = 'mon_t'"
}
if run_check monitor; then
    log "monitor: pg_stat_statements and pg_stat_progress_vacuum"
    {
        stop_cluster "$C1" fast &&
        echo "shared_preload_libraries = 'tidesam,pg_stat_statements'    # run.sh: monitor" >>"$C1/data/postgresql.conf" &&
        start_cluster "$C1" &&
        psql_q -d postgres -c "CREATE DATABASE tides_monitor" &&
        psql_q -d tides_monitor -c "CREATE EXTENSION tidesam" &&
        psql_script tides_monitor "$W/checks/monitor.sql" &&
        echo "-- VACUUM mon_t, pg_stat_progress_vacuum sampled meanwhile" &&
        vacuum_progress
    } >"$W/checks/monitor.out" 2>&1
    compare_check monitor
fi

# cluster 2: no preload (no_preload), then bad tides.* values (bad_conf)
LOG2="$W/postmaster2.log"
if run_check no_preload || run_check bad_conf; then
    stop_cluster "$C1" fast    # one cluster at a time (the engine's shared memory)
    new_cluster "$C2" yes "$LOG2" || result cluster2 FAILED setup
    CUR="$C2"
fi
DATA2="$C2/data"
if run_check no_preload; then
    log "no_preload"
    # a database that already has the extension and a tides table, then the
    # server restarted without shared_preload_libraries
    {
        start_cluster "$C2" &&
        psql_q -d postgres -c "CREATE DATABASE had_tides" &&
        psql_q -d had_tides -c "CREATE EXTENSION tidesam" \
            -c "CREATE TABLE t (id int) USING tides" -c "INSERT INTO t VALUES (1), (2)" &&
        stop_cluster "$C2" fast &&
        sed -i -E 's/^[[:space:]]*shared_preload_libraries.*$/# (removed by run.sh: no_preload)/' "$DATA2/postgresql.conf" &&
        start_cluster "$C2" &&
        psql_q -d postgres -c "CREATE DATABASE no_tides" &&
        echo "-- database without the extension" &&
        psql_script no_tides "$W/checks/no_preload_new.sql" &&
        echo "-- database that has the extension and a tides table" &&
        psql_script had_tides "$W/checks/no_preload_existing.sql" &&
        stop_cluster "$C2" fast
    } >"$W/checks/no_preload.out" 2>&1
    compare_check no_preload
fi
if run_check bad_conf; then
    log "bad_conf"
    # invalid values in postgresql.conf: the server must say which setting
    # is wrong (PostgreSQL warns for an extension's settings and keeps the
    # default) and must not crash
    {
        sed -i -E 's/^# \(removed by run.sh: no_preload\)$//' "$DATA2/postgresql.conf"
        grep -q "^shared_preload_libraries" "$DATA2/postgresql.conf" ||
            echo "shared_preload_libraries = 'tidesam'" >>"$DATA2/postgresql.conf"
        cat >>"$DATA2/postgresql.conf" <<'EOF'
# ---- bad_conf
tides.memtable_size = '64 parsecs'
tides.memtable_count = 100
tides.memtables_per_flush = 4
tides.memtable_discard_after = '3 fortnights'
tides.block_cache_size = 0
tides.sync_mode = 'sometimes'
tides.compression = 'gzip'
tides.compaction_workers = 'many'
tides.index_method = 'hash'
tides.trust_strxfrm = 'perhaps'
tides.l0_slowdown_files = 3
tides.delayed_write_rate = 0
tides.no_such_setting = 1
EOF
        echo "-- server start with invalid tides.* settings"
        start_cluster "$C2" "$W/bad_conf.log" && echo "started"
        echo "-- server log lines naming tides settings"
        grep -oE '(WARNING|FATAL|ERROR|LOG|DETAIL|HINT):.*tides\..*' "$W/bad_conf.log" | sort
        echo "-- settings in effect"
        psql_script postgres "$W/checks/bad_conf.sql"
        stop_cluster "$C2" fast
        cat "$W/bad_conf.log" >>"$LOG2"
    } >"$W/checks/bad_conf.out" 2>&1
    compare_check bad_conf
fi

# packaging: META.json against the PGXN spec and tidesam.control's
# default_version, the update chain, debian/changelog (test/packaging/check_meta.py)
if run_check packaging; then
    log "packaging"
    python3 "$REPO/test/packaging/check_meta.py" "$REPO" >"$W/checks/packaging.out" 2>&1
    compare_check packaging
fi

# ------------------------------------------------------------ shutdown -----
for d in "$C1" "$C2"; do
    [[ -f "$d/data/postmaster.pid" ]] && stop_cluster "$d" fast
done
cp "$LOG1" "$OUTDIR/postmaster.log"
[[ -f "$LOG2" ]] && cp "$LOG2" "$OUTDIR/postmaster2.log"

if selected server_log; then
    crashes="$(cat "$LOG1" "${LOG2}" 2>/dev/null | grep -E 'terminated by signal|was terminated by exception|TRAP:|PANIC:' || true)"
    if [[ -z "$crashes" ]]; then
        result server_log ok check
    else
        printf '%s\n' "$crashes" >"$OUTDIR/diffs/server_log.diffs"
        n=0
        for core in "$C1"/data/core* "$C2"/data/core*; do
            [[ -f "$core" ]] || continue
            n=$((n + 1))
            gdb -batch -ex "bt 40" "$PG_BINDIR/postgres" "$core" >"$OUTDIR/core-$n.txt" 2>&1 || true
        done
        result server_log FAILED check "$(wc -l <<<"$crashes") crash line(s), see diffs/server_log.diffs"
    fi
fi

# ------------------------------------------------------------- accept -----
if [[ $ACCEPT -eq 1 ]]; then
    for f in "$OUTDIR"/results/*.out; do
        t="$(basename "$f" .out)"
        [[ " $NO_REFERENCE " == *" $t "* ]] && continue
        if [[ "$t" == index_* ]]; then
            named=0; for s in "${SELECTED[@]}"; do [[ "$s" == "$t" ]] && named=1; done
            [[ $named -eq 1 ]] || continue
        fi
        if [[ -f "$REPO/sql/$t.sql" ]]; then cp "$f" "$REPO/expected/$t.out"
        elif [[ -f "$REPO/test/isolation/$t.spec" ]]; then cp "$f" "$REPO/test/isolation/expected/$t.out"
        else continue
        fi
        log "accepted $t"
    done
fi

finish
}
