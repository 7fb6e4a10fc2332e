--
-- row_reread: an UPDATE, DELETE or SELECT FOR UPDATE reads each row twice --
-- the scan that finds it, then the row lock that reads its newest state
-- before deciding.  The second read returns the value the first one read
-- when the engine proves nothing was written to the row since
-- (tides_changed_since, counted in tides_stats() as reads_unchanged), and
-- reads again otherwise (reads_changed).  Either way every statement below
-- must see and change exactly what heap would.
--
CREATE TABLE rr (id int PRIMARY KEY, v text) USING tides WITH (autovacuum_enabled = off);
INSERT INTO rr SELECT g, 'v' || g FROM generate_series(1, 1000) g;
-- the rows in table files: a second read there would cost a file lookup
SELECT tides_flush();
CREATE TEMP TABLE s0 AS SELECT name, value FROM tides_stats() WHERE name LIKE 'reads_%';
CREATE FUNCTION reads_since(what text) RETURNS bigint LANGUAGE sql AS
  $$ SELECT (SELECT value FROM tides_stats() WHERE name = what) - (SELECT value FROM s0 WHERE name = what) $$;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
-- through the primary key: point reads, then (rows in order) an iterator
UPDATE rr SET v = v || '!' WHERE id BETWEEN 1 AND 100;
DELETE FROM rr WHERE id BETWEEN 101 AND 150;
SELECT count(*) FROM (SELECT id FROM rr WHERE id BETWEEN 151 AND 160 FOR UPDATE) s;
-- 160 rows were locked right after their scan read them: nothing else wrote
-- them in between, so every second read came from the value kept
SELECT reads_since('reads_unchanged') >= 160 AS rereads_kept;
-- the same row twice in one statement: the second time it was written since
UPDATE rr SET v = v || '+' FROM generate_series(1, 3) g WHERE rr.id = 200;
SELECT id, v FROM rr WHERE id = 200;
-- a row written by this transaction and read again within it
BEGIN;
UPDATE rr SET v = 'first' WHERE id = 300;
UPDATE rr SET v = v || ' second' WHERE id = 300;
DELETE FROM rr WHERE id = 300 AND v = 'first second';
SELECT count(*) FROM rr WHERE id = 300;
ROLLBACK;
SELECT id, v FROM rr WHERE id = 300;
-- a savepoint rolled back between the reads
BEGIN;
SELECT v FROM rr WHERE id = 400;
SAVEPOINT a;
UPDATE rr SET v = 'gone' WHERE id = 400;
ROLLBACK TO a;
UPDATE rr SET v = v || ' kept' WHERE id = 400 RETURNING id, v;
COMMIT;
RESET enable_seqscan;
RESET enable_bitmapscan;
-- everything as heap would have it
SELECT count(*), sum(length(v)), count(*) FILTER (WHERE v LIKE '%!') AS updated FROM rr;
SELECT id, v FROM rr WHERE id IN (1, 100, 150, 151, 200, 300, 400) ORDER BY id;
DROP TABLE rr;
DROP FUNCTION reads_since(text);
