#!/usr/bin/python3
"""oltp_idx.py -- indexed-table workloads, tides against heap.

One table with a primary key and three secondary indexes:

    items (id bigint PRIMARY KEY, a int, b int, c text, created timestamptz, pad text)
    items_a (a), items_b (b), items_c (c)

loaded with ROWS rows (indexes built after the load), then pgbench custom
scripts, in this order (reads first, so they see the table as loaded):

    point-lookup   SELECT * FROM items WHERE id = :id
    range-100      SELECT count(*), sum(b) FROM items WHERE id >= :id AND id < :id + 100
                   (100 rows through the primary key; the plan is recorded)
    update-indexed UPDATE items SET b = :b WHERE id = :id   (b is indexed: no HOT for heap)
    insert-3idx    INSERT INTO items VALUES (nextval(...), :a, :b, md5(...), now(), pad)
                   (four index insertions per row)

Each point runs REPEATS times per engine, alternating the engine that goes
first; heap and tides each have their own throwaway cluster with the same
settings.

    bench/pg/oltp_idx.py [--profile full|quick]

Environment: BENCH_DURATION, BENCH_REPEATS, BENCH_OLTP_ROWS, BENCH_OLTP_SHARED_BUFFERS,
BENCH_ENGINES, BENCH_POINTS (workload:durability:clients[:protocol],...; protocol
simple (default) or prepared), BENCH_DIR, BENCH_KEEP.
Output: bench/results/<prefix>oltp.csv
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B  # noqa: E402

DB = "bench"
TABLES = ["items"]

SCRIPTS = {
    "point-lookup": """\\set id random(1, :rows)
SELECT id, a, b, c, created, pad FROM items WHERE id = :id;
""",
    "range-100": """\\set id random(1, :rows - 100)
SELECT count(*), sum(b) FROM items WHERE id >= :id AND id < :id + 100;
""",
    "update-indexed": """\\set id random(1, :rows)
\\set b random(1, 100000000)
UPDATE items SET b = :b WHERE id = :id;
""",
    "insert-3idx": """\\set a random(1, 100000000)
\\set b random(1, 100000000)
INSERT INTO items (id, a, b, c, created, pad)
  VALUES (nextval('items_id_seq'), :a, :b, md5((:a)::text || (:b)::text), now(),
          'note ' || :a || ' status open priority ' || (:b % 5) || ' owner team-' || (:a % 97));
""",
}

# nothing to settle after these (no checkpoint, flush or compaction is due)
READ_ONLY = ("point-lookup", "range-100")

EXPLAIN = {
    "point-lookup": "SELECT id, a, b, c, created, pad FROM items WHERE id = 4242",
    "range-100": "SELECT count(*), sum(b) FROM items WHERE id >= 4242 AND id < 4242 + 100",
    "update-indexed": "UPDATE items SET b = 7 WHERE id = 4242",
}

PROFILES = {
    "full": {
        "duration": 5, "repeats": 3, "rows": 1000000, "shared_buffers": "512MB",
        "points": [
            ("point-lookup", "relaxed", 1),
            ("point-lookup", "relaxed", 4),
            ("point-lookup", "relaxed", 16),
            ("range-100", "relaxed", 1),
            ("range-100", "relaxed", 4),
            ("range-100", "relaxed", 16),
            ("update-indexed", "relaxed", 1),
            ("update-indexed", "relaxed", 4),
            ("update-indexed", "relaxed", 16),
            ("update-indexed", "strict", 4),
            ("insert-3idx", "relaxed", 1),
            ("insert-3idx", "relaxed", 4),
            ("insert-3idx", "relaxed", 16),
            ("insert-3idx", "strict", 4),
            # the prepared protocol: parse and plan no longer hide the engine's cost
            ("point-lookup", "relaxed", 4, "prepared"),
            ("update-indexed", "relaxed", 4, "prepared"),
            ("insert-3idx", "relaxed", 4, "prepared"),
        ],
    },
    "quick": {
        "duration": 3, "repeats": 3, "rows": 100000, "shared_buffers": "128MB",
        "points": [
            ("point-lookup", "relaxed", 4),
            ("range-100", "relaxed", 4),
            ("update-indexed", "relaxed", 4),
            ("insert-3idx", "relaxed", 4),
            ("insert-3idx", "strict", 4),
        ],
    },
}


def load_sql(rows, index_am):
    # the index method is named in every statement (the primary key through a
    # unique index it then adopts), so tides_btree is used whether or not the
    # build has the tides.index_method setting
    sql = """
DROP TABLE IF EXISTS items;
DROP SEQUENCE IF EXISTS items_id_seq;
CREATE TABLE items (
    id      bigint NOT NULL,
    a       int NOT NULL,
    b       int NOT NULL,
    c       text NOT NULL,
    created timestamptz NOT NULL,
    pad     text NOT NULL);
INSERT INTO items
SELECT g, h % 100000000, (h / 7) % 100000000, md5(g::text), now() - (g || ' s')::interval,
       'note ' || g || ' status ' || (CASE g % 3 WHEN 0 THEN 'open' WHEN 1 THEN 'closed' ELSE 'waiting' END)
       || ' priority ' || (g % 5) || ' owner team-' || (g % 97)
FROM (SELECT g, abs(hashint8(g)) AS h FROM generate_series(1, @ROWS@) g) s;
CREATE UNIQUE INDEX items_pkey ON items USING @IM@ (id);
ALTER TABLE items ADD CONSTRAINT items_pkey PRIMARY KEY USING INDEX items_pkey;
CREATE INDEX items_a ON items USING @IM@ (a);
CREATE INDEX items_b ON items USING @IM@ (b);
CREATE INDEX items_c ON items USING @IM@ (c);
CREATE SEQUENCE items_id_seq START @START@ CACHE 1;
VACUUM ANALYZE items;
"""
    return sql.replace("@ROWS@", str(rows)).replace("@START@", str(rows + 1)).replace("@IM@", index_am)


def plan_of(cluster, wl):
    if wl not in EXPLAIN:
        return ""
    txt = cluster.psql("EXPLAIN (COSTS OFF) " + EXPLAIN[wl], db=DB)
    nodes = []
    for line in txt.splitlines():
        s = line.strip().lstrip("->").strip()
        if s and not s.startswith(("Index Cond", "Filter", "Recheck", "Heap Blocks")):
            nodes.append(s)
    return " / ".join(nodes)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", default=os.environ.get("BENCH_PROFILE", "full"), choices=PROFILES)
    a = ap.parse_args()
    P = PROFILES[a.profile]
    prefix = "pg_" if a.profile == "full" else "pg_quick_"
    duration = B.env_int("BENCH_DURATION", P["duration"])
    repeats = max(1, B.env_int("BENCH_REPEATS", P["repeats"]))
    rows = B.env_int("BENCH_OLTP_ROWS", P["rows"])
    sb = os.environ.get("BENCH_OLTP_SHARED_BUFFERS", P["shared_buffers"])
    points = [p if len(p) > 3 else p + ("simple",) for p in P["points"]]
    if os.environ.get("BENCH_POINTS"):
        points = [(f[0], f[1], int(f[2]), f[3] if len(f) > 3 else "simple")
                  for f in (p.split(":") for p in B.env_list("BENCH_POINTS", []))]

    out = B.CsvOut(os.path.join(B.RESULTS, prefix + "oltp.csv"), B.COMMON_FIELDS)
    conf = {"shared_buffers": sb, "tides.block_cache_size": sb}
    t_start = time.time()
    clusters = {}
    try:
        engines, clusters, note = B.start_clusters("oltp", conf)
        if note:
            B.log(note)
        meta = {"machine": B.machine_info(clusters[engines[0].name].dir), "duration_s": duration,
                "repeats": repeats, "rows": rows, "shared_buffers": sb, "tides.block_cache_size": sb,
                "engines": [e.name for e in engines], "note": note, "conf": dict(B.BASE_CONF, **conf),
                "scripts": SCRIPTS}
        scripts = {}
        for e in engines:
            cl = clusters[e.name]
            B.set_durability(cl, "relaxed")
            cl.create_db(DB)
            path = os.path.join(cl.dir, "load.sql")
            with open(path, "w") as f:
                f.write(load_sql(rows, e.index_am))
            B.log("loading %d rows into items (%s)" % (rows, e.name))
            t0 = time.time()
            cl.psql_file(path, db=DB, pgoptions=e.init_options())
            secs = time.time() - t0
            cl.settle(DB)
            out.row({"suite": "oltp", "workload": "load", "scale": rows, "durability": "relaxed",
                     "engine": e.name, "index_am": e.index_am, "rep": 1, "elapsed_s": round(secs, 2),
                     "size_after": cl.size_of(DB, TABLES),
                     "note": "INSERT ... SELECT of %d rows, then PK + 3 indexes (%s), VACUUM ANALYZE" % (rows, e.index_am)})
            for wl, body in SCRIPTS.items():
                p = os.path.join(cl.dir, wl + ".sql")
                with open(p, "w") as f:
                    f.write(body)
                scripts[(e.name, wl)] = p
        for (wl, dur, clients, proto) in points:
            for cl in clusters.values():
                B.set_durability(cl, dur)
            plans = {e.name: plan_of(clusters[e.name], wl) for e in engines}
            for rep in range(1, repeats + 1):
                for e in B.rep_order(B.point_engines(engines, clients), rep):
                    cl = clusters[e.name]
                    B.log("%s %s c=%d %s %s rep %d" % (wl, dur, clients, proto, e.name, rep))
                    res = B.measured(cl, DB, lambda: B.run_pgbench(
                        cl, DB, ["-f", scripts[(e.name, wl)], "-D", "rows=%d" % rows] + B.protocol_args(proto),
                        B.point_duration(duration, clients), clients,
                        pgoptions=e.durability_options(dur), label=wl), tables=TABLES,
                        settle=wl not in READ_ONLY)
                    res.update({"suite": "oltp", "workload": wl, "scale": rows, "durability": dur,
                                "clients": clients, "protocol": proto, "engine": e.name,
                                "index_am": e.index_am, "rep": rep,
                                "duration_s": B.point_duration(duration, clients),
                                "plan": plans[e.name]})
                    out.row(res)
                    B.log("  tps %.0f p99 %.2f ms, %.0f B/txn%s" % (res["tps"], res["p99_ms"], res["bytes_per_txn"],
                                                                    B.flush_note(res)))
        # the indexes must agree with the table
        for e in engines:
            cl = clusters[e.name]
            chk = cl.psql("SET enable_indexscan = off; SET enable_bitmapscan = off; "
                          "SELECT count(*), sum(b::bigint) FROM items", db=DB)
            idx = cl.psql("SET enable_seqscan = off; SELECT count(*), sum(b::bigint) FROM items WHERE id > 0",
                          db=DB)
            out.row({"suite": "oltp", "workload": "check", "engine": e.name, "index_am": e.index_am, "rep": 1,
                     "check": "ok" if chk.splitlines()[-1] == idx.splitlines()[-1] else
                     "MISMATCH seq=%s idx=%s" % (chk, idx), "size_after": cl.size_of(DB, TABLES)})
        meta["elapsed_s"] = round(time.time() - t_start, 1)
        meta["loadavg_end"] = open("/proc/loadavg").read().split()[:3]
        B.write_meta(prefix, "oltp", meta)
    except BaseException:
        for name, cl in clusters.items():
            sys.stderr.write("server log tail (%s):\n%s\n" % (name, cl.tail_log()))
        raise
    finally:
        out.close()
        B.destroy_clusters(clusters)
    B.log("oltp_idx done in %.0f s -> %s" % (time.time() - t_start, out.path))


if __name__ == "__main__":
    main()
