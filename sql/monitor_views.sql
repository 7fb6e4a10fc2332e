--
-- monitor_views: the monitoring views and size functions of 1.1
-- (tides_engine_stats, tides_stats_reset(), tides_levels, tides_compactions,
-- tides_relations; tides_database_size(), tides_total_relation_size(),
-- tides_engine_size(); docs/operations.md, "Monitoring" and "Sizes").
-- The numbers move with the engine, so the test prints what must hold of
-- them, not the numbers.  After tides_flush() and tides_compact() no work
-- is due, so the figures hold still while they are compared.
--
SET client_min_messages = warning;
-- (no autovacuum: its writes would move the figures compared below)
CREATE TABLE mv_t (id int PRIMARY KEY, v text) USING tides WITH (autovacuum_enabled = off);
CREATE INDEX mv_i ON mv_t USING tides_btree (v);
CREATE TABLE mv_heap (id int);
-- nothing waits for a flush, so none runs behind the reset's back
SELECT tides_flush();
SELECT tides_compact();

--
-- tides_engine_stats and tides_stats_reset()
--
SELECT tides_stats_reset();
SELECT stats_reset > now() - interval '1 minute' AS reset_now,
       flushes = 0 AND flush_bytes_written = 0 AND flush_entries_written = 0 AS no_flush_since,
       compaction_bytes_written = 0 AS no_compaction_since,
       stall_count = 0 AND stall_time = 0 AS no_stall_since,
       memtables = current_setting('tides.memtable_count')::int AS memtables,
       memtable_size = pg_size_bytes(current_setting('tides.memtable_size')) AS memtable_size,
       incarnation >= 1 AS incarnation
FROM tides_engine_stats;
INSERT INTO mv_t SELECT g, repeat('v', 50) || g FROM generate_series(1, 20000) g;
SELECT tides_flush();
SELECT log_entries_written >= 40000 AS rows_and_entries_logged,
       log_bytes_written > user_bytes_written AS log_has_headers,
       flushes >= 1 AS flushed,
       flush_entries_written >= 40000 AS flush_entries,
       flush_bytes_written > 0 AS flush_bytes,
       write_amplification = (log_bytes_written + flush_bytes_written + compaction_bytes_written)::float8
                             / user_bytes_written AS write_amplification,
       memtables_sealed = 0 AS nothing_sealed,
       memtable_bytes >= memtable_active_bytes AS memtable_bytes,
       -- with tides.wal = on the engine keeps no log: its syncs and positions are NULL
       CASE WHEN current_setting('tides.wal')::bool
            THEN log_syncs IS NULL AND log_written_lsn IS NULL AND log_durable_lsn IS NULL
            ELSE log_durable_lsn <= log_written_lsn END AS lsns,
       bloom_useful <= bloom_checked AS bloom,
       stats_reset < now() AS reset_kept
FROM tides_engine_stats;
SELECT tides_compact();
SELECT compactions + trivial_moves >= 1 AS compacted,
       compaction_entries_read >= compaction_entries_written AS compaction_entries,
       compactions_running >= 0 AS running,
       sstable_bytes = (SELECT sum(bytes) FROM tides_levels) AS sstable_bytes_are_the_levels,
       sstable_files = (SELECT sum(files) FROM tides_levels) AS sstable_files_are_the_levels
FROM tides_engine_stats;
-- a reset starts the counters again; the states (levels, memtables) stay
SELECT sstable_bytes AS bytes_before FROM tides_engine_stats \gset
SELECT tides_stats_reset();
SELECT flushes = 0 AND compactions = 0 AND log_bytes_written < 100000 AS counters_restart,
       sstable_bytes = :bytes_before AS states_stay
FROM tides_engine_stats;
-- tides_stats() (1.0) counts since the server started, whatever the reset
SELECT value >= 1 AS tides_stats_unaffected FROM tides_stats() WHERE name = 'flushes';

--
-- tides_levels
--
SELECT count(*) AS levels, min(level), max(level), count(*) FILTER (WHERE is_base_level) AS base_levels,
       bool_and(files >= files_compacting) AS compacting,
       bool_and(score >= 0) AS scores,
       bool_and(deletions <= entries) AS deletions,
       bool_and(target_bytes IS NULL OR target_bytes > 0) AS targets,
       bool_and(pending_compaction_bytes >= 0) AS pending
FROM tides_levels;
SELECT level, target_bytes IS NULL AS no_target FROM tides_levels WHERE level = 0;
-- after a full compaction everything is on the last level, and nothing is due
SELECT level, files > 0 AS has_files, score < 1 AS nothing_due FROM tides_levels ORDER BY level;

--
-- tides_compactions: running ones; none in this backend now
--
SELECT * FROM tides_compactions WHERE pid = pg_backend_pid();

--
-- tides_relations
--
UPDATE mv_t SET v = v || '!' WHERE id <= 100;
SELECT pg_stat_force_next_flush();
SELECT relid, kind, live_versions, dead_versions FROM tides_relations
WHERE relid IN ('mv_t'::regclass, 'mv_i'::regclass, 'mv_heap'::regclass) ORDER BY relid::text;
VACUUM mv_t;
SELECT tides_flush();
SELECT tides_compact();
SELECT pg_stat_force_next_flush();
SELECT relid, kind,
       total_bytes = sstable_bytes + memtable_bytes AS total,
       total_bytes = tides_relation_size(relid) AS is_tides_relation_size,
       sstable_bytes = (SELECT sum(b) FROM unnest(level_bytes) b) AS levels,
       array_length(level_bytes, 1) AS nlevels,
       memtable_bytes = 0 AS flushed,
       engine_entries > 0 AS entries, engine_deletions >= 0 AS deletions,
       live_versions, dead_versions,
       (last_vacuum IS NOT NULL) = (kind = 'table') AS vacuumed,
       last_compaction IS NOT NULL AS compacted
FROM tides_relations WHERE relid IN ('mv_t'::regclass, 'mv_i'::regclass) ORDER BY relid::text;
-- a temporary table and its index are there too; heap tables are not
CREATE TEMP TABLE mv_temp (a int PRIMARY KEY) USING tides;
INSERT INTO mv_temp SELECT generate_series(1, 100);
SELECT relid, kind, total_bytes > 0 AS has_bytes FROM tides_relations WHERE relid = 'mv_temp'::regclass;
SELECT count(*) AS heap_rows FROM tides_relations WHERE relid = 'mv_heap'::regclass;

--
-- sizes
--
SELECT tides_flush();
-- PostgreSQL's size functions read relation files, which tides leaves empty
SELECT pg_relation_size('mv_t') AS pg_relation_size, pg_relation_size('mv_i') AS pg_index_size;
SELECT tides_total_relation_size('mv_t')
       = pg_total_relation_size('mv_t') + tides_relation_size('mv_t') + tides_relation_size('mv_i')
       AS total_relation_size;
SELECT tides_total_relation_size('mv_heap') = pg_total_relation_size('mv_heap') AS heap_unchanged;
SELECT tides_database_size() >= (SELECT sum(total_bytes) FROM tides_relations) AS database_has_its_relations,
       tides_database_size(current_database()) = tides_database_size() AS by_name,
       tides_database_size((SELECT oid FROM pg_database WHERE datname = current_database())) = tides_database_size() AS by_oid,
       tides_database_size('regress_no_such_database') IS NULL AS missing_database,
       tides_engine_size() > tides_database_size() AS engine_has_logs_too;
-- a dropped table's bytes leave the database's share once the drop is done
SELECT tides_database_size() AS db_before \gset
SELECT tides_relation_size('mv_t') + tides_relation_size('mv_i') AS mv_bytes \gset
-- (the maintenance worker drops the trees of the table and of its index)
CREATE FUNCTION mv_wait_size_at_most(target bigint) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..60 LOOP
        IF tides_database_size() <= target THEN
            RETURN true;
        END IF;
        PERFORM pg_sleep(0.5);
    END LOOP;
    RETURN false;
END $$;
DROP TABLE mv_t;
SELECT mv_wait_size_at_most(:db_before - :mv_bytes) AS dropped_bytes_gone;
DROP FUNCTION mv_wait_size_at_most(bigint);

DROP TABLE mv_heap;
DROP TABLE mv_temp;
