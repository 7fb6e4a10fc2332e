#!/usr/bin/python3
"""pgbench_std.py -- pgbench's built-in workloads, tides against heap.

tpcb-like, simple-update (-N) and select-only (-S), at a scale that fits in
shared_buffers and one that does not, at matched durability, 1/4/16 clients
where it matters.  One throwaway cluster holds one database per engine and
scale; every point runs each engine REPEATS times, alternating which engine
goes first.  Also loads the fit scale into tides with compression none and
zstd (lz4 is the default) to compare sizes after load.

    bench/pg/pgbench_std.py [--profile full|quick]

Environment: BENCH_DURATION (s per run), BENCH_REPEATS, BENCH_FIT_SCALE,
BENCH_NOFIT_SCALE, BENCH_SHARED_BUFFERS, BENCH_ENGINES (heap,tides,...),
BENCH_POINTS (workload:scale:durability:clients[:protocol],... overrides the
list; protocol simple (default) or prepared),
BENCH_DIR, BENCH_KEEP, BENCH_RESULTS.  Output: bench/results/<prefix>pgbench.csv
"""
import argparse
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402

WORKLOAD_ARGS = {"tpcb-like": [], "simple-update": ["-N"], "select-only": ["-S"]}
DB = "bench"
TABLES = ["pgbench_accounts", "pgbench_branches", "pgbench_tellers", "pgbench_history"]

PROFILES = {
    "full": {
        "duration": 5, "repeats": 3, "fit": 10, "nofit": 100, "shared_buffers": "256MB",
        "compression_loads": True,
        "points": [
            ("tpcb-like", "fit", "relaxed", 1),
            ("tpcb-like", "fit", "relaxed", 4),
            ("tpcb-like", "fit", "relaxed", 16),
            ("tpcb-like", "fit", "strict", 4),
            ("tpcb-like", "fit", "strict", 16),
            ("simple-update", "fit", "relaxed", 1),
            ("simple-update", "fit", "relaxed", 4),
            ("simple-update", "fit", "relaxed", 16),
            ("select-only", "fit", "relaxed", 1),
            ("select-only", "fit", "relaxed", 4),
            ("select-only", "fit", "relaxed", 16),
            ("tpcb-like", "nofit", "relaxed", 4),
            ("simple-update", "nofit", "relaxed", 4),
            ("select-only", "nofit", "relaxed", 4),
            # the prepared protocol: parse and plan no longer hide the engine's cost
            ("tpcb-like", "fit", "relaxed", 4, "prepared"),
            ("tpcb-like", "fit", "relaxed", 16, "prepared"),
            ("tpcb-like", "fit", "strict", 16, "prepared"),
            ("select-only", "fit", "relaxed", 4, "prepared"),
        ],
    },
    "quick": {
        "duration": 3, "repeats": 3, "fit": 2, "nofit": 10, "shared_buffers": "128MB",
        "compression_loads": True,
        "points": [
            ("tpcb-like", "fit", "relaxed", 4),
            ("tpcb-like", "fit", "strict", 4),
            ("select-only", "fit", "relaxed", 4),
            ("tpcb-like", "nofit", "relaxed", 4),
        ],
    },
}


def consistency(cluster, db):
    r = cluster.psql("SELECT (SELECT coalesce(sum(abalance), 0) FROM pgbench_accounts), "
                     "(SELECT coalesce(sum(delta), 0) FROM pgbench_history)", db=db)
    a, h = r.split("|")
    return "ok" if a == h else "MISMATCH accounts=%s history=%s" % (a, h)


def plans(cluster, db):
    """the plans of tpcb-like's UPDATE of branches and tellers: tides reports
    live-row page counts to the planner, so once ANALYZE has run these can
    turn into sequential scans, which read every stored version"""
    out = []
    for t, k in (("pgbench_branches", "bid"), ("pgbench_tellers", "tid")):
        txt = cluster.psql("EXPLAIN (COSTS OFF) UPDATE %s SET %sbalance = 0 WHERE %s = 1" % (t, t[8], k), db=db)
        scan = [l.strip().lstrip("->").strip() for l in txt.splitlines() if "Scan" in l]
        out.append("%s: %s" % (t[8:], scan[0] if scan else "?"))
    return "; ".join(out)


def pgbench_init(cluster, db, scale, engine):
    cluster.create_db(db)
    t0 = time.time()
    r = subprocess.run([os.path.join(B.PG_BIN, "pgbench"), "-i", "-q", "-s", str(scale), db],
                       env=cluster.env(engine.init_options()), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("pgbench -i failed for %s: %s" % (db, r.stderr[-2000:]))
    return time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", default=os.environ.get("BENCH_PROFILE", "full"), choices=PROFILES)
    a = ap.parse_args()
    P = PROFILES[a.profile]
    prefix = "pg_" if a.profile == "full" else "pg_quick_"
    duration = B.env_int("BENCH_DURATION", P["duration"])
    repeats = max(1, B.env_int("BENCH_REPEATS", P["repeats"]))
    scales = {"fit": B.env_int("BENCH_FIT_SCALE", P["fit"]), "nofit": B.env_int("BENCH_NOFIT_SCALE", P["nofit"])}
    sb = os.environ.get("BENCH_SHARED_BUFFERS", P["shared_buffers"])
    points = [p if len(p) > 4 else p + ("simple",) for p in P["points"]]
    if os.environ.get("BENCH_POINTS"):
        points = []
        for p in B.env_list("BENCH_POINTS", []):
            f = p.split(":")
            points.append((f[0], f[1], f[2], int(f[3]), f[4] if len(f) > 4 else "simple"))

    out = B.CsvOut(os.path.join(B.RESULTS, prefix + "pgbench.csv"), B.COMMON_FIELDS)
    conf = {"shared_buffers": sb, "tides.block_cache_size": sb}
    t_start = time.time()
    meta = {"duration_s": duration, "repeats": repeats, "scales": scales, "shared_buffers": sb,
            "tides.block_cache_size": sb, "conf": dict(B.BASE_CONF, **conf)}
    clusters = {}
    try:
        for scale_name in ("fit", "nofit"):
            pts = [p for p in points if p[1] == scale_name]
            comp_loads = scale_name == "fit" and P["compression_loads"]
            if not pts and not comp_loads:
                continue
            scale = scales[scale_name]
            # tides_btree would only change pgbench's primary keys: it is
            # compared in oltp_idx.py, where indexes matter (BENCH_ENGINES
            # brings it back here)
            engines, clusters, note = B.start_clusters("pgbench-s%d" % scale, conf,
                                                       ("heap", "tides", "tides_ownlog"))
            # pgbench -i creates its primary keys itself: tides_btree can only
            # be used for them through the tides.index_method setting
            for e in [e for e in engines if e.index_method and not e.has_guc]:
                engines.remove(e)
                clusters.pop(e.name).destroy()
                note += "; pgbench skips tides_btree (no tides.index_method to give pgbench -i's keys to it)"
            if note:
                B.log(note)
            meta["engines"] = [e.name for e in engines]
            meta["note"] = note
            meta.setdefault("machine", B.machine_info(clusters[engines[0].name].dir))
            for e in engines:
                cl = clusters[e.name]
                B.set_durability(cl, "relaxed")
                B.log("pgbench -i -s %d (%s)" % (scale, e.name))
                secs = pgbench_init(cl, DB, scale, e)
                cl.settle(DB)
                size = cl.size_of(DB, TABLES)
                out.row({"suite": "pgbench", "workload": "load", "scale": scale, "durability": "relaxed",
                         "engine": e.name, "index_am": e.index_am, "rep": 1, "elapsed_s": round(secs, 2), "size_after": size,
                         "note": "pgbench -i -s %d (compression lz4)" % scale if e.is_tides else
                         "pgbench -i -s %d" % scale})
            if comp_loads and "tides" in clusters:
                tides = [e for e in engines if e.name == "tides"][0]
                for comp in ("none", "zstd"):
                    cl = B.Cluster("pgbench-s%d-%s" % (scale, comp), dict(conf, **{"tides.compression": comp}))
                    try:
                        cl.initdb().start()
                        B.log("pgbench -i -s %d (tides, compression %s)" % (scale, comp))
                        secs = pgbench_init(cl, DB, scale, tides)
                        cl.settle(DB)
                        size = cl.size_of(DB, TABLES)
                    finally:
                        cl.destroy()
                    out.row({"suite": "pgbench", "workload": "load", "scale": scale, "durability": "relaxed",
                             "engine": "tides_%s" % comp, "index_am": "btree", "rep": 1, "elapsed_s": round(secs, 2),
                             "size_after": size, "note": "pgbench -i -s %d (compression %s)" % (scale, comp)})
            for (wl, _, dur, clients, proto) in pts:
                for cl in clusters.values():
                    B.set_durability(cl, dur)
                for rep in range(1, repeats + 1):
                    for e in B.rep_order(B.point_engines(engines, clients, wl), rep):
                        cl = clusters[e.name]
                        B.log("%s s=%d %s c=%d %s %s rep %d" % (wl, scale, dur, clients, proto, e.name, rep))
                        res = B.measured(cl, DB, lambda: B.run_pgbench(
                            cl, DB, WORKLOAD_ARGS[wl] + B.protocol_args(proto),
                            B.point_duration(duration, clients), clients,
                            pgoptions=e.durability_options(dur), label=wl), tables=TABLES,
                            settle=wl != "select-only")
                        res.update({"suite": "pgbench", "workload": wl, "scale": scale, "durability": dur,
                                    "clients": clients, "protocol": proto, "engine": e.name,
                                    "index_am": e.index_am, "rep": rep,
                                    "duration_s": B.point_duration(duration, clients)})
                        if rep == repeats and wl != "select-only":
                            res["check"] = consistency(cl, DB)
                        if wl != "select-only":
                            res["plan"] = plans(cl, DB)
                        out.row(res)
                        B.log("  tps %.0f p99 %.2f ms, %.0f B/txn%s%s" % (
                            res["tps"], res["p99_ms"], res["bytes_per_txn"], B.flush_note(res),
                            ", check " + res["check"] if res.get("check") else ""))
            B.destroy_clusters(clusters)
            clusters = {}
        meta["elapsed_s"] = round(time.time() - t_start, 1)
        meta["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
        B.write_meta(prefix, "pgbench", meta)
    except BaseException:
        for name, cl in clusters.items():
            sys.stderr.write("server log tail (%s):\n%s\n" % (name, cl.tail_log()))
        raise
    finally:
        out.close()
        B.destroy_clusters(clusters)
    B.log("pgbench_std done in %.0f s -> %s" % (time.time() - t_start, out.path))


if __name__ == "__main__":
    main()
