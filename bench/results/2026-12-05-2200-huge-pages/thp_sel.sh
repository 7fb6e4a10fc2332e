#!/bin/bash
# thp_sel.sh ROUNDS AM: select-only (s=10, 4 clients, prepared) on the build in /work/wt/$V (V=thp),
# tides.transparent_huge_pages on vs off (run with shmem_enabled = advise),
# alternating; tps and server CPU us per txn
. "$(dirname "$0")/../2026-12-05-1820-point-read-costs/cluster.sh"
rounds=$1; am=${2:-tides}
for g in on off; do
  scratch_cluster ${V:-thp} /var/tmp/thp-$g "default_table_access_method = $am\nhuge_pages = off\ntides.transparent_huge_pages = $g\n"
  run "$bin/pgbench -h $d -p $port -i -s 10 -q postgres" > /dev/null 2>&1
  run "$P -c 'VACUUM ANALYZE'"; [ $am = tides ] && run "$P -c 'SELECT tides_flush()'" > /dev/null; sleep 3
done
for r in $(seq 1 $rounds); do
  for g in on off; do
    d=/var/tmp/thp-$g; port=$(cat $d/port)
    c0=$(bash "$(dirname "$0")/../2026-12-05-1820-point-read-costs/cpu_of.sh" $d/data)
    out=$(su postgres -c "$bin/pgbench -h $d -p $port -n -S -M prepared -c 4 -j 2 -T 12 postgres")
    c1=$(bash "$(dirname "$0")/../2026-12-05-1820-point-read-costs/cpu_of.sh" $d/data)
    t=$(echo "$out" | grep "^tps" | awk '{print $3}'); n=$(echo "$out" | grep "actually processed" | awk '{print $NF}')
    hp=$(grep ShmemPmdMapped /proc/$(head -1 $d/data/postmaster.pid)/smaps_rollup | awk '{print $2}')
    echo "$am thp=$g round $r: tps $t cpu_us/txn $(echo "scale=2; ($c1 - $c0) * 10000 / $n" | bc)"
  done
done
grep -E "ShmemHugePages" /proc/meminfo
for g in on off; do su postgres -c "$bin/pg_ctl -D /var/tmp/thp-$g/data -m fast stop" > /dev/null; done
