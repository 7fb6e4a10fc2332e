--
-- create_database: CREATE DATABASE from a template that holds tides tables
-- (this database), with both strategies.  The copies must hold the same
-- rows as the template, and stay independent of it afterwards.
--
SELECT current_database() AS tmpl \gset
CREATE TABLE tmpl_t (id int PRIMARY KEY, v text) USING tides;
INSERT INTO tmpl_t SELECT g, md5(g::text) FROM generate_series(1, 5000) g;
UPDATE tmpl_t SET v = 'updated' WHERE id % 100 = 0;
DELETE FROM tmpl_t WHERE id % 100 = 1;
CREATE TABLE tmpl_empty (id int) USING tides;
SELECT tides_flush();
INSERT INTO tmpl_t VALUES (100000, 'still in the memtable');
CREATE VIEW tmpl_digest AS
    SELECT count(*) AS n, sum(id) AS sum_id, md5(string_agg(id || v, ',' ORDER BY id)) AS digest
    FROM tmpl_t;
SELECT * FROM tmpl_digest;

-- the template may have no other sessions: leave it
\c postgres
CREATE DATABASE tides_copy_wal TEMPLATE :"tmpl" STRATEGY wal_log;
CREATE DATABASE tides_copy_file TEMPLATE :"tmpl" STRATEGY file_copy;

\c tides_copy_wal
SELECT * FROM tmpl_digest;
SET enable_seqscan = off;
SELECT * FROM tmpl_t WHERE id IN (1, 2, 100, 100000) ORDER BY id;
RESET enable_seqscan;
SELECT count(*) FROM tmpl_empty;
-- the copy can be changed without touching the template
INSERT INTO tmpl_t VALUES (200000, 'only in the copy');
UPDATE tmpl_t SET v = 'changed in the copy' WHERE id = 2;
DELETE FROM tmpl_t WHERE id = 3;
SELECT * FROM tmpl_t WHERE id IN (2, 3, 200000) ORDER BY id;

\c tides_copy_file
SELECT * FROM tmpl_digest;
SET enable_seqscan = off;
SELECT * FROM tmpl_t WHERE id IN (1, 2, 100, 100000) ORDER BY id;
RESET enable_seqscan;
INSERT INTO tmpl_t VALUES (300000, 'only in the file copy');
DELETE FROM tmpl_t WHERE id = 2;

\c :tmpl
SELECT * FROM tmpl_digest;
SELECT * FROM tmpl_t WHERE id IN (2, 3, 200000, 300000) ORDER BY id;
DROP DATABASE tides_copy_wal;
DROP DATABASE tides_copy_file;
-- the template is intact after its copies are dropped
SELECT * FROM tmpl_digest;
DROP VIEW tmpl_digest;
DROP TABLE tmpl_t, tmpl_empty;
