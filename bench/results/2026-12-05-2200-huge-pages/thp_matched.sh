#!/bin/bash
# thp_matched.sh ROUNDS (build in /work/wt/$V, V=thp): select-only (s=10, 4 clients, prepared), heap and tides, each with 4 kB pages and with
# transparent huge pages for its shared memory (heap: clusters made under shmem_enabled=always; tides: under advise
# with tides.transparent_huge_pages = on), alternating; tps and server CPU us per txn
. "$(dirname "$0")/../2026-12-05-1820-point-read-costs/cluster.sh"
rounds=$1
T=/sys/kernel/mm/transparent_hugepage/shmem_enabled
mk() {  # name am thp-mode guc
  echo $3 > $T
  scratch_cluster ${V:-thp} /var/tmp/m-$1 "default_table_access_method = $2\nhuge_pages = off\ntides.transparent_huge_pages = $4\n"
  run "$bin/pgbench -h $d -p $port -i -s 10 -q postgres" > /dev/null 2>&1
  run "$P -c 'VACUUM ANALYZE'"; [ $2 = tides ] && run "$P -c 'SELECT tides_flush()'" > /dev/null; sleep 3
  run "$bin/pgbench -h $d -p $port -n -S -M prepared -c 4 -j 2 -T 5 postgres" > /dev/null
  echo "$1: postmaster+children ShmemPmdMapped $(for p in $(head -1 $d/data/postmaster.pid) $(pgrep -P $(head -1 $d/data/postmaster.pid)); do grep ShmemPmdMapped /proc/$p/smaps_rollup 2>/dev/null | awk '{print $2}'; done | sort -n | tail -1) kB (largest)"
}
mk heap-4k heap never off
mk tides-4k tides advise off
mk heap-thp heap always off
mk tides-thp tides advise on
echo never > $T
for r in $(seq 1 $rounds); do
  for c in heap-4k heap-thp tides-4k tides-thp; do
    d=/var/tmp/m-$c; port=$(cat $d/port)
    c0=$(bash "$(dirname "$0")/../2026-12-05-1820-point-read-costs/cpu_of.sh" $d/data)
    out=$(su postgres -c "$bin/pgbench -h $d -p $port -n -S -M prepared -c 4 -j 2 -T 10 postgres")
    c1=$(bash "$(dirname "$0")/../2026-12-05-1820-point-read-costs/cpu_of.sh" $d/data)
    t=$(echo "$out" | grep "^tps" | awk '{print $3}'); n=$(echo "$out" | grep "actually processed" | awk '{print $NF}')
    echo "$c round $r: tps $t cpu_us/txn $(echo "scale=2; ($c1 - $c0) * 10000 / $n" | bc)"
  done
done
for c in heap-4k heap-thp tides-4k tides-thp; do su postgres -c "$bin/pg_ctl -D /var/tmp/m-$c/data -m fast stop" > /dev/null; done
