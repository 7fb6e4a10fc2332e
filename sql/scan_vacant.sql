--
-- scan_vacant: a sequential scan under an MVCC snapshot seeks past row-id
-- ranges holding nothing a snapshot can see (src/runtime/vacant.c) and
-- records the new ones it walked; every scan returns what a scan of every
-- version would.  tides_stats() counts the ranges recorded and the jumps.
--
CREATE TABLE sv (id int, n int) USING tides WITH (autovacuum_enabled = off);
INSERT INTO sv SELECT g, 0 FROM generate_series(1, 10) g;
-- 200 transactions update every row: 2,000 dead versions below the live ones
DO $$ BEGIN FOR i IN 1..200 LOOP UPDATE sv SET n = n + 1; COMMIT; END LOOP; END $$;
CREATE TEMP TABLE before AS SELECT name, value FROM tides_stats() WHERE name LIKE 'vacant%';
CREATE FUNCTION vacant_delta() RETURNS TABLE (name text, grew bool) LANGUAGE sql AS $$
  SELECT s.name, s.value > b.value FROM tides_stats() s JOIN before b USING (name) ORDER BY 1 $$;
CREATE FUNCTION vacant_mark() RETURNS void LANGUAGE sql AS $$
  UPDATE before b SET value = s.value FROM tides_stats() s WHERE s.name = b.name $$;
-- the first scan walks the dead versions and records them
SELECT count(*), sum(n), min(n), max(n) FROM sv;
SELECT * FROM vacant_delta();
SELECT vacant_mark();
-- the next one jumps, with the same answer
SELECT count(*), sum(n), min(n), max(n) FROM sv;
SELECT * FROM vacant_delta();
-- backward through a scrollable cursor, and a TID range scan
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id, n FROM sv;
FETCH LAST FROM c;
FETCH BACKWARD 20 FROM c;
FETCH FORWARD 3 FROM c;
COMMIT;
SELECT count(*) FROM sv WHERE ctid >= '(0,1)';
-- rows added, updated, deleted and rolled back after the ranges were recorded
INSERT INTO sv VALUES (11, 0);
DO $$ BEGIN FOR i IN 1..50 LOOP UPDATE sv SET n = n + 1 WHERE id <= 5; COMMIT; END LOOP; END $$;
BEGIN;
INSERT INTO sv SELECT g, -1 FROM generate_series(100, 400) g;
ROLLBACK;
DELETE FROM sv WHERE id = 2;
SELECT count(*), sum(n), min(n), max(n) FROM sv;
SELECT id, n FROM sv ORDER BY id;
SELECT id, n FROM sv ORDER BY id;
-- VACUUM removes the dead versions; the ranges stay true
VACUUM sv;
SELECT count(*), sum(n) FROM sv;
-- a rewrite is a new tree: no ranges yet, the same rows
VACUUM FULL sv;
SELECT count(*), sum(n) FROM sv;
TRUNCATE sv;
SELECT count(*) FROM sv;
INSERT INTO sv VALUES (1, 1);
SELECT count(*), sum(n) FROM sv;
DROP TABLE sv;
DROP FUNCTION vacant_delta();
DROP FUNCTION vacant_mark();
