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
REVOKE EXECUTE ON FUNCTION tides_compact() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION tides_verify() FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION tides_verify_index(regclass) FROM PUBLIC;

REVOKE EXECUTE ON FUNCTION tides_stats() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tides_stats() TO pg_monitor;
REVOKE EXECUTE ON FUNCTION tides_relation_size(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tides_relation_size(regclass) TO pg_monitor;

REVOKE EXECUTE ON FUNCTION tides_index_entries(regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION tides_index_entries(regclass) TO pg_stat_scan_tables;
