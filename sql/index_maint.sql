--
-- tides_btree maintenance: VACUUM, REINDEX, TRUNCATE, CLUSTER, tablespaces,
-- temporary and unlogged tables, options, and what cannot be indexed.
--
SET default_table_access_method = tides;

CREATE TABLE mt (id int, v text, w numeric);
CREATE INDEX mt_id ON mt USING tides_btree (id);
CREATE UNIQUE INDEX mt_v ON mt USING tides_btree (v);
INSERT INTO mt SELECT g, 'v' || g, g / 10.0 FROM generate_series(1, 2000) g;
SELECT count(*) FROM tides_verify_index('mt_id');

-- updates and deletes, then VACUUM removes the dead rows' entries
UPDATE mt SET id = id + 10000 WHERE id % 4 = 0;
DELETE FROM mt WHERE id % 4 = 1;
SELECT count(*) FROM tides_verify_index('mt_id') UNION ALL SELECT count(*) FROM tides_verify_index('mt_v');
VACUUM mt;
SELECT count(*) FROM tides_verify_index('mt_id') UNION ALL SELECT count(*) FROM tides_verify_index('mt_v');
-- no entry of a dead row is left: as many entries as live rows (1500)
SELECT tides_index_entries('mt_id') AS mt_id_entries, tides_index_entries('mt_v') AS mt_v_entries;
-- an update-heavy table: its index stays at one entry per live row after VACUUM
CREATE TABLE mu (id int, n int);
CREATE INDEX mu_n ON mu USING tides_btree (n);
INSERT INTO mu SELECT g, 0 FROM generate_series(1, 500) g;
DO $$
BEGIN
    FOR i IN 1..20 LOOP
        UPDATE mu SET n = n + 1;
    END LOOP;
END
$$;
SELECT tides_index_entries('mu_n') AS before_vacuum;
VACUUM mu;
SELECT tides_index_entries('mu_n') AS after_vacuum, count(*) FILTER (WHERE n = 20) AS rows_at_20 FROM mu;
DROP TABLE mu;
SELECT tides_index_entries('pg_class_oid_index');
SET enable_seqscan = off;
SELECT count(*), min(id), max(id) FROM mt WHERE id > 0;
RESET enable_seqscan;

-- REINDEX, and in a transaction that rolls back
REINDEX INDEX mt_id;
BEGIN;
REINDEX TABLE mt;
ROLLBACK;
REINDEX TABLE mt;
REINDEX INDEX CONCURRENTLY mt_v;
SELECT count(*) FROM tides_verify_index('mt_id') UNION ALL SELECT count(*) FROM tides_verify_index('mt_v');

-- CLUSTER along a tides_btree index, VACUUM FULL
CLUSTER mt USING mt_v;
SELECT (SELECT array_agg(v) FROM (SELECT v FROM mt LIMIT 3) s);
VACUUM FULL mt;
SELECT count(*) FROM tides_verify_index('mt_id') UNION ALL SELECT count(*) FROM tides_verify_index('mt_v');

-- ALTER TABLE rewrites
ALTER TABLE mt ALTER w TYPE float8;
ALTER TABLE mt ALTER id TYPE bigint;
SELECT count(*) FROM tides_verify_index('mt_id') UNION ALL SELECT count(*) FROM tides_verify_index('mt_v');

-- TRUNCATE: transactional, and of a table created in the same transaction
BEGIN;
TRUNCATE mt;
SELECT count(*) FROM mt WHERE id = 2;
ROLLBACK;
SELECT count(*) FROM mt WHERE id = 2;
TRUNCATE mt;
INSERT INTO mt VALUES (1, 'a', 1);
BEGIN;
CREATE TABLE mt2 (a int);
CREATE INDEX mt2_a ON mt2 USING tides_btree (a);
INSERT INTO mt2 VALUES (1), (2);
TRUNCATE mt2;
INSERT INTO mt2 VALUES (3);
SELECT count(*) FROM tides_verify_index('mt2_a');
COMMIT;
SET enable_seqscan = off;
SELECT * FROM mt2 WHERE a > 0;
SELECT * FROM mt WHERE v = 'a';
RESET enable_seqscan;

-- temporary tables (ON COMMIT DELETE ROWS truncates at every commit)
CREATE TEMP TABLE tt (a int PRIMARY KEY USING INDEX TABLESPACE pg_default) ON COMMIT DELETE ROWS;
CREATE INDEX tt_a ON tt USING tides_btree (a);
BEGIN;
INSERT INTO tt VALUES (1), (2);
SELECT count(*) FROM tides_verify_index('tt_a');
COMMIT;
INSERT INTO tt VALUES (5);
SELECT count(*) FROM tt;
TRUNCATE tt;
SELECT count(*) FROM tides_verify_index('tt_a');

-- unlogged tables
CREATE UNLOGGED TABLE ut (a int);
CREATE INDEX ut_a ON ut USING tides_btree (a);
INSERT INTO ut SELECT generate_series(1, 10);
SELECT count(*) FROM tides_verify_index('ut_a');

-- tablespaces: refused (sql/ddl_tablespace.sql); with tides.tablespaces =
-- ignore, the moved index is rebuilt in its new place
SET allow_in_place_tablespaces = on;
CREATE TABLESPACE tidx_space LOCATION '';
ALTER INDEX mt_id SET TABLESPACE tidx_space;
DO $$
BEGIN
    ALTER INDEX ALL IN TABLESPACE pg_default SET TABLESPACE tidx_space;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'ALTER INDEX ALL IN TABLESPACE refused (%)', SQLSTATE;
END $$;
SELECT count(*) FROM pg_class WHERE reltablespace = (SELECT oid FROM pg_tablespace WHERE spcname = 'tidx_space');
SET tides.tablespaces = ignore;
ALTER INDEX mt_id SET TABLESPACE tidx_space;
RESET tides.tablespaces;
SET enable_seqscan = off;
SELECT * FROM mt WHERE id = 1;
RESET enable_seqscan;
SELECT count(*) FROM tides_verify_index('mt_id');
REINDEX (TABLESPACE pg_default) INDEX mt_id;
SELECT count(*) FROM tides_verify_index('mt_id');
DROP TABLESPACE tidx_space;

-- options: as btree's
CREATE INDEX mt_ff ON mt USING tides_btree (id) WITH (fillfactor = 70, deduplicate_items = off);
CREATE INDEX mt_bad ON mt USING tides_btree (id) WITH (fillfactor = 5);
CREATE INDEX mt_bad ON mt USING tides_btree (id) WITH (nonsense = 1);

-- what cannot be indexed fails at CREATE INDEX, naming it
CREATE TABLE bad (arr int[], j jsonb, t text COLLATE "C", r int4range);
CREATE INDEX ON bad USING tides_btree (arr);
CREATE INDEX ON bad USING tides_btree (j);
CREATE INDEX ON bad USING tides_btree (r);
CREATE INDEX ON bad USING tides_btree (t record_image_ops);
CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE INDEX ON bad USING tides_btree ((t COLLATE ci));
-- keys longer than the engine's 65536 bytes, at CREATE INDEX and INSERT;
-- one just below it is stored and found (btree would refuse it, see README)
INSERT INTO bad (t) VALUES (repeat('x', 70000));
CREATE INDEX ON bad USING tides_btree (t);
DELETE FROM bad;
CREATE INDEX bad_t ON bad USING tides_btree (t);
INSERT INTO bad (t) VALUES (repeat('x', 65520));
INSERT INTO bad (t) VALUES (repeat('x', 2000)), (repeat('y', 65000));
SET enable_seqscan = off;
SELECT left(t, 1), length(t) FROM bad WHERE t > repeat('x', 2000) ORDER BY t;
RESET enable_seqscan;
SELECT amvalidate(c.oid), count(*) FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
WHERE a.amname = 'tides_btree' GROUP BY 1;

-- DROP schedules the trees' removal; a dropped index is gone
DROP INDEX mt_ff;
DROP TABLE mt, mt2, ut, bad;
DROP COLLATION ci;
