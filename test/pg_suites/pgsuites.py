#!/usr/bin/env python3
"""Result collection and accepted-differences checking for test/pg_suites.

Subcommands
  check-file FILE
      Parse and validate an accepted-differences file; exit 0 if valid.
  compare --suite S --test T --expected-dir D --actual F [--accepted FILE]
      Decide whether the difference between results file F and the expected
      output(s) of test T (D/T.out, D/T_0.out .. D/T_9.out) is fully covered by
      the accepted entries for (S, T).  Exit 0 = identical or fully covered,
      1 = not covered (the uncovered lines are printed), 2 = usage error.
  summarize --suite S --log L --results-dir R --expected-dir D --tests-file F
            --seconds N --accepted FILE --out-json J --out-tsv T
      Parse pg_regress / pg_isolation_regress output L, classify every test
      listed in F (one name per line) as ok / accepted / FAILED / not-run,
      write J and T, print the one-line suite summary.
  final --am AM --outdir O J...
      Combine per-suite JSON files; print the closing lines; exit 0 if every
      suite passed, 1 otherwise.

Only the standard library is used.
"""

import argparse
import difflib
import json
import os
import re
import sys

KINDS = ("row-order", "plan", "physical", "catalog")
SUITES = ("regress", "isolation")
KEYS = ("suite", "test", "kind", "query", "lines", "reason")


# --------------------------------------------------------------------------
# accepted-differences file
# --------------------------------------------------------------------------

class Entry:
    def __init__(self, lineno):
        self.lineno = lineno
        self.suite = None
        self.test = None
        self.kind = None
        self.query = []      # compiled regexes (OR)
        self.lines = []      # compiled regexes (OR)
        self.reason = None
        self.used = 0

    def describe(self):
        return "%s/%s %s (accepted_differences line %d)" % (
            self.suite, self.test, self.kind, self.lineno)


class FormatError(Exception):
    pass


def parse_accepted(path):
    """Parse the stanza file.  Returns a list of Entry; raises FormatError."""
    entries = []
    if path is None or not os.path.exists(path):
        return entries
    with open(path, encoding="utf-8") as f:
        raw = f.read().split("\n")
    cur = None
    last_key = None
    errors = []

    def finish(e):
        if e is None:
            return
        where = "entry at line %d" % e.lineno
        if e.suite not in SUITES:
            errors.append("%s: suite must be one of %s" % (where, ", ".join(SUITES)))
        if not e.test:
            errors.append("%s: missing test" % where)
        if e.kind not in KINDS:
            errors.append("%s: kind must be one of %s" % (where, ", ".join(KINDS)))
        if e.kind == "row-order" and not e.query:
            errors.append("%s: row-order needs at least one 'query:' regex" % where)
        if e.kind == "row-order" and e.lines:
            errors.append("%s: row-order takes 'query:', not 'lines:'" % where)
        if e.kind in ("plan", "physical", "catalog") and not e.lines:
            errors.append("%s: %s needs at least one 'lines:' regex" % (where, e.kind))
        if not e.reason:
            errors.append("%s: missing reason" % where)
        entries.append(e)

    for n, line in enumerate(raw, 1):
        if line.lstrip().startswith("#"):
            continue
        if not line.strip():
            finish(cur)
            cur, last_key = None, None
            continue
        if line[0] in " \t":
            # continuation (reason only)
            if cur is None or last_key != "reason":
                errors.append("line %d: continuation line outside a 'reason:'" % n)
            else:
                cur.reason += " " + line.strip()
            continue
        m = re.match(r"^([a-z-]+):(.*)$", line)
        if not m or m.group(1) not in KEYS:
            errors.append("line %d: expected 'key: value' with key in %s" % (n, ", ".join(KEYS)))
            continue
        # surrounding whitespace is not part of a value (write \s or [ ] in
        # a regex that must start or end with a blank)
        key, val = m.group(1), m.group(2).strip()
        if cur is None:
            cur = Entry(n)
        last_key = key
        if key in ("query", "lines"):
            try:
                getattr(cur, key).append(re.compile(val))
            except re.error as ex:
                errors.append("line %d: bad regex %r: %s" % (n, val, ex))
        else:
            if getattr(cur, key) is not None:
                errors.append("line %d: duplicate key %s" % (n, key))
            setattr(cur, key, val.strip())
    finish(cur)
    if errors:
        raise FormatError("\n".join("%s: %s" % (path, e) for e in errors))
    return entries


# --------------------------------------------------------------------------
# output parsing
# --------------------------------------------------------------------------

FOOTER = re.compile(r"^\((\d+) rows?\)$")
SEP = re.compile(r"^-+(\+-+)*$")
WS = re.compile(r"\s+")


def norm(line):
    """pg_regress compares with `diff -w`: all whitespace is insignificant.

    In addition, the width of a result's separator line ("---+-----") is
    ignored, only its column structure counts: the width follows from the
    widest value, and the values themselves are compared anyway."""
    n = WS.sub("", line)
    if SEP.match(n):
        return re.sub("-+", "-", n)
    return n


class Block:
    """A query result: header, separator, rows, footer (line indexes)."""

    def __init__(self, header, start, end, footer, rows, query):
        self.header = header      # index of header line
        self.start = start        # first row line
        self.end = end            # one past the last row line (= footer index)
        self.footer = footer
        self.rows = rows          # list of row records (tuples of lines), or None
        self.query = query        # statement text (whitespace collapsed)


def _group_rows(lines, n):
    """Split row lines into n records; None if that is not possible."""
    if len(lines) == n:
        return [(l,) for l in lines]
    # psql aligned format marks a value continued on the next line with '+'
    # at the end of the cell ("... +" or "... +|").
    recs, cur = [], []
    for l in lines:
        cur.append(l)
        s = l.rstrip()
        if s.endswith("+") or "+|" in s:
            continue
        recs.append(tuple(cur))
        cur = []
    if cur:
        recs.append(tuple(cur))
    return recs if len(recs) == n else None


MESSAGE = re.compile(r"^(ERROR|WARNING|NOTICE|INFO|DETAIL|HINT|CONTEXT|QUERY|LINE \d+|"
                     r"psql:\S*|server closed|connection to server)\b.*:"
                     r"|^\s*\^\s*$"                                # error position marker
                     r"|^(PL/pgSQL function|SQL statement \"|SQL function \"|line \d+: )")
DOLLAR = re.compile(r"\$([A-Za-z_\x80-\uffff][A-Za-z_0-9\x80-\uffff]*)?\$")


def _lex(chunk, state):
    """Scan echoed input lines; returns (index of the first line of the last
    statement, state at the end).  state = (quote, dollar, block): quote is
    "'" / '"' / None, dollar the open $tag$ or None, block the /* depth."""
    quote, dollar, block = state
    start = 0
    for k, line in enumerate(chunk):
        if quote is None and dollar is None and not block and MESSAGE.match(line):
            start = k + 1
            continue
        last = ""
        i = 0
        n = len(line)
        while i < n:
            c = line[i]
            if block:
                if line.startswith("*/", i):
                    block -= 1
                    i += 2
                elif line.startswith("/*", i):
                    block += 1
                    i += 2
                else:
                    i += 1
            elif quote is not None:
                if c == quote:
                    quote = None
                    last = c
                i += 1
            elif dollar is not None:
                if line.startswith(dollar, i):
                    i += len(dollar)
                    dollar = None
                    last = "$"
                else:
                    i += 1
            elif line.startswith("--", i):
                break
            elif line.startswith("/*", i):
                block = 1
                i += 2
            elif c in "'\"":
                quote = c
                i += 1
            elif c == "$" and DOLLAR.match(line, i) and not (i and (line[i - 1].isalnum() or line[i - 1] == "_")):
                dollar = DOLLAR.match(line, i).group(0)
                i += len(dollar)
            elif c == "\\" and i == 0:
                last = ";"           # psql meta-command: a whole line
                break
            else:
                if not c.isspace():
                    last = c
                i += 1
        if last == ";" and quote is None and dollar is None and not block and k < len(chunk) - 1:
            start = k + 1
    return start, (quote, dollar, block)


def _last_statement(chunk):
    """The last SQL statement (or psql meta-command) in echoed input lines.

    A small lexer tracks quotes, dollar quotes and comments, so ';' inside
    function bodies or literals does not split statements.  Server messages
    (ERROR:, LINE n:, the '^' marker, CONTEXT lines) printed for an earlier
    statement also end it.  The chunk starts after a blank line, which may lie
    inside a function body or literal: if the lexer ends inside a quote, it is
    rerun starting inside one.  Leading comments are dropped."""
    start, end = _lex(chunk, (None, None, 0))
    if end != (None, None, 0):
        for retry in (("'", None, 0), ('"', None, 0), (None, None, 1)) + tuple(
                (None, m.group(0), 0) for l in chunk for m in [DOLLAR.search(l)] if m):
            s2, e2 = _lex(chunk, retry)
            if e2 == (None, None, 0):
                start = s2
                break
    stmt = [l for l in chunk[start:] if l.strip()]
    while stmt and stmt[0].lstrip().startswith("--"):
        stmt.pop(0)
    text = WS.sub(" ", " ".join(stmt)).strip()
    while text.startswith("/*") and "*/" in text:
        text = text[text.index("*/") + 2:].strip()
    return text


def _query_text(lines, header):
    """Text of the statement that produced the result starting at `header`.

    psql -a echoes the input: take the lines above the header up to a blank
    line or the previous result, then keep only the last statement (drop
    earlier statements that printed nothing, e.g. SET, and comment lines).
    isolationtester prints "step NAME: SQL"; a "step NAME: <... completed>"
    line is resolved to the SQL of that step."""
    chunk = []
    i = header - 1
    while i >= 0:
        s = lines[i]
        if not s.strip() or FOOTER.match(s.strip()) or s.startswith("starting permutation:"):
            break
        chunk.append(s)
        i -= 1
    chunk.reverse()
    if i >= 0 and not chunk and lines[i].startswith("starting permutation:"):
        return "<setup>"     # isolationtester prints setup results unlabeled
    steps = [k for k, s in enumerate(chunk) if s.startswith("step ")]
    if not steps:
        # an isolation step's SQL may contain blank lines: look further up
        # for its "step NAME:" line, but not past the previous result
        j = i
        while j >= 0:
            s = lines[j]
            if FOOTER.match(s.strip()) or s.startswith("starting permutation:"):
                break
            if s.startswith("step "):
                chunk = lines[j:header]
                steps = [0]
                break
            j -= 1
    if steps:
        chunk = chunk[steps[-1]:]
        m = re.match(r"^step (\S+): <\.\.\. completed>", chunk[0])
        if m:
            prefix = "step %s: " % m.group(1)
            for j in range(header - 1, -1, -1):
                s = lines[j]
                if s.startswith(prefix) and "<... completed>" not in s:
                    # the step's SQL runs up to its "<waiting ...>" marker
                    chunk = []
                    for t in lines[j:header]:
                        if chunk and t.startswith("step "):
                            break
                        chunk.append(t.replace(" <waiting ...>", ""))
                        if t.rstrip().endswith("<waiting ...>"):
                            break
                    break
    else:
        # notices/warnings printed while the statement ran precede its result
        while chunk and MESSAGE.match(chunk[-1]):
            chunk.pop()
        return _last_statement(chunk)
    return WS.sub(" ", " ".join(chunk)).strip()


def _is_header_sep(lines, i):
    """lines[i] is a result separator and lines[i-1] its column header."""
    sep = lines[i].rstrip()
    hdr = lines[i - 1].rstrip()
    return bool(SEP.match(sep) and hdr.strip() and len(hdr) <= len(sep)
                and hdr.count("|") == sep.count("+")
                and not hdr.startswith("--"))       # SQL comment lines


def parse_blocks(lines):
    blocks = []
    i = 1
    n = len(lines)
    while i < n:
        if _is_header_sep(lines, i):
            j = i + 1
            while j < n and not FOOTER.match(lines[j].strip()):
                if j > i + 1 and _is_header_sep(lines, j):
                    break          # another result began: i was no result
                j += 1
            if j < n and FOOTER.match(lines[j].strip()):
                cnt = int(FOOTER.match(lines[j].strip()).group(1))
                rows = _group_rows(lines[i + 1:j], cnt)
                q = _query_text(lines, i - 1)
                if not q and blocks and blocks[-1].footer in (i - 2, i - 3):
                    # a further result of the same statement / step (e.g.
                    # several statements in one isolation step)
                    q = blocks[-1].query
                blocks.append(Block(i - 1, i + 1, j, j, rows, q))
                i = j + 1
                continue
        i += 1
    return blocks


def read_lines(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return f.read().split("\n")


# --------------------------------------------------------------------------
# comparison
# --------------------------------------------------------------------------

def canonicalize(lines, blocks, row_entries):
    """Normalized lines, with rows of row-order-accepted results sorted.

    Returns (normalized lines, per-line block index or None, set of block
    indexes that were reordered-canonicalized with the entry used)."""
    out = [norm(l) for l in lines]
    owner = [None] * len(lines)
    canon = {}
    for bi, b in enumerate(blocks):
        for k in range(b.header, b.footer + 1):
            owner[k] = bi
        if b.rows is None:
            continue
        for e in row_entries:
            if any(r.search(b.query) for r in e.query):
                recs = sorted("\x00".join(norm(x) for x in rec) for rec in b.rows)
                # one canonical line per record, padded with empties so line
                # positions stay the same
                flat = []
                for rec in recs:
                    parts = rec.split("\x00")
                    flat.extend(parts)
                assert len(flat) == b.end - b.start
                out[b.start:b.end] = flat
                canon[bi] = e
                break
    return out, owner, canon


def compare_one(expected_lines, actual_lines, entries):
    """Returns (covered: bool, used entries: set, problems: list of str)."""
    row_entries = [e for e in entries if e.kind == "row-order"]
    line_entries = [e for e in entries if e.kind in ("plan", "physical", "catalog")]
    eb = parse_blocks(expected_lines)
    ab = parse_blocks(actual_lines)
    en, eown, ecanon = canonicalize(expected_lines, eb, row_entries)
    an, aown, acanon = canonicalize(actual_lines, ab, row_entries)
    raw_e = [norm(l) for l in expected_lines]
    raw_a = [norm(l) for l in actual_lines]

    used = set()
    problems = []

    # row-order entries that actually absorbed a difference
    if raw_e != raw_a and (ecanon or acanon):
        sm = difflib.SequenceMatcher(None, raw_e, raw_a, autojunk=False)
        for tag, i1, i2, j1, j2 in sm.get_opcodes():
            if tag == "equal":
                continue
            for k in range(i1, i2):
                if eown[k] in ecanon:
                    used.add(ecanon[eown[k]])
            for k in range(j1, j2):
                if aown[k] in acanon:
                    used.add(acanon[aown[k]])

    sm = difflib.SequenceMatcher(None, en, an, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        for side, lines, blocks, owner, rng in (
                ("-", expected_lines, eb, eown, range(i1, i2)),
                ("+", actual_lines, ab, aown, range(j1, j2))):
            for k in rng:
                line = lines[k]
                hit = None
                for e in line_entries:
                    if not any(r.search(line.rstrip()) for r in e.lines):
                        continue
                    if e.query:
                        bi = owner[k]
                        if bi is None or not any(r.search(blocks[bi].query) for r in e.query):
                            continue
                    hit = e
                    break
                if hit is None:
                    problems.append("%s%s" % (side, line))
                else:
                    used.add(hit)
    return not problems, used, problems


def expected_candidates(expected_dir, test):
    c = [os.path.join(expected_dir, test + ".out")]
    c += [os.path.join(expected_dir, "%s_%d.out" % (test, i)) for i in range(10)]
    return [p for p in c if os.path.exists(p)]


def judge(suite, test, expected_dir, actual, entries):
    """Returns (status, used entries, problems): status in ok/accepted/FAILED."""
    if not os.path.exists(actual):
        return "FAILED", set(), ["no results file %s" % actual]
    cands = expected_candidates(expected_dir, test)
    if not cands:
        return "FAILED", set(), ["no expected file for %s in %s" % (test, expected_dir)]
    act = read_lines(actual)
    mine = [e for e in entries if e.suite == suite and e.test == test]
    best = None
    for c in cands:
        exp = read_lines(c)
        if [norm(l) for l in exp] == [norm(l) for l in act]:
            return "ok", set(), []
        covered, used, problems = compare_one(exp, act, mine)
        if covered:
            return "accepted", used, []
        if best is None or len(problems) < len(best[1]):
            best = (c, problems)
    return "FAILED", set(), ["uncovered differences against %s:" % os.path.basename(best[0])] + best[1]


# --------------------------------------------------------------------------
# pg_regress output
# --------------------------------------------------------------------------

# PG 15:  "test name      ... ok          12 ms"
#         "     name      ... FAILED      12 ms"
#         "     name      ... failed (ignored)"
#         "     name      ... FAILED (test process exited with exit code 2)   13 ms"
STATUS = re.compile(r"^(?:test\s+|\s+)(\S+)\s+\.\.\.\s+(ok|FAILED|failed \(ignored\))"
                    r"(?:\s+\([^)]*\))?(?:\s+(\d+) ms)?")


def parse_log(path):
    res = {}
    if not os.path.exists(path):
        return res
    for line in read_lines(path):
        m = STATUS.match(line)
        if m:
            res[m.group(1)] = (m.group(2), int(m.group(3)) if m.group(3) else None)
    return res


# --------------------------------------------------------------------------
# commands
# --------------------------------------------------------------------------

def cmd_check_file(a):
    try:
        entries = parse_accepted(a.file)
    except FormatError as ex:
        print(ex, file=sys.stderr)
        return 1
    print("%s: %d entr%s OK" % (a.file, len(entries), "y" if len(entries) == 1 else "ies"))
    return 0


def cmd_compare(a):
    try:
        entries = parse_accepted(a.accepted)
    except FormatError as ex:
        print(ex, file=sys.stderr)
        return 2
    status, used, problems = judge(a.suite, a.test, a.expected_dir, a.actual, entries)
    print("%s/%s: %s" % (a.suite, a.test, status))
    for e in sorted(used, key=lambda e: e.lineno):
        print("  accepted: %s: %s" % (e.describe(), e.reason))
    for p in problems[:a.max_lines]:
        print("  " + p)
    if len(problems) > a.max_lines:
        print("  ... %d more" % (len(problems) - a.max_lines))
    return 0 if status in ("ok", "accepted") else 1


def cmd_summarize(a):
    entries = parse_accepted(a.accepted)
    with open(a.tests_file, encoding="utf-8") as f:
        tests = [t.strip() for t in f if t.strip()]
    log = parse_log(a.log)
    rows = []
    counts = {"ok": 0, "accepted": 0, "FAILED": 0, "not-run": 0}
    failed, accepted = [], []
    details = []
    for t in tests:
        st, ms = log.get(t, (None, None))
        if st is None:
            status = "not-run"
        elif st == "ok":
            status = "ok"
        else:
            status, used, problems = judge(a.suite, t, a.expected_dir,
                                           os.path.join(a.results_dir, t + ".out"), entries)
            if status == "accepted":
                details.append("%s/%s: passed with accepted differences: %s" % (
                    a.suite, t, "; ".join(e.describe() for e in sorted(used, key=lambda e: e.lineno))))
            elif status == "FAILED":
                details.append("%s/%s: FAILED\n    %s" % (a.suite, t, "\n    ".join(problems[:40])))
        counts[status] += 1
        if status == "accepted":
            accepted.append(t)
        elif status in ("FAILED", "not-run"):
            failed.append(t)
        rows.append("%s\t%s\t%s" % (t, status, "" if ms is None else ms))
    extra = sorted(set(log) - set(tests))
    with open(a.out_tsv, "w", encoding="utf-8") as f:
        f.write("test\tstatus\tms\n")
        f.write("\n".join(rows) + "\n")
    total = len(tests)
    passed = counts["ok"] + counts["accepted"]
    summary = {
        "suite": a.suite,
        "total": total,
        "passed": passed,
        "clean": counts["ok"],
        "accepted": counts["accepted"],
        "failed": counts["FAILED"],
        "not_run": counts["not-run"],
        "failed_tests": failed,
        "accepted_tests": accepted,
        "unexpected_tests": extra,
        "seconds": round(float(a.seconds), 1),
        "pg_regress_exit": a.exit_code,
        "timed_out": bool(a.timed_out),
    }
    with open(a.out_json, "w", encoding="utf-8") as f:
        json.dump(summary, f)
    if details:
        with open(a.out_details, "w", encoding="utf-8") as f:
            f.write("\n".join(details) + "\n")
        for d in details:
            print(d, file=sys.stderr)
    nf = counts["FAILED"] + counts["not-run"]
    line = "%s: %d/%d passed" % (a.suite, passed, total)
    line += " (%d with accepted differences)" % counts["accepted"]
    line += ", %d failed" % nf
    if counts["not-run"]:
        line += " (%d not run)" % counts["not-run"]
    line += ", %.1fs" % float(a.seconds)
    if a.timed_out:
        line += " (TIMED OUT)"
    print(line)
    return 0


def cmd_final(a):
    suites = []
    for p in a.json:
        with open(p, encoding="utf-8") as f:
            suites.append(json.load(f))
    passed = sum(s["passed"] for s in suites)
    failed = sum(s["failed"] + s["not_run"] for s in suites)
    ok = (failed == 0 and a.server_crashes == 0 and bool(suites)
          and all(s["total"] > 0 for s in suites))
    result = {
        "am": a.am,
        "server_crashes": a.server_crashes,
        "status": "pass" if ok else "fail",
        "passed": passed,
        "failed": failed,
        "accepted": sum(s["accepted"] for s in suites),
        "suites": {s["suite"]: s for s in suites},
        "outdir": a.outdir,
    }
    with open(os.path.join(a.outdir, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1)
    if a.server_crashes:
        print("pg_suites: server crashed %d time(s), see %s/postmaster.log" % (a.server_crashes, a.outdir))
    print("pg_suites: %d passed, %d failed" % (passed, failed))
    print("PG_SUITES_RESULT " + json.dumps(result, separators=(",", ":")))
    return 0 if ok else 1


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("check-file")
    p.add_argument("file")
    p.set_defaults(fn=cmd_check_file)

    p = sub.add_parser("compare")
    p.add_argument("--suite", required=True, choices=SUITES)
    p.add_argument("--test", required=True)
    p.add_argument("--expected-dir", required=True)
    p.add_argument("--actual", required=True)
    p.add_argument("--accepted")
    p.add_argument("--max-lines", type=int, default=40)
    p.set_defaults(fn=cmd_compare)

    p = sub.add_parser("summarize")
    p.add_argument("--suite", required=True, choices=SUITES)
    p.add_argument("--log", required=True)
    p.add_argument("--results-dir", required=True)
    p.add_argument("--expected-dir", required=True)
    p.add_argument("--tests-file", required=True)
    p.add_argument("--seconds", required=True)
    p.add_argument("--exit-code", type=int, default=0)
    p.add_argument("--timed-out", type=int, default=0)
    p.add_argument("--accepted")
    p.add_argument("--out-json", required=True)
    p.add_argument("--out-tsv", required=True)
    p.add_argument("--out-details", required=True)
    p.set_defaults(fn=cmd_summarize)

    p = sub.add_parser("final")
    p.add_argument("--am", required=True)
    p.add_argument("--outdir", required=True)
    p.add_argument("--server-crashes", type=int, default=0)
    p.add_argument("json", nargs="+")
    p.set_defaults(fn=cmd_final)

    a = ap.parse_args(argv)
    return a.fn(a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
