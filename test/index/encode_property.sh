#!/usr/bin/env bash
# test/index/encode_property.sh -- property test of tides_btree's key
# encodings against a running server with tidesam loaded.
#
#   PGHOST=... PGPORT=... test/index/encode_property.sh [ROUNDS] [N]
#
# Each round runs sql/index_encode.sql with N random values per type (and
# the edge values) and a fresh random seed: for every supported type and
# collation, sorting by the type's b-tree comparator and by memcmp of
# tides_index_encode() must agree, and encodings must be equal exactly for
# equal values.  (libc collations are not checked: glibc's strxfrm does not
# always agree with its strcoll, which is why tides_btree rejects them.)
# Prints one line per round; exits 1 on the first failure,
# showing the failing rows (with examples).  Default: 5 rounds of 5000.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ROUNDS="${1:-5}"
N="${2:-5000}"
DB="tidx_encode_$$"
psql -X -q -d postgres -c "CREATE DATABASE $DB TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'" >/dev/null
trap 'psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null' EXIT
psql -X -q -d "$DB" -c "CREATE EXTENSION tidesam" >/dev/null
# one result row per check_enc() call in the script
NCHECKS="$(grep -c "check_enc('" "$REPO/sql/index_encode.sql")"
for ((r = 1; r <= ROUNDS; r++)); do
    seed="0.$RANDOM$RANDOM"
    out="$(psql -X -d "$DB" -v n="$N" -v seed="$seed" -v ON_ERROR_STOP=0 -A -F '|' -t \
           -f "$REPO/sql/index_encode.sql" 2>&1)"
    # result rows are "what|bad|example"; every bad must be 0
    rows="$(printf '%s\n' "$out" | grep -E '^[^|]+\|[0-9]+\|' || true)"
    nrows="$(printf '%s\n' "$rows" | grep -c . || true)"
    bad="$(printf '%s\n' "$rows" | awk -F'|' '$2 != 0' || true)"
    if [[ -n "$bad" || "$nrows" -lt "$NCHECKS" ]]; then
        echo "round $r (seed $seed, n $N): FAILED ($nrows checks)"
        printf '%s\n' "$bad"
        [[ "$nrows" -lt "$NCHECKS" ]] && printf '%s\n' "$out" | grep -E 'ERROR' | head
        exit 1
    fi
    echo "round $r (seed $seed, n $N): $nrows checks, all orders agree"
done
