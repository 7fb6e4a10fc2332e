--
-- ddl_tablespace: tides rows live in $PGDATA/pg_tides whatever the
-- tablespace, so placing a tides table or tides_btree index in a tablespace
-- other than the database's default is refused (docs/operations.md,
-- "Tablespaces"): CREATE TABLE / INDEX ... TABLESPACE, default_tablespace,
-- temp_tablespaces, a partition of a parent with a tablespace, CREATE TABLE
-- AS, ALTER TABLE / INDEX ... SET TABLESPACE, ALTER INDEX ALL IN TABLESPACE,
-- REINDEX (TABLESPACE).  The database's default tablespace, named or not,
-- is accepted.  With tides.tablespaces = ignore everything is accepted and
-- the rows stay where they are: ALTER TABLE ... SET TABLESPACE and back,
-- CREATE TABLE ... TABLESPACE, a rolled back move, DROP TABLESPACE
-- afterwards.  The tablespace is an in-place one (a directory under
-- pg_tblspc/, as PostgreSQL's own tablespace test makes), so the test needs
-- no directory prepared outside the server and runs under make installcheck.
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

SET allow_in_place_tablespaces = on;
CREATE TABLESPACE tides_ts LOCATION '';
RESET allow_in_place_tablespaces;

--
-- refused
--
SHOW tides.tablespaces;
\set VERBOSITY default
CREATE TABLE dd_no (a int) USING tides TABLESPACE tides_ts;
\set VERBOSITY terse
ALTER TABLE dd SET TABLESPACE tides_ts;
CREATE INDEX dd_no_i ON dd USING tides_btree (v) TABLESPACE tides_ts;
CREATE TABLE dd_no USING tides TABLESPACE tides_ts AS SELECT 1 AS a;
SET default_tablespace = tides_ts;
CREATE TABLE dd_no (a int) USING tides;
RESET default_tablespace;
SET temp_tablespaces = tides_ts;
CREATE TEMP TABLE dd_no (a int) USING tides;
RESET temp_tablespaces;
CREATE TABLE dd_parted (a int) PARTITION BY RANGE (a) TABLESPACE tides_ts;
CREATE TABLE dd_part1 PARTITION OF dd_parted FOR VALUES FROM (0) TO (10) USING tides;
DROP TABLE dd_parted;
CREATE INDEX dd_v ON dd USING tides_btree (v);
ALTER INDEX dd_v SET TABLESPACE tides_ts;
REINDEX (TABLESPACE tides_ts) INDEX dd_v;
REINDEX (TABLESPACE tides_ts) TABLE dd;
\set VERBOSITY default
-- nothing moved, nothing was left behind
SELECT c.relname, c.reltablespace FROM pg_class c
WHERE c.relname LIKE 'dd%' AND c.relkind IN ('r', 'i', 'p') ORDER BY 1;
SELECT * FROM dd_digest();
SET enable_seqscan = off;
SELECT id FROM dd WHERE v = md5('42');
RESET enable_seqscan;
-- heap tables and btree indexes go where they are told, as always
CREATE TABLE dd_heap (a int PRIMARY KEY USING INDEX TABLESPACE tides_ts) USING heap TABLESPACE tides_ts;
CREATE INDEX dd_heap_a ON dd_heap (a) TABLESPACE tides_ts;
CREATE INDEX dd_btree ON dd (k) TABLESPACE tides_ts;
DROP INDEX dd_btree;
DROP TABLE dd_heap;
-- the database's default tablespace is accepted, named or not
CREATE TABLE dd_def (a int) USING tides TABLESPACE pg_default;
CREATE INDEX dd_def_a ON dd_def USING tides_btree (a) TABLESPACE pg_default;
ALTER TABLE dd SET TABLESPACE pg_default;
DROP TABLE dd_def;
DROP INDEX dd_v;

--
-- tides.tablespaces = ignore: accepted, and the rows stay in pg_tides
--
SET tides.tablespaces = ignore;
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
DROP TABLE dd_ts;

-- an index moved there and back
CREATE INDEX dd_v ON dd USING tides_btree (v) TABLESPACE tides_ts;
ALTER INDEX dd_v SET TABLESPACE pg_default;
SET enable_seqscan = off;
SELECT id FROM dd WHERE v = md5('42');
RESET enable_seqscan;
DROP INDEX dd_v;
-- a table placed there before the refusal: rewriting it is refused, moving it back is not
CREATE TABLE dd_old (a int) USING tides TABLESPACE tides_ts;
INSERT INTO dd_old VALUES (1), (2);
RESET tides.tablespaces;
\set VERBOSITY terse
TRUNCATE dd_old;
VACUUM FULL dd_old;
\set VERBOSITY default
SELECT count(*) FROM dd_old;
ALTER TABLE dd_old SET TABLESPACE pg_default;
TRUNCATE dd_old;
SELECT count(*) FROM dd_old;
DROP TABLE dd_old;
-- only a superuser may choose
CREATE ROLE regress_tides_ts_user;
SET ROLE regress_tides_ts_user;
SET tides.tablespaces = ignore;
RESET ROLE;
DROP ROLE regress_tides_ts_user;
-- nothing of the tables is left in the tablespace
DROP TABLESPACE tides_ts;

DROP TABLE dd;
DROP PROCEDURE dd_reset();
DROP FUNCTION dd_digest();
