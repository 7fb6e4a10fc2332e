#!/usr/bin/env bash
# Install everything tidesam needs to build and test, on Debian 12, as root.
#
# Idempotent and fast when everything is present: package state is checked
# with dpkg-query first, and apt-get (update, install) only runs when
# something is missing.  The server headers are pinned to the *installed*
# server version, so headers, server and PostgreSQL test sources agree.
#
# Also generates the glibc locales that PostgreSQL's collate.linux.utf8
# regression test needs (it silently skips itself without them).
set -euo pipefail

PG_MAJOR="${PG_MAJOR:-15}"
export DEBIAN_FRONTEND=noninteractive

# package lists -------------------------------------------------------------
PKGS=(
    build-essential            # gcc, make, dpkg-dev (dpkg-source for apt-get source)
    liblz4-dev libzstd-dev librocksdb-dev
    clang libclang-rt-14-dev   # libFuzzer / sanitizer runtimes (only a Recommends of clang)
    python3 python3-matplotlib
    # test/pg_suites harness
    bzip2 xz-utils             # unpack the PostgreSQL source package
    diffutils                  # pg_regress runs diff
    util-linux                 # runuser, flock
    passwd                     # useradd (unprivileged server user)
    locales                    # localedef, for collate.linux.utf8
    libipc-run-perl            # test/tap: PostgreSQL::Test::Cluster needs IPC::Run
)
LOCALES=(de_DE.UTF-8 en_US.UTF-8 sv_SE.UTF-8 tr_TR.UTF-8 tr_TR)

log() { printf '[deps] %s\n' "$*" >&2; }

installed_version() {  # prints the version if the package is fully installed
    dpkg-query -W -f='${db:Status-Abbrev}|${Version}\n' "$1" 2>/dev/null |
        awk -F'|' '$1 ~ /^ii/ { print $2; exit }'
}

if [[ $EUID -ne 0 ]]; then
    echo "scripts/deps.sh must run as root" >&2
    exit 2
fi

UPDATED=0
apt_update_once() {
    if [[ $UPDATED -eq 0 ]]; then
        log "apt-get update"
        apt-get update -qq
        UPDATED=1
    fi
}
apt_install() {
    apt_update_once
    log "apt-get install $*"
    apt-get install -y -q --no-install-recommends --allow-downgrades "$@"
}

# 1. the server (pre-installed on the project machines; installed if not)
if [[ -z "$(installed_version "postgresql-${PG_MAJOR}")" ]]; then
    apt_install "postgresql-${PG_MAJOR}"
fi
PG_VERSION="$(installed_version "postgresql-${PG_MAJOR}")"

# 2. everything else, server headers pinned to the installed server
missing=()
for p in "${PKGS[@]}"; do
    [[ -n "$(installed_version "$p")" ]] || missing+=("$p")
done
if [[ "$(installed_version "postgresql-server-dev-${PG_MAJOR}")" != "$PG_VERSION" ]]; then
    missing+=("postgresql-server-dev-${PG_MAJOR}=${PG_VERSION}")
fi
if [[ ${#missing[@]} -gt 0 ]]; then
    if ! apt_install "${missing[@]}"; then
        echo "apt-get install failed; note postgresql-server-dev-${PG_MAJOR} must be available" \
             "in exactly the installed server version ${PG_VERSION}" >&2
        exit 1
    fi
fi

# 3. locales for PostgreSQL's collate.linux.utf8 test
have_locales="$(locale -a 2>/dev/null | tr '[:upper:]' '[:lower:]' | sed 's/utf-8$/utf8/')"
for l in "${LOCALES[@]}"; do
    want="$(tr '[:upper:]' '[:lower:]' <<<"$l" | sed 's/utf-8$/utf8/')"
    if ! grep -qxF "$want" <<<"$have_locales"; then
        log "localedef $l"
        localedef -i "${l%%.*}" -f UTF-8 "$l"
    fi
done

log "ok: postgresql-${PG_MAJOR} ${PG_VERSION} with matching server headers; all packages present"
