--
-- bad_input: invalid values for every tides.* setting and invalid
-- reloptions give errors that name the setting; the tides_* functions
-- refuse what is not theirs.  Nothing may crash.
--
-- (No heap reference: the expected output is written by hand.  ALTER
-- SYSTEM validates a value without applying it; a valid value would be
-- written to postgresql.auto.conf, so only invalid ones are used here.)
--

-- the settings and their built-in defaults (boot_val: what the server's
-- configuration sets does not matter); a new setting needs its bad values
-- below, too
SELECT name, boot_val, unit, context, vartype, min_val, max_val, enumvals
FROM pg_settings WHERE name LIKE 'tides.%' ORDER BY name;
-- what is in effect now, and what postgresql.auto.conf holds: the end of
-- the block checks that nothing of it changed
CREATE TEMP TABLE bad_settings_before AS
SELECT name, setting, source FROM pg_settings WHERE name LIKE 'tides.%';
CREATE TEMP TABLE bad_auto_conf_before AS
SELECT name, setting FROM pg_file_settings
WHERE name LIKE 'tides.%' AND sourcefile LIKE '%postgresql.auto.conf';

-- postmaster settings cannot be changed with SET
SET tides.memtable_size = '64MB';
SET tides.memtable_count = 4;
SET tides.memtables_per_flush = 1;
SET tides.block_cache_size = '128MB';
SET tides.metadata_size = '16MB';
SET tides.compaction_workers = 1;
SET tides.l0_slowdown_files = 12;
SET tides.l0_stop_files = 20;
SET tides.delayed_write_rate = '16MB';
SET tides.max_relations = 16384;
SET tides.wal = off;
-- sighup settings cannot be changed with SET either
SET tides.sync_mode = 'bogus';
SET tides.sync_mode = 'none';
SET tides.sync_interval = '100ms';
SET tides.memtable_discard_after = '1min';
SET tides.compression = 'zstd';
SET tides.compression_level = 5;
SELECT set_config('tides.compression', 'none', false);
SELECT current_database() AS db \gset
ALTER DATABASE :"db" SET tides.sync_mode = 'none';
ALTER ROLE CURRENT_USER SET tides.compression = 'zstd';

-- invalid values (ALTER SYSTEM checks them)
ALTER SYSTEM SET tides.memtable_size = 0;
ALTER SYSTEM SET tides.memtable_size = '4096MB';
ALTER SYSTEM SET tides.memtable_size = '1TB';
ALTER SYSTEM SET tides.memtable_size = '64 parsecs';
ALTER SYSTEM SET tides.memtable_size = 'lots';
ALTER SYSTEM SET tides.memtable_size = '-1';
ALTER SYSTEM SET tides.memtable_count = 1;
ALTER SYSTEM SET tides.memtable_count = 17;
ALTER SYSTEM SET tides.memtable_count = '4 tables';
ALTER SYSTEM SET tides.memtables_per_flush = 0;
ALTER SYSTEM SET tides.memtables_per_flush = 16;
ALTER SYSTEM SET tides.memtable_discard_after = -1;
ALTER SYSTEM SET tides.memtable_discard_after = '2h';
ALTER SYSTEM SET tides.memtable_discard_after = '10 parsecs';
ALTER SYSTEM SET tides.block_cache_size = 0;
ALTER SYSTEM SET tides.block_cache_size = '2048TB';
ALTER SYSTEM SET tides.block_cache_size = '128 furlongs';
ALTER SYSTEM SET tides.metadata_size = 0;
ALTER SYSTEM SET tides.metadata_size = '5GB';
ALTER SYSTEM SET tides.metadata_size = '16ms';
ALTER SYSTEM SET tides.sync_mode = 'bogus';
ALTER SYSTEM SET tides.sync_mode = '';
ALTER SYSTEM SET tides.sync_mode = 1;
ALTER SYSTEM SET tides.sync_interval = 0;
ALTER SYSTEM SET tides.sync_interval = '2min';
ALTER SYSTEM SET tides.sync_interval = '5 parsecs';
ALTER SYSTEM SET tides.sync_interval = '10MB';
ALTER SYSTEM SET tides.compression = 'gzip';
ALTER SYSTEM SET tides.compression = 'lz5';
ALTER SYSTEM SET tides.compression_level = 0;
ALTER SYSTEM SET tides.compression_level = 20;
ALTER SYSTEM SET tides.compression_level = -8;
ALTER SYSTEM SET tides.compression_level = 'high';
ALTER SYSTEM SET tides.compaction_workers = 0;
ALTER SYSTEM SET tides.compaction_workers = 9;
ALTER SYSTEM SET tides.compaction_workers = 'all';
ALTER SYSTEM SET tides.l0_slowdown_files = 3;
ALTER SYSTEM SET tides.l0_slowdown_files = 1001;
ALTER SYSTEM SET tides.l0_stop_files = 3;
ALTER SYSTEM SET tides.l0_stop_files = 1001;
ALTER SYSTEM SET tides.delayed_write_rate = -1;
ALTER SYSTEM SET tides.delayed_write_rate = '2TB';
ALTER SYSTEM SET tides.delayed_write_rate = 'fast';
ALTER SYSTEM SET tides.max_relations = 127;
ALTER SYSTEM SET tides.max_relations = 16777217;
ALTER SYSTEM SET tides.max_relations = 'many';
-- tides.index_method, a user setting of the tides_btree index access method
SET tides.index_method = 'hash';
SET tides.index_method = '';
ALTER SYSTEM SET tides.index_method = 'gist';
ALTER DATABASE :"db" SET tides.index_method = 'brin';
SHOW tides.index_method;
-- tides.wal: a boolean, fixed at server start
ALTER SYSTEM SET tides.wal = 'maybe';
ALTER SYSTEM SET tides.wal = 2;
-- tides.tablespaces: refuse or ignore, only superusers may set it
SET tides.tablespaces = 'move';
ALTER SYSTEM SET tides.tablespaces = '';
ALTER SYSTEM SET tides.tablespaces = 1;
-- tides.bulk_load_threshold: -1 (never) or a size
SET tides.bulk_load_threshold = -2;
SET tides.bulk_load_threshold = 'lots';
SET tides.bulk_load_threshold = '1TB';
ALTER SYSTEM SET tides.bulk_load_threshold = '';
-- tides.bulk_load_helper: a boolean
SET tides.bulk_load_helper = 'twice';
ALTER SYSTEM SET tides.bulk_load_helper = 2;
-- tides.bulk_read_helper: a boolean
SET tides.bulk_read_helper = 'ahead';
ALTER SYSTEM SET tides.bulk_read_helper = 3;
-- tides.check_publications: a boolean only superusers may set
SET tides.check_publications = 'sometimes';
ALTER SYSTEM SET tides.check_publications = 2;
CREATE ROLE bad_input_user;
SET ROLE bad_input_user;
SET tides.tablespaces = ignore;
SET tides.check_publications = off;
RESET ROLE;
DROP ROLE bad_input_user;
SHOW tides.tablespaces;
SHOW tides.check_publications;
-- tides.trust_strxfrm: a boolean only superusers may set
SET tides.trust_strxfrm = 'maybe';
ALTER SYSTEM SET tides.trust_strxfrm = 2;
CREATE ROLE bad_input_user;
SET ROLE bad_input_user;
SET tides.trust_strxfrm = on;
RESET ROLE;
DROP ROLE bad_input_user;
SHOW tides.trust_strxfrm;
-- unknown settings in the reserved tides. prefix
SET tides.bogus = 1;
ALTER SYSTEM SET tides.bogus = 1;
SHOW tides.bogus;
-- nothing was changed: postgresql.auto.conf holds the tides settings it
-- held before, and every setting is still what and where it was
(SELECT name, setting FROM pg_file_settings
 WHERE name LIKE 'tides.%' AND sourcefile LIKE '%postgresql.auto.conf'
 EXCEPT SELECT name, setting FROM bad_auto_conf_before)
UNION ALL
(SELECT name, setting FROM bad_auto_conf_before
 EXCEPT SELECT name, setting FROM pg_file_settings
 WHERE name LIKE 'tides.%' AND sourcefile LIKE '%postgresql.auto.conf')
ORDER BY name;
SELECT name, setting, source FROM pg_settings WHERE name LIKE 'tides.%'
EXCEPT SELECT name, setting, source FROM bad_settings_before
ORDER BY name;
-- (in case one of the values above was accepted, it must not break the
-- later restarts of this cluster: put back what postgresql.auto.conf held,
-- touching nothing else of a server that make installcheck runs on)
SELECT CASE WHEN b.name IS NULL THEN format('ALTER SYSTEM RESET %s', a.name)
            ELSE format('ALTER SYSTEM SET %s = %L', a.name, b.setting) END
FROM (SELECT name, setting FROM pg_file_settings
      WHERE name LIKE 'tides.%' AND sourcefile LIKE '%postgresql.auto.conf') a
LEFT JOIN bad_auto_conf_before b USING (name)
WHERE b.setting IS DISTINCT FROM a.setting
ORDER BY a.name \gexec

--
-- reloptions on tides tables
--
CREATE TABLE bad_rel (a int) USING tides WITH (fillfactor = 5);
CREATE TABLE bad_rel (a int) USING tides WITH (fillfactor = 101);
CREATE TABLE bad_rel (a int) USING tides WITH (bogus = 1);
CREATE TABLE bad_rel (a int) USING tides WITH (tides.bogus = 1);
CREATE TABLE bad_rel (a int) USING tides WITH (toast.bogus = 1);
CREATE TABLE bad_rel (a int) USING tides WITH (autovacuum_enabled = 'maybe');
CREATE TABLE bad_rel (a int) USING tides WITH (autovacuum_vacuum_scale_factor = -1);
CREATE TABLE bad_rel (a int) USING tides WITH (toast_tuple_target = 1);
CREATE TABLE bad_rel (a int) USING tides WITH (parallel_workers = 2000);
CREATE TABLE bad_rel (a int) USING tides WITH (oids = true);
CREATE TABLE bad_rel (a int) USING tides_nonexistent;
CREATE TABLE bad_rel (a int) USING btree;
-- valid options are kept
CREATE TABLE bad_rel (a int, b text) USING tides WITH (fillfactor = 50, autovacuum_enabled = off, toast.autovacuum_enabled = off);
SELECT reloptions FROM pg_class WHERE relname = 'bad_rel';
ALTER TABLE bad_rel SET (fillfactor = 5);
ALTER TABLE bad_rel SET (bogus = 1);
ALTER TABLE bad_rel SET (autovacuum_enabled = 'maybe');
ALTER TABLE bad_rel RESET (bogus);
ALTER TABLE bad_rel SET (fillfactor = 70);
SELECT reloptions FROM pg_class WHERE relname = 'bad_rel';
INSERT INTO bad_rel SELECT g, repeat('b', g) FROM generate_series(1, 500) g;
UPDATE bad_rel SET a = a + 1;
SELECT count(*), sum(a), sum(length(b)) FROM bad_rel;

--
-- the tides_* functions
--
SELECT tides_relation_size('bad_rel') > 0 AS has_size;
SELECT tides_relation_size(NULL);
SELECT tides_relation_size('pg_class');
SELECT tides_relation_size('pg_class_oid_index');
CREATE INDEX bad_rel_a ON bad_rel (a);
SELECT tides_relation_size('bad_rel_a');
CREATE INDEX bad_rel_t ON bad_rel USING tides_btree (a);
SELECT tides_relation_size('bad_rel_t') > 0 AS index_has_size;
DROP INDEX bad_rel_t;
CREATE VIEW bad_view AS SELECT * FROM bad_rel;
SELECT tides_relation_size('bad_view');
CREATE SEQUENCE bad_seq;
SELECT tides_relation_size('bad_seq');
CREATE TABLE bad_parted (a int) PARTITION BY RANGE (a);
SELECT tides_relation_size('bad_parted');
SELECT tides_relation_size(0);
SELECT tides_relation_size(4294967295);
SELECT tides_relation_size('no_such_table');
SELECT count(*) > 20 AS has_stats, count(DISTINCT name) = count(*) AS unique_names FROM tides_stats();
SELECT * FROM tides_verify();
-- a table with no columns, and tuples with only NULLs
CREATE TABLE bad_empty () USING tides;
INSERT INTO bad_empty DEFAULT VALUES;
INSERT INTO bad_empty SELECT FROM generate_series(1, 10);
SELECT count(*) FROM bad_empty;
DELETE FROM bad_empty WHERE ctid IN (SELECT ctid FROM bad_empty LIMIT 3);
SELECT count(*) FROM bad_empty;
CREATE TABLE bad_nulls (a int, b text, c float8) USING tides;
INSERT INTO bad_nulls SELECT NULL, NULL, NULL FROM generate_series(1, 5);
SELECT count(*), count(a), count(b), count(c) FROM bad_nulls;
-- a row too big for a page even after TOAST
DO $$
BEGIN
    EXECUTE 'CREATE TABLE bad_toowide (' ||
        (SELECT string_agg('c' || g || ' bigint', ', ') FROM generate_series(1, 1200) g) ||
        ') USING tides';
END $$;
\set VERBOSITY terse
DO $$
BEGIN
    EXECUTE 'INSERT INTO bad_toowide VALUES (' ||
        (SELECT string_agg(g::text, ', ') FROM generate_series(1, 1200) g) || ')';
END $$;
\set VERBOSITY default
SELECT count(*) FROM bad_toowide;
-- an invalid TID
SELECT count(*) FROM bad_rel WHERE ctid = '(0,0)';
SELECT count(*) FROM bad_rel WHERE ctid = '(4294967295,65535)';
SELECT count(*) FROM bad_rel WHERE ctid > '(4294967295,65535)';

DROP TABLE bad_rel CASCADE;
DROP TABLE bad_empty, bad_nulls, bad_toowide, bad_parted;
DROP SEQUENCE bad_seq;
