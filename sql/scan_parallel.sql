--
-- scan_parallel: parallel sequential and parallel bitmap heap scans of a tides
-- table (forced with the parallel cost settings), and a query run wholly
-- in a parallel worker; results equal those of plain scans.
--
CREATE TABLE sc (id int, k int, g int, pad text) USING tides;
INSERT INTO sc SELECT i, (i * 7919) % 10007, i % 10, repeat('x', 20 + i % 50)
FROM generate_series(1, 20000) i;
CREATE INDEX sc_k ON sc (k);
CREATE INDEX sc_g ON sc (g);
CREATE INDEX sc_id ON sc (id);
VACUUM ANALYZE sc;

-- the reference: a sequential scan
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SET enable_tidscan = off;
SET max_parallel_workers_per_gather = 0;
SELECT count(*), sum(id), sum(k), sum(length(pad)) FROM sc;
SELECT count(*), sum(id) FROM sc WHERE k < 1000;
RESET ALL;

--
-- parallel scans
--
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET min_parallel_index_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(id), sum(k), sum(length(pad)) FROM sc;
SELECT count(*), sum(id), sum(k), sum(length(pad)) FROM sc;
SELECT g, count(*), sum(id) FROM sc GROUP BY g ORDER BY g;
SELECT count(*), sum(id) FROM sc WHERE k < 1000;
-- rows changed by the scanning transaction itself
BEGIN;
UPDATE sc SET k = k + 1 WHERE id % 4 = 0;
DELETE FROM sc WHERE id % 7 = 0;
SELECT count(*), sum(id), sum(k) FROM sc;
ROLLBACK;
SET parallel_leader_participation = on;
SELECT count(*), sum(id), sum(k), sum(length(pad)) FROM sc;
-- parallel bitmap heap scan
RESET enable_bitmapscan;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(id) FROM sc WHERE k < 5000 OR g = 3;
SELECT count(*), sum(id) FROM sc WHERE k < 5000 OR g = 3;
SET work_mem = '64kB';
SELECT count(*), sum(id) FROM sc WHERE k < 5000 OR g = 3;
RESET ALL;
-- everything in a parallel worker
SET force_parallel_mode = on;
SELECT count(*), sum(id) FROM sc WHERE k < 1000;
SELECT id FROM sc WHERE ctid = '(0,1)';
RESET force_parallel_mode;

DROP TABLE sc;
