--
-- toast_from_heap: values that arrive in a tides table as TOAST pointers
-- into another table (INSERT ... SELECT, UPDATE ... FROM, CREATE TABLE AS,
-- ALTER TABLE SET ACCESS METHOD, a materialized view) must be detoasted
-- and stored by the tides table itself: after the heap table is dropped
-- (and its TOAST storage is gone), they read back unchanged.
--
-- t and b are stored out of line uncompressed, c out of line compressed
-- (ids 1..20) or inline compressed (ids 101..105)
CREATE TABLE th_heap (id int PRIMARY KEY, t text, b bytea, c text) USING heap;
ALTER TABLE th_heap ALTER COLUMN t SET STORAGE EXTERNAL, ALTER COLUMN b SET STORAGE EXTERNAL,
    ALTER COLUMN c SET COMPRESSION lz4;
INSERT INTO th_heap
SELECT g, string_agg(md5((g * 1000 + i)::text), '' ORDER BY i),
       decode(repeat(md5(g::text), 2000), 'hex'),
       repeat(string_agg(md5((g * 7000 + i)::text), '' ORDER BY i) FILTER (WHERE i <= 1000), 4)
FROM generate_series(1, 20) g, generate_series(1, 3000) i GROUP BY g;
INSERT INTO th_heap SELECT 100 + g, repeat('z', 5000 * g), NULL, repeat('y', 5000 * g)
FROM generate_series(1, 5) g;
-- the values really are out of line in th_heap: 20 * 3 + 5 of them
CREATE FUNCTION th_toasted(tbl regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    EXECUTE format('SELECT count(DISTINCT chunk_id) FROM %s',
                   (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = tbl)) INTO n;
    RETURN n;
END $$;
SELECT th_toasted('th_heap') AS out_of_line;
SELECT count(*) FILTER (WHERE pg_column_size(c) < length(c)) AS c_compressed FROM th_heap;
SELECT id, length(t), md5(t), length(b), md5(b), length(c), md5(c) FROM th_heap ORDER BY id;
CREATE TABLE th_digest AS
SELECT id, length(t) AS lt, md5(t) AS mt, length(b) AS lb, md5(b) AS mb, length(c) AS lc, md5(c) AS mc
FROM th_heap;

-- into tides tables in several ways
CREATE TABLE th_ins (id int, t text, b bytea, c text) USING tides;
INSERT INTO th_ins SELECT * FROM th_heap;
CREATE TABLE th_upd (id int, t text, b bytea, c text) USING tides;
INSERT INTO th_upd SELECT id, 'placeholder', NULL, NULL FROM th_heap;
UPDATE th_upd u SET t = h.t, b = h.b, c = h.c FROM th_heap h WHERE h.id = u.id;
CREATE TABLE th_ctas USING tides AS SELECT * FROM th_heap;
-- (through a function, so that the view does not depend on th_heap)
CREATE FUNCTION th_src() RETURNS TABLE (id int, t text, b bytea, c text) LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE 'SELECT id, t, b, c FROM th_heap';
END $$;
CREATE MATERIALIZED VIEW th_mv USING tides AS SELECT * FROM th_src();
CREATE TABLE th_ups (id int PRIMARY KEY, t text, b bytea, c text) USING tides;
INSERT INTO th_ups SELECT id, 'x', NULL, NULL FROM th_heap WHERE id % 2 = 0;
INSERT INTO th_ups SELECT * FROM th_heap
    ON CONFLICT (id) DO UPDATE SET t = excluded.t, b = excluded.b, c = excluded.c;
CREATE TABLE th_copy (id int, t text, b bytea, c text) USING tides;
INSERT INTO th_copy SELECT * FROM th_heap;
-- a tides table reading its values out of another tides table
CREATE TABLE th_chain (id int, t text, b bytea, c text) USING tides;
INSERT INTO th_chain SELECT * FROM th_copy;
-- a heap table turned into a tides table
CREATE TABLE th_heap2 (id int, t text, b bytea, c text) USING heap;
INSERT INTO th_heap2 SELECT * FROM th_heap;
ALTER TABLE th_heap2 SET ACCESS METHOD tides;

-- now the sources go away
DROP TABLE th_heap;
DROP TABLE th_copy;
-- make sure the dropped TOAST storage is really gone
CHECKPOINT;
SELECT tides_flush();

CREATE FUNCTION th_check(tbl regclass) RETURNS TABLE (n bigint, mismatches bigint)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format($q$
        SELECT count(*), count(*) FILTER (WHERE (length(x.t), md5(x.t), length(x.b), md5(x.b), length(x.c), md5(x.c))
                                     IS DISTINCT FROM (d.lt, d.mt, d.lb, d.mb, d.lc, d.mc))
        FROM %s x FULL JOIN th_digest d USING (id)$q$, tbl);
END $$;
SELECT 'th_ins' AS tbl, * FROM th_check('th_ins')
UNION ALL SELECT 'th_upd', * FROM th_check('th_upd')
UNION ALL SELECT 'th_ctas', * FROM th_check('th_ctas')
UNION ALL SELECT 'th_mv', * FROM th_check('th_mv')
UNION ALL SELECT 'th_ups', * FROM th_check('th_ups')
UNION ALL SELECT 'th_chain', * FROM th_check('th_chain')
UNION ALL SELECT 'th_heap2', * FROM th_check('th_heap2');
SELECT id, length(t), md5(t), length(b), md5(b), length(c), md5(c) FROM th_ins ORDER BY id;
-- and after the tides tables themselves are rewritten
VACUUM FULL th_ins;
CLUSTER th_ups USING th_ups_pkey;
SELECT 'th_ins' AS tbl, * FROM th_check('th_ins')
UNION ALL SELECT 'th_ups', * FROM th_check('th_ups');

DROP MATERIALIZED VIEW th_mv;
DROP TABLE th_ins, th_upd, th_ctas, th_ups, th_chain, th_heap2, th_digest;
DROP FUNCTION th_check(regclass), th_src(), th_toasted(regclass);
