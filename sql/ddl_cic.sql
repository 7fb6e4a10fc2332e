--
-- ddl_cic: CREATE INDEX CONCURRENTLY (plain, unique, failing unique) and
-- REINDEX (CONCURRENTLY) on a tides table with dead and updated rows.
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
-- CREATE INDEX CONCURRENTLY, REINDEX
--
UPDATE dd SET k = k + 100 WHERE id % 7 = 0;
DELETE FROM dd WHERE id % 11 = 0;
CREATE INDEX CONCURRENTLY dd_v ON dd (v);
CREATE UNIQUE INDEX CONCURRENTLY dd_id_k ON dd (id, k);
SELECT indexrelid::regclass, indisvalid, indisready FROM pg_index
WHERE indrelid = 'dd'::regclass ORDER BY indexrelid::regclass::text;
SET enable_seqscan = off;
SELECT id, k FROM dd WHERE v = md5('14');
SELECT count(*) FROM dd WHERE v > 'f';
RESET enable_seqscan;
SELECT count(*) FROM dd WHERE v > 'f';
-- a unique index that cannot be built is left invalid (which duplicate the
-- error names depends on the scan order: terse)
\set VERBOSITY terse
CREATE UNIQUE INDEX CONCURRENTLY dd_k_unique ON dd (k);
\set VERBOSITY default
SELECT indexrelid::regclass, indisvalid FROM pg_index
WHERE indexrelid = 'dd_k_unique'::regclass;
DROP INDEX dd_k_unique;
REINDEX INDEX CONCURRENTLY dd_v;
REINDEX TABLE dd;
SET enable_seqscan = off;
SELECT id, k FROM dd WHERE v = md5('14');
SELECT count(*) FROM dd WHERE k BETWEEN 100 AND 300;
RESET enable_seqscan;
SELECT count(*) FROM dd WHERE k BETWEEN 100 AND 300;
SELECT * FROM dd_digest();

DROP TABLE dd;
DROP PROCEDURE dd_reset();
DROP FUNCTION dd_digest();
