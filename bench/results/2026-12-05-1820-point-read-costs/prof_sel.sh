#!/bin/bash
# prof_sel.sh VERSION AM: profile select-only c=4 prepared; prints txns
v=$1; am=$2
bash /tmp/sel.sh $v $am > /dev/null 2>&1
d=/var/tmp/sel-$v-$am; bin=/work/wt/$v/build/pg-private/usr/lib/postgresql/15/bin; port=$(cat $d/port)
(su postgres -c "$bin/pgbench -h $d -p $port -n -S -M prepared -c 4 -j 2 -T 14 postgres" > /tmp/prof-$am.out 2>&1 &)
sleep 2; perf record -F 2999 -g -a -o /tmp/perf-$am.data -- sleep 10 > /dev/null 2>&1; sleep 3
grep tps /tmp/prof-$am.out
su postgres -c "$bin/pg_ctl -D $d/data -m fast stop" > /dev/null
