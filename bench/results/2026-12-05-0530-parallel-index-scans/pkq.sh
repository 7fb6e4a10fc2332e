#!/bin/bash
# pkq.sh SO SECS: pk10 with 1 client
B=/work/main/build/pg-private/usr/lib/postgresql/15/bin
cp "$1" /work/main/build/pg-private/usr/lib/postgresql/15/lib/tidesam.so
python3 /work/main/test/harness/pgcluster.py stop /tmp/xl >/dev/null 2>&1; python3 /work/main/test/harness/pgcluster.py start /tmp/xl >/dev/null
su postgres -c "$B/pgbench -n -M prepared -h /tmp/xl/sock -p 5493 -U postgres -c 2 -j 2 -T 4 -f /tmp/pk10.sql postgres" >/dev/null 2>&1
r=$(su postgres -c "$B/pgbench -n -M prepared -h /tmp/xl/sock -p 5493 -U postgres -c 1 -j 1 -T ${2:-8} -f /tmp/pk10.sql postgres" 2>&1 | grep "^tps" | awk '{print int($3)}')
echo "$(basename $1 .so) $r"
