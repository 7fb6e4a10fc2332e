#!/usr/bin/python3
"""report.py -- summary and charts of one Insert Benchmark run.

    bench/ibench/report.py [--prefix ibench_|ibench_quick_]

Reads bench/results/<prefix>steps.csv, <prefix>timeseries.csv and
<prefix>meta.json (written by ibench.py) and writes

    <prefix>summary.md          machine, settings, per profile the step table
                                with tides/heap and tides_btree/heap ratios,
                                the targets of issue 12, stalls, load
    <prefix><profile>_rate.png  operations per second over time, every step
                                with a time axis, one line per engine
    <prefix><profile>_io.png    device reads per second and MB written per
                                second over time in l.i1 and l.i2
    <prefix><profile>_cost.png  reads/op, KB written/op and size per step
"""
import argparse
import csv
import json
import os
import sys

RESULTS = os.path.abspath(os.environ.get("BENCH_RESULTS",
                                         os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "results")))
ENGINES = ["heap", "tides", "tides_btree"]
COLORS = {"heap": "#1f77b4", "tides": "#ff7f0e", "tides_btree": "#2ca02c"}
STEPS = ["l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100"]
TIMED = ["l.i0", "l.i1", "l.i2", "qr100", "qp100"]


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def load(prefix):
    def rd(name):
        p = os.path.join(RESULTS, prefix + name)
        if not os.path.exists(p):
            return []
        with open(p) as f:
            return list(csv.DictReader(f))
    meta = {}
    mp = os.path.join(RESULTS, prefix + "meta.json")
    if os.path.exists(mp):
        with open(mp) as f:
            meta = json.load(f)
    return rd("steps.csv"), rd("timeseries.csv"), meta


def fmt(v, d=3):
    v = num(v)
    if v is None:
        return "-"
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return "%.0f" % v
    if abs(v) >= 100:
        return "%.1f" % v
    return ("%%.%dg" % d) % v


def fmt_mb(v):
    v = num(v)
    return "-" if v is None else "%.0f MB" % (v / 1048576)


def ratio(a, b):
    a, b = num(a), num(b)
    if a is None or b is None or b == 0:
        return None
    return a / b


def rstr(r):
    return "-" if r is None else "%.2fx" % r


def index(rows):
    by = {}
    for r in rows:
        by[(r["profile"], r["engine"], r["step"])] = r
    return by


# --------------------------------------------------------------------------
# tables

COST_COLS = [("ops_per_s", "rate", True), ("p99_ms", "p99 ms", False), ("kb_written_per_op", "KB written/op", False),
             ("reads_per_op", "reads/op", False), ("size_bytes", "size", False)]


def step_table(by, profile, engines):
    base = "heap"
    others = [e for e in engines if e != base]
    out = []
    head = ["step", "unit"]
    for e in engines:
        head.append("%s rate" % e)
    for e in others:
        head.append("%s/heap" % e)
    head += ["p99 ms (%s)" % " / ".join(engines), "KB written/op (%s)" % " / ".join(engines),
             "reads/op (%s)" % " / ".join(engines), "size after (%s)" % " / ".join(engines)]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for s in STEPS:
        rs = {e: by.get((profile, e, s)) for e in engines}
        b = by.get((profile, base, s))  # None when heap was not in the run
        if not any(rs.values()):
            continue
        unit = next((r["ops_unit"] for r in rs.values() if r), "")
        cells = [s, unit + "/s"]
        for e in engines:
            cells.append(fmt(rs[e]["ops_per_s"]) if rs[e] else "-")
        for e in others:
            cells.append("**%s**" % rstr(ratio(rs[e]["ops_per_s"], b["ops_per_s"])) if rs[e] and b else "-")
        for f in ("p99_ms", "kb_written_per_op", "reads_per_op"):
            cells.append(" / ".join(fmt(rs[e][f]) if rs[e] else "-" for e in engines))
        cells.append(" / ".join(fmt_mb(rs[e]["size_bytes"]) if rs[e] else "-" for e in engines))
        out.append("| " + " | ".join(cells) + " |")
    return out


def ratio_table(by, profile, engines):
    """every cost as a ratio to heap"""
    base = "heap"
    others = [e for e in engines if e != base]
    out = ["| step | " + " | ".join("%s: rate / p99 / KB written per op / reads per op / size" % e for e in others) + " |",
           "|---|" + "---|" * len(others)]
    for s in STEPS:
        b = by.get((profile, base, s))
        if not b:
            continue
        cells = [s]
        for e in others:
            r = by.get((profile, e, s))
            if not r:
                cells.append("-")
                continue
            cells.append(" / ".join(rstr(ratio(r[f], b[f])) for f in
                                    ("ops_per_s", "p99_ms", "kb_written_per_op", "reads_per_op", "size_bytes")))
        out.append("| " + " | ".join(cells) + " |")
    return out


TARGETS_IO = [
    ("l.i1 insert rate", "l.i1", "ops_per_s", ">=", 5.0),
    ("l.i2 insert rate", "l.i2", "ops_per_s", ">=", 5.0),
    ("l.i1 KB written per insert", "l.i1", "kb_written_per_op", "<=", 0.2),
    ("l.i2 KB written per insert", "l.i2", "kb_written_per_op", "<=", 0.2),
    ("l.i1 page reads per insert", "l.i1", "reads_per_op", "<=", 0.1),
    ("l.i2 page reads per insert", "l.i2", "reads_per_op", "<=", 0.1),
    ("database size after l.i2", "l.i2", "size_bytes", "<=", 0.5),
    ("point queries (qp100)", "qp100", "ops_per_s", ">=", 1.0),
    ("range queries (qr100)", "qr100", "ops_per_s", ">=", 0.5),
    ("l.i0 load", "l.i0", "ops_per_s", ">=", 1.0),
    ("l.x index creation", "l.x", "ops_per_s", ">=", 1.0),
]


def target_table(by, profile, engines):
    out = []
    others = [e for e in engines if e != "heap"]
    if profile == "io":
        out.append("| target (issue 12, IO-bound) | goal | " + " | ".join(others) + " |")
        out.append("|---|---|" + "---|" * len(others))
        for name, step, field, op, goal in TARGETS_IO:
            b = by.get((profile, "heap", step))
            cells = [name, "%s %.1fx" % (op, goal)]
            for e in others:
                r = by.get((profile, e, step))
                x = ratio(r[field], b[field]) if r and b else None
                if x is None:
                    # reads/op of 0 against 0 and the like
                    cells.append("-")
                    continue
                ok = x >= goal if op == ">=" else x <= goal
                cells.append("%s %s" % (rstr(x), "met" if ok else "**not met**"))
            out.append("| " + " | ".join(cells) + " |")
    else:
        out.append("| target (issue 12, cached) | goal | " + " | ".join(others) + " |")
        out.append("|---|---|" + "---|" * len(others))
        rows = [("l.i1 insert rate", ["l.i1"], 1.2), ("no step below heap", STEPS, 1.0)]
        for name, steps, goal in rows:
            cells = [name, ">= %.1fx" % goal]
            for e in others:
                xs = []
                for s in steps:
                    b, r = by.get((profile, "heap", s)), by.get((profile, e, s))
                    x = ratio(r["ops_per_s"], b["ops_per_s"]) if r and b else None
                    if x is not None:
                        xs.append((x, s))
                if not xs:
                    cells.append("-")
                    continue
                worst = min(xs)
                ok = worst[0] >= goal
                cells.append("%s%s %s" % (rstr(worst[0]), "" if len(steps) == 1 else " (lowest: %s)" % worst[1],
                                          "met" if ok else "**not met**"))
            out.append("| " + " | ".join(cells) + " |")
    return out


def tides_table(by, profile, engines):
    out = ["| engine | step | BUSY answers | writes stalled | stall s | slowdowns | slowdown s | compactions | compaction MB read / written | "
           "flush MB | engine MB read | block cache hit % | bloom useful | levels after |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for e in engines:
        if e == "heap":
            continue
        for s in STEPS:
            r = by.get((profile, e, s))
            if not r:
                continue
            h, m = num(r.get("tides_cache_hits")) or 0, num(r.get("tides_cache_misses")) or 0
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s | %s | %s | %s | %s |" % (
                e, s, r.get("tides_stall_count", ""), r.get("tides_write_stalls", ""),
                fmt((num(r.get("tides_write_stall_us")) or 0) / 1e6), r.get("tides_slowdown_count", ""),
                fmt((num(r.get("tides_slowdown_us")) or 0) / 1e6), r.get("tides_compactions", ""),
                fmt((num(r.get("tides_compaction_bytes_read")) or 0) / 1048576),
                fmt((num(r.get("tides_compaction_bytes_written")) or 0) / 1048576),
                fmt((num(r.get("tides_flush_bytes_written")) or 0) / 1048576),
                fmt((num(r.get("tides_bytes_read")) or 0) / 1048576),
                fmt(100.0 * h / (h + m)) if h + m else "-", r.get("tides_bloom_useful", ""),
                r.get("tides_levels", "")))
    return out


def env_table(by, profile, engines):
    out = ["| engine | step | secs | client CPU % | server CPU % | other CPU % (not ours) | load start -> end | "
           "cgroup peak MB | page cache MB at end | refaults | settle s | KB written/op incl. settle | failed |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for e in engines:
        for s in STEPS:
            r = by.get((profile, e, s))
            if not r:
                continue
            out.append("| %s | %s | %s | %s | %s | %s | %s -> %s | %s | %s | %s | %s | %s | %s |" % (
                e, s, r["secs"], r["client_cpu_pct"], r["server_cpu_pct"], r["other_cpu_pct"],
                r["load_start"], r["load_end"], r["cg_peak_mb"], r["cg_file_mb_end"], r["cg_refault_file"],
                r["settle_s"], fmt(r["kb_written_per_op_settled"]), r["failed"]))
    return out


# --------------------------------------------------------------------------
# charts


def series_by(ts):
    d = {}
    for r in ts:
        d.setdefault((r["profile"], r["step"], r["engine"]), []).append(r)
    for v in d.values():
        v.sort(key=lambda r: int(r["t"]))
    return d


def smooth(xs, ys, w):
    if w <= 1 or not ys:
        return xs, ys
    ox, oy = [], []
    for i in range(0, len(ys), w):
        chunk = ys[i:i + w]
        ox.append(xs[i] + (len(chunk) - 1) / 2.0)
        oy.append(sum(chunk) / float(len(chunk)))
    return ox, oy


def charts(prefix, rows, ts, profiles, engines):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no charts", file=sys.stderr)
        return []
    made = []
    sb = series_by(ts)
    by = index(rows)
    for p in profiles:
        steps = [s for s in TIMED if any((p, s, e) in sb for e in engines)]
        if steps:
            fig, axes = plt.subplots(len(steps), 1, figsize=(10, 2.9 * len(steps)), squeeze=False)
            for ax, s in zip(axes[:, 0], steps):
                unit = "queries/s" if s.startswith("q") else "rows/s"
                for e in engines:
                    ser = sb.get((p, s, e))
                    if not ser:
                        continue
                    xs = [int(r["t"]) for r in ser]
                    ys = [num(r["ops"]) or 0 for r in ser]
                    w = max(1, len(xs) // 120)
                    sx, sy = smooth(xs, ys, w)
                    r = by.get((p, e, s))
                    lab = "%s (mean %s)" % (e, fmt(r["ops_per_s"]) if r else "?")
                    ax.plot(sx, sy, label=lab, color=COLORS.get(e), lw=1.2)
                ax.set_title("%s, %s profile: %s over time" % (s, p, unit), fontsize=10)
                ax.set_ylabel(unit)
                ax.set_ylim(bottom=0)
                ax.grid(alpha=0.3)
                ax.legend(fontsize=8, loc="upper right")
            axes[-1, 0].set_xlabel("seconds into the step")
            fig.tight_layout()
            fn = "%s%s_rate.png" % (prefix, p)
            fig.savefig(os.path.join(RESULTS, fn), dpi=90)
            plt.close(fig)
            made.append(fn)
        # device reads and writes per second during the write steps
        wsteps = [s for s in ("l.i1", "l.i2") if any((p, s, e) in sb for e in engines)]
        if wsteps:
            fig, axes = plt.subplots(len(wsteps), 2, figsize=(12, 3.0 * len(wsteps)), squeeze=False)
            for i, s in enumerate(wsteps):
                for e in engines:
                    ser = sb.get((p, s, e))
                    if not ser:
                        continue
                    xs = [int(r["t"]) for r in ser]
                    rd = [num(r["reads"]) or 0 for r in ser]
                    wr = [(num(r["write_kb"]) or 0) / 1024 for r in ser]
                    w = max(1, len(xs) // 120)
                    axes[i, 0].plot(*smooth(xs, rd, w), label=e, color=COLORS.get(e), lw=1.2)
                    axes[i, 1].plot(*smooth(xs, wr, w), label=e, color=COLORS.get(e), lw=1.2)
                axes[i, 0].set_title("%s, %s: device reads/s" % (s, p), fontsize=10)
                axes[i, 1].set_title("%s, %s: MB/s written to the device" % (s, p), fontsize=10)
                for ax in axes[i]:
                    ax.set_ylim(bottom=0)
                    ax.grid(alpha=0.3)
                    ax.legend(fontsize=8)
            fig.tight_layout()
            fn = "%s%s_io.png" % (prefix, p)
            fig.savefig(os.path.join(RESULTS, fn), dpi=90)
            plt.close(fig)
            made.append(fn)
        # per-operation costs
        steps = [s for s in STEPS if any((p, e, s) in by for e in engines)]
        if steps:
            fields = [("ops_per_s", "rate (rows or queries /s)"), ("reads_per_op", "device reads per op"),
                      ("kb_written_per_op", "KB written per op"), ("size_bytes", "size after step (MB)")]
            fig, axes = plt.subplots(1, len(fields), figsize=(16, 3.8), squeeze=False)
            wid = 0.8 / max(1, len(engines))
            for ax, (f, title) in zip(axes[0], fields):
                for j, e in enumerate(engines):
                    vals = []
                    for s in steps:
                        r = by.get((p, e, s))
                        v = num(r[f]) if r else None
                        if f == "size_bytes" and v is not None:
                            v /= 1048576
                        vals.append(v or 0)
                    ax.bar([i + j * wid for i in range(len(steps))], vals, wid, label=e, color=COLORS.get(e))
                ax.set_xticks([i + wid * (len(engines) - 1) / 2 for i in range(len(steps))])
                ax.set_xticklabels(steps, fontsize=8)
                ax.set_title(title, fontsize=10)
                if f in ("ops_per_s", "reads_per_op", "kb_written_per_op"):
                    ax.set_yscale("symlog", linthresh=0.01 if f != "ops_per_s" else 10)
                ax.grid(alpha=0.3, axis="y")
            axes[0, 0].legend(fontsize=8)
            fig.suptitle("%s profile: per-step cost (log scale for the first three)" % p, fontsize=10)
            fig.tight_layout()
            fn = "%s%s_cost.png" % (prefix, p)
            fig.savefig(os.path.join(RESULTS, fn), dpi=90)
            plt.close(fig)
            made.append(fn)
    return made


# --------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prefix", default="ibench_")
    args = ap.parse_args()
    prefix = args.prefix
    rows, ts, meta = load(prefix)
    if not rows:
        print("no %ssteps.csv in %s" % (prefix, RESULTS), file=sys.stderr)
        return 1
    by = index(rows)
    profiles = [p for p in ("io", "cached") if any(r["profile"] == p for r in rows)]
    engines = [e for e in ENGINES if any(r["engine"] == e for r in rows)]
    made = charts(prefix, rows, ts, profiles, engines)
    m = meta.get("machine", {})
    L = []
    L.append("# Insert Benchmark: heap, tides and tides_btree (%s run)" % meta.get("mode", "?"))
    L.append("")
    L.append("Generated by `bench/ibench/report.py` from `%ssteps.csv`, `%stimeseries.csv` and `%smeta.json` "
             "of one run of `bench/ibench/ibench.py` (`make ibench%s`). Method, sizing and the meaning of "
             "every column: `bench/ibench/README.md`." % (prefix, prefix, prefix,
                                                          "" if meta.get("mode") == "full" else "-quick"))
    L.append("")
    L.append("- **Run**: %s to %s, %s s; tidesam %s; %s" % (meta.get("started"), meta.get("finished"),
                                                           meta.get("total_s"), m.get("tidesam_commit"),
                                                           m.get("postgres")))
    L.append("- **Machine**: %s CPUs (%s), %s GB RAM, Linux %s; disk %s; %s" % (
        m.get("nproc"), m.get("cpu"), m.get("ram_gb"), m.get("kernel"), m.get("disk"),
        m.get("huge_pages", "huge pages not recorded")))
    L.append("- **Load average**: %s at the start, %s at the end (per step below, with the CPU other "
             "processes than this benchmark's used)" % (meta.get("load_start"), meta.get("load_end")))
    L.append("- **Order**: %s" % (
        "interleaved: the engines' clusters side by side, each step run by every engine in turn while "
        "the others are frozen (order alternating between steps)" if meta.get("order", "sequential") == "interleaved"
        else "sequential: one engine's steps after the other's"))
    L.append("- **Durability**: %s (%s); %s clients, each with its own table; memory cgroup %s" % (
        meta.get("durability"),
        "heap synchronous_commit=off, tides.sync_mode=none" if meta.get("durability") == "relaxed"
        else "heap synchronous_commit=on, tides.sync_mode=full", meta.get("clients"), meta.get("cgroup")))
    for p in profiles:
        pr = meta.get("profiles", {}).get(p, {})
        split = meta.get("budget_split", {}).get(p, {})
        L.append("- **%s profile**: %s rows loaded, memory cap %s MB, budget %s MB split as %s; step seconds %s" % (
            p, "{:,}".format(pr.get("rows", 0)), pr.get("cap_mb"), pr.get("budget_mb"),
            "; ".join("%s: shared_buffers %s, memtables %s x %s MB%s, block cache %s MB" %
                      (e, v["shared_buffers"], v["memtable_count"], v["memtable_mb"],
                       " (%s per flush)" % v["memtables_per_flush"] if v.get("memtables_per_flush", 1) > 1 else "",
                       v["block_cache_mb"])
                      for e, v in split.items()), pr.get("secs")))
    if meta.get("failures"):
        L.append("- **FAILURES**: %s" % "; ".join(meta["failures"]))
    for c in meta.get("checks", []):
        L.append("- check %s/%s: %s; index methods: %s; generating a row costs the server %s us" % (
            c["profile"], c["engine"], c["check"], c.get("index_ams"), c.get("gen_us_per_row")))
    for v in meta.get("min_probe_ms", []):
        first = ("first in a new session %s ms, then " % v["first_ms"]) if "first_ms" in v else ""
        L.append("- `SELECT min(transactionid)` (finding the lowest PK, as every l.i1/l.i2 transaction does) on "
                 "%s/%s %s: %s%s ms" % (v["profile"], v["engine"], v["when"], first, v["ms"]))
    for v in meta.get("vacuum", []):
        L.append("- VACUUM ANALYZE + settle before the query steps, %s/%s: %s s, %s MB written" % (
            v["profile"], v["engine"], v["secs"], v["write_mb"]))
    L.append("")
    for p in profiles:
        L.append("## %s profile" % ("IO-bound" if p == "io" else "Cached"))
        L.append("")
        L += target_table(by, p, engines)
        L.append("")
        L.append("### Steps")
        L.append("")
        L += step_table(by, p, engines)
        L.append("")
        L.append("Ratios to heap (rate: higher is better; the rest: lower is better):")
        L.append("")
        L += ratio_table(by, p, engines)
        L.append("")
        qd = [(e, by.get((p, e, "qr100"))) for e in engines]
        if any(r for _, r in qd):
            L.append("qr100 per index (p99 and count) and the writers' achieved rate (target 100 rows/s per client):")
            L.append("")
            for step in ("qr100", "qp100"):
                for e in engines:
                    r = by.get((p, e, step))
                    if r:
                        L.append("- %s %s: writers %s rows/s (p99 %s ms, pgbench schedule lag %s ms); %s" % (
                            step, e, r["writer_rows_per_s"], r["writer_p99_ms"], r.get("writer_lag_ms", "-"),
                            r["detail"] or ""))
            L.append("")
        L.append("### Engine counters (tides_stats() deltas over the step)")
        L.append("")
        L += tides_table(by, p, engines)
        L.append("")
        L.append("### Load, CPU and memory per step")
        L.append("")
        L += env_table(by, p, engines)
        L.append("")
        for fn in made:
            if fn.startswith("%s%s_" % (prefix, p)):
                L.append("![%s](%s)" % (fn, fn))
        L.append("")
    out = os.path.join(RESULTS, prefix + "summary.md")
    with open(out, "w") as f:
        f.write("\n".join(L) + "\n")
    print("wrote %s and %d charts" % (out, len(made)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
