#!/bin/bash
# visits.sh VERSION: select-only on a fresh scale-10 tides cluster; block cache visits and filter probes per transaction
v=$1
bash /tmp/sel.sh $v tides > /dev/null 2>&1
d=/var/tmp/sel-$v-tides; bin=/work/wt/$v/build/pg-private/usr/lib/postgresql/15/bin; port=$(cat $d/port)
P="$bin/psql -h $d -p $port -d postgres -qAt"
q="SELECT string_agg(value::text, ' ' ORDER BY name) FROM tides_stats() WHERE name IN ('cache_hits','cache_misses','bloom_checked','bloom_useful')"
lv=$(su postgres -c "$P -c \"SELECT string_agg(name||' '||value, ', ') FROM tides_stats() WHERE name LIKE 'level%files' AND value > 0\"")
s0=$(su postgres -c "$P -c \"SELECT string_agg(name || '=' || value, ' ' ORDER BY name) FROM tides_stats() WHERE name IN ('cache_hits','cache_misses','bloom_checked','bloom_useful')\""); echo "$s0"
n=20000
su postgres -c "$bin/pgbench -h $d -p $port -n -S -M prepared -c 4 -j 2 -t $((n/4)) postgres" > /dev/null
s1=$(su postgres -c "$P -c \"SELECT string_agg(name || '=' || value, ' ' ORDER BY name) FROM tides_stats() WHERE name IN ('cache_hits','cache_misses','bloom_checked','bloom_useful')\""); echo "$s1"
echo "$v ($lv): per transaction: cache visits $(echo "scale=2; ($h1-$h0+$m1-$m0)/$n" | bc), filter probes $(echo "scale=2; ($b1-$b0)/$n" | bc), filter negatives $(echo "scale=2; ($u1-$u0)/$n" | bc)"
su postgres -c "$bin/pg_ctl -D $d/data -m fast stop" > /dev/null
