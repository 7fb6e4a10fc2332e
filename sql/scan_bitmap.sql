--
-- scan_bitmap: bitmap heap scans (exact and lossy pages, BitmapAnd / BitmapOr,
-- rechecks after updates) and index / index-only scans, forwards and
-- backwards, on a tides table.  Plans are forced with enable_* settings.
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
-- bitmap scans
--
SET enable_seqscan = off;
SET enable_indexscan = off;
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT count(*), sum(id) FROM sc WHERE k < 1000;
SELECT count(*), sum(id) FROM sc WHERE k < 1000;
EXPLAIN (COSTS OFF) SELECT count(*), sum(id) FROM sc WHERE k < 1000 OR g = 3;
SELECT count(*), sum(id) FROM sc WHERE k < 1000 OR g = 3;
EXPLAIN (COSTS OFF) SELECT count(*), sum(id) FROM sc WHERE k < 5000 AND g = 3;
SELECT count(*), sum(id) FROM sc WHERE k < 5000 AND g = 3;
-- lossy bitmaps: too little work_mem for one bit per row
SET work_mem = '64kB';
SELECT count(*), sum(id) FROM sc WHERE k < 9000;
SELECT count(*), sum(id) FROM sc WHERE k < 9000 OR g = 3;
SELECT count(*), sum(id) FROM sc WHERE k < 9000 AND g = 3;
RESET work_mem;
-- after updates and deletes the bitmap scan rechecks visibility
BEGIN;
UPDATE sc SET g = 100 WHERE id % 3 = 0;
DELETE FROM sc WHERE id % 5 = 0;
SELECT count(*), sum(id) FROM sc WHERE g = 3;
SELECT count(*), sum(id) FROM sc WHERE g = 100;
SET work_mem = '64kB';
SELECT count(*), sum(id) FROM sc WHERE g = 3 OR g = 100 OR k < 9000;
RESET work_mem;
ROLLBACK;
SELECT count(*), sum(id) FROM sc WHERE g = 3;
RESET ALL;

--
-- index scans and index-only scans, forwards and backwards
--
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, k FROM sc WHERE k BETWEEN 100 AND 104 ORDER BY k;
SELECT id, k FROM sc WHERE k BETWEEN 100 AND 104 ORDER BY k DESC;
EXPLAIN (COSTS OFF) SELECT k FROM sc WHERE k < 100 ORDER BY k DESC;
SELECT count(*), sum(k) FROM (SELECT k FROM sc WHERE k < 100 ORDER BY k DESC) s;
-- an index-only scan must not return rows deleted since the last VACUUM
BEGIN;
DELETE FROM sc WHERE k < 50;
SELECT count(*), sum(k) FROM (SELECT k FROM sc WHERE k < 100 ORDER BY k DESC) s;
ROLLBACK;
DELETE FROM sc WHERE k < 10;
SELECT count(*), sum(k) FROM (SELECT k FROM sc WHERE k < 100 ORDER BY k DESC) s;
VACUUM sc;
SELECT count(*), sum(k) FROM (SELECT k FROM sc WHERE k < 100 ORDER BY k DESC) s;
RESET ALL;

DROP TABLE sc;
