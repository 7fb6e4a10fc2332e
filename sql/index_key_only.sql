--
-- Key-only tides_btree entries (src/index/tidx_decode.c): an index whose
-- columns all encode exactly stores no IndexTuple; index-only scans and the
-- scan keys the intervals do not enforce read tuples formed from the key.
-- Every value must come back exactly as stored, at the edges of each type,
-- in ASC and DESC columns, with NULLs first and last.
--
SET default_table_access_method = tides;
SET client_min_messages = warning;
SET jit = off;

CREATE TABLE ko (id int, i2 int2, i4 int4, i8 int8, m money, o oid, b bool, c "char", u uuid,
                 d date, t time, ts timestamp, tz timestamptz, ba bytea, tx text COLLATE "C",
                 nm name COLLATE "C", f8 float8, n numeric);
INSERT INTO ko VALUES
 (1, -32768, -2147483648, -9223372036854775808, '-92233720368547758.08', 0, false, 'a',
  '00000000-0000-0000-0000-000000000000', '-infinity', '00:00', '-infinity', '-infinity',
  '\x', '', '', '-0', '1.00'),
 (2, 32767, 2147483647, 9223372036854775807, '92233720368547758.07', 4294967295, true, 'z',
  'ffffffff-ffff-ffff-ffff-ffffffffffff', 'infinity', '24:00', 'infinity', 'infinity',
  '\x00', 'a', 'a', '0', '1'),
 (3, -1, -1, -1, '-0.01', 2147483648, true, '', '01234567-89ab-cdef-0123-456789abcdef',
  '4713-01-01 BC', '12:34:56.789012', '4713-01-01 00:00 BC', '4713-01-01 00:00+00 BC',
  '\x0000ff01', 'ä€𝄞', repeat('n', 63), 'NaN', '1.0'),
 (4, 0, 0, 0, '0', 1, false, E'\x7f', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
  '5874897-12-31', '23:59:59.999999', '294276-12-31 23:59:59.999999',
  '294276-12-31 23:59:59.999999+00', '\xff00', E'tab\there', E'\x01', '1e308', '-1.5'),
 (5, 1, 1, 1, '0.01', 2147483647, NULL, NULL, NULL, '2000-01-01', '00:00:00.000001',
  '2000-01-01 00:00', '2000-01-01 00:00+00', '\x01', 'a b', 'b', NULL, NULL),
 (6, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL);
INSERT INTO ko SELECT g, g % 300 - 150, g * 7919 - 50000, g::int8 * 1000000007, g * 1.25, g * 3,
                      g % 2 = 0, chr(65 + g % 26), md5(g::text)::uuid, '2020-01-01'::date + g,
                      '00:00'::time + g * interval '17 seconds', '2020-01-01'::timestamp + g * interval '1 min',
                      '2020-01-01+00'::timestamptz + g * interval '1 h', decode(md5(g::text), 'hex'),
                      'k' || g, 'n' || (g % 100), g / 7.0, g / 4.0
FROM generate_series(7, 2000) g;

CREATE TABLE ko_ref AS SELECT * FROM ko;

-- one index per column, a multi-column DESC/NULLS FIRST one, and three that
-- keep storing tuples (float8 and numeric do not encode exactly; INCLUDE)
DO $$
DECLARE col text;
BEGIN
  FOREACH col IN ARRAY '{i2,i4,i8,m,o,b,c,u,d,t,ts,tz,ba,tx,nm,f8,n}'::text[] LOOP
    EXECUTE format('CREATE INDEX ko_%s ON ko USING tides_btree (%I)', col, col);
  END LOOP;
END $$;
CREATE INDEX ko_multi ON ko USING tides_btree (i4 DESC NULLS FIRST, tx DESC, ts NULLS FIRST, ba DESC NULLS LAST);
CREATE INDEX ko_incl ON ko USING tides_btree (i8) INCLUDE (tx);
VACUUM ANALYZE ko;

SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexscan = off;

-- index-only scans return what the table holds, column by column: the same
-- values, compared as text (so -0 is not 0, 1.0 not 1), and in order
CREATE FUNCTION ko_same_column(col text) RETURNS TABLE (col_name text, diff bigint, disorder bigint, plan text)
LANGUAGE plpgsql AS $$
DECLARE
  scan text := format('SELECT %I AS v FROM %%s ORDER BY %I', col, col);
  q text := format('SELECT row_number() OVER (ORDER BY v, v::text) AS rn, v::text AS v FROM (%s) s', scan);
BEGIN
  col_name := col;
  EXECUTE format('SELECT count(*) FROM (%s) a FULL JOIN (%s) b ON a.rn = b.rn WHERE a.v IS DISTINCT FROM b.v',
                 format(q, 'ko'), format(q, 'ko_ref')) INTO diff;
  EXECUTE format('SELECT count(*) FROM (SELECT v < lag(v) OVER () AS bad FROM (%s) s) x WHERE bad',
                 format(scan, 'ko')) INTO disorder;
  EXECUTE 'EXPLAIN (COSTS OFF) ' || format(scan, 'ko') INTO plan;
  RETURN NEXT;
END $$;
SELECT s.* FROM unnest('{i2,i4,i8,m,o,b,c,u,d,t,ts,tz,ba,tx,nm,f8,n}'::text[]) c, ko_same_column(c) s;

-- the edge rows, through the index, value by value (text forms are exact)
SELECT i2, i4, i8 FROM ko WHERE i8 < -1 OR i8 > 9223372036854775000 OR i8 IN (-1, 0) ORDER BY i8;
SELECT m FROM ko WHERE m < '0' OR m > '92233720368547758.00' ORDER BY m;
SELECT o FROM ko WHERE o IN (0, 1, 2147483647, 2147483648, 4294967295) ORDER BY o;
SELECT u FROM ko WHERE u < '00050000-0000-0000-0000-000000000000' OR u > 'fff00000-0000-0000-0000-000000000000' ORDER BY u;
SELECT d FROM ko WHERE d < '2000-01-02' OR d > '3000-01-01' ORDER BY d;
SELECT t FROM ko WHERE t < '00:00:01' OR t > '23:59:59' ORDER BY t;
SELECT ts FROM ko WHERE ts < '2000-01-02' OR ts > '3000-01-01' ORDER BY ts;
SELECT tz FROM ko WHERE tz < '2000-01-02+00' OR tz > '3000-01-01+00' ORDER BY tz;
SELECT encode(ba, 'hex') FROM ko WHERE length(ba) <> 16 OR ba IS NULL ORDER BY ba;
SELECT tx, length(tx) FROM ko WHERE tx NOT LIKE 'k%' ORDER BY tx;
SELECT nm, length(nm) FROM ko WHERE nm NOT LIKE 'n_%' OR length(nm) > 3 ORDER BY nm;
SELECT b, count(*) FROM ko GROUP BY b ORDER BY b;
SELECT c, ascii(c::text) FROM ko WHERE c < 'A' OR c > 'Z' ORDER BY c;

-- a multi-column index: order, NULL placement and a filter the intervals do
-- not enforce (tx and ba are checked on the formed tuple)
EXPLAIN (COSTS OFF)
SELECT i4, tx, ts, ba FROM ko WHERE i4 < 0 AND tx > 'k1' ORDER BY i4 DESC NULLS FIRST, tx DESC, ts NULLS FIRST, ba DESC NULLS LAST;
SELECT count(*) FROM (
  (SELECT i4, tx, ts, ba FROM ko WHERE i4 < 0 AND tx > 'k1' AND ba IS NOT NULL
   EXCEPT ALL SELECT i4, tx, ts, ba FROM ko_ref WHERE i4 < 0 AND tx > 'k1' AND ba IS NOT NULL)
  UNION ALL
  (SELECT i4, tx, ts, ba FROM ko_ref WHERE i4 < 0 AND tx > 'k1' AND ba IS NOT NULL
   EXCEPT ALL SELECT i4, tx, ts, ba FROM ko WHERE i4 < 0 AND tx > 'k1' AND ba IS NOT NULL)) x;
SELECT i4, tx, ts FROM ko ORDER BY i4 DESC NULLS FIRST, tx DESC, ts NULLS FIRST, ba DESC NULLS LAST LIMIT 4;
SELECT i8, tx FROM ko WHERE i8 BETWEEN -1 AND 1 ORDER BY i8;

-- updates and deletes go through the same entries
UPDATE ko SET i4 = -i4, tx = tx || '!' WHERE id % 10 = 0;
UPDATE ko_ref SET i4 = -i4, tx = tx || '!' WHERE id % 10 = 0;
DELETE FROM ko WHERE id % 7 = 0;
DELETE FROM ko_ref WHERE id % 7 = 0;
SELECT s.* FROM unnest('{i4,tx}'::text[]) c, ko_same_column(c) s;

-- entries of an index that repeats its columns in a value are larger: after
-- a flush, the int8 index (key-only) takes less than the float8 index of the
-- same 8-byte keys (not key-only) ...
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexscan;
CREATE TABLE ko_sz (k int8, f float8);
INSERT INTO ko_sz SELECT g, g FROM generate_series(1, 20000) g;
CREATE INDEX ko_sz_k ON ko_sz USING tides_btree (k);
CREATE INDEX ko_sz_f ON ko_sz USING tides_btree (f);
SELECT tides_flush();
SELECT tides_relation_size('ko_sz_k') < 0.8 * tides_relation_size('ko_sz_f') AS key_only_smaller;

-- ... and the indexes agree with their table
SELECT i.indexrelid::regclass AS index, v.problem
FROM pg_index i, tides_verify_index(i.indexrelid) v
WHERE i.indrelid IN ('ko'::regclass, 'ko_sz'::regclass);

DROP TABLE ko, ko_ref, ko_sz;
DROP FUNCTION ko_same_column(text);
