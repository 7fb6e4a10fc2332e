#!/bin/bash
# One PL/pgSQL call updating ten rows N times in one transaction
# (UPDATE t SET n = n + 1 WHERE id = i % 10 + 1), on heap and on tides with
# a btree and with a tides_btree unique index; prints CSV:
#   engine,index,updates,seconds,seq_scan,idx_scan
# Needs a running server with tidesam loaded: PGHOST, PGPORT (psql as postgres).
set -euo pipefail
PSQL="${PSQL:-psql}"
run() {	# am index n
	"$PSQL" -X -q -A -t -d postgres -v ON_ERROR_STOP=1 <<SQL
SET client_min_messages = warning;
DROP TABLE IF EXISTS cl;
CREATE TABLE cl (id int, n int) USING $1 WITH (autovacuum_enabled = off);
CREATE UNIQUE INDEX cl_pk ON cl USING $2 (id);
INSERT INTO cl SELECT g, 0 FROM generate_series(1, 10) g;
CREATE OR REPLACE FUNCTION cl_loop(k int) RETURNS void LANGUAGE plpgsql AS
\$\$ BEGIN FOR i IN 1..k LOOP UPDATE cl SET n = n + 1 WHERE id = i % 10 + 1; END LOOP; END \$\$;

\o /dev/null
SELECT pg_stat_reset();
SELECT clock_timestamp() AS t0 \gset
SELECT cl_loop($3);
SELECT extract(epoch FROM clock_timestamp() - :'t0') AS secs \gset
SELECT pg_stat_force_next_flush();
\o
SELECT sum(n) = $3 AS sum_ok FROM cl \gset
\if :sum_ok
\else
\warn 'wrong sum'
\quit
\endif
SELECT '$1' || ',' || '$2' || ',' || $3 || ',' || round(:secs, 3) || ',' || seq_scan || ',' || idx_scan
  FROM pg_stat_user_tables WHERE relname = 'cl';
SQL
}
echo "engine,index,updates,seconds,seq_scan,idx_scan"
for n in ${LOOP_SIZES:-20000 40000 80000}; do
	run heap btree "$n"
	run tides btree "$n"
	run tides tides_btree "$n"
done
