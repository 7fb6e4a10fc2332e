#!/usr/bin/env bash
# check_layers.sh -- the layering of ARCHITECTURE.md, checked on the tree.
#
#   engine (src/engine, public API src/engine/include/tides_engine.h)
#     <- runtime (src/runtime) <- am (src/am), index (src/index) <- module (src/module)
#
# Checks (one test each; "layers: P passed, F failed" at the end):
#   engine       files under src/engine include no PostgreSQL header, and
#                their quoted includes resolve inside src/engine
#   includes     every include line of src/{runtime,am,index,module} names a
#                PostgreSQL header, tides_engine.h, or a header of its own
#                layer or a lower one ("runtime/trt.h", ...); nothing else
#                (an engine-internal header cannot even be named: the
#                include path is -Isrc/engine/include -Isrc)
#   private      runtime/meta.h is included only inside src/runtime
#   symbols      the objects of each layer use symbols defined only in their
#                own layer, the layers below and the engine (nm), so nothing
#                calls upward -- not even through a prototype of its own
#   cycles       the folder graph of both (includes and symbols) has no cycle
#   hooks        no PostgreSQL hook variable is assigned, and no callback
#                registered, outside src/module
#   test-vfs     tidesam.so defines no tides_vfs_fault_* / tides_vfs_keep_*
#                symbol (test file systems live in test/vfs and
#                test/crash/keepvfs)
#
# Needs a built tree (make) for the symbol checks; builds it if tidesam.so is
# missing.
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
ok()   { echo "ok    $1"; passed=$((passed + 1)); }
fail() { echo "FAIL  $1"; shift; for l in "$@"; do echo "        $l"; done; failed=$((failed + 1)); }

PG_INC=$(pg_config --includedir-server)
LAYERS=(runtime am index module)
# what each layer may use besides itself and the engine's public API
declare -A BELOW=([runtime]="" [am]="runtime" [index]="runtime" [module]="runtime am index")

allowed() {				# allowed FROM TO
	[ "$1" = "$2" ] && return 0
	[ "$2" = engine ] && return 0
	case " ${BELOW[$1]} " in *" $2 "*) return 0 ;; esac
	return 1
}

# ---- includes
edges_file=$(mktemp)
trap 'rm -f "$edges_file"' EXIT
bad=()
private=()
for L in "${LAYERS[@]}"; do
	for f in src/$L/*.c src/$L/*.h; do
		[ -e "$f" ] || continue
		while IFS= read -r inc; do
			first=${inc%%/*}
			if [ "$inc" = tides_engine.h ]; then
				to=engine
			elif [ "$inc" != "$first" ] && [ -n "${BELOW[$first]+x}" ]; then
				to=$first
				[ -e "src/$inc" ] || { bad+=("$f: \"$inc\" does not exist"); continue; }
			elif [ -e "$PG_INC/$inc" ]; then
				continue	# PostgreSQL
			else
				bad+=("$f: \"$inc\" is neither PostgreSQL's, tides_engine.h nor a layer's")
				continue
			fi
			[ "$inc" = runtime/meta.h ] && [ "$L" != runtime ] && private+=("$f includes runtime/meta.h")
			allowed "$L" "$to" || bad+=("$f: $L includes $inc ($to)")
			echo "$L $to" >>"$edges_file"
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
	done
done
[ ${#bad[@]} -eq 0 ] && ok "includes: every include line names PostgreSQL, tides_engine.h, or its own or a lower layer" \
	|| fail "includes" "${bad[@]}"
[ ${#private[@]} -eq 0 ] && ok "private: runtime/meta.h is included only in src/runtime" \
	|| fail "private" "${private[@]}"

# ---- symbols
if [ ! -e tidesam.so ]; then
	make -s -j"$(nproc 2>/dev/null || echo 2)" >/dev/null 2>&1 || true
fi
declare -A DEF=()
missing_obj=0
for L in engine "${LAYERS[@]}"; do
	objs=$(find src/$L -name '*.o' 2>/dev/null)
	[ -n "$objs" ] || { missing_obj=1; continue; }
	while read -r sym; do DEF[$sym]=$L; done < <(nm --defined-only -g $objs 2>/dev/null | awk 'NF == 3 {print $3}')
done
if [ $missing_obj -ne 0 ]; then
	fail "symbols: no objects (run make first)"
else
	bad=()
	for L in "${LAYERS[@]}"; do
		for o in $(find src/$L -name '*.o'); do
			while read -r sym; do
				to=${DEF[$sym]:-}
				[ -n "$to" ] || continue		# PostgreSQL, libc, lz4, ...
				allowed "$L" "$to" || bad+=("$o ($L) uses $sym of $to")
				echo "$L $to" >>"$edges_file"
			done < <(nm --undefined-only "$o" | awk '{print $2}')
		done
	done
	[ ${#bad[@]} -eq 0 ] && ok "symbols: each layer's objects use only their own layer, the layers below and the engine" \
		|| fail "symbols" "${bad[@]}"
fi

# ---- cycles between folders (includes and symbols together)
cycle=$(sort -u "$edges_file" | awk '$1 != $2' | tsort 2>&1 >/dev/null | head -5)
[ -z "$cycle" ] && ok "cycles: the folder graph ($(sort -u "$edges_file" | awk '$1 != $2 {printf "%s->%s ", $1, $2}')) has none" \
	|| fail "cycles" "$cycle"

# ---- hooks only in src/module
bad=()
while IFS= read -r l; do bad+=("$l"); done < <(grep -nE '(_hook|_Hook)[[:space:]]*=[^=]|Register(Xact|SubXact|ResourceRelease)Callback|CacheRegister(Relcache|Syscache)Callback' \
	src/runtime/*.c src/am/*.c src/index/*.c 2>/dev/null)
[ ${#bad[@]} -eq 0 ] && ok "hooks: installed and callbacks registered only in src/module" || fail "hooks" "${bad[@]}"

# ---- the engine below everything: no PostgreSQL header, quoted includes stay inside it
bad=()
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
			"") bad+=("$f: #include \"$inc\" is not an engine header") ;;
			*) bad+=("$f: #include \"$inc\" reaches $found, outside the engine") ;;
		esac
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
	while IFS= read -r inc; do
		[ -f "$PG_INC/$inc" ] && bad+=("$f: #include <$inc> is a PostgreSQL header")
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\([^>]*\)>.*/\1/p' "$f")
done < <(find src/engine -type f \( -name '*.c' -o -name '*.h' \) | sort)
[ ${#bad[@]} -eq 0 ] && ok "engine: src/engine includes no PostgreSQL header and nothing outside itself" \
	|| fail "engine" "${bad[@]}"

# ---- no test file system in tidesam.so
if [ -e tidesam.so ]; then
	syms=$(nm -D --defined-only tidesam.so | awk '{print $3}' | grep -E '^tides_vfs_(fault|keep)_' | head -5)
	[ -z "$syms" ] && ok "test-vfs: tidesam.so defines no tides_vfs_fault_*/tides_vfs_keep_* symbol" \
		|| fail "test-vfs: tidesam.so holds a test file system" $syms
else
	fail "test-vfs: tidesam.so is not built"
fi

echo "layers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
