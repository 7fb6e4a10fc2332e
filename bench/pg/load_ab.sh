#!/usr/bin/env bash
# bench/pg/load_ab.sh -- CPU per inserted row, one build against another.
#
#   bash bench/pg/load_ab.sh REV [PAIRS]       (make bench-load-ab REV=...)
#
# Builds REV in a git worktree (build/ab-<rev>) and this tree, installs each
# into its own private copy of the server (install_private.sh), and times,
# PAIRS times (default 4) with the two builds alternating, one session
# loading the Insert Benchmark's table -- a tides_btree primary key and its
# three secondary tides_btree indexes -- with ten INSERT ... SELECT of
# 50,000 generated rows into a fresh cluster (shared_buffers 64 MB, 16 MB
# memtables, 64 MB block cache, relaxed durability, autovacuum off).  One
# client and no IO to speak of: the time is the server's CPU per row.
# Output: one line per load on stdout and in bench/results/load_ab.csv
# (build, commit, pair, seconds).  Needs root (initdb runs as postgres).
set -euo pipefail
cd "$(dirname "$0")/../.."
rev=${1:?usage: load_ab.sh REV [PAIRS]}
pairs=${2:-4}
results=${BENCH_RESULTS:-bench/results}
[[ $EUID -eq 0 ]] || { echo "load_ab.sh needs root (initdb runs as postgres)" >&2; exit 1; }

other=build/ab-$(git rev-parse --short "$rev")
[[ -d $other ]] || git worktree add -f --detach "$other" "$rev" >/dev/null
make -s -C "$other" all
make -s all
bins=("$(cd "$other" && bash bench/pg/install_private.sh)" "$(bash bench/pg/install_private.sh)")
names=("$(git -C "$other" rev-parse --short HEAD)" "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src || echo +)")

as() { runuser -u postgres -- "$@"; }
load() {				# load BINDIR: seconds for the ten statements
	local B=$1 D
	D=$(mktemp -d /var/tmp/tidesam-load-ab.XXXXXX)
	chown postgres "$D"
	as "$B/initdb" -D "$D/data" -A trust >/dev/null
	cat >>"$D/data/postgresql.conf" <<EOC
shared_preload_libraries = 'tidesam'
listen_addresses = ''
unix_socket_directories = '$D'
shared_buffers = 64MB
tides.memtable_size = 16MB
tides.block_cache_size = 64MB
synchronous_commit = off
tides.sync_mode = none
autovacuum = off
EOC
	as "$B/pg_ctl" -D "$D/data" -l "$D/log" -w start >/dev/null
	local P=("$B/psql" -h "$D" -d postgres -XAtq -v ON_ERROR_STOP=1)
	as "${P[@]}" >/dev/null <<'SQL'
CREATE EXTENSION tidesam;
CREATE TABLE ib (transactionid bigserial, dateandtime timestamp, cashregisterid int, customerid int,
                 productid int, price int, data varchar(4000)) USING tides;
CREATE UNIQUE INDEX ib_pk ON ib USING tides_btree (transactionid);
ALTER TABLE ib ADD PRIMARY KEY USING INDEX ib_pk;
CREATE INDEX ib_market ON ib USING tides_btree (productid, customerid, price);
CREATE INDEX ib_register ON ib USING tides_btree (cashregisterid, customerid, price);
CREATE INDEX ib_pdc ON ib USING tides_btree (price, dateandtime, customerid);
SQL
	local t0 t1
	t0=$(date +%s.%N)
	for _ in $(seq 1 10); do
		as "${P[@]}" -c "INSERT INTO ib (dateandtime, cashregisterid, customerid, productid, price, data)
			SELECT now(), floor(random() * 1000)::int, floor(random() * 100000)::int,
			       floor(random() * 10000)::int, floor(random() * 500)::int, substr(md5(random()::text), 1, 10)
			FROM generate_series(1, 50000)" >/dev/null
	done
	t1=$(date +%s.%N)
	as "$B/pg_ctl" -D "$D/data" -m immediate stop >/dev/null
	rm -rf "$D"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }'
}

mkdir -p "$results"
echo "build,commit,pair,seconds" >"$results/load_ab.csv"
for p in $(seq 1 "$pairs"); do
	for i in 0 1; do
		s=$(load "${bins[$i]}")
		echo "$([[ $i -eq 0 ]] && echo other || echo this),${names[$i]},$p,$s" | tee -a "$results/load_ab.csv"
	done
done
