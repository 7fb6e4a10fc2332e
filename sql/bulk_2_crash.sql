--
-- bulk_2_crash: after an immediate shutdown (a crash) and recovery, the
-- committed load of bulk_1 is whole, the prepared one is still prepared and
-- commits whole, and the unlogged table is empty.
-- (In the database bulk_1 made for it.)
--
\set regress_db :DBNAME
\c bulk_crash_db
SELECT gid FROM pg_prepared_xacts WHERE gid = 'bulk_prepared';
SELECT count(*), sum(id) FROM bulk_crash;
COMMIT PREPARED 'bulk_prepared';
SELECT count(*), sum(id), count(DISTINCT id) FROM bulk_crash;
SELECT count(*) FROM bulk_unlogged;
SELECT * FROM tides_verify();
DROP TABLE bulk_crash, bulk_unlogged, bulk_mark;
\c :regress_db
DROP DATABASE bulk_crash_db;
