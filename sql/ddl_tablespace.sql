--
-- ddl_tablespace: ALTER TABLE ... SET TABLESPACE of tides tables and back, CREATE
-- TABLE ... TABLESPACE, a rolled back move, DROP TABLESPACE afterwards.
-- The tablespace is an in-place one (a directory under pg_tblspc/, as
-- PostgreSQL's own tablespace test makes), so the test needs no directory
-- prepared outside the server and runs under make installcheck.
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
-- ALTER TABLE SET TABLESPACE (and back)
--
SET allow_in_place_tablespaces = on;
CREATE TABLESPACE tides_ts LOCATION '';
RESET allow_in_place_tablespaces;
ALTER TABLE dd SET TABLESPACE tides_ts;
SELECT t.spcname FROM pg_class c JOIN pg_tablespace t ON t.oid = c.reltablespace WHERE c.relname = 'dd';
SELECT * FROM dd_digest();
INSERT INTO dd VALUES (20001, 1, 'in tablespace');
UPDATE dd SET v = 'moved' WHERE id = 1;
SET enable_seqscan = off;
SELECT * FROM dd WHERE id IN (1, 20001) ORDER BY id;
RESET enable_seqscan;
CREATE TABLE dd_ts (a int, b text) USING tides TABLESPACE tides_ts;
INSERT INTO dd_ts SELECT g, 'b' || g FROM generate_series(1, 100) g;
SELECT count(*), sum(a) FROM dd_ts;
-- a rolled back move keeps the table where it was
BEGIN;
ALTER TABLE dd_ts SET TABLESPACE pg_default;
ROLLBACK;
SELECT count(*), sum(a) FROM dd_ts;
ALTER TABLE dd SET TABLESPACE pg_default;
ALTER TABLE dd_ts SET TABLESPACE pg_default;
SELECT relname, reltablespace FROM pg_class WHERE relname IN ('dd', 'dd_ts') ORDER BY relname;
SELECT count(*), sum(a) FROM dd_ts;
SELECT * FROM dd WHERE id IN (1, 20001) ORDER BY id;
DELETE FROM dd WHERE id = 20001;
-- nothing of the tables is left in the tablespace
DROP TABLESPACE tides_ts;
DROP TABLE dd_ts;

DROP TABLE dd;
DROP PROCEDURE dd_reset();
DROP FUNCTION dd_digest();
