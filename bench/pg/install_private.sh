#!/usr/bin/env bash
# bench/pg/install_private.sh -- install the tidesam built in this tree into a
# private copy of the PostgreSQL installation, and print its bin directory.
#
#   bin=$(bash bench/pg/install_private.sh)     # after make
#
# The benchmark starts many throwaway clusters over half an hour; with the
# extension in the system directories, anyone's `make install` meanwhile
# would change the build under test between clusters.  PostgreSQL finds its
# lib and share directories relative to its binary, so a copy of
# $(pg_config --bindir)/.., --pkglibdir and --sharedir under build/bench-pg/root
# (BENCH_PG_ROOT) with `make install DESTDIR=...` on top is a complete
# private installation.  The copy of the server is refreshed when the
# installed server changes.
set -euo pipefail
cd "$(dirname "$0")/../.."
PG_CONFIG=${PG_CONFIG:-pg_config}
bindir=$("$PG_CONFIG" --bindir)
pkglibdir=$("$PG_CONFIG" --pkglibdir)
sharedir=$("$PG_CONFIG" --sharedir)
root=${BENCH_PG_ROOT:-$PWD/build/bench-pg}/root

# the server runs as postgres, which must reach the copy: a clone under a
# private home (/root is mode 700) cannot hold it, so then the copy goes to
# /var/tmp under a name derived from this tree's path
if [[ -z ${BENCH_PG_ROOT:-} && $EUID -eq 0 ]]; then
  mkdir -p "$root"
  if ! runuser -u postgres -- test -x "$root"; then
    root=/var/tmp/tidesam-pg.$(printf '%s' "$PWD" | sha1sum | cut -c1-12)/root
  fi
fi

[[ -f tidesam.so ]] || { echo "tidesam.so not built: run make first" >&2; exit 1; }

want="$("$bindir/postgres" --version) $(stat -c %Y "$bindir/postgres")"
if [[ ! -f $root/.server || "$(cat "$root/.server")" != "$want" ]]; then
  rm -rf "$root"
  for d in "$(dirname "$bindir")" "$pkglibdir" "$sharedir"; do
    [[ -d $root$d ]] && continue
    mkdir -p "$root$(dirname "$d")"
    cp -a "$d" "$root$d"
  done
  echo "$want" >"$root/.server"
fi
rm -f "$root$pkglibdir"/tidesam.so "$root$sharedir"/extension/tidesam*
make -s install DESTDIR="$root" >&2
chmod -R a+rX "$root"
if [[ $EUID -eq 0 ]] && ! runuser -u postgres -- test -x "$root$bindir/postgres"; then
  echo "the postgres user cannot reach $root: set BENCH_PG_ROOT to a world-readable place" >&2
  exit 1
fi
echo "$root$bindir"
