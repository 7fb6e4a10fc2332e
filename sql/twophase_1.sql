--
-- twophase_1: PREPARE TRANSACTION on tides tables.  The transactions
-- prepared here are finished by twophase_2_restart after a clean restart
-- (test/ext/run.sh restarts the server in between); twophase_2_restart
-- prepares more, finished by twophase_3_crash after an immediate shutdown.
-- Also: an unlogged table, which keeps its rows over a clean restart and
-- is empty after a crash.
--
CREATE TABLE tp (id int PRIMARY KEY, v text) USING tides;
INSERT INTO tp VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four'), (5, 'five'), (6, 'six');
CREATE TABLE tp_big (id int, v text) USING tides;
CREATE TABLE tp_trunc (id int) USING tides;
INSERT INTO tp_trunc SELECT generate_series(1, 100);
CREATE TABLE tp_trunc2 (id int) USING tides;
INSERT INTO tp_trunc2 SELECT generate_series(1, 100);
CREATE TABLE tp_drop (id int) USING tides;
INSERT INTO tp_drop SELECT generate_series(1, 100);
CREATE UNLOGGED TABLE tp_unlogged (id int PRIMARY KEY, v text) USING tides;
INSERT INTO tp_unlogged SELECT g, 'u' || g FROM generate_series(1, 100) g;

-- to be committed after the restart
BEGIN;
INSERT INTO tp VALUES (10, 'ten');
UPDATE tp SET v = 'TWO' WHERE id = 2;
DELETE FROM tp WHERE id = 3;
INSERT INTO tp_big SELECT g, md5(g::text) FROM generate_series(1, 10000) g;
PREPARE TRANSACTION 'tp_commit';
-- to be rolled back after the restart
BEGIN;
INSERT INTO tp VALUES (20, 'twenty');
UPDATE tp SET v = 'ONE' WHERE id = 1;
DELETE FROM tp WHERE id = 4;
PREPARE TRANSACTION 'tp_rollback';
-- subtransactions
BEGIN;
INSERT INTO tp VALUES (30, 'thirty');
SAVEPOINT a;
INSERT INTO tp VALUES (31, 'rolled back');
ROLLBACK TO SAVEPOINT a;
INSERT INTO tp VALUES (32, 'thirty-two');
SAVEPOINT b;
INSERT INTO tp VALUES (33, 'thirty-three');
UPDATE tp SET v = 'thirty (2)' WHERE id = 30;
RELEASE SAVEPOINT b;
PREPARE TRANSACTION 'tp_subxacts';
-- row locks only
BEGIN;
SELECT id FROM tp WHERE id = 5 FOR UPDATE;
SELECT id FROM tp WHERE id = 6 FOR KEY SHARE;
PREPARE TRANSACTION 'tp_locks';
-- a new table, a truncated table (committed and rolled back), a dropped table
BEGIN;
CREATE TABLE tp_new (a int) USING tides;
INSERT INTO tp_new SELECT generate_series(1, 1000);
PREPARE TRANSACTION 'tp_new_table';
BEGIN;
TRUNCATE tp_trunc;
INSERT INTO tp_trunc VALUES (-1);
PREPARE TRANSACTION 'tp_truncate_commit';
BEGIN;
TRUNCATE tp_trunc2;
PREPARE TRANSACTION 'tp_truncate_rollback';
BEGIN;
DROP TABLE tp_drop;
PREPARE TRANSACTION 'tp_drop_commit';

SELECT gid FROM pg_prepared_xacts WHERE database = current_database() ORDER BY gid;
-- nothing of them is visible yet
SELECT * FROM tp ORDER BY id;
SELECT count(*) FROM tp_big;
SET enable_seqscan = off;
SELECT * FROM tp WHERE id IN (1, 2, 3, 10, 20, 30) ORDER BY id;
RESET enable_seqscan;
-- their row locks are held
SELECT id FROM tp WHERE id = 2 FOR UPDATE NOWAIT;
SELECT id FROM tp WHERE id = 4 FOR SHARE NOWAIT;
SELECT id FROM tp WHERE id = 5 FOR KEY SHARE NOWAIT;
SELECT id FROM tp WHERE id = 6 FOR KEY SHARE NOWAIT;
SELECT id FROM tp WHERE id = 6 FOR NO KEY UPDATE NOWAIT;
SELECT id FROM tp WHERE id = 6 FOR UPDATE NOWAIT;
-- a key that a prepared transaction inserted (terse: the context names a TID)
\set VERBOSITY terse
SET lock_timeout = '200ms';
INSERT INTO tp VALUES (10, 'conflict') ON CONFLICT DO NOTHING;
INSERT INTO tp VALUES (20, 'conflict');
RESET lock_timeout;
\set VERBOSITY default
SELECT count(*) FROM tp_unlogged;
