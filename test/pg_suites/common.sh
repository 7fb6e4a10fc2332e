# shellcheck shell=bash disable=SC2034  # variables are used by the sourcing scripts
# Shared settings for test/pg_suites/*.sh.  Sourced, not executed.
#
# Everything derives from the *installed* server package so that the test
# sources, regress.so and the server always agree.

PG_MAJOR="${PG_MAJOR:-15}"
PG_PKG="postgresql-${PG_MAJOR}"
PG_BINDIR="${PG_BINDIR:-/usr/lib/postgresql/${PG_MAJOR}/bin}"
# the installed server's pg_config (a private installation's finds no headers)
PG_CONFIG="${PG_CONFIG:-/usr/lib/postgresql/${PG_MAJOR}/bin/pg_config}"
PG_PGXS_TESTDIR="${PG_PGXS_TESTDIR:-/usr/lib/postgresql/${PG_MAJOR}/lib/pgxs/src/test}"
PG_REGRESS="${PG_REGRESS:-${PG_PGXS_TESTDIR}/regress/pg_regress}"
PG_ISOLATION_REGRESS="${PG_ISOLATION_REGRESS:-${PG_PGXS_TESTDIR}/isolation/pg_isolation_regress}"

TIDES_CACHE="${TIDES_CACHE:-/var/tmp/tidesam-cache}"

if [[ -x /usr/bin/python3 ]]; then
    PYTHON="${PYTHON:-/usr/bin/python3}"
else
    PYTHON="${PYTHON:-python3}"
fi

PG_SUITES_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# Debian version of the installed server, e.g. 15.18-0+deb12u1
pg_pkg_version() {
    dpkg-query -W -f='${Version}' "$PG_PKG" 2>/dev/null || true
}

# Cache locations for one server version.  The version string is used as a
# directory name verbatim (only [0-9A-Za-z.+~-] occur in Debian versions; ':'
# for an epoch is mapped to '_').
pg_cache_paths() {
    local ver="$1" v
    v="${ver//:/_}"
    PG_SRC_PARENT="${TIDES_CACHE}/src/${v}"
    PG_BUILD_DIR="${TIDES_CACHE}/build/${v}"
    PG_DLPATH="${PG_BUILD_DIR}/lib"
    PG_SRC_STAMP="${PG_SRC_PARENT}/.fetched"
}

# Prints the unpacked source tree of a fetched version (empty if none).
pg_src_dir() {
    local d
    for d in "${PG_SRC_PARENT}"/"${PG_PKG}"-*/; do
        [[ -d "$d/src/test/regress" ]] && { printf '%s\n' "${d%/}"; return 0; }
    done
    return 0
}

log() { printf '[pg_suites] %s\n' "$*" >&2; }
die() { printf '[pg_suites] ERROR: %s\n' "$*" >&2; exit 2; }
