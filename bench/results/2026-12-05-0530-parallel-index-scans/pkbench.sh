#!/bin/bash
# pkbench.sh SO SECS: install SO as tidesam.so, restart /tmp/xl, run point lookups (1 key, IN 10 keys), 2 clients
B=/work/main/build/pg-private/usr/lib/postgresql/15/bin
cp "$1" /work/main/build/pg-private/usr/lib/postgresql/15/lib/tidesam.so
python3 /work/main/test/harness/pgcluster.py stop /tmp/xl >/dev/null 2>&1; python3 /work/main/test/harness/pgcluster.py start /tmp/xl >/dev/null
printf '\\set k random(300001, 2300000)\nSELECT transactionid, productid, data FROM pk_t WHERE transactionid = :k;\n' > /tmp/pk1.sql
printf '\\set k0 random(300001, 2300000)\n\\set k1 random(300001, 2300000)\n\\set k2 random(300001, 2300000)\n\\set k3 random(300001, 2300000)\n\\set k4 random(300001, 2300000)\n\\set k5 random(300001, 2300000)\n\\set k6 random(300001, 2300000)\n\\set k7 random(300001, 2300000)\n\\set k8 random(300001, 2300000)\n\\set k9 random(300001, 2300000)\nSELECT transactionid, productid, data FROM pk_t WHERE transactionid IN (:k0, :k1, :k2, :k3, :k4, :k5, :k6, :k7, :k8, :k9);\n' > /tmp/pk10.sql
chmod 644 /tmp/pk1.sql /tmp/pk10.sql
# warm
su postgres -c "$B/pgbench -n -M prepared -h /tmp/xl/sock -p 5493 -U postgres -c 2 -j 2 -T 5 -f /tmp/pk10.sql postgres" >/dev/null 2>&1
for f in pk1 pk10; do
  r=$(su postgres -c "$B/pgbench -n -M prepared -h /tmp/xl/sock -p 5493 -U postgres -c 2 -j 2 -T ${2:-10} -f /tmp/$f.sql postgres" 2>&1 | grep "^tps" | awk '{print $3}')
  echo "$(basename $1) $f $r"
done
