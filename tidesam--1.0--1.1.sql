/* tidesam--1.0--1.1.sql */

-- Version 1.1 is tidesam--1.0.sql followed by this script: there is no
-- tidesam--1.1.sql, so CREATE EXTENSION tidesam (default_version 1.1) runs
-- both, and a fresh 1.1 is the same, ACLs included, as a 1.0 brought up by
-- ALTER EXTENSION tidesam UPDATE (sql/ext_versions.sql checks that from
-- every earlier version, comparing the catalogs).
--
-- Adding to 1.1: new objects go in section 1, their privileges in section 2,
-- following its rule; sql/ext_privileges.sql lists every function's ACL and
-- what a plain role and a pg_monitor member may call.  After a release, the
-- next version is a new tidesam--1.1--1.2.sql in the same two parts (and
-- default_version in tidesam.control, version in META.json).

\echo Use "ALTER EXTENSION tidesam UPDATE TO '1.1'" to load this file. \quit

-- ------------------------------------------------------------------------
-- 1. Objects new in 1.1

COMMENT ON FUNCTION tides_stats() IS 'engine counters (log, flush, compaction, cache, stalls) and bytes and files per level; one row per counter';
COMMENT ON FUNCTION tides_flush() IS 'seal the active memtable and wait until every sealed memtable is flushed to level 0';
COMMENT ON FUNCTION tides_compact() IS 'compact every level down to the last and run the maintenance that is due; memtables are not included (tides_flush() first)';

CREATE FUNCTION tides_flush(background boolean)
RETURNS void
AS 'MODULE_PATHNAME', 'tides_flush_sql'
LANGUAGE C STRICT;
COMMENT ON FUNCTION tides_flush(boolean) IS 'seal the active memtable and wait until every sealed memtable is flushed to level 0; background = true leaves the flushing to the flush worker';

-- Monitoring views (docs/operations.md, "Monitoring", says what every column
-- means).  Each view reads a function of the same name; both are granted to
-- pg_monitor in section 2.

CREATE FUNCTION tides_engine_stats(
    OUT log_bytes_written bigint, OUT log_entries_written bigint, OUT log_syncs bigint,
    OUT user_bytes_written bigint,
    OUT flushes bigint, OUT flush_bytes_written bigint, OUT flush_entries_written bigint,
    OUT compactions bigint, OUT trivial_moves bigint,
    OUT compaction_bytes_read bigint, OUT compaction_bytes_written bigint,
    OUT compaction_entries_read bigint, OUT compaction_entries_written bigint,
    OUT write_amplification double precision,
    OUT stall_count bigint, OUT stall_time double precision,
    OUT slowdown_count bigint, OUT slowdown_time double precision,
    OUT cache_hits bigint, OUT cache_misses bigint, OUT sstable_bytes_read bigint,
    OUT bloom_checked bigint, OUT bloom_useful bigint,
    OUT memtables integer, OUT memtable_size bigint, OUT memtables_sealed integer,
    OUT memtable_bytes bigint, OUT memtable_active_bytes bigint, OUT memtable_entries bigint,
    OUT compactions_running integer, OUT sstable_files bigint, OUT sstable_bytes bigint,
    OUT last_seq bigint, OUT log_written_lsn bigint, OUT log_durable_lsn bigint,
    OUT incarnation bigint, OUT stats_reset timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'tides_engine_stats_sql'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION tides_engine_stats() IS 'engine counters since tides_stats_reset() (or the server start), and the current state of memtables and levels; one row';

CREATE VIEW tides_engine_stats AS SELECT * FROM tides_engine_stats();
COMMENT ON VIEW tides_engine_stats IS 'engine counters since tides_stats_reset(): log, flush and compaction writes, write amplification, stalls, block cache, bloom filters, memtables';

CREATE FUNCTION tides_stats_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'tides_stats_reset_sql'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION tides_stats_reset() IS 'start the counters of tides_engine_stats from zero (cluster-wide); tides_stats() is not affected';

CREATE FUNCTION tides_levels(
    OUT level integer, OUT files integer, OUT files_compacting integer, OUT bytes bigint,
    OUT entries bigint, OUT deletions bigint, OUT target_bytes bigint,
    OUT score double precision, OUT pending_compaction_bytes bigint, OUT is_base_level boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'tides_levels_sql'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION tides_levels() IS 'one row per level of the engine''s tree: files, bytes, compaction score and debt';

CREATE VIEW tides_levels AS SELECT * FROM tides_levels();
COMMENT ON VIEW tides_levels IS 'one row per level of the engine''s tree: files, bytes, compaction score and debt';

CREATE FUNCTION tides_compactions(
    OUT pid integer, OUT input_level integer, OUT output_level integer,
    OUT started timestamptz, OUT input_files integer, OUT input_bytes bigint,
    OUT input_entries bigint, OUT entries_read bigint, OUT output_files integer,
    OUT output_bytes bigint, OUT output_entries bigint, OUT progress double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'tides_compactions_sql'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION tides_compactions() IS 'one row per compaction running now, with its progress';

CREATE VIEW tides_compactions AS SELECT * FROM tides_compactions();
COMMENT ON VIEW tides_compactions IS 'one row per compaction running now (any process), with its progress';

CREATE FUNCTION tides_relations(
    OUT relid oid, OUT kind text, OUT sstable_bytes bigint, OUT memtable_bytes bigint,
    OUT level_bytes bigint[], OUT engine_entries bigint, OUT engine_deletions bigint,
    OUT last_flush timestamptz, OUT last_compaction timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'tides_relations_sql'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION tides_relations() IS 'one row per tides table and tides_btree index of this database: its bytes in the engine, per level';

CREATE VIEW tides_relations AS
    SELECT r.relid::regclass AS relid, r.kind,
           r.sstable_bytes + r.memtable_bytes AS total_bytes,
           r.sstable_bytes, r.memtable_bytes, r.level_bytes,
           r.engine_entries, r.engine_deletions,
           CASE WHEN r.kind = 'table' THEN pg_catalog.pg_stat_get_live_tuples(r.relid) END AS live_versions,
           CASE WHEN r.kind = 'table' THEN pg_catalog.pg_stat_get_dead_tuples(r.relid) END AS dead_versions,
           CASE WHEN r.kind = 'table' THEN GREATEST(pg_catalog.pg_stat_get_last_vacuum_time(r.relid),
                                                                pg_catalog.pg_stat_get_last_autovacuum_time(r.relid)) END AS last_vacuum,
           r.last_flush, r.last_compaction
    FROM tides_relations() r;
COMMENT ON VIEW tides_relations IS 'one row per tides table and tides_btree index of this database: bytes in the engine per level, versions live and dead, last vacuum, flush and compaction';

-- Sizes.  PostgreSQL's size functions read relation files and never ask a
-- table access method (docs/operations.md, "Sizes"); these count the engine.

CREATE FUNCTION tides_database_size(oid)
RETURNS bigint
AS 'MODULE_PATHNAME', 'tides_database_size_sql'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION tides_database_size(oid) IS 'bytes the database''s tides tables and tides_btree indexes take in the engine (add pg_database_size() for its files)';

CREATE FUNCTION tides_database_size(name)
RETURNS bigint
LANGUAGE sql STRICT VOLATILE
AS $$ SELECT @extschema@.tides_database_size(d.oid) FROM pg_catalog.pg_database d WHERE d.datname = $1 $$;
COMMENT ON FUNCTION tides_database_size(name) IS 'bytes the database''s tides tables and tides_btree indexes take in the engine (add pg_database_size() for its files)';

CREATE FUNCTION tides_database_size()
RETURNS bigint
AS 'MODULE_PATHNAME', 'tides_database_size_sql'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION tides_database_size() IS 'bytes this database''s tides tables and tides_btree indexes take in the engine (add pg_database_size() for its files)';

CREATE FUNCTION tides_total_relation_size(regclass)
RETURNS bigint
LANGUAGE sql STRICT VOLATILE
AS $$ SELECT pg_catalog.pg_total_relation_size($1) + coalesce((SELECT sum(@extschema@.tides_relation_size(c.oid)) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_am a ON a.oid = c.relam WHERE (c.oid = $1 AND a.amname = 'tides' AND c.relkind IN ('r', 'm', 't')) OR (a.amname = 'tides_btree' AND c.oid IN (SELECT i.indexrelid FROM pg_catalog.pg_index i WHERE i.indrelid = $1))), 0)::bigint $$;
COMMENT ON FUNCTION tides_total_relation_size(regclass) IS 'pg_total_relation_size() plus the engine bytes of the table and its tides_btree indexes';

CREATE FUNCTION tides_engine_size()
RETURNS bigint
AS 'MODULE_PATHNAME', 'tides_engine_size_sql'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION tides_engine_size() IS 'bytes of every file under $PGDATA/pg_tides: SSTables of all databases, log segments, manifest, CURRENT';

-- ------------------------------------------------------------------------
-- 2. Privileges
--
-- The rule, per object:
--   * PUBLIC keeps EXECUTE only on functions that touch neither the engine
--     nor any table: the access method handlers (their argument is
--     "internal", so SQL cannot call them; core's heap and btree handlers are
--     PUBLIC too) and tides_index_encode() (a pure function of its
--     arguments).
--   * Statistics -- read-only, cheap, and about the engine rather than the
--     rows of a table -- go to pg_monitor: tides_stats() (cluster-wide
--     counters), tides_relation_size() (bytes of one relation).  Views of
--     statistics: SELECT to pg_monitor.
--   * Statistics that scan a relation under ACCESS SHARE go to
--     pg_stat_scan_tables (a member role of pg_monitor), as pgstattuple's
--     functions do: tides_index_entries() walks a whole index.
--   * Everything else is revoked from PUBLIC and granted to nobody, so only
--     superusers and roles a superuser grants EXECUTE to may call it:
--     functions that do work for the whole cluster in the caller's backend
--     (tides_flush(), tides_compact(): flush every memtable, rewrite every
--     level), that read every engine file and name them (tides_verify()),
--     that print row keys and TIDs regardless of the caller's table
--     privileges (tides_verify_index()), and functions that reset or change
--     engine state.  amcheck's functions follow the same rule.
-- ------------------------------------------------------------------------

REVOKE EXECUTE ON FUNCTION tides_flush() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION tides_flush(boolean) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION tides_compact() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION tides_verify() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION tides_verify_index(regclass) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION tides_stats() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tides_stats() TO pg_monitor;
REVOKE EXECUTE ON FUNCTION tides_relation_size(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tides_relation_size(regclass) TO pg_monitor;

REVOKE EXECUTE ON FUNCTION tides_index_entries(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tides_index_entries(regclass) TO pg_stat_scan_tables;

-- the monitoring views and their functions, and the sizes
REVOKE EXECUTE ON FUNCTION tides_engine_stats() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tides_engine_stats() TO pg_monitor;
REVOKE SELECT ON tides_engine_stats FROM PUBLIC;
GRANT SELECT ON tides_engine_stats TO pg_monitor;
REVOKE EXECUTE ON FUNCTION tides_levels() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tides_levels() TO pg_monitor;
REVOKE SELECT ON tides_levels FROM PUBLIC;
GRANT SELECT ON tides_levels TO pg_monitor;
REVOKE EXECUTE ON FUNCTION tides_compactions() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tides_compactions() TO pg_monitor;
REVOKE SELECT ON tides_compactions FROM PUBLIC;
GRANT SELECT ON tides_compactions TO pg_monitor;
REVOKE EXECUTE ON FUNCTION tides_relations() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tides_relations() TO pg_monitor;
REVOKE SELECT ON tides_relations FROM PUBLIC;
GRANT SELECT ON tides_relations TO pg_monitor;
REVOKE EXECUTE ON FUNCTION tides_database_size(oid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tides_database_size(oid) TO pg_monitor;
REVOKE EXECUTE ON FUNCTION tides_database_size(name) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tides_database_size(name) TO pg_monitor;
REVOKE EXECUTE ON FUNCTION tides_database_size() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tides_database_size() TO pg_monitor;
REVOKE EXECUTE ON FUNCTION tides_total_relation_size(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tides_total_relation_size(regclass) TO pg_monitor;
REVOKE EXECUTE ON FUNCTION tides_engine_size() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tides_engine_size() TO pg_monitor;

-- resetting counters changes engine state: nobody but superusers
REVOKE EXECUTE ON FUNCTION tides_stats_reset() FROM PUBLIC;
