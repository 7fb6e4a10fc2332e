#!/usr/bin/python3
"""profile.py -- where does a tides (or heap) server spend a workload's time?

    bench/pg/profile.py WORKLOAD [--engine tides|heap] [--clients 4] [--seconds 15]
                        [--scale 10] [--durability relaxed|strict] [--out DIR]

WORKLOAD: tpcb-like, simple-update, select-only (pgbench, at --scale), or
point-lookup, range-100, update-indexed, insert-3idx (oltp_idx.py's table,
--rows rows), or copy (COPY of --rows rows of copy_load.py's data; --engine
heap_unlogged is allowed there).

Creates a throwaway cluster like the benchmark's, loads the data, starts
pgbench, and while it runs:

  * perf record -e cpu-clock -g (frame pointers: Debian builds PostgreSQL and
    PGXS extensions with -fno-omit-frame-pointer) on every server process;
    hardware counters are not available in this VM, the software clock is;
  * samples pg_stat_activity every 10 ms: what the client backends wait on
    (off-CPU time perf does not see: LWLocks, heavyweight locks, I/O, IPC).

Writes DIR (default bench/results/pg_profile)/<engine>-<workload>.perf.txt (flat profile by symbol and by
shared object, and callers of the top symbols) and .waits.txt, and prints the
top of both.  Needs root (perf_event_paranoid) and perf.
"""
import argparse
import collections
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
import copy_load  # noqa: E402
import oltp_idx  # noqa: E402

PGBENCH_ARGS = {"tpcb-like": [], "simple-update": ["-N"], "select-only": ["-S"]}


def sample_waits(cluster, seconds, path):
    n = int(seconds / 0.01)
    q = ("SELECT coalesce(wait_event_type, 'CPU') || ':' || coalesce(wait_event, '-') FROM pg_stat_activity "
         "WHERE backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid();\n"
         "SELECT pg_sleep(0.01);\n")
    with open(path, "w") as f:
        f.write(q * n)
    r = subprocess.run([os.path.join(B.PG_BIN, "psql"), "-X", "-q", "-A", "-t", "-d", "postgres", "-f", path],
                       env=cluster.env(), capture_output=True, text=True)
    c = collections.Counter(l.strip() for l in r.stdout.splitlines() if l.strip())
    return c, n


def perf_reports(perf_data, path, header):
    flat = subprocess.run(["perf", "report", "-i", perf_data, "--stdio", "--no-children", "-g", "none",
                           "--percent-limit", "0.4", "--sort", "comm,dso,symbol"],
                          capture_output=True, text=True).stdout
    dso = subprocess.run(["perf", "report", "-i", perf_data, "--stdio", "--no-children", "-g", "none",
                          "--sort", "dso"], capture_output=True, text=True).stdout
    children = subprocess.run(["perf", "report", "-i", perf_data, "--stdio", "--children", "-g", "none",
                               "--percent-limit", "2", "--sort", "symbol"], capture_output=True, text=True).stdout
    callers = subprocess.run(["perf", "report", "-i", perf_data, "--stdio", "--no-children",
                              "-g", "caller,0.5,callee,function,percent", "--percent-limit", "2.5",
                              "--sort", "symbol"], capture_output=True, text=True).stdout
    strip = lambda t: "\n".join(l for l in t.splitlines() if l and not l.startswith("#"))
    with open(path, "w") as f:
        f.write(header + "\n")
        f.write("\n## self time by process, object, symbol\n" + strip(flat))
        f.write("\n\n## self time by object\n" + strip(dso))
        f.write("\n\n## inclusive time (children) by symbol\n" + strip(children))
        f.write("\n\n## call chains of the top symbols\n" + strip(callers) + "\n")
    return strip(flat)


def profile_copy(cl, a, tag):
    """COPY --rows rows into an empty table; perf on every server process
    (the COPY backend, and the flush and compaction workers) for the whole
    COPY"""
    path = os.path.join(cl.dir, "rows.csv")   # cl.dir belongs to the server's user
    cl.psql(copy_load.GEN_SQL % (a.rows, path))
    cl.psql(copy_load.TABLE_DDL % ("UNLOGGED " if a.engine == "heap_unlogged" else "",
                                   "tides" if a.engine == "tides" else "heap"), db="bench")
    cl.settle("bench")
    cp = subprocess.Popen([os.path.join(B.PG_BIN, "psql"), "-X", "-q", "-d", "bench", "-c",
                           "COPY copy_t FROM '%s' (FORMAT csv)" % path], env=cl.env())
    t0 = time.time()
    while not cl.psql("SELECT pid FROM pg_stat_activity WHERE query LIKE 'COPY copy_t%' "
                      "AND pid <> pg_backend_pid()"):
        time.sleep(0.02)
    perf_data = os.path.join(cl.dir, "perf.data")
    perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "999", "-g", "-o", perf_data,
                             "-p", ",".join(map(str, cl.server_pids()))],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cp.wait()
    secs = time.time() - t0
    perf.send_signal(2)
    perf.wait()
    ts = cl.tides_stats("bench")
    hdr = ("# %s: COPY of %d rows took %.1f s (%.0f rows/s); tides stalls %d, slowdowns %d (%d us)"
           % (tag, a.rows, secs, a.rows / secs, ts.get("stall_count", 0), ts.get("slowdown_count", 0),
              ts.get("slowdown_us", 0)))
    flat = perf_reports(perf_data, os.path.join(a.out, tag + ".perf.txt"), hdr)
    print(hdr)
    print("\n".join(flat.splitlines()[:40]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("workload", choices=list(PGBENCH_ARGS) + list(oltp_idx.SCRIPTS) + ["copy"])
    ap.add_argument("--engine", default="tides", choices=["tides", "heap", "heap_unlogged"])
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--seconds", type=int, default=15)
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--durability", default="relaxed", choices=["relaxed", "strict"])
    ap.add_argument("--warmup", type=int, default=3, help="seconds of the run before sampling starts")
    ap.add_argument("--pgoptions", default="", help="extra session settings, e.g. '-c enable_seqscan=off'")
    ap.add_argument("--tag", default="", help="suffix of the output file names")
    ap.add_argument("--out", default=os.path.join(B.RESULTS, "pg_profile"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    tag = "%s-%s-c%d%s" % (a.engine, a.workload, a.clients, ("-" + a.tag) if a.tag else "")
    eng = B.Engine(a.engine, "heap" if a.engine == "heap_unlogged" else a.engine)
    sb = "512MB" if a.workload in oltp_idx.SCRIPTS else "256MB"
    cl = B.Cluster("profile", {"shared_buffers": sb, "tides.block_cache_size": sb})
    try:
        cl.initdb().start()
        B.set_durability(cl, a.durability)
        cl.create_db("bench")
        if a.workload == "copy":
            return profile_copy(cl, a, tag)
        if a.workload in PGBENCH_ARGS:
            subprocess.run([os.path.join(B.PG_BIN, "pgbench"), "-i", "-q", "-s", str(a.scale), "bench"],
                           env=cl.env(eng.init_options()), check=True, capture_output=True)
            args = PGBENCH_ARGS[a.workload]
        else:
            p = os.path.join(cl.dir, "load.sql")
            with open(p, "w") as f:
                f.write(oltp_idx.load_sql(a.rows, eng.index_am))
            cl.psql_file(p, db="bench", pgoptions=eng.init_options())
            s = os.path.join(cl.dir, "w.sql")
            with open(s, "w") as f:
                f.write(oltp_idx.SCRIPTS[a.workload])
            args = ["-f", s, "-D", "rows=%d" % a.rows]
        cl.settle("bench")
        total = a.warmup + a.seconds + 2
        logdir = os.path.join(cl.dir, "pgb")
        os.makedirs(logdir)
        pgb = subprocess.Popen([os.path.join(B.PG_BIN, "pgbench"), "-n", "-T", str(total), "-c", str(a.clients),
                                "-j", str(min(a.clients, os.cpu_count() or 2))] + args + ["bench"],
                               env=cl.env((eng.durability_options(a.durability) + " " + a.pgoptions).strip()),
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, cwd=logdir)
        time.sleep(a.warmup)
        pids = cl.server_pids()
        perf_data = os.path.join(cl.dir, "perf.data")
        perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "999", "-g", "-o", perf_data,
                                 "-p", ",".join(map(str, pids)), "--", "sleep", str(a.seconds)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        waits, nsamples = sample_waits(cl, a.seconds, os.path.join(cl.dir, "waits.sql"))
        perf.wait()
        out, _ = pgb.communicate()
        tps = [l for l in out.splitlines() if l.startswith("tps")]
        flat = perf_reports(perf_data, os.path.join(a.out, tag + ".perf.txt"),
                            "# %s, %d clients, %s, %d s after %d s of warm-up; %s%s" % (
                                tag, a.clients, a.durability, a.seconds, a.warmup, " ".join(tps),
                                (" (" + a.pgoptions + ")") if a.pgoptions else ""))
        with open(os.path.join(a.out, tag + ".waits.txt"), "w") as f:
            tot = sum(waits.values())
            f.write("# %s: active client backends sampled every 10 ms (%d samples, %d backend-samples)\n"
                    % (tag, nsamples, tot))
            for k, v in waits.most_common():
                f.write("%6.1f%%  %s\n" % (100.0 * v / max(1, tot), k))
        print("\n".join(tps))
        print(open(os.path.join(a.out, tag + ".waits.txt")).read())
        print("\n".join(flat.splitlines()[:40]))
    finally:
        cl.destroy()


if __name__ == "__main__":
    main()
