-- dump_setup.sql -- contents of the database that test/ext/run.sh dumps
-- with pg_dump -Fc and restores with pg_restore (check "pg_dump").  Run
-- after CREATE EXTENSION tidesam, and once more in a database where
-- heap_reference.sql made "tides" heap, for the reference contents.
CREATE TABLE d_plain (id int PRIMARY KEY, v text, n numeric, ts timestamptz) USING tides;
INSERT INTO d_plain SELECT g, md5(g::text), g / 7.0, '2024-01-01 00:00:00+00'::timestamptz + g * interval '1 minute'
FROM generate_series(1, 20000) g;
UPDATE d_plain SET v = upper(v) WHERE id % 3 = 0;
DELETE FROM d_plain WHERE id % 10 = 0;
CREATE INDEX d_plain_v ON d_plain (v);
-- toasted values
CREATE TABLE d_toast (id int PRIMARY KEY, t text, b bytea) USING tides;
INSERT INTO d_toast SELECT g, string_agg(md5((g * 100 + i)::text), '' ORDER BY i), decode(repeat('ab', 100000 * g), 'hex')
FROM generate_series(1, 5) g, generate_series(1, 5000) i GROUP BY g;
-- foreign keys, identity, generated columns, defaults
CREATE TABLE d_parent (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text UNIQUE) USING tides;
CREATE TABLE d_child (id serial PRIMARY KEY, parent_id int REFERENCES d_parent ON DELETE CASCADE,
                      qty int DEFAULT 1, double_qty int GENERATED ALWAYS AS (qty * 2) STORED) USING tides;
INSERT INTO d_parent (name) SELECT 'p' || g FROM generate_series(1, 100) g;
INSERT INTO d_child (parent_id, qty) SELECT 1 + g % 100, g FROM generate_series(1, 1000) g;
-- partitions, mixed access methods
CREATE TABLE d_part (id int, region text) PARTITION BY LIST (region);
CREATE TABLE d_part_a PARTITION OF d_part FOR VALUES IN ('a') USING tides;
CREATE TABLE d_part_h PARTITION OF d_part FOR VALUES IN ('h') USING heap;
INSERT INTO d_part SELECT g, CASE WHEN g % 2 = 0 THEN 'a' ELSE 'h' END FROM generate_series(1, 1000) g;
-- an unlogged table, a materialized view, an empty table, a table with a
-- trigger, a heap table
CREATE UNLOGGED TABLE d_unlogged (id int, v text) USING tides;
INSERT INTO d_unlogged SELECT g, 'u' || g FROM generate_series(1, 100) g;
CREATE MATERIALIZED VIEW d_mv USING tides AS SELECT parent_id, sum(qty) AS total FROM d_child GROUP BY parent_id;
CREATE TABLE d_empty (id int) USING tides;
CREATE TABLE d_heap (id int, v text) USING heap;
INSERT INTO d_heap SELECT g, 'h' || g FROM generate_series(1, 100) g;
-- the default access method of the database, used by pg_dump's SET
SET default_table_access_method = tides;
CREATE TABLE d_default (id int, v text);
INSERT INTO d_default VALUES (1, 'by default');
