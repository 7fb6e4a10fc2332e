-- dump_check.sql -- the contents of the tides_dump_* databases: access
-- method and digest of every table (run on the source and the restored
-- database by test/ext/run.sh; the two outputs must be equal)
SELECT c.relname, c.relkind, a.amname, c.relpersistence
FROM pg_class c LEFT JOIN pg_am a ON a.oid = c.relam
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'm', 'p')
ORDER BY c.relname;
CREATE TEMP TABLE digests (relname text, n bigint, digest text);
DO $$
DECLARE r record; n bigint; d text;
BEGIN
    FOR r IN SELECT c.oid::regclass AS rel, c.relname FROM pg_class c
             JOIN pg_namespace ns ON ns.oid = c.relnamespace
             WHERE ns.nspname = 'public' AND c.relkind IN ('r', 'm', 'p') LOOP
        EXECUTE format('SELECT count(*), md5(coalesce(string_agg(x::text, %L ORDER BY x::text), %L)) FROM %s x',
                       E'\n', '', r.rel) INTO n, d;
        INSERT INTO digests VALUES (r.relname, n, d);
    END LOOP;
END $$;
SELECT * FROM digests ORDER BY relname;
SELECT last_value FROM d_child_id_seq;
SELECT indexrelid::regclass AS index, indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' ORDER BY indexrelid::regclass::text;
SET enable_seqscan = off;
SELECT id, v FROM d_plain WHERE v = md5('12346');
SELECT count(*) FROM d_child WHERE parent_id = 42;
