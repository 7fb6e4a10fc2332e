-- heap_reference.sql -- run by test/ext/run.sh --am heap in each test
-- database instead of CREATE EXTENSION tidesam.  The tests then run on heap
-- unchanged, and their output is the reference for the expected files:
--   * "tides" is an access method with heap's handler;
--   * the tides_* functions are stand-ins with heap meanings.
CREATE ACCESS METHOD tides TYPE TABLE HANDLER heap_tableam_handler;

-- nothing to flush or compact in heap
CREATE FUNCTION tides_flush() RETURNS void LANGUAGE plpgsql AS $$ BEGIN END $$;
CREATE FUNCTION tides_compact() RETURNS void LANGUAGE plpgsql AS $$ BEGIN END $$;
CREATE FUNCTION tides_verify(OUT file text, OUT problem text) RETURNS SETOF record
    LANGUAGE sql AS $$ SELECT NULL::text, NULL::text WHERE false $$;

-- main fork of the table and of its TOAST table
CREATE FUNCTION tides_relation_size(regclass) RETURNS bigint STRICT LANGUAGE sql AS $$
    SELECT pg_relation_size($1) +
           coalesce((SELECT pg_relation_size(reltoastrelid) FROM pg_class
                     WHERE oid = $1 AND reltoastrelid <> 0), 0)
$$;

-- "level bytes": main forks of every table in this database
CREATE FUNCTION tides_stats(OUT name text, OUT value bigint) RETURNS SETOF record
    LANGUAGE sql AS $$
    SELECT 'level0_bytes', sum(pg_relation_size(oid))::bigint
    FROM pg_class WHERE relkind IN ('r', 'm', 't')
$$;
