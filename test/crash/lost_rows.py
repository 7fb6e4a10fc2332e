#!/usr/bin/env python3
"""lost_rows.py -- rows lost in an OS crash while their index entries survive.

An index insertion is WAL-logged; the row's tides records may not be durable
yet (any sync mode, before the commit; the relaxed modes, after it).  When
another transaction's commit flushes WAL and the OS crashes, the index entry
survives and the row does not.  Nothing in the table then points the way to
that entry, yet it must never show up: not through an index scan, and not
through an index-only scan once VACUUM has marked the block all-visible.

The test, in each scenario (sync mode none / full):
  1. 1000 committed rows with a primary key, VACUUMed (map set).
  2. Session A inserts 100 more rows and stays open; session B commits a heap
     write with synchronous_commit on, which flushes WAL -- A's index
     entries included.
  3. Every server process is killed with tidesam_keepvfs preloaded: the
     engine's unsynced log writes (A's rows) are lost as in an OS crash.
  4. After restart: VACUUM (before any index scan, which would kill the
     entries of rows it finds gone), then index-only scans, VACUUM again
     (which lifts the suspect mark), index-only scans -- always 1000 rows,
     and no entry left for ids above 1000.

Ends with "lost_rows: P passed, F failed" (one check per scenario and step).
"""
import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pgharness  # noqa: E402

IOS = "SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexscan = on; "


def scenario(base, mode, port):
    c = pgharness.Cluster(os.path.join(base, mode), port=port)
    c.initdb({"shared_preload_libraries": "'tidesam,tidesam_keepvfs'", "autovacuum": "off",
              "tides.sync_mode": mode, "synchronous_commit": "on", "tides.wal": "off"})
    c.start()
    results = []

    def check(name, cond, detail=""):
        results.append(cond)
        print("%s %-5s %s%s" % ("ok  " if cond else "FAIL", mode, name, (": " + detail) if detail else ""))

    c.psql("CREATE EXTENSION tidesam;"
           "CREATE TABLE t (id int PRIMARY KEY, v int) USING tides;"
           "INSERT INTO t SELECT g, g FROM generate_series(1, 1000) g;"
           "CREATE TABLE w (x int) USING heap;")
    c.psql("VACUUM t; CHECKPOINT;")
    # A: uncommitted rows whose index entries reach WAL
    a = subprocess.Popen([os.path.join(pgharness.BINDIR, "psql"), "-X", "-q", "-d", c.conninfo()],
                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         text=True, preexec_fn=None)
    a.stdin.write("BEGIN; INSERT INTO t SELECT g, g FROM generate_series(1001, 1100) g; SELECT pg_sleep(600);\n")
    a.stdin.flush()
    deadline = time.time() + 30
    while time.time() < deadline:
        n = c.scalar("SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(600)%' "
                     "AND state = 'active' AND pid <> pg_backend_pid()")
        if n == "1":
            break
        time.sleep(0.1)
    # B: a WAL flush that carries A's index insertions along
    c.psql("INSERT INTO w VALUES (1);")
    c.kill9()
    a.kill()
    a.wait()
    c.start()

    def counts():
        ios = c.scalar(IOS + "SELECT count(*) FROM t WHERE id > 0;")
        above = c.scalar(IOS + "SELECT count(*) FROM t WHERE id > 1000;")
        seq = c.scalar("SET enable_indexscan = off; SET enable_indexonlyscan = off; "
                       "SET enable_bitmapscan = off; SELECT count(*) FROM t;")
        return ios, above, seq

    # VACUUM first: an index scan would find the entries' rows gone and kill
    # them (LP_DEAD), hiding what this test looks for
    for step, sql in (("after VACUUM", "VACUUM t;"), ("after a second VACUUM", "VACUUM t;")):
        c.psql(sql)
        ios, above, seq = counts()
        check(step, ios == "1000" and above == "0" and seq == "1000",
              "index-only %s, above 1000 %s, sequential %s" % (ios, above, seq))
    plan = c.psql(IOS + "EXPLAIN (COSTS OFF) SELECT count(*) FROM t WHERE id > 0;")
    check("index-only scan used", "Index Only Scan" in plan, plan.strip().replace("\n", " / "))
    c.stop()
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--modes", default="none,full")
    args = ap.parse_args()
    ok = bad = 0
    for i, mode in enumerate(args.modes.split(",")):
        try:
            res = scenario(args.dir, mode, 55700 + i)
        except Exception as e:  # a crash of the harness is a failure, not a pass
            print("FAIL %-5s %s" % (mode, e))
            res = [False]
        ok += sum(1 for r in res if r)
        bad += sum(1 for r in res if not r)
    print("lost_rows: %d passed, %d failed" % (ok, bad))
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
