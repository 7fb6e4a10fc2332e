--
-- index_scan_parallel: parallel index scans and parallel index-only scans of
-- tides_btree indexes (forced with the parallel cost settings): every entry
-- goes to exactly one participant, in order within each, so the results
-- equal those of serial scans -- forward, backward, over several intervals
-- (IN lists), with filters the intervals cannot apply, rescanned, and with
-- rows the scanning transaction changed.
--
CREATE TABLE ps (id int, k int, g int, pad text) USING tides;
INSERT INTO ps SELECT i, (i * 7919) % 30011, i % 10, repeat('x', 10 + i % 30)
FROM generate_series(1, 30000) i;
CREATE INDEX ps_k ON ps USING tides_btree (k);
CREATE UNIQUE INDEX ps_id ON ps USING tides_btree (id);
CREATE INDEX ps_gk ON ps USING tides_btree (g, k);
VACUUM ANALYZE ps;

-- the references: serial scans
SET max_parallel_workers_per_gather = 0;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE ref AS
SELECT 'k range' AS q, count(*) AS n, sum(id) AS s, sum(k) AS sk FROM ps WHERE k BETWEEN 1000 AND 25000
UNION ALL SELECT 'k all', count(*), sum(id), sum(k) FROM ps WHERE k >= 0
UNION ALL SELECT 'g in', count(*), sum(id), sum(k) FROM ps WHERE g IN (1, 4, 7) AND k < 20000
UNION ALL SELECT 'k filter', count(*), sum(id), sum(k) FROM ps WHERE k > 5 AND k % 3 = 0
UNION ALL SELECT 'g only', count(*), 0, sum(k) FROM ps WHERE g IN (1, 4, 7) AND k < 20000;
SELECT * FROM ref ORDER BY q;
RESET ALL;

SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET min_parallel_index_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

-- the workers alone, then with the leader (plain index scans: rows fetched)
SET enable_indexonlyscan = off;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(id), sum(k) FROM ps WHERE k BETWEEN 1000 AND 25000;
SELECT 'k range' AS q, count(*) AS n, sum(id) AS s, sum(k) AS sk FROM ps WHERE k BETWEEN 1000 AND 25000
EXCEPT SELECT * FROM ref;
SET parallel_leader_participation = on;
SELECT 'k range' AS q, count(*) AS n, sum(id) AS s, sum(k) AS sk FROM ps WHERE k BETWEEN 1000 AND 25000
EXCEPT SELECT * FROM ref;
SELECT 'k all' AS q, count(*) AS n, sum(id) AS s, sum(k) AS sk FROM ps WHERE k >= 0
EXCEPT SELECT * FROM ref;

-- several intervals, and a scan key applied as a filter
EXPLAIN (COSTS OFF) SELECT count(*), sum(id), sum(k) FROM ps WHERE g IN (1, 4, 7) AND k < 20000;
SELECT 'g in' AS q, count(*) AS n, sum(id) AS s, sum(k) AS sk FROM ps WHERE g IN (1, 4, 7) AND k < 20000
EXCEPT SELECT * FROM ref;
SELECT 'k filter' AS q, count(*) AS n, sum(id) AS s, sum(k) AS sk FROM ps WHERE k > 5 AND k % 3 = 0
EXCEPT SELECT * FROM ref;

-- parallel index-only scans (tuples formed from the entries)
RESET enable_indexonlyscan;
EXPLAIN (COSTS OFF) SELECT count(*), sum(k) FROM ps WHERE g IN (1, 4, 7) AND k < 20000;
SELECT 'g only' AS q, count(*) AS n, 0 AS s, sum(k) AS sk FROM ps WHERE g IN (1, 4, 7) AND k < 20000
EXCEPT SELECT * FROM ref;

-- order: each participant's entries in scan order, merged (both directions);
-- CPU made dear, so that dividing it among the participants pays
SET cpu_tuple_cost = 1;
SET cpu_index_tuple_cost = 1;
EXPLAIN (COSTS OFF) SELECT k, id FROM ps WHERE k > 100 ORDER BY k;
SELECT count(*) AS n, count(*) FILTER (WHERE prev > k) AS out_of_order FROM (
  SELECT k, lag(k) OVER () AS prev FROM (SELECT k, id FROM ps WHERE k > 100 ORDER BY k) s) t;
EXPLAIN (COSTS OFF) SELECT k, id FROM ps WHERE k < 29000 ORDER BY k DESC;
SELECT count(*) AS n, count(*) FILTER (WHERE prev < k) AS out_of_order FROM (
  SELECT k, lag(k) OVER () AS prev FROM (SELECT k, id FROM ps WHERE k < 29000 ORDER BY k DESC) s) t;
SELECT string_agg(id::text, ',') AS first_ids FROM (
  SELECT id FROM (SELECT k, id FROM ps WHERE k > 100 ORDER BY k) s LIMIT 8) f;
SET max_parallel_workers_per_gather = 0;
SELECT string_agg(id::text, ',') AS first_ids FROM (
  SELECT id FROM (SELECT k, id FROM ps WHERE k > 100 ORDER BY k) s LIMIT 8) f;
SET max_parallel_workers_per_gather = 2;
RESET cpu_tuple_cost;
RESET cpu_index_tuple_cost;

-- rescans: the inner side of a nested loop (the outer side a temporary
-- table, which workers cannot read), run again for each outer row
CREATE TEMP TABLE outer_g (g int);
INSERT INTO outer_g VALUES (2), (5), (8);
ANALYZE outer_g;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
EXPLAIN (COSTS OFF)
SELECT o.g, count(*), sum(ps.id) FROM outer_g o JOIN ps ON ps.g IN (3, 6) AND ps.k < 15000 AND ps.id % 10 <> o.g
GROUP BY o.g ORDER BY o.g;
SELECT o.g, count(*), sum(ps.id) FROM outer_g o JOIN ps ON ps.g IN (3, 6) AND ps.k < 15000 AND ps.id % 10 <> o.g
GROUP BY o.g ORDER BY o.g;
SET max_parallel_workers_per_gather = 0;
SELECT o.g, count(*), sum(ps.id) FROM outer_g o JOIN ps ON ps.g IN (3, 6) AND ps.k < 15000 AND ps.id % 10 <> o.g
GROUP BY o.g ORDER BY o.g;
SET max_parallel_workers_per_gather = 2;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- rows changed by the scanning transaction itself (its deferred index entries
-- are written before the workers start: src/runtime/xact.c)
BEGIN;
UPDATE ps SET k = k + 1 WHERE id % 4 = 0;
DELETE FROM ps WHERE id % 7 = 0;
SET LOCAL parallel_leader_participation = off;
SET LOCAL enable_indexonlyscan = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(id), sum(k) FROM ps WHERE k BETWEEN 1000 AND 25000;
SELECT count(*), sum(id), sum(k) FROM ps WHERE k BETWEEN 1000 AND 25000;
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT count(*), sum(id), sum(k) FROM ps WHERE k BETWEEN 1000 AND 25000;
ROLLBACK;

-- the workers returned rows (the leader did not take every chunk)
CREATE FUNCTION worker_rows(q text) RETURNS TABLE (launched int, worker_rows bigint)
LANGUAGE plpgsql AS $$
DECLARE
	plan json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, FORMAT JSON, COSTS OFF, TIMING OFF) ' || q INTO plan;
	RETURN QUERY
	WITH RECURSIVE nodes(n) AS (
		SELECT plan->0->'Plan'
		UNION ALL
		SELECT c FROM nodes, json_array_elements(nodes.n->'Plans') c
	)
	SELECT (SELECT (n->>'Workers Launched')::int FROM nodes WHERE n->>'Workers Launched' IS NOT NULL),
	       (SELECT sum((w->>'Actual Rows')::bigint)::bigint FROM nodes, json_array_elements(n->'Workers') w
	        WHERE n->>'Node Type' LIKE 'Index%Scan');
END $$;
SET parallel_leader_participation = off;
SELECT launched, worker_rows FROM worker_rows('SELECT id FROM ps WHERE k BETWEEN 1000 AND 25000');
RESET ALL;

DROP TABLE ps;
DROP FUNCTION worker_rows(text);
