#!/usr/bin/env python3
"""bulk_crash.py -- kill -9 in the middle of bulk loads (src/am/bulk.c).

Per mode (tides.wal = on; tides.wal = off with sync_mode full, and none
with the keep-unsynced test module, so that the engine's unsynced log
writes die with the server as in an OS crash), CYCLES cycles of:

  1. three loaders, each in its own session with
     tides.bulk_load_threshold = 0, load a table of its own in one
     transaction -- in steps of LOAD rows, each followed by a count (which
     installs the step's files); one into a table created in the same
     transaction with a unique tides_btree index, in half the steps -- and COMMIT; each
     loader prints a line when the COMMIT returned;
  2. the postmaster and every child are killed (SIGKILL) 0.3-10 s in;
  3. after the restart every table holds all of its load or none of it
     (never part), all of it when its COMMIT returned (tides.wal = on,
     or off with full: an acknowledged commit is durable; in none mode it
     may be lost whole), its ids
     distinct; the unique index agrees with a sequential scan;
     tides_verify() is empty; the .sst files on disk are exactly the files
     the engine lists (no orphan of an interrupted load is left behind);
     no crash line in the server log.

One check per table per cycle plus the verify, orphan and log checks.
Ends with "bulk_crash: P passed, F failed".
"""
import argparse
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pgharness  # noqa: E402

STEPS = 4
LOAD = 100000  # about 5 MB of files per step: above BULK_MIN_FILE_BYTES, so every step installs
MODES = {
    "wal": {"tides.wal": "on"},
    "full": {"tides.wal": "off", "tides.sync_mode": "full"},
    "none_keep": {"tides.wal": "off", "tides.sync_mode": "none",
                  "shared_preload_libraries": "'tidesam,tidesam_keepvfs'",
                  "tides.test_keep_unsynced": "on"},
}


def loader_sql(table, new_table):
    out = ["SET tides.bulk_load_threshold = 0;", "BEGIN;"]
    if new_table:
        out.append("CREATE TABLE %s (id int, v text) USING tides;" % table)
        out.append("CREATE UNIQUE INDEX %s_id ON %s USING tides_btree (id);" % (table, table))
    # index maintenance makes the table with the unique index the slowest: half the steps
    for s in range(STEPS // 2 if new_table else STEPS):
        lo = s * LOAD + 1
        out.append("INSERT INTO %s SELECT g, md5(g::text) FROM generate_series(%d, %d) g;" % (table, lo, lo + LOAD - 1))
        out.append("SELECT count(*) FROM %s;" % table)
    out.append("COMMIT;")
    out.append("SELECT 'committed %s';" % table)
    return "\n".join(out) + "\n"


def sst_files(c):
    d = os.path.join(c.data, "pg_tides")
    return sum(1 for f in os.listdir(d) if f.endswith(".sst"))


def listed_files(c):
    return int(c.scalar("SELECT sum(value) FROM tides_stats() WHERE name LIKE 'level%_files'"))


def run_mode(base, mode, port, cycles, rnd):
    c = pgharness.Cluster(os.path.join(base, mode), port=port)
    c.initdb(dict({"autovacuum": "off", "synchronous_commit": "on", "tides.memtable_size": "4MB"},
                  **MODES[mode]))
    c.start()
    c.psql("CREATE EXTENSION tidesam;")
    results = []

    def check(name, cond, detail=""):
        results.append(cond)
        print("%s %-9s %s%s" % ("ok  " if cond else "FAIL", mode, name, (": " + detail) if detail else ""))
        sys.stdout.flush()

    full = STEPS * LOAD
    # an acknowledged commit survives: with the WAL, and with the engine's log in full mode
    durable = mode in ("wal", "full")
    for cyc in range(cycles):
        tables = []
        for i in range(3):
            t = "c%d_t%d" % (cyc, i)
            new_table = i == 2
            if not new_table:
                c.psql("CREATE TABLE %s (id int, v text) USING tides;" % t)
            tables.append((t, new_table))
        procs = []
        for t, new_table in tables:
            p = subprocess.Popen([os.path.join(pgharness.BINDIR, "psql"), "-X", "-A", "-t", "-q",
                                  "-v", "ON_ERROR_STOP=1", "-d", c.conninfo()],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 text=True, env=c.client_env())
            p.stdin.write(loader_sql(t, new_table))
            p.stdin.close()
            procs.append(p)
        time.sleep(rnd.uniform(0.3, 10.0))
        c.kill9()
        acked = set()
        for p in procs:
            out = p.stdout.read()
            p.wait()
            for line in out.splitlines():
                if line.startswith("committed "):
                    acked.add(line.split()[1])
        c.start()
        for t, new_table in tables:
            exists = c.scalar("SELECT to_regclass('%s') IS NOT NULL;" % t) == "t"
            if not exists:
                check("cycle %d %s" % (cyc, t), new_table and (t not in acked or not durable),
                      "table missing" + (" after an acknowledged commit" if t in acked else ""))
                continue
            n, nd = c.scalar("SELECT count(*) || ' ' || count(DISTINCT id) FROM %s;" % t).split()
            n, nd = int(n), int(nd)
            whole = full // 2 if new_table else full
            ok = n == nd and (n == whole or (n == 0 and (t not in acked or not durable)))
            detail = "%d rows, %d distinct, %s" % (n, nd, "acknowledged" if t in acked else "not acknowledged")
            if ok and new_table and n > 0:
                ix = c.scalar("SET enable_seqscan = off; SET enable_bitmapscan = off; "
                              "SELECT count(*) FROM %s WHERE id > 0;" % t)
                ok = ix == str(n)
                detail += ", index scan %s" % ix
            check("cycle %d %s" % (cyc, t), ok, detail)
        v = c.psql("SELECT file || ': ' || problem FROM tides_verify();").strip()
        check("cycle %d tides_verify" % cyc, v == "", v)
        # orphans: recovery deleted every file no version names; compaction
        # may be between writing and installing one, so look a few times
        agree = False
        for _ in range(50):
            on_disk, listed = sst_files(c), listed_files(c)
            if on_disk == listed:
                agree = True
                break
            time.sleep(0.2)
        check("cycle %d no orphan files" % cyc, agree, "%d .sst files, %d listed" % (on_disk, listed))
    c.stop()
    problems = pgharness.log_problems(open(c.logfile).read())
    check("server log", not problems, "; ".join(problems)[:300])
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--cycles", type=int, default=4)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    args = ap.parse_args()
    print("bulk_crash: seed %d" % args.seed)
    rnd = random.Random(args.seed)
    ok = bad = 0
    for i, mode in enumerate(args.modes.split(",")):
        try:
            res = run_mode(args.dir, mode, 55720 + i, args.cycles, rnd)
        except Exception as e:  # a crash of the harness is a failure, not a pass
            print("FAIL %-9s %s" % (mode, e))
            res = [False]
        ok += sum(1 for r in res if r)
        bad += sum(1 for r in res if not r)
    print("bulk_crash: %d passed, %d failed" % (ok, bad))
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
