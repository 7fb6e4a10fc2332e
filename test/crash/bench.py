#!/usr/bin/env python3
"""bench.py -- commit rates per sync mode, and recovery time of a full memtable.

1. Commits per second: pgbench -N (TPC-B-like without the branch and teller
   updates: each transaction updates one account, reads it, and inserts a
   history row; the tables have their primary keys) at 1, 4 and 16 clients,
   for heap with synchronous_commit on and off and for tides tables in each
   tides.sync_mode with synchronous_commit on and off.  PostgreSQL's fsync is
   on: these are real commits on this machine's disk.
2. Recovery: fill one 64 MB memtable with inserts (without flushing it),
   kill -9 the server, start it, and read the engine's line
   "tides: engine recovered in X s: N log bytes, M batches replayed".

Prints a Markdown table (also written to DIR/bench.md) and the exact commands.

  bench.py [--seconds 10] [--scale 10] [--clients 1,4,16] [--dir DIR]
"""
import argparse
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pgharness as H  # noqa: E402

CONFIGS = [
    ("heap", None, "on"),
    ("heap", None, "off"),
    ("tides", "full", "on"),
    ("tides", "interval", "on"),
    ("tides", "interval", "off"),
    ("tides", "none", "on"),
    ("tides", "none", "off"),
]


def pgbench(c, args, env=None):
    cmd = [os.path.join(H.BINDIR, "pgbench"), "-h", c.sock, "-p", str(c.port),
           "-U", H.RUN_USER] + args
    e = dict(os.environ)
    if env:
        e.update(env)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=e)
    if r.returncode != 0:
        raise RuntimeError("pgbench %s failed: %s" % (" ".join(args), r.stdout[-2000:]))
    return r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--clients", default="1,4,16")
    ap.add_argument("--dir", default=os.environ.get("TIDES_BENCH_DIR", "/tmp/tidesam-bench"))
    ap.add_argument("--skip-tps", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    H.ensure_user()
    os.chmod(args.dir, 0o755)
    lines = []
    commands = []

    c = H.Cluster(os.path.join(args.dir, "cluster"))
    if not args.skip_tps:
        c.initdb({"max_connections": "40", "shared_buffers": "256MB", "max_wal_size": "2GB",
                  "checkpoint_timeout": "15min", "tides.memtable_size": "64MB"})
        c.start()
        c.psql("CREATE DATABASE b_heap; CREATE DATABASE b_tides;")
        c.psql("CREATE EXTENSION tidesam; ALTER DATABASE b_tides SET default_table_access_method = tides;",
               db="b_tides")
        pgbench(c, ["-i", "-q", "-s", str(args.scale), "b_heap"])
        pgbench(c, ["-i", "-q", "-s", str(args.scale), "b_tides"])
        commands.append("pgbench -i -q -s %d b_heap; pgbench -i -q -s %d b_tides  "
                        "(b_tides: ALTER DATABASE ... SET default_table_access_method = tides)"
                        % (args.scale, args.scale))
        results = {}
        clients = [int(x) for x in args.clients.split(",")]
        for am, mode, sc in CONFIGS:
            db = "b_" + am
            if mode:
                c.psql("ALTER SYSTEM SET tides.sync_mode = '%s'; SELECT pg_reload_conf();" % mode)
                time.sleep(0.5)
            for n in clients:
                c.psql("CHECKPOINT")
                out = pgbench(c, ["-N", "-n", "-c", str(n), "-j", str(min(n, 2)), "-T", str(args.seconds), db],
                              env={"PGOPTIONS": "-c synchronous_commit=%s" % sc})
                m = re.search(r"tps = ([\d.]+) \(without initial connection time\)", out)
                tps = float(m.group(1)) if m else float("nan")
                results[(am, mode, sc, n)] = tps
                print("%s %s synchronous_commit=%s clients=%d: %.0f tps" % (am, mode or "", sc, n, tps), flush=True)
        commands.append("PGOPTIONS='-c synchronous_commit=on|off' pgbench -N -n -c C -j min(C,2) -T %d DB  "
                        "(tides.sync_mode set with ALTER SYSTEM + pg_reload_conf(); CHECKPOINT before each run)"
                        % args.seconds)
        lines.append("| table AM | tides.sync_mode | synchronous_commit | " +
                     " | ".join("%d client%s" % (n, "s" if n > 1 else "") for n in clients) + " |")
        lines.append("|---|---|---|" + "---:|" * len(clients))
        for am, mode, sc in CONFIGS:
            lines.append("| %s | %s | %s | %s |" % (am, mode or "-", sc,
                                                    " | ".join("%.0f" % results[(am, mode, sc, n)] for n in clients)))
        c.stop()

    # ---- recovery of a full memtable
    r = H.Cluster(os.path.join(args.dir, "recovery"))
    r.initdb({"tides.memtable_size": "64MB", "tides.sync_mode": "none", "max_wal_size": "2GB"})
    r.start()
    r.psql("CREATE DATABASE rec")
    r.psql("CREATE EXTENSION tidesam; CREATE TABLE big (id bigint, v text) USING tides;", db="rec")

    def stat(name):
        return int(r.scalar("SELECT value FROM tides_stats() WHERE name = '%s'" % name, db="rec"))

    flushes0 = stat("flushes")
    n = 0
    while stat("memtable_bytes") < 56 * 1024 * 1024 and stat("flushes") == flushes0:
        r.psql("INSERT INTO big SELECT g, md5(g::text) || repeat('x', 60) FROM generate_series(%d, %d) g"
               % (n, n + 49999), db="rec")
        n += 50000
    mem = stat("memtable_bytes")
    flushed = stat("flushes") != flushes0
    r.kill9()
    t0 = time.time()
    r.start()
    wall = time.time() - t0
    m = re.search(r"tides: engine recovered in [^\n]*", r.new_log())
    rec_line = m.group(0) if m else "(no recovery line)"
    count = r.scalar("SELECT count(*) FROM big", db="rec")
    r.stop()
    rec = ("memtable_bytes before the kill: %d (%.1f MB)%s; %d rows inserted, %s after restart; "
           "server start took %.2f s; log line: `%s`"
           % (mem, mem / 1048576.0, " (a flush happened: the memtable was not full of unflushed rows)" if flushed else "",
              n, count, wall, rec_line))
    print(rec, flush=True)
    commands.append("recovery: tides.memtable_size = 64MB, tides.sync_mode = none; INSERT INTO big SELECT g, "
                    "md5(g::text) || repeat('x', 60) FROM generate_series(...) in 50000-row statements until "
                    "tides_stats() memtable_bytes >= 56 MB; kill -9 of all server processes; pg_ctl start -w")
    with open(os.path.join(args.dir, "bench.md"), "w") as f:
        f.write("\n".join(lines) + "\n\n" + rec + "\n\nCommands:\n" + "\n".join("    " + x for x in commands) + "\n")
    print("\n".join(lines))
    print("bench: %d passed, 0 failed" % (1 + (0 if args.skip_tps else 1)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
