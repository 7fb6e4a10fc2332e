#!/usr/bin/env python3
"""wraparound.py -- xid wraparound with tides tables holding old rows (DESIGN.md D7).

Settings keep the horizons small: autovacuum_freeze_max_age = 100000 and
vacuum_freeze_min_age = 0.  Tables (tides, with a heap copy as control):
  t_flushed  rows inserted, updated, deleted, then flushed to SSTables
  t_mem      the same, left in the memtable and the engine's log
  t_locked   rows share-locked by two transactions at once (a multixact in
             xmax) and rows locked FOR UPDATE (a lock-only xmax)
  t_wrap     rows written every 997 xids while xids are consumed

Phases (each ends with a check that counts as one test):
  burn     consume 120000 xids for real (a procedure that COMMITs in a loop,
           writing t_wrap rows); age(relfrozenxid) passes
           autovacuum_freeze_max_age and autovacuum must freeze the tides
           tables by itself
  jump N   stop, pg_resetwal -x to a far xid (1.5 billion xids at a time, the
           documented way to move the xid counter), start, VACUUM FREEZE
           every database (template0 too); then datfrozenxid must advance and
           the CLOG segments below it must be removed
  wrap     jump to 60000 xids before 2^32 and consume 120000 xids for real, so
           the counter wraps around (epoch 1) with t_wrap rows on both sides
  restart  kill -9 and restart after the CLOG truncation: the engine replays
           its log, whose records carry the old xids; they must read as frozen

The check of every phase: each table's checksum (md5 of its rows in id
order) equals its value before, via sequential and index scans; the tides
tables' relfrozenxid advanced past the old rows; tides_verify() is empty; no
"could not access status of transaction" (a truncated CLOG read for an xid
that should have been frozen) and no PANIC in the log.

Final line: "wraparound: P passed, F failed".
"""
import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pgharness as H  # noqa: E402

TABLES = ["t_flushed", "t_mem", "t_locked", "t_wrap", "h_control"]
TIDES_TABLES = ["t_flushed", "t_mem", "t_locked", "t_wrap"]

SETUP = """
CREATE EXTENSION tidesam;
CREATE TABLE t_flushed (id int PRIMARY KEY, v text, n int) USING tides;
CREATE TABLE t_mem (id int PRIMARY KEY, v text, n int) USING tides;
CREATE TABLE t_locked (id int PRIMARY KEY, v text, n int) USING tides;
CREATE TABLE t_wrap (id bigint PRIMARY KEY, v text, n int) USING tides;
CREATE TABLE h_control (id int PRIMARY KEY, v text, n int);
INSERT INTO t_flushed SELECT g, md5(g::text), g FROM generate_series(1, 3000) g;
INSERT INTO t_mem SELECT g, md5(g::text), g FROM generate_series(1, 3000) g;
INSERT INTO t_locked SELECT g, md5(g::text), g FROM generate_series(1, 1000) g;
INSERT INTO h_control SELECT g, md5(g::text), g FROM generate_series(1, 3000) g;
UPDATE t_flushed SET n = n + 1 WHERE id % 6 = 0;
UPDATE t_mem SET n = n + 1 WHERE id % 6 = 0;
UPDATE h_control SET n = n + 1 WHERE id % 6 = 0;
DELETE FROM t_flushed WHERE id % 15 = 0;
DELETE FROM t_mem WHERE id % 15 = 0;
DELETE FROM h_control WHERE id % 15 = 0;
SELECT tides_flush();
UPDATE t_flushed SET v = 'u' || v WHERE id % 50 = 1;
SELECT tides_flush();
CREATE PROCEDURE burn(n int, every int) LANGUAGE plpgsql AS $$
DECLARE x bigint;
BEGIN
  FOR i IN 1..n LOOP
    x := txid_current();
    IF every > 0 AND i % every = 0 THEN
      INSERT INTO t_wrap VALUES (x, md5(x::text), i);
    END IF;
    COMMIT;
  END LOOP;
END $$;
"""


def checksums(c, db="wrap"):
    """{table: (seq md5, index md5, count)}"""
    res = {}
    for t in TABLES:
        q = "SELECT md5(coalesce(string_agg(id || ':' || v || ':' || n, ',' ORDER BY id), '')), count(*) FROM %s" % t
        seq = c.rows("SET enable_indexscan = off; SET enable_bitmapscan = off; " + q, db=db)[0]
        idx = c.rows("SET enable_seqscan = off; SET enable_bitmapscan = off; " + q + " WHERE id > -1", db=db)[0]
        res[t] = (seq[0], idx[0], int(seq[1]))
    return res


def relfrozen(c, db="wrap"):
    return dict((r[0], (int(r[1]), int(r[2]))) for r in c.rows(
        "SELECT relname, relfrozenxid::text::bigint, age(relfrozenxid) FROM pg_class WHERE relname = ANY('{%s}')"
        % ",".join(TABLES), db=db))


def datfrozen(c):
    return dict((r[0], (int(r[1]), int(r[2]))) for r in c.rows(
        "SELECT datname, datfrozenxid::text::bigint, age(datfrozenxid) FROM pg_database"))


def next_xid(c):
    return int(c.scalar("SELECT txid_current()"))


def clog_segments(c):
    # CLOG pages live in SLRU buffers until a checkpoint writes them: without
    # one, the segment of the newest xids may not exist as a file yet.
    c.psql("CHECKPOINT")
    return sorted(os.listdir(os.path.join(c.data, "pg_xact")))


def lock_rows(c):
    """Share-lock rows of t_locked from two transactions at once (multixact xmax)."""
    cmd = [os.path.join(H.BINDIR, "psql"), "-X", "-q", "-d", c.conninfo("wrap")]
    p1 = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    p1.stdin.write("BEGIN; SELECT count(*) FROM (SELECT * FROM t_locked WHERE id <= 300 FOR SHARE) s;\n")
    p1.stdin.flush()
    time.sleep(1.0)
    c.psql("BEGIN; SELECT count(*) FROM (SELECT * FROM t_locked WHERE id <= 200 FOR SHARE) s; COMMIT;", db="wrap")
    p1.stdin.write("COMMIT;\n")
    p1.stdin.close()
    p1.wait(timeout=60)
    c.psql("BEGIN; SELECT count(*) FROM (SELECT * FROM t_locked WHERE id > 900 FOR UPDATE) s; COMMIT;", db="wrap")
    c.psql("BEGIN; SELECT count(*) FROM (SELECT * FROM t_locked WHERE id BETWEEN 500 AND 550 FOR KEY SHARE) s; COMMIT;",
           db="wrap")


def freeze_all(c):
    """VACUUM FREEZE every database, template0 included."""
    c.psql("ALTER DATABASE template0 WITH ALLOW_CONNECTIONS true")
    try:
        subprocess.run([os.path.join(H.BINDIR, "vacuumdb"), "--all", "--freeze", "-q",
                        "-h", c.sock, "-p", str(c.port), "-U", H.RUN_USER],
                       check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except subprocess.CalledProcessError as e:
        raise RuntimeError("vacuumdb --all --freeze failed: %s" % e.stdout)
    finally:
        c.psql("ALTER DATABASE template0 WITH ALLOW_CONNECTIONS false")
    # datfrozenxid moves in vac_update_datfrozenxid; CLOG truncation follows
    c.psql("VACUUM", db="postgres")


def jump(c, xid):
    """Stop cleanly and move the xid counter with pg_resetwal."""
    c.stop()
    seg = "%04X" % (xid // 1048576)
    page_index = xid % 32768
    if page_index != 0:
        # the page holding nextXid is read at startup: give its segment a zeroed file
        path = os.path.join(c.data, "pg_xact", seg)
        if not os.path.exists(path):
            with open(path, "wb") as f:
                f.write(b"\0" * (32 * 8192))
            H.chown_tree(path)
    c.run([os.path.join(H.BINDIR, "pg_resetwal"), "-x", str(xid), c.data], check=True,
          stdout=subprocess.DEVNULL)
    c.start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=os.environ.get("TIDES_WRAP_DIR", "/tmp/tidesam-wraparound"))
    ap.add_argument("--burn", type=int, default=120000)
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    c = H.Cluster(os.path.join(args.dir, "cluster"))
    c.initdb({
        "autovacuum_freeze_max_age": "100000",
        "autovacuum_multixact_freeze_max_age": "10000",
        "vacuum_freeze_min_age": "0",
        "vacuum_freeze_table_age": "0",
        "vacuum_multixact_freeze_min_age": "0",
        "vacuum_multixact_freeze_table_age": "0",
        "autovacuum_naptime": "1s",
        "log_autovacuum_min_duration": "0",
        "synchronous_commit": "off",
        "tides.memtable_size": "2MB",
        "max_wal_size": "1GB",
    })
    c.start()
    c.psql("CREATE DATABASE wrap")
    c.psql(SETUP, db="wrap")
    lock_rows(c)
    before = checksums(c)
    passed = failed = 0
    full_log = []

    def phase(name, fn):
        nonlocal passed, failed
        problems = []
        t0 = time.time()
        info = ""
        try:
            info = fn(problems) or ""
        except Exception as e:
            problems.append("error: %s" % e)
        try:
            now = checksums(c)
            for t in TABLES:
                b, a = before[t], now[t]
                if a[0] != b[0] or a[1] != b[1]:
                    if t == "t_wrap" and a[0] == a[1]:
                        continue   # t_wrap grows; only seq == index is required
                    problems.append("%s: contents changed (seq %s index %s, %d rows; before %d rows)"
                                    % (t, a[0][:8], a[1][:8], a[2], b[2]))
                if a[0] != a[1]:
                    problems.append("%s: index scan differs from sequential scan" % t)
            before["t_wrap"] = now["t_wrap"]
            for v in c.rows("SELECT file, problem FROM tides_verify()", db="wrap"):
                problems.append("verify: %s: %s" % (v[0], v[1]))
        except Exception as e:
            problems.append("error reading: %s" % e)
        log = c.new_log()
        full_log.append(log)
        for line in H.log_problems(log):
            problems.append("log: " + line)
        ok = not problems
        if ok:
            passed += 1
        else:
            failed += 1
        print("%s %s (%.1fs) %s%s" % ("ok  " if ok else "FAIL", name, time.time() - t0, info,
                                     "" if ok else ": " + "; ".join(problems[:8])), flush=True)

    def burn_phase(problems):
        x0 = next_xid(c)
        rf0 = relfrozen(c)
        t0 = time.time()
        c.psql("SET synchronous_commit = off; CALL burn(%d, 997);" % args.burn, db="wrap", timeout=1800)
        dt = time.time() - t0
        x1 = next_xid(c)
        # autovacuum must now freeze the tides tables on its own
        deadline = time.time() + 120
        while time.time() < deadline:
            rf = relfrozen(c)
            if all(rf[t][0] > rf0[t][0] for t in TIDES_TABLES):
                break
            time.sleep(1)
        rf = relfrozen(c)
        late = [t for t in TIDES_TABLES if rf[t][0] <= rf0[t][0]]
        if late:
            problems.append("autovacuum did not advance relfrozenxid of %s within 120 s (ages %s)"
                            % (late, [rf[t][1] for t in late]))
        return ("consumed %d xids in %.1fs (%.0f/s); relfrozenxid now %s"
                % (x1 - x0, dt, (x1 - x0) / max(dt, 0.001), dict((t, rf[t][0]) for t in TIDES_TABLES)))

    def jump_phase(target):
        def fn(problems):
            segs0 = clog_segments(c)
            jump(c, target)
            c.psql("INSERT INTO t_wrap VALUES (txid_current(), 'after jump', 0)", db="wrap")
            freeze_all(c)
            rf = relfrozen(c)
            df = datfrozen(c)
            nx = next_xid(c)
            for t in TIDES_TABLES:
                if rf[t][1] > 100000:
                    problems.append("%s: age(relfrozenxid) %d after VACUUM FREEZE" % (t, rf[t][1]))
            for d, (x, age) in df.items():
                if age > 100000:
                    problems.append("database %s: age(datfrozenxid) %d after freezing" % (d, age))
            segs = clog_segments(c)
            low = [s for s in segs if int(s, 16) < (target % (1 << 32)) // 1048576]
            if low:
                problems.append("pg_xact segments below the new horizon not truncated: %s" % low)
            return ("nextXid %d; pg_xact %s -> %s; relfrozenxid %s"
                    % (nx, segs0, segs, dict((t, rf[t][0]) for t in TIDES_TABLES)))
        return fn

    def restart_phase(problems):
        c.kill9()
        c.start()
        m = __import__("re").search(r"engine recovered in [^\n]*", c.new_log())
        return m.group(0) if m else ""

    def wrap_phase(problems):
        segs0 = clog_segments(c)
        jump(c, (1 << 32) - 60000)
        x0 = next_xid(c)
        c.psql("SET synchronous_commit = off; CALL burn(%d, 997);" % args.burn, db="wrap", timeout=1800)
        x1 = next_xid(c)
        epoch = x1 >> 32
        if epoch < 1:
            problems.append("the xid counter did not wrap (next %d)" % x1)
        freeze_all(c)
        rf = relfrozen(c)
        for t in TIDES_TABLES:
            if rf[t][1] > 100000:
                problems.append("%s: age(relfrozenxid) %d after VACUUM FREEZE" % (t, rf[t][1]))
        segs = clog_segments(c)
        if "0B40" in segs or "0000" not in segs:
            problems.append("pg_xact after the wrap: %s (want 0B40 truncated, 0000 in use again)" % segs)
        n_before = int(c.scalar("SELECT count(*) FROM t_wrap WHERE id < %d" % (1 << 32), db="wrap"))
        n_after = int(c.scalar("SELECT count(*) FROM t_wrap WHERE id >= %d" % (1 << 32), db="wrap"))
        if n_before == 0 or n_after == 0:
            problems.append("t_wrap should hold rows from both sides of the wrap (%d, %d)" % (n_before, n_after))
        return ("xids %d -> %d (epoch %d); t_wrap rows %d before / %d after the wrap; pg_xact %s -> %s"
                % (x0, x1, epoch, n_before, n_after, segs0, segs))

    phase("burn %d xids, autovacuum freezes" % args.burn, burn_phase)
    phase("restart after freeze (kill -9)", restart_phase)
    phase("jump to 1509949440, freeze, truncate CLOG", jump_phase(0x5A000000))
    phase("restart after CLOG truncation (kill -9)", restart_phase)
    phase("jump to 3019898880, freeze, truncate CLOG", jump_phase(0xB4000000))
    phase("wrap around 2^32", wrap_phase)
    phase("restart after the wrap (kill -9)", restart_phase)
    c.stop()
    with open(os.path.join(args.dir, "server-log-phases.txt"), "w") as f:
        f.write("\n".join(full_log))
    print("wraparound: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
