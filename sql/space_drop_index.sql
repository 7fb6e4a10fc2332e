--
-- space_drop_index: dropping a tides_btree index gives its entries' space
-- back once the drop commits -- by DROP INDEX, by the DROP TABLE that takes
-- it along, by DROP INDEX CONCURRENTLY, and for the index REINDEX
-- CONCURRENTLY replaces -- and not when the drop rolls back.  As in
-- space_truncate_drop, the yardstick is the engine's total level bytes
-- after tides_flush() and tides_compact(); sizes are compared, not printed.
--
CREATE FUNCTION di_level_bytes() RETURNS bigint LANGUAGE sql AS $$
    SELECT sum(value)::bigint FROM tides_stats() WHERE name LIKE 'level%\_bytes'
$$;
CREATE FUNCTION di_settled_bytes() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    PERFORM tides_flush();
    PERFORM tides_compact();
    RETURN di_level_bytes();
END $$;
-- wait (up to 30 s) until the level bytes fall to at most target, letting
-- the maintenance worker drop the trees; true if they did
CREATE FUNCTION di_wait_bytes_at_most(target bigint) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..60 LOOP
        IF di_settled_bytes() <= target THEN
            RETURN true;
        END IF;
        PERFORM pg_sleep(0.5);
    END LOOP;
    RAISE NOTICE 'level bytes % > target %', di_level_bytes(), target;
    RETURN false;
END $$;

-- a table and an index on a column of incompressible text: the index's
-- entries are most of its own bytes
CREATE TABLE di_t (id int, v text) USING tides;
INSERT INTO di_t SELECT g, md5(g::text) || md5((g + 1)::text) FROM generate_series(1, 150000) g;

--
-- DROP INDEX (and a rolled back one)
--
SELECT di_settled_bytes() AS base \gset
CREATE INDEX di_v ON di_t USING tides_btree (v);
SELECT di_settled_bytes() AS indexed \gset
SELECT tides_relation_size('di_v') AS isize \gset
SELECT :isize > 5000000 AS index_is_big, :indexed - :base > :isize / 2 AS index_takes_space;
BEGIN;
DROP INDEX di_v;
ROLLBACK;
SELECT pg_sleep(1);
SELECT di_settled_bytes() >= :indexed - :isize / 10 AS still_there;
SET enable_seqscan = off;
SELECT id FROM di_t WHERE v = md5('7') || md5('8');
RESET enable_seqscan;
DROP INDEX di_v;
SELECT di_wait_bytes_at_most(:base + :isize / 5) AS drop_index_gave_space_back;

--
-- DROP TABLE takes its tides_btree indexes' trees along
--
CREATE TABLE di_t2 (id int, v text) USING tides;
SELECT di_settled_bytes() AS base2 \gset
CREATE INDEX di_t2_v ON di_t2 USING tides_btree (v);
INSERT INTO di_t2 SELECT g, md5(g::text) || md5((g + 1)::text) FROM generate_series(1, 150000) g;
SELECT di_settled_bytes() AS loaded2 \gset
SELECT :loaded2 - :base2 > 10000000 AS table_and_index_are_big;
DROP TABLE di_t2;
SELECT di_wait_bytes_at_most(:base2 + (:loaded2 - :base2) / 10) AS drop_table_took_the_index;

--
-- DROP INDEX CONCURRENTLY
--
SELECT di_settled_bytes() AS base \gset
CREATE INDEX di_v2 ON di_t USING tides_btree (v);
SELECT tides_relation_size('di_v2') AS isize \gset
DROP INDEX CONCURRENTLY di_v2;
SELECT di_wait_bytes_at_most(:base + :isize / 5) AS drop_concurrently_gave_space_back;

--
-- REINDEX CONCURRENTLY: the replaced index's entries go, the new index's stay
--
CREATE INDEX di_v3 ON di_t USING tides_btree (v);
SELECT di_settled_bytes() AS indexed \gset
SELECT tides_relation_size('di_v3') AS isize \gset
REINDEX INDEX CONCURRENTLY di_v3;
SELECT di_wait_bytes_at_most(:indexed + :isize / 5) AS old_index_gone;
SELECT tides_relation_size('di_v3') > :isize / 2 AS new_index_kept;
SELECT count(*) AS problems FROM tides_verify_index('di_v3');

DROP TABLE di_t;
DROP FUNCTION di_level_bytes(), di_settled_bytes(), di_wait_bytes_at_most(bigint);
