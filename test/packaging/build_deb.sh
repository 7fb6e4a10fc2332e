#!/usr/bin/env bash
# test/packaging/build_deb.sh -- build the Debian package postgresql-15-tidesam
# (make deb runs this).
#
#   bash test/packaging/build_deb.sh              # build/deb/postgresql-15-tidesam_<version>_<arch>.deb
#   DEB_BUILD_OPTIONS=nocheck bash test/packaging/build_deb.sh   # without the build-time installcheck
#
# Exports the working tree (the files git tracks or would add: uncommitted
# changes included, build/ and ignored files not) to
# build/deb/tidesam-<version>/ and runs `dpkg-buildpackage -us -uc -b` there,
# so that the package's `make clean` never touches the working tree.  The
# build dependencies are Debian's own packages (debian/control); when one is
# missing the script names the apt-get command and stops.  The build runs
# make installcheck on a throwaway cluster (pg_virtualenv), about two
# minutes.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
out=${TIDES_DEB_DIR:-$repo/build/deb}
version=$(dpkg-parsechangelog -S Version)
src=$out/tidesam-$version

rm -rf "$src" "$out"/postgresql-*-tidesam_* "$out"/tidesam_*
mkdir -p "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard |
        while IFS= read -r -d '' f; do [[ -e $f || -L $f ]] && printf '%s\0' "$f"; done |
        tar --null -T - -cf - | tar -xf - -C "$src"
else
    tar --exclude=./build -cf - . | tar -xf - -C "$src"
fi

cd "$src"
if ! dpkg-checkbuilddeps; then
    missing=$(dpkg-checkbuilddeps 2>&1 | sed -n 's/.*Unmet build dependencies: //p' | sed -E 's/ *\([^)]*\)//g; s/<[^>]*>//g')
    echo "install the build dependencies first: apt-get install --no-install-recommends $missing" >&2
    exit 1
fi
dpkg-buildpackage -us -uc -b
cd "$out"
ls -l "$out"/postgresql-*-tidesam_"$version"_*.deb
dpkg-deb --info "$out"/postgresql-*-tidesam_"$version"_*.deb | sed -n '/Package:/,$p'
dpkg-deb --contents "$out"/postgresql-*-tidesam_"$version"_*.deb
