--
-- visibility_hints: an index fetch from a block the visibility map has
-- all-visible takes the version's inserter as committed without asking the
-- commit log (src/am/visibility.c, tam_hint_all_visible), as heap's hint
-- bits spare heap.  Counted by pg_stat_slru's "Xact" page hits: one per row
-- fetched before VACUUM (every row has its own inserter), next to none after.
-- The scans go through indexes whose order is not the table's (id and v
-- are permutations of the insertion order), fetching row by row, and through
-- one in the table's order (o), whose fetches read ahead (seqread.c).
--
CREATE TABLE vh (id int PRIMARY KEY, v int, o int) USING tides WITH (autovacuum_enabled = off);
CREATE INDEX vh_v ON vh USING tides_btree (v);
CREATE INDEX vh_o ON vh (o);
DO $$ BEGIN FOR i IN 1..3000 LOOP INSERT INTO vh VALUES ((i * 1999) % 3001, (i * 7919) % 3001, i); COMMIT; END LOOP; END $$;
CREATE TABLE vh_hits (label text, hits bigint);
CREATE FUNCTION vh_xact_hits() RETURNS bigint LANGUAGE sql
  AS $$ SELECT blks_hit FROM pg_stat_slru WHERE name = 'Xact' $$;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
-- every row through each index, before and after VACUUM
CREATE FUNCTION vh_scan(label text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  a bigint; b bigint;
BEGIN
  SELECT count(*), sum(v) INTO a, b FROM vh WHERE id > 0;
  IF a <> 3000 OR b <> 4501500 THEN RAISE EXCEPTION 'pk scan: % rows, sum %', a, b; END IF;
  SELECT count(*), sum(id) INTO a, b FROM vh WHERE v > 0;
  IF a <> 3000 OR b <> 4501500 THEN RAISE EXCEPTION 'tides_btree scan: % rows, sum %', a, b; END IF;
  SELECT count(*), sum(id) INTO a, b FROM vh WHERE o > 0;
  IF a <> 3000 OR b <> 4501500 THEN RAISE EXCEPTION 'table order scan: % rows, sum %', a, b; END IF;
  RETURN label;
END $$;
SELECT pg_stat_force_next_flush();
INSERT INTO vh_hits SELECT 'start', vh_xact_hits();
SELECT vh_scan('before vacuum');
SELECT pg_stat_force_next_flush();
INSERT INTO vh_hits SELECT 'before vacuum', vh_xact_hits();
VACUUM vh;
SELECT pg_stat_force_next_flush();
INSERT INTO vh_hits SELECT 'vacuumed', vh_xact_hits();
SELECT vh_scan('after vacuum');
SELECT pg_stat_force_next_flush();
INSERT INTO vh_hits SELECT 'after vacuum', vh_xact_hits();
-- three scans of 3,000 rows: a commit log lookup for each fetch before;
-- after, every block is all-visible and none (a margin for other sessions)
SELECT (SELECT hits FROM vh_hits WHERE label = 'before vacuum') -
       (SELECT hits FROM vh_hits WHERE label = 'start') >= 9000 AS lookups_before,
       (SELECT hits FROM vh_hits WHERE label = 'after vacuum') -
       (SELECT hits FROM vh_hits WHERE label = 'vacuumed') < 600 AS few_lookups_after;
SELECT relallvisible = relpages AS all_visible FROM pg_class WHERE relname = 'vh';
-- a block's bit is cleared by a change and set again only by VACUUM: an
-- aborted delete, an aborted insert of a row held back with its entries,
-- and committed updates and deletes read right, before and after VACUUM
BEGIN;
DELETE FROM vh WHERE id <= 10;
ROLLBACK;
BEGIN;
INSERT INTO vh VALUES (-1, -1);
ROLLBACK;
UPDATE vh SET v = v + 10000 WHERE id BETWEEN 11 AND 20;
DELETE FROM vh WHERE id BETWEEN 21 AND 30;
SELECT count(*), sum(v) FROM vh WHERE id > -5;
SELECT count(*), sum(id) FROM vh WHERE v > -5;
SELECT count(*), sum(v) FROM vh WHERE o > -5;
VACUUM vh;
SELECT count(*), sum(v) FROM vh WHERE id > -5;
SELECT count(*), sum(id) FROM vh WHERE v > -5;
SELECT count(*), sum(v) FROM vh WHERE o > -5;
SELECT count(*), sum(v) FROM vh WHERE id BETWEEN 1 AND 40;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexonlyscan;
DROP TABLE vh, vh_hits;
DROP FUNCTION vh_xact_hits(), vh_scan(text);
