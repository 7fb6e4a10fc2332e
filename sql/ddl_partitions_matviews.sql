--
-- ddl_partitions_matviews: partitioned tables with tides (and heap) partitions and rows
-- moving between them; materialized views, CREATE TABLE AS and SELECT INTO
-- with tides.
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
-- partitions: tides and heap partitions in one table, rows moving between
-- them with UPDATE
--
CREATE TABLE dd_part (id int, region text, v int) PARTITION BY LIST (region);
CREATE TABLE dd_part_a PARTITION OF dd_part FOR VALUES IN ('a') USING tides;
CREATE TABLE dd_part_b PARTITION OF dd_part FOR VALUES IN ('b') USING tides;
CREATE TABLE dd_part_h PARTITION OF dd_part FOR VALUES IN ('h') USING heap;
INSERT INTO dd_part SELECT g, (ARRAY['a','b','h'])[1 + g % 3], g FROM generate_series(1, 300) g;
UPDATE dd_part SET region = 'b' WHERE region = 'a' AND id <= 30;
UPDATE dd_part SET region = 'a' WHERE region = 'h' AND id <= 30;
UPDATE dd_part SET region = 'h' WHERE region = 'b' AND id > 270;
SELECT tableoid::regclass, count(*), sum(v) FROM dd_part GROUP BY 1 ORDER BY tableoid::regclass::text;
DELETE FROM dd_part WHERE v % 2 = 0;
SELECT tableoid::regclass, count(*), sum(v) FROM dd_part GROUP BY 1 ORDER BY tableoid::regclass::text;
-- a partitioned table itself takes no access method
CREATE TABLE dd_part2 (id int) PARTITION BY RANGE (id) USING tides;
DROP TABLE dd_part;

--
-- materialized views, CREATE TABLE AS, SELECT INTO
--
CREATE MATERIALIZED VIEW dd_mv USING tides AS SELECT k % 10 AS g, count(*) AS n FROM dd GROUP BY 1;
CREATE UNIQUE INDEX ON dd_mv (g);
SELECT * FROM dd_mv ORDER BY g;
DELETE FROM dd WHERE k % 10 = 0;
REFRESH MATERIALIZED VIEW dd_mv;
SELECT * FROM dd_mv ORDER BY g;
UPDATE dd SET k = 10 WHERE id <= 100;
REFRESH MATERIALIZED VIEW CONCURRENTLY dd_mv;
SELECT * FROM dd_mv ORDER BY g;
CREATE TABLE dd_ctas USING tides AS SELECT id, v FROM dd WHERE id <= 1000;
SET default_table_access_method = tides;
SELECT id, v INTO dd_into FROM dd WHERE id > 1000;
RESET default_table_access_method;
SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
WHERE c.relname IN ('dd_mv', 'dd_ctas', 'dd_into') ORDER BY 1;
SELECT (SELECT count(*) FROM dd_ctas) + (SELECT count(*) FROM dd_into) = (SELECT count(*) FROM dd) AS all_rows;
DROP MATERIALIZED VIEW dd_mv;
DROP TABLE dd_ctas, dd_into;


DROP TABLE dd;
DROP PROCEDURE dd_reset();
DROP FUNCTION dd_digest();
