--
-- ddl_rewrite: ALTER TABLE rewrites of a tides table: column type changes,
-- volatile defaults, DROP COLUMN, a rolled back rewrite, SET ACCESS METHOD
-- heap and back, SET UNLOGGED / SET LOGGED.
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
-- ALTER TABLE rewrites
--
SELECT relfilenode AS old_node FROM pg_class WHERE relname = 'dd' \gset
ALTER TABLE dd ALTER COLUMN k TYPE bigint;
SELECT relfilenode <> :old_node AS rewritten FROM pg_class WHERE relname = 'dd';
SELECT * FROM dd_digest();
ALTER TABLE dd ADD COLUMN c1 int DEFAULT 5;
ALTER TABLE dd ADD COLUMN c2 int DEFAULT (clock_timestamp() IS NOT NULL)::int;
SELECT count(*), sum(c1), sum(c2) FROM dd;
ALTER TABLE dd DROP COLUMN c1;
ALTER TABLE dd ALTER COLUMN v TYPE varchar(40), ALTER COLUMN c2 SET NOT NULL;
SELECT * FROM dd_digest();
SELECT count(*), sum(c2) FROM dd;
ALTER TABLE dd DROP COLUMN c2;
-- a rewrite rolled back
BEGIN;
ALTER TABLE dd ALTER COLUMN v TYPE text USING v || '!';
SELECT count(*) FROM dd WHERE v LIKE '%!';
ROLLBACK;
SELECT count(*) FROM dd WHERE v LIKE '%!';
-- to heap and back
ALTER TABLE dd SET ACCESS METHOD heap;
SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = 'dd';
SELECT * FROM dd_digest();
ALTER TABLE dd SET ACCESS METHOD tides;
SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = 'dd';
SELECT * FROM dd_digest();
-- unlogged and back
ALTER TABLE dd SET UNLOGGED;
SELECT relpersistence FROM pg_class WHERE relname = 'dd';
UPDATE dd SET v = v WHERE id = 2;
SELECT * FROM dd_digest();
ALTER TABLE dd SET LOGGED;
SELECT relpersistence FROM pg_class WHERE relname = 'dd';
SELECT * FROM dd_digest();

DROP TABLE dd;
DROP PROCEDURE dd_reset();
DROP FUNCTION dd_digest();
