#!/usr/bin/env python3
"""fault_test.py -- full disks, I/O errors and corrupted files, seen from SQL.

Faults reach the unchanged server the way a failing disk would: as errno
values from the C library.  faultshim.so (LD_PRELOAD on the postmaster, so
every server process has it) fails chosen calls on files under pg_tides/
while a control file names them; a real full disk comes from a size-limited
tmpfs mounted on pg_tides/ (skipped where mounting is not permitted).

Scenarios (each one test):
  disk-full-writes  the disk fills (SSTable and log writes, allocations and
                    creations fail with ENOSPC): statements go on into the
                    memtables and the log segments made ahead, until one
                    must wait for a flush (or a segment) that cannot be
                    made: it fails at once with "disk full" (53100) naming
                    the file, its rows stay invisible, the flush worker
                    backs off, the server stays up; writes resume when
                    space returns.  (A record is stored through a mapping
                    of a segment whose blocks exist, so the store itself
                    cannot fail with an errno; a failing pwrite of the log
                    is test/engine/test_fault.c's case.)
  log-fsync-eio     (full mode) fdatasync of the log fails: the COMMIT fails
                    with an I/O error; commits resume (after the memtable is
                    flushed, as the engine's rule says)
  flush-enospc      SSTable writes fail with ENOSPC: tides_flush() fails with
                    "disk full" (SQLSTATE 53100) naming the file; reads and
                    small writes go on; flush works once space returns
  compact-enospc    the same for compaction: in the compaction worker (it
                    retries with back-off and logs the error) and in a
                    backend running tides_compact()
  sst-read-eio      reads of an SSTable fail with EIO: the query fails with
                    an I/O error naming the file; the server stays up
  tmpfs-enospc      a real full file system under pg_tides: flush fails
                    with disk full; service resumes when space is freed
  corrupt-sst       one byte flipped in an SSTable: a query reading it fails
                    with ERROR (SQLSTATE XX001) naming the file, the server
                    stays up, tides_verify() reports the file
After each scenario: kill -9, restart, and every acknowledged row is there.

Final line: "faults: P passed, F failed".
"""
import argparse
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pgharness as H  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


class Scenario(Exception):
    pass


def fill(path):
    """Append zeros to path until the file system is full; bytes written."""
    written = 0
    with open(path, "ab") as f:
        chunk = b"\0" * (1 << 20)
        try:
            while True:
                f.write(chunk)
                f.flush()
                written += len(chunk)
        except OSError:
            pass
    return written


class Faults:
    def __init__(self, args):
        self.args = args
        self.dir = args.dir
        self.ctl = os.path.join(self.dir, "fault.ctl")
        self.shim = os.path.join(self.dir, "faultshim.so")
        self.c = H.Cluster(os.path.join(self.dir, "cluster"))
        self.acked = {}     # table -> set of ids committed
        self.next_id = 1
        self.mounted = None

    # ---- helpers

    def build(self):
        src = os.path.join(HERE, "faultshim.c")
        subprocess.check_call(["cc", "-shared", "-fPIC", "-O2", src, "-o", self.shim, "-ldl", "-lpthread"])

    def set_fault(self, *lines):
        if not os.path.exists(self.ctl + ".hits"):
            open(self.ctl + ".hits", "w").close()
            os.chmod(self.ctl + ".hits", 0o666)
        with open(self.ctl + ".tmp", "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(self.ctl + ".tmp", 0o644)
        os.rename(self.ctl + ".tmp", self.ctl)

    def clear_fault(self):
        if os.path.exists(self.ctl):
            os.unlink(self.ctl)

    def hits(self):
        try:
            with open(self.ctl + ".hits") as f:
                return f.read().splitlines()
        except OSError:
            return []

    def sql(self, q, db="f", check=True, timeout=120):
        """(ok, output) of a psql run with SQLSTATEs in error messages."""
        r = self.c.psql(q, db=db, check=False, timeout=timeout, opts=["-v", "VERBOSITY=verbose"])
        if check and r.returncode != 0:
            raise Scenario("unexpected error from %r: %s" % (q[:80], r.stderr.strip()))
        return r.returncode == 0, (r.stdout + r.stderr).strip()

    def insert(self, table, n, pad=100):
        ids = list(range(self.next_id, self.next_id + n))
        self.next_id += n
        # random hex: compresses about 2:1, so files take real space
        ok, out = self.sql("INSERT INTO %s SELECT g, left(repeat(md5(random()::text), %d), %d) "
                           "FROM generate_series(%d, %d) g"
                           % (table, pad // 32 + 1, pad, ids[0], ids[-1]), check=False)
        if ok:
            self.acked.setdefault(table, set()).update(ids)
        return ok, out

    def insert_retry(self, table, n, seconds=60):
        """Insert until it succeeds (service resumes); returns tries."""
        deadline = time.time() + seconds
        tries = 0
        last = ""
        while time.time() < deadline:
            tries += 1
            ok, out = self.insert(table, n)
            if ok:
                return tries
            last = out
            time.sleep(0.5)
        raise Scenario("writes did not resume within %ds: %s" % (seconds, last))

    def expect_error(self, q, sqlstate, words):
        ok, out = self.sql(q, check=False)
        if ok:
            raise Scenario("%r succeeded, expected SQLSTATE %s" % (q[:60], sqlstate))
        m = re.search(r"ERROR:\s+([0-9A-Z]{5}):\s*(.*)", out)
        if not m:
            raise Scenario("%r failed without an ERROR line: %s" % (q[:60], out[:300]))
        if not m.group(1).startswith(sqlstate):
            raise Scenario("%r failed with SQLSTATE %s, expected %s: %s" % (q[:60], m.group(1), sqlstate, m.group(2)))
        for w in words:
            if w not in m.group(2):
                raise Scenario("error message lacks %r: %s" % (w, m.group(2)))
        return "%s %s" % (m.group(1), m.group(2))

    def alive(self):
        ok, out = self.sql("SELECT 1", check=False)
        if not ok:
            raise Scenario("server not answering: %s" % out)

    def check_acked(self):
        n = int(self.c.scalar("SELECT count(*) FROM t WHERE id < 0", db="f"))
        if n:
            raise Scenario("%d rows of failed statements are visible" % n)
        for t, ids in self.acked.items():
            got = set(int(x[0]) for x in self.c.rows("SELECT id FROM %s" % t, db="f"))
            lost = ids - got
            if lost:
                raise Scenario("%d acknowledged rows of %s lost, e.g. %s" % (len(lost), t, sorted(lost)[:5]))

    def crash_and_check(self):
        self.clear_fault()
        self.c.kill9()
        self.start()
        self.check_acked()
        for v in self.c.rows("SELECT file, problem FROM tides_verify()", db="f"):
            raise Scenario("tides_verify after restart: %s: %s" % (v[0], v[1]))

    def start(self):
        self.c.start(env={"LD_PRELOAD": self.shim, "TIDES_FAULT_CTL": self.ctl})

    def worker_pid(self, kind):
        r = self.c.rows("SELECT pid FROM pg_stat_activity WHERE backend_type = '%s'" % kind)
        if not r:
            raise Scenario("no %s process" % kind)
        return int(r[0][0])

    def tides_stat(self, name):
        return int(self.c.scalar("SELECT value FROM tides_stats() WHERE name = '%s'" % name, db="f"))

    # ---- scenarios

    def disk_full_writes(self):
        """The disk fills (SSTable and log writes, allocations, creations fail
        with ENOSPC).  Writes go on into the memtables and into the log
        segments made ahead of need, until one needs a flush or a segment that
        cannot be made: it fails, at once, with "disk full" naming the file."""
        self.insert_retry("t", 100)
        hits_before = len(self.hits())
        logged = self.c.new_log().count("tides flush work failed")
        self.set_fault("write .sst ENOSPC", "write .log ENOSPC", "alloc .log ENOSPC", "open .log ENOSPC")
        t_fault = time.time()
        for i in range(60):
            first = self.next_id
            t0 = time.time()
            ok, out = self.insert("t", 5000, pad=2000)
            if not ok:
                break
        else:
            raise Scenario("60 statements (600 MB of rows) succeeded with the disk full")
        took = time.time() - t0
        m = re.search(r"ERROR:\s+([0-9A-Z]{5}):\s*(.*)", out)
        if not m or m.group(1) != "53100" or "No space left on device" not in m.group(2) \
                or not re.search(r"\.sst|log segment", m.group(2)):
            raise Scenario("statement %d failed without a disk-full error naming a file: %s"
                           % (i + 1, out[:300]))
        if took > 10:
            raise Scenario("the failing statement took %.1f s: it waited for work that kept failing" % took)
        self.alive()
        n = int(self.c.scalar("SELECT count(*) FROM t WHERE id BETWEEN %d AND %d" % (first, first + 4999), db="f"))
        if n:
            raise Scenario("%d rows of the failed statement are visible" % n)
        # the flush worker backs off instead of retrying at every writer's wake-up
        time.sleep(2)
        retries = self.c.new_log().count("tides flush work failed") - logged
        if retries > 10:
            raise Scenario("the flush worker logged %d failures in %.0f s" % (retries, time.time() - t_fault))
        self.clear_fault()
        tries = self.insert_retry("t", 100)
        return "statement %d failed in %.2f s: %s %s; %d flush failures logged, %d faults hit; " \
               "writes resumed after %d tries" % (i + 1, took, m.group(1), m.group(2), retries,
                                                  len(self.hits()) - hits_before, tries)

    def log_fsync_eio(self):
        self.sql("ALTER SYSTEM SET tides.sync_mode = 'full'; SELECT pg_reload_conf();")
        time.sleep(0.5)
        self.insert_retry("t", 50)
        self.set_fault("sync .log EIO")
        msg = self.expect_error("INSERT INTO t VALUES (-2, 'never')", "58030", ["fsync", "Input/output error"])
        self.alive()
        self.clear_fault()
        tries = self.insert_retry("t", 50)
        return "error: %s; commits resumed after %d tries" % (msg, tries)

    def flush_enospc(self):
        self.insert_retry("t", 2000)
        self.set_fault("write .sst ENOSPC")
        msg = self.expect_error("SELECT tides_flush()", "53100", [".sst", "No space left on device"])
        self.alive()
        ok, out = self.insert("t", 10)
        if not ok:
            raise Scenario("a small write failed while flush could not run: %s" % out)
        self.check_acked()
        self.clear_fault()
        self.sql("SELECT tides_flush()")
        self.check_acked()
        return "error: %s" % msg

    def compact_enospc(self):
        l0_before = self.tides_stat("level0_files")
        cw = self.worker_pid("tides compaction")
        self.set_fault("write .sst ENOSPC pid=%d" % cw)
        # enough level-0 files to make the worker compact
        for i in range(5):
            self.insert_retry("t", 1000)
            self.sql("SELECT tides_flush()")
        deadline = time.time() + 20
        while time.time() < deadline and not any(h.split()[0] == str(cw) for h in self.hits()):
            time.sleep(0.2)
        if not any(h.split()[0] == str(cw) for h in self.hits()):
            raise Scenario("the compaction worker never reached the fault")
        l0_failing = self.tides_stat("level0_files")
        self.alive()
        self.check_acked()
        # a backend's own compaction fails with a clear error
        self.set_fault("write .sst ENOSPC")  # every process now
        msg = self.expect_error("SELECT tides_compact()", "53100", [".sst", "No space left on device"])
        log = self.c.new_log()
        if "tides compaction work failed" not in log:
            raise Scenario("the compaction worker's failure is not in the server log")
        self.clear_fault()
        deadline = time.time() + 60
        while time.time() < deadline and self.tides_stat("level0_files") >= l0_failing:
            time.sleep(0.5)
        l0_after = self.tides_stat("level0_files")
        if l0_after >= l0_failing:
            raise Scenario("compaction did not resume: level 0 still has %d files" % l0_after)
        self.check_acked()
        return "level-0 files %d -> %d while failing -> %d after; error: %s" % (l0_before, l0_failing, l0_after, msg)

    def sst_read_eio(self):
        self.insert_retry("r", 3000)
        self.sql("SELECT tides_flush()")
        # a clean restart empties the block cache, so the next read goes to the file
        self.c.stop()
        self.start()
        self.set_fault("read .sst EIO")
        msg = self.expect_error("SELECT count(*), max(length(v)) FROM r", "58030", [".sst", "Input/output error"])
        self.alive()
        self.clear_fault()
        n = int(self.c.scalar("SELECT count(*) FROM r", db="f"))
        if n != len(self.acked["r"]):
            raise Scenario("after the fault cleared r has %d rows, want %d" % (n, len(self.acked["r"])))
        return "error: %s" % msg

    def corrupt_sst(self):
        self.sql("CREATE TABLE IF NOT EXISTS k (id int PRIMARY KEY, v text) USING tides")
        self.insert_retry("k", 3000)
        tides_dir = os.path.join(self.c.data, "pg_tides")
        before = set(f for f in os.listdir(tides_dir) if f.endswith(".sst"))
        self.sql("SELECT tides_flush()")
        new = sorted(f for f in os.listdir(tides_dir) if f.endswith(".sst") and f not in before)
        if not new:
            raise Scenario("tides_flush() made no new SSTable")
        victim = os.path.join(tides_dir, new[-1])
        size = os.path.getsize(victim)
        off = size // 3
        with open(victim, "r+b") as f:
            f.seek(off)
            b = f.read(1)
            f.seek(off)
            f.write(bytes([b[0] ^ 0x5A]))
        ok, out = self.sql("SELECT count(*), sum(length(v)) FROM k", check=False)
        where = "while running"
        if ok:
            # the blocks were cached: read from the file after a restart
            self.c.stop()
            self.start()
            where = "after a restart (the block was cached)"
        msg = self.expect_error("SELECT count(*), sum(length(v)) FROM k", "XX001", [new[-1]])
        self.alive()
        n = self.c.scalar("SELECT count(*) FROM t", db="f")   # other tables still readable
        ver = self.c.rows("SELECT file, problem FROM tides_verify()", db="f")
        if not any(new[-1] in v[0] for v in ver):
            raise Scenario("tides_verify() did not report %s: %s" % (new[-1], ver))
        # repair the byte: everything reads again
        with open(victim, "r+b") as f:
            f.seek(off)
            f.write(b)
        self.c.stop()
        self.start()
        got = int(self.c.scalar("SELECT count(*) FROM k", db="f"))
        if got != len(self.acked["k"]):
            raise Scenario("after repair k has %d rows, want %d" % (got, len(self.acked["k"])))
        return "flipped byte %d of %s (%s): %s; tides_verify: %s; t still has %s rows" % (
            off, new[-1], where, msg, "; ".join("%s: %s" % (v[0], v[1]) for v in ver), n)

    def tmpfs_enospc(self):
        """A real full file system: pg_tides on a small tmpfs."""
        tides_dir = os.path.join(self.c.data, "pg_tides")
        self.c.stop()
        saved = tides_dir + ".saved"
        os.rename(tides_dir, saved)
        os.makedirs(tides_dir)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400m,mode=0700", "tmpfs", tides_dir],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            os.rmdir(tides_dir)
            os.rename(saved, tides_dir)
            self.start()
            return "SKIPPED: cannot mount a tmpfs here (%s)" % r.stdout.strip()
        self.mounted = tides_dir
        try:
            subprocess.check_call("cp -a %s/. %s/" % (saved, tides_dir), shell=True)
            H.chown_tree(tides_dir)
            self.start()
            self.insert_retry("t", 100)
            self.sql("SELECT tides_flush()")
            # fill the file system, then give back 256 kB
            filler = os.path.join(tides_dir, "filler")
            written = fill(filler)
            os.truncate(filler, max(0, written - (256 << 10)))
            ok_rows = 0
            first_err = ""

            def note(ok, out):
                nonlocal first_err
                # writes themselves may fail (every memtable full and the flush
                # failing, or the next log segment cannot be created): that
                # error must say the disk is full
                if not ok and not first_err:
                    first_err = out
                    if "No space left on device" not in out or "53100" not in out:
                        raise Scenario("a write failed without a disk-full error: %s" % out)
            for i in range(20):      # 8 MB of rows: more than the free space
                ok, out = self.insert("t", 1000, pad=400)
                note(ok, out)
                ok_rows += 1000 if ok else 0
            # meanwhile the engine may have freed space of its own (log
            # segments no longer needed): fill that too, and give the
            # memtable something a flush must write
            fill(filler)
            note(*self.insert("t", 10))
            msg = self.expect_error("SELECT tides_flush()", "53100", ["No space left on device"])
            self.alive()
            self.check_acked()
            os.unlink(filler)
            self.sql("SELECT tides_flush()")
            self.insert_retry("t", 100)
            self.check_acked()
            self.crash_and_check()
            return "error: %s; %d rows written while full; first write error: %s" % (
                msg, ok_rows, first_err.replace("\n", " ")[:300] or "none")
        finally:
            self.c.stop()
            subprocess.run(["cp", "-a", tides_dir + "/.", saved + "/"])
            subprocess.run(["umount", tides_dir])
            self.mounted = None
            os.rmdir(tides_dir)
            os.rename(saved, tides_dir)
            self.start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=os.environ.get("TIDES_FAULT_DIR", "/tmp/tidesam-faults"))
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    H.ensure_user()
    os.chmod(args.dir, 0o755)
    fx = Faults(args)
    fx.build()
    fx.clear_fault()
    c = fx.c
    c.initdb({
        "tides.memtable_size": "4MB",
        "tides.sync_mode": "full",
        "tides.wal": "off",             # the faults hit the engine's own log too
        "log_min_messages": "warning",
    })
    fx.start()
    c.psql("CREATE DATABASE f")
    c.psql("CREATE EXTENSION tidesam; CREATE TABLE t (id int PRIMARY KEY, v text) USING tides;"
           "CREATE TABLE r (id int PRIMARY KEY, v text) USING tides;", db="f")
    scenarios = [
        ("disk-full-writes", fx.disk_full_writes),
        ("log-fsync-eio", fx.log_fsync_eio),
        ("flush-enospc", fx.flush_enospc),
        ("compact-enospc", fx.compact_enospc),
        ("sst-read-eio", fx.sst_read_eio),
        ("tmpfs-enospc", fx.tmpfs_enospc),
        ("corrupt-sst", fx.corrupt_sst),
    ]
    passed = failed = skipped = 0
    for name, fn in scenarios:
        if args.only and name not in args.only.split(","):
            continue
        t0 = time.time()
        try:
            info = fn()
            if not info.startswith("SKIPPED"):
                fx.crash_and_check()
            bad = H.log_problems(c.new_log())
            if bad:
                raise Scenario("server log: %s" % bad[:3])
            if info.startswith("SKIPPED"):
                skipped += 1
                print("skip %s: %s" % (name, info), flush=True)
            else:
                passed += 1
                print("ok   %s (%.1fs): %s" % (name, time.time() - t0, info), flush=True)
        except Exception as e:
            failed += 1
            print("FAIL %s (%.1fs): %s" % (name, time.time() - t0, e), flush=True)
            fx.clear_fault()
            try:
                if not c.running():
                    fx.start()
            except Exception as e2:
                print("     restart failed: %s" % e2, flush=True)
                break
    fx.clear_fault()
    c.stop()
    print("faults: %d passed, %d failed%s" % (passed, failed, ", %d skipped" % skipped if skipped else ""))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
