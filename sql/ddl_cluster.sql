--
-- ddl_cluster: CLUSTER and VACUUM FULL of a tides table: new storage, same rows
-- (in index order for CLUSTER), indexes rebuilt, dead versions gone.
--
-- dd_reset(): the test table, freshly loaded
CREATE PROCEDURE dd_reset() LANGUAGE plpgsql AS $$
BEGIN
    DROP TABLE IF EXISTS dd;
    CREATE TABLE dd (id int PRIMARY KEY, k int, v text) USING tides;
    INSERT INTO dd SELECT i, (i * 7919) % 5003, md5(i::text) FROM generate_series(1, 10000) i;
    CREATE INDEX dd_k ON dd (k);
END $$;
CALL dd_reset();
CREATE FUNCTION dd_digest() RETURNS TABLE (n bigint, sum_k bigint, digest text) LANGUAGE sql AS $$
    SELECT count(*), sum(k)::bigint, md5(string_agg(id || ':' || k || ':' || v, ',' ORDER BY id)) FROM dd
$$;
SELECT * FROM dd_digest();
-- is the table's physical order (a plain sequential scan) sorted by k?
CREATE FUNCTION dd_sorted_by_k() RETURNS bool LANGUAGE plpgsql AS $$
DECLARE prev int := -1; r record; sorted bool := true;
BEGIN
    SET LOCAL enable_indexscan = off;
    SET LOCAL enable_bitmapscan = off;
    SET LOCAL max_parallel_workers_per_gather = 0;
    FOR r IN SELECT k FROM dd LOOP
        IF r.k < prev THEN sorted := false; END IF;
        prev := r.k;
    END LOOP;
    RETURN sorted;
END $$;
SELECT dd_sorted_by_k();

--
-- CLUSTER: new storage in index order, same contents, indexes rebuilt
--
UPDATE dd SET v = upper(v) WHERE id % 10 = 0;
DELETE FROM dd WHERE id % 10 = 5;
SELECT relfilenode AS old_node FROM pg_class WHERE relname = 'dd' \gset
CLUSTER dd USING dd_k;
SELECT relfilenode <> :old_node AS new_storage FROM pg_class WHERE relname = 'dd';
SELECT dd_sorted_by_k();
SELECT * FROM dd_digest();
SET enable_seqscan = off;
SELECT count(*), sum(id) FROM dd WHERE k BETWEEN 100 AND 200;
SELECT * FROM dd WHERE id = 4242;
RESET enable_seqscan;
-- CLUSTER again (the table remembers its index): rolled back, then committed
BEGIN;
CLUSTER dd;
ROLLBACK;
CLUSTER dd;
SELECT * FROM dd_digest();

--
-- VACUUM FULL: new storage without the dead versions
--
CALL dd_reset();
UPDATE dd SET k = k + 1 WHERE id % 2 = 0;
DELETE FROM dd WHERE id > 5000;
SELECT tides_relation_size('dd') AS before_full \gset
SELECT relfilenode AS old_node FROM pg_class WHERE relname = 'dd' \gset
VACUUM FULL dd;
SELECT relfilenode <> :old_node AS new_storage FROM pg_class WHERE relname = 'dd';
SELECT tides_flush();
SELECT tides_relation_size('dd') < :before_full AS smaller;
SELECT * FROM dd_digest();
SET enable_seqscan = off;
SELECT count(*), sum(id) FROM dd WHERE k BETWEEN 100 AND 200;
RESET enable_seqscan;
VACUUM FULL ANALYZE dd;
SELECT * FROM dd_digest();

DROP TABLE dd;
DROP PROCEDURE dd_reset();
DROP FUNCTION dd_digest(), dd_sorted_by_k();
