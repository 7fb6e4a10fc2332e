# test/index/cluster.sh -- a throwaway cluster for the scripts of test/index
# (sourced, not run).
#
#   source test/index/cluster.sh
#   cluster_init [CONF_LINE...]   initdb in a new temporary directory, with
#                                 test/regress.conf and the given lines
#   cluster_start / cluster_stop [fast|immediate] / cluster_kill9
#   cpsql ARGS...                 psql against the cluster (ON_ERROR_STOP)
#   cluster_cleanup               stop it and delete the directory (an EXIT trap)
#
# Environment: PG_BINDIR (default the system's PostgreSQL 15 binaries; a
# private installation from bench/pg/install_private.sh works), PORT (the
# server's port; it listens on a unix socket in its directory only).  As root
# the server and clients run as the postgres user (initdb refuses root).

PG_BINDIR="${PG_BINDIR:-/usr/lib/postgresql/15/bin}"
PORT="${PORT:-56270}"
CL_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if [[ $EUID -eq 0 ]]; then
    CL_USER=postgres
    CL_RUN=(runuser -u postgres --)
else
    CL_USER="$(id -un)"
    CL_RUN=()
fi

cluster_init() {
    CL_DIR="$(mktemp -d "${TMPDIR:-/tmp}/tidesam-index.XXXXXX")"
    chmod 755 "$CL_DIR"
    mkdir -p "$CL_DIR/sock"
    [[ $EUID -eq 0 ]] && chown -R "$CL_USER" "$CL_DIR"
    CL_DATA="$CL_DIR/data"
    CL_LOG="$CL_DIR/server.log"
    "${CL_RUN[@]}" "$PG_BINDIR/initdb" -D "$CL_DATA" -A trust --no-sync --no-instructions \
        --encoding=UTF8 --locale=C >"$CL_DIR/initdb.log" 2>&1 ||
        { cat "$CL_DIR/initdb.log" >&2; return 1; }
    {
        cat "$CL_REPO/test/regress.conf"
        echo "listen_addresses = ''"
        echo "unix_socket_directories = '$CL_DIR/sock'"
        echo "port = $PORT"
        for line in "$@"; do echo "$line"; done
    } >>"$CL_DATA/postgresql.conf"
}

cluster_start() {
    "${CL_RUN[@]}" "$PG_BINDIR/pg_ctl" start -D "$CL_DATA" -l "$CL_LOG" -w -t 300 >/dev/null ||
        { tail -n 30 "$CL_LOG" >&2; return 1; }
}

cluster_stop() {
    "${CL_RUN[@]}" "$PG_BINDIR/pg_ctl" stop -D "$CL_DATA" -m "${1:-fast}" -w -t 120 >/dev/null
}

# kill -9 of the postmaster and every backend (a crash without a clean shutdown)
cluster_kill9() {
    local pm
    pm="$(head -n 1 "$CL_DATA/postmaster.pid")"
    # the postmaster's children first, by its pid, then the postmaster
    pkill -9 -P "$pm" 2>/dev/null || true
    kill -9 "$pm"
    while kill -0 "$pm" 2>/dev/null; do sleep 0.1; done
    sleep 1
}

cpsql() {
    "${CL_RUN[@]}" "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$CL_DIR/sock" -p "$PORT" "$@"
}

cluster_cleanup() {
    [[ -n "${CL_DATA:-}" && -f "$CL_DATA/postmaster.pid" ]] && cluster_stop immediate 2>/dev/null
    [[ -n "${CL_DIR:-}" && -z "${KEEP_CLUSTER:-}" ]] && rm -rf "$CL_DIR"
    return 0
}
