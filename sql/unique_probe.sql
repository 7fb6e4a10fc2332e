--
-- unique_probe: a unique check first asks the engine whether any entry of
-- the key can exist (tides_stem_absent: the memtables, then each file's key
-- range and stem filter, no block read; tides_stats() counts the answers in
-- stem_probes_absent and stem_probes_maybe), and reads the entries only on
-- "maybe".  Duplicates must still be caught wherever the first entry is --
-- a memtable or a file -- and a key whose row is deleted must be insertable
-- again.
--
CREATE TABLE up (id bigint NOT NULL, v int) USING tides WITH (autovacuum_enabled = off);
CREATE UNIQUE INDEX up_id ON up USING tides_btree (id);
CREATE TEMP TABLE s0 (name text, value bigint);
CREATE FUNCTION probes_since(what text) RETURNS bigint LANGUAGE sql AS
  $$ SELECT (SELECT value FROM tides_stats() WHERE name = what) - (SELECT value FROM s0 WHERE name = what) $$;
CREATE FUNCTION probes_mark() RETURNS void LANGUAGE sql AS
  $$ DELETE FROM s0; INSERT INTO s0 SELECT name, value FROM tides_stats() WHERE name LIKE 'stem_probes_%' $$;
-- ascending keys, first into the memtable, then beyond every file's range
SELECT probes_mark();
INSERT INTO up SELECT g, 0 FROM generate_series(1, 2000) g;
SELECT probes_since('stem_probes_absent') >= 2000 AS memtable_absent;
SELECT tides_flush();
SELECT probes_mark();
INSERT INTO up SELECT g, 1 FROM generate_series(2001, 4000) g;
SELECT probes_since('stem_probes_absent') >= 2000 AS beyond_files_absent;
-- duplicates of a key in a file and of one in the memtable
INSERT INTO up VALUES (5, 9);
INSERT INTO up VALUES (3999, 9);
-- keys between stored ones: the stem filters of the files rule most out
INSERT INTO up SELECT g, 2 FROM generate_series(10001, 14000, 2) g;
SELECT tides_flush();
SELECT probes_mark();
INSERT INTO up SELECT g, 3 FROM generate_series(10002, 14000, 2) g ORDER BY random();
SELECT probes_since('stem_probes_absent') >= 1800 AS gaps_absent;
SELECT tides_flush();
-- a deleted row's key is free again, in the deleting transaction and after
BEGIN;
DELETE FROM up WHERE id IN (7, 10002);
INSERT INTO up VALUES (7, 4);
COMMIT;
INSERT INTO up VALUES (10002, 4);
INSERT INTO up VALUES (10002, 5);
-- speculative insertion, keys old and new
INSERT INTO up SELECT g, 6 FROM generate_series(3995, 4005) g ON CONFLICT (id) DO NOTHING;
SELECT probes_mark();
INSERT INTO up VALUES (8, 9);
SELECT probes_since('stem_probes_maybe') >= 1 AS existing_key_maybe;
SELECT count(*), sum(id), count(DISTINCT id) FROM up;
SELECT id, v FROM up WHERE id IN (5, 7, 3999, 4001, 10002, 10003, 13999, 14000) ORDER BY id;
SELECT * FROM tides_verify_index('up_id');
DROP TABLE up;
DROP FUNCTION probes_since(text);
DROP FUNCTION probes_mark();
