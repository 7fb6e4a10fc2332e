#!/bin/bash
so=$1; tag=$2
P="python3 /work/main/test/harness/pgcluster.py"; $P stop /tmp/xq >/dev/null 2>&1; cp $so /work/main/build/pg-private/usr/lib/postgresql/15/lib/tidesam.so; $P start /tmp/xq >/dev/null; B=/work/main/build/pg-private/usr/lib/postgresql/15/bin
Q="SET enable_hashjoin=off; SET enable_mergejoin=off; SET enable_seqscan=off; \\timing on
SELECT count(t.data) FROM (SELECT ((i::bigint*7919) % 999983)+1 AS k FROM generate_series(1,300000) i) g JOIN tp t ON t.transactionid = g.k;"
(for i in 1 2 3 4 5 6 7 8; do echo "$Q"; done | su postgres -c "$B/psql -h /tmp/xq/sock -p 5492 -U postgres -d postgres -qAt" > /tmp/nlp_$tag.out 2>&1 &)
sleep 4; perf record -a -g -o /tmp/perf_$tag.data -- sleep 8 >/dev/null 2>&1; sleep 8
grep Time /tmp/nlp_$tag.out | awk '$2 > 100 {printf "%s ", $2}'; echo
perf report -i /tmp/perf_$tag.data --no-children --comm postgres --sort sym -g none --stdio 2>/dev/null | grep -v "^#" | grep -v "^$" | head -12
