--
-- ddl_vacuum_analyze: VACUUM, VACUUM (FREEZE, ANALYZE) and ANALYZE of tides tables:
-- reltuples, pg_stats, planner estimates, pgstat counters.
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

--
-- VACUUM and ANALYZE: statistics exist, row counts are exact for a table
-- that fits in the sample
--
DELETE FROM dd WHERE id % 3 = 0;
VACUUM dd;
SELECT reltuples FROM pg_class WHERE relname = 'dd';
VACUUM (FREEZE, ANALYZE) dd;
SELECT reltuples FROM pg_class WHERE relname = 'dd';
SELECT relpages > 0 AS has_pages FROM pg_class WHERE relname = 'dd';
SELECT attname, null_frac, n_distinct, avg_width FROM pg_stats
WHERE tablename = 'dd' ORDER BY attname;
SELECT count(*) AS mcv_or_histogram FROM pg_stats
WHERE tablename = 'dd' AND (most_common_vals IS NOT NULL OR histogram_bounds IS NOT NULL);
-- ANALYZE on a bigger table samples it
CREATE TABLE dd_big (id int, g int) USING tides;
INSERT INTO dd_big SELECT i, i % 100 FROM generate_series(1, 100000) i;
ANALYZE dd_big;
SELECT reltuples BETWEEN 90000 AND 110000 AS reltuples_close FROM pg_class WHERE relname = 'dd_big';
SELECT n_distinct FROM pg_stats WHERE tablename = 'dd_big' AND attname = 'g';
-- the planner's estimate uses the statistics
CREATE FUNCTION dd_plan_rows(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
    RETURN (j -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
END $$;
SELECT dd_plan_rows('SELECT * FROM dd_big WHERE g = 5') BETWEEN 600 AND 1400 AS estimate_close;
DROP FUNCTION dd_plan_rows(text);
SELECT n_live_tup > 0 AS counted FROM pg_stat_user_tables WHERE relname = 'dd_big';
-- when the sampled blocks hold far more rows than the sample wants (here
-- 300: statistics target 1), ANALYZE reads a window of each block and
-- scales what it counts (scan.c): the row totals stay close
SET default_statistics_target = 1;
ANALYZE dd_big;
SELECT reltuples BETWEEN 97000 AND 103000 AS reltuples_close FROM pg_class WHERE relname = 'dd_big';
DELETE FROM dd_big WHERE id % 2 = 0;
ANALYZE dd_big;
SELECT reltuples BETWEEN 47000 AND 53000 AS reltuples_close FROM pg_class WHERE relname = 'dd_big';
SELECT n_live_tup BETWEEN 47000 AND 53000 AS live_close FROM pg_stat_user_tables WHERE relname = 'dd_big';
RESET default_statistics_target;
DROP TABLE dd_big;

DROP TABLE dd;
DROP PROCEDURE dd_reset();
DROP FUNCTION dd_digest();
