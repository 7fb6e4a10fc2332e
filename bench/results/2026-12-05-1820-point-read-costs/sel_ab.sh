#!/bin/bash
# sel_ab.sh A B [rounds]: select-only s=10 c=4 prepared on tides, clusters of versions A and B, runs alternating; tps and server CPU us per txn
a=$1; b=$2; rounds=${3:-4}; am=${AM:-tides}
for v in $a $b; do hp=off; case $v in *hp) hp=on;; esac; HP=$hp bash /tmp/sel.sh $v $am > /dev/null 2>&1; done
for r in $(seq 1 $rounds); do
  for v in $a $b; do
    d=/var/tmp/sel-$v-$am; bin=/work/wt/$v/build/pg-private/usr/lib/postgresql/15/bin; port=$(cat $d/port)
    c0=$(/tmp/cpu_of.sh $d/data)
    out=$(su postgres -c "$bin/pgbench -h $d -p $port -n -S -M prepared -c 4 -j 2 -T 12 postgres")
    c1=$(/tmp/cpu_of.sh $d/data)
    t=$(echo "$out" | grep "^tps" | awk '{print $3}'); n=$(echo "$out" | grep "actually processed" | awk '{print $NF}')
    echo "$v round $r: tps $t cpu_us/txn $(echo "scale=2; ($c1 - $c0) * 10000 / $n" | bc)"
  done
done
for v in $a $b; do su postgres -c "/work/wt/$v/build/pg-private/usr/lib/postgresql/15/bin/pg_ctl -D /var/tmp/sel-$v-$am/data -m fast stop" > /dev/null; done
