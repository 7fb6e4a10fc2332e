#!/usr/bin/python3
"""profile.py -- where does a tides (or heap) server spend a workload's time?

    bench/pg/profile.py WORKLOAD [--engine tides|heap] [--clients 4] [--seconds 15]
                        [--scale 10] [--durability relaxed|strict] [--out DIR]

WORKLOAD: tpcb-like, simple-update, select-only (pgbench, at --scale), or
point-lookup, range-100, update-indexed, insert-3idx (oltp_idx.py's table,
--rows rows), or copy (COPY of --rows rows of copy_load.py's data; --engine
heap_unlogged and tides_unlogged are allowed there).

Creates a throwaway cluster like the benchmark's, loads the data, starts
pgbench, and while it runs:

  * perf record -e cpu-clock -g (frame pointers: Debian builds PostgreSQL and
    PGXS extensions with -fno-omit-frame-pointer) on every server process;
    hardware counters are not available in this VM, the software clock is;
  * samples pg_stat_activity every 10 ms: what the client backends wait on
    (off-CPU time perf does not see: LWLocks, heavyweight locks, I/O, IPC);
  * with --statements: pg_stat_statements over the sampled window (which
    statement of a multi-statement transaction takes the time), the tables'
    pgstat counters (dead tuples, autovacuum runs, scans) before and after,
    tides_stats() deltas, and the plans of the workload's statements at the
    end (EXPLAIN ANALYZE of the UPDATEs inside a rolled-back transaction);
  * pgbench -P: throughput per interval (--progress seconds), which shows a
    workload that slows down as it runs.

Writes DIR (default bench/results/pg_profile)/<engine>-<workload>.perf.txt (flat profile by symbol and by
shared object, and callers of the top symbols), .waits.txt and (--statements)
.stmts.txt, and prints the top of them.  Needs root (perf_event_paranoid) and
perf (Debian's linux-perf; installed with apt-get when missing).  --no-perf
skips perf (statements and waits only), for a run that is not slowed by
sampling.
"""
import argparse
import collections
import json
import os
import shutil
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
    cl.psql(copy_load.TABLE_DDL % ("UNLOGGED " if a.engine.endswith("_unlogged") else "",
                                   "heap" if a.engine.startswith("heap") else "tides"), db="bench")
    cl.settle("bench")
    cp = subprocess.Popen([os.path.join(B.PG_BIN, "psql"), "-X", "-q", "-d", "bench", "-c",
                           "COPY copy_t FROM '%s' (FORMAT csv)" % path], env=cl.env())
    t0 = time.time()
    while not cl.psql("SELECT pid FROM pg_stat_activity WHERE query LIKE 'COPY copy_t%' "
                      "AND pid <> pg_backend_pid()"):
        time.sleep(0.02)
    perf_data = os.path.join(cl.dir, "perf.data")
    perf = start_perf(cl, perf_data, 3600)   # stopped with SIGINT when the COPY ends
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


STATS_SQL = """SELECT json_agg(row_to_json(t)) FROM (
  SELECT relname, seq_scan, seq_tup_read, idx_scan, n_tup_upd, n_tup_hot_upd, n_live_tup, n_dead_tup,
         autovacuum_count, vacuum_count, autoanalyze_count
  FROM pg_stat_user_tables ORDER BY relname) t"""


def table_stats(cl):
    out = cl.psql(STATS_SQL, db="bench")
    return {r["relname"]: r for r in json.loads(out or "[]")}


def statements_report(cl, before, after, ts0, ts1):
    L = []
    rows = cl.psql("SELECT round(total_exec_time::numeric, 1), calls, round(mean_exec_time::numeric, 3), "
                   "rows, shared_blks_hit + shared_blks_read, "
                   "regexp_replace(left(query, 90), '\\s+', ' ', 'g') "
                   "FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'bench') "
                   "ORDER BY total_exec_time DESC LIMIT 12", db="bench")
    L.append("## statements in the sampled window (pg_stat_statements), by total execution time")
    L.append("%10s %9s %9s %9s %10s  %s" % ("total ms", "calls", "mean ms", "rows", "shr blks", "query"))
    for line in rows.splitlines():
        a = line.split("|")
        L.append("%10s %9s %9s %9s %10s  %s" % tuple(a))
    L.append("\n## table counters: before -> after the sampled window")
    for rel in sorted(after):
        b, a = before.get(rel, {}), after[rel]
        L.append("%-18s " % rel + ", ".join("%s %s->%s" % (k, b.get(k, "-"), a[k]) for k in
                 ("seq_scan", "seq_tup_read", "idx_scan", "n_tup_upd", "n_tup_hot_upd", "n_dead_tup",
                  "autovacuum_count")))
    if ts0 and ts1:
        L.append("\n## tides_stats() deltas over the sampled window")
        for k in sorted(ts1):
            d = ts1[k] - ts0.get(k, 0)
            if d:
                L.append("%-34s %d" % (k, d))
    return "\n".join(L)


def explain_updates(cl, workload, pgoptions):
    """plans with timing of the write statements, rolled back"""
    stmts = {"tpcb-like": ["UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = 1",
                           "UPDATE pgbench_tellers SET tbalance = tbalance + 1 WHERE tid = 1",
                           "UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 1"],
             "simple-update": ["UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid = 1"],
             "update-indexed": ["UPDATE items SET b = 7 WHERE id = 4242"],
             "range-100": ["SELECT count(*), sum(b) FROM items WHERE id >= 4242 AND id < 4342"],
             "point-lookup": ["SELECT * FROM items WHERE id = 4242"]}.get(workload, [])
    L = []
    for q in stmts:
        out = cl.psql(["BEGIN", "EXPLAIN (ANALYZE, BUFFERS, TIMING) " + q, "ROLLBACK"], db="bench",
                      pgoptions=pgoptions or None)
        L.append("-- " + q + "\n" + out)
    return "\n".join(L)


def start_perf(cl, perf_data, seconds):
    """perf record on every server process.  perf gives up at once when a
    pid of its list has gone (a backend of a psql that just ended), so the
    list is taken again and perf restarted until it stays up."""
    for attempt in range(5):
        time.sleep(0.3)
        pids = cl.server_pids()
        perf = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-F", "999", "-g", "-o", perf_data,
                                 "-p", ",".join(map(str, pids)), "--", "sleep", str(seconds)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(0.7)
        if perf.poll() is None:
            return perf
        B.log("perf record exited at once (%s); retrying" % perf.stderr.read().strip()[:200])
    raise RuntimeError("perf record does not stay up")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("workload", choices=list(PGBENCH_ARGS) + list(oltp_idx.SCRIPTS) + ["copy"])
    ap.add_argument("--engine", default="tides", choices=["tides", "tides_btree", "heap", "heap_unlogged",
                                                           "tides_unlogged"])
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--seconds", type=int, default=15)
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--durability", default="relaxed", choices=["relaxed", "strict"])
    ap.add_argument("--warmup", type=int, default=3, help="seconds of the run before sampling starts")
    ap.add_argument("--pgoptions", default="", help="extra session settings, e.g. '-c enable_seqscan=off'")
    ap.add_argument("--tag", default="", help="suffix of the output file names")
    ap.add_argument("--out", default=os.path.join(B.RESULTS, "pg_profile"))
    ap.add_argument("--statements", action="store_true", help="pg_stat_statements, table counters, plans")
    ap.add_argument("--no-perf", action="store_true", help="no perf sampling")
    ap.add_argument("--progress", type=int, default=5, help="pgbench -P interval (s)")
    ap.add_argument("--protocol", default="simple", choices=B.PROTOCOLS, help="pgbench -M")
    ap.add_argument("--conf", action="append", default=[],
                    help="server setting NAME=VALUE on top of the benchmark's (e.g. tides.wal=off)")
    a = ap.parse_args()
    if not a.no_perf and not shutil.which("perf"):
        subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", "linux-perf"], check=False)
    os.makedirs(a.out, exist_ok=True)
    tag = "%s-%s-c%d%s%s" % (a.engine, a.workload, a.clients, "-prepared" if a.protocol == "prepared" else "",
                             ("-" + a.tag) if a.tag else "")
    if a.engine == "tides_btree":
        eng = B.Engine("tides_btree", "tides", index_method="tides_btree", has_guc=True)
    else:
        eng = B.Engine(a.engine, a.engine.replace("_unlogged", ""))
    sb = "512MB" if a.workload in oltp_idx.SCRIPTS else "256MB"
    conf = {"shared_buffers": sb, "tides.block_cache_size": sb}
    conf.update(kv.split("=", 1) for kv in a.conf)
    if a.statements:
        conf["shared_preload_libraries"] = "'tidesam,pg_stat_statements'"
        conf["pg_stat_statements.track"] = "top"
    cl = B.Cluster("profile", conf)
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
        if a.statements:
            cl.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", db="bench")
        total = a.warmup + a.seconds + 2
        logdir = os.path.join(cl.dir, "pgb")
        os.makedirs(logdir)
        pgb = subprocess.Popen([os.path.join(B.PG_BIN, "pgbench"), "-n", "-T", str(total), "-c", str(a.clients),
                                "-j", str(min(a.clients, os.cpu_count() or 2)), "-P", str(a.progress)]
                               + args + B.protocol_args(a.protocol) + ["bench"],
                               env=cl.env((eng.durability_options(a.durability) + " " + a.pgoptions).strip()),
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, cwd=logdir)
        time.sleep(a.warmup)
        if a.statements:
            cl.psql("SELECT pg_stat_statements_reset()", db="bench")
            st0, ts0 = table_stats(cl), cl.tides_stats("bench") if eng.is_tides else {}
        perf_data = os.path.join(cl.dir, "perf.data")
        perf = None
        if not a.no_perf:
            perf = start_perf(cl, perf_data, a.seconds)
        waits, nsamples = sample_waits(cl, a.seconds, os.path.join(cl.dir, "waits.sql"))
        if perf:
            perf.wait()
        if a.statements:
            time.sleep(0.5)   # pgstat counters are flushed at most once a second
            st1, ts1 = table_stats(cl), cl.tides_stats("bench") if eng.is_tides else {}
        out, _ = pgb.communicate()
        tps = [l for l in out.splitlines() if l.startswith("tps")]
        prog = [l for l in out.splitlines() if l.startswith("progress:")]
        hdr = "# %s, %d clients, %s, %s protocol%s, %d s after %d s of warm-up; %s%s\n# load average %s\n# %s" % (
            tag, a.clients, a.durability, a.protocol, "".join(", " + c for c in a.conf), a.seconds, a.warmup,
            " ".join(tps),
            (" (" + a.pgoptions + ")") if a.pgoptions else "", " ".join(open("/proc/loadavg").read().split()[:3]),
            "\n# ".join(prog))
        flat = ""
        if perf:
            flat = perf_reports(perf_data, os.path.join(a.out, tag + ".perf.txt"), hdr)
        if a.statements:
            rep = hdr + "\n\n" + statements_report(cl, st0, st1, ts0, ts1)
            rep += "\n\n## plans at the end of the run\n" + explain_updates(
                cl, a.workload, eng.durability_options(a.durability))
            with open(os.path.join(a.out, tag + ".stmts.txt"), "w") as f:
                f.write(rep + "\n")
            print(rep)
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
