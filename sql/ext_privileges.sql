--
-- ext_privileges: who may call the tides_* functions (the rule is in
-- tidesam--1.0--1.1.sql, section 2).  A plain role: permission denied for
-- the maintenance and statistics functions and the monitoring views, but
-- it uses tides tables and indexes as before; a member of pg_monitor reads
-- the statistics, the monitoring views and the sizes;
-- a role a superuser grants EXECUTE to runs a maintenance function.
--
CREATE ROLE regress_tides_plain;
CREATE ROLE regress_tides_monitor IN ROLE pg_monitor;
CREATE ROLE regress_tides_maint;
GRANT CREATE ON SCHEMA public TO regress_tides_plain;

CREATE TABLE priv_t (id int PRIMARY KEY, v text) USING tides;
CREATE INDEX priv_i ON priv_t USING tides_btree (id);
INSERT INTO priv_t SELECT g, 'v' || g FROM generate_series(1, 1000) g;
GRANT SELECT, INSERT ON priv_t TO regress_tides_plain;

-- every function of the extension: may each role execute it?
SELECT p.oid::regprocedure AS function,
       has_function_privilege('regress_tides_plain', p.oid, 'EXECUTE') AS plain,
       has_function_privilege('regress_tides_monitor', p.oid, 'EXECUTE') AS pg_monitor,
       has_function_privilege('regress_tides_maint', p.oid, 'EXECUTE') AS maint
FROM pg_proc p
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'tidesam')
ORDER BY p.oid::regprocedure::text;
-- every view of the extension: may each role read it?
SELECT c.oid::regclass AS view,
       has_table_privilege('regress_tides_plain', c.oid, 'SELECT') AS plain,
       has_table_privilege('regress_tides_monitor', c.oid, 'SELECT') AS pg_monitor,
       has_table_privilege('regress_tides_maint', c.oid, 'SELECT') AS maint
FROM pg_class c
JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'tidesam')
ORDER BY c.oid::regclass::text;

--
-- a plain role
--
SET ROLE regress_tides_plain;
SELECT count(*) > 0 FROM tides_stats();
SELECT tides_relation_size('priv_t');
SELECT tides_index_entries('priv_i');
SELECT * FROM tides_verify();
SELECT * FROM tides_verify_index('priv_i');
SELECT tides_flush();
SELECT tides_flush(true);
SELECT tides_compact();
SELECT count(*) FROM tides_engine_stats;
SELECT count(*) FROM tides_levels;
SELECT count(*) FROM tides_compactions;
SELECT count(*) FROM tides_relations;
SELECT * FROM tides_engine_stats();
SELECT tides_stats_reset();
SELECT tides_database_size();
SELECT tides_total_relation_size('priv_t');
SELECT tides_engine_size();
-- what touches neither the engine nor a table stays PUBLIC
SELECT tides_index_encode(42);
SELECT tides_index_encode('abc'::text COLLATE "C");
-- tides tables and indexes work as before
INSERT INTO priv_t VALUES (1001, 'plain');
SET enable_seqscan = off;
SELECT * FROM priv_t WHERE id IN (1, 1001) ORDER BY id;
RESET enable_seqscan;
CREATE TABLE priv_own (a int PRIMARY KEY, b text) USING tides;
CREATE INDEX priv_own_b ON priv_own USING tides_btree (a, b COLLATE "C");
INSERT INTO priv_own SELECT g, 'b' || g FROM generate_series(1, 100) g;
UPDATE priv_own SET b = b || '!' WHERE a % 10 = 0;
SELECT count(*), sum(a), count(*) FILTER (WHERE b LIKE '%!') FROM priv_own;
-- also on its own table, the size is for pg_monitor
SELECT tides_relation_size('priv_own');
RESET ROLE;

--
-- a member of pg_monitor: statistics and sizes, no maintenance
--
SET ROLE regress_tides_monitor;
SELECT count(*) > 20 AS has_stats, count(DISTINCT name) = count(*) AS unique_names FROM tides_stats();
SELECT tides_relation_size('priv_t') > 0 AS table_has_size, tides_relation_size('priv_i') > 0 AS index_has_size;
SELECT tides_index_entries('priv_i');
SELECT tides_relation_size('priv_own') > 0 AS other_roles_table_has_size;
SELECT count(*) AS levels FROM tides_levels;
SELECT count(*) > 20 AS has_columns FROM (SELECT (jsonb_each(to_jsonb(s))).key FROM tides_engine_stats s) k;
SELECT count(*) >= 0 AS compactions_readable FROM tides_compactions;
SELECT relid, kind, total_bytes > 0 AS has_bytes FROM tides_relations
WHERE relid IN ('priv_t'::regclass, 'priv_i'::regclass, 'priv_own'::regclass) ORDER BY relid::text;
SELECT tides_database_size() > 0 AS database_size, tides_database_size(current_database()) > 0 AS by_name,
       tides_total_relation_size('priv_t') > 0 AS total_relation_size, tides_engine_size() > 0 AS engine_size;
SELECT * FROM tides_verify();
SELECT * FROM tides_verify_index('priv_i');
SELECT tides_flush();
SELECT tides_flush(true);
SELECT tides_compact();
SELECT tides_stats_reset();
-- the statistics, not the rows
SELECT count(*) FROM priv_t;
RESET ROLE;

--
-- maintenance delegated by a superuser
--
GRANT EXECUTE ON FUNCTION tides_flush(), tides_compact(), tides_verify() TO regress_tides_maint;
GRANT EXECUTE ON FUNCTION tides_verify_index(regclass) TO regress_tides_maint;
GRANT SELECT ON priv_t TO regress_tides_maint;
SET ROLE regress_tides_maint;
SELECT tides_flush();
SELECT tides_compact();
SELECT count(*) AS problems FROM tides_verify();
SELECT count(*) AS problems FROM tides_verify_index('priv_i');
SELECT count(*) > 0 FROM tides_stats();
RESET ROLE;
REVOKE EXECUTE ON FUNCTION tides_flush(), tides_compact(), tides_verify() FROM regress_tides_maint;
REVOKE EXECUTE ON FUNCTION tides_verify_index(regclass) FROM regress_tides_maint;
SET ROLE regress_tides_maint;
SELECT tides_flush();
RESET ROLE;

-- a superuser calls everything
SELECT tides_flush();
SELECT tides_flush(true);
SELECT tides_stats_reset();
SELECT count(*) AS problems FROM tides_verify();
SELECT tides_index_entries('priv_i');

DROP TABLE priv_t;
DROP OWNED BY regress_tides_plain, regress_tides_monitor, regress_tides_maint;
DROP ROLE regress_tides_plain, regress_tides_monitor, regress_tides_maint;
