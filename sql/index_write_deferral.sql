--
-- index_write_deferral: entries of non-unique tides_btree indexes wait in the
-- backend until its next engine write or read, a parallel plan, or the
-- commit's sealing batch (src/runtime/xact.c).  The transaction itself must see
-- them at once, in every way it can look; an abort must leave nothing; a
-- savepoint's rollback must not take the outer transaction's entries along.
--
SET default_table_access_method = tides;
CREATE TABLE dfr (id int, k int, t text);
CREATE UNIQUE INDEX dfr_id ON dfr USING tides_btree (id);
CREATE INDEX dfr_k ON dfr USING tides_btree (k);
CREATE INDEX dfr_t ON dfr USING tides_btree (t);
SET enable_seqscan = off;
SET enable_bitmapscan = off;

-- read back inside the transaction, through the index, before any other write
BEGIN;
INSERT INTO dfr VALUES (1, 10, 'a');
EXPLAIN (COSTS OFF) SELECT id FROM dfr WHERE k = 10;
SELECT id FROM dfr WHERE k = 10;
INSERT INTO dfr VALUES (2, 10, 'b');
SELECT id FROM dfr WHERE k = 10 ORDER BY id;
SET LOCAL enable_indexscan = off;
SET LOCAL enable_bitmapscan = on;
SELECT id FROM dfr WHERE k = 10 ORDER BY id;
COMMIT;
SELECT id FROM dfr WHERE t >= 'a' ORDER BY t;

-- a rolled-back transaction's deferred entries never reach the engine; once
-- read back (which writes them first) they stay, as dead rows' entries
SELECT tides_index_entries('dfr_k');
BEGIN;
INSERT INTO dfr VALUES (100, 3, 'r');
ROLLBACK;
SELECT tides_index_entries('dfr_k'), count(*) FROM dfr WHERE k = 3;
BEGIN;
INSERT INTO dfr SELECT g, g % 7, 'r' || g FROM generate_series(100, 199) g;
SELECT count(*) FROM dfr WHERE k = 3;
ROLLBACK;
SELECT tides_index_entries('dfr_k'), count(*) FROM dfr WHERE k = 3;
VACUUM dfr;
SELECT tides_index_entries('dfr_k');

-- a savepoint rolled back keeps the outer transaction's entries
BEGIN;
INSERT INTO dfr VALUES (3, 30, 'c');
SAVEPOINT s1;
INSERT INTO dfr VALUES (4, 30, 'd');
ROLLBACK TO s1;
INSERT INTO dfr VALUES (5, 30, 'e');
SAVEPOINT s2;
INSERT INTO dfr VALUES (6, 30, 'f');
SELECT 1 / 0;
ROLLBACK TO s2;
COMMIT;
SELECT id FROM dfr WHERE k = 30 ORDER BY id;

-- an error inside a PL/pgSQL exception block, the outer rows commit
DO $$
BEGIN
    INSERT INTO dfr VALUES (7, 70, 'g');
    BEGIN
        INSERT INTO dfr VALUES (8, 70, 'h');
        INSERT INTO dfr VALUES (7, 70, 'dup');   -- unique violation
    EXCEPTION WHEN unique_violation THEN
        RAISE NOTICE 'caught';
    END;
    INSERT INTO dfr VALUES (9, 70, 'i');
END $$;
SELECT id, t FROM dfr WHERE k = 70 ORDER BY id;

-- a parallel worker reads the engine: the leader's entries must be there
BEGIN;
INSERT INTO dfr VALUES (10, 99, 'p');
SET LOCAL force_parallel_mode = on;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT id FROM dfr WHERE k = 99;
SELECT id FROM dfr WHERE k = 99;
COMMIT;

-- one statement past the deferred batch's size limit (1 MB)
INSERT INTO dfr SELECT g, g % 100, repeat(md5(g::text), 8) FROM generate_series(1000, 6999) g;
SELECT count(*) FROM dfr WHERE k = 42;
SELECT count(*) FROM dfr WHERE t > 'f';

-- an UPDATE writes new entries for the new versions (non-HOT: k changes)
UPDATE dfr SET k = k + 1000 WHERE id BETWEEN 1000 AND 1099;
SELECT count(*) FROM dfr WHERE k >= 1000;

-- ON COMMIT DELETE ROWS truncates after the seal: entries written then go untagged
BEGIN;
CREATE TEMP TABLE dfr_tmp (k int) ON COMMIT DELETE ROWS;
CREATE INDEX ON dfr_tmp USING tides_btree (k);
INSERT INTO dfr_tmp SELECT generate_series(1, 50);
COMMIT;
SELECT count(*) FROM dfr_tmp WHERE k = 5;
BEGIN;
INSERT INTO dfr_tmp VALUES (5);
SELECT count(*) FROM dfr_tmp WHERE k = 5;
COMMIT;
SELECT count(*) FROM dfr_tmp;

-- every index of dfr is a tides_btree one, so a new row waits too and goes
-- with its unique entry: a one-row INSERT logs two tides records (row and
-- key entry, then the other entries at commit), a multi-row INSERT one per
-- row and one at commit.  With a PostgreSQL btree index on the table, whose
-- entries others find at once, the row goes alone first.
CREATE EXTENSION pg_walinspect;
SET synchronous_commit = on;	-- each commit flushes the WAL the count reads
CREATE FUNCTION dfr_records(lo pg_lsn, x xid) RETURNS bigint LANGUAGE sql
  AS $$ SELECT count(*) FROM pg_get_wal_records_info_till_end_of_wal(lo)
        WHERE resource_manager = 'tides' AND xid = x $$;
SELECT pg_current_wal_insert_lsn() AS lo \gset
BEGIN;
INSERT INTO dfr VALUES (20000, 1, 'one row');
SELECT pg_current_xact_id()::text::xid AS x \gset
COMMIT;
SELECT 'one row' AS insert, dfr_records(:'lo', :'x') AS tides_records;
SELECT pg_current_wal_insert_lsn() AS lo \gset
BEGIN;
INSERT INTO dfr SELECT g, 1, 'ten rows' FROM generate_series(20001, 20010) g;
SELECT pg_current_xact_id()::text::xid AS x \gset
COMMIT;
SELECT 'ten rows' AS insert, dfr_records(:'lo', :'x') AS tides_records;
CREATE INDEX dfr_nb ON dfr USING btree (k);
SELECT pg_current_wal_insert_lsn() AS lo \gset
BEGIN;
INSERT INTO dfr VALUES (20011, 1, 'one row, a btree index');
SELECT pg_current_xact_id()::text::xid AS x \gset
COMMIT;
SELECT 'one row, a btree index' AS insert, dfr_records(:'lo', :'x') AS tides_records;
DROP INDEX dfr_nb;
SELECT id, t FROM dfr WHERE id >= 20000 AND id IN (20000, 20005, 20011) ORDER BY id;
DROP FUNCTION dfr_records;
DROP EXTENSION pg_walinspect;
RESET synchronous_commit;

-- every row has its entries
SELECT count(*) FROM tides_verify_index('dfr_id')
UNION ALL SELECT count(*) FROM tides_verify_index('dfr_k')
UNION ALL SELECT count(*) FROM tides_verify_index('dfr_t');
RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE dfr;
