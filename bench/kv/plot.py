#!/usr/bin/python3
"""Chart and text summary for bench/kv results.

usage: plot.py [kv.csv [kv.png]]

Reads the CSV written by kvbench, draws a PNG with one column per
configuration (compression x value size) and rows for throughput, p99
latency, the tides/RocksDB throughput ratio and write amplification, and
prints a short summary with the ratios.
"""
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = ["fillseq", "fillrandom", "overwrite", "readrandom", "seekrandom", "mixed"]
WRITE_WORKLOADS = ["fillseq", "fillrandom", "overwrite", "mixed"]
COLORS = {"tides": "#1f77b4", "rocksdb": "#ff7f0e"}
SHORT = {"fillseq": "fseq", "fillrandom": "frand", "overwrite": "ovwr",
         "readrandom": "read", "seekrandom": "seek", "mixed": "mix"}


def num(s, default=None):
    try:
        return float(s)
    except (TypeError, ValueError):
        return default


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["value_size"] = int(r["value_size"])
        r["threads"] = int(r["threads"])
        r["ok"] = r["status"] == "ok"
    return rows


def key(r):
    return (r["compression"], r["value_size"], r["threads"], r["workload"])


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def fmt_bytes(b):
    b = float(b)
    for unit in ["B", "KB", "MB", "GB"]:
        if abs(b) < 1024 or unit == "GB":
            return f"{b:.0f}{unit}" if unit == "B" else f"{b:.1f}{unit}"
        b /= 1024
    return f"{b:.1f}GB"


def plot(rows, out_png):
    engines = [e for e in ["tides", "rocksdb"] if any(r["engine"] == e for r in rows)]
    engines += sorted({r["engine"] for r in rows} - set(engines))
    configs = sorted({(r["compression"], r["value_size"]) for r in rows},
                     key=lambda c: (c[0] != "none", c[1]))
    threads = sorted({r["threads"] for r in rows})
    wls = [w for w in WORKLOADS if any(r["workload"] == w for r in rows)]
    by = {(r["engine"],) + key(r): r for r in rows}
    have_ratio = "tides" in engines and "rocksdb" in engines

    nrows = 4
    ncols = max(1, len(configs))
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.4 * nrows),
                             squeeze=False)
    groups = [(w, t) for w in wls for t in threads]
    labels = [f"{SHORT.get(w, w)}\n{t}T" for w, t in groups]
    x = list(range(len(groups)))
    width = 0.8 / max(1, len(engines))

    for ci, (comp, vsize) in enumerate(configs):
        title = f"{comp}, {vsize} B values"
        # 1: throughput, 2: p99 latency
        for ri, (field, ylabel) in enumerate([("ops_per_s", "ops/s"), ("p99_us", "p99 latency (us)")]):
            ax = axes[ri][ci]
            for ei, e in enumerate(engines):
                ys = []
                for w, t in groups:
                    r = by.get((e, comp, vsize, t, w))
                    ys.append(num(r[field], 0) if r and r["ok"] else 0)
                ax.bar([xi + (ei - (len(engines) - 1) / 2) * width for xi in x], ys,
                       width, label=e, color=COLORS.get(e))
            ax.set_yscale("log")
            ax.set_ylabel(ylabel)
            ax.set_title(title, fontsize=10)
            ax.set_xticks(x)
            ax.set_xticklabels(labels, fontsize=7)
            ax.grid(axis="y", alpha=0.3)
            if ci == 0 and ri == 0:
                ax.legend(fontsize=8)
        # 3: ratio tides / rocksdb
        ax = axes[2][ci]
        if have_ratio:
            ys = []
            for w, t in groups:
                a = by.get(("tides", comp, vsize, t, w))
                b = by.get(("rocksdb", comp, vsize, t, w))
                ok = a and b and a["ok"] and b["ok"] and num(b["ops_per_s"], 0) > 0
                ys.append(num(a["ops_per_s"]) / num(b["ops_per_s"]) if ok else float("nan"))
            # bars grow from 1.0 (up: tides faster, down: slower)
            ax.bar(x, [y - 1 if y == y else 0 for y in ys], 0.6, bottom=1.0,
                   color=["#2ca02c" if y == y and y >= 1 else "#d62728" for y in ys])
            ax.axhline(1.0, color="black", linewidth=0.8)
            ax.set_yscale("log", base=2)
            for xi, y in zip(x, ys):
                if y == y:
                    ax.text(xi, y, f"{y:.2f}", ha="center", va="bottom" if y >= 1 else "top",
                            fontsize=6)
            finite = [y for y in ys if y == y and y > 0]
            if finite:
                ax.set_ylim(min(min(finite), 1.0) / 1.3, max(max(finite), 1.0) * 1.3)
        else:
            ax.text(0.5, 0.5, "tides not run\n(RocksDB only)", ha="center", va="center",
                    transform=ax.transAxes)
        ax.set_ylabel("ops/s ratio tides/RocksDB")
        ax.set_title(f"{title}: tides / RocksDB ops/s", fontsize=9)
        ax.set_xticks(x)
        ax.set_xticklabels(labels, fontsize=7)
        ax.grid(axis="y", alpha=0.3)
        # 4: write amplification (device bytes written / user bytes written)
        ax = axes[3][ci]
        wgroups = [(w, t) for w in WRITE_WORKLOADS if w in wls for t in threads]
        wx = list(range(len(wgroups)))
        for ei, e in enumerate(engines):
            ys = []
            for w, t in wgroups:
                r = by.get((e, comp, vsize, t, w))
                ys.append(num(r["write_amp"], 0) if r and r["ok"] else 0)
            ax.bar([xi + (ei - (len(engines) - 1) / 2) * width for xi in wx], ys,
                   width, label=e, color=COLORS.get(e))
        ax.set_ylabel("device bytes / user bytes")
        ax.set_xticks(wx)
        ax.set_xticklabels([f"{SHORT.get(w, w)}\n{t}T" for w, t in wgroups], fontsize=7)
        ax.set_title(f"{title}: write amplification", fontsize=9)
        ax.grid(axis="y", alpha=0.3)

    fig.suptitle("bench/kv: tides vs RocksDB (same workload code; sync off)", fontsize=12)
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    plt.close(fig)


def cpu_per_op(r):
    ops = num(r.get("ops"), 0)
    cpu = num(r.get("cpu_user_s"), 0) + num(r.get("cpu_sys_s"), 0)
    return cpu / ops if ops and cpu else None


def summary(rows):
    by = {(r["engine"],) + key(r): r for r in rows}
    engines = sorted({r["engine"] for r in rows})
    failed = [r for r in rows if not r["ok"]]
    print()
    print("=== bench/kv summary ===")
    if "tides" not in engines:
        print("tides not run (engine library missing): RocksDB numbers only")
        print(f"{'config':<16}{'workload':<12}{'T':>2} {'ops/s':>10} {'p50us':>7} {'p99us':>8}"
              f" {'wamp':>5} {'disk':>8} {'sst':>8} {'rss':>8}")
        for r in rows:
            if r["engine"] != "rocksdb" or not r["ok"]:
                continue
            cfg = f"{r['compression']}/{r['value_size']}B"
            print(f"{cfg:<16}{r['workload']:<12}{r['threads']:>2} {num(r['ops_per_s']):>10.0f}"
                  f" {num(r['p50_us']):>7.1f} {num(r['p99_us']):>8.1f}"
                  f" {r['write_amp'] or '-':>5} {fmt_bytes(num(r['size_on_disk'])):>8}"
                  f" {fmt_bytes(num(r.get('sst_bytes'), 0)):>8}"
                  f" {fmt_bytes(num(r['peak_rss_kb']) * 1024):>8}")
    else:
        print("ratios are tides / RocksDB (ops/s > 1: tides faster; p99, cpu/op, wamp, disk, sst, rss"
              " < 1: tides better; sst = *.sst bytes only)")
        print("cpu/op = (user + sys CPU of the whole process, background included) / ops:"
              " less sensitive to other load on the machine than ops/s")
        print(f"{'config':<16}{'workload':<12}{'T':>2} {'ops/s':>7} {'p99':>6} {'cpu/op':>6} {'wamp':>6}"
              f" {'disk':>6} {'sst':>6} {'rss':>6}   tides ops/s  rocksdb ops/s  busy_waits")
        per_cpu = {}
        per_wl = {}
        allr = []
        for r in rows:
            if r["engine"] != "tides":
                continue
            b = by.get(("rocksdb",) + key(r))
            if not b or not r["ok"] or not b["ok"]:
                continue

            def ratio(f):
                a, c = num(r[f]), num(b[f])
                return a / c if a is not None and c else None

            def show(v):
                return f"{v:6.2f}" if v is not None else "     -"

            q = ratio("ops_per_s")
            per_wl.setdefault(r["workload"], []).append(q)
            ca, cb = cpu_per_op(r), cpu_per_op(b)
            cq = ca / cb if ca and cb else None
            if cq:
                per_cpu.setdefault(r["workload"], []).append(cq)
            allr.append(q)
            cfg = f"{r['compression']}/{r['value_size']}B"
            print(f"{cfg:<16}{r['workload']:<12}{r['threads']:>2} {q:7.2f} {show(ratio('p99_us'))}"
                  f" {show(cq)} {show(ratio('write_amp'))} {show(ratio('size_on_disk'))}"
                  f" {show(ratio('sst_bytes'))}"
                  f" {show(ratio('peak_rss_kb'))}   {num(r['ops_per_s']):>11.0f}"
                  f"  {num(b['ops_per_s']):>13.0f}  {r['busy_waits']:>10}")
        print("geometric means of the ratios per workload:      ops/s   cpu/op")
        for w in WORKLOADS:
            g = geomean(per_wl.get(w, []))
            c = geomean(per_cpu.get(w, []))
            if g:
                print(f"  {w:<12} {g:37.2f} {c if c else float('nan'):8.2f}")
        g = geomean(allr)
        c = geomean([x for v in per_cpu.values() for x in v])
        if g:
            print(f"  {'overall':<12} {g:37.2f} {c if c else float('nan'):8.2f}  ({len(allr)} points)")
    if failed:
        print(f"{len(failed)} FAILED point(s):")
        for r in failed:
            print(f"  {r['engine']} {r['compression']}/{r['value_size']}B {r['threads']}T"
                  f" {r['workload']}: {r['status']}")


def main():
    csv_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "results", "kv.csv")
    png_path = sys.argv[2] if len(sys.argv) > 2 else os.path.splitext(csv_path)[0] + ".png"
    if not os.path.exists(csv_path):
        print(f"plot.py: {csv_path} not found", file=sys.stderr)
        return 1
    rows = load(csv_path)
    if not rows:
        print(f"plot.py: {csv_path} has no rows", file=sys.stderr)
        return 1
    plot(rows, png_path)
    summary(rows)
    print(f"chart: {png_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
