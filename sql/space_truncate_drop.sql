--
-- space_truncate_drop: TRUNCATE and DROP TABLE give the engine's space back
-- once they commit (and not when they roll back).  Sizes are compared, not
-- printed.  The yardstick is the engine's total level bytes (tides_stats())
-- after tides_flush() and tides_compact(), against the size of the table's
-- rows (sum of pg_column_size; the engine compresses little of this data).
-- tides_relation_size() itself is checked by space_relation_size.
--
CREATE FUNCTION sp_level_bytes() RETURNS bigint LANGUAGE sql AS $$
    SELECT sum(value)::bigint FROM tides_stats() WHERE name LIKE 'level%\_bytes'
$$;
-- flush and compact, then the total level bytes
CREATE FUNCTION sp_settled_bytes() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    PERFORM tides_flush();
    PERFORM tides_compact();
    RETURN sp_level_bytes();
END $$;
-- wait (up to 30 s) until the level bytes fall to at most target, letting
-- the maintenance worker drop what it has to drop; true if they did
CREATE FUNCTION sp_wait_bytes_at_most(target bigint) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..60 LOOP
        IF sp_settled_bytes() <= target THEN
            RETURN true;
        END IF;
        PERFORM pg_sleep(0.5);
    END LOOP;
    RAISE NOTICE 'level bytes % > target %', sp_level_bytes(), target;
    RETURN false;
END $$;

-- about 30 MB of rows that do not compress much
CREATE FUNCTION sp_load(tbl regclass) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format($q$INSERT INTO %s SELECT g, md5(g::text) || md5((g + 1)::text) || md5((g * 7)::text)
                      FROM generate_series(1, 250000) g$q$, tbl);
END $$;

--
-- DROP TABLE
--
SELECT sp_settled_bytes() AS base \gset
CREATE TABLE sp_drop (id int, v text) USING tides;
SELECT sp_load('sp_drop');
SELECT sp_settled_bytes() AS loaded \gset
SELECT sum(pg_column_size(t.*)) AS tsize FROM sp_drop t \gset
SELECT :tsize > 10000000 AS table_is_big;
-- a rolled back DROP keeps everything
BEGIN;
DROP TABLE sp_drop;
ROLLBACK;
SELECT pg_sleep(1);
SELECT count(*) FROM sp_drop;
SELECT sp_settled_bytes() >= :loaded - :tsize / 10 AS still_there;
DROP TABLE sp_drop;
SELECT sp_wait_bytes_at_most(:base + :tsize / 5) AS drop_gave_space_back;

--
-- TRUNCATE
--
SELECT sp_settled_bytes() AS base \gset
CREATE TABLE sp_trunc (id int, v text) USING tides;
CREATE INDEX sp_trunc_id ON sp_trunc (id);
SELECT sp_load('sp_trunc');
SELECT sp_settled_bytes() AS loaded \gset
SELECT sum(pg_column_size(t.*)) AS tsize FROM sp_trunc t \gset
SELECT :tsize > 10000000 AS table_is_big;
-- a rolled back TRUNCATE keeps everything
BEGIN;
TRUNCATE sp_trunc;
SELECT count(*) FROM sp_trunc;
ROLLBACK;
SELECT pg_sleep(1);
SELECT count(*), sum(id) FROM sp_trunc;
SELECT sp_settled_bytes() >= :loaded - :tsize / 10 AS still_there;
TRUNCATE sp_trunc;
SELECT count(*) FROM sp_trunc;
SELECT tides_relation_size('sp_trunc') < :tsize / 10 AS table_now_small;
SELECT sp_wait_bytes_at_most(:base + :tsize / 5) AS truncate_gave_space_back;
-- the truncated table works as before
INSERT INTO sp_trunc VALUES (1, 'after truncate');
SET enable_seqscan = off;
SELECT * FROM sp_trunc WHERE id = 1;
RESET enable_seqscan;

--
-- TRUNCATE and DROP of a table created, loaded and truncated within one
-- transaction that commits (the first load must go), and one that aborts
-- (all of it must go)
--
SELECT sp_settled_bytes() AS before \gset
BEGIN;
CREATE TABLE sp_tx (id int, v text) USING tides;
SELECT sp_load('sp_tx');
TRUNCATE sp_tx;
INSERT INTO sp_tx VALUES (1, 'one');
COMMIT;
SELECT count(*) FROM sp_tx;
SELECT sp_wait_bytes_at_most(:before + 1000000) AS truncated_load_gone;
BEGIN;
CREATE TABLE sp_tx2 (id int, v text) USING tides;
SELECT sp_load('sp_tx2');
ROLLBACK;
SELECT sp_wait_bytes_at_most(:before + 1000000) AS aborted_table_gone;
BEGIN;
SELECT sp_load('sp_tx');
DROP TABLE sp_tx;
COMMIT;
SELECT sp_wait_bytes_at_most(:before + 1000000) AS dropped_in_same_tx_gone;

DROP TABLE sp_trunc;
DROP FUNCTION sp_level_bytes(), sp_settled_bytes(), sp_wait_bytes_at_most(bigint), sp_load(regclass);
