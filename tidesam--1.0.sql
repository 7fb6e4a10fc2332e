/* tidesam--1.0.sql */

\echo Use "CREATE EXTENSION tidesam" to load this file. \quit

CREATE FUNCTION tides_tableam_handler(internal)
RETURNS table_am_handler
AS 'MODULE_PATHNAME', 'tides_tableam_handler'
LANGUAGE C;

CREATE ACCESS METHOD tides TYPE TABLE HANDLER tides_tableam_handler;
COMMENT ON ACCESS METHOD tides IS 'LSM-tree storage: rows live in the tides engine';

CREATE FUNCTION tides_verify(OUT file text, OUT problem text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'tides_verify_sql'
LANGUAGE C STRICT;
COMMENT ON FUNCTION tides_verify() IS 'check checksums of every engine file and the level invariants; one row per problem';

CREATE FUNCTION tides_stats(OUT name text, OUT value bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'tides_stats_sql'
LANGUAGE C STRICT;

CREATE FUNCTION tides_relation_size(regclass)
RETURNS bigint
AS 'MODULE_PATHNAME', 'tides_relation_size_sql'
LANGUAGE C STRICT;
COMMENT ON FUNCTION tides_relation_size(regclass) IS 'approximate bytes the relation occupies in the engine (memtables and SSTables)';

CREATE FUNCTION tides_flush()
RETURNS void
AS 'MODULE_PATHNAME', 'tides_flush_sql'
LANGUAGE C;

CREATE FUNCTION tides_compact()
RETURNS void
AS 'MODULE_PATHNAME', 'tides_compact_sql'
LANGUAGE C;
