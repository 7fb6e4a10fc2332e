#!/bin/bash
# pki.sh SO [N]: server backend CPU (postmaster's reaped children) per pk10 query, 1 client, N queries
B=/work/main/build/pg-private/usr/lib/postgresql/15/bin
N=${2:-20000}
cp "$1" /work/main/build/pg-private/usr/lib/postgresql/15/lib/tidesam.so
python3 /work/main/test/harness/pgcluster.py stop /tmp/xl >/dev/null 2>&1; python3 /work/main/test/harness/pgcluster.py start /tmp/xl >/dev/null
su postgres -c "$B/pgbench -n -M prepared -h /tmp/xl/sock -p 5493 -U postgres -c 2 -j 2 -T 4 -f /tmp/pk10.sql postgres" >/dev/null 2>&1
sleep 1; pm=$(head -1 /tmp/xl/data/postmaster.pid)
c0=$(awk '{print $16 + $17}' /proc/$pm/stat)
su postgres -c "$B/pgbench -n -M prepared -h /tmp/xl/sock -p 5493 -U postgres -c 1 -j 1 -t $N -f /tmp/pk10.sql postgres" >/dev/null 2>&1
sleep 0.5
c1=$(awk '{print $16 + $17}' /proc/$pm/stat)
echo "$(basename $1 .so) $(( (c1 - c0) * 10000000 / N )) ns/query"
