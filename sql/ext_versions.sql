--
-- ext_versions: the extension's versions and its update chain.  In a
-- scratch database, for every version other than the default: CREATE
-- EXTENSION tidesam VERSION v, ALTER EXTENSION tidesam UPDATE, then compare
-- the catalogs with a fresh CREATE EXTENSION tidesam -- every member object,
-- every function's definition, access methods, operator families and
-- classes with their members, comments, ACLs and pg_init_privs.  They must
-- be the same, line by line.
--
SELECT current_database() AS regress_db \gset

-- the versions and the updates between them.  (Not from
-- pg_available_extension_versions: it does not see an extension that
-- pg_virtualenv serves from a package's build directory through
-- extension_destdir, as the Debian package's build-time test does.)
SELECT extversion FROM pg_extension WHERE extname = 'tidesam';
SELECT * FROM pg_extension_update_paths('tidesam') WHERE path IS NOT NULL ORDER BY source, target;

CREATE DATABASE regress_tides_versions TEMPLATE template0;
\c regress_tides_versions

-- one line per fact; object identities by name (pg_describe_object), so
-- that two installations in one database compare although their oids differ
CREATE FUNCTION regress_tides_catalog() RETURNS SETOF text LANGUAGE sql AS $$
WITH ext AS (
    SELECT oid, extowner FROM pg_extension WHERE extname = 'tidesam'
), members AS (
    SELECT d.classid, d.objid, d.objsubid
    FROM pg_depend d, ext
    WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'
), fams AS (
    SELECT f.oid FROM pg_opfamily f JOIN members m ON m.classid = 'pg_opfamily'::regclass AND m.objid = f.oid
), acls AS (
    SELECT 'pg_proc'::regclass AS classid, p.oid AS objid, p.proowner AS owner,
           coalesce(p.proacl, acldefault('f', p.proowner)) AS acl
    FROM pg_proc p JOIN members m ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid
    UNION ALL
    SELECT 'pg_class'::regclass, c.oid, c.relowner,
           coalesce(c.relacl, acldefault(CASE WHEN c.relkind = 'S' THEN 's' ELSE 'r' END::"char", c.relowner))
    FROM pg_class c JOIN members m ON m.classid = 'pg_class'::regclass AND m.objid = c.oid
    UNION ALL
    SELECT 'pg_type'::regclass, t.oid, t.typowner, coalesce(t.typacl, acldefault('T', t.typowner))
    FROM pg_type t JOIN members m ON m.classid = 'pg_type'::regclass AND m.objid = t.oid
)
SELECT 'extension version=' || e.extversion || ' relocatable=' || e.extrelocatable
       || ' schema=' || e.extnamespace::regnamespace || ' config=' || coalesce(e.extconfig::regclass[]::text, '-')
       || ' condition=' || coalesce(e.extcondition::text, '-')
FROM pg_extension e WHERE e.extname = 'tidesam'
UNION ALL
SELECT 'member ' || pg_describe_object(classid, objid, objsubid) FROM members
UNION ALL
SELECT format('function %s returns %s kind=%s lang=%s src=%s bin=%s strict=%s volatility=%s parallel=%s '
              'secdef=%s leakproof=%s retset=%s cost=%s rows=%s support=%s config=%s defaults=%s',
              p.oid::regprocedure, pg_get_function_result(p.oid), p.prokind, l.lanname, regexp_replace(p.prosrc, '\s+', ' ', 'g'),
              p.probin,
              p.proisstrict, p.provolatile, p.proparallel, p.prosecdef, p.proleakproof, p.proretset,
              p.procost, p.prorows, p.prosupport, p.proconfig, pg_get_function_arguments(p.oid))
FROM pg_proc p JOIN members m ON m.classid = 'pg_proc'::regclass AND m.objid = p.oid
JOIN pg_language l ON l.oid = p.prolang
UNION ALL
SELECT format('am %s type=%s handler=%s', a.amname, a.amtype, a.amhandler::regprocedure)
FROM pg_am a JOIN members m ON m.classid = 'pg_am'::regclass AND m.objid = a.oid
UNION ALL
SELECT format('opclass %s for %s default=%s storage=%s family=%s',
              pg_describe_object('pg_opclass'::regclass, c.oid, 0), c.opcintype::regtype, c.opcdefault,
              c.opckeytype::regtype, pg_describe_object('pg_opfamily'::regclass, c.opcfamily, 0))
FROM pg_opclass c JOIN members m ON m.classid = 'pg_opclass'::regclass AND m.objid = c.oid
UNION ALL
SELECT format('amop %s: %s purpose=%s sortfamily=%s', pg_describe_object('pg_amop'::regclass, o.oid, 0),
              pg_describe_object('pg_opfamily'::regclass, o.amopfamily, 0), o.amoppurpose, o.amopsortfamily)
FROM pg_amop o WHERE o.amopfamily IN (SELECT oid FROM fams)
UNION ALL
SELECT format('amproc %s: %s', pg_describe_object('pg_amproc'::regclass, p.oid, 0),
              pg_describe_object('pg_opfamily'::regclass, p.amprocfamily, 0))
FROM pg_amproc p WHERE p.amprocfamily IN (SELECT oid FROM fams)
UNION ALL
SELECT format('relation %s kind=%s persistence=%s am=%s columns=%s view=%s', c.oid::regclass, c.relkind,
              c.relpersistence, (SELECT amname FROM pg_am WHERE oid = c.relam),
              (SELECT string_agg(format('%I %s', attname, format_type(atttypid, atttypmod)), ', ' ORDER BY attnum)
               FROM pg_attribute WHERE attrelid = c.oid AND attnum > 0 AND NOT attisdropped),
              CASE WHEN c.relkind IN ('v', 'm') THEN regexp_replace(pg_get_viewdef(c.oid), '\s+', ' ', 'g') END)
FROM pg_class c JOIN members m ON m.classid = 'pg_class'::regclass AND m.objid = c.oid
UNION ALL
SELECT format('comment %s: %s', pg_describe_object(d.classoid, d.objoid, d.objsubid), d.description)
FROM pg_description d JOIN members m ON m.classid = d.classoid AND m.objid = d.objoid
UNION ALL
SELECT format('acl %s: %s to %s%s by %s', pg_describe_object(a.classid, a.objid, 0), x.privilege_type,
              CASE x.grantee WHEN 0 THEN 'PUBLIC' WHEN a.owner THEN 'owner' ELSE x.grantee::regrole::text END,
              CASE WHEN x.is_grantable THEN ' with grant option' ELSE '' END,
              CASE x.grantor WHEN a.owner THEN 'owner' ELSE x.grantor::regrole::text END)
FROM acls a, aclexplode(a.acl) x
UNION ALL
SELECT format('init_privilege %s (%s): %s to %s%s', pg_describe_object(i.classoid, i.objoid, i.objsubid),
              i.privtype, x.privilege_type,
              CASE x.grantee WHEN 0 THEN 'PUBLIC' WHEN (SELECT extowner FROM ext) THEN 'owner'
                             ELSE x.grantee::regrole::text END,
              CASE WHEN x.is_grantable THEN ' with grant option' ELSE '' END)
FROM pg_init_privs i JOIN members m ON m.classid = i.classoid AND m.objid = i.objoid,
     aclexplode(i.initprivs) x
$$;

CREATE TABLE regress_tides_catalogs (installed_as text, line text);

-- a fresh install of the default version, then each other version updated
-- to the default (each in a database of its own for CREATE EXTENSION: the
-- scratch database keeps no extension between them)
CREATE EXTENSION tidesam;
INSERT INTO regress_tides_catalogs SELECT 'fresh', l FROM regress_tides_catalog() l;
SELECT set_config('regress_tides.default_version', extversion, false) AS default_version
FROM pg_extension WHERE extname = 'tidesam';
DROP EXTENSION tidesam;
-- every other version has an update path to the default one
SELECT source AS no_update_path_from FROM pg_extension_update_paths('tidesam')
WHERE target = current_setting('regress_tides.default_version') AND path IS NULL;
DO $$
DECLARE
    v text;
BEGIN
    FOR v IN SELECT source FROM pg_extension_update_paths('tidesam')
             WHERE target = current_setting('regress_tides.default_version') AND path IS NOT NULL
             ORDER BY source
    LOOP
        EXECUTE format('CREATE EXTENSION tidesam VERSION %L', v);
        EXECUTE 'ALTER EXTENSION tidesam UPDATE';
        INSERT INTO regress_tides_catalogs SELECT 'from ' || v, l FROM regress_tides_catalog() l;
        EXECUTE 'DROP EXTENSION tidesam';
    END LOOP;
END $$;

-- the comparison sees differences: 1.0 as it is, without the update, is
-- what 1.1 changes
CREATE EXTENSION tidesam VERSION '1.0';
INSERT INTO regress_tides_catalogs SELECT '1.0 not updated', l FROM regress_tides_catalog() l;
DROP EXTENSION tidesam;
(SELECT '1.1 only' AS version, line FROM regress_tides_catalogs WHERE installed_as = 'fresh'
 EXCEPT ALL SELECT '1.1 only', line FROM regress_tides_catalogs WHERE installed_as = '1.0 not updated')
UNION ALL
(SELECT '1.0 only', line FROM regress_tides_catalogs WHERE installed_as = '1.0 not updated'
 EXCEPT ALL SELECT '1.0 only', line FROM regress_tides_catalogs WHERE installed_as = 'fresh')
ORDER BY 1, 2;
DELETE FROM regress_tides_catalogs WHERE installed_as = '1.0 not updated';

-- what a fresh install holds (counts by kind), and that it is not empty
SELECT split_part(line, ' ', 1) AS kind, count(*)
FROM regress_tides_catalogs WHERE installed_as = 'fresh' GROUP BY 1 ORDER BY 1;
-- each update ends where a fresh install begins: no line differs
SELECT u.installed_as, (SELECT count(*) FROM regress_tides_catalogs WHERE installed_as = u.installed_as) AS lines,
       (SELECT count(*) FROM regress_tides_catalogs WHERE installed_as = 'fresh') AS fresh_lines
FROM (SELECT DISTINCT installed_as FROM regress_tides_catalogs WHERE installed_as <> 'fresh') u ORDER BY 1;
SELECT u.installed_as, 'only after the update' AS where_, x.line
FROM (SELECT DISTINCT installed_as FROM regress_tides_catalogs WHERE installed_as <> 'fresh') u,
     LATERAL (SELECT line FROM regress_tides_catalogs WHERE installed_as = u.installed_as
              EXCEPT ALL SELECT line FROM regress_tides_catalogs WHERE installed_as = 'fresh') x
UNION ALL
SELECT u.installed_as, 'only in a fresh install', x.line
FROM (SELECT DISTINCT installed_as FROM regress_tides_catalogs WHERE installed_as <> 'fresh') u,
     LATERAL (SELECT line FROM regress_tides_catalogs WHERE installed_as = 'fresh'
              EXCEPT ALL SELECT line FROM regress_tides_catalogs WHERE installed_as = u.installed_as) x
ORDER BY 1, 2, 3;
-- the privileges of a fresh install (ext_privileges.sql tests them)
SELECT substr(line, 5) AS acl FROM regress_tides_catalogs
WHERE installed_as = 'fresh' AND line LIKE 'acl %' ORDER BY 1;
SELECT substr(line, 16) AS init_privilege FROM regress_tides_catalogs
WHERE installed_as = 'fresh' AND line LIKE 'init\_privilege %' ORDER BY 1;

-- an update in place keeps what uses the extension: a tides table and a
-- tides_btree index made under 1.0 work under 1.1
CREATE EXTENSION tidesam VERSION '1.0';
CREATE TABLE regress_v (id int PRIMARY KEY, v text) USING tides;
CREATE INDEX regress_v_id ON regress_v USING tides_btree (id);
INSERT INTO regress_v SELECT g, 'v' || g FROM generate_series(1, 1000) g;
ALTER EXTENSION tidesam UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'tidesam';
INSERT INTO regress_v SELECT g, 'v' || g FROM generate_series(1001, 2000) g;
SET enable_seqscan = off;
SELECT * FROM regress_v WHERE id IN (1, 1500, 2000) ORDER BY id;
RESET enable_seqscan;
SELECT count(*), sum(id) FROM regress_v;
SELECT count(*) AS problems FROM tides_verify_index('regress_v_id');
-- nothing newer than the default version to update to
ALTER EXTENSION tidesam UPDATE;
ALTER EXTENSION tidesam UPDATE TO '1.0';
DROP TABLE regress_v;
DROP EXTENSION tidesam;

\c :regress_db
DROP DATABASE regress_tides_versions;
