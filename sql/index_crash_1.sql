--
-- index_crash_1: tides_btree indexes across a crash.  test/ext/run.sh stops
-- the server with an immediate shutdown after the first phase and runs
-- index_crash_2_crash after recovery: committed rows have their entries,
-- entries of unfinished work are dead, prepared transactions keep theirs,
-- unique checks still see every committed key, unlogged indexes are empty,
-- and index builds written as files (the ingestion, tidx_build.c) are whole:
-- a committed one, and one of a prepared transaction committed afterwards.
-- In a database of its own: its prepared transactions are not the other
-- tests' business.
--
CREATE DATABASE tidx_crash;
\c tidx_crash
CREATE EXTENSION tidesam;
SET default_table_access_method = tides;
CREATE TABLE ic (id int, v text, n numeric);
CREATE UNIQUE INDEX ic_id ON ic USING tides_btree (id);
CREATE INDEX ic_v ON ic USING tides_btree (v DESC) INCLUDE (n);
INSERT INTO ic SELECT g, 'v' || g, g / 7.0 FROM generate_series(1, 5000) g;
UPDATE ic SET v = v || '+' WHERE id % 10 = 0;
DELETE FROM ic WHERE id % 10 = 1;
CREATE UNLOGGED TABLE icu (id int);
CREATE UNIQUE INDEX icu_id ON icu USING tides_btree (id);
INSERT INTO icu SELECT generate_series(1, 100);
-- prepared: committed and rolled back after the crash
BEGIN;
INSERT INTO ic VALUES (10001, 'prepared-commit', 1);
UPDATE ic SET v = 'prepared-update' WHERE id = 2;
PREPARE TRANSACTION 'ic_commit';
BEGIN;
INSERT INTO ic VALUES (10002, 'prepared-rollback', 1);
DELETE FROM ic WHERE id = 3;
PREPARE TRANSACTION 'ic_rollback';
-- builds through the ingestion (threshold 0: every build)
CREATE TABLE icb (id int, v text COLLATE "C", n numeric);
INSERT INTO icb SELECT g, 'b' || g, g / 3.0 FROM generate_series(1, 20000) g;
SET tides.bulk_load_threshold = 0;
CREATE UNIQUE INDEX icb_id ON icb USING tides_btree (id);
CREATE INDEX icb_v ON icb USING tides_btree (v) INCLUDE (n);
BEGIN;
CREATE INDEX icb_n ON icb USING tides_btree (n DESC);
PREPARE TRANSACTION 'icb_build';
RESET tides.bulk_load_threshold;
SELECT count(*) FROM tides_verify_index('ic_id') UNION ALL SELECT count(*) FROM tides_verify_index('ic_v')
UNION ALL SELECT count(*) FROM tides_verify_index('icb_id') UNION ALL SELECT count(*) FROM tides_verify_index('icb_v');
SELECT count(*) FROM ic;
