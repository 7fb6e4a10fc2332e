--
-- flush_place: a table filled in key order adds rows (and primary-key
-- entries) above everything it has in table files; a flush writes those into
-- files of their own and places them below level 0, where compaction need not
-- rewrite them (src/engine/db/flush_place.h; tides_stats() counts them in
-- flush_placed_files and flush_placed_bytes).  Reads through the table and
-- through the index must see exactly the rows, also after updates and
-- deletes of placed rows went through level 0 and after a full compaction.
--
CREATE TABLE fp (id bigint PRIMARY KEY, v text) USING tides WITH (autovacuum_enabled = off);
SELECT tides_flush();
CREATE TEMP TABLE s0 AS SELECT name, value FROM tides_stats() WHERE name LIKE 'flush_placed_%';
CREATE FUNCTION placed_since(what text) RETURNS bigint LANGUAGE sql AS
  $$ SELECT (SELECT value FROM tides_stats() WHERE name = what) - (SELECT value FROM s0 WHERE name = what) $$;
-- 30,000 rows of ~70 bytes in key order: well above 1/64 of a memtable
INSERT INTO fp SELECT g, repeat('x', 50) || g FROM generate_series(1, 30000) g;
SELECT tides_flush();
SELECT placed_since('flush_placed_files') > 0 AS placed,
       placed_since('flush_placed_bytes') > 100000 AS rows_placed;
-- more rows above them, then changes to placed rows: those go to level 0
INSERT INTO fp SELECT g, repeat('x', 50) || g FROM generate_series(30001, 60000) g;
UPDATE fp SET v = 'u' || id WHERE id % 1000 = 0;
DELETE FROM fp WHERE id <= 5000;
SELECT tides_flush();
SELECT count(*), sum(id), count(*) FILTER (WHERE v LIKE 'u%') AS updated FROM fp;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM fp WHERE id BETWEEN 10000 AND 20000;
SELECT id, v FROM fp WHERE id IN (5000, 5001, 30000, 30001, 60000) ORDER BY id;
RESET enable_seqscan;
RESET enable_bitmapscan;
-- a full compaction merges the deletions into the placed files
SELECT tides_compact();
SELECT count(*), sum(id), min(id), max(id) FROM fp;
SELECT id, v FROM fp WHERE id IN (5000, 5001, 30000, 30001, 60000) ORDER BY id;
DROP TABLE fp;
DROP FUNCTION placed_since(text);
