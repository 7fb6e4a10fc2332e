#!/usr/bin/env bash
# test/packaging/deb_chroot.sh -- install the Debian package on a clean
# machine and CREATE EXTENSION through it (make deb-test runs this).
#
#   bash test/packaging/deb_chroot.sh [PACKAGE.deb]    # as root; needs deb.debian.org
#
# 1. debootstrap --variant=minbase bookworm into build/deb/chroot.<pid> (a
#    pristine copy is kept as build/deb/bookworm-minbase.tar.zst, so a rerun
#    starts from the same clean system without downloading it again;
#    TIDES_DEB_FRESH=1 bootstraps anew)
# 2. in the chroot, with the sources an installed Debian 12 has (bookworm,
#    bookworm-updates, bookworm-security):
#    apt-get install postgresql-15 (Debian's), then the .deb
#    (default: the newest build/deb/postgresql-15-tidesam_*.deb, from make deb)
#    with apt-get, which brings its dependencies from Debian
# 3. the cluster Debian made (15/main): shared_preload_libraries = 'tidesam',
#    no TCP; pg_ctlcluster start
# 4. psql: CREATE EXTENSION tidesam; a tides table with a tides_btree index;
#    INSERT, SELECT, UPDATE; the privileges of 1.1; tides_verify()
# 5. stop the cluster, unmount, delete the chroot (TIDES_DEB_KEEP=1 keeps it)
#
# The transcript goes to stdout; the last line is "deb-chroot: 1 passed,
# 0 failed" or "deb-chroot: 0 passed, 1 failed".  Not part of CI (a few
# minutes, and the network).  Needs debootstrap and zstd on the host.
set -uo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
out=${TIDES_DEB_DIR:-$repo/build/deb}
mirror=${TIDES_DEB_MIRROR:-http://deb.debian.org/debian}
security_mirror=${TIDES_DEB_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
suite=bookworm
deb=${1:-$(ls -t "$out"/postgresql-15-tidesam_*.deb 2>/dev/null | head -n 1)}

fail() { echo "FAILED: $*"; echo "deb-chroot: 0 passed, 1 failed"; exit 1; }
[[ $EUID -eq 0 ]] || fail "run as root (debootstrap, chroot, mount)"
[[ -n $deb && -f $deb ]] || fail "no package: run make deb first, or name the .deb"
command -v debootstrap >/dev/null || fail "debootstrap missing: apt-get install debootstrap"
command -v zstd >/dev/null || fail "zstd missing: apt-get install zstd"
deb=$(realpath "$deb")

root=$out/chroot.$$
pristine=$out/$suite-minbase.tar.zst
mounted=()
cleanup() {
    local pids p m
    if [[ -x $root/usr/bin/pg_ctlcluster ]]; then
        chroot "$root" pg_ctlcluster 15 main stop -m fast >/dev/null 2>&1
    fi
    # processes left in the chroot are ours (started below): stop them by pid
    pids=()
    for p in /proc/[0-9]*; do
        [[ "$(readlink "$p/root" 2>/dev/null)" == "$root" ]] && pids+=("${p#/proc/}")
    done
    [[ ${#pids[@]} -gt 0 ]] && kill "${pids[@]}" 2>/dev/null && sleep 2
    for ((m = ${#mounted[@]} - 1; m >= 0; m--)); do umount -l "${mounted[m]}" 2>/dev/null; done
    if [[ ${TIDES_DEB_KEEP:-0} == 1 ]]; then
        echo "chroot kept in $root (unmounted)"
    else
        rm -rf --one-file-system "$root"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive HOME=/root "$@"; }
step() { echo; echo "### $*"; }

mkdir -p "$out"
step "clean $suite (minbase) from $mirror"
if [[ ${TIDES_DEB_FRESH:-0} == 1 || ! -f $pristine ]]; then
    rm -rf "$out/bootstrap.$$"
    debootstrap --variant=minbase "$suite" "$out/bootstrap.$$" "$mirror" >"$out/debootstrap.log" 2>&1 ||
        { tail -n 20 "$out/debootstrap.log"; rm -rf "$out/bootstrap.$$"; fail "debootstrap"; }
    tar -C "$out/bootstrap.$$" --numeric-owner -cf - . | zstd -q -T0 -o "$pristine.tmp" &&
        mv "$pristine.tmp" "$pristine" || fail "saving the pristine chroot"
    rm -rf "$out/bootstrap.$$"
    echo "debootstrap done (kept as $(basename "$pristine"))"
fi
mkdir -p "$root"
zstd -q -dc "$pristine" | tar -C "$root" --numeric-owner -xf - || fail "unpacking the chroot"
. "$root/etc/os-release"; echo "chroot: $PRETTY_NAME, $(ls "$root/var/lib/dpkg/info"/*.list | wc -l) packages," \
    "$([[ -d $root/usr/lib/postgresql ]] && echo 'PostgreSQL present' || echo 'no PostgreSQL')"

for m in proc sys dev/pts dev/shm; do mkdir -p "$root/$m"; done
mount -t proc proc "$root/proc" && mounted+=("$root/proc")
mount -t sysfs sysfs "$root/sys" && mounted+=("$root/sys")
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$root/dev/pts" && mounted+=("$root/dev/pts")
mount -t tmpfs -o mode=1777 shm "$root/dev/shm" && mounted+=("$root/dev/shm")
cp /etc/resolv.conf "$root/etc/resolv.conf"
# the sources of an installed Debian 12 (the installer adds security and
# updates; debootstrap only the release): the package depends on
# postgresql-15 (>> the minor version in postgresql-common's minor_versions)
cat >"$root/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb $security_mirror $suite-security main
EOF
# no service starts from maintainer scripts: the test starts the cluster itself
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"; chmod +x "$root/usr/sbin/policy-rc.d"

step "apt-get install postgresql-15 (Debian's)"
in_root apt-get update -q >"$out/apt.log" 2>&1 || { tail -n 20 "$out/apt.log"; fail "apt-get update"; }
in_root apt-get install -y -q --no-install-recommends postgresql-15 >>"$out/apt.log" 2>&1 ||
    { tail -n 20 "$out/apt.log"; fail "apt-get install postgresql-15"; }
in_root dpkg-query -W postgresql-15 postgresql-common
in_root pg_lsclusters

step "apt-get install ./$(basename "$deb")"
cp "$deb" "$root/tmp/"
in_root apt-get install -y -q --no-install-recommends "/tmp/$(basename "$deb")" >"$out/apt-deb.log" 2>&1 ||
    { tail -n 20 "$out/apt-deb.log"; fail "apt-get install of the package"; }
grep -E '^(Selecting|Unpacking|Setting up) ' "$out/apt-deb.log"
in_root dpkg-query -W -f='${Package} ${Version} ${Status}\nDepends: ${Depends}\n' postgresql-15-tidesam
in_root dpkg -L postgresql-15-tidesam | grep -E '\.(so|control|sql)$'

step "cluster 15/main with shared_preload_libraries = 'tidesam'"
conf=/etc/postgresql/15/main/postgresql.conf
cat >>"$root$conf" <<'EOF'
# ---- test/packaging/deb_chroot.sh
shared_preload_libraries = 'tidesam'
listen_addresses = ''
max_worker_processes = 12
EOF
in_root grep -E "^(shared_preload_libraries|listen_addresses|max_worker_processes)" "$conf"
in_root pg_ctlcluster 15 main start || { tail -n 30 "$root/var/log/postgresql/postgresql-15-main.log"; fail "cluster start"; }
in_root pg_lsclusters

step "psql"
transcript=$(in_root runuser -u postgres -- psql -X -a -v ON_ERROR_STOP=0 -d postgres 2>&1 <<'SQL'
SELECT version();
CREATE EXTENSION tidesam;
SELECT extname, extversion FROM pg_extension WHERE extname = 'tidesam';
CREATE TABLE t (id int PRIMARY KEY, body text) USING tides;
CREATE INDEX t_body ON t USING tides_btree (body COLLATE "C");
INSERT INTO t SELECT g, 'row ' || g FROM generate_series(1, 10000) g;
UPDATE t SET body = body || ' updated' WHERE id % 1000 = 0;
SELECT * FROM t WHERE id IN (1, 5000, 10000) ORDER BY id;
SET enable_seqscan = off;
SELECT id, body FROM t WHERE body COLLATE "C" = 'row 42';
RESET enable_seqscan;
SELECT count(*), sum(id), count(*) FILTER (WHERE body LIKE '%updated') AS updated FROM t;
SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname IN ('t', 't_body') ORDER BY 1;
SELECT tides_flush();
SELECT tides_relation_size('t') > 0 AS has_bytes_on_disk;
SELECT count(*) AS problems FROM tides_verify();
SELECT count(*) AS problems FROM tides_verify_index('t_body');
CREATE ROLE plain;
CREATE ROLE watcher IN ROLE pg_monitor;
SET ROLE plain;
SELECT tides_compact();
RESET ROLE;
SET ROLE watcher;
SELECT count(*) > 0 AS can_read_stats FROM tides_stats();
RESET ROLE;
SELECT name, value > 0 AS nonzero FROM tides_stats() WHERE name IN ('flushes', 'log_bytes_written') ORDER BY name;
SQL
)
rc=$?
printf '%s\n' "$transcript"

step "stop"
in_root pg_ctlcluster 15 main stop -m fast
in_root pg_lsclusters

# what must be in the transcript
ok=1
[[ $rc -eq 0 ]] || ok=0
for want in '^CREATE EXTENSION$' '^ tidesam +\| 1\.1$' '^ 10000 \| 50005000 \| +10$' '^ 42 \| row 42$' \
            '^ tides$' '^ tides_btree$' 'permission denied for function tides_compact'; do
    grep -Eq "$want" <<<"$transcript" || { echo "missing from the transcript: $want"; ok=0; }
done
for col in has_bytes_on_disk can_read_stats; do    # header, rule, value
    grep -A2 -E "^ $col \$" <<<"$transcript" | tail -n 1 | grep -Eq '^ t *$' ||
        { echo "not true in the transcript: $col"; ok=0; }
done
[[ $(grep -A2 -E '^ problems $' <<<"$transcript" | grep -cE '^ +0$') -eq 2 ]] ||
    { echo "tides_verify or tides_verify_index found problems"; ok=0; }
grep -E '^(ERROR|FATAL|PANIC)' <<<"$transcript" | grep -v 'permission denied for function tides_compact' &&
    { echo "unexpected errors above"; ok=0; }
echo
if [[ $ok -eq 1 ]]; then echo "deb-chroot: 1 passed, 0 failed"; else echo "deb-chroot: 0 passed, 1 failed"; exit 1; fi
