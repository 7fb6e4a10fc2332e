--
-- index_build_sortkey: a tides_btree build sorts its entries first by an
-- 8-byte prefix, the start of a packed form of their leading fixed-width
-- columns (src/index/tidx_sortkey.c), and stops with an error if a key it
-- writes does not ascend: a prefix that orders two keys against their
-- order fails here.  Edge values of each such kind
-- (the bytes that are packed away: 0, -1, +-255, +-256, the extremes), both
-- null orders and both directions, a text column after them and an index
-- whose first column is not packed, each built as files and through the
-- memtables: every entry must equal its row (tides_verify_index) and a walk
-- of each index must return the rows in the order a sort gives.  Dates and
-- timestamps are packed as distances from the build's transaction start:
-- the second table holds values at, just before and just after it (and at
-- the byte boundaries of the distance), built in that same transaction.
--
SET default_table_access_method = tides;
SET client_min_messages = warning;
SELECT setseed(0.25);

CREATE TABLE sk (id int, i2 int2, i4 int4, i8 int8, o oid, d date, tm time,
                 ts timestamp, tz timestamptz, m money, t text COLLATE "C");
CREATE FUNCTION sk_pick(anyarray) RETURNS anyelement LANGUAGE sql VOLATILE
  AS $$ SELECT $1[1 + floor(random() * array_length($1, 1))::int] $$;
INSERT INTO sk
SELECT g,
       CASE WHEN random() < 0.6 THEN sk_pick('{-32768,-32767,-257,-256,-255,-1,0,1,127,128,255,256,32767,NULL}'::int2[])
            ELSE (floor(random() * 65536) - 32768)::int2 END,
       CASE WHEN random() < 0.6 THEN sk_pick('{-2147483648,-16777216,-65537,-65536,-256,-255,-1,0,1,255,256,65535,65536,16777216,2147483647,NULL}'::int4[])
            ELSE (floor(random() * 4294967296) - 2147483648)::int4 END,
       CASE WHEN random() < 0.6 THEN sk_pick('{-9223372036854775808,-4294967296,-256,-1,0,1,255,256,4294967296,9223372036854775807,NULL}'::int8[])
            ELSE (floor(random() * 1e15) - 5e14)::int8 END,
       sk_pick('{0,1,255,256,65536,4294967295,NULL}'::oid[]),
       sk_pick(ARRAY['-infinity', '4713-01-01 BC', '1999-12-31', '2000-01-01', '2000-01-02', '2026-12-03', 'infinity', NULL]::date[]),
       sk_pick(ARRAY['00:00', '00:00:00.000001', '12:00', '23:59:59.999999', '24:00', NULL]::time[]),
       CASE WHEN random() < 0.5 THEN sk_pick(ARRAY['-infinity', '2000-01-01 00:00', '1999-12-31 23:59:59.999999', 'infinity', NULL]::timestamp[])
            ELSE timestamp '2026-12-03 06:00' + random() * interval '40 seconds' END,
       sk_pick(ARRAY['-infinity', '2000-01-01 00:00+00', '1970-01-01 00:00+00', '2026-12-03 09:00+00', 'infinity', NULL]::timestamptz[]),
       sk_pick(ARRAY[-92233720368547758.08, -1, 0, 0.01, 2.56, 92233720368547758.07, NULL]::numeric[])::money,
       sk_pick(ARRAY['', 'a', 'b', 'ab', NULL]::text[])
FROM generate_series(1, 3000) g;

CREATE FUNCTION rows_of(tbl text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM %I', tbl) INTO n;
  RETURN n;
END $$;

CREATE FUNCTION sk_check(ix text, cols text, tbl text DEFAULT 'sk')
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
  FOR line IN EXECUTE format('EXPLAIN (COSTS OFF) SELECT id FROM %I ORDER BY %s', tbl, cols) LOOP
    plan := plan || line;
  END LOOP;
  EXECUTE format('SELECT md5(string_agg(id::text, '','')) FROM (SELECT id FROM %I ORDER BY %s) s', tbl, cols) INTO by_index;
  SET LOCAL enable_indexscan = off;
  SET LOCAL enable_indexonlyscan = off;
  SET LOCAL enable_seqscan = on;
  SET LOCAL enable_sort = on;
  EXECUTE format('SELECT md5(string_agg(id::text, '','')) FROM (SELECT id FROM %I ORDER BY %s) s', tbl, cols) INTO by_sort;
  RETURN QUERY SELECT ix,
    (SELECT count(*) = 0 FROM tides_verify_index(ix::regclass))
      AND tides_index_entries(ix::regclass) = rows_of(tbl),
    position(' ' || ix || ' ' in plan || ' ') > 0 AND position('Sort' in plan) = 0,
    by_index = by_sort;
END $$;

-- each index as files, then through the memtables
SET tides.bulk_load_threshold = 0;
CREATE INDEX sk_a ON sk USING tides_btree (i2, i4, i8, id);
CREATE INDEX sk_b ON sk USING tides_btree (i4 DESC NULLS LAST, d NULLS FIRST, t, id);
CREATE INDEX sk_c ON sk USING tides_btree (ts, tz DESC, tm, m, o DESC NULLS LAST, id);
CREATE INDEX sk_d ON sk USING tides_btree (t, i8 DESC, id);
SELECT * FROM sk_check('sk_a', 'i2, i4, i8, id')
UNION ALL SELECT * FROM sk_check('sk_b', 'i4 DESC NULLS LAST, d NULLS FIRST, t, id')
UNION ALL SELECT * FROM sk_check('sk_c', 'ts, tz DESC, tm, m, o DESC NULLS LAST, id')
UNION ALL SELECT * FROM sk_check('sk_d', 't, i8 DESC, id');
SET tides.bulk_load_threshold = -1;
REINDEX TABLE sk;
SELECT * FROM sk_check('sk_a', 'i2, i4, i8, id')
UNION ALL SELECT * FROM sk_check('sk_b', 'i4 DESC NULLS LAST, d NULLS FIRST, t, id')
UNION ALL SELECT * FROM sk_check('sk_c', 'ts, tz DESC, tm, m, o DESC NULLS LAST, id')
UNION ALL SELECT * FROM sk_check('sk_d', 't, i8 DESC, id');
RESET tides.bulk_load_threshold;
DROP TABLE sk;

-- around the origin: now() is the build's transaction start
BEGIN;
CREATE TABLE sk (id int, ts timestamp, tz timestamptz, d date);
INSERT INTO sk
SELECT g,
       localtimestamp + sk_pick('{0,1,-1,255,-255,256,-256,-257,65535,-65536,16777216,-16777217,4294967296,-4294967297,NULL}'::int8[]) * interval '1 microsecond'
                      + (CASE WHEN random() < 0.3 THEN (random() - 0.5) * 7200 ELSE 0 END) * interval '1 second',
       CASE WHEN random() < 0.1 THEN sk_pick(ARRAY['-infinity', 'infinity', NULL]::timestamptz[])
            ELSE now() + sk_pick('{0,1,-1,255,-256,65536,-65537,NULL}'::int8[]) * interval '1 microsecond'
                       + (CASE WHEN random() < 0.3 THEN (random() - 0.5) * 1e6 ELSE 0 END) * interval '1 second' END,
       CASE WHEN random() < 0.1 THEN sk_pick(ARRAY['-infinity', 'infinity', NULL]::date[])
            ELSE current_date + sk_pick('{0,1,-1,255,-256,65536,-65537,NULL}'::int[]) END
FROM generate_series(1, 3000) g;
SET LOCAL tides.bulk_load_threshold = 0;
CREATE INDEX sk_e ON sk USING tides_btree (ts, id);
CREATE INDEX sk_f ON sk USING tides_btree (tz DESC, id);
SET LOCAL tides.bulk_load_threshold = -1;
CREATE INDEX sk_g ON sk USING tides_btree (d NULLS FIRST, ts DESC, id);
CREATE INDEX sk_h ON sk USING tides_btree (d DESC NULLS LAST, tz, id);
COMMIT;
SELECT * FROM sk_check('sk_e', 'ts, id')
UNION ALL SELECT * FROM sk_check('sk_f', 'tz DESC, id')
UNION ALL SELECT * FROM sk_check('sk_g', 'd NULLS FIRST, ts DESC, id')
UNION ALL SELECT * FROM sk_check('sk_h', 'd DESC NULLS LAST, tz, id');
DROP TABLE sk;

-- The sort in runs (src/index/tidx_sort.c): what does not fit in
-- maintenance_work_mem goes to temporary files as sorted runs, merged at
-- the end with the entries still in memory.  At 1 MB these builds write two
-- to seven runs each (trace_sort logs them); entries whose first 8 bytes
-- are equal (a text column with a long common start after a column of
-- three values) are ordered by the rest, entries of very different lengths
-- (an INCLUDE column of 0-600 bytes) travel through the runs whole; the
-- same index built in memory holds the same entries; a unique build finds
-- its duplicate and ignores dead versions.
SELECT setseed(0.5);
CREATE TABLE br (id int, k int, t text COLLATE "C", pay text);
INSERT INTO br
SELECT g,
       CASE WHEN random() < 0.05 THEN NULL ELSE floor(random() * 3)::int END,
       'a common start of the key, ' || CASE WHEN random() < 0.1 THEN '' ELSE md5(random()::text) END,
       repeat('x', floor(random() * 600)::int)
FROM generate_series(1, 20000) g;

-- in runs, as files then through the memtables
SET maintenance_work_mem = '1MB';
SET tides.bulk_load_threshold = 0;
CREATE INDEX br_a ON br USING tides_btree (k, t, id) INCLUDE (pay);
CREATE INDEX br_b ON br USING tides_btree (t DESC, k NULLS FIRST, id);
CREATE UNIQUE INDEX br_u ON br USING tides_btree (id) INCLUDE (pay);
SELECT * FROM sk_check('br_a', 'k, t, id', 'br')
UNION ALL SELECT * FROM sk_check('br_b', 't DESC, k NULLS FIRST, id', 'br')
UNION ALL SELECT * FROM sk_check('br_u', 'id', 'br');
SET tides.bulk_load_threshold = -1;
REINDEX TABLE br;
SELECT * FROM sk_check('br_a', 'k, t, id', 'br')
UNION ALL SELECT * FROM sk_check('br_b', 't DESC, k NULLS FIRST, id', 'br')
UNION ALL SELECT * FROM sk_check('br_u', 'id', 'br');
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
SELECT * FROM sk_check('br_dup', 'id', 'br');
RESET maintenance_work_mem;

DROP TABLE br, br_entries;
DROP FUNCTION br_walk(text);
DROP FUNCTION sk_check(text, text, text);
DROP FUNCTION rows_of(text);
DROP FUNCTION sk_pick(anyarray);
