--
-- settings_reload: a reloaded setting reaches every process, the flush
-- worker included.  tides.compression changed by ALTER SYSTEM and
-- pg_reload_conf(): the next memtable the flush worker writes
-- (tides_flush(true) leaves the flushing to it) is uncompressed, then lz4
-- again -- told by flush bytes against the bytes written, on rows that lz4
-- shrinks tenfold.  The rows, appended above all the table has in files,
-- go to files the flush places in the last level, which take
-- tides.bottommost_compression (src/engine/db/flush_place.h): that one is
-- switched off with tides.compression.  Which settings are sighup and what a reload does:
-- docs/operations.md, "Settings".  The server's configuration is put back.
--
SET client_min_messages = warning;
SELECT name, context FROM pg_settings WHERE name LIKE 'tides.%' AND context = 'sighup' ORDER BY name;
CREATE TABLE sr_t (id int, v text) USING tides;
-- flush bytes per byte written, for rows written now and flushed by the worker
CREATE FUNCTION sr_flush_ratio(batch int) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
    r float8;
BEGIN
    PERFORM tides_flush(true);
    PERFORM tides_stats_reset();
    INSERT INTO sr_t SELECT g, repeat('tides ', 100) FROM generate_series(batch * 2000, batch * 2000 + 1999) g;
    PERFORM tides_flush(true);
    SELECT flush_bytes_written::float8 / user_bytes_written INTO r FROM tides_engine_stats;
    RETURN r;
END $$;
-- wait until every tides worker has loaded the configuration: after
-- pg_reload_conf() each reloads when it next wakes, and it wakes for it
CREATE FUNCTION sr_settle() RETURNS void LANGUAGE sql AS $$ SELECT pg_sleep(1) $$;

SELECT current_setting('tides.compression') AS compression_before;
SELECT sr_flush_ratio(0) < 0.3 AS compressed;
ALTER SYSTEM SET tides.compression = 'none';
ALTER SYSTEM SET tides.bottommost_compression = 'none';
SELECT pg_reload_conf();
SELECT sr_settle();
SELECT current_setting('tides.compression') AS compression_now;
SELECT sr_flush_ratio(1) > 0.8 AS not_compressed;
ALTER SYSTEM RESET tides.compression;
ALTER SYSTEM RESET tides.bottommost_compression;
SELECT pg_reload_conf();
SELECT sr_settle();
SELECT current_setting('tides.compression') AS compression_after;
SELECT sr_flush_ratio(2) < 0.3 AS compressed_again;
-- zstd at a level, too
ALTER SYSTEM SET tides.compression = 'zstd';
ALTER SYSTEM SET tides.compression_level = 19;
SELECT pg_reload_conf();
SELECT sr_settle();
SELECT sr_flush_ratio(3) < 0.3 AS zstd_compressed;
-- and at a fast level
ALTER SYSTEM SET tides.compression_level = -5;
SELECT pg_reload_conf();
SELECT sr_settle();
SELECT sr_flush_ratio(4) < 0.3 AS zstd_fast_compressed;
ALTER SYSTEM RESET tides.compression;
ALTER SYSTEM RESET tides.compression_level;
SELECT pg_reload_conf();
SELECT sr_settle();
SELECT current_setting('tides.compression') AS compression, current_setting('tides.compression_level') AS level;
SELECT count(*), count(DISTINCT id) FROM sr_t;

DROP TABLE sr_t;
DROP FUNCTION sr_flush_ratio(int), sr_settle();
