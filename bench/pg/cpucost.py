#!/usr/bin/python3
"""cpucost.py -- server CPU per transaction, tides against heap, on a shared machine.

    bench/pg/cpucost.py [--points P,...] [--scale 10] [--txns 3000] [--repeats 3]
                        [--engines heap,tides,tides_ownlog] [--oltp-rows 200000]

Throughput on a machine whose load average moves between 2 and 12 says
little about a change of a few percent.  The CPU time the server spends per
transaction moves much less: this script runs each point with a fixed
number of transactions (pgbench -t) and reports, besides tps, the server's
CPU (user + system, every process of the cluster, exited backends included:
the postmaster reaps them, so their time is in its cutime/cstime) per
transaction, and the voluntary context switches per transaction of the
backends (how often a writer slept).  Engines alternate run by run; medians
and the min-max of paired ratios are printed.

Points: workload:durability:clients[:protocol], workload one of pgbench's
tpcb-like, simple-update, select-only (at --scale) or oltp_idx.py's
scripts (items table of --oltp-rows rows).  Clusters are set up as
bench/pg's (benchlib.BASE_CONF).  Output: a table on stdout and
--csv FILE (default /tmp/cpucost.csv).
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402
import oltp_idx  # noqa: E402

PGBENCH = {"tpcb-like": [], "simple-update": ["-N"], "select-only": ["-S"]}
HZ = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid, children=False):
    try:
        with open("/proc/%d/stat" % pid) as f:
            parts = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # fields after the command: state is [0]; utime [11], stime [12], cutime [13], cstime [14]
    t = int(parts[11]) + int(parts[12])
    if children:
        t += int(parts[13]) + int(parts[14])
    return t / HZ


def proc_ctx(pid):
    v = n = 0
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("voluntary_ctxt_switches"):
                    v = int(line.split()[1])
                elif line.startswith("nonvoluntary_ctxt_switches"):
                    n = int(line.split()[1])
    except OSError:
        pass
    return v, n


def server_cpu(cl):
    pm = cl.postmaster_pid()
    total = proc_cpu(pm, children=True)
    for p in cl.server_pids():
        if p != pm:
            total += proc_cpu(p)
    return total


def run_point(cl, e, wl, dur, clients, proto, txns, rows, scripts):
    if wl in PGBENCH:
        args = PGBENCH[wl]
    else:
        args = ["-f", scripts[(e.name, wl)], "-D", "rows=%d" % rows]
    args = args + B.protocol_args(proto)
    threads = max(1, min(clients, os.cpu_count() or 2))
    cmd = [os.path.join(B.PG_BIN, "pgbench"), "-n", "-t", str(txns), "-c", str(clients), "-j", str(threads)] + \
        args + [DB]
    # backends' context switches: sample them while pgbench runs (they exit with it)
    c0 = server_cpu(cl)
    t0 = time.time()
    p = subprocess.Popen(cmd, env=cl.env(e.durability_options(dur)), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    ctx = {}
    while p.poll() is None:
        for pid in cl.server_pids():
            ctx[pid] = proc_ctx(pid)
        time.sleep(0.2)
    out = p.stdout.read()
    wall = time.time() - t0
    if p.returncode != 0:
        raise RuntimeError("pgbench failed: %s\n%s" % (" ".join(cmd), out[-2000:]))
    time.sleep(0.3)     # let the postmaster reap the backends
    c1 = server_cpu(cl)
    import re
    m = re.search(r"tps = ([\d.]+) \(without initial connection time\)", out)
    tps = float(m.group(1)) if m else float("nan")
    n = txns * clients
    vol = sum(v for v, _ in ctx.values())
    return {"tps": tps, "cpu_us": (c1 - c0) * 1e6 / n, "wall": wall, "vcs": vol / n}


DB = "bench"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", default="tpcb-like:relaxed:4,tpcb-like:relaxed:16")
    ap.add_argument("--engines", default="heap,tides")
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--oltp-rows", type=int, default=200000)
    ap.add_argument("--txns", type=int, default=3000, help="transactions per client... divided by clients/4")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--csv", default="/tmp/cpucost.csv")
    a = ap.parse_args()
    points = []
    for p in a.points.split(","):
        f = p.split(":")
        points.append((f[0], f[1], int(f[2]), f[3] if len(f) > 3 else "simple"))
    os.environ["BENCH_ENGINES"] = a.engines
    conf = {"shared_buffers": "256MB", "tides.block_cache_size": "256MB"}
    engines, clusters, note = B.start_clusters("cpucost", conf, tuple(a.engines.split(",")))
    engines = [e for e in engines if e.name in a.engines.split(",")]
    scripts = {}
    rows_out = []
    need_pgb = any(p[0] in PGBENCH for p in points)
    need_oltp = any(p[0] not in PGBENCH for p in points)
    try:
        for e in engines:
            cl = clusters[e.name]
            B.set_durability(cl, "relaxed")
            cl.create_db(DB)
            if need_pgb:
                B.log("pgbench -i -s %d (%s)" % (a.scale, e.name))
                r = subprocess.run([os.path.join(B.PG_BIN, "pgbench"), "-i", "-q", "-s", str(a.scale), DB],
                                   env=cl.env(e.init_options()), capture_output=True, text=True)
                if r.returncode != 0:
                    raise RuntimeError(r.stderr)
            if need_oltp:
                path = os.path.join(cl.dir, "load.sql")
                with open(path, "w") as f:
                    f.write(oltp_idx.load_sql(a.oltp_rows, e.index_am))
                B.log("loading items (%s)" % e.name)
                cl.psql_file(path, db=DB, pgoptions=e.init_options())
                for wl, body in oltp_idx.SCRIPTS.items():
                    p = os.path.join(cl.dir, wl + ".sql")
                    with open(p, "w") as f:
                        f.write(body)
                    scripts[(e.name, wl)] = p
            cl.settle(DB)
        for (wl, dur, clients, proto) in points:
            for cl in clusters.values():
                B.set_durability(cl, dur)
            txns = max(200, a.txns * 4 // max(clients, 1) // (10 if dur == "strict" else 1))
            res = {e.name: [] for e in engines}
            for rep in range(1, a.repeats + 1):
                for e in B.rep_order(engines, rep):
                    cl = clusters[e.name]
                    r = run_point(cl, e, wl, dur, clients, proto, txns, a.oltp_rows, scripts)
                    res[e.name].append(r)
                    B.log("%s %s c=%d %s %s rep %d: tps %.0f, cpu %.0f us/txn, %.2f vcs/txn (load %s)" % (
                        wl, dur, clients, proto, e.name, rep, r["tps"], r["cpu_us"], r["vcs"],
                        open("/proc/loadavg").read().split()[0]))
                    rows_out.append(dict(r, workload=wl, durability=dur, clients=clients, protocol=proto,
                                         engine=e.name, rep=rep))
            base = res.get("heap")
            line = "%-16s %-7s c=%-2d %-8s" % (wl, dur, clients, proto)
            for e in engines:
                tps = statistics.median(x["tps"] for x in res[e.name])
                cpu = statistics.median(x["cpu_us"] for x in res[e.name])
                line += " | %s tps %6.0f cpu %5.0fus" % (e.name, tps, cpu)
                if base and e.name != "heap":
                    pr = [x["tps"] / y["tps"] for x, y in zip(res[e.name], base)]
                    cr = [x["cpu_us"] / y["cpu_us"] for x, y in zip(res[e.name], base)]
                    line += " (tps %.2fx [%.2f-%.2f], cpu %.2fx)" % (statistics.median(pr), min(pr), max(pr),
                                                                     statistics.median(cr))
            print(line, flush=True)
    finally:
        B.destroy_clusters(clusters)
        if rows_out:
            with open(a.csv, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows_out[0]))
                w.writeheader()
                w.writerows(rows_out)


if __name__ == "__main__":
    main()
