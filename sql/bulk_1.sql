--
-- bulk_1: bulk loads (src/am/bulk.c).  COPY and INSERT ... SELECT into a
-- tides table without indexes, or one created or truncated in the same
-- transaction, write table files past tides.bulk_load_threshold (here 0:
-- from the first rows on).  Checked: the rows read back exactly in the
-- transaction and after it, the files went in (ingested_files), ROLLBACK and
-- ROLLBACK TO SAVEPOINT undo them, a duplicate key in a unique index created
-- in the transaction fails the COPY and leaves nothing, indexes built by the
-- same transaction find every row (a parallel build's workers too), a
-- SERIALIZABLE transaction loads files only into a table created in it, a
-- table with an older index takes the
-- normal path, tides.bulk_load_threshold = -1 turns the path off, and a load
-- prepared (PREPARE TRANSACTION) or committed survives the crash of
-- bulk_2_crash, which empties an unlogged table loaded as files.  The file
-- is psql's (\copy, in the output directory).
--
\getenv abs_builddir PG_ABS_BUILDDIR
\cd :abs_builddir

CREATE FUNCTION bulk_ingested() RETURNS bigint LANGUAGE sql
  AS $$ SELECT value FROM tides_stats() WHERE name = 'ingested_files' $$;
CREATE TABLE bulk_mark (n bigint);
INSERT INTO bulk_mark SELECT bulk_ingested();

SET tides.bulk_load_threshold = 0;
\copy (SELECT g, g % 97, md5(g::text) FROM generate_series(1, 60000) g) TO 'bulk_rows.data'

-- COPY into a table without indexes: files, read back in the transaction and after
CREATE TABLE bulk_t (id int, k int, v text) USING tides;
BEGIN;
\copy bulk_t FROM 'bulk_rows.data'
SELECT count(*), sum(id), count(DISTINCT v) FROM bulk_t;
SELECT bulk_ingested() > n AS files_ingested FROM bulk_mark;
COMMIT;
SELECT count(*), sum(id), sum(k), min(id), max(id) FROM bulk_t;
SELECT * FROM bulk_t WHERE id IN (1, 30000, 60000) ORDER BY id;

-- a second load into the same table, then changes to the loaded rows
UPDATE bulk_mark SET n = bulk_ingested();
\copy bulk_t FROM 'bulk_rows.data'
SELECT bulk_ingested() > n AS files_ingested FROM bulk_mark;
SELECT count(*), count(DISTINCT id) FROM bulk_t;
BEGIN;
UPDATE bulk_t SET k = -1 WHERE id % 1000 = 0;
DELETE FROM bulk_t WHERE id > 59990;
COMMIT;
SELECT count(*), count(*) FILTER (WHERE k = -1) FROM bulk_t;

-- ROLLBACK: nothing of the load stays
BEGIN;
\copy bulk_t FROM 'bulk_rows.data'
SELECT count(*) FROM bulk_t;
ROLLBACK;
SELECT count(*) FROM bulk_t;

-- INSERT ... SELECT, and ROLLBACK TO SAVEPOINT of a second load
UPDATE bulk_mark SET n = bulk_ingested();
CREATE TABLE bulk_ins (id int, pad text) USING tides;
BEGIN;
INSERT INTO bulk_ins SELECT g, repeat('x', 100) FROM generate_series(1, 40000) g;
SAVEPOINT s;
INSERT INTO bulk_ins SELECT g, 'undone' FROM generate_series(40001, 80000) g;
SELECT count(*) FROM bulk_ins;
SELECT bulk_ingested() > n AS files_ingested FROM bulk_mark;
ROLLBACK TO SAVEPOINT s;
SELECT count(*), max(id) FROM bulk_ins;
INSERT INTO bulk_ins SELECT g, 'kept' FROM generate_series(80001, 80010) g;
COMMIT;
SELECT count(*), max(id), count(*) FILTER (WHERE pad = 'undone') FROM bulk_ins;

-- a table created in the transaction, with indexes: the unique index catches
-- a duplicate within the load, and nothing stays
BEGIN;
CREATE TABLE bulk_idx (id int, k int, v text) USING tides;
CREATE UNIQUE INDEX bulk_idx_id ON bulk_idx USING tides_btree (id);
CREATE INDEX bulk_idx_k ON bulk_idx USING btree (k);
\copy bulk_idx FROM 'bulk_rows.data'
INSERT INTO bulk_idx VALUES (30000, 0, 'dup');
ROLLBACK;
BEGIN;
CREATE TABLE bulk_idx (id int, k int, v text) USING tides;
CREATE UNIQUE INDEX bulk_idx_id ON bulk_idx USING tides_btree (id);
CREATE INDEX bulk_idx_k ON bulk_idx USING btree (k);
\copy bulk_idx FROM 'bulk_rows.data'
SET LOCAL enable_seqscan = off;
SELECT id, k, v FROM bulk_idx WHERE id = 12345;
SELECT count(*) FROM bulk_idx WHERE k = 5;
COMMIT;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, k FROM bulk_idx WHERE id BETWEEN 100 AND 103 ORDER BY id;
SELECT count(*) FROM bulk_idx WHERE k = 5;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT count(*) FROM bulk_idx WHERE k = 5;
SELECT * FROM tides_verify_index('bulk_idx_id');

-- a load that is not logged (an unlogged table) puts its rows straight into
-- the ingestion, with no stage (bulk.c, tam_bulk_add): the same checks
-- through that path -- read back in the transaction, a savepoint undone, a
-- duplicate caught by a unique index created in the transaction
CREATE UNLOGGED TABLE bulk_direct (id int, k int, v text) USING tides;
UPDATE bulk_mark SET n = bulk_ingested();
BEGIN;
\copy bulk_direct FROM 'bulk_rows.data'
SELECT count(*), sum(id), count(DISTINCT v) FROM bulk_direct;
SAVEPOINT s;
INSERT INTO bulk_direct SELECT g, 0, 'undone' FROM generate_series(60001, 90000) g;
SELECT count(*) FROM bulk_direct;
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT bulk_ingested() > n AS files_ingested FROM bulk_mark;
SELECT count(*), sum(id), sum(k), count(*) FILTER (WHERE v = 'undone') FROM bulk_direct;
BEGIN;
CREATE UNLOGGED TABLE bulk_direct_idx (id int, k int, v text) USING tides;
CREATE UNIQUE INDEX bulk_direct_idx_id ON bulk_direct_idx USING tides_btree (id);
\copy bulk_direct_idx FROM 'bulk_rows.data'
INSERT INTO bulk_direct_idx VALUES (30000, 0, 'dup');
ROLLBACK;
BEGIN;
CREATE UNLOGGED TABLE bulk_direct_idx (id int, k int, v text) USING tides;
CREATE UNIQUE INDEX bulk_direct_idx_id ON bulk_direct_idx USING tides_btree (id);
\copy bulk_direct_idx FROM 'bulk_rows.data'
SET LOCAL enable_seqscan = off;
SELECT id, k, v FROM bulk_direct_idx WHERE id = 12345;
COMMIT;
SELECT count(*), sum(id) FROM bulk_direct_idx;
SELECT * FROM tides_verify_index('bulk_direct_idx_id');
DROP TABLE bulk_direct, bulk_direct_idx;

-- an index made in an earlier transaction: the normal path, no files
CREATE TABLE bulk_old_idx (id int, k int, v text) USING tides;
CREATE INDEX ON bulk_old_idx USING tides_btree (id);
UPDATE bulk_mark SET n = bulk_ingested();
\copy bulk_old_idx FROM 'bulk_rows.data'
SELECT bulk_ingested() = n AS no_files FROM bulk_mark;
SELECT count(*) FROM bulk_old_idx;

-- TRUNCATE in the transaction, then a load; a savepoint that undoes the truncation
BEGIN;
TRUNCATE bulk_old_idx;
\copy bulk_old_idx FROM 'bulk_rows.data'
SELECT bulk_ingested() > n AS files_ingested FROM bulk_mark;
SELECT count(*) FROM bulk_old_idx;
COMMIT;
SELECT count(*), sum(id) FROM bulk_old_idx;
BEGIN;
INSERT INTO bulk_t SELECT g, 0, 'before' FROM generate_series(100001, 100100) g;
SAVEPOINT s;
TRUNCATE bulk_t;
ROLLBACK TO SAVEPOINT s;
SELECT count(*) FILTER (WHERE v = 'before') FROM bulk_t;
COMMIT;

-- a parallel CREATE INDEX in the loading transaction: the leader sets up the
-- scan, workers alone read (parallel_leader_participation = off), so the
-- rows still waiting in this backend -- in the ingestion (threshold 0) or
-- in the stage of the normal path (32MB) -- must reach the engine first
BEGIN;
CREATE TABLE bulk_par (id int, pad text) USING tides WITH (parallel_workers = 2);
INSERT INTO bulk_par SELECT g, repeat('p', 60) FROM generate_series(1, 50000) g;
SET LOCAL max_parallel_maintenance_workers = 2;
SET LOCAL maintenance_work_mem = '256MB';
SET LOCAL parallel_leader_participation = off;
CREATE INDEX bulk_par_id ON bulk_par USING btree (id);
SET LOCAL tides.bulk_load_threshold = '32MB';
CREATE TABLE bulk_par2 (id int, pad text) USING tides WITH (parallel_workers = 2);
INSERT INTO bulk_par2 SELECT g, repeat('p', 60) FROM generate_series(1, 50000) g;
CREATE INDEX bulk_par2_id ON bulk_par2 USING btree (id);
COMMIT;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*), min(id), max(id) FROM bulk_par WHERE id > 0;
SELECT count(*), min(id), max(id) FROM bulk_par2 WHERE id > 0;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- SERIALIZABLE: a table created in the transaction is still loaded as files
-- (nobody else can read it); one that others can read is written through at
-- once, so that SSI sees the rows (isolation spec bulk_ssi)
UPDATE bulk_mark SET n = bulk_ingested();
BEGIN ISOLATION LEVEL SERIALIZABLE;
CREATE TABLE bulk_ser (id int) USING tides;
INSERT INTO bulk_ser SELECT generate_series(1, 10000);
COMMIT;
SELECT bulk_ingested() > n AS files_ingested FROM bulk_mark;
UPDATE bulk_mark SET n = bulk_ingested();
BEGIN ISOLATION LEVEL SERIALIZABLE;
INSERT INTO bulk_ser SELECT generate_series(10001, 20000);
COMMIT;
SELECT bulk_ingested() = n AS no_files, count(*), sum(id) FROM bulk_mark, bulk_ser GROUP BY 1;

-- switched off: the normal path
SET tides.bulk_load_threshold = -1;
UPDATE bulk_mark SET n = bulk_ingested();
CREATE TABLE bulk_off (id int, k int, v text) USING tides;
\copy bulk_off FROM 'bulk_rows.data'
SELECT bulk_ingested() = n AS no_files, count(*) FROM bulk_mark, bulk_off GROUP BY 1;
SET tides.bulk_load_threshold = 0;

SELECT * FROM tides_verify();
DROP TABLE bulk_t, bulk_ins, bulk_idx, bulk_old_idx, bulk_off, bulk_par, bulk_par2, bulk_ser;

-- for bulk_2_crash: a committed load and a prepared one, in a database of
-- their own (the twophase tests list this database's prepared transactions)
\set regress_db :DBNAME
CREATE DATABASE bulk_crash_db;
\c bulk_crash_db
CREATE EXTENSION tidesam;
SET tides.bulk_load_threshold = 0;
CREATE TABLE bulk_mark (n bigint);
INSERT INTO bulk_mark SELECT value FROM tides_stats() WHERE name = 'ingested_files';
CREATE TABLE bulk_crash (id int, k int, v text) USING tides;
\copy bulk_crash FROM 'bulk_rows.data'
BEGIN;
\copy bulk_crash FROM 'bulk_rows.data'
PREPARE TRANSACTION 'bulk_prepared';
SELECT count(*) FROM bulk_crash;
-- unlogged: files too (runtime/ingest.c flushes the table's map entry
-- first), emptied by the crash all the same
UPDATE bulk_mark SET n = (SELECT value FROM tides_stats() WHERE name = 'ingested_files');
CREATE UNLOGGED TABLE bulk_unlogged (id int, k int, v text) USING tides;
\copy bulk_unlogged FROM 'bulk_rows.data'
SELECT (SELECT value FROM tides_stats() WHERE name = 'ingested_files') > n AS files_ingested, count(*)
  FROM bulk_mark, bulk_unlogged GROUP BY 1;
\c :regress_db
DROP TABLE bulk_mark;
DROP FUNCTION bulk_ingested();
