--
-- tides_btree scans: every query runs through the index (sequential scans
-- off) and is compared with the same query over a table without indexes.
--
SET default_table_access_method = tides;
SET client_min_messages = warning;
-- the reference table is read with sequential scans "disabled": no JIT for that
SET jit = off;

CREATE TABLE ref (a int, b text, c float8, d numeric, e timestamptz, f int8);
INSERT INTO ref
SELECT CASE WHEN g % 97 = 0 THEN NULL ELSE g % 500 END,
       CASE WHEN g % 89 = 0 THEN NULL ELSE 'k' || (g % 300) END,
       CASE g % 7 WHEN 0 THEN 'NaN' WHEN 1 THEN '-0' WHEN 2 THEN 'Infinity' ELSE g / 3.0 END,
       round((g % 50)::numeric / 4, (g % 3)),
       '2020-01-01 00:00+00'::timestamptz + g * interval '1 hour',
       g::int8 * 1000000007
FROM generate_series(1, 3000) g;
CREATE TABLE t AS SELECT * FROM ref;
CREATE INDEX t_a ON t USING tides_btree (a);
CREATE INDEX t_b ON t USING tides_btree (b COLLATE "C");
CREATE INDEX t_c ON t USING tides_btree (c);
CREATE INDEX t_d ON t USING tides_btree (d);
CREATE INDEX t_e ON t USING tides_btree (e);
CREATE INDEX t_f ON t USING tides_btree (f);
CREATE INDEX t_ab ON t USING tides_btree (a DESC NULLS LAST, b NULLS FIRST) INCLUDE (c);
VACUUM ANALYZE t;
SELECT count(*) FROM tides_verify_index('t_a') UNION ALL SELECT count(*) FROM tides_verify_index('t_ab');

SET enable_seqscan = off;
SET enable_bitmapscan = off;

-- the index is used
EXPLAIN (COSTS OFF) SELECT * FROM t WHERE a = 5;
EXPLAIN (COSTS OFF) SELECT a FROM t WHERE a BETWEEN 5 AND 7 ORDER BY a DESC;
EXPLAIN (COSTS OFF) SELECT * FROM t ORDER BY a DESC NULLS LAST, b NULLS FIRST LIMIT 3;
EXPLAIN (COSTS OFF) SELECT * FROM t WHERE a = ANY ('{1,2,3}');

-- compare with the table without indexes; each query must return 0 rows
CREATE FUNCTION check_same(q text) RETURNS TABLE (query text, diff bigint)
LANGUAGE plpgsql AS $$
DECLARE
    n1 bigint;
    n2 bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x', q, replace(q, ' t ', ' ref ')) INTO n1;
    EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x', replace(q, ' t ', ' ref '), q) INTO n2;
    RETURN QUERY SELECT q, n1 + n2;
END
$$;

SELECT * FROM check_same('SELECT * FROM t WHERE a = 5')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE a IS NULL')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE a IS NOT NULL AND a < 3')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE a > 495')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE a >= 10 AND a < 12')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE a > 10 AND a <= 12 AND a <> 11')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE a = ANY (''{3,1,2,2,NULL,700}'')')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE a = ANY (''{}'')')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE a < ANY (''{3,1}'')')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE a > ALL (''{490,495}'')')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE a = 5::int8')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE a < 5000000000::int8')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE a > -5000000000::int8 AND a < 3::int2')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE a = ANY (''{1,5000000000}''::int8[])')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE a = 5 AND b = ''k5''')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE b COLLATE "C" >= ''k29'' AND b COLLATE "C" < ''k3''')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE b COLLATE "C" = ANY (''{k1,k10,k100,zz}'')')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE c = ''NaN''')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE c = 0')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE c > 900')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE c < 0.5::float4')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE d = 2.5')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE d = 2.50000')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE d BETWEEN 1 AND 1.5')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE e >= ''2020-02-01''::date AND e < ''2020-02-02''::date')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE e < ''2020-01-02 05:00''::timestamp')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE f > 2999000000000 ')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE f = 1000000007::int4 ');

-- ordered scans in both directions, with DESC / NULLS columns
SELECT a, b FROM t WHERE a BETWEEN 3 AND 4 ORDER BY a DESC NULLS LAST, b NULLS FIRST LIMIT 8;
SELECT a, b FROM t WHERE a BETWEEN 3 AND 4 ORDER BY a NULLS FIRST, b DESC NULLS LAST LIMIT 8;
SELECT a FROM t ORDER BY a LIMIT 3;
SELECT a FROM t ORDER BY a DESC LIMIT 3;
SELECT a FROM t ORDER BY a NULLS FIRST LIMIT 3;
SELECT count(*) FROM (SELECT a, lag(a) OVER () AS p FROM (SELECT a FROM t ORDER BY a) s) x WHERE p > a;
SELECT count(*) FROM (SELECT c, lag(c) OVER () AS p FROM (SELECT c FROM t ORDER BY c DESC) s) x WHERE p < c;
SELECT c FROM t ORDER BY c DESC LIMIT 2;
SELECT DISTINCT c FROM t WHERE c <= 0 ORDER BY c;

-- index-only scan of an INCLUDE column
EXPLAIN (COSTS OFF) SELECT a, b, c FROM t WHERE a = 7 ORDER BY a DESC, b;
SELECT a, b, c FROM t WHERE a = 7 ORDER BY a DESC, b LIMIT 3;

-- cursors: backward, change of direction, past the ends
BEGIN;
DECLARE cur SCROLL CURSOR FOR SELECT a FROM t WHERE a BETWEEN 10 AND 11 ORDER BY a;
FETCH 2 FROM cur;
FETCH BACKWARD 1 FROM cur;
FETCH LAST FROM cur;
FETCH FORWARD 1 FROM cur;
FETCH BACKWARD 2 FROM cur;
FETCH FIRST FROM cur;
FETCH BACKWARD 1 FROM cur;
FETCH FORWARD 1 FROM cur;
COMMIT;

-- merge join with mark/restore over duplicate keys
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_material = off;
CREATE TABLE u (a int);
INSERT INTO u SELECT g % 20 FROM generate_series(1, 60) g;
CREATE INDEX u_a ON u USING tides_btree (a);
VACUUM ANALYZE u;
EXPLAIN (COSTS OFF) SELECT count(*) FROM t JOIN u ON t.a = u.a;
SELECT count(*) FROM t JOIN u ON t.a = u.a;
SELECT count(*) FROM ref JOIN (SELECT * FROM u) u2 ON ref.a = u2.a;
RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_material;

-- bitmap scans
SET enable_indexscan = off;
SET enable_bitmapscan = on;
EXPLAIN (COSTS OFF) SELECT count(*) FROM t WHERE a < 10 OR b COLLATE "C" = 'k7';
SELECT count(*) FROM t WHERE a < 10 OR b COLLATE "C" = 'k7';
SELECT count(*) FROM ref WHERE a < 10 OR b = 'k7';
RESET enable_indexscan;

-- deleted and updated rows
DELETE FROM t WHERE a < 100;
UPDATE t SET a = a + 1000 WHERE a BETWEEN 200 AND 210;
DELETE FROM ref WHERE a < 100;
UPDATE ref SET a = a + 1000 WHERE a BETWEEN 200 AND 210;
SELECT * FROM check_same('SELECT * FROM t WHERE a < 300')
UNION ALL SELECT * FROM check_same('SELECT * FROM t WHERE a > 1000');
SELECT count(*) FROM tides_verify_index('t_a');
VACUUM t;
SELECT * FROM check_same('SELECT * FROM t WHERE a < 300');
SELECT count(*) FROM tides_verify_index('t_a');

-- collations: an index per collation orders as the collation does
CREATE TABLE s (x text);
INSERT INTO s VALUES ('a'), ('B'), ('b'), ('A'), ('ä'), ('Z'), ('z'), (''), (' '), ('a b'), ('ab');
CREATE INDEX s_c ON s USING tides_btree (x COLLATE "C");
CREATE INDEX s_de ON s USING tides_btree (x COLLATE "de-x-icu");
CREATE INDEX s_icu ON s USING tides_btree (x COLLATE "sv-x-icu");
CREATE INDEX s_pat ON s USING tides_btree (x text_pattern_ops);
SELECT string_agg(x, '|' ORDER BY x COLLATE "C") FROM s;
SELECT string_agg(x, '|') FROM (SELECT x FROM s ORDER BY x COLLATE "C") q;
SELECT string_agg(x, '|') FROM (SELECT x FROM s ORDER BY x COLLATE "de-x-icu") q;
SELECT string_agg(x, '|') FROM (SELECT x FROM s ORDER BY x COLLATE "sv-x-icu") q;
SELECT string_agg(x, '|') FROM (SELECT x FROM s WHERE x COLLATE "sv-x-icu" > 'a' ORDER BY x COLLATE "sv-x-icu") q;
EXPLAIN (COSTS OFF) SELECT x FROM s WHERE x LIKE 'a%';
SELECT x FROM s WHERE x LIKE 'a%' ORDER BY x COLLATE "C";

-- expression and partial indexes
CREATE INDEX t_lower ON t USING tides_btree (lower(b)) WHERE a > 400;
EXPLAIN (COSTS OFF) SELECT a, b FROM t WHERE lower(b) = 'k450' AND a > 400;
SELECT a, b FROM t WHERE lower(b) = 'k150' AND a > 400 ORDER BY a;
SELECT count(*) FROM tides_verify_index('t_lower');

-- multi-column: equality prefix, = ANY on two columns, range on the second
CREATE TABLE m (x int, y int, z text);
INSERT INTO m SELECT g % 10, g % 7, g::text FROM generate_series(1, 700) g;
CREATE INDEX m_xy ON m USING tides_btree (x, y DESC);
VACUUM ANALYZE m;
SELECT x, y, count(*) FROM m WHERE x = ANY ('{2,4}') AND y = ANY ('{1,6,9}') GROUP BY 1, 2 ORDER BY 1, 2;
SELECT x, y FROM m WHERE x = 3 AND y > 4 ORDER BY x, y DESC LIMIT 4;
SELECT x, y FROM m WHERE x = 3 AND y > 4 ORDER BY x DESC, y LIMIT 4;
SELECT x, y FROM m WHERE (x, y) > (8, 5) ORDER BY x, y DESC LIMIT 4;
SELECT count(*) FROM m WHERE y = 3;

-- a long scan trades its engine iterator for a fresh one (after 200 ms,
-- looked at every 256 entries) and goes on after the entry it was on; rows
-- deleted, inserted and moved meanwhile (by later commands, which the
-- cursor's snapshot does not see) change nothing it returns
CREATE TABLE lr (a int, b text);
INSERT INTO lr SELECT g, md5(g::text) FROM generate_series(1, 20000) g;
CREATE INDEX lr_a ON lr USING tides_btree (a);
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT a FROM lr WHERE a > 0 ORDER BY a;
MOVE 1000 IN c;
SELECT pg_sleep(0.3);
DELETE FROM lr WHERE a BETWEEN 1001 AND 1500;
INSERT INTO lr SELECT g, 'new' FROM generate_series(20001, 21000) g;
UPDATE lr SET a = a + 100000 WHERE a BETWEEN 1600 AND 1700;
MOVE 300 IN c;
FETCH 2 FROM c;
SELECT pg_sleep(0.3);
MOVE 400 IN c;
FETCH BACKWARD 2 FROM c;
SELECT pg_sleep(0.3);
MOVE FORWARD ALL IN c;
FETCH BACKWARD 1 FROM c;
COMMIT;
SELECT count(*), min(a), max(a) FROM lr WHERE a > 0;
SELECT count(*) FROM tides_verify_index('lr_a');

RESET enable_seqscan;
RESET enable_bitmapscan;
DROP TABLE t, ref, u, s, m, lr;
DROP FUNCTION check_same(text);
