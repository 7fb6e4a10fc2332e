--
-- tides.index_method: which indexes become tides_btree.
--
SET default_table_access_method = tides;
SHOW tides.index_method;
SET tides.index_method = tides_btree;

CREATE FUNCTION am_of(tab regclass) RETURNS TABLE (index text, am name)
LANGUAGE sql AS $$
    SELECT c.relname::text, a.amname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = tab ORDER BY 1
$$;

-- constraints of CREATE TABLE; an unsupported key type stays btree
CREATE TABLE s1 (id int PRIMARY KEY, code text UNIQUE, tags int[] UNIQUE,
                 a int, b date, EXCLUDE USING btree (a WITH =));
SELECT * FROM am_of('s1');

-- CREATE INDEX without USING; USING btree written in any form is kept
CREATE INDEX s1_a ON s1 (a);
CREATE INDEX s1_b ON s1 USING btree (b);
CREATE INDEX s1_b2 ON s1 using BTREE (b);
CREATE INDEX s1_b3 ON s1 /* comment */ USING "btree" (b);
CREATE INDEX "on" ON s1 (b);
CREATE INDEX s1_b4 ON ONLY s1 (b) WHERE b > '2020-01-01';
CREATE INDEX s1_expr ON s1 ((a + 1), lower(code));
CREATE INDEX s1_tags ON s1 (tags);
CREATE INDEX s1_inc ON s1 (a) INCLUDE (tags);
CREATE INDEX s1_pat ON s1 (code text_pattern_ops);
CREATE INDEX s1_pat2 ON s1 (code pg_catalog.text_pattern_ops);
CREATE INDEX CONCURRENTLY s1_conc ON s1 (b, a DESC);
SELECT * FROM am_of('s1');

-- nondeterministic collations stay btree
CREATE COLLATION case_insensitive (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE s2 (t text COLLATE case_insensitive PRIMARY KEY, u text UNIQUE);
CREATE INDEX s2_tc ON s2 (t COLLATE "C");
SELECT * FROM am_of('s2');

-- ALTER TABLE ADD CONSTRAINT / ADD COLUMN (pgbench -i does this)
CREATE TABLE s3 (x int, y text);
ALTER TABLE s3 ADD PRIMARY KEY (x);
ALTER TABLE s3 ADD COLUMN z int UNIQUE, ADD CONSTRAINT s3_y UNIQUE (y);
ALTER TABLE s3 ADD COLUMN w int[] UNIQUE;
SELECT * FROM am_of('s3');

-- heap tables, partitioned tables and partitions, materialized views: btree
CREATE TABLE s4 (x int PRIMARY KEY) USING heap;
CREATE INDEX s4_x ON s4 (x);
CREATE TABLE s5 (x int PRIMARY KEY, y int) PARTITION BY RANGE (x);
CREATE TABLE s5a PARTITION OF s5 FOR VALUES FROM (0) TO (100);
CREATE INDEX s5a_y ON s5a (y);
CREATE MATERIALIZED VIEW s6 AS SELECT 1 AS x;
CREATE UNIQUE INDEX s6_x ON s6 (x);
SELECT * FROM am_of('s4') UNION ALL SELECT * FROM am_of('s5') UNION ALL SELECT * FROM am_of('s5a')
UNION ALL SELECT * FROM am_of('s6');

-- a table created alone and attached as a partition keeps its tides_btree
-- primary key as the partition's index of the parent's btree one
CREATE TABLE s5b (x int PRIMARY KEY, y int);
ALTER TABLE s5 ATTACH PARTITION s5b FOR VALUES FROM (100) TO (200);
SELECT * FROM am_of('s5b');
SELECT c.relname, p.relname AS parent FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 's5_pkey' ORDER BY 1;
INSERT INTO s5 VALUES (150, 1) ON CONFLICT (x) DO UPDATE SET y = s5.y + 1;
INSERT INTO s5 VALUES (150, 1) ON CONFLICT (x) DO UPDATE SET y = s5.y + 1;
SELECT * FROM s5;

-- LIKE ... INCLUDING INDEXES copies the method of each index
CREATE TABLE s7 (LIKE s1 INCLUDING INDEXES);
SELECT * FROM am_of('s7');

-- the setting off
SET tides.index_method = btree;
CREATE TABLE s8 (id int PRIMARY KEY);
CREATE INDEX s8_id ON s8 (id);
SELECT * FROM am_of('s8');
SET tides.index_method = nonsense;

-- the indexes work: a foreign key, ON CONFLICT, an index scan
SET tides.index_method = tides_btree;
CREATE TABLE s9 (id int REFERENCES s1, v text);
INSERT INTO s1 (id, code, a) VALUES (1, 'one', 10), (2, 'two', 20);
INSERT INTO s9 VALUES (1, 'x');
INSERT INTO s9 VALUES (3, 'y');
INSERT INTO s1 (id, code) VALUES (1, 'uno') ON CONFLICT (id) DO UPDATE SET code = excluded.code;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM s1 WHERE id = 1;
SELECT id, code FROM s1 WHERE id = 1;
RESET enable_seqscan;

-- ADD CONSTRAINT ... USING INDEX of an index that the same ALTER TABLE
-- re-creates (ALTER TYPE of its column): the new index passes PostgreSQL's
-- "is not a btree" check too (src/index/tidx_compat.c); also with a rename,
-- two constraints, and a failure after the re-creation
CREATE TABLE s10 (f1 int, f2 text);
INSERT INTO s10 VALUES (42, 'a'), (43, 'b');
CREATE UNIQUE INDEX s10_i ON s10 (f1);
CREATE UNIQUE INDEX s10_j ON s10 (f2);
ALTER TABLE s10 ADD CONSTRAINT s10_pk PRIMARY KEY USING INDEX s10_i, ADD UNIQUE USING INDEX s10_j,
  ALTER f1 TYPE bigint, ALTER f2 TYPE varchar(10);
SELECT * FROM am_of('s10');
SELECT conname, contype FROM pg_constraint WHERE conrelid = 's10'::regclass ORDER BY 1;
SELECT count(*) FROM tides_verify_index('s10_pk') UNION ALL SELECT count(*) FROM tides_verify_index('s10_j');
INSERT INTO s10 VALUES (43, 'c');
CREATE TABLE s11 (f1 int);
INSERT INTO s11 VALUES (1), (NULL);
CREATE UNIQUE INDEX s11_i ON s11 (f1);
ALTER TABLE s11 ADD PRIMARY KEY USING INDEX s11_i, ALTER f1 TYPE bigint;
SELECT * FROM am_of('s11');
SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 's11'::regclass AND attname = 'f1';

DROP TABLE s1, s2, s3, s4, s5, s7, s8, s9, s10, s11 CASCADE;
DROP MATERIALIZED VIEW s6;
DROP COLLATION case_insensitive;
DROP FUNCTION am_of(regclass);
