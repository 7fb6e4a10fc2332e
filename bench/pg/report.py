#!/usr/bin/python3
"""report.py -- summary table and charts from the CSVs of one run.

    bench/pg/report.py [--prefix pg_|pg_quick_]

Reads bench/results/<prefix>{pgbench,oltp,copy}.csv (whichever exist) and
their .meta.json, and writes

    <prefix>summary.md        machine, method, targets of issue 6, every point
    <prefix>tps_ratio.png     tides/heap throughput per point (median, min-max of paired runs)
    <prefix>latency.png       p50/p95/p99 per point and engine
    <prefix>bytes.png         device bytes written per transaction (or per COPY row)
    <prefix>size.png          size on disk after load: heap, tides none/lz4/zstd
"""
import argparse
import csv
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.environ.get("BENCH_RESULTS",
                         os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "results"))
RESULTS = os.path.abspath(RESULTS)
SUITES = ("pgbench", "oltp", "copy")


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def load(prefix):
    rows, meta = [], {}
    for s in SUITES:
        p = os.path.join(RESULTS, "%s%s.csv" % (prefix, s))
        if os.path.exists(p):
            with open(p) as f:
                rows.extend(csv.DictReader(f))
        m = os.path.join(RESULTS, "%s%s.meta.json" % (prefix, s))
        if os.path.exists(m):
            with open(m) as f:
                meta[s] = json.load(f)
    return rows, meta


def point_key(r):
    return (r["suite"], r["workload"], r["scale"], r["durability"], r["clients"],
            r.get("protocol") or "simple")


def label(k):
    suite, wl, scale, dur, clients, proto = k
    if suite == "copy":
        return "COPY %s rows" % fmt_int(scale)
    s = wl
    if suite == "pgbench":
        s += " s=%s" % scale
    if wl not in ("select-only", "point-lookup", "range-100"):
        s += " " + dur
    return s + " c=%s" % clients + (" prepared" if proto == "prepared" else "")


def fmt_int(v):
    v = num(v)
    if v is None:
        return ""
    for unit, div in (("M", 1e6), ("k", 1e3)):
        if v >= div and v % div == 0:
            return "%d%s" % (v / div, unit)
    return "%d" % v


def fmt(v, digits=3):
    if v is None:
        return "-"
    if abs(v) >= 1000:
        return "%.0f" % v
    return ("%." + str(digits) + "g") % v


def fmt_bytes(v):
    if v is None:
        return "-"
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(v) >= div:
            return "%.1f %s" % (v / div, unit)
    return "%.0f B" % v


class Point:
    def __init__(self, key):
        self.key = key
        self.by_engine = {}

    def add(self, r):
        self.by_engine.setdefault(r["engine"], []).append(r)

    def engines(self):
        return list(self.by_engine)

    def vals(self, engine, field):
        return [num(r.get(field)) for r in sorted(self.by_engine.get(engine, []), key=lambda r: int(r["rep"]))]

    def stat(self, engine, field):
        v = [x for x in self.vals(engine, field) if x is not None]
        if not v:
            return None, None, None
        return statistics.median(v), min(v), max(v)

    def ratio(self, engine, base, field):
        """median ratio of medians, and min-max of the ratios of paired reps"""
        a, b = self.stat(engine, field)[0], self.stat(base, field)[0]
        if a is None or b is None or b == 0:
            return None, None, None
        va, vb = self.vals(engine, field), self.vals(base, field)
        pairs = [x / y for x, y in zip(va, vb) if x is not None and y]
        return a / b, (min(pairs) if pairs else None), (max(pairs) if pairs else None)


def collect(rows):
    points, loads, checks = {}, [], []
    for r in rows:
        if r["workload"] == "load":
            loads.append(r)
        elif r["workload"] == "check":
            checks.append(r)
        else:
            k = point_key(r)
            points.setdefault(k, Point(k)).add(r)
            if r.get("check"):
                checks.append(r)
    return points, loads, checks


def spread_str(m, lo, hi):
    if m is None:
        return "-"
    if lo is None or hi is None or m == 0:
        return fmt(m)
    return "%s (±%.0f%%)" % (fmt(m), 100.0 * (hi - lo) / 2 / m)


def ratio_str(r):
    m, lo, hi = r
    if m is None:
        return "-"
    if lo is None:
        return "%.2fx" % m
    return "**%.2fx** (%.2f–%.2f)" % (m, lo, hi)


def find(points, suite, wl, dur=None, clients=None, scale=None, protocol="simple"):
    for k, p in points.items():
        if k[0] == suite and k[1] == wl and (dur is None or k[3] == dur) and \
                (clients is None or k[4] == str(clients)) and (scale is None or k[2] == str(scale)) and \
                k[5] == protocol:
            return p
    return None


def targets(points, loads, meta):
    out = []
    fit = None
    if "pgbench" in meta:
        fit = meta["pgbench"].get("scales", {}).get("fit")

    def tps_target(name, goal, p, base="heap", eng="tides"):
        if p is None:
            out.append((name, ">= %.1fx" % goal, "not measured in this run", ""))
            return
        r = p.ratio(eng, base, "tps")
        ok = "yes" if r[0] is not None and r[0] >= goal else "no"
        out.append((name + " — " + label(p.key), ">= %.1fx" % goal, ratio_str(r), ok))

    for dur in ("relaxed", "strict"):
        tps_target("tpcb-like, 4 clients", 1.5, find(points, "pgbench", "tpcb-like", dur, 4, fit))
    # the index workloads are judged for tides tables with PostgreSQL's btree
    # indexes and, when the build has it, with tides_btree indexes
    idx_engines = ["tides"] + (["tides_btree"] if any("tides_btree" in p.engines() for p in points.values())
                               else [])
    for eng in idx_engines:
        tag = "" if eng == "tides" else " [tides_btree indexes]"
        for dur in ("relaxed", "strict"):
            tps_target("inserts, PK + 3 secondary indexes" + tag, 3.0,
                       find(points, "oltp", "insert-3idx", dur, 4), eng=eng)
        for dur in ("relaxed", "strict"):
            tps_target("updates of an indexed column" + tag, 3.0,
                       find(points, "oltp", "update-indexed", dur, 4), eng=eng)
        tps_target("point lookups" + tag, 0.8, find(points, "oltp", "point-lookup", None, 4), eng=eng)
        tps_target("100-row range scans" + tag, 0.5, find(points, "oltp", "range-100", None, 4), eng=eng)
    cp = find(points, "copy", "copy")
    tps_target("COPY vs UNLOGGED heap (rows/s)", 1.0, cp, base="heap_unlogged")
    # issue 12: the bulk path at matched durability, UNLOGGED against UNLOGGED
    if cp is not None and "tides_unlogged" in cp.by_engine:
        tps_target("COPY, UNLOGGED tides vs UNLOGGED heap (rows/s)", 1.5, cp, base="heap_unlogged",
                   eng="tides_unlogged")
    # what any access method could reach: PostgreSQL's parsing alone
    if cp is not None and "parse_only" in cp.by_engine:
        tps_target("COPY ceiling: parsing alone (COPY ... WHERE false) vs UNLOGGED heap", 1.5, cp,
                   base="heap_unlogged", eng="parse_only")
    # sizes
    for name, suite, scale_note, eng in (("COPY table", "copy", None, "tides"),
                                         ("pgbench tables", "pgbench", fit, "tides"),
                                         ("items + 4 indexes", "oltp", None, "tides"),
                                         ("items + 4 indexes [tides_btree indexes]", "oltp", None, "tides_btree")):
        if suite == "copy" and cp is not None:
            h = cp.stat("heap", "size_after")[0]
            t = cp.stat(eng, "size_after")[0]
        else:
            h = t = None
            for r in loads:
                if r["suite"] != suite or (scale_note and r["scale"] != str(scale_note)):
                    continue
                if r["engine"] == "heap":
                    h = num(r["size_after"])
                elif r["engine"] == eng:
                    t = num(r["size_after"])
        if h and t:
            ratio = t / h
            out.append(("size on disk after load, lz4 — %s" % name, "<= 0.50x",
                        "**%.2fx** (%s vs %s)" % (ratio, fmt_bytes(t), fmt_bytes(h)), "yes" if ratio <= 0.5 else "no"))
    # device bytes per transaction
    for name, p in (("tpcb-like c=4 relaxed", find(points, "pgbench", "tpcb-like", "relaxed", 4, fit)),
                    ("tpcb-like c=4 strict", find(points, "pgbench", "tpcb-like", "strict", 4, fit)),
                    ("insert-3idx c=4 relaxed", find(points, "oltp", "insert-3idx", "relaxed", 4)),
                    ("update-indexed c=4 relaxed", find(points, "oltp", "update-indexed", "relaxed", 4)),
                    ("COPY (per row)", cp)):
        if p is None:
            continue
        r = p.ratio("tides", "heap", "bytes_per_txn")
        if r[0] is None:
            continue
        h = p.stat("heap", "bytes_per_txn")[0]
        t = p.stat("tides", "bytes_per_txn")[0]
        # /proc/PID/io write_bytes of the server processes, per transaction,
        # for comparison (bench/pg/README.md: it overstates fsync-heavy writers)
        pr = p.ratio("tides", "heap", "proc_write_bytes")
        pio = ""
        if pr[0] is not None:
            ht, tt = p.stat("heap", "txns")[0], p.stat("tides", "txns")[0]
            ph, pt = p.stat("heap", "proc_write_bytes")[0], p.stat("tides", "proc_write_bytes")[0]
            if ht and tt:
                pio = "; /proc/PID/io: %.2fx (%s vs %s)" % ((pt / tt) / (ph / ht), fmt_bytes(pt / tt),
                                                             fmt_bytes(ph / ht))
        out.append(("device bytes written per transaction — %s" % name, "<= 0.33x",
                    "%s (%s vs %s)%s" % (ratio_str(r), fmt_bytes(t), fmt_bytes(h), pio),
                    "yes" if r[0] <= 1 / 3 else "no"))
    return out


def machine_lines(meta):
    m = None
    for s in SUITES:
        if s in meta and "machine" in meta[s]:
            m = meta[s]["machine"]
            break
    if not m:
        return ["(machine information missing)"]
    lines = ["- **Machine**: %s CPUs (%s), %s GB RAM, Linux %s; %s" % (m["nproc"], m["cpu"], m["ram_gb"], m["kernel"],
                                                          m.get("huge_pages", "huge pages not recorded")),
             "- **Disk**: %s; every cluster's data directory sits on its own ext4 filesystem on a loop "
             "device (direct I/O) backed by a file on that disk, so device bytes are exact and private" % m["disk"],
             "- **Server**: %s; tidesam %s" % (m.get("postgres", "?"), m.get("tidesam_commit", "?")),
             "- **Started**: %s, load average then %s" % (m["date"], " ".join(m["loadavg"]))]
    seen = set()
    for s in SUITES:
        seen.update(meta.get(s, {}).get("tidesam_so_sha256_seen", []))
    lines.append("- **Extension under test**: %s" % m.get("tidesam_so", "?") + (
        "" if len(seen) <= 1 else " — WARNING: clusters of this run loaded %d different tidesam.so builds (%s)"
        % (len(seen), ", ".join(sorted(seen)))))
    ends = ["%s %s" % (s, " ".join(meta[s].get("loadavg_end", []))) for s in SUITES if s in meta]
    if ends:
        lines.append("- **Load average at the end of each suite**: %s. The machine is shared with other "
                     "sessions' builds and test runs, so absolute numbers move; tides and heap alternate "
                     "run by run and ratios of paired runs are reported." % "; ".join(ends))
    return lines


def write_summary(prefix, rows, meta, points, loads, checks, charts):
    L = []
    L.append("# tides vs heap: PostgreSQL benchmark summary (%s)" % ("full run" if prefix == "pg_" else "quick run"))
    L.append("")
    L.append("Generated by `bench/pg/report.py` from `%s{pgbench,oltp,copy}.csv` of one run "
             "(`make bench%s`). Ratios are tides / heap at matched durability: *relaxed* = heap "
             "`synchronous_commit=off` vs `tides.sync_mode=none` (+ `synchronous_commit=off`); *strict* = heap "
             "`synchronous_commit=on` vs `tides.sync_mode=full` (+ `synchronous_commit=on`)."
             % (prefix, "" if prefix == "pg_" else "-quick"))
    L.append("")
    L.extend(machine_lines(meta))
    notes = set()
    for s in SUITES:
        if s in meta and meta[s].get("note"):
            notes.add(meta[s]["note"])
    for n in sorted(notes):
        L.append("- **Note**: %s." % n)
    pm = meta.get("pgbench", {})
    om = meta.get("oltp", {})
    cm = meta.get("copy", {})
    L.append("- **Settings**: %s s per run, %s runs per point and engine (median; ± is half the min–max range "
             "as %% of the median; ratio ranges are over paired runs). pgbench scales %s with "
             "shared_buffers = tides.block_cache_size = %s; oltp table %s rows with %s; COPY of %s rows "
             "(%s). tides.memtable_size 64MB, compression lz4 unless named."
             % (pm.get("duration_s", om.get("duration_s", "?")), pm.get("repeats", om.get("repeats", "?")),
                pm.get("scales", "?"), pm.get("shared_buffers", "?"), fmt_int(om.get("rows")),
                om.get("shared_buffers", "?"), fmt_int(cm.get("rows")), fmt_bytes(cm.get("csv_bytes"))))
    L.append("- **Device bytes** are read from the cluster's loop device after a syncfs, and include the "
             "deferred writes each run leaves behind (a CHECKPOINT for heap, `tides_flush()` + "
             "`tides_compact()` for tides). Runs are short, and a checkpoint precedes each run, so heap pays "
             "full-page images on nearly every page it touches (see `wal_fpi` in the CSV): heap's bytes "
             "per transaction are higher here than in a steady state with 5-minute checkpoints.")
    L.append("- **Elapsed**: %s" % ", ".join("%s %.0f s" % (s, meta[s]["elapsed_s"]) for s in SUITES
                                             if s in meta and "elapsed_s" in meta[s]))
    L.append("")
    L.append("## Targets of issue 6")
    L.append("")
    L.append("| target | goal | measured tides/heap | met |")
    L.append("|---|---|---|---|")
    for t in targets(points, loads, meta):
        L.append("| %s | %s | %s | %s |" % t)
    L.append("")
    L.append("## Every point")
    L.append("")
    engines = []
    for p in points.values():
        for e in p.engines():
            if e not in engines:
                engines.append(e)
    others = [e for e in engines if e in ("tides", "tides_btree")]
    hdr = "| point | heap tps | " + " | ".join("%s tps | %s/heap" % (e, e) for e in others) + \
          " | p50/p95/p99 ms heap | " + " | ".join("p50/p95/p99 ms %s" % e for e in others) + \
          " | bytes/txn heap | " + " | ".join("bytes/txn %s (ratio)" % e for e in others) + \
          " | " + " | ".join("engine writes/txn %s" % e for e in others) + \
          " | peak PSS MB heap | " + " | ".join("peak PSS MB %s" % e for e in others) + " |"
    L.append(hdr)
    L.append("|" + "---|" * (hdr.count("|") - 1))
    order = {"pgbench": 0, "oltp": 1, "copy": 2}
    for k in sorted(points, key=lambda k: (order.get(k[0], 9), k[1], num(k[2]) or 0, k[3], k[5], num(k[4]) or 0)):
        if k[0] == "copy":
            continue
        p = points[k]
        cells = [label(k), spread_str(*p.stat("heap", "tps"))]
        for e in others:
            if e in p.by_engine:
                cells.append(spread_str(*p.stat(e, "tps")))
                cells.append(ratio_str(p.ratio(e, "heap", "tps")))
            else:
                cells += ["-", "-"]

        def lat(e):
            if e not in p.by_engine:
                return "-"
            return "/".join(fmt(p.stat(e, f)[0]) for f in ("p50_ms", "p95_ms", "p99_ms"))
        cells.append(lat("heap"))
        cells += [lat(e) for e in others]
        cells.append(fmt_bytes(p.stat("heap", "bytes_per_txn")[0]))
        for e in others:
            r = p.ratio(e, "heap", "bytes_per_txn")[0]
            cells.append("%s (%s)" % (fmt_bytes(p.stat(e, "bytes_per_txn")[0]), "%.2fx" % r if r else "-"))
        for e in others:
            w = p.stat(e, "writes_per_txn")[0]
            cells.append(fmt(w) if w is not None else "-")
        cells.append(fmt(p.stat("heap", "peak_pss_mb")[0]))
        cells += [fmt(p.stat(e, "peak_pss_mb")[0]) for e in others]
        L.append("| " + " | ".join(cells) + " |")
    L.append("")
    cp = find(points, "copy", "copy")
    if cp is not None:
        L.append("COPY of %s rows into an empty table without indexes, every load in a fresh cluster:" %
                 fmt_int(cp.key[2]))
        L.append("")
        L.append("| variant | rows/s | vs heap | vs UNLOGGED heap | COPY s | bytes written/row | size after load "
                 "| peak PSS MB |")
        L.append("|---|---|---|---|---|---|---|---|")
        for e in ("heap", "heap_unlogged", "tides", "tides_unlogged", "tides_none", "tides_zstd", "tides_btree",
                  "parse_only"):
            if e not in cp.by_engine:
                continue
            L.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                {"tides": "tides (lz4)"}.get(e, e), spread_str(*cp.stat(e, "tps")),
                ratio_str(cp.ratio(e, "heap", "tps")) if e != "heap" else "1",
                ratio_str(cp.ratio(e, "heap_unlogged", "tps")) if e != "heap_unlogged" else "1",
                fmt(cp.stat(e, "lat_avg_ms")[0] / 1000.0), fmt_bytes(cp.stat(e, "bytes_per_txn")[0]),
                fmt_bytes(cp.stat(e, "size_after")[0]), fmt(cp.stat(e, "peak_pss_mb")[0])))
        L.append("")
    L.append("Latency is per transaction, from pgbench's per-transaction logs. Peak PSS is the largest sum over the server's processes "
             "of proportional set size sampled every 0.5 s (shared memory counted once; RSS in the CSV counts "
             "it once per process).")
    L.append("")
    L.append("## Size on disk")
    L.append("")
    L.append("After load (heap checkpointed; tides memtable flushed and due compactions run). Heap: relation "
             "files of the tables, indexes and TOAST; tides: the cluster's SSTables plus the nbtree index "
             "files (tides_btree: its entries are in the SSTables too). Neither counts WAL or the tides log.")
    L.append("")
    L.append("| data | heap | heap unlogged | tides none | tides lz4 | tides zstd | lz4/heap | tides_btree lz4 | /heap |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    bysuite = {}
    for r in loads:
        bysuite.setdefault((r["suite"], r["scale"]), {})[r["engine"]] = num(r["size_after"])
    cp = find(points, "copy", "copy")
    if cp is not None:
        bysuite[("copy", cp.key[2])] = {e: cp.stat(e, "size_after")[0] for e in cp.engines()}
    for (suite, scale), d in sorted(bysuite.items()):
        name = {"pgbench": "pgbench -s %s tables" % scale, "oltp": "items, %s rows, PK + 3 indexes" % fmt_int(scale),
                "copy": "COPY table, %s rows, no index" % fmt_int(scale)}[suite]
        h, t, tb = d.get("heap"), d.get("tides"), d.get("tides_btree")
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, fmt_bytes(h), fmt_bytes(d.get("heap_unlogged")), fmt_bytes(d.get("tides_none")),
            fmt_bytes(t), fmt_bytes(d.get("tides_zstd")), ("%.2fx" % (t / h)) if h and t else "-",
            fmt_bytes(tb), ("%.2fx" % (tb / h)) if h and tb else "-"))
    L.append("")
    after = []
    for k, p in points.items():
        if k[0] in ("pgbench", "oltp") and k[1] not in ("select-only", "point-lookup", "range-100"):
            after.append(p)
    if after:
        L.append("Size after each write point (median over its runs; tables keep growing across points):")
        L.append("")
        L.append("| point | heap before → after | tides before → after |")
        L.append("|---|---|---|")
        for p in sorted(after, key=lambda p: p.key):
            L.append("| %s | %s → %s | %s → %s |" % (
                label(p.key), fmt_bytes(p.stat("heap", "size_before")[0]), fmt_bytes(p.stat("heap", "size_after")[0]),
                fmt_bytes(p.stat("tides", "size_before")[0]), fmt_bytes(p.stat("tides", "size_after")[0])))
        L.append("")
    L.append("## Correctness checks")
    L.append("")
    bad = [c for c in checks if c.get("check") and c["check"] != "ok"]
    L.append("%d checks (pgbench: sum(abalance) = sum(delta) after each write point; oltp: index scan and "
             "sequential scan agree; COPY: row count), %d failed%s" % (
                 len(checks), len(bad), "" if not bad else ": " + "; ".join(
                     "%s %s %s: %s" % (c["suite"], c["workload"], c["engine"], c["check"]) for c in bad)))
    failed = sum(int(num(r.get("failed")) or 0) for r in rows)
    L.append("")
    L.append("Failed transactions reported by pgbench over all runs: %d." % failed)
    L.append("")
    L.append("## Charts")
    L.append("")
    for c in charts:
        L.append("![%s](%s)" % (c, c))
    L.append("")
    path = os.path.join(RESULTS, prefix + "summary.md")
    with open(path, "w") as f:
        f.write("\n".join(L))
    return path


def charts(prefix, points, loads):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no charts", file=sys.stderr)
        return []
    made = []
    order = {"pgbench": 0, "oltp": 1, "copy": 2}
    keys = sorted(points, key=lambda k: (order.get(k[0], 9), k[1], num(k[2]) or 0, k[3], k[5], num(k[4]) or 0))
    others = []
    for k in keys:
        for e in points[k].engines():
            if e not in ("heap", "heap_unlogged") and e not in others:
                others.append(e)

    # 1. throughput ratio
    fig, ax = plt.subplots(figsize=(10, 0.42 * len(keys) * max(1, len(others)) + 1.5))
    y, labels, yt = 0, [], []
    colors = {"tides": "tab:blue", "tides_btree": "tab:green", "tides_none": "tab:gray", "tides_zstd": "tab:purple"}
    for k in reversed(keys):
        p = points[k]
        for e in others:
            if e not in p.by_engine:
                continue
            base = "heap_unlogged" if k[0] == "copy" else "heap"
            m, lo, hi = p.ratio(e, base, "tps")
            if m is None:
                continue
            ax.barh(y, m, color=colors.get(e, "tab:orange"),
                    xerr=[[max(0.0, m - lo)], [max(0.0, hi - m)]] if lo is not None else None, capsize=3)
            ax.text(m, y, " %.2f" % m, va="center", fontsize=8)
            yt.append(y)
            labels.append(label(k) + ("" if e == "tides" else " [%s]" % e) + (" vs unlogged" if k[0] == "copy" else ""))
            y += 1
    ax.axvline(1.0, color="black", lw=0.8)
    ax.set_yticks(yt)
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xlabel("throughput tides / heap (median; bars: min–max of paired runs)")
    ax.set_title("tides vs heap throughput")
    fig.tight_layout()
    fn = prefix + "tps_ratio.png"
    fig.savefig(os.path.join(RESULTS, fn), dpi=110)
    plt.close(fig)
    made.append(fn)

    # 2. latency
    lk = [k for k in keys if k[0] != "copy"]
    if lk:
        fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(lk)), 5))
        engs = ["heap"] + [e for e in others if e in ("tides", "tides_btree")]
        w = 0.8 / len(engs)
        for i, e in enumerate(engs):
            xs, p50, p95, p99 = [], [], [], []
            for j, k in enumerate(lk):
                p = points[k]
                if e not in p.by_engine:
                    continue
                xs.append(j + i * w)
                p50.append(p.stat(e, "p50_ms")[0])
                p95.append(p.stat(e, "p95_ms")[0])
                p99.append(p.stat(e, "p99_ms")[0])
            c = "tab:red" if e == "heap" else colors.get(e, "tab:orange")
            ax.bar(xs, p99, w, color=c, alpha=0.35, label="%s p99" % e)
            ax.bar(xs, p95, w, color=c, alpha=0.6, label="%s p95" % e)
            ax.bar(xs, p50, w, color=c, alpha=1.0, label="%s p50" % e)
        ax.set_yscale("log")
        ax.set_xticks([j + 0.4 - w / 2 for j in range(len(lk))])
        ax.set_xticklabels([label(k) for k in lk], rotation=35, ha="right", fontsize=8)
        ax.set_ylabel("latency, ms (log)")
        ax.set_title("latency percentiles per transaction")
        ax.legend(fontsize=7, ncol=len(engs))
        fig.tight_layout()
        fn = prefix + "latency.png"
        fig.savefig(os.path.join(RESULTS, fn), dpi=110)
        plt.close(fig)
        made.append(fn)

    # 3. bytes per txn
    bk = [k for k in keys if k[1] not in ("select-only", "point-lookup", "range-100")]
    if bk:
        fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(bk)), 5))
        engs = ["heap"] + (["heap_unlogged"] if any("heap_unlogged" in points[k].by_engine for k in bk) else []) + others
        w = 0.8 / len(engs)
        for i, e in enumerate(engs):
            xs, ys = [], []
            for j, k in enumerate(bk):
                v = points[k].stat(e, "bytes_per_txn")[0]
                if v is not None:
                    xs.append(j + i * w)
                    ys.append(v)
            ax.bar(xs, ys, w, label=e, color={"heap": "tab:red", "heap_unlogged": "tab:pink"}.get(
                e, colors.get(e, "tab:orange")))
        ax.set_yscale("log")
        ax.set_xticks([j + 0.4 - w / 2 for j in range(len(bk))])
        ax.set_xticklabels([label(k) for k in bk], rotation=35, ha="right", fontsize=8)
        ax.set_ylabel("bytes written to the device per transaction (COPY: per row)")
        ax.set_title("device write cost, including deferred checkpoint / flush / compaction")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fn = prefix + "bytes.png"
        fig.savefig(os.path.join(RESULTS, fn), dpi=110)
        plt.close(fig)
        made.append(fn)

    # 4. size after load
    groups = {}
    for r in loads:
        groups.setdefault("%s %s" % (r["suite"], fmt_int(r["scale"])), {})[r["engine"]] = num(r["size_after"])
    cp = find(points, "copy", "copy")
    if cp is not None:
        groups["copy %s" % fmt_int(cp.key[2])] = {e: cp.stat(e, "size_after")[0] for e in cp.engines()}
    if groups:
        engs = ["heap", "heap_unlogged", "tides_none", "tides", "tides_zstd", "tides_btree"]
        engs = [e for e in engs if any(e in g for g in groups.values())]
        fig, ax = plt.subplots(figsize=(max(7, 1.8 * len(groups)), 4.5))
        w = 0.8 / len(engs)
        names = sorted(groups)
        for i, e in enumerate(engs):
            xs, ys, labs = [], [], []
            for j, n in enumerate(names):
                h = groups[n].get("heap")
                v = groups[n].get(e)
                if v and h:
                    xs.append(j + i * w)
                    ys.append(v / h)
                    labs.append("%.0f" % (v / 1e6) if v >= 1e7 else "%.1f" % (v / 1e6))
            lab = {"tides": "tides lz4", "tides_none": "tides none", "tides_zstd": "tides zstd"}.get(e, e)
            bars = ax.bar(xs, ys, w, label=lab, color={"heap": "tab:red", "heap_unlogged": "tab:pink"}.get(
                e, colors.get(e, "tab:orange")))
            for b_, t_ in zip(bars, labs):
                ax.text(b_.get_x() + b_.get_width() / 2, b_.get_height(), t_, ha="center", va="bottom", fontsize=6)
        ax.axhline(0.5, color="black", lw=0.6, ls="--")
        ax.set_xticks([j + 0.4 - w / 2 for j in range(len(names))])
        ax.set_xticklabels(names, fontsize=8)
        ax.set_ylabel("size after load / heap (labels: MB)")
        ax.set_title("size on disk after load (dashed: the 0.5x target)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fn = prefix + "size.png"
        fig.savefig(os.path.join(RESULTS, fn), dpi=110)
        plt.close(fig)
        made.append(fn)
    return made


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prefix", default="pg_")
    a = ap.parse_args()
    rows, meta = load(a.prefix)
    if not rows:
        print("no %s*.csv in %s" % (a.prefix, RESULTS), file=sys.stderr)
        return 1
    points, loads, checks = collect(rows)
    made = charts(a.prefix, points, loads)
    path = write_summary(a.prefix, rows, meta, points, loads, checks, made)
    print(path)
    with open(path) as f:
        txt = f.read()
    # print the targets table to the terminal
    s = txt.find("## Targets")
    e = txt.find("## Every point")
    if s >= 0:
        print(txt[s:e].strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
