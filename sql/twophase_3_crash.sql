--
-- twophase_3_crash: after an immediate shutdown (a crash) and recovery,
-- the transactions prepared by twophase_2_restart are still there; the
-- committed row is there; the unlogged table is empty.
--
SELECT gid FROM pg_prepared_xacts WHERE database = current_database() ORDER BY gid;
SELECT * FROM tp ORDER BY id;
SELECT id FROM tp WHERE id = 10 FOR UPDATE NOWAIT;
SELECT id FROM tp WHERE id = 1 FOR UPDATE NOWAIT;
COMMIT PREPARED 'tp_crash_commit';
ROLLBACK PREPARED 'tp_crash_rollback';
SELECT gid FROM pg_prepared_xacts WHERE database = current_database() ORDER BY gid;
SELECT * FROM tp ORDER BY id;
SET enable_seqscan = off;
SELECT * FROM tp WHERE id IN (1, 10, 30, 40, 50, 60) ORDER BY id;
RESET enable_seqscan;
SELECT count(*), sum(id), count(*) FILTER (WHERE v = 'crash') FROM tp_big;
SELECT id FROM tp WHERE id IN (1, 10) ORDER BY id FOR UPDATE NOWAIT;

-- unlogged tables are reset by crash recovery
SELECT count(*) FROM tp_unlogged;
INSERT INTO tp_unlogged VALUES (1, 'after the crash');
SET enable_seqscan = off;
SELECT * FROM tp_unlogged WHERE id = 1;
RESET enable_seqscan;
SELECT * FROM tp_unlogged;

SELECT * FROM tides_verify();
DROP TABLE tp, tp_big, tp_new, tp_trunc, tp_trunc2, tp_unlogged;
