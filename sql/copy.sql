--
-- copy: COPY FROM STDIN (text, csv) and TO STDOUT, a failing COPY, COPY of
-- many rows to a file and back (multi-insert batches), binary format,
-- COPY FREEZE, COPY into a table with indexes.  The file is psql's (\copy,
-- in the output directory), so the test does not need a server that may
-- write into the directory of whoever runs it.
--
\getenv abs_builddir PG_ABS_BUILDDIR
\cd :abs_builddir

-- COPY FROM STDIN (text and csv), COPY TO STDOUT
CREATE TABLE dml_copy (id int, t text, n numeric, d date, arr int[]) USING tides;
COPY dml_copy FROM STDIN;
1	one	1.5	2024-01-01	{1,2}
2	\N	-2	2024-02-29	{}
3	tab\there	0	\N	{3}
4	back\\slash	1e3	1999-12-31	\N
\.
COPY dml_copy FROM STDIN (FORMAT csv, NULL 'NULL', HEADER);
id,t,n,d,arr
5,"comma, quoted",5,2000-01-01,"{5,5}"
6,"""quotes""",6,NULL,NULL
7,,7,2001-01-01,{}
\.
SELECT * FROM dml_copy ORDER BY id;
COPY (SELECT * FROM dml_copy ORDER BY id) TO STDOUT;
COPY (SELECT * FROM dml_copy ORDER BY id) TO STDOUT (FORMAT csv, HEADER);
-- a bad row: nothing of the COPY stays
COPY dml_copy FROM STDIN;
8	eight	8	2024-01-01	{8}
9	nine	not_a_number	2024-01-01	{9}
\.
SELECT count(*) FROM dml_copy;

-- COPY of many rows out to a file and back in (multi-insert batches)
CREATE TABLE dml_big (id int, t text, x float8) USING tides;
INSERT INTO dml_big SELECT g, md5(g::text), g / 3.0 FROM generate_series(1, 50000) g;
\copy dml_big to 'results/basic_dml_copy.data'
CREATE TABLE dml_big2 (LIKE dml_big) USING tides;
\copy dml_big2 from 'results/basic_dml_copy.data'
SELECT count(*), sum(id), md5(string_agg(t, ',' ORDER BY id)) FROM dml_big2;
SELECT count(*) AS missing FROM (SELECT * FROM dml_big EXCEPT ALL SELECT * FROM dml_big2) s;
SELECT count(*) AS extra FROM (SELECT * FROM dml_big2 EXCEPT ALL SELECT * FROM dml_big) s;
-- binary format
\copy dml_big to 'results/basic_dml_copy.data' (format binary)
TRUNCATE dml_big2;
\copy dml_big2 from 'results/basic_dml_copy.data' (format binary)
SELECT count(*) AS differences FROM (
  (SELECT * FROM dml_big EXCEPT ALL SELECT * FROM dml_big2)
  UNION ALL (SELECT * FROM dml_big2 EXCEPT ALL SELECT * FROM dml_big)) s;
-- COPY FREEZE into a table created in the same transaction
BEGIN;
CREATE TABLE dml_frozen (id int, t text, x float8) USING tides;
\copy dml_frozen from 'results/basic_dml_copy.data' (format binary, freeze)
COMMIT;
SELECT count(*), sum(id) FROM dml_frozen;
-- COPY into a table with indexes, then look rows up through them
CREATE INDEX ON dml_big2 (t);
\copy dml_big2 from 'results/basic_dml_copy.data' (format binary)
SET enable_seqscan = off;
SELECT count(*) FROM dml_big2 WHERE t = md5('12345');
RESET enable_seqscan;
DROP TABLE dml_big, dml_big2, dml_frozen;

DROP TABLE dml_copy;
