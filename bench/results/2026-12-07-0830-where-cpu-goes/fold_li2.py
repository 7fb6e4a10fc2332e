#!/usr/bin/env python3
"""Fold the samples of an ibench l.i2 perf.data into what a transaction does.

usage: perf script -i ibench-io-tides_btree-li2.perf.data -F comm,pid,ip,sym > li2.txt
       python3 fold_li2.py li2.txt
A sample goes to the first category whose function is on its stack."""
import collections
import sys

CATS = [
    ("min(): InitPlan (index walk, row fetches, executor)", "ExecSetParamPlan"),
    ("background workers (compaction, flush)", "trt_worker_main"),
    ("INSERT: index entries", "ExecInsertIndexTuples"),
    ("commit", "CommitTransactionCommand"),
    ("planning", "pg_plan_queries"),
    ("client protocol (recv/send)", "pq_getbyte"),
    ("client protocol (recv/send)", "__send"),
    ("row fetches (DELETE's scan)", "index_fetch_heap"),
    ("index walk (DELETE's scan)", "tidx_gettuple"),
    ("engine writes (DELETE's versions)", "trt_engine_write"),
    ("other backend work", "PostgresMain"),
]

frames_of = lambda s: [(l.split(None, 1)[1].strip() if len(l.split(None, 1)) > 1 else "?")
                       for l in s.strip().split("\n")[1:]]
counts = collections.Counter()
total = 0
for s in open(sys.argv[1]).read().split("\n\n"):
    if not s.strip():
        continue
    total += 1
    fs = set(frames_of(s))
    counts[next((c for c, f in CATS if f in fs), "other processes, kernel idle")] += 1
for c, n in counts.most_common():
    print("%6.2f%%  %s" % (100.0 * n / total, c))
