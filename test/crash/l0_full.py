#!/usr/bin/env python3
"""l0_full.py -- the server dies while level 0 is at tides.l0_stop_files.

After a crash the postmaster resets the store before it starts any worker
(src/runtime/incarnation.c, trt_reset_after_crash): with tides.wal = off it
writes a suspect mark for every tree.  A write into a store whose level 0
is at the stop trigger is answered TIDES_BUSY until a compaction takes files
away, and no compaction worker runs yet: the postmaster must do that work
itself (trt_engine_write_here).  It used to sleep and retry forever -- a CI
run found the server not starting after bulk_crash's kill in none_keep mode.

Per cycle: the compaction workers are stopped (SIGSTOP: a compaction used
to merge the flushed files between the last flush and the kill, and a CI
run killed with level 0 full in none of 16 cycles), then rows are inserted
and flushed (tides_flush()) until level 0 holds STOP files, and every
server process is killed; then the server must start (pg_ctl's wait, 180
s), and every row flushed before the kill must be there.  Cycles in which
level 0 was full at the kill are counted: the run fails if there was none,
since it would then not have tested anything.

Ends with "l0_full: P passed, F failed".
"""
import argparse
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pgharness  # noqa: E402

STOP = 4            # tides.l0_slowdown_files = l0_stop_files (the engine's compaction trigger is 4)
ROWS = 3000         # rows per flush


def freeze_compaction(c):
    """SIGSTOP the compaction workers (started with the server, up to 10 s
    after pg_ctl's wait); the number stopped.  The kill takes them along."""
    deadline = time.time() + 10
    while True:
        pids = [p for p in pgharness.pgcluster.process_tree(c.postmaster_pid())
                if "tides compaction" in pgharness.pgcluster.cmdline(p)]
        if pids or time.time() > deadline:
            break
        time.sleep(0.1)
    for p in pids:
        stop_idle(p)
    return len(pids)


# x86-64 and arm64 numbers of epoll_wait / epoll_pwait: the worker's WaitLatch
IDLE_SYSCALLS = {"232", "281", "22"}


def stop_idle(pid):
    """SIGSTOP pid where it waits on its latch (in epoll_wait), not inside
    its work: a worker stopped while it holds a lock of the shared region
    (the version mutex, a cache lock) hangs whoever needs that lock next (a
    CI run saw an INSERT and tides_flush() wait 600 s in a cycle; its stacks
    were not kept).  Retries for up to 60 s."""
    deadline = time.time() + 60
    while True:
        os.kill(pid, signal.SIGSTOP)
        time.sleep(0.05)
        try:
            with open("/proc/%d/syscall" % pid) as f:
                nr = f.read().split()[0]
        except OSError:
            return
        if nr in IDLE_SYSCALLS or time.time() > deadline:
            return
        os.kill(pid, signal.SIGCONT)
        time.sleep(0.2)


def level0(c):
    return int(c.scalar("SELECT value FROM tides_stats() WHERE name = 'level0_files';"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--cycles", type=int, default=16)
    args = ap.parse_args()
    c = pgharness.Cluster(os.path.join(args.dir, "cluster"), port=55760)
    c.initdb({"autovacuum": "off", "tides.wal": "off", "tides.sync_mode": "full",
              "synchronous_commit": "on", "tides.memtable_size": "1MB",
              "tides.l0_slowdown_files": str(STOP), "tides.l0_stop_files": str(STOP)})
    c.start()
    c.psql("CREATE EXTENSION tidesam; CREATE TABLE t (id int, v text) USING tides;")
    ok = bad = full_at_kill = 0
    rows = 0
    for cyc in range(args.cycles):
        frozen = freeze_compaction(c)
        l0 = level0(c)
        # the reset after the last kill left level 0 below STOP; without a
        # compaction each flush adds a file (bounded, should none be frozen)
        for _ in range(3 * STOP):
            if l0 >= STOP:
                break
            c.psql("INSERT INTO t SELECT g, md5(g::text) FROM generate_series(%d, %d) g; SELECT tides_flush();"
                   % (rows + 1, rows + ROWS))
            rows += ROWS
            l0 = level0(c)
        c.kill9()
        full_at_kill += l0 >= STOP
        try:
            c.start()
            n = int(c.scalar("SELECT count(*) FROM t;"))
            good = n == rows
            detail = "level 0 at the kill: %d files (%d compaction workers stopped); %d rows of %d" % (
                l0, frozen, n, rows)
        except Exception as e:  # the server did not come up: the failure this test is for
            good = False
            detail = "level 0 at the kill: %d files; restart failed: %s" % (l0, str(e)[:300])
        print("%s cycle %d: %s" % ("ok  " if good else "FAIL", cyc, detail), flush=True)
        ok += good
        bad += not good
        if not good:
            break
    if full_at_kill == 0:
        print("FAIL level 0 was never full at a kill: nothing was tested")
        bad += 1
    else:
        print("ok   level 0 full at %d of the kills" % full_at_kill)
        ok += 1
    c.stop()
    print("l0_full: %d passed, %d failed" % (ok, bad))
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
