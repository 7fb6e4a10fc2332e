--
-- index_crash_2_crash: after an immediate shutdown and recovery (see
-- index_crash_1).
--
SELECT current_database() AS regress_db \gset
\c tidx_crash
SELECT gid FROM pg_prepared_xacts WHERE gid LIKE 'ic%' ORDER BY gid;
SELECT count(*) FROM tides_verify_index('ic_id') UNION ALL SELECT count(*) FROM tides_verify_index('ic_v');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM ic WHERE id > 0;
SELECT id, v FROM ic WHERE id IN (1, 2, 3, 10, 10001, 10002) ORDER BY id;
SELECT v, n FROM ic WHERE v > 'v4998' ORDER BY v DESC LIMIT 3;
-- the prepared transactions' keys are still claimed: an insert waits
SET lock_timeout = '200ms';
\set VERBOSITY terse
INSERT INTO ic VALUES (10001, 'x', 0);
\set VERBOSITY default
RESET lock_timeout;
COMMIT PREPARED 'ic_commit';
ROLLBACK PREPARED 'ic_rollback';
INSERT INTO ic VALUES (10001, 'x', 0);
INSERT INTO ic VALUES (10002, 'x', 0);
INSERT INTO ic VALUES (5, 'x', 0);
SELECT id, v FROM ic WHERE id IN (1, 2, 3, 10, 10001, 10002) ORDER BY id;
SELECT count(*) FROM tides_verify_index('ic_id') UNION ALL SELECT count(*) FROM tides_verify_index('ic_v');
-- the builds written as files: whole, and the prepared one once committed
COMMIT PREPARED 'icb_build';
SELECT count(*) FROM tides_verify_index('icb_id') UNION ALL SELECT count(*) FROM tides_verify_index('icb_v')
UNION ALL SELECT count(*) FROM tides_verify_index('icb_n');
SELECT tides_index_entries('icb_id') AS id, tides_index_entries('icb_v') AS v, tides_index_entries('icb_n') AS n;
SELECT count(*) FROM icb WHERE id > 0;
SELECT id, v, n FROM icb WHERE v >= 'b19998' ORDER BY v LIMIT 3;
SELECT id, n FROM icb ORDER BY n DESC LIMIT 2;
\set VERBOSITY terse
INSERT INTO icb VALUES (7, 'dup', 0);
\set VERBOSITY default
-- the unlogged table and its index are empty again
SELECT count(*) FROM icu;
SELECT count(*) FROM icu WHERE id = 5;
INSERT INTO icu VALUES (5), (5);
INSERT INTO icu VALUES (5);
SELECT count(*) FROM tides_verify_index('icu_id');
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE ic, icu, icb;
\c :regress_db
DROP DATABASE tidx_crash;
