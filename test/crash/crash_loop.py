#!/usr/bin/env python3
"""crash_loop.py -- kill -9 loops over the bank-transfer workload.

For each sync mode (none, interval, full) and each variant

  kill  plain kill -9 of the postmaster and all its children: the OS stays
        up, so every write() the engine made survives (DESIGN.md D3);
  keep  the same with the test module tidesam_keepvfs preloaded
        (test/crash/keepvfs): the engine's unsynced
        log writes live in shared memory and die with the server, as in an
        OS crash, while PostgreSQL's WAL survives (the hardest case for D1
        and D4),
  backend  (not in the default list) kill -9 of one client backend with
        tidesam_keepvfs preloaded: PostgreSQL restarts every process
        with the OS up; the postmaster must write the kept log writes back
        before it reinitialises shared memory, so D3 holds as for kill,

it runs CYCLES cycles of: start the server, check every invariant, run the
bank clients (bank.c) for a random time, kill -9 everything.  After the last
kill it restarts and checks once more.

Invariants checked after every restart (a cycle passes when all hold):
  balance    accounts has exactly N rows, N distinct ids, total = N * 1000
  atomic     for every account: balance - 1000 = sum of its history deltas
             (a transfer is all there or not at all, D1); sum(tellers.n)
             (a HOT update per transfer) = count(history); every bulk batch
             has all its rows or none; no row of a rolled-back savepoint
  never      no transfer whose COMMIT was never sent, that failed, or that
             the client rolled back is visible
  forgotten  no transfer PostgreSQL forgot (xid >= the nextXid its recovery
             ended with) is visible -- now or after its xid was reused (D4)
  acked      acknowledged transfers are present: in full mode all of them
             (D2); in every mode those of synchronous_commit=on clients
             (D3 when the OS stays up, D3b under keep)
  index      index scans return exactly what sequential scans return (D6;
             accounts.balance is indexed, so updates are not HOT and old
             index entries become deletable by nbtree)
  verify     SELECT * FROM tides_verify() returns no rows (D8)
  log        no PANIC, assertion failure or crashed process in the server log

Counting: each cycle is one test.  Final line: "crash: P passed, F failed".

  crash_loop.py [--cycles N] [--modes none,interval,full,wal] [--variants kill,keep]
                [--clients 4] [--accounts 200] [--max-run 1.0] [--dir DIR] [--seed S]
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pgharness as H  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
INITIAL = 1000
BULK_ROWS = 200


def build_bank(out):
    src = os.path.join(HERE, "bank.c")
    if os.path.exists(out) and os.path.getmtime(out) >= os.path.getmtime(src):
        return out
    inc = H.pg_config("--includedir")
    libdir = H.pg_config("--libdir")
    subprocess.check_call(["cc", "-O2", "-Wall", "-I" + inc, src, "-o", out, "-L" + libdir, "-lpq", "-lpthread"])
    return out


class Group:
    """State of one (mode, variant) loop."""

    def __init__(self, mode, variant):
        self.mode = mode
        self.variant = variant
        self.commit_sent = {}     # tid -> (xid, cycle, sync)
        self.acked = {}           # tid -> sync
        self.never = set()        # F, R, and in-flight before COMMIT
        self.unknown = set()
        self.forgotten = set()    # committed by the client, forgotten by PostgreSQL
        self.xerrors = []
        self.cycle_tids = []      # C tids of the cycle just killed
        self.pg_status = {}       # tid -> txid_status of its xid (final ones only)
        self.stats = dict(cycles=0, passed=0, failed=0, acked=0, acked_lost_allowed=0, unknown=0,
                          forgotten=0, restart_s=0.0, replayed_batches=0, unsynced_at_kill=0,
                          unsealed=0, damaged_tails=0, commits=0)


def parse_client_logs(g, logdir, cycle):
    g.cycle_tids = []
    for name in sorted(os.listdir(logdir)):
        if not name.startswith("client."):
            continue
        sync = True
        state = {}
        with open(os.path.join(logdir, name)) as f:
            for line in f:
                parts = line.split()
                if not parts:
                    continue
                kind = parts[0]
                if kind == "S":
                    sync = parts[1] == "sync"
                    continue
                if len(parts) < 2:
                    continue
                tid = int(parts[1])
                if kind == "C":
                    g.commit_sent[tid] = (int(parts[2]), cycle, sync)
                    g.cycle_tids.append(tid)
                    state[tid] = "C"
                elif kind == "A":
                    g.acked[tid] = sync
                    state[tid] = "A"
                elif kind == "U":
                    g.unknown.add(tid)
                    state[tid] = "U"
                elif kind in ("F", "R"):
                    g.never.add(tid)
                    state[tid] = kind
                elif kind == "X":
                    g.xerrors.append("cycle %d %s: %s" % (cycle, name, line.strip()))
        g.stats["acked"] += sum(1 for v in state.values() if v == "A")
        g.stats["unknown"] += sum(1 for v in state.values() if v == "U")
        g.stats["commits"] += sum(1 for v in state.values() if v in ("A", "U", "C"))


SETUP_SQL = """
DROP TABLE IF EXISTS accounts, history, bulk, tellers;
CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL) USING tides;
-- balance is indexed: every transfer's updates are non-HOT, so old index
-- entries become deletable (nbtree simple and bottom-up deletion)
CREATE INDEX accounts_balance ON accounts (balance);
-- n is not indexed: HOT updates
CREATE TABLE tellers (id int PRIMARY KEY, n bigint NOT NULL) USING tides;
INSERT INTO tellers SELECT g, 0 FROM generate_series(0, 9) g;
CREATE TABLE history (tid bigint PRIMARY KEY, src int NOT NULL, dst int NOT NULL, amount int NOT NULL) USING tides;
CREATE INDEX history_src ON history (src);
CREATE TABLE bulk (bid bigint, k int, pad text, PRIMARY KEY (bid, k)) USING tides;
INSERT INTO accounts SELECT g, %d FROM generate_series(0, %d) g;
""" % (INITIAL, 0)  # accounts count filled in at run time


def check(c, g, accounts, problems):
    """Run every invariant; append human-readable problems."""
    seq = "SET enable_indexscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;\n"
    idx = "SET enable_seqscan = off; SET enable_bitmapscan = off;\n"
    out = c.rows(seq + """
SELECT 'acc', count(*), count(DISTINCT id), coalesce(sum(balance), 0) FROM accounts;
SELECT 'neg', count(*) FROM history WHERE tid < 0;
SELECT 'dup', count(*) - count(DISTINCT tid) FROM history;
SELECT 'bad', a.id, a.balance, coalesce(h.s, 0)
  FROM accounts a LEFT JOIN (SELECT acc, sum(d) AS s FROM
        (SELECT src AS acc, -amount AS d FROM history UNION ALL SELECT dst, amount FROM history) x
        GROUP BY acc) h ON h.acc = a.id
 WHERE a.balance - %d <> coalesce(h.s, 0);
SELECT 'partial', bid, count(*) FROM bulk GROUP BY bid HAVING count(*) <> %d;
SELECT 'seqacc', md5(coalesce(string_agg(id || ':' || balance, ',' ORDER BY id), '')) FROM accounts;
SELECT 'seqhist', md5(coalesce(string_agg(tid || ':' || src || ':' || dst, ',' ORDER BY tid), '')) FROM history;
SELECT 'seqsrc', count(*), coalesce(sum(tid), 0) FROM history WHERE src BETWEEN 0 AND %d;
SELECT 'seqbal', md5(coalesce(string_agg(id || ':' || balance, ',' ORDER BY id), '')) FROM accounts WHERE balance > -1000000000;
SELECT 'seqtel', md5(coalesce(string_agg(id || ':' || n, ',' ORDER BY id), '')) FROM tellers;
SELECT 'tellers', (SELECT coalesce(sum(n), 0) FROM tellers), (SELECT count(*) FROM history);
""" % (INITIAL, BULK_ROWS, accounts // 2), db="bank")
    res = {}
    for r in out:
        res.setdefault(r[0], []).append(r[1:])
    acc = res["acc"][0]
    if int(acc[0]) != accounts or int(acc[1]) != accounts or int(acc[2]) != accounts * INITIAL:
        problems.append("balance: accounts rows=%s distinct=%s total=%s (want %d, %d, %d)"
                        % (acc[0], acc[1], acc[2], accounts, accounts, accounts * INITIAL))
    if int(res["neg"][0][0]) != 0:
        problems.append("atomic: %s rows of rolled-back savepoints are visible" % res["neg"][0][0])
    if int(res["dup"][0][0]) != 0:
        problems.append("atomic: %s duplicate transfer ids in history" % res["dup"][0][0])
    for b in res.get("bad", [])[:10]:
        problems.append("atomic: account %s balance %s but history says %d%+d" % (b[0], b[1], INITIAL, int(b[2])))
    if len(res.get("bad", [])) > 10:
        problems.append("atomic: ... %d accounts disagree with history" % len(res["bad"]))
    for b in res.get("partial", [])[:10]:
        problems.append("atomic: bulk batch %s has %s of %d rows" % (b[0], b[1], BULK_ROWS))

    out2 = c.rows(idx + """
SELECT 'idxacc', md5(coalesce(string_agg(id || ':' || balance, ',' ORDER BY id), '')) FROM accounts WHERE id >= 0;
SELECT 'idxhist', md5(coalesce(string_agg(tid || ':' || src || ':' || dst, ',' ORDER BY tid), '')) FROM history WHERE tid > -9223372036854775807;
SELECT 'idxsrc', count(*), coalesce(sum(tid), 0) FROM history WHERE src BETWEEN 0 AND %d;
SELECT 'idxbal', md5(coalesce(string_agg(id || ':' || balance, ',' ORDER BY id), '')) FROM accounts WHERE balance > -1000000000;
SELECT 'idxtel', md5(coalesce(string_agg(id || ':' || n, ',' ORDER BY id), '')) FROM tellers WHERE id >= 0;
""" % (accounts // 2), db="bank")
    for r in out2:
        res.setdefault(r[0], []).append(r[1:])
    tel = res["tellers"][0]
    if int(tel[0]) != int(tel[1]):
        problems.append("atomic: tellers count %s transfers, history has %s" % (tel[0], tel[1]))
    for a, b in (("seqacc", "idxacc"), ("seqhist", "idxhist"), ("seqsrc", "idxsrc"), ("seqbal", "idxbal"),
                 ("seqtel", "idxtel")):
        if res[a] != res[b]:
            problems.append("index: %s %s differs from %s %s" % (b, res[b], a, res[a]))

    visible = set(int(x[0]) for x in c.rows("SELECT tid FROM history; SELECT DISTINCT bid FROM bulk;", db="bank"))
    bad_never = visible & g.never
    if bad_never:
        problems.append("never: %d failed/rolled-back transfers visible, e.g. %s"
                        % (len(bad_never), sorted(bad_never)[:5]))
    not_sent = [t for t in visible if t not in g.commit_sent]
    if not_sent:
        problems.append("never: %d transfers visible whose COMMIT was never sent, e.g. %s"
                        % (len(not_sent), sorted(not_sent)[:5]))
    bad_forgotten = visible & g.forgotten
    if bad_forgotten:
        problems.append("forgotten: %d transfers PostgreSQL forgot are visible (D4), e.g. %s"
                        % (len(bad_forgotten), sorted(bad_forgotten)[:5]))
    missing_required = []
    lost_allowed = 0
    for tid, sync in g.acked.items():
        if tid in visible:
            continue
        if g.mode == "full" or sync:
            missing_required.append(tid)
        else:
            lost_allowed += 1
    if missing_required:
        kinds = {}
        for t in missing_required:
            s = "sync" if g.acked[t] else "async"
            kinds[s] = kinds.get(s, 0) + 1
        problems.append("acked: %d acknowledged transfers lost (%s), e.g. %s (xid %s)"
                        % (len(missing_required), kinds, sorted(missing_required)[:5],
                           [g.commit_sent[t][0] for t in sorted(missing_required)[:5]]))
    g.stats["acked_lost_allowed"] = lost_allowed

    # what PostgreSQL itself says about each transfer whose COMMIT was sent
    ask = [t for t, v in g.commit_sent.items()
           if v[0] > 0 and t not in g.forgotten and t not in g.pg_status]
    if ask:
        xids = ",".join(str(g.commit_sent[t][0]) for t in ask)
        st = dict((int(r[0]), r[1]) for r in c.rows(
            "SELECT x, coalesce(txid_status(x), 'unknown') FROM unnest('{%s}'::bigint[]) x" % xids, db="bank"))
        for t in ask:
            s = st.get(g.commit_sent[t][0], "unknown")
            if s in ("committed", "aborted"):
                g.pg_status[t] = s
    not_committed = [t for t in visible if t in g.commit_sent and g.commit_sent[t][0] > 0
                     and t not in g.forgotten and g.pg_status.get(t) != "committed"]
    if not_committed:
        problems.append("never: %d transfers visible although PostgreSQL does not consider them committed, e.g. %s"
                        % (len(not_committed), [(t, g.commit_sent[t][0], g.pg_status.get(t)) for t in sorted(not_committed)[:5]]))
    gone = []
    for t, s in g.pg_status.items():
        if s != "committed" or t in visible:
            continue
        sync = g.commit_sent[t][2]
        if g.variant in ("kill", "backend") or g.mode in ("full", "wal") or sync:
            gone.append(t)
    if gone:
        problems.append("durable: %d transfers PostgreSQL committed lost their rows (D3/D3b/D2), e.g. %s"
                        % (len(gone), [(t, g.commit_sent[t][0], "sync" if g.commit_sent[t][2] else "async")
                                       for t in sorted(gone)[:5]]))

    ver = c.rows("SELECT file, problem FROM tides_verify();", db="bank")
    for v in ver[:10]:
        problems.append("verify: %s: %s" % (v[0], v[1]))
    return visible


def wait_for_incarnation(c, timeout=30):
    """(incarnation, start xid, unfinished) from the log of this start."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        m = re.search(r"tides: incarnation (\d+) started at xid (\d+), (\d+) unfinished", c.new_log())
        if m:
            return int(m.group(1)), int(m.group(2)), int(m.group(3))
        # the first user finalises the incarnation
        c.psql("SELECT count(*) FROM accounts", db="bank", check=False)
        time.sleep(0.05)
    return None


def run_group(args, c, mode, variant, bank, rnd, out):
    g = Group(mode, variant)
    preload = "'tidesam,tidesam_keepvfs'" if variant in ("keep", "backend") else "'tidesam'"
    # mode "wal": tides.wal = on, the changes in PostgreSQL's WAL (sync_mode does not apply)
    conf = {"tides.wal": "on" if mode == "wal" else "off",
            "tides.sync_mode": "full" if mode == "wal" else mode,
            "shared_preload_libraries": preload}
    c.stop()
    c.set_conf(conf)
    c.start()
    c.psql("CREATE EXTENSION IF NOT EXISTS tidesam;", db="bank")
    c.psql(SETUP_SQL.replace("generate_series(0, 0)", "generate_series(0, %d)" % (args.accounts - 1)), db="bank")
    logroot = os.path.join(args.dir, "clients", "%s-%s" % (mode, variant))
    shutil.rmtree(logroot, ignore_errors=True)
    os.makedirs(logroot)
    H.chown_tree(logroot)
    results = []
    for cycle in range(1, args.cycles + 1):
        # ---- run the workload, then kill everything at a random moment
        logdir = os.path.join(logroot, "c%04d" % cycle)
        os.makedirs(logdir)
        id_base = cycle * 1000000000
        run_for = rnd.uniform(0.2, args.max_run)
        # clients >= sync_off_from use synchronous_commit = off: half of them
        # usually, sometimes all (nothing then forces the engine's log to disk
        # in relaxed modes), sometimes none
        sync_off_from = rnd.choice([args.clients // 2, args.clients // 2, 0, args.clients])
        bp = subprocess.Popen([bank, c.conninfo("bank"), logdir, str(args.clients), str(args.accounts),
                               "60", str(id_base), str(sync_off_from), str(rnd.randrange(1 << 30))],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        bulk = None
        if rnd.random() < 0.5:
            # a multi-statement transaction that may span memtable flushes
            bulk = subprocess.Popen([os.path.join(H.BINDIR, "psql"), "-X", "-q", "-d", c.conninfo("bank")],
                                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    text=True)
        time.sleep(run_for / 2)
        bulk_tid = None
        if bulk is not None:
            bulk_tid = id_base + 99 * 10000000
            stmts = ["BEGIN;"] + [
                "INSERT INTO bulk SELECT %d, g, repeat('x', 400) FROM generate_series(%d, %d) g; SELECT pg_sleep(0.02);"
                % (bulk_tid, i * BULK_ROWS // 4, (i + 1) * BULK_ROWS // 4 - 1) for i in range(4)]
            try:
                bulk.stdin.write("\n".join(stmts) + "\n")
                bulk.stdin.flush()
            except BrokenPipeError:
                pass
        time.sleep(run_for / 2)
        if bulk is not None:
            # COMMIT at about the kill: sometimes before, sometimes after
            try:
                bulk.stdin.write("\\o /dev/null\nCOMMIT;\n")
                bulk.stdin.close()
            except BrokenPipeError:
                pass
        try:
            st = dict((r[0], int(r[1])) for r in c.rows(
                "SELECT name, value FROM tides_stats() WHERE name IN ('written_lsn', 'durable_lsn')",
                db="bank", timeout=5))
            g.stats["unsynced_at_kill"] += max(0, st.get("written_lsn", 0) - st.get("durable_lsn", 0))
        except Exception:
            pass
        if variant == "backend":
            # one backend dies; PostgreSQL restarts the rest with the OS up:
            # the postmaster writes the kept log writes back first
            pids = [int(r[0]) for r in c.rows(
                "SELECT pid FROM pg_stat_activity WHERE datname = 'bank' AND backend_type = 'client backend' "
                "AND pid <> pg_backend_pid()", db="bank")]
            c.log_offset = os.path.getsize(c.logfile)
            if pids:
                os.kill(rnd.choice(pids), 9)
        else:
            c.kill9()
        try:
            bout, berr = bp.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            bp.kill()
            bout, berr = bp.communicate()
        if bulk is not None:
            try:
                bulk.wait(timeout=10)
            except subprocess.TimeoutExpired:
                bulk.kill()
        parse_client_logs(g, logdir, cycle)
        if bulk_tid is not None:
            # its COMMIT outcome is unknown: it may be present (whole) or absent
            g.commit_sent[bulk_tid] = (0, cycle, False)
            g.unknown.add(bulk_tid)

        # ---- restart and check
        problems = []
        try:
            if variant == "backend":
                t0 = time.time()
                while time.time() - t0 < 120 and "database system is ready to accept connections" not in c.new_log():
                    time.sleep(0.05)
                t = time.time() - t0
                if "terminated by signal 9" not in c.new_log():
                    problems.append("log: the killed backend's crash was not noticed")
            else:
                t = c.start()
            g.stats["restart_s"] += t
            inc = wait_for_incarnation(c)
            log = c.new_log()
            m = re.search(r"engine recovered in ([\d.]+) s: (\d+) log bytes, (\d+) batches replayed(.*?), (\d+) unfinished", log)
            if m:
                g.stats["replayed_batches"] += int(m.group(3))
                g.stats["unsealed"] += int(m.group(5))
                if "damaged" in m.group(4):
                    g.stats["damaged_tails"] += 1
            if inc is None:
                problems.append("log: no 'incarnation ... started at xid' line after restart")
            else:
                start_xid = inc[1]
                for tid in g.cycle_tids:
                    xid = g.commit_sent[tid][0]
                    if xid >= start_xid:
                        g.forgotten.add(tid)
                        g.stats["forgotten"] += 1
            check(c, g, args.accounts, problems)
            for line in H.log_problems(log):
                problems.append("log: " + line)
        except Exception as e:  # a failed start or query is a failed cycle
            problems.append("error: %s" % e)
            if not c.running():
                try:
                    c.start()
                except Exception as e2:
                    problems.append("error: restart failed again: %s" % e2)
        problems.extend(g.xerrors)
        g.xerrors = []
        g.stats["cycles"] += 1
        ok = not problems
        g.stats["passed" if ok else "failed"] += 1
        line = "%s %-8s %-4s cycle %3d: %s (ran %.2fs; %s)" % (
            "ok" if ok else "FAIL", mode, variant, cycle, "ok" if ok else "; ".join(problems[:6]),
            run_for, (bout or "").strip())
        print(line, flush=True)
        out.write(line + "\n")
        if not ok:
            out.write("  server log:\n" + "\n".join("    " + x for x in c.new_log().splitlines()[-40:]) + "\n")
            if berr:
                out.write("  client stderr:\n" + berr[-2000:] + "\n")
        out.flush()
        results.append(ok)
        if not c.running():
            break
        if not ok and args.stop_on_fail:
            print("stopping at the first failure (--stop-on-fail); the server is left running", flush=True)
            sys.exit(1)
    return g, results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cycles", type=int, default=20)
    ap.add_argument("--modes", default="none,interval,full,wal")
    ap.add_argument("--variants", default="kill,keep")
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--accounts", type=int, default=200)
    ap.add_argument("--max-run", type=float, default=1.0)
    ap.add_argument("--dir", default=os.environ.get("TIDES_CRASH_DIR", "/tmp/tidesam-crash"))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("TIDES_CRASH_SEED", "0")) or None)
    ap.add_argument("--name", default="crash")
    ap.add_argument("--stop-on-fail", action="store_true")
    ap.add_argument("--conf", action="append", default=[], help="extra setting NAME=VALUE")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rnd = random.Random(seed)
    os.makedirs(args.dir, exist_ok=True)
    H.ensure_user()
    H.chown_tree(args.dir)
    os.chmod(args.dir, 0o755)
    bank = build_bank(os.path.join(args.dir, "bank"))
    c = H.Cluster(os.path.join(args.dir, "cluster"))
    conf = {
        "fsync": "off",                   # PostgreSQL's own; the OS never crashes here
        "tides.memtable_size": "2MB",     # frequent flushes: transactions span SSTables
        "tides.block_cache_size": "16MB",
        "tides.sync_interval": "100ms",
        "max_wal_size": "256MB",
        "autovacuum_naptime": "5s",
    }
    conf.update(kv.split("=", 1) for kv in args.conf)
    c.initdb(conf)
    c.start()
    c.psql("CREATE DATABASE bank;")
    passed = failed = 0
    summary = []
    print("crash: seed %d, %d cycles per group, modes %s, variants %s, details in %s/crash.log"
          % (seed, args.cycles, args.modes, args.variants, args.dir), flush=True)
    with open(os.path.join(args.dir, "crash.log"), "w") as out:
        for variant in args.variants.split(","):
            for mode in args.modes.split(","):
                if mode == "wal" and variant == "keep":
                    continue        # the keep vfs holds back engine log writes; with the WAL there are none
                t0 = time.time()
                g, res = run_group(args, c, mode, variant, bank, rnd, out)
                passed += sum(1 for r in res if r)
                failed += sum(1 for r in res if not r)
                missing = args.cycles - len(res)
                failed += missing
                s = g.stats
                n = max(1, s["cycles"])
                line = ("group %-8s %-4s: %d/%d cycles ok in %.0fs; %d commits sent, %d acknowledged, "
                        "%d in flight at kill, %d acked lost (allowed: async client, relaxed mode), "
                        "%d forgotten by PostgreSQL (kept invisible), %d unfinished transactions recovered, "
                        "%d damaged log tails; unsynced log bytes at kill %.0f KB/cycle; "
                        "restart %.2fs/cycle, %.0f batches replayed/cycle"
                        % (mode, variant, s["passed"], args.cycles, time.time() - t0, s["commits"], s["acked"],
                           s["unknown"], s["acked_lost_allowed"], s["forgotten"], s["unsealed"],
                           s["damaged_tails"], s["unsynced_at_kill"] / 1024.0 / n, s["restart_s"] / n,
                           s["replayed_batches"] / n))
                print(line, flush=True)
                out.write(line + "\n")
                summary.append(line)
    c.stop()
    print("%s: %d passed, %d failed" % (args.name, passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
