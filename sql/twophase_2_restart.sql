--
-- twophase_2_restart: after a clean restart (fast shutdown), the prepared
-- transactions of twophase_1 are still there with their changes and locks;
-- COMMIT PREPARED and ROLLBACK PREPARED finish them.
--
SELECT gid FROM pg_prepared_xacts WHERE database = current_database() ORDER BY gid;
SELECT * FROM tp ORDER BY id;
SELECT count(*) FROM tp_big;
SELECT id FROM tp WHERE id = 2 FOR UPDATE NOWAIT;
SELECT id FROM tp WHERE id = 4 FOR SHARE NOWAIT;
SELECT id FROM tp WHERE id = 5 FOR KEY SHARE NOWAIT;
SELECT id FROM tp WHERE id = 6 FOR KEY SHARE NOWAIT;
SELECT id FROM tp WHERE id = 6 FOR UPDATE NOWAIT;
-- the unlogged table survives a clean restart
SELECT count(*), sum(id) FROM tp_unlogged;

COMMIT PREPARED 'tp_commit';
ROLLBACK PREPARED 'tp_rollback';
COMMIT PREPARED 'tp_subxacts';
COMMIT PREPARED 'tp_locks';
COMMIT PREPARED 'tp_new_table';
COMMIT PREPARED 'tp_truncate_commit';
ROLLBACK PREPARED 'tp_truncate_rollback';
COMMIT PREPARED 'tp_drop_commit';
COMMIT PREPARED 'tp_commit';
SELECT gid FROM pg_prepared_xacts WHERE database = current_database() ORDER BY gid;

SELECT * FROM tp ORDER BY id;
SET enable_seqscan = off;
SELECT * FROM tp WHERE id IN (1, 2, 3, 4, 10, 20, 30, 31, 32, 33) ORDER BY id;
RESET enable_seqscan;
SELECT count(*), sum(id), md5(string_agg(v, ',' ORDER BY id)) FROM tp_big;
SELECT count(*), sum(a) FROM tp_new;
SELECT count(*), sum(id) FROM tp_trunc;
SELECT count(*), sum(id) FROM tp_trunc2;
SELECT count(*) FROM tp_drop;
-- the locks are gone
SELECT id FROM tp WHERE id IN (2, 4, 5, 6) ORDER BY id FOR UPDATE NOWAIT;
-- the rows change as usual
UPDATE tp SET v = v || '!' WHERE id IN (1, 2, 5, 6, 10, 30);
DELETE FROM tp WHERE id = 33;
SELECT * FROM tp ORDER BY id;

-- for twophase_3_crash: prepared transactions, and a committed change,
-- right before an immediate shutdown
BEGIN;
INSERT INTO tp VALUES (40, 'forty');
UPDATE tp SET v = 'ten (crash)' WHERE id = 10;
INSERT INTO tp_big SELECT g, 'crash' FROM generate_series(10001, 15000) g;
PREPARE TRANSACTION 'tp_crash_commit';
BEGIN;
INSERT INTO tp VALUES (50, 'fifty');
DELETE FROM tp WHERE id = 30;
UPDATE tp SET v = 'one (crash)' WHERE id = 1;
PREPARE TRANSACTION 'tp_crash_rollback';
INSERT INTO tp VALUES (60, 'committed before the crash');
SELECT gid FROM pg_prepared_xacts WHERE database = current_database() ORDER BY gid;
