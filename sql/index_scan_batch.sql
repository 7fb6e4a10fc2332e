--
-- A serial scan of single keys (`= ANY`, `IN (...)`) of a tides_btree index
-- over a tides table reads its entries in batches of up to 64 and asks the
-- engine to read their rows' blocks ahead (src/index/tidx_scan.c,
-- "Batches").  What it returns must not change: every batch boundary, a
-- change of direction inside a batch, mark/restore (a merge join), entries
-- of deleted rows that the scan kills, rows updated meanwhile.
--
SET client_min_messages = warning;
CREATE TABLE bt (k int, v text) USING tides WITH (autovacuum_enabled = off);
CREATE UNIQUE INDEX bt_k ON bt USING tides_btree (k);
CREATE TABLE bt_ref (k int, v text) USING heap;
INSERT INTO bt SELECT i, 'v' || i FROM generate_series(1, 5000) i;
INSERT INTO bt_ref SELECT * FROM bt;
-- on disk, in files the block cache has not seen: the first batch asks for blocks
SELECT tides_flush();
SELECT tides_compact();

SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM bt WHERE k = ANY ('{1,2,3}');

CREATE FUNCTION bt_diff(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    n1 bigint;
    n2 bigint;
BEGIN
    SET LOCAL enable_seqscan = off;
    SET LOCAL enable_bitmapscan = off;
    EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x', q, replace(q, ' bt ', ' bt_ref ')) INTO n1;
    EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x', replace(q, ' bt ', ' bt_ref '), q) INTO n2;
    RETURN n1 + n2;
END
$$;

SELECT name, value AS prefetched FROM tides_stats() WHERE name = 'blocks_prefetched' \gset before_
-- lists of 1 to 200 keys: none, one, and several batches, with keys absent
SELECT n, bt_diff(format('SELECT k, v FROM bt WHERE k = ANY (ARRAY(SELECT generate_series(1, %s * 37, 37)))', n))
FROM unnest('{1, 2, 63, 64, 65, 128, 129, 200}'::int[]) n;
SELECT count(*), min(k), max(k) FROM bt WHERE k = ANY (ARRAY(SELECT generate_series(-50, 5050)));
SELECT value > :before_prefetched AS asked_for_blocks FROM tides_stats() WHERE name = 'blocks_prefetched';

-- order and direction: a cursor over three batches, turning inside them
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT k FROM bt WHERE k = ANY (ARRAY(SELECT generate_series(10, 1600, 10))) ORDER BY k;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH 70 FROM c;
FETCH BACKWARD 5 FROM c;
FETCH ABSOLUTE 129 FROM c;
FETCH BACKWARD 1 FROM c;
FETCH FORWARD 1 FROM c;
FETCH LAST FROM c;
FETCH BACKWARD 1 FROM c;
FETCH FIRST FROM c;
MOVE FORWARD ALL IN c;
FETCH BACKWARD 1 FROM c;
COMMIT;
BEGIN;
DECLARE d SCROLL CURSOR FOR SELECT k FROM bt WHERE k = ANY (ARRAY(SELECT generate_series(10, 1600, 10))) ORDER BY k DESC;
FETCH 66 FROM d;
FETCH BACKWARD 3 FROM d;
COMMIT;

-- mark/restore: a merge join whose inner side is a batched scan, with duplicates outside
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_material = off;
EXPLAIN (COSTS OFF)
SELECT o.x, bt.v FROM (SELECT x FROM generate_series(1, 300) x, generate_series(1, 2) y ORDER BY x) o
JOIN bt ON bt.k = o.x WHERE bt.k = ANY (ARRAY(SELECT generate_series(2, 300, 3)));
SELECT count(*), sum(o.x), sum(length(bt.v)), sum(substr(bt.v, 2)::int) FROM (SELECT x FROM generate_series(1, 300) x, generate_series(1, 2) y ORDER BY x) o
JOIN bt ON bt.k = o.x WHERE bt.k = ANY (ARRAY(SELECT generate_series(2, 300, 3)));
RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_material;

-- deleted rows (their entries killed by the scans) and updated ones (new entries)
DELETE FROM bt WHERE k % 5 = 0;
DELETE FROM bt_ref WHERE k % 5 = 0;
UPDATE bt SET v = v || 'u', k = k + 10000 WHERE k % 7 = 0;
UPDATE bt_ref SET v = v || 'u', k = k + 10000 WHERE k % 7 = 0;
SELECT bt_diff('SELECT k, v FROM bt WHERE k = ANY (ARRAY(SELECT generate_series(1, 15000, 3)))');
SELECT bt_diff('SELECT k, v FROM bt WHERE k = ANY (ARRAY(SELECT generate_series(1, 15000, 3)))');
SELECT bt_diff('SELECT k, v FROM bt WHERE k IN (5, 7, 10007, 14, 10014, 20, 21, 4999, 5000, 15000)');
-- LIMIT stops inside a batch
SELECT k FROM bt WHERE k = ANY (ARRAY(SELECT generate_series(1, 500))) ORDER BY k LIMIT 4;
DROP TABLE bt, bt_ref;
DROP FUNCTION bt_diff(text);
