#!/usr/bin/env bash
# bench/pg/index_build.sh -- CREATE INDEX: tides_btree on a tides table
# against btree on a heap table with the same rows, serial and parallel.
#
#   bash bench/pg/index_build.sh [ROWS] [ROUNDS]     (make bench-index-build)
#
# One cluster (shared_buffers 256 MB, 64 MB memtables, 128 MB block cache,
# maintenance_work_mem 64 MB -- the default, which lets
# plan_create_index_workers grant one worker -- relaxed durability,
# autovacuum off) holds ROWS (default 2,000,000) Insert Benchmark rows twice:
# in a tides table and, copied, in a heap table.  Each round builds the
# benchmark's three secondary indexes on each table, one statement at a
# time, with max_parallel_maintenance_workers 0 and then 2, engines
# alternating, and drops them.  Writes bench/results/index_build.csv (one
# row per build: round, engine, workers, seconds) and prints the ratios
# heap seconds / tides_btree seconds (above 1: tides_btree faster).
set -euo pipefail
cd "$(dirname "$0")/../.."
rows=${1:-2000000}
rounds=${2:-3}
results=${BENCH_RESULTS:-bench/results}
[[ $EUID -eq 0 ]] || { echo "index_build.sh needs root (initdb runs as postgres)" >&2; exit 1; }
make -s all
B=$(bash bench/pg/install_private.sh)
as() { runuser -u postgres -- "$@"; }
D=$(mktemp -d /var/tmp/tidesam-index-build.XXXXXX)
chown postgres "$D"
trap 'as "$B/pg_ctl" -D "$D/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$D"' EXIT
as "$B/initdb" -D "$D/data" -A trust >/dev/null
cat >>"$D/data/postgresql.conf" <<EOC
shared_preload_libraries = 'tidesam'
listen_addresses = ''
unix_socket_directories = '$D'
shared_buffers = 256MB
tides.memtable_size = 64MB
tides.block_cache_size = 128MB
maintenance_work_mem = 64MB
synchronous_commit = off
tides.sync_mode = none
autovacuum = off
max_wal_size = 8GB
EOC
as "$B/pg_ctl" -D "$D/data" -l "$D/log" -w start >/dev/null
P=("$B/psql" -h "$D" -d postgres -XAtq -v ON_ERROR_STOP=1)
as "${P[@]}" >/dev/null <<SQL
CREATE EXTENSION tidesam;
CREATE TABLE ib_tides (transactionid bigserial PRIMARY KEY, dateandtime timestamp, cashregisterid int,
                       customerid int, productid int, price int, data varchar(4000)) USING tides;
INSERT INTO ib_tides (dateandtime, cashregisterid, customerid, productid, price, data)
  SELECT now(), floor(random() * 1000)::int, floor(random() * 100000)::int,
         floor(random() * 10000)::int, floor(random() * 500)::int, substr(md5(random()::text), 1, 10)
  FROM generate_series(1, $rows);
CREATE TABLE ib_heap USING heap AS SELECT * FROM ib_tides;
VACUUM ANALYZE ib_heap;
ANALYZE ib_tides;
SELECT tides_flush();
SQL

build() {				# build ENGINE WORKERS: seconds for the three CREATE INDEX
	local t=ib_$1 m=btree t0 t1
	[[ $1 == tides ]] && m=tides_btree
	t0=$(date +%s.%N)
	as "${P[@]}" -c "SET max_parallel_maintenance_workers = $2" \
		-c "CREATE INDEX ${t}_market ON $t USING $m (productid, customerid, price)" \
		-c "CREATE INDEX ${t}_register ON $t USING $m (cashregisterid, customerid, price)" \
		-c "CREATE INDEX ${t}_pdc ON $t USING $m (price, dateandtime, customerid)" >/dev/null
	t1=$(date +%s.%N)
	as "${P[@]}" -c "DROP INDEX ${t}_market, ${t}_register, ${t}_pdc" >/dev/null
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }'
}

mkdir -p "$results"
out=$results/index_build.csv
echo "round,engine,workers,seconds" >"$out"
for r in $(seq 1 "$rounds"); do
	for w in 0 2; do
		for e in heap tides; do
			echo "$r,$([[ $e == tides ]] && echo tides_btree || echo heap),$w,$(build $e $w)" | tee -a "$out"
		done
	done
done
awk -F, 'NR > 1 { s[$2 "," $3] += $4; n[$2 "," $3]++ }
	END { for (w = 0; w <= 2; w += 2)
		printf "max_parallel_maintenance_workers=%d: heap %.2f s, tides_btree %.2f s (means): tides_btree/heap %.2fx\n",
			w, s["heap," w] / n["heap," w], s["tides_btree," w] / n["tides_btree," w],
			(s["heap," w] / n["heap," w]) / (s["tides_btree," w] / n["tides_btree," w]) }' "$out"
