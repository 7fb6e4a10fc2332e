#!/usr/bin/python3
"""copy_load.py -- bulk load with COPY, tides against heap and UNLOGGED heap.

A CSV file of ROWS rows (10 million in the full profile; 7 columns, about 110 bytes a row: ids, a timestamp,
a category, an md5 and a short sentence) is generated once, then loaded with
server-side COPY into a fresh table without indexes:

    heap            logged heap table (WAL for every page)
    heap_unlogged   UNLOGGED heap table: no WAL, the cheapest PostgreSQL path
    tides           tides, compression lz4 (the default); past
                    tides.bulk_load_threshold (32 MB) the rows go into table
                    files installed in the bottom level (src/am/bulk.c), and
                    with tides.wal = on (the default) into the WAL too
    tides_unlogged  UNLOGGED tides table: the same files, no WAL -- the
                    durability of UNLOGGED heap (issue 12: >= 1.5x of it)
    tides_none      tides, compression none   (size comparison)
    tides_zstd      tides, compression zstd   (size comparison)
    parse_only      COPY ... WHERE false into the UNLOGGED heap table:
                    PostgreSQL reads and converts every row (NextCopyFrom),
                    no table gets one -- the ceiling of any table access
                    method under PostgreSQL's single-process COPY

Every load runs in a fresh throwaway cluster (so the device bytes and the
size are that load's alone), REPEATS times per variant (the compression
variants BENCH_COPY_COMP_REPEATS times), alternating the order.  Rows per
second are reported in the tps column, bytes written per row in
bytes_per_txn; the size is the table after load once heap has checkpointed
and tides has flushed its memtable and run due compactions.

    bench/pg/copy_load.py [--profile full|quick]

Environment: BENCH_COPY_ROWS (full default 10000000, the load of issue 6:
about 6 of `make bench`'s minutes on the 2-core machine), BENCH_REPEATS,
BENCH_COPY_COMP_REPEATS, BENCH_COPY_VARIANTS, BENCH_DIR, BENCH_KEEP.
Output: bench/results/<prefix>copy.csv
"""
import argparse
import os
import pwd
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402

DB = "bench"
PROFILES = {
    "full": {"rows": 10000000, "repeats": 3, "comp_repeats": 1, "shared_buffers": "256MB"},
    "quick": {"rows": 300000, "repeats": 3, "comp_repeats": 1, "shared_buffers": "128MB"},
}
VARIANTS = {
    "heap": {"am": "heap", "unlogged": False, "compression": "lz4"},
    "heap_unlogged": {"am": "heap", "unlogged": True, "compression": "lz4"},
    "tides": {"am": "tides", "unlogged": False, "compression": "lz4"},
    "tides_unlogged": {"am": "tides", "unlogged": True, "compression": "lz4"},
    "tides_none": {"am": "tides", "unlogged": False, "compression": "none"},
    "tides_zstd": {"am": "tides", "unlogged": False, "compression": "zstd"},
    "parse_only": {"am": "heap", "unlogged": True, "compression": "lz4", "where": "false"},
}
TABLE_DDL = """CREATE %sTABLE copy_t (
    id       bigint NOT NULL,
    k        int NOT NULL,
    v        int NOT NULL,
    ts       timestamptz NOT NULL,
    category text NOT NULL,
    digest   text NOT NULL,
    note     text NOT NULL) USING %s"""
GEN_SQL = """COPY (
  SELECT g, abs(hashint8(g)) %% 1000000, g %% 1000,
         timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second',
         (ARRAY['alpha', 'beta', 'gamma', 'delta', 'epsilon'])[g %% 5 + 1],
         md5(g::text),
         'customer ' || (abs(hashint8(g)) %% 50000) || ' ordered item ' || (g %% 977) || ' from store ' || (g %% 31)
  FROM generate_series(1, %d) g) TO '%s' (FORMAT csv)"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", default=os.environ.get("BENCH_PROFILE", "full"), choices=PROFILES)
    a = ap.parse_args()
    P = PROFILES[a.profile]
    prefix = "pg_" if a.profile == "full" else "pg_quick_"
    rows = B.env_int("BENCH_COPY_ROWS", P["rows"])
    repeats = max(1, B.env_int("BENCH_REPEATS", P["repeats"]))
    comp_repeats = max(1, B.env_int("BENCH_COPY_COMP_REPEATS", P["comp_repeats"]))
    sb = os.environ.get("BENCH_SHARED_BUFFERS", P["shared_buffers"])
    variants = B.env_list("BENCH_COPY_VARIANTS", list(VARIANTS))
    conf = {"shared_buffers": sb, "tides.block_cache_size": sb}

    out = B.CsvOut(os.path.join(B.RESULTS, prefix + "copy.csv"), B.COMMON_FIELDS)
    t_start = time.time()
    base = os.environ.get("BENCH_DIR") or "/var/tmp"
    datadir = tempfile.mkdtemp(prefix="tidesam-bench-copydata.", dir=base)
    os.chmod(datadir, 0o755)
    if B.IS_ROOT:
        pw = pwd.getpwnam("postgres")
        os.chown(datadir, pw.pw_uid, pw.pw_gid)
    csv_path = os.path.join(datadir, "rows.csv")
    cl = None
    try:
        # generate the input once (outside every measured filesystem)
        cl = B.Cluster("copygen", conf)
        cl.initdb().start()
        B.log("generating %d rows into %s" % (rows, csv_path))
        cl.psql(GEN_SQL % (rows, csv_path))
        cl.destroy()
        cl = None
        file_bytes = os.path.getsize(csv_path)
        meta = {"machine": B.machine_info(base), "rows": rows, "csv_bytes": file_bytes, "repeats": repeats,
                "comp_repeats": comp_repeats, "shared_buffers": sb, "conf": dict(B.BASE_CONF, **conf)}
        order = [v for v in variants if v in VARIANTS]
        maxrep = max(repeats, comp_repeats)
        for rep in range(1, maxrep + 1):
            seq = order if rep % 2 == 1 else list(reversed(order))
            for vname in seq:
                v = VARIANTS[vname]
                if rep > (comp_repeats if vname in ("tides_none", "tides_zstd") else repeats):
                    continue
                cl = B.Cluster("copy-%s" % vname, dict(conf, **{"tides.compression": v["compression"]}))
                cl.initdb().start()
                cl.create_db(DB)
                cl.psql(TABLE_DDL % ("UNLOGGED " if v["unlogged"] else "", v["am"]), db=DB)
                B.log("COPY %d rows into %s, rep %d" % (rows, vname, rep))

                def work():
                    t0 = time.time()
                    cl.psql("COPY copy_t FROM '%s' (FORMAT csv)%s" % (
                        csv_path, " WHERE %s" % v["where"] if "where" in v else ""), db=DB)
                    secs = time.time() - t0
                    return {"txns": rows, "tps": rows / secs, "lat_avg_ms": secs * 1000.0}

                res = B.measured(cl, DB, work, tables=["copy_t"])
                res.update({"suite": "copy", "workload": "copy", "scale": rows, "durability": "relaxed",
                            "clients": 1, "engine": vname, "rep": rep,
                            "note": "tps = rows/s, bytes_per_txn = bytes/row, lat_avg_ms = COPY time; "
                                    "CSV %d bytes; compression %s" % (file_bytes, v["compression"])})
                cnt = cl.psql("SELECT count(*) FROM copy_t", db=DB)
                want = 0 if "where" in v else rows
                res["check"] = "ok" if int(cnt) == want else "MISMATCH count=%s" % cnt
                out.row(res)
                B.log("  %.0f rows/s (%.1f s), %.0f B/row, size %.1f MB" % (
                    res["tps"], res["lat_avg_ms"] / 1000, res["bytes_per_txn"], res["size_after"] / 1e6))
                cl.destroy()
                cl = None
        meta["elapsed_s"] = round(time.time() - t_start, 1)
        meta["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
        B.write_meta(prefix, "copy", meta)
    except BaseException:
        if cl is not None:
            sys.stderr.write("server log tail:\n%s\n" % cl.tail_log())
        raise
    finally:
        out.close()
        if cl is not None:
            cl.destroy()
        B.shutil.rmtree(datadir, ignore_errors=True)
    B.log("copy_load done in %.0f s -> %s" % (time.time() - t_start, out.path))


if __name__ == "__main__":
    main()
