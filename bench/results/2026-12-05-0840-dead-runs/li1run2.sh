#!/bin/bash
# li2run2.sh SECS: two clients, each on its own table (t1, t2), l.i2-like; pkey stats per scan
B=/work/main/build/pg-private/usr/lib/postgresql/15/bin; PS="$B/psql -h /tmp/xi/sock -p 5494 -U postgres -d postgres -qAt"
q="select indexrelname, idx_scan, idx_tup_read, idx_tup_fetch from pg_stat_user_indexes where indexrelname like 't%_pkey' order by 1"
su postgres -c "$PS -c \"select pg_stat_reset()\"" >/dev/null
for n in t1 t2; do su postgres -c "cd /tmp && $B/pgbench -n -M prepared -h /tmp/xi/sock -p 5494 -U postgres -c 1 -T $1 -f /tmp/li1_$n.sql postgres" > /tmp/li2_$n.out 2>&1 & done
wait
grep -h tps /tmp/li2_t1.out /tmp/li2_t2.out
sleep 1
su postgres -c "$PS -c \"select pg_stat_force_next_flush()\" -c \"$q\""
