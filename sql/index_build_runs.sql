--
-- index_build_runs: a tides_btree build's sort (src/index/tidx_sort.c)
-- keeps what fits in maintenance_work_mem and writes the rest as sorted
-- runs to temporary files, merged at the end with the entries still in
-- memory.  With maintenance_work_mem at 1 MB these builds write two to seven
-- runs each (trace_sort logs them); entries whose first 8 bytes
-- are equal (text columns with a long common start, a column with three
-- values) are ordered by the rest, entries of very different lengths (an
-- INCLUDE column of 0-600 bytes) travel through the runs whole.  Every
-- index must hold one entry per row equal to it (tides_verify_index) and
-- return the rows in the order a sort gives, built as files and through
-- the memtables, and equal to the same index built in memory; a unique
-- build finds its duplicate across runs and ignores dead rows.
--
SET default_table_access_method = tides;
SET client_min_messages = warning;
SELECT setseed(0.5);

CREATE TABLE br (id int, k int, t text COLLATE "C", pay text);
INSERT INTO br
SELECT g,
       CASE WHEN random() < 0.05 THEN NULL ELSE floor(random() * 3)::int END,
       'a common start of the key, ' || CASE WHEN random() < 0.1 THEN '' ELSE md5(random()::text) END,
       repeat('x', floor(random() * 600)::int)
FROM generate_series(1, 20000) g;

CREATE FUNCTION br_check(ix text, cols text)
RETURNS TABLE (index text, entries_right boolean, walked_index boolean, order_right boolean)
LANGUAGE plpgsql AS $$
DECLARE
  by_index text;
  by_sort text;
  plan text := '';
  line text;
BEGIN
  SET LOCAL enable_indexscan = on;
  SET LOCAL enable_indexonlyscan = on;
  SET LOCAL enable_seqscan = off;
  SET LOCAL enable_bitmapscan = off;
  SET LOCAL enable_sort = off;
  FOR line IN EXECUTE format('EXPLAIN (COSTS OFF) SELECT id FROM br ORDER BY %s', cols) LOOP
    plan := plan || line;
  END LOOP;
  EXECUTE format('SELECT md5(string_agg(id::text, '','')) FROM (SELECT id FROM br ORDER BY %s) s', cols) INTO by_index;
  SET LOCAL enable_indexscan = off;
  SET LOCAL enable_indexonlyscan = off;
  SET LOCAL enable_seqscan = on;
  SET LOCAL enable_sort = on;
  EXECUTE format('SELECT md5(string_agg(id::text, '','')) FROM (SELECT id FROM br ORDER BY %s) s', cols) INTO by_sort;
  RETURN QUERY SELECT ix,
    (SELECT count(*) = 0 FROM tides_verify_index(ix::regclass))
      AND tides_index_entries(ix::regclass) = (SELECT count(*) FROM br),
    position(' ' || ix || ' ' in plan || ' ') > 0 AND position('Sort' in plan) = 0,
    by_index = by_sort;
END $$;

-- in runs, as files then through the memtables
SET maintenance_work_mem = '1MB';
SET tides.bulk_load_threshold = 0;
CREATE INDEX br_a ON br USING tides_btree (k, t, id) INCLUDE (pay);
CREATE INDEX br_b ON br USING tides_btree (t DESC, k NULLS FIRST, id);
CREATE UNIQUE INDEX br_u ON br USING tides_btree (id) INCLUDE (pay);
SELECT * FROM br_check('br_a', 'k, t, id')
UNION ALL SELECT * FROM br_check('br_b', 't DESC, k NULLS FIRST, id')
UNION ALL SELECT * FROM br_check('br_u', 'id');
SET tides.bulk_load_threshold = -1;
REINDEX TABLE br;
SELECT * FROM br_check('br_a', 'k, t, id')
UNION ALL SELECT * FROM br_check('br_b', 't DESC, k NULLS FIRST, id')
UNION ALL SELECT * FROM br_check('br_u', 'id');
RESET tides.bulk_load_threshold;

-- the same entries as a build that never leaves memory
CREATE TABLE br_entries (build text, h text);
CREATE FUNCTION br_walk(build text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  SET LOCAL enable_seqscan = off;
  SET LOCAL enable_bitmapscan = off;
  SET LOCAL enable_sort = off;
  INSERT INTO br_entries
    SELECT build, md5(string_agg(coalesce(k::text, '-') || '/' || t || '/' || id || '/' || length(pay), ','))
    FROM (SELECT k, t, id, pay FROM br ORDER BY k, t, id) s;
END $$;
SELECT br_walk('runs');
RESET maintenance_work_mem;
REINDEX INDEX br_a;
SELECT br_walk('memory');
SELECT count(DISTINCT h) = 1 AS same_entries, count(*) AS builds FROM br_entries;

-- unique builds in runs: a duplicate fails, dead versions do not count
DROP INDEX br_u;
SET maintenance_work_mem = '1MB';
UPDATE br SET id = 20000 WHERE id = 1;
CREATE UNIQUE INDEX br_dup ON br USING tides_btree (id);
UPDATE br SET id = 1 WHERE ctid = (SELECT ctid FROM br WHERE id = 20000 LIMIT 1);
CREATE UNIQUE INDEX br_dup ON br USING tides_btree (id);
SELECT * FROM br_check('br_dup', 'id');
RESET maintenance_work_mem;

DROP TABLE br, br_entries;
DROP FUNCTION br_check(text, text);
DROP FUNCTION br_walk(text);
