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

-- ------------------------------------------------------------------------
-- tides_btree: an index access method with b-tree semantics whose entries
-- live in the tides engine (src/index/README.md).

CREATE FUNCTION tides_btree_handler(internal)
RETURNS index_am_handler
AS 'MODULE_PATHNAME', 'tides_btree_handler'
LANGUAGE C;

CREATE ACCESS METHOD tides_btree TYPE INDEX HANDLER tides_btree_handler;
COMMENT ON ACCESS METHOD tides_btree IS 'b-tree semantics with index entries in the tides LSM engine';

-- Operator families and classes: copies of the b-tree ones (same names, same
-- members) for the types whose values tides_btree can encode.
DO $tides_btree$
DECLARE
    fam record;
    m record;
    opc record;
BEGIN
    FOR fam IN
        SELECT f.oid, f.opfname
        FROM pg_catalog.pg_opfamily f
        WHERE f.opfmethod = (SELECT oid FROM pg_catalog.pg_am WHERE amname = 'btree')
          AND f.opfnamespace = 'pg_catalog'::regnamespace
          AND f.opfname IN ('bool_ops', 'bpchar_ops', 'bpchar_pattern_ops', 'bytea_ops',
                            'char_ops', 'datetime_ops', 'enum_ops', 'float_ops',
                            'integer_ops', 'interval_ops', 'money_ops', 'numeric_ops',
                            'oid_ops', 'text_ops', 'text_pattern_ops', 'time_ops',
                            'timetz_ops', 'uuid_ops')
        ORDER BY f.opfname
    LOOP
        EXECUTE format('CREATE OPERATOR FAMILY %I USING tides_btree', fam.opfname);
        FOR m IN
            SELECT a.amopstrategy, o.oprname, a.amoplefttype::regtype AS lt,
                   a.amoprighttype::regtype AS rt
            FROM pg_catalog.pg_amop a JOIN pg_catalog.pg_operator o ON o.oid = a.amopopr
            WHERE a.amopfamily = fam.oid
            ORDER BY 3, 4, 1
        LOOP
            EXECUTE format('ALTER OPERATOR FAMILY %I USING tides_btree ADD OPERATOR %s pg_catalog.%s (%s, %s)',
                           fam.opfname, m.amopstrategy, m.oprname, m.lt, m.rt);
        END LOOP;
        FOR m IN
            SELECT p.amprocnum, p.amproclefttype::regtype AS lt,
                   p.amprocrighttype::regtype AS rt, p.amproc::regprocedure AS proc
            FROM pg_catalog.pg_amproc p
            WHERE p.amprocfamily = fam.oid AND p.amprocnum BETWEEN 1 AND 4
            ORDER BY 2, 3, 1
        LOOP
            EXECUTE format('ALTER OPERATOR FAMILY %I USING tides_btree ADD FUNCTION %s (%s, %s) %s',
                           fam.opfname, m.amprocnum, m.lt, m.rt, m.proc);
        END LOOP;
        FOR opc IN
            SELECT c.opcname, c.opcdefault, c.opcintype::regtype AS t,
                   (CASE WHEN c.opckeytype = 0 THEN c.opcintype ELSE c.opckeytype END)::regtype AS k
            FROM pg_catalog.pg_opclass c
            WHERE c.opcfamily = fam.oid
            ORDER BY c.opcname
        LOOP
            -- STORAGE as btree's (name_ops stores cstring)
            EXECUTE format('CREATE OPERATOR CLASS %I %s FOR TYPE %s USING tides_btree FAMILY %I AS STORAGE %s',
                           opc.opcname, CASE WHEN opc.opcdefault THEN 'DEFAULT' ELSE '' END,
                           opc.t, fam.opfname, opc.k);
        END LOOP;
    END LOOP;
END
$tides_btree$;

CREATE FUNCTION tides_verify_index(index regclass)
RETURNS TABLE (problem text)
AS 'MODULE_PATHNAME', 'tides_verify_index'
LANGUAGE C STRICT;
COMMENT ON FUNCTION tides_verify_index(regclass) IS 'check that a tides_btree index and its table agree; one row per problem';

CREATE FUNCTION tides_index_entries(index regclass)
RETURNS bigint
AS 'MODULE_PATHNAME', 'tides_index_entries'
LANGUAGE C STRICT;
COMMENT ON FUNCTION tides_index_entries(regclass) IS 'entries a tides_btree index holds, dead rows'' entries included';

CREATE FUNCTION tides_index_encode(value anyelement, opclass text DEFAULT NULL)
RETURNS bytea
AS 'MODULE_PATHNAME', 'tides_index_encode'
LANGUAGE C STABLE;
COMMENT ON FUNCTION tides_index_encode(anyelement, text) IS 'the memcomparable encoding tides_btree stores for a value (under the call''s collation and the named b-tree operator class)';
