--
-- scan_tid: TID scans and TID range scans (ctid = ..., ctid = ANY, ctid > ...,
-- WHERE CURRENT OF) on tides tables.
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
-- TID scans
--
-- the first row inserted into a new table is at (0,1), as in heap
SELECT id FROM sc WHERE ctid = '(0,1)';
EXPLAIN (COSTS OFF) SELECT id FROM sc WHERE ctid = '(0,1)';
-- TIDs that hold no row
SELECT count(*) FROM sc WHERE ctid = '(0,0)';
SELECT count(*) FROM sc WHERE ctid = '(4000000,1)';
SELECT count(*) FROM sc WHERE ctid = '(0,65535)';
-- a row found by its own TID, and a set of rows by a TID list
SELECT id FROM sc WHERE ctid = (SELECT ctid FROM sc WHERE id = 12345);
SELECT count(*), sum(id) FROM sc
WHERE ctid = ANY (ARRAY(SELECT ctid FROM sc WHERE id % 1000 = 0));
EXPLAIN (COSTS OFF) SELECT count(*) FROM sc
WHERE ctid = ANY (ARRAY(SELECT ctid FROM sc WHERE id % 1000 = 0));
-- an updated row's old TID no longer finds it; the new TID does
CREATE TABLE sc_tid (id int, v int) USING tides;
INSERT INTO sc_tid SELECT g, 0 FROM generate_series(1, 5) g;
SELECT ctid AS old_tid FROM sc_tid WHERE id = 3 \gset
UPDATE sc_tid SET v = 1 WHERE id = 3;
SELECT count(*) FROM sc_tid WHERE ctid = :'old_tid';
SELECT id, v FROM sc_tid WHERE ctid = (SELECT ctid FROM sc_tid WHERE id = 3);
-- a deleted row is found by no TID
DELETE FROM sc_tid WHERE id = 4;
SELECT count(*) FROM sc_tid WHERE ctid = ANY (ARRAY(SELECT ctid FROM sc_tid));
-- WHERE CURRENT OF uses the TID of the cursor's row
BEGIN;
DECLARE tc CURSOR FOR SELECT id FROM sc_tid WHERE id >= 2 ORDER BY id FOR UPDATE;
FETCH 2 FROM tc;
UPDATE sc_tid SET v = 99 WHERE CURRENT OF tc RETURNING id, v;
DELETE FROM sc_tid WHERE CURRENT OF tc RETURNING id;
COMMIT;
SELECT * FROM sc_tid ORDER BY id;
DROP TABLE sc_tid;

--
-- TID range scans, on a table of fixed-width rows loaded in id order (so
-- TIDs grow with id, in heap too)
--
CREATE TABLE sc_range (id int, v int) USING tides;
INSERT INTO sc_range SELECT g, g * 2 FROM generate_series(1, 5000) g;
CREATE INDEX sc_range_id ON sc_range (id);
ANALYZE sc_range;
SELECT count(*), min(id), max(id) FROM sc_range
WHERE ctid >= (SELECT ctid FROM sc_range WHERE id = 100) AND ctid <= (SELECT ctid FROM sc_range WHERE id = 200);
EXPLAIN (COSTS OFF) SELECT count(*) FROM sc_range
WHERE ctid >= (SELECT ctid FROM sc_range WHERE id = 100) AND ctid <= (SELECT ctid FROM sc_range WHERE id = 200);
SELECT count(*), min(id), max(id) FROM sc_range
WHERE ctid > (SELECT ctid FROM sc_range WHERE id = 100) AND ctid < (SELECT ctid FROM sc_range WHERE id = 200);
SELECT count(*), min(id), max(id) FROM sc_range WHERE ctid > (SELECT ctid FROM sc_range WHERE id = 4990);
SELECT count(*), min(id), max(id) FROM sc_range WHERE ctid < (SELECT ctid FROM sc_range WHERE id = 11);
SELECT count(*) FROM sc_range WHERE ctid >= '(0,1)';
SELECT count(*) FROM sc_range WHERE ctid < '(0,1)';
SELECT count(*) FROM sc_range WHERE ctid > '(4294967294,1)';
SELECT count(*) FROM sc_range WHERE ctid <= '(0,1)';
-- rows of the range that were deleted or updated are returned as the
-- snapshot sees them
BEGIN;
DELETE FROM sc_range WHERE id BETWEEN 150 AND 159;
UPDATE sc_range SET v = -v WHERE id BETWEEN 160 AND 164;
SELECT count(*), min(id), max(id), sum(v) FROM sc_range
WHERE ctid >= (SELECT ctid FROM sc_range WHERE id = 100) AND ctid <= (SELECT ctid FROM sc_range WHERE id = 200);
ROLLBACK;
-- a TID range scan as the inner side of a nested loop (rescans)
SELECT count(*), sum(r.id) FROM generate_series(1, 5) s,
LATERAL (SELECT id FROM sc_range
         WHERE ctid >= (SELECT ctid FROM sc_range WHERE id = s * 100)
           AND ctid < (SELECT ctid FROM sc_range WHERE id = s * 100 + 10)) r;
DROP TABLE sc_range;

DROP TABLE sc;
