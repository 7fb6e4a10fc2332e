--
-- A key of a tides_btree index with every key column equal (= or = ANY) is
-- sought with tides_iter_seek_stem: tables whose stem filter rules the key
-- out are not read (src/index/README.md, "Scans").  Over a last level of
-- every key, newer tables of deletions (VACUUM's, by key), updates that move
-- entries, re-inserted keys and a memtable, every such probe must show
-- what a heap table without indexes shows -- also from the index alone
-- (index-only scans: a stale entry would come out as a row).
--
SET client_min_messages = warning;
CREATE TABLE st (k int, g int, v int) USING tides WITH (autovacuum_enabled = off);
CREATE UNIQUE INDEX st_k ON st USING tides_btree (k);
CREATE INDEX st_gk ON st USING tides_btree (g, k);
CREATE TABLE st_ref (k int, g int, v int) USING heap;

CREATE FUNCTION st_apply(q text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    EXECUTE replace(q, ' st ', ' st_ref ');
END
$$;

-- every key, compacted into the last level
SELECT st_apply('INSERT INTO st SELECT i, i % 100, i FROM generate_series(1, 20000) i');
SELECT tides_flush();
SELECT tides_compact();
-- a newer table: a third of the keys deleted, their entries deleted by key
SELECT st_apply('DELETE FROM st WHERE k % 3 = 0');
VACUUM st;
SELECT tides_flush();
-- another: entries of st_gk moved (new keys, the old ones deleted), keys back
SELECT st_apply('UPDATE st SET g = g + 1000 WHERE k % 7 = 0');
SELECT st_apply('INSERT INTO st SELECT i, i % 100, -i FROM generate_series(3, 3000, 3) i');
VACUUM st;
SELECT tides_flush();
-- the memtable: new keys
SELECT st_apply('INSERT INTO st SELECT i, i % 100, i FROM generate_series(20001, 20500) i');
VACUUM st;

SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT k FROM st WHERE k = ANY ('{1,2,3}');
EXPLAIN (COSTS OFF) SELECT v FROM st WHERE k = 5;
EXPLAIN (COSTS OFF) SELECT x.k FROM generate_series(1, 3) i, LATERAL (SELECT k FROM st WHERE g = i AND k = i) x;

-- each query must differ from the heap table's in no row
CREATE FUNCTION st_same(q text) RETURNS TABLE (query text, diff bigint)
LANGUAGE plpgsql AS $$
DECLARE
    n1 bigint;
    n2 bigint;
BEGIN
    SET LOCAL enable_seqscan = off;
    SET LOCAL enable_bitmapscan = off;
    EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x', q, replace(q, ' st ', ' st_ref ')) INTO n1;
    EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x', replace(q, ' st ', ' st_ref '), q) INTO n2;
    RETURN QUERY SELECT q, n1 + n2;
END
$$;

-- index-only, in chunks of keys below the interval limit
SELECT s.query, s.diff FROM generate_series(0, 20600, 5000) c,
    LATERAL st_same(format('SELECT k FROM st WHERE k = ANY (ARRAY(SELECT generate_series(%s, %s)))',
                           c, c + 4999)) s
WHERE s.diff <> 0;
SELECT count(*) FROM st WHERE k = ANY (ARRAY(SELECT generate_series(0, 20600)));
-- fetching the rows, and single keys: deleted, re-inserted, moved, new, never there
SELECT * FROM st_same('SELECT k, g, v FROM st WHERE k = ANY (ARRAY(SELECT generate_series(1, 20600, 7)))');
SELECT * FROM st_same('SELECT k, g, v FROM st WHERE k IN (3, 6, 7, 14, 21, 9999, 20001, 20500, 20501, 0, -1)');
SELECT k, g, v FROM st WHERE k = 3;
SELECT k, g, v FROM st WHERE k = 9;
SELECT k, g, v FROM st WHERE k = 3001;
SELECT k, g, v FROM st WHERE k = 14;
-- both columns of st_gk equal: old and moved entries
SELECT * FROM st_same('SELECT x.g, x.k FROM generate_series(1, 3000) i, LATERAL (SELECT g, k FROM st WHERE g = i % 100 AND k = i) x');
SELECT * FROM st_same('SELECT x.g, x.k FROM generate_series(1, 3000) i, LATERAL (SELECT g, k FROM st WHERE g = i % 100 + 1000 AND k = i) x');
SELECT g, k FROM st WHERE g = 14 AND k = 14;
SELECT g, k FROM st WHERE g = 1014 AND k = 14;
-- a leading column alone is a range of keys, not one key: still right
SELECT * FROM st_same('SELECT g, k FROM st WHERE g = ANY (''{7, 1007}'')');
-- backward, and a cursor that turns around inside a key's entries
SELECT * FROM st_same('SELECT k FROM st WHERE k = ANY (''{20500, 20001, 5, 6, 3}'') ORDER BY k DESC');
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT k FROM st WHERE k = ANY ('{4, 5, 6, 7}') ORDER BY k;
FETCH 2 FROM c;
FETCH PRIOR FROM c;
FETCH 3 FROM c;
COMMIT;
SELECT count(*) FROM tides_verify_index('st_k') UNION ALL SELECT count(*) FROM tides_verify_index('st_gk');
DROP TABLE st, st_ref;
DROP FUNCTION st_apply(text), st_same(text);
