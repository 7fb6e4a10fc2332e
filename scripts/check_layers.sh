#!/usr/bin/env bash
# check_layers.sh -- the engine boundary, checked (issue 16, ARCHITECTURE.md).
#
#   scripts/check_layers.sh [path/to/tidesam.so]     (default: ./tidesam.so)
#
# Three checks, each printed as "ok - ..." or "FAIL - ..." with the offending
# lines, then one summary line "layers: P passed, F failed"; exit 1 if any
# failed.  Run from anywhere; paths are relative to the repository root.
#
#  1. public API only: no file under src/ outside src/engine includes an
#     engine header other than tides_engine.h, or a test file system header
#     (test/vfs).  A quoted include is resolved the way the compiler would
#     look for it -- the including file's folder, then the extension's include
#     roots (src/engine/include, src) -- and also against the roots an older
#     include line exposed (src/engine, test/vfs): an include that reaches an
#     engine-internal or test header through any of them is a violation
#     (either it does not compile, or it depends on an include path that
#     leaks the engine's internals).
#  2. no PostgreSQL below the engine: every file under src/engine includes
#     only the engine's own headers (quoted includes resolve inside
#     src/engine) and system headers that are not PostgreSQL's (angle
#     includes do not name a file of pg_config --includedir-server).
#  3. no test code in the extension: tidesam.so defines no tides_vfs_keep_*
#     or tides_vfs_fault_* symbol (nm; the dynamic table if the file is
#     stripped).
set -uo pipefail
cd "$(dirname "$0")/.."

so=${1:-tidesam.so}
pg_server_inc=$( (pg_config --includedir-server) 2>/dev/null || echo /usr/include/postgresql/15/server)
pass=0
fail=0

report() {   # report NAME VIOLATIONS: one check's verdict
  local name=$1 violations=$2
  if [ -z "$violations" ]; then
    echo "ok - $name"
    pass=$((pass + 1))
  else
    echo "FAIL - $name"
    printf '%s\n' "$violations" | sed 's/^/    /'
    fail=$((fail + 1))
  fi
}

# the quoted includes of a file, one per line
quoted_includes() {
  sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"
}

# is this path (as the file system names it) an engine header other than
# the public one, or a test file system header?
forbidden_header() {
  local p
  p=$(realpath -m --relative-to=. "$1")
  case "$p" in
    src/engine/include/tides_engine.h) return 1 ;;
    src/engine/*|test/vfs/*) return 0 ;;
  esac
  return 1
}

# ---- 1. outside the engine, only tides_engine.h
v1=""
while IFS= read -r f; do
  dir=$(dirname "$f")
  while IFS= read -r inc; do
    for root in "$dir" src/engine/include src src/engine test/vfs; do
      if [ -f "$root/$inc" ]; then
        if forbidden_header "$root/$inc"; then
          v1+="$f: #include \"$inc\" reaches $(realpath -m --relative-to=. "$root/$inc")"$'\n'
        fi
        break   # the first root that has it is the one the compiler takes
      fi
    done
  done < <(quoted_includes "$f")
done < <(find src -path src/engine -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print | sort)
report "files outside src/engine include only tides_engine.h of the engine" "${v1%$'\n'}"

# ---- 2. inside the engine, no PostgreSQL header
v2=""
while IFS= read -r f; do
  dir=$(dirname "$f")
  while IFS= read -r inc; do
    found=""
    for root in "$dir" src/engine/include src/engine; do
      if [ -f "$root/$inc" ]; then
        found=$(realpath -m --relative-to=. "$root/$inc")
        break
      fi
    done
    case "$found" in
      src/engine/*) ;;
      "") v2+="$f: #include \"$inc\" is not an engine header"$'\n' ;;
      *) v2+="$f: #include \"$inc\" reaches $found, outside the engine"$'\n' ;;
    esac
  done < <(quoted_includes "$f")
  while IFS= read -r inc; do
    if [ -f "$pg_server_inc/$inc" ]; then
      v2+="$f: #include <$inc> is a PostgreSQL header"$'\n'
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\([^>]*\)>.*/\1/p' "$f")
done < <(find src/engine -type f \( -name '*.c' -o -name '*.h' \) | sort)
report "src/engine includes no PostgreSQL header" "${v2%$'\n'}"

# ---- 3. no test file system in tidesam.so
if [ ! -f "$so" ]; then
  report "$so holds no test file system" "$so does not exist (build the extension first: make)"
else
  syms=$( (nm --defined-only "$so" 2>/dev/null; nm -D --defined-only "$so" 2>/dev/null) |
          awk '{ print $NF }' | grep -E '^tides_vfs_(keep|fault)_' | sort -u)
  report "$so holds no test file system" "$(printf '%s' "$syms" | sed 's/^/defines /')"
fi

echo "layers: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
