--
-- Parallel tides_btree builds (tidx_build.c): workers split the table's
-- parallel scan, each sorts its share, the leader merges and writes.  Forced
-- with the table's parallel_workers (the DEBUG line says how many started).
-- The entries of an index-only scan in key order against the table's rows:
-- live, deleted and updated rows (HOT chains), rows this transaction
-- inserted (waiting in this backend until the workers start); a unique
-- build that finds a duplicate only among live rows and counts no dead
-- version as one; an error in a participant; CREATE INDEX CONCURRENTLY, and
-- REINDEX written through the engine's ingestion.
--
SET default_table_access_method = tides;
SET client_min_messages = warning;
SET max_parallel_maintenance_workers = 2;

CREATE TABLE pb (id int8, k int4, t text COLLATE "C");
ALTER TABLE pb SET (parallel_workers = 2);
INSERT INTO pb SELECT g, (g * 7919) % 5000, 'v' || (g % 997) FROM generate_series(1, 60000) g;
DELETE FROM pb WHERE id % 100 = 7;
UPDATE pb SET t = t || '+' WHERE id % 100 = 11;	-- HOT: no index yet

-- the rows and entries of this transaction wait in this backend: the
-- workers must find them written
CREATE INDEX pb_t0 ON pb USING tides_btree (t);
BEGIN;
INSERT INTO pb SELECT g, g % 5000, 'new' FROM generate_series(60001, 61000) g;
INSERT INTO pb VALUES (61001, 4999, 'one');
SET LOCAL client_min_messages = debug1;
CREATE INDEX pb_k ON pb USING tides_btree (k, t);
RESET client_min_messages;
COMMIT;
DROP INDEX pb_t0;

SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) AS entries FROM pb WHERE k >= 0;
EXPLAIN (COSTS OFF) SELECT k, t FROM pb WHERE k >= 0;
SELECT count(*) AS verify_parallel_problems FROM tides_verify_index('pb_k');
RESET enable_seqscan;
RESET enable_bitmapscan;
-- the index's entries in key order, and the table's rows
CREATE TABLE pb_out AS SELECT 'parallel' AS build, k, t FROM pb WHERE false;
SET enable_seqscan = off; SET enable_bitmapscan = off;
INSERT INTO pb_out SELECT 'parallel', k, t FROM pb WHERE k >= 0 ORDER BY k, t;
RESET enable_seqscan; RESET enable_bitmapscan;
INSERT INTO pb_out SELECT 'table', k, t FROM pb;
SELECT (SELECT count(*) FROM pb_out WHERE build = 'parallel') AS parallel_rows,
       (SELECT count(*) FROM pb_out WHERE build = 'table') AS table_rows,
       NOT EXISTS ((SELECT k, t FROM pb_out WHERE build = 'parallel'
                    EXCEPT ALL SELECT k, t FROM pb_out WHERE build = 'table')
                   UNION ALL
                   (SELECT k, t FROM pb_out WHERE build = 'table'
                    EXCEPT ALL SELECT k, t FROM pb_out WHERE build = 'parallel')) AS same_entries;

-- unique: this transaction's updates leave two versions of each id, the
-- old one not alive (no duplicate); a second live row of a key is one
BEGIN;
UPDATE pb SET k = k + 1 WHERE id <= 500;	-- not HOT: k is indexed
SET LOCAL client_min_messages = debug1;
CREATE UNIQUE INDEX pb_id ON pb USING tides_btree (id);
COMMIT;
SELECT tides_index_entries('pb_id') - (SELECT count(*) FROM pb) AS dead_versions_indexed;
SELECT count(*) AS unique_problems FROM tides_verify_index('pb_id');
DROP INDEX pb_id;
INSERT INTO pb VALUES (42, 1, 'dup');
CREATE UNIQUE INDEX pb_id_dup ON pb USING tides_btree (id);
DELETE FROM pb WHERE t = 'dup';
CREATE UNIQUE INDEX pb_id ON pb USING tides_btree (id);
INSERT INTO pb VALUES (42, 1, 'dup');

-- an error in any participant ends the build (and the workers) cleanly
\set VERBOSITY terse
CREATE INDEX pb_err ON pb USING tides_btree ((1 / (k - 4999)));
\set VERBOSITY default
SELECT count(*) AS pb_err_left FROM pg_class WHERE relname = 'pb_err';

-- concurrently, and rebuilt
SET client_min_messages = debug1;
CREATE INDEX CONCURRENTLY pb_t ON pb USING tides_btree (t, id);
SET tides.bulk_load_threshold = 0;	-- as files the engine ingests
CREATE TEMP TABLE pb_mark AS SELECT value AS n FROM tides_stats() WHERE name = 'ingested_files';
REINDEX INDEX pb_k;
RESET client_min_messages;
SELECT (SELECT value FROM tides_stats() WHERE name = 'ingested_files') > n AS files_ingested FROM pb_mark;
RESET tides.bulk_load_threshold;
SELECT (SELECT count(*) FROM tides_verify_index('pb_t')) AS cic_problems,
       (SELECT count(*) FROM tides_verify_index('pb_k')) AS reindex_problems;
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM pb WHERE t >= '' AND id > 0;
SELECT count(*) FROM pb WHERE k >= 0;
RESET enable_seqscan; RESET enable_bitmapscan;
SELECT count(*) FROM pb;

DROP TABLE pb, pb_out;
