--
-- ddl_temp_unlogged: temporary and unlogged tides tables: DML, indexes, rollback,
-- TRUNCATE, VACUUM, CLUSTER, VACUUM FULL, ON COMMIT DELETE ROWS / DROP.
--
--
-- temporary tables
--
CREATE TEMP TABLE dd_temp (id int PRIMARY KEY, v text) USING tides;
INSERT INTO dd_temp SELECT g, 't' || g FROM generate_series(1, 1000) g;
UPDATE dd_temp SET v = 'u' WHERE id <= 10;
DELETE FROM dd_temp WHERE id > 900;
SELECT count(*), count(*) FILTER (WHERE v = 'u') FROM dd_temp;
SET enable_seqscan = off;
SELECT * FROM dd_temp WHERE id = 5;
RESET enable_seqscan;
BEGIN;
DELETE FROM dd_temp;
ROLLBACK;
SELECT count(*) FROM dd_temp;
TRUNCATE dd_temp;
SELECT count(*) FROM dd_temp;
INSERT INTO dd_temp VALUES (1, 'after truncate');
SELECT * FROM dd_temp;
VACUUM dd_temp;
CLUSTER dd_temp USING dd_temp_pkey;
VACUUM FULL dd_temp;
SELECT * FROM dd_temp;
CREATE TEMP TABLE dd_temp_del (a int) USING tides ON COMMIT DELETE ROWS;
BEGIN;
INSERT INTO dd_temp_del VALUES (1), (2);
SELECT count(*) FROM dd_temp_del;
COMMIT;
SELECT count(*) FROM dd_temp_del;
BEGIN;
CREATE TEMP TABLE dd_temp_drop (a int) USING tides ON COMMIT DROP;
INSERT INTO dd_temp_drop VALUES (1);
SELECT count(*) FROM dd_temp_drop;
COMMIT;
SELECT count(*) FROM dd_temp_drop;
DROP TABLE dd_temp, dd_temp_del;

--
-- unlogged tables (their reset after a crash is tested by twophase_3_crash)
--
CREATE UNLOGGED TABLE dd_unlogged (id int PRIMARY KEY, v text) USING tides;
INSERT INTO dd_unlogged SELECT g, 'u' || g FROM generate_series(1, 1000) g;
UPDATE dd_unlogged SET v = 'x' WHERE id % 2 = 0;
DELETE FROM dd_unlogged WHERE id > 500;
SELECT count(*), count(*) FILTER (WHERE v = 'x') FROM dd_unlogged;
SET enable_seqscan = off;
SELECT * FROM dd_unlogged WHERE id = 2;
RESET enable_seqscan;
VACUUM FULL dd_unlogged;
SELECT count(*) FROM dd_unlogged;
TRUNCATE dd_unlogged;
SELECT count(*) FROM dd_unlogged;
DROP TABLE dd_unlogged;

