-- test/ext/monitor.sql: the "monitor" check of test/ext/run.sh, on a server
-- with shared_preload_libraries = 'tidesam, pg_stat_statements'.
-- pg_stat_statements counts tides block-cache hits and block reads as
-- shared_blks_hit / shared_blks_read, the same numbers EXPLAIN (ANALYZE,
-- BUFFERS) shows for the statement (sql/monitor_io.sql compares those with
-- pg_statio).  Then rows are deleted for the VACUUM whose progress run.sh
-- samples from pg_stat_progress_vacuum.
SET client_min_messages = warning;
CREATE EXTENSION pg_stat_statements;
CREATE TABLE mon_t (id int PRIMARY KEY, v text) USING tides WITH (autovacuum_enabled = off);
INSERT INTO mon_t SELECT g, md5(g::text) FROM generate_series(1, 300000) g;
SELECT tides_flush();
SELECT tides_compact();
SELECT pg_stat_statements_reset();
SELECT count(*) FROM mon_t;
SELECT count(*) FROM mon_t;
SELECT calls, shared_blks_hit + shared_blks_read > 100 AS counts_blocks, shared_blks_hit > 0 AS hits
FROM pg_stat_statements WHERE query = 'SELECT count(*) FROM mon_t';
-- rows for VACUUM to remove, spread over the table
DELETE FROM mon_t WHERE id % 3 = 0;
SELECT tides_flush();
SELECT (max(id) + 290) / 291 AS vblocks FROM mon_t;
