#!/usr/bin/env bash
# test/index/encode_property.sh -- property test of tides_btree's key
# encodings: for every supported type (and collation), random and edge
# values sorted by the type's b-tree comparator and by memcmp of their
# encodings (tides_index_encode()) must give the same order, and two values
# must encode equally exactly when the comparator says they are equal.
#
#   test/index/encode_property.sh [--cluster] [ROUNDS] [N]
#
# Each round runs sql/index_encode.sql with N random values per type (plus
# the edge values) and a fresh random seed, ROUNDS times in a database with
# the C locale and ROUNDS times in one with glibc's C.UTF-8 (there the
# "text default" check is C.UTF-8 as the default collation).  With --cluster the script makes
# a throwaway cluster (test/harness: TIDES_PG_BINDIR, PORT); otherwise it
# uses the server that PGHOST/PGPORT name, which must preload tidesam.
# (libc collations are not checked: glibc's strxfrm does not always agree
# with its strcoll, which is why tides_btree rejects them; the SQL file shows
# such pairs.)
#
# One line per round, and at the end "index_encode: P passed, F failed",
# counting one check (type, collation or operator class) per round.  A
# failing check prints its seed and up to three offending pairs, so
#   psql -v n=N -v seed=SEED -f sql/index_encode.sql
# reproduces it.  Default: 3 rounds of 2000 values.
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CLUSTER=0
if [[ "${1:-}" == "--cluster" ]]; then CLUSTER=1; shift; fi
ROUNDS="${1:-3}"
N="${2:-2000}"
[[ "$ROUNDS" =~ ^[0-9]+$ && "$N" =~ ^[0-9]+$ ]] || { echo "usage: $0 [--cluster] [ROUNDS] [N]" >&2; exit 2; }

if [[ $CLUSTER -eq 1 ]]; then
    source "$REPO/test/harness/cluster.sh"
    CL="$(mktemp -d "${TMPDIR:-/tmp}/tidesam-index.XXXXXX")"
    trap 'pgc destroy "$CL"' EXIT
    { pgc init "$CL" --regress-conf ${PORT:+--port "$PORT"} && pgc start "$CL"; } ||
        { echo "index_encode: 0 passed, 1 failed"; exit 1; }
    run_psql() { pgc psql "$CL" "$@"; }
    # the script reads the SQL file as the server's user
    SQL="$CL/index_encode.sql"
    cp "$REPO/sql/index_encode.sql" "$SQL"; chmod a+r "$SQL"
else
    run_psql() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
    SQL="$REPO/sql/index_encode.sql"
fi

# two databases: the C locale, and glibc's C.UTF-8 (whose "text default"
# check is then the database's default collation under C.UTF-8, which
# tides_btree takes as code-point order)
DB="tidx_encode_$$"
DBU="tidx_encode_cutf8_$$"
[[ $CLUSTER -eq 1 ]] || trap 'run_psql -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "DROP DATABASE IF EXISTS $DBU" >/dev/null' EXIT
for d in "$DB:C" "$DBU:C.UTF-8"; do
    run_psql -d postgres -c "CREATE DATABASE ${d%%:*} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE '${d#*:}' LC_CTYPE '${d#*:}'" >/dev/null &&
    run_psql -d "${d%%:*}" -c "CREATE EXTENSION tidesam" >/dev/null ||
        { echo "index_encode: 0 passed, 1 failed"; exit 1; }
done

# one result row per check_enc() call in the script
NCHECKS="$(grep -c "check_enc('" "$SQL")"
pass=0
fail=0
for ((r = 1; r <= 2 * ROUNDS; r++)); do
    seed="0.$RANDOM$RANDOM"
    # odd rounds in the C database, even ones in the C.UTF-8 one
    db="$DB"; ((r % 2 == 0)) && db="$DBU"
    out="$(run_psql -d "$db" -v n="$N" -v seed="$seed" -v ON_ERROR_STOP=0 -A -F '|' -t -f "$SQL" 2>&1)"
    # result rows are "what|bad|example"; every bad must be 0
    rows="$(printf '%s\n' "$out" | grep -E '^[^|]+\|[0-9]+\|' || true)"
    nrows="$(printf '%s\n' "$rows" | grep -c . || true)"
    good="$(printf '%s\n' "$rows" | awk -F'|' 'NF >= 2 && $2 == 0' | grep -c . || true)"
    bad="$(printf '%s\n' "$rows" | awk -F'|' 'NF >= 2 && $2 != 0' || true)"
    missing=$((NCHECKS - nrows))
    ((missing < 0)) && missing=0
    pass=$((pass + good))
    fail=$((fail + NCHECKS - good))
    if [[ -n "$bad" || $missing -gt 0 ]]; then
        echo "round $r ($db, seed $seed, n $N): FAILED: $good of $NCHECKS checks agree"
        [[ -n "$bad" ]] && printf '%s\n' "$bad"
        [[ $missing -gt 0 ]] && printf '%s\n' "$out" | grep -E 'ERROR' | head
    else
        echo "round $r ($db, seed $seed, n $N): $nrows checks, all orders agree"
    fi
done
echo "index_encode: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
