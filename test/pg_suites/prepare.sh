#!/usr/bin/env bash
# Prepare PostgreSQL's own regression/isolation suites for the installed server:
#   1. fetch the Debian source package matching the installed postgresql-15
#      (exact version) into $TIDES_CACHE (default /var/tmp/tidesam-cache),
#      adding a deb-src entry for the configured Debian archive if none exists;
#   2. build regress.so (src/test/regress/regress.c) and contrib/spi's
#      autoinc.so and refint.so (-DREFINT_VERBOSE) against the installed server
#      with PGXS, into the directory later given to pg_regress as --dlpath.
#
# Idempotent: a second call with everything in place does no network access and
# only lets make check timestamps.  Prints KEY=VALUE lines (PG_SRC_DIR,
# PG_DLPATH, PG_VERSION) on stdout for callers; everything else goes to stderr.
#
# Fetching needs root (apt-get); building does not.
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

usage() {
    cat <<EOF
usage: $0 [--quiet]
  Env: TIDES_CACHE (default /var/tmp/tidesam-cache), PG_MAJOR (15).
EOF
}
QUIET=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quiet) QUIET=1 ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
    shift
done

[[ -x "$PG_CONFIG" ]] || die "$PG_CONFIG not found: install postgresql-server-dev-${PG_MAJOR} (scripts/deps.sh)"
[[ -x "$PG_REGRESS" ]] || die "$PG_REGRESS not found (postgresql-server-dev-${PG_MAJOR})"
[[ -x "$PG_ISOLATION_REGRESS" ]] || die "$PG_ISOLATION_REGRESS not found (postgresql-server-dev-${PG_MAJOR})"

PG_VERSION="$(pg_pkg_version)"
[[ -n "$PG_VERSION" ]] || die "package $PG_PKG is not installed"
DEV_VERSION="$(dpkg-query -W -f='${Version}' "postgresql-server-dev-${PG_MAJOR}" 2>/dev/null || true)"
[[ "$DEV_VERSION" == "$PG_VERSION" ]] ||
    die "postgresql-server-dev-${PG_MAJOR} ($DEV_VERSION) != $PG_PKG ($PG_VERSION); run scripts/deps.sh"
pg_cache_paths "$PG_VERSION"

mkdir -p "$TIDES_CACHE"
chmod 755 "$TIDES_CACHE" 2>/dev/null || true
LOCK="$TIDES_CACHE/.prepare.lock"
if [[ -w "$TIDES_CACHE" || -w "$LOCK" ]]; then
    exec 9>>"$LOCK"
    chmod 644 "$LOCK" 2>/dev/null || true
else
    exec 9<"$LOCK"   # a cache prepared by root, used read-only
fi
flock 9

# ---------------------------------------------------------------- deb-src ----
have_deb_src() {
    # any enabled deb-src entry (one-line or deb822 format)
    grep -qsE '^[[:space:]]*deb-src[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list && return 0
    grep -qsiE '^Types:.*\bdeb-src\b' /etc/apt/sources.list.d/*.sources && return 0
    return 1
}

# Derive deb-src entries from the configured binary entries of this Debian
# release (suites "<codename>" and "<codename>-*"), so no mirror is hard-coded.
add_deb_src() {
    local codename out="${1:-/etc/apt/sources.list.d/tidesam-deb-src.sources}"
    codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
    [[ -n "$codename" ]] || die "cannot determine the Debian codename from /etc/os-release"
    local tmp
    tmp="$(mktemp)"
    {
        echo "# Added by tidesam test/pg_suites/prepare.sh: sources for apt-get source"
        # deb822 files
        local f
        for f in /etc/apt/sources.list.d/*.sources; do
            [[ -f "$f" ]] || continue
            awk -v cn="$codename" '
                BEGIN { RS = ""; FS = "\n" }
                {
                    types = ""; suites = ""; other = ""; enabled = 1
                    for (i = 1; i <= NF; i++) {
                        line = $i
                        if (line ~ /^[ \t]*#/) continue
                        split(line, kv, ":")
                        key = tolower(kv[1])
                        val = substr(line, index(line, ":") + 1)
                        gsub(/^[ \t]+|[ \t]+$/, "", val)
                        if (key == "types") types = val
                        else if (key == "suites") suites = val
                        else if (key == "enabled" && tolower(val) == "no") enabled = 0
                        else other = other line "\n"
                    }
                    if (!enabled || types !~ /(^|[ \t])deb([ \t]|$)/) next
                    n = split(suites, s, /[ \t]+/); keep = ""
                    for (j = 1; j <= n; j++)
                        if (s[j] == cn || index(s[j], cn "-") == 1) keep = keep (keep == "" ? "" : " ") s[j]
                    if (keep == "") next
                    printf "Types: deb-src\nSuites: %s\n%s\n", keep, other
                }' "$f"
        done
        # one-line format
        local l
        for l in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
            [[ -f "$l" ]] || continue
            awk -v cn="$codename" '
                $1 == "deb" {
                    # deb [opts] uri suite comp...
                    i = 2; opts = ""
                    if ($2 ~ /^\[/) { while ($i !~ /\]$/) { opts = opts $i " "; i++ } opts = opts $i; i++ }
                    uri = $i; suite = $(i + 1)
                    if (suite != cn && index(suite, cn "-") != 1) next
                    comps = ""
                    for (k = i + 2; k <= NF; k++) comps = comps (comps == "" ? "" : " ") $k
                    printf "Types: deb-src\nURIs: %s\nSuites: %s\nComponents: %s\n", uri, suite, comps
                    if (opts ~ /signed-by=/) {
                        m = opts; sub(/.*signed-by=/, "", m); sub(/[] ].*/, "", m)
                        printf "Signed-By: %s\n", m
                    }
                    printf "\n"
                }' "$l"
        done
    } >"$tmp"
    grep -q '^Types: deb-src' "$tmp" || { rm -f "$tmp"; die "no Debian '$codename' apt entry found to derive a deb-src entry from"; }
    install -m 644 "$tmp" "$out"
    rm -f "$tmp"
    log "added $out"
}

# ----------------------------------------------------------------- fetch -----
fetch_source() {
    [[ $EUID -eq 0 ]] || die "PostgreSQL $PG_VERSION sources are not in $PG_SRC_PARENT; run this script once as root to fetch them"
    command -v dpkg-source >/dev/null || die "dpkg-source missing (dpkg-dev); run scripts/deps.sh"
    local updated=0
    if ! have_deb_src; then
        add_deb_src /etc/apt/sources.list.d/tidesam-deb-src.sources
        apt-get update -qq
        updated=1
    fi
    local srcs
    srcs="$(apt-cache showsrc "$PG_PKG" 2>/dev/null || true)"
    if ! grep -qx "Version: $PG_VERSION" <<<"$srcs"; then
        if [[ $updated -eq 0 ]]; then apt-get update -qq; fi
    fi
    local tmp
    tmp="$(mktemp -d "${TIDES_CACHE}/.fetch.XXXXXX")"
    chmod 755 "$tmp"
    log "fetching source package $PG_PKG=$PG_VERSION into $PG_SRC_PARENT"
    if ! (cd "$tmp" && apt-get source -qq "$PG_PKG=$PG_VERSION" >"$tmp/apt-get.log" 2>&1); then
        cat "$tmp/apt-get.log" >&2
        rm -rf "$tmp"
        die "apt-get source $PG_PKG=$PG_VERSION failed (is that version still in the archive?)"
    fi
    # drop the (large) tarballs, keep the unpacked tree
    rm -f "$tmp"/*.tar.* "$tmp"/*.dsc "$tmp/apt-get.log"
    echo "$PG_VERSION" >"$tmp/.fetched"
    rm -rf "$PG_SRC_PARENT"
    mkdir -p "$(dirname "$PG_SRC_PARENT")"
    mv "$tmp" "$PG_SRC_PARENT"
}

if [[ ! -f "$PG_SRC_STAMP" || "$(cat "$PG_SRC_STAMP")" != "$PG_VERSION" || -z "$(pg_src_dir)" ]]; then
    fetch_source
fi
PG_SRC_DIR="$(pg_src_dir)"
[[ -n "$PG_SRC_DIR" ]] || die "no source tree under $PG_SRC_PARENT"

# Sanity: the fetched tree is the installed server's major/minor version.
UPSTREAM="${PG_VERSION#*:}"; UPSTREAM="${UPSTREAM%%-*}"
SRC_VER="$(sed -n "s/^PACKAGE_VERSION='\(.*\)'/\1/p" "$PG_SRC_DIR/configure")"
[[ "$SRC_VER" == "$UPSTREAM" ]] || die "source tree version $SRC_VER != installed $UPSTREAM"

# ----------------------------------------------------------------- build -----
if [[ -d "$PG_BUILD_DIR" && ! -w "$PG_BUILD_DIR" ]]; then
    # cache prepared by another (root) user: use it as it is
    for m in regress autoinc refint; do
        [[ -r "$PG_DLPATH/$m.so" ]] || die "$PG_DLPATH/$m.so missing and $PG_BUILD_DIR not writable; run $0 as root"
    done
    echo "PG_VERSION=$PG_VERSION"
    echo "PG_SRC_DIR=$PG_SRC_DIR"
    echo "PG_DLPATH=$PG_DLPATH"
    exit 0
fi
mkdir -p "$PG_BUILD_DIR" "$PG_DLPATH"
for f in src/test/regress/regress.c contrib/spi/autoinc.c contrib/spi/refint.c; do
    # copy only on change (fresh mtime), so make rebuilds exactly when needed;
    # source tarball mtimes may lie in the future of the machine clock
    cmp -s "$PG_SRC_DIR/$f" "$PG_BUILD_DIR/$(basename "$f")" || cp "$PG_SRC_DIR/$f" "$PG_BUILD_DIR/"
done
cat >"$PG_BUILD_DIR/Makefile.new" <<EOF
# generated by tidesam test/pg_suites/prepare.sh
MODULES = regress autoinc refint
PG_CONFIG = $PG_CONFIG
PGXS := \$(shell \$(PG_CONFIG) --pgxs)
include \$(PGXS)
# as contrib/spi/Makefile does for refint
refint.o: override CPPFLAGS += -DREFINT_VERBOSE
EOF
if cmp -s "$PG_BUILD_DIR/Makefile.new" "$PG_BUILD_DIR/Makefile"; then
    rm -f "$PG_BUILD_DIR/Makefile.new"
else
    mv "$PG_BUILD_DIR/Makefile.new" "$PG_BUILD_DIR/Makefile"
    rm -f "$PG_BUILD_DIR"/*.o "$PG_BUILD_DIR"/*.so
fi
# with_llvm=no: no JIT bitcode needed for test-only modules
if [[ $QUIET -eq 1 ]]; then
    make -s -C "$PG_BUILD_DIR" with_llvm=no >/dev/null
else
    make -C "$PG_BUILD_DIR" with_llvm=no >&2
fi
for m in regress autoinc refint; do
    cmp -s "$PG_BUILD_DIR/$m.so" "$PG_DLPATH/$m.so" || install -m 755 "$PG_BUILD_DIR/$m.so" "$PG_DLPATH/$m.so"
done
# The server (running as an unprivileged user) must be able to read these.
chmod -R a+rX "$TIDES_CACHE/src" "$TIDES_CACHE/build" 2>/dev/null || true

echo "PG_VERSION=$PG_VERSION"
echo "PG_SRC_DIR=$PG_SRC_DIR"
echo "PG_DLPATH=$PG_DLPATH"
