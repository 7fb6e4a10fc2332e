#!/usr/bin/env bash
# Run PostgreSQL's own regression (parallel_schedule) and isolation
# (isolation_schedule) suites against a throwaway cluster, optionally with a
# different default table access method.  See README.md in this directory.
# The whole script is one { ... } block: bash parses it completely before
# running it, so editing or checking out this file during a run is harmless.
{
set -Eeuo pipefail
# say where an unexpected failure stopped the run (set -e alone is silent)
# shellcheck disable=SC2154
trap 'log_err=$?; printf "[pg_suites] ERROR: exit %s at line %s: %s\n" "$log_err" "$LINENO" "$BASH_COMMAND" >&2' ERR

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source=../harness/cluster.sh
source "$PG_SUITES_DIR/../harness/cluster.sh"

usage() {
    cat <<'EOF'
usage: test/pg_suites/run.sh [options]

Cluster / access method
  --am AM                 default_table_access_method = AM (default: heap, i.e. not set)
  --preload LIBS          shared_preload_libraries = 'LIBS'
  --load-extension EXT    CREATE EXTENSION EXT in every test database that
                          pg_regress / pg_isolation_regress create (repeatable)
  --tides                 shorthand for --am tides --preload tidesam --load-extension tidesam
  --set 'NAME = VALUE'    extra postgresql.conf line (repeatable)
  --conf FILE             append FILE to postgresql.conf (repeatable)
  --initdb-opts 'OPTS'    initdb options (default: '--encoding=UTF8 --locale=C')
  --port N                server port (default 5433x; the server listens on a
                          private unix socket only, so any free number works)
What to run
  --suite S               regress | isolation | all (default all; repeatable)
  --regress-tests 'T...'  run these regress tests instead of parallel_schedule
  --isolation-tests 'T..' run these isolation specs instead of isolation_schedule
  --max-concurrent-tests N  regress parallel group limit (default 20, as in PG's Makefile)
  --timeout SECS          per suite; pg_regress and its clients are stopped after SECS
                          and unfinished tests count as failed (default 1800, 0 = none)
Results
  --accepted FILE         accepted-differences file (default: test/pg_suites/accepted_differences)
  --outdir DIR            where results are kept (default: a new /tmp/tidesam-pgsuites-results.XXXXXX);
                          an existing DIR is emptied only if an earlier run.sh wrote it
  --keep-cluster          do not delete the temporary cluster (it is still stopped)
  --expected-overlay DIR  copy DIR/regress/*.out and DIR/isolation/*.out over
                          PostgreSQL's expected files (self-test, experiments)
  --run-as USER           when running as root: OS user for initdb/server/clients
                          (default postgres; created as a system user if missing)
  --quiet                 do not stream pg_regress progress to stderr

Environment: TIDES_CACHE (default /var/tmp/tidesam-cache), PG_MAJOR (15),
TIDES_PG_BINDIR (with tidesam: the private installation; default: one of this tree, made now).
Exit status: 0 all tests passed (possibly with accepted differences),
             1 some test failed, 2 harness error.
EOF
}

# ------------------------------------------------------------- options -----
AM=""
PRELOAD=""
EXTENSIONS=()
SETS=()
CONFS=()
INITDB_OPTS="--encoding=UTF8 --locale=C"
PORT=""
SUITES=()
REGRESS_TESTS=""
ISOLATION_TESTS=""
MAX_CONC=20
TIMEOUT=1800
ACCEPTED="$PG_SUITES_DIR/accepted_differences"
OUTDIR=""
KEEP_CLUSTER=0
RUN_AS=""
QUIET=0
OVERLAY=""

need_arg() { [[ $# -ge 2 ]] || { echo "option $1 needs an argument" >&2; usage >&2; exit 2; }; }
abspath() { [[ "$1" = /* ]] && printf '%s\n' "$1" || printf '%s/%s\n' "$PWD" "$1"; }
while [[ $# -gt 0 ]]; do
    case "$1" in
        --am) need_arg "$@"; AM="$2"; shift ;;
        --preload) need_arg "$@"; PRELOAD="$2"; shift ;;
        --load-extension) need_arg "$@"; EXTENSIONS+=("$2"); shift ;;
        # tidesam's four background workers (flush, sync, maintenance, one
        # compaction) hold max_worker_processes slots: 8 + 4 leaves parallel
        # query the workers it has with heap (select_parallel counts them);
        # tides.tablespaces = ignore: the tablespace test (and a few others)
        # place tables in tablespaces, which tides refuses by default
        # (docs/operations.md, "Tablespaces"); the publication test publishes
        # tables that are tides tables here, which tidesam refuses unless told
        # not to (src/runtime/publications.c); the suites test the rest
        --tides) AM=tides; PRELOAD=tidesam; EXTENSIONS+=(tidesam)
                 SETS+=("max_worker_processes = 12" "tides.tablespaces = ignore"
                        "tides.check_publications = off") ;;
        --set) need_arg "$@"; SETS+=("$2"); shift ;;
        --conf) need_arg "$@"; CONFS+=("$(abspath "$2")"); shift ;;
        --initdb-opts) need_arg "$@"; INITDB_OPTS="$2"; shift ;;
        --port) need_arg "$@"; PORT="$2"; shift ;;
        --suite) need_arg "$@"; case "$2" in
                     regress|isolation) SUITES+=("$2") ;;
                     all) SUITES+=(regress isolation) ;;
                     *) echo "bad --suite $2" >&2; exit 2 ;;
                 esac; shift ;;
        --regress-tests) need_arg "$@"; REGRESS_TESTS="$2"; shift ;;
        --isolation-tests) need_arg "$@"; ISOLATION_TESTS="$2"; shift ;;
        --max-concurrent-tests) need_arg "$@"; MAX_CONC="$2"; shift ;;
        --timeout) need_arg "$@"; TIMEOUT="$2"; shift ;;
        --accepted) need_arg "$@"; ACCEPTED="$(abspath "$2")"; shift ;;
        --outdir) need_arg "$@"; OUTDIR="$(abspath "$2")"; shift ;;
        --keep-cluster) KEEP_CLUSTER=1 ;;
        --expected-overlay) need_arg "$@"; OVERLAY="$(abspath "$2")"; shift ;;
        --run-as) need_arg "$@"; RUN_AS="$2"; shift ;;
        --quiet) QUIET=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
    esac
    shift
done
[[ ${#SUITES[@]} -gt 0 ]] || SUITES=(regress isolation)
# de-duplicate, keep order
declare -A _seen=(); _s=(); for s in "${SUITES[@]}"; do [[ -n "${_seen[$s]:-}" ]] || { _s+=("$s"); _seen[$s]=1; }; done; SUITES=("${_s[@]}")
[[ -z "$PORT" ]] && PORT=$((54330 + $$ % 500))
[[ "$PORT" =~ ^[0-9]+$ ]] || die "bad --port $PORT"
[[ "$MAX_CONC" =~ ^[0-9]+$ ]] || die "bad --max-concurrent-tests $MAX_CONC"
[[ "$TIMEOUT" =~ ^[0-9]+$ ]] || die "bad --timeout $TIMEOUT"
for c in "${CONFS[@]}"; do [[ -r "$c" ]] || die "cannot read --conf $c"; done

# -------------------------------------------------------------- prepare -----
"$PYTHON" "$PG_SUITES_DIR/pgsuites.py" check-file "$ACCEPTED" >/dev/null ||
    die "invalid accepted-differences file $ACCEPTED"

PREP_OUT="$("$PG_SUITES_DIR/prepare.sh" --quiet)"
PG_SRC_DIR="$(sed -n 's/^PG_SRC_DIR=//p' <<<"$PREP_OUT")"
PG_DLPATH="$(sed -n 's/^PG_DLPATH=//p' <<<"$PREP_OUT")"
PG_VERSION="$(sed -n 's/^PG_VERSION=//p' <<<"$PREP_OUT")"
[[ -d "$PG_SRC_DIR" && -d "$PG_DLPATH" ]] || die "prepare.sh gave no usable paths"

# ------------------------------------------------------------- run user -----
# the harness (test/harness/pgcluster.py) runs initdb, the server and the
# clients as this user (as root: postgres unless --run-as), in RUN_DIR
if [[ $EUID -eq 0 ]]; then
    [[ -z "$RUN_AS" ]] || export TIDES_TEST_USER="$RUN_AS"
else
    [[ -z "$RUN_AS" || "$RUN_AS" == "$(id -un)" ]] || die "--run-as needs root"
fi
RUN_USER="$(pgc user)"
# the server: with tidesam, the private installation of this run
# (TIDES_PG_BINDIR, made by scripts/test.sh) or a new one of this tree
if [[ " $PRELOAD ${EXTENSIONS[*]} " == *tidesam* ]]; then
    PG_BINDIR="$(pgc bindir --tidesam)" || die "no private installation of tidesam"
fi
# command line of a process, "" if gone (no pipe into grep -q: with pipefail
# an early-exiting grep can turn a match into a failure)
cmdline_of() { tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null || true; }
# process group of a process ("" if gone), from /proc/PID/stat
pgid_of() {
    local st rest pg
    st="$(cat "/proc/$1/stat" 2>/dev/null || true)"
    [[ -n "$st" ]] || return 0
    rest="${st##*) }"                  # after "pid (comm) "
    read -r _ _ pg _ <<<"$rest"        # state ppid pgrp ...
    echo "$pg"
}

# ---------------------------------------------------- leftover clusters -----
# A run killed with SIGKILL cannot clean up; stop its server now.  Only our
# own run directories are touched: those whose owner (run.sh) is gone.
TMPBASE="${TMPDIR:-/tmp}"
for d in "$TMPBASE"/tidesam-pgsuites.*; do
    [[ -d "$d" ]] || continue
    if [[ ! -f "$d/owner.pid" ]]; then
        # half-removed (an orphaned client may recreate its output dir) or
        # just being created by another run: only old ones are removed
        [[ -n "$(find "$d" -maxdepth 0 -mmin +1)" && ! -f "$d/data/postmaster.pid" ]] &&
            { rm -rf "$d" 2>/dev/null || true; }
        continue
    fi
    opid="$(cat "$d/owner.pid" 2>/dev/null || true)"
    if [[ -n "$opid" && "$(cmdline_of "$opid")" == *run.sh* ]]; then
        continue    # still running
    fi
    if [[ -f "$d/data/postmaster.pid" && -f "$d/cluster.json" ]]; then
        log "stopping leftover cluster $d"
        pgc stop "$d" --mode immediate --timeout 30 >/dev/null 2>&1 || true
    fi
    # its pg_regress / pg_isolation_regress process group, if still there
    cpid="$(cat "$d/client.pid" 2>/dev/null || true)"
    if [[ "$cpid" =~ ^[0-9]+$ && "$(cmdline_of "$cpid")" == *"--outputdir=$d/"* &&
          "$(pgid_of "$cpid")" == "$cpid" && "$(pgid_of $$)" != "$cpid" ]]; then
        kill -TERM -- "-$cpid" 2>/dev/null || true
        sleep 1
    fi
    [[ -f "$d/keep" ]] || rm -rf "$d" 2>/dev/null || log "could not remove $d"
done

# collate.linux.utf8 skips itself (and passes) unless these locales exist
if [[ " ${SUITES[*]} " == *" regress "* ]]; then
    have_locales="$(locale -a 2>/dev/null || true)"
    for l in de_DE.utf8 en_US.utf8 sv_SE.utf8 tr_TR.utf8 tr_TR; do
        grep -qx "$l" <<<"$have_locales" ||
            { log "WARNING: locale $l missing: collate.linux.utf8 will only run its skip path (run scripts/deps.sh)"; break; }
    done
fi

# ------------------------------------------------------------ run dir -------
RUN_DIR="$(mktemp -d "$TMPBASE/tidesam-pgsuites.XXXXXX")"
echo $$ >"$RUN_DIR/owner.pid"
[[ $KEEP_CLUSTER -eq 1 ]] && touch "$RUN_DIR/keep"
SOCK="$RUN_DIR/sock"
PGDATA_DIR="$RUN_DIR/data"

CLIENT_PID=""
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [[ -n "$CLIENT_PID" ]]; then
        # pg_regress and its psql/isolationtester children (own process group)
        kill -TERM -- "-$CLIENT_PID" 2>/dev/null || true
    fi
    if [[ -f "$PGDATA_DIR/postmaster.pid" ]]; then
        pgc stop "$RUN_DIR" --mode immediate --timeout 60 >/dev/null 2>&1 || true
    fi
    if [[ $KEEP_CLUSTER -eq 1 ]]; then
        log "cluster kept in $RUN_DIR (stopped)"
    else
        rm -rf "$RUN_DIR"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

chmod 755 "$RUN_DIR"
mkdir -p "$SOCK" "$RUN_DIR/lib" "$RUN_DIR/log"
cp "$PG_DLPATH"/*.so "$RUN_DIR/lib/"
if [[ " ${SUITES[*]} " == *" regress "* ]]; then
    mkdir -p "$RUN_DIR/regress"
    cp -r "$PG_SRC_DIR/src/test/regress/"{sql,expected,data,parallel_schedule,resultmap} "$RUN_DIR/regress/"
fi
if [[ " ${SUITES[*]} " == *" isolation "* ]]; then
    mkdir -p "$RUN_DIR/isolation"
    cp -r "$PG_SRC_DIR/src/test/isolation/"{specs,expected,isolation_schedule} "$RUN_DIR/isolation/"
fi
if [[ -n "$OVERLAY" ]]; then
    for s in "${SUITES[@]}"; do
        if compgen -G "$OVERLAY/$s/*.out" >/dev/null; then
            log "overlaying expected files: $(cd "$OVERLAY/$s" && echo *.out)"
            cp "$OVERLAY/$s/"*.out "$RUN_DIR/$s/expected/"
        fi
    done
fi
chown -R "$RUN_USER" "$RUN_DIR"
cd "$RUN_DIR"

if [[ -z "$OUTDIR" ]]; then
    OUTDIR="$(mktemp -d "$TMPBASE/tidesam-pgsuites-results.XXXXXX")"
else
    # only ever empty a directory that an earlier run.sh filled
    if [[ -e "$OUTDIR" && ! -f "$OUTDIR/.pg_suites_outdir" && -n "$(ls -A "$OUTDIR" 2>/dev/null)" ]]; then
        die "--outdir $OUTDIR exists, is not empty and was not written by run.sh"
    fi
    rm -rf "$OUTDIR"
    mkdir -p "$OUTDIR"
fi
touch "$OUTDIR/.pg_suites_outdir"
chmod 755 "$OUTDIR"

# ------------------------------------------------------------- cluster -----
log "PostgreSQL $PG_VERSION, am=${AM:-heap}, cluster $RUN_DIR (user $RUN_USER, port $PORT)"
SERVER_LOG="$RUN_DIR/log/postmaster.log"
conf=("fsync = off" "# as pg_regress --temp-instance does (make check):"
      "log_autovacuum_min_duration = 0" "log_checkpoints = on" "log_line_prefix = '%m %b[%p] %q%a '"
      "log_lock_waits = on" "log_temp_files = 128kB" "max_prepared_transactions = 2")
[[ -n "$PRELOAD" ]] && conf+=("shared_preload_libraries = '$PRELOAD'")
[[ -n "$AM" ]] && conf+=("default_table_access_method = '$AM'")
conf+=("${SETS[@]}")
conf_args=()
for l in "${conf[@]}"; do conf_args+=(--set "$l"); done
for c in "${CONFS[@]}"; do conf_args+=(--conf "$c"); done
pgc init "$RUN_DIR" --bindir "$PG_BINDIR" --port "$PORT" --no-preload --initdb-opts "$INITDB_OPTS" \
    --log "$SERVER_LOG" "${conf_args[@]}" >"$RUN_DIR/log/initdb.log" 2>&1 ||
    { cat "$RUN_DIR/log/initdb.log" >&2; die "initdb failed"; }
cp "$PGDATA_DIR/postgresql.conf" "$OUTDIR/postgresql.conf"

# -c: crashing backends leave core files; their backtraces go to the results
if ! pgc start "$RUN_DIR" --core --timeout 120 >/dev/null; then
    cat "$SERVER_LOG" >&2 || true
    die "server did not start"
fi
pgc psql "$RUN_DIR" -d postgres -Atc "select version()" >&2

# -------------------------------------------------------------- suites -----
EXT_OPTS=()
for e in "${EXTENSIONS[@]}"; do EXT_OPTS+=("--load-extension=$e"); done

schedule_tests() {  # schedule file -> test names, one per line
    sed -n 's/^test:[[:space:]]*//p' "$1" | tr -s ' \t' '\n\n' | sed '/^$/d'
}

SUITE_JSONS=()
run_suite() {
    local suite="$1" dir="$RUN_DIR/$1" list="" rc t0 t1 secs
    local -a cmd sel
    if [[ "$suite" == regress ]]; then
        list="$REGRESS_TESTS"
        cmd=("$PG_REGRESS" --max-concurrent-tests="$MAX_CONC" --dlpath="$RUN_DIR/lib")
        [[ -n "$list" ]] || sel=(--schedule="$dir/parallel_schedule")
        [[ -z "$list" ]] && schedule_tests "$dir/parallel_schedule" >"$dir/tests.list"
    else
        list="$ISOLATION_TESTS"
        cmd=("$PG_ISOLATION_REGRESS")
        [[ -n "$list" ]] || sel=(--schedule="$dir/isolation_schedule")
        [[ -z "$list" ]] && schedule_tests "$dir/isolation_schedule" >"$dir/tests.list"
    fi
    if [[ -n "$list" ]]; then
        tr -s ', \t' '\n\n\n' <<<"$list" | sed '/^$/d' >"$dir/tests.list"
        mapfile -t sel <"$dir/tests.list"
    fi
    cmd+=(--inputdir="$dir" --outputdir="$dir" --bindir="$PG_BINDIR"
          --host="$SOCK" --port="$PORT" "${EXT_OPTS[@]}" "${sel[@]}")
    printf '%q ' "${cmd[@]}" >"$OUTDIR/$suite.cmd"; echo >>"$OUTDIR/$suite.cmd"
    log "$suite: $(wc -l <"$dir/tests.list") tests"
    t0="$(date +%s.%N)"
    # In its own process group (setsid), in the background: `wait` lets the
    # INT/TERM traps run at once, and cleanup can end the whole client tree.
    # timeout(1) signals its whole process group (pg_regress, psql,
    # isolationtester) when the suite hangs.
    : >"$dir/pg_regress.log"
    chown "$RUN_USER" "$dir/pg_regress.log"
    setsid timeout --kill-after=30 "$TIMEOUT" "$HARNESS_PYTHON" "$HARNESS_DIR/pgcluster.py" run "$RUN_DIR" "${cmd[@]}" \
        >"$dir/pg_regress.log" 2>&1 &
    CLIENT_PID=$!
    echo "$CLIENT_PID" >"$RUN_DIR/client.pid"
    local tail_pid=""
    if [[ $QUIET -eq 0 ]]; then
        tail -n +1 -f --pid="$CLIENT_PID" "$dir/pg_regress.log" >&2 &
        tail_pid=$!
    fi
    rc=0
    wait "$CLIENT_PID" || rc=$?
    t1="$(date +%s.%N)"
    CLIENT_PID=""
    [[ -n "$tail_pid" ]] && wait "$tail_pid" || true
    local timed_out=0
    if [[ $TIMEOUT -gt 0 && ( $rc -eq 124 || $rc -eq 137 ) ]]; then
        timed_out=1
        log "ERROR: $suite timed out after ${TIMEOUT}s; pg_regress was stopped"
    fi
    secs="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
    mkdir -p "$OUTDIR/$suite"
    for f in pg_regress.log regression.out regression.diffs tests.list; do
        [[ -f "$dir/$f" ]] && cp "$dir/$f" "$OUTDIR/$suite/"
    done
    [[ -d "$dir/results" ]] && cp -r "$dir/results" "$OUTDIR/$suite/"
    "$PYTHON" "$PG_SUITES_DIR/pgsuites.py" summarize --suite "$suite" \
        --log "$dir/pg_regress.log" --results-dir "$dir/results" --expected-dir "$dir/expected" \
        --tests-file "$dir/tests.list" --seconds "$secs" --exit-code "$rc" --timed-out "$timed_out" --accepted "$ACCEPTED" \
        --out-json "$OUTDIR/$suite.json" --out-tsv "$OUTDIR/$suite/tests.tsv" \
        --out-details "$OUTDIR/$suite/failures.txt" >>"$OUTDIR/lines.txt"
    SUITE_JSONS+=("$OUTDIR/$suite.json")
}

: >"$OUTDIR/lines.txt"
for s in "${SUITES[@]}"; do run_suite "$s"; done

# ---------------------------------------------------------------- stop -----
# fast; if that does not finish within 60 s (a backend is stuck?), immediate, then kill -9
pgc stop "$RUN_DIR" --mode fast --timeout 60 >/dev/null 2>&1 ||
    log "fast shutdown did not finish within 60 s: stopped by immediate shutdown or kill -9"
cp "$SERVER_LOG" "$OUTDIR/postmaster.log"
CRASHES="$(grep -cE 'terminated by signal|was terminated by exception' "$SERVER_LOG" || true)"
if [[ "$CRASHES" != 0 ]]; then
    log "ERROR: $CRASHES server process crash(es), see $OUTDIR/postmaster.log"
    n=0
    for core in "$PGDATA_DIR"/core*; do
        [[ -f "$core" ]] || continue
        n=$((n + 1))
        if command -v gdb >/dev/null; then
            gdb -batch -ex "bt 40" "$PG_BINDIR/postgres" "$core" >"$OUTDIR/core-$n.txt" 2>&1 || true
            log "backtrace of $core in $OUTDIR/core-$n.txt"
        fi
        rm -f "$core"
    done
fi

# ------------------------------------------------------------- summary -----
cat "$OUTDIR/lines.txt"
rc=0
"$PYTHON" "$PG_SUITES_DIR/pgsuites.py" final --am "${AM:-heap}" --server-crashes "$CRASHES" \
    --outdir "$OUTDIR" "${SUITE_JSONS[@]}" >"$OUTDIR/final.txt" || rc=$?
log "results in $OUTDIR"
cat "$OUTDIR/final.txt"
exit "$rc"
}
