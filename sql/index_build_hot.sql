--
-- index_build_hot: index builds over HOT chains (src/am/index_build.c).
-- Builds of methods that take entries in any order (btree, hash, spgist,
-- tides_btree) read every version once and index each under its chain's
-- root; BRIN walks each chain from its root.  The table has chains of one
-- to three members, aborted members, deleted rows, chains pruned to a
-- redirect and grown again, and -- while a prepared transaction holds the
-- horizon back -- recently dead members, which make the chain "broken"
-- (indcheckxmin, as heap sets it).  Rows the inserting transaction updated
-- in a rolled-back subtransaction and then deleted or locked once looped
-- every chain walk that reached them (an index fetch, VACUUM, a build).  A heap table goes through the same and
-- is the reference: every index must find what a scan of it finds.
--
SET client_min_messages = warning;

CREATE FUNCTION hb_fill(tbl text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('INSERT INTO %I SELECT g, g %% 100, ''v'' || g FROM generate_series(1, 5000) g', tbl);
  EXECUTE format('UPDATE %I SET v = v || ''+'' WHERE id %% 2 = 0', tbl);
  EXECUTE format('UPDATE %I SET v = v || ''+'' WHERE id %% 3 = 0', tbl);
  BEGIN
    EXECUTE format('UPDATE %I SET v = ''aborted'' WHERE id %% 5 = 0', tbl);
    RAISE EXCEPTION 'roll back';
  EXCEPTION WHEN raise_exception THEN NULL;
  END;
  -- deleted or locked after the aborted update, by the transaction that
  -- inserted them: the flag that update left must not make the version
  -- (its t_ctid now itself) the next member of its own chain
  EXECUTE format('DELETE FROM %I WHERE id %% 7 = 0', tbl);
  EXECUTE format('SELECT count(*) FROM (SELECT FROM %I WHERE id %% 10 = 5 FOR UPDATE) l', tbl);
END $$;

-- what each index finds, through that index only (each serves other conditions)
CREATE FUNCTION hb_scan(ix text, q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  plan text := '';
  line text;
  res text;
BEGIN
  SET LOCAL enable_seqscan = off;
  SET LOCAL enable_indexonlyscan = off;
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    plan := plan || ' ' || line;
  END LOOP;
  IF position(ix in plan) = 0 THEN
    RETURN 'not used: ' || plan;
  END IF;
  EXECUTE q INTO res;
  RETURN res;
END $$;

CREATE FUNCTION hb_check(tbl text) RETURNS TABLE (check_name text, same boolean) LANGUAGE plpgsql AS $$
DECLARE
  ref text;
BEGIN
  EXECUTE format('SELECT md5(string_agg(id || '':'' || v, '','' ORDER BY id)) FROM %I', tbl) INTO ref;
  RETURN QUERY SELECT 'btree k', hb_scan(tbl || '_k', format(
    'SELECT md5(string_agg(id || '':'' || v, '','' ORDER BY id)) FROM %I WHERE k >= 0', tbl)) = ref;
  RETURN QUERY SELECT 'hash id', hb_scan(tbl || '_h', format(
    'SELECT count(*)::text FROM generate_series(1, 5000) g WHERE EXISTS (SELECT FROM %I WHERE id = g)', tbl)) =
    (SELECT count(*)::text FROM generate_series(1, 5000) g WHERE g % 7 <> 0);
  RETURN QUERY SELECT 'spgist v', hb_scan(tbl || '_s', format(
    'SELECT md5(string_agg(id || '':'' || v, '','' ORDER BY id)) FROM %I WHERE v >= ''''', tbl)) = ref;
  RETURN QUERY SELECT 'brin id', hb_scan(tbl || '_b', format(
    'SELECT md5(string_agg(id || '':'' || v, '','' ORDER BY id)) FROM %I WHERE id BETWEEN 1 AND 5000', tbl)) = ref;
  IF tbl = 'hbt' THEN
    RETURN QUERY SELECT 'tides_btree (k + 0, id)', hb_scan('hbt_tk', format(
      'SELECT md5(string_agg(id || '':'' || v, '','' ORDER BY id)) FROM %I WHERE k + 0 >= 0', tbl)) = ref;
    RETURN QUERY SELECT 'tides_btree unique (id * 1)', hb_scan('hbt_tu', format(
      'SELECT md5(string_agg(id || '':'' || v, '','' ORDER BY id)) FROM %I WHERE id * 1 > 0', tbl)) = ref;
    RETURN QUERY SELECT 'tides_btree entries', tides_index_entries('hbt_tk') = (SELECT count(*) FROM hbt)
      AND (SELECT count(*) = 0 FROM tides_verify_index('hbt_tk'))
      AND (SELECT count(*) = 0 FROM tides_verify_index('hbt_tu'));
  END IF;
END $$;

CREATE FUNCTION hb_indexes() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  CREATE INDEX hbt_k ON hbt (k);
  CREATE INDEX hbt_h ON hbt USING hash (id);
  CREATE INDEX hbt_s ON hbt USING spgist (v);
  CREATE INDEX hbt_b ON hbt USING brin (id) WITH (pages_per_range = 1);
  CREATE INDEX hbt_tk ON hbt USING tides_btree ((k + 0), id);
  CREATE UNIQUE INDEX hbt_tu ON hbt USING tides_btree ((id * 1));
  CREATE INDEX hbh_k ON hbh (k);
  CREATE INDEX hbh_h ON hbh USING hash (id);
  CREATE INDEX hbh_s ON hbh USING spgist (v);
  CREATE INDEX hbh_b ON hbh USING brin (id) WITH (pages_per_range = 1);
END $$;

CREATE TABLE hbt (id int, k int, v text COLLATE "C") USING tides;
CREATE TABLE hbh (id int, k int, v text COLLATE "C") USING heap;
SELECT hb_fill('hbt'), hb_fill('hbh');
-- prune the chains (redirects), then grow some again
VACUUM hbt;
VACUUM hbh;
UPDATE hbt SET v = v || '*' WHERE id % 11 = 0;
UPDATE hbh SET v = v || '*' WHERE id % 11 = 0;

SELECT hb_indexes();
SELECT * FROM hb_check('hbt');
SELECT * FROM hb_check('hbh');

-- recently dead members: a prepared transaction holds the horizon
DROP INDEX hbt_k, hbt_h, hbt_s, hbt_b, hbt_tk, hbt_tu, hbh_k, hbh_h, hbh_s, hbh_b;
CREATE TABLE hb_hold (x int);
BEGIN;
INSERT INTO hb_hold VALUES (1);
PREPARE TRANSACTION 'hb_hold';
UPDATE hbt SET v = v || '#' WHERE id % 13 = 0;
UPDATE hbh SET v = v || '#' WHERE id % 13 = 0;
SELECT hb_indexes();
SELECT c.relname, i.indcheckxmin FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid IN ('hbt'::regclass, 'hbh'::regclass) ORDER BY 1;
ROLLBACK PREPARED 'hb_hold';
SELECT * FROM hb_check('hbt');
SELECT * FROM hb_check('hbh');

DROP TABLE hbt, hbh, hb_hold;
DROP FUNCTION hb_check(text);
DROP FUNCTION hb_scan(text, text);
DROP FUNCTION hb_fill(text);
DROP FUNCTION hb_indexes();
