--
-- tides_btree builds (tidx_build.c): entries sorted, then written in key
-- order -- past tides.bulk_load_threshold (here 0: every build) as files
-- installed by the engine's ingestion, below it through the memtables.
-- Checked both ways: entries = rows, tides_verify_index, scans against the
-- table, NULLs, a unique build's duplicate (also of a key-only index), a
-- build rolled back, REINDEX and CREATE INDEX CONCURRENTLY, a build inside a
-- transaction that then writes and reads the index, and that the large
-- builds went in as files (ingested_files).
--
SET default_table_access_method = tides;
SET client_min_messages = warning;

CREATE FUNCTION ib_ingested() RETURNS bigint LANGUAGE sql
  AS $$ SELECT value FROM tides_stats() WHERE name = 'ingested_files' $$;
CREATE TABLE ib_mark (n bigint);
INSERT INTO ib_mark SELECT ib_ingested();

CREATE TABLE ib (id int8, k int4, t text COLLATE "C", f float8);
INSERT INTO ib SELECT g, (g * 7919) % 5000, 'v' || (g % 997), g / 3.0 FROM generate_series(1, 30000) g;
INSERT INTO ib VALUES (NULL, NULL, NULL, NULL), (30001, NULL, 'x', NULL);
DELETE FROM ib WHERE id % 100 = 7;
CREATE TABLE ib_ref AS SELECT * FROM ib;

-- as files
SET tides.bulk_load_threshold = 0;
CREATE UNIQUE INDEX ib_id ON ib USING tides_btree (id);
CREATE INDEX ib_kt ON ib USING tides_btree (k DESC NULLS FIRST, t);
CREATE INDEX ib_f ON ib USING tides_btree (f) INCLUDE (t);
SELECT ib_ingested() > n AS files_ingested FROM ib_mark;
-- through the memtables
UPDATE ib_mark SET n = ib_ingested();
SET tides.bulk_load_threshold = -1;
CREATE INDEX ib_t ON ib USING tides_btree (t, id);
SELECT ib_ingested() = n AS no_files FROM ib_mark;
RESET tides.bulk_load_threshold;

SELECT c.relname, tides_index_entries(c.oid) = (SELECT count(*) FROM ib) AS entry_per_row
FROM pg_class c WHERE c.relname IN ('ib_id', 'ib_kt', 'ib_f', 'ib_t') ORDER BY 1;
SELECT i.indexrelid::regclass AS index, v.problem
FROM pg_index i, tides_verify_index(i.indexrelid) v WHERE i.indrelid = 'ib'::regclass;

-- scans through each index return what the table holds
SET enable_seqscan = off;
SET enable_bitmapscan = off;
CREATE FUNCTION ib_diff(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) x',
                 format(q, 'ib'), format(q, 'ib_ref'), format(q, 'ib_ref'), format(q, 'ib')) INTO n;
  RETURN n;
END $$;
SELECT ib_diff('SELECT * FROM %s WHERE id BETWEEN 100 AND 20000') AS id_range,
       ib_diff('SELECT * FROM %s WHERE k = 42') AS k_eq,
       ib_diff('SELECT k, t FROM %s WHERE k IS NULL') AS k_null,
       ib_diff('SELECT f, t FROM %s WHERE f > 9000') AS f_range,
       ib_diff('SELECT t, id FROM %s WHERE t >= ''v99'' AND t < ''v990''') AS t_range;
EXPLAIN (COSTS OFF) SELECT k, t FROM ib WHERE k IS NULL;
SELECT k, t FROM ib ORDER BY k DESC NULLS FIRST, t LIMIT 4;
SELECT id, t FROM ib ORDER BY id DESC LIMIT 2;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- a unique build over a duplicate fails, as files and through the memtables
-- (a key-only index and one that stores values); once the older row is
-- deleted the build succeeds
DROP INDEX ib_id;
INSERT INTO ib VALUES (5, 1, 'dup', 5 / 3.0);
SET tides.bulk_load_threshold = 0;
CREATE UNIQUE INDEX ib_dup ON ib USING tides_btree (id);
CREATE UNIQUE INDEX ib_dup ON ib USING tides_btree (f);
SET tides.bulk_load_threshold = -1;
CREATE UNIQUE INDEX ib_dup ON ib USING tides_btree (id);
CREATE UNIQUE INDEX ib_dup ON ib USING tides_btree (f);
DELETE FROM ib WHERE t = 'dup';
SET tides.bulk_load_threshold = 0;
CREATE UNIQUE INDEX ib_id ON ib USING tides_btree (id);
RESET tides.bulk_load_threshold;
SELECT count(*) FROM tides_verify_index('ib_id');

-- a build rolled back leaves no index; one in a transaction that goes on
-- writing is read back at once and after the commit
SET tides.bulk_load_threshold = 0;
BEGIN;
CREATE INDEX ib_gone ON ib USING tides_btree (k);
ROLLBACK;
SELECT count(*) FROM pg_class WHERE relname = 'ib_gone';
BEGIN;
CREATE INDEX ib_k2 ON ib USING tides_btree (k, id);
INSERT INTO ib VALUES (40000, 77777, 'late', 1);
SET LOCAL enable_seqscan = off;
SELECT id, k FROM ib WHERE k >= 77777;
COMMIT;
SELECT count(*) FROM tides_verify_index('ib_k2');

-- rebuilt: REINDEX, and CREATE INDEX CONCURRENTLY
REINDEX INDEX ib_kt;
CREATE INDEX CONCURRENTLY ib_cc ON ib USING tides_btree (t DESC, k);
RESET tides.bulk_load_threshold;
SELECT count(*) FROM tides_verify_index('ib_kt') UNION ALL SELECT count(*) FROM tides_verify_index('ib_cc');
SELECT tides_index_entries('ib_cc') = (SELECT count(*) FROM ib) AS entry_per_row;

DROP TABLE ib, ib_ref, ib_mark;
DROP FUNCTION ib_diff(text);
DROP FUNCTION ib_ingested();
