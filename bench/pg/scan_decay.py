#!/usr/bin/python3
"""scan_decay.py -- how tpcb-like's branch and teller lookups slow down on a table AM

    bench/pg/scan_decay.py [tides|heap] [seconds]

Loads pgbench -s 10 into a throwaway cluster (autovacuum off, so nothing
cleans up behind the run), times a sequential scan and an index scan that
each find one row of pgbench_branches and of pgbench_tellers (EXPLAIN
ANALYZE, TIMING OFF), runs tpcb-like with 4 clients, and times them again:
after the run, after VACUUM, after tides_flush(), after tides_compact(),
after a second VACUUM.  Shows what each kind of cleanup gives back.
"""
import os, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as B

am = sys.argv[1] if len(sys.argv) > 1 else "tides"
secs = int(sys.argv[2]) if len(sys.argv) > 2 else 30
cl = B.Cluster("chainexp", {"shared_buffers": "256MB", "tides.block_cache_size": "256MB",
                            "autovacuum": "off"})
try:
    cl.initdb().start()
    cl.create_db("bench")
    subprocess.run([os.path.join(B.PG_BIN, "pgbench"), "-i", "-q", "-s", "10", "bench"],
                   env=cl.env("-c default_table_access_method=%s" % am), check=True, capture_output=True)
    cl.settle("bench")

    def probe(label):
        out = []
        for opt, name in (("SET enable_indexscan=off; SET enable_bitmapscan=off", "seqscan"),
                          ("SET enable_seqscan=off; SET enable_bitmapscan=off", "indexscan")):
            ts = []
            for tbl, col in (("pgbench_branches", "bid"), ("pgbench_tellers", "tid")):
                t0 = time.time()
                r = cl.psql(["BEGIN", opt.split(";")[0], opt.split(";")[1].strip(),
                             "EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON) SELECT * FROM %s WHERE %s = 3" % (tbl, col),
                             "ROLLBACK"], db="bench")
                ex = [l for l in r.splitlines() if "Execution Time" in l][0].split(":")[1].strip()
                ts.append("%s %s" % (tbl[8:], ex))
            out.append("%s: %s" % (name, ", ".join(ts)))
        st = cl.tides_stats("bench") if am == "tides" else {}
        print("%-28s %s   memtable_bytes=%s" % (label, " | ".join(out), st.get("memtable_bytes", "-")), flush=True)

    probe("after load")
    r = subprocess.run([os.path.join(B.PG_BIN, "pgbench"), "-n", "-T", str(secs), "-c", "4", "-j", "2", "bench"],
                       env=cl.env("-c synchronous_commit=off"), capture_output=True, text=True)
    print([l for l in r.stdout.splitlines() if l.startswith("tps")], "autovacuum off")
    probe("after %d s tpcb c=4" % secs)
    cl.psql("VACUUM pgbench_branches, pgbench_tellers", db="bench")
    probe("after VACUUM")
    cl.psql("SELECT tides_flush()", db="bench") if am == "tides" else None
    probe("after tides_flush()")
    cl.psql("SELECT tides_compact()", db="bench") if am == "tides" else None
    probe("after tides_compact()")
    cl.psql("VACUUM pgbench_branches, pgbench_tellers", db="bench")
    probe("after 2nd VACUUM")
finally:
    cl.destroy()
