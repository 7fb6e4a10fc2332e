#!/usr/bin/env bash
# Self-test of the accepted-differences mechanism (pgsuites.py).
#
#   test/pg_suites/selftest.sh          offline checks on fabricated outputs (no server, ~1 s)
#   test/pg_suites/selftest.sh --e2e    also run.sh end to end: a real regress test against a
#                                       copied expected file with two rows swapped (needs
#                                       root or a prepared cache; ~15 s)
#
# Prints "selftest: N passed, N failed"; exit 0 only if all checks passed.
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
TOOL="$PG_SUITES_DIR/pgsuites.py"

E2E=0
[[ "${1:-}" == "--e2e" ]] && E2E=1

T="$(mktemp -d "${TMPDIR:-/tmp}/tidesam-pgsuites-selftest.XXXXXX")"
trap '[[ -n "${KEEP_T:-}" ]] || rm -rf "$T"' EXIT
PASS=0
FAIL=0

check() {  # check NAME WANT_STATUS(ok|accepted|FAILED) ACCEPTED_FILE SUITE TEST EXPECTED_DIR ACTUAL
    local name="$1" want="$2" acc="$3" suite="$4" test="$5" edir="$6" actual="$7" out got
    out="$("$PYTHON" "$TOOL" compare --suite "$suite" --test "$test" --expected-dir "$edir" \
        --actual "$actual" --accepted "$acc" 2>&1 || true)"
    got="$(head -n1 <<<"$out" | sed 's/^.*: //')"
    if [[ "$got" == "$want" ]]; then
        PASS=$((PASS + 1)); echo "ok   - $name ($got)"
    else
        FAIL=$((FAIL + 1)); echo "FAIL - $name: want $want, got: $out"
    fi
}
check_rc() {  # check_rc NAME WANT_RC CMD...
    local name="$1" want="$2" rc=0
    shift 2
    "$@" >"$T/rc.out" 2>&1 || rc=$?
    if [[ "$rc" == "$want" ]]; then
        PASS=$((PASS + 1)); echo "ok   - $name (exit $rc)"
    else
        FAIL=$((FAIL + 1)); echo "FAIL - $name: want exit $want, got $rc:"; sed 's/^/       /' "$T/rc.out"
    fi
}

# ------------------------------------------------------------ fixtures -----
mkdir -p "$T/exp" "$T/iso"
cat >"$T/exp/foo.out" <<'EOF'
-- a comment
SELECT a, b FROM t1;
 a |   b   
---+-------
 1 | one
 2 | two
 3 | three
(3 rows)

SELECT x FROM t2 ORDER BY x;
 x  
----
 10
 20
(2 rows)

EXPLAIN (COSTS OFF) SELECT * FROM t1 WHERE a = 1;
          QUERY PLAN          
------------------------------
 Index Scan using t1_a on t1
   Index Cond: (a = 1)
(2 rows)

SELECT ctid, a FROM t1 WHERE a = 2;
 ctid  | a 
-------+---
 (0,2) | 2
(1 row)

SELECT v FROM ml;
  v  
-----
 a  +
 b
 c  +
 d
(2 rows)

EOF
cp "$T/exp/foo.out" "$T/same.out"
sed 's/^ 1 | one$/ 1 |     one/' "$T/exp/foo.out" >"$T/ws.out"
# rows 1 and 3 of the t1 result swapped
awk '$0==" 1 | one"{print " 3 | three"; next} $0==" 3 | three"{print " 1 | one"; next} {print}' \
    "$T/exp/foo.out" >"$T/swap.out"
# swapped and one value changed
sed 's/^ 3 | three$/ 3 | THREE/' "$T/swap.out" >"$T/swapchg.out"
# same row count, different multiset
awk '$0==" 1 | one"{print " 2 | two"; next} {print}' "$T/exp/foo.out" >"$T/multiset.out"
# rows of t2 (ORDER BY) swapped
awk '$0==" 10"{print " 20"; next} $0==" 20"{print " 10"; next} {print}' "$T/exp/foo.out" >"$T/swap2.out"
# a different plan
sed -e 's/^ Index Scan using t1_a on t1$/ Seq Scan on t1/' -e 's/^   Index Cond: (a = 1)$/   Filter: (a = 1)/' \
    "$T/exp/foo.out" >"$T/plan.out"
# a wider plan: the separator under "QUERY PLAN" grows too
sed -e 's/^ Index Scan using t1_a on t1$/ Seq Scan on t1 (a much longer plan line here)/' \
    -e 's/^------------------------------$/-----------------------------------------------/' \
    -e 's/^   Index Cond: (a = 1)$/   Filter: (a = 1)/' "$T/exp/foo.out" >"$T/planwide.out"
# a different plan and an unrelated change
sed 's/^-- a comment$/-- another comment/' "$T/plan.out" >"$T/planplus.out"
# a different tuple location
sed 's/^ (0,2) | 2$/ (1,7) | 2/' "$T/exp/foo.out" >"$T/ctid.out"
# multi-line values, rows swapped
awk '/^ a  \+$/{a=$0; getline b; getline c; getline d; print c; print d; print a; print b; next} {print}' \
    "$T/exp/foo.out" >"$T/ml.out"
# alternative expected file
mkdir -p "$T/exp2"
cp "$T/exp/foo.out" "$T/exp2/foo.out"
cp "$T/swap.out" "$T/exp2/foo_1.out"

cat >"$T/iso/spec1.out" <<'EOF'
Parsed test spec with 2 sessions

starting permutation: s1u s2u c1 read
step s1u: UPDATE accounts SET balance = balance - 200 WHERE id = 1;
step s2u: UPDATE accounts SET balance = balance + 200 WHERE id = 1; <waiting ...>
step c1: COMMIT;
step s2u: <... completed>
step read: SELECT id, balance FROM accounts;
id|balance
--+-------
 1|    400
 2|    600
(2 rows)

EOF
awk '$0==" 1|    400"{print " 2|    600"; next} $0==" 2|    600"{print " 1|    400"; next} {print}' \
    "$T/iso/spec1.out" >"$T/isoswap.out"

# ---------------------------------------------------- accepted files -------
: >"$T/none"
cat >"$T/roworder" <<'EOF'
# comment
suite:  regress
test:   foo
kind:   row-order
query:  ^SELECT a, b FROM t1;$
reason: no ORDER BY
EOF
sed 's/^test:   foo$/test:   bar/' "$T/roworder" >"$T/roworder-othertest"
sed 's/^suite:  regress$/suite:  isolation/' "$T/roworder" >"$T/roworder-othersuite"
sed 's/^query:.*/query:  FROM t2/' "$T/roworder" >"$T/roworder-t2"
cat >"$T/plan" <<'EOF'
suite:  regress
test:   foo
kind:   plan
query:  ^EXPLAIN
lines:  ^\s*(Index|Seq) Scan\b
lines:  ^\s*(Index Cond|Filter):
reason: plan choice
        depends on relation size
EOF
grep -v 'Index Cond' "$T/plan" >"$T/plan-partial"
sed 's/^query:.*/query:  ^SELECT x/' "$T/plan" >"$T/plan-otherquery"
cat >"$T/physical" <<'EOF'
suite:  regress
test:   foo
kind:   physical
lines:  ^\s*\(\d+,\d+\) \|
reason: tuple ids are storage layout
EOF
cat >"$T/ml" <<'EOF'
suite: regress
test: foo
kind: row-order
query: FROM ml
reason: multi-line values
EOF
cat >"$T/iso-acc" <<'EOF'
suite:  isolation
test:   spec1
kind:   row-order
query:  ^step read: SELECT id, balance FROM accounts
reason: no ORDER BY
EOF
cat "$T/roworder" <(echo) "$T/plan" <(echo) "$T/physical" >"$T/all"

# ------------------------------------------------------- compare checks -----
E="$T/exp"
check "identical"                          ok       "$T/none"     regress foo "$E" "$T/same.out"
check "whitespace only (diff -w)"          ok       "$T/none"     regress foo "$E" "$T/ws.out"
check "two rows swapped, no entry"         FAILED   "$T/none"     regress foo "$E" "$T/swap.out"
check "two rows swapped, row-order entry"  accepted "$T/roworder" regress foo "$E" "$T/swap.out"
check "swapped, entry for other test"      FAILED   "$T/roworder-othertest"  regress foo "$E" "$T/swap.out"
check "swapped, entry for other suite"     FAILED   "$T/roworder-othersuite" regress foo "$E" "$T/swap.out"
check "swapped, entry for other query"     FAILED   "$T/roworder-t2" regress foo "$E" "$T/swap.out"
check "swapped and value changed"          FAILED   "$T/roworder" regress foo "$E" "$T/swapchg.out"
check "different multiset, same count"     FAILED   "$T/roworder" regress foo "$E" "$T/multiset.out"
check "other query's rows swapped"         FAILED   "$T/roworder" regress foo "$E" "$T/swap2.out"
check "plan lines differ, plan entry"      accepted "$T/plan"     regress foo "$E" "$T/plan.out"
check "plan lines differ, no entry"        FAILED   "$T/none"     regress foo "$E" "$T/plan.out"
check "wider plan, separator width ignored" accepted "$T/plan"    regress foo "$E" "$T/planwide.out"
check "plan entry covers only some lines"  FAILED   "$T/plan-partial" regress foo "$E" "$T/plan.out"
check "plan entry for another query"       FAILED   "$T/plan-otherquery" regress foo "$E" "$T/plan.out"
check "plan + unrelated change"            FAILED   "$T/plan"     regress foo "$E" "$T/planplus.out"
check "ctid differs, physical entry"       accepted "$T/physical" regress foo "$E" "$T/ctid.out"
check "ctid differs, plan entry only"      FAILED   "$T/plan"     regress foo "$E" "$T/ctid.out"
check "multi-line rows swapped, entry"     accepted "$T/ml"       regress foo "$E" "$T/ml.out"
check "multi-line rows swapped, no entry"  FAILED   "$T/none"     regress foo "$E" "$T/ml.out"
check "several entries, several kinds"     accepted "$T/all"      regress foo "$E" "$T/plan.out"
check "matches alternative expected _1"    ok       "$T/none"     regress foo "$T/exp2" "$T/swap.out"
check "isolation rows swapped, entry"      accepted "$T/iso-acc"  isolation spec1 "$T/iso" "$T/isoswap.out"
check "isolation rows swapped, no entry"   FAILED   "$T/none"     isolation spec1 "$T/iso" "$T/isoswap.out"
check "missing results file"               FAILED   "$T/roworder" regress foo "$E" "$T/nonexistent.out"

# ------------------------------------------------- file format checks -----
check_rc "repository accepted_differences is valid" 0 "$PYTHON" "$TOOL" check-file "$PG_SUITES_DIR/accepted_differences"
check_rc "combined fixture file is valid" 0 "$PYTHON" "$TOOL" check-file "$T/all"
grep -v '^reason' "$T/roworder" | grep -v '^ ' >"$T/bad1"
check_rc "rejects entry without reason" 1 "$PYTHON" "$TOOL" check-file "$T/bad1"
sed 's/^kind:.*/kind:   sorting/' "$T/roworder" >"$T/bad2"
check_rc "rejects unknown kind" 1 "$PYTHON" "$TOOL" check-file "$T/bad2"
sed 's/^query:.*/query:  (unbalanced/' "$T/roworder" >"$T/bad3"
check_rc "rejects bad regex" 1 "$PYTHON" "$TOOL" check-file "$T/bad3"
{ cat "$T/roworder"; printf 'lines:  foo\n'; } >"$T/bad4"
check_rc "rejects lines: on row-order" 1 "$PYTHON" "$TOOL" check-file "$T/bad4"
grep -v '^lines' "$T/plan" >"$T/bad5"
check_rc "rejects plan without lines:" 1 "$PYTHON" "$TOOL" check-file "$T/bad5"
printf 'suite: regress\ntest: foo\nkind: plan\nline: x\nreason: r\n' >"$T/bad6"
check_rc "rejects unknown key" 1 "$PYTHON" "$TOOL" check-file "$T/bad6"

# ----------------------------------------------- summarize (no server) -----
mkdir -p "$T/sum/results"
cp "$T/swap.out" "$T/sum/results/foo.out"
cp "$T/exp/foo.out" "$T/exp/bar.out"; cp "$T/swapchg.out" "$T/sum/results/bar.out"
cp "$T/exp/foo.out" "$T/sum/results/baz.out"; cp "$T/exp/foo.out" "$T/exp/baz.out"
printf 'foo\nbar\nbaz\nqux\n' >"$T/sum/tests.list"
cat >"$T/sum/log" <<'EOF'
parallel group (3 tests):  baz foo bar
     baz                          ... ok           10 ms
     foo                          ... FAILED       12 ms
     bar                          ... FAILED (test process exited with exit code 2)       13 ms
EOF
"$PYTHON" "$TOOL" summarize --suite regress --log "$T/sum/log" --results-dir "$T/sum/results" \
    --expected-dir "$T/exp" --tests-file "$T/sum/tests.list" --seconds 1.25 --accepted "$T/roworder" \
    --out-json "$T/sum/s.json" --out-tsv "$T/sum/s.tsv" --out-details "$T/sum/d.txt" >"$T/sum/line" 2>"$T/sum/err" || { cat "$T/sum/err"; true; }
want="regress: 2/4 passed (1 with accepted differences), 2 failed (1 not run), 1.2s"
if [[ "$(cat "$T/sum/line")" == "$want" ]] &&
    grep -qxP 'foo\taccepted\t12' "$T/sum/s.tsv" && grep -qxP 'bar\tFAILED\t13' "$T/sum/s.tsv" &&
    grep -qxP 'baz\tok\t10' "$T/sum/s.tsv" && grep -qxP 'qux\tnot-run\t' "$T/sum/s.tsv"; then
    PASS=$((PASS + 1)); echo "ok   - summarize classifies ok/accepted/FAILED/not-run"
else
    FAIL=$((FAIL + 1)); echo "FAIL - summarize: got '$(cat "$T/sum/line")'"; cat "$T/sum/s.tsv"
fi

# ------------------------------ a real PostgreSQL expected file, if fetched -----
if [[ -n "$(pg_pkg_version)" ]]; then
    pg_cache_paths "$(pg_pkg_version)"
    SRC="$(pg_src_dir)"
else
    SRC=""
fi
# swap the first two rows of the result of this statement
REAL_TEST=select_distinct
REAL_QUERY='SELECT DISTINCT two FROM onek ORDER BY 1;'
swap_rows() {  # swap_rows IN OUT: swap rows 1 and 2 of $REAL_QUERY's result
    awk -v q="$REAL_QUERY" '
        $0 == q { st = 1 }
        st == 1 && /^-+$/ { st = 2; print; next }
        st == 2 { r1 = $0; st = 3; next }
        st == 3 { print; print r1; st = 4; n++; next }
        { print }
        END { if (n != 1) exit 1 }' "$1" >"$2"
}
real_accepted() {
    cat <<EOF
suite:  regress
test:   $REAL_TEST
kind:   row-order
query:  ^SELECT DISTINCT two FROM onek\b
reason: selftest: fabricated row-order difference
EOF
}
if [[ -n "$SRC" ]]; then
    RE="$SRC/src/test/regress/expected"
    mkdir -p "$T/real/regress"
    swap_rows "$RE/$REAL_TEST.out" "$T/real/regress/$REAL_TEST.out"
    real_accepted >"$T/real/acc"
    check "real $REAL_TEST.out, two rows swapped, entry"    accepted "$T/real/acc" regress "$REAL_TEST" "$RE" "$T/real/regress/$REAL_TEST.out"
    check "real $REAL_TEST.out, two rows swapped, no entry" FAILED   "$T/none"     regress "$REAL_TEST" "$RE" "$T/real/regress/$REAL_TEST.out"
else
    echo "skip - real expected file: PostgreSQL sources not fetched yet (run prepare.sh)"
fi

# ---------------------------------------------------------- end to end -----
if [[ $E2E -eq 1 ]]; then
    "$PG_SUITES_DIR/prepare.sh" --quiet >/dev/null
    pg_cache_paths "$(pg_pkg_version)"
    SRC="$(pg_src_dir)"
    mkdir -p "$T/e2e/regress"
    swap_rows "$SRC/src/test/regress/expected/$REAL_TEST.out" "$T/e2e/regress/$REAL_TEST.out"
    real_accepted >"$T/e2e/acc"
    RUN=("$PG_SUITES_DIR/run.sh" --quiet --suite regress --regress-tests "test_setup create_index $REAL_TEST"
         --expected-overlay "$T/e2e")
    rc=0
    "${RUN[@]}" --accepted "$T/e2e/acc" --outdir "$T/e2e/out1" >"$T/e2e/log1" 2>&1 || rc=$?
    if [[ $rc -eq 0 ]] && grep -q "^regress: 3/3 passed (1 with accepted differences), 0 failed" "$T/e2e/log1"; then
        PASS=$((PASS + 1)); echo "ok   - e2e: swapped expected rows pass with an accepted entry"
    else
        FAIL=$((FAIL + 1)); echo "FAIL - e2e with entry (exit $rc):"; tail -n 20 "$T/e2e/log1"
    fi
    rc=0
    "${RUN[@]}" --accepted "$T/none" --outdir "$T/e2e/out2" >"$T/e2e/log2" 2>&1 || rc=$?
    if [[ $rc -eq 1 ]] && grep -q "^regress: 2/3 passed (0 with accepted differences), 1 failed" "$T/e2e/log2"; then
        PASS=$((PASS + 1)); echo "ok   - e2e: swapped expected rows fail without an entry"
    else
        FAIL=$((FAIL + 1)); echo "FAIL - e2e without entry (exit $rc):"; tail -n 20 "$T/e2e/log2"
    fi
fi

echo "selftest: $PASS passed, $FAIL failed"
[[ $FAIL -eq 0 ]]
