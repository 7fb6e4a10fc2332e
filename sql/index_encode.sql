--
-- tides_btree key encodings: for every supported type (and collation),
-- sorting random and edge values by the type's b-tree comparator and by
-- memcmp of tides_index_encode() must agree, and two values must encode
-- equally exactly when the comparator says they are equal.
--
-- Values are sorted by (x, encoding); then for each adjacent pair
--   x_prev = x  =>  enc_prev = enc     and     x_prev < x  =>  enc_prev < enc.
-- (bytea's "<" is memcmp, then length; encodings are self-delimiting, so
-- that is memcmp order.)  Every row below must show bad = 0.
--
-- test/index/encode_property.sh runs this file with more values and random
-- seeds (psql variables n and seed).
--
\if :{?n}
\else
\set n 400
\endif
\if :{?seed}
\else
\set seed 0.42
\endif
SET client_min_messages = warning;
SELECT setseed(:seed);
CREATE TEMP TABLE params AS SELECT :n AS n;

CREATE TYPE pg_temp.mood AS ENUM ('sad', 'ok', 'happy');
-- fractional sort orders
ALTER TYPE pg_temp.mood ADD VALUE 'meh' BEFORE 'ok';
ALTER TYPE pg_temp.mood ADD VALUE 'glad' AFTER 'ok';
ALTER TYPE pg_temp.mood ADD VALUE 'blah' BEFORE 'meh';
ALTER TYPE pg_temp.mood ADD VALUE 'zen';

CREATE FUNCTION pg_temp.check_enc(label text, q text, coll text DEFAULT NULL,
                                  opclass text DEFAULT NULL, lt text DEFAULT '<')
RETURNS TABLE (what text, bad bigint, example text)
LANGUAGE plpgsql AS $$
DECLARE
    c text := CASE WHEN coll IS NULL THEN '' ELSE format(' COLLATE %I', coll) END;
    ord text := CASE WHEN lt = '<' THEN '' ELSE format(' USING %s', lt) END;
BEGIN
    RETURN QUERY EXECUTE format($f$
        WITH v AS (SELECT x%1$s AS x, tides_index_encode(x%1$s, %2$L) AS e
                   FROM (%3$s) s WHERE x IS NOT NULL),
             o AS (SELECT x, e, lag(x) OVER w AS px, lag(e) OVER w AS pe
                   FROM v WINDOW w AS (ORDER BY x%4$s, e)),
             b AS (SELECT * FROM o
                   WHERE px IS NOT NULL
                     AND NOT ((px = x AND pe = e) OR (px %5$s x AND pe < e)))
        SELECT %6$L::text, (SELECT count(*) FROM b),
               (SELECT string_agg(format('%%s %%s / %%s %%s', px, pe, x, e), '; ')
                FROM (SELECT * FROM b LIMIT 3) b3)
        $f$, c, opclass, q, ord, lt, label);
END
$$;

-- random strings: mixed case, accents, punctuation, spaces, digits, ties
CREATE FUNCTION pg_temp.rstr(maxlen int) RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(substr('aAbBcC zZ-_.,1029éÉèäÄöÖåÅßæøœçñ ıİ''"~!@ ', (random() * 43)::int + 1, 1), '')
    FROM generate_series(1, (random() * maxlen)::int)
$$;

CREATE TEMP TABLE strs AS
    SELECT pg_temp.rstr(CASE WHEN g % 50 = 0 THEN 300 ELSE 8 END) AS x
    FROM generate_series(1, (SELECT n FROM params)) g
    UNION ALL SELECT unnest(ARRAY['', ' ', 'a', 'a ', 'A', 'ab', 'a b', 'äb', 'ab ', 'Ab',
                                   'z', 'Z', 'ß', 'ss', 'SS', 'æ', 'ae', 'å', 'aa', 'ı', 'i', 'I', 'İ',
                                   repeat('x', 2000), repeat('x', 2000) || 'y', NULL]);

SELECT * FROM (
    SELECT * FROM pg_temp.check_enc('int2', $$SELECT (random() * 65535 - 32768)::int2 AS x FROM generate_series(1, (SELECT n FROM params))
        UNION ALL SELECT unnest('{-32768,32767,0,-1,1}'::int2[])$$)
    UNION ALL SELECT * FROM pg_temp.check_enc('int4', $$SELECT (random() * 4294967295 - 2147483648)::int4 AS x FROM generate_series(1, (SELECT n FROM params))
        UNION ALL SELECT unnest('{-2147483648,2147483647,0,-1,1}'::int4[])$$)
    UNION ALL SELECT * FROM pg_temp.check_enc('int8', $$SELECT ((random() - 0.5) * 1.8e19)::int8 AS x FROM generate_series(1, (SELECT n FROM params))
        UNION ALL SELECT unnest('{-9223372036854775808,9223372036854775807,0,-1,1}'::int8[])$$)
    UNION ALL SELECT * FROM pg_temp.check_enc('oid', $$SELECT (random() * 4294967295)::int8::oid AS x FROM generate_series(1, (SELECT n FROM params))
        UNION ALL SELECT unnest('{0,1,2147483647,2147483648,4294967295}'::oid[])$$)
    UNION ALL SELECT * FROM pg_temp.check_enc('money', $$SELECT ((random() - 0.5) * 1e6)::numeric::money AS x FROM generate_series(1, (SELECT n FROM params))
        UNION ALL SELECT unnest('{0,-0.01,0.01}'::money[])$$)
    UNION ALL SELECT * FROM pg_temp.check_enc('float4', $$SELECT ((random() - 0.5) * 10 ^ (random() * 60 - 30))::float4 AS x FROM generate_series(1, (SELECT n FROM params))
        UNION ALL SELECT unnest('{NaN,Infinity,-Infinity,0,-0,1e-45,-1e-45,3.4028235e38,-3.4028235e38,1,-1}'::float4[])
        UNION ALL SELECT 'NaN'::float4 UNION ALL SELECT '-NaN'::float8::float4$$)
    UNION ALL SELECT * FROM pg_temp.check_enc('float8', $$SELECT ((random() - 0.5) * 10 ^ (random() * 600 - 300))::float8 AS x FROM generate_series(1, (SELECT n FROM params))
        UNION ALL SELECT unnest('{NaN,Infinity,-Infinity,0,-0,5e-324,-5e-324,1.7976931348623157e308,-1.7976931348623157e308,1,-1}'::float8[])
        UNION ALL SELECT '-NaN'::float8 UNION ALL SELECT 'NaN'::float8$$)
    UNION ALL SELECT * FROM pg_temp.check_enc('numeric', $$SELECT round(((random() - 0.5) * 10 ^ (random() * 40 - 20))::numeric, (random() * 30)::int) AS x FROM generate_series(1, (SELECT n FROM params))
        UNION ALL SELECT (x::text || repeat('0', (random() * 5)::int))::numeric FROM (SELECT round((random() * 100)::numeric, 2) x FROM generate_series(1, (SELECT n FROM params) / 4)) s
        UNION ALL SELECT unnest('{NaN,Infinity,-Infinity,0,0.0,-0.000,1,1.0,1.00000,-1,-1.0,10000,100000000,0.0001,0.00010000,
                                  1e-100,-1e-100,1e100,-1e100,9999.9999,10000.0001,123456789.000000001,0.1,0.10,99999999999999999999}'::numeric[])$$)
    UNION ALL SELECT * FROM pg_temp.check_enc('bool', $$SELECT random() < 0.5 AS x FROM generate_series(1, 20)$$)
    UNION ALL SELECT * FROM pg_temp.check_enc('"char"', $$SELECT chr((random() * 126)::int + 1)::"char" AS x FROM generate_series(1, (SELECT n FROM params))$$)
    UNION ALL SELECT * FROM pg_temp.check_enc('bytea', $$SELECT decode(substr(md5(random()::text) || md5(random()::text), 1, (random() * 20)::int * 2), 'hex') AS x FROM generate_series(1, (SELECT n FROM params))
        UNION ALL SELECT unnest('{"\\x","\\x00","\\x0000","\\x0001","\\x00ff","\\x01","\\xff","\\xff00","\\xffff"}'::bytea[])$$)
    UNION ALL SELECT * FROM pg_temp.check_enc('uuid', $$SELECT md5(random()::text)::uuid AS x FROM generate_series(1, (SELECT n FROM params))
        UNION ALL SELECT unnest('{00000000-0000-0000-0000-000000000000,ffffffff-ffff-ffff-ffff-ffffffffffff,80000000-0000-0000-0000-000000000000}'::uuid[])$$)
    UNION ALL SELECT * FROM pg_temp.check_enc('date', $$SELECT ('2000-01-01'::date + ((random() - 0.5) * 2e6)::int) AS x FROM generate_series(1, (SELECT n FROM params))
        UNION ALL SELECT unnest('{infinity,-infinity,4713-01-01 BC,2000-01-01,1999-12-31}'::date[])$$)
    UNION ALL SELECT * FROM pg_temp.check_enc('time', $$SELECT ('00:00'::time + random() * interval '24 hours') AS x FROM generate_series(1, (SELECT n FROM params))
        UNION ALL SELECT unnest('{00:00,24:00,23:59:59.999999,12:00}'::time[])$$)
    UNION ALL SELECT * FROM pg_temp.check_enc('timetz', $$SELECT (('00:00'::time + random() * interval '24 hours')::text || to_char((random() * 28 - 14)::int, 'S00'))::timetz AS x FROM generate_series(1, (SELECT n FROM params))
        UNION ALL SELECT unnest('{12:00+05,07:00+00,07:00-00,17:00+10,00:00+15:59,24:00-15:59,12:00+00}'::timetz[])$$)
    UNION ALL SELECT * FROM pg_temp.check_enc('timestamp', $$SELECT ('2000-01-01'::timestamp + (random() - 0.5) * interval '200000 days') AS x FROM generate_series(1, (SELECT n FROM params))
        UNION ALL SELECT unnest('{infinity,-infinity,4713-01-01 00:00 BC,294276-12-31 23:59:59,2000-01-01}'::timestamp[])$$)
    UNION ALL SELECT * FROM pg_temp.check_enc('timestamptz', $$SELECT ('2000-01-01'::timestamptz + (random() - 0.5) * interval '200000 days') AS x FROM generate_series(1, (SELECT n FROM params))
        UNION ALL SELECT unnest('{infinity,-infinity,2000-01-01 00:00+00,2000-01-01 05:00+05}'::timestamptz[])$$)
    UNION ALL SELECT * FROM pg_temp.check_enc('interval', $$SELECT make_interval(months => (random() * 40 - 20)::int, days => (random() * 100 - 50)::int,
                                                                     secs => (random() - 0.5) * 1e7) AS x FROM generate_series(1, (SELECT n FROM params))
        UNION ALL SELECT unnest('{1 month,30 days,720 hours,1 day,24 hours,-1 month,-30 days,0,1 year,360 days,
                                  178000000 years,-178000000 years,1 mon -30 days}'::interval[])$$)
    UNION ALL SELECT * FROM pg_temp.check_enc('enum', $$SELECT (enum_range(NULL::pg_temp.mood))[(random() * 7)::int + 1] AS x FROM generate_series(1, 50)$$)
    UNION ALL SELECT * FROM pg_temp.check_enc('text C', 'SELECT x FROM strs', 'C')
    UNION ALL SELECT * FROM pg_temp.check_enc('text POSIX', 'SELECT x FROM strs', 'POSIX')
    UNION ALL SELECT * FROM pg_temp.check_enc('text und-x-icu', 'SELECT x FROM strs', 'und-x-icu')
    UNION ALL SELECT * FROM pg_temp.check_enc('text en-x-icu', 'SELECT x FROM strs', 'en-x-icu')
    UNION ALL SELECT * FROM pg_temp.check_enc('text sv-x-icu', 'SELECT x FROM strs', 'sv-x-icu')
    UNION ALL SELECT * FROM pg_temp.check_enc('text tr-x-icu', 'SELECT x FROM strs', 'tr-x-icu')
    UNION ALL SELECT * FROM pg_temp.check_enc('text de-x-icu', 'SELECT x FROM strs', 'de-x-icu')
    UNION ALL SELECT * FROM pg_temp.check_enc('text default', 'SELECT x FROM strs')
    UNION ALL SELECT * FROM pg_temp.check_enc('text C.utf8', $$SELECT x FROM strs UNION ALL SELECT unnest(ARRAY[chr(127), chr(128), chr(2047), chr(2048),
        chr(55295), chr(57344), chr(65533), chr(65535), chr(65536), chr(1114111), 'a' || chr(128512), 'a' || chr(65533), 'a' || chr(127)])$$, 'C.utf8')
    UNION ALL SELECT * FROM pg_temp.check_enc('name C', 'SELECT x::name AS x FROM strs', 'C')
    UNION ALL SELECT * FROM pg_temp.check_enc('name C.utf8', 'SELECT x::name AS x FROM strs', 'C.utf8')
    UNION ALL SELECT * FROM pg_temp.check_enc('bpchar C.utf8', 'SELECT x::char(12) AS x FROM strs', 'C.utf8')
    UNION ALL SELECT * FROM pg_temp.check_enc('name en-x-icu', 'SELECT x::name AS x FROM strs', 'en-x-icu')
    UNION ALL SELECT * FROM pg_temp.check_enc('bpchar C', 'SELECT x::char(12) AS x FROM strs', 'C')
    UNION ALL SELECT * FROM pg_temp.check_enc('bpchar sv-x-icu', 'SELECT (x || repeat('' '', (random() * 3)::int))::bpchar AS x FROM strs', 'sv-x-icu')
    UNION ALL SELECT * FROM pg_temp.check_enc('text_pattern_ops', 'SELECT x FROM strs', 'en_US', 'text_pattern_ops', '~<~')
    UNION ALL SELECT * FROM pg_temp.check_enc('bpchar_pattern_ops', 'SELECT x::char(12) AS x FROM strs', 'en_US', 'bpchar_pattern_ops', '~<~')
    UNION ALL SELECT * FROM pg_temp.check_enc('varchar sv-x-icu', 'SELECT x::varchar AS x FROM strs', 'sv-x-icu')
) r ORDER BY 1;

-- libc collations: glibc's strxfrm() does not always order as its strcoll()
-- does, so tides_btree does not index strings under them (unless
-- tides.trust_strxfrm is on).  Two such pairs under en_US:
SELECT a, b, a < b COLLATE "en_US" AS strcoll_lt,
       tides_index_encode(a COLLATE "en_US") < tides_index_encode(b COLLATE "en_US") AS strxfrm_lt
FROM (VALUES ('9ä-@'::text, '-!9.å'::text), ('!1É', ' _1-é'',')) v(a, b);
CREATE TEMP TABLE libc_t (t text COLLATE "en_US");
CREATE INDEX ON libc_t USING tides_btree (t);
CREATE INDEX ON libc_t USING tides_btree (t COLLATE "C");
CREATE INDEX ON libc_t USING tides_btree (t COLLATE "en-x-icu");
-- glibc's C.UTF-8 orders by code point, as memcmp of UTF-8 does: accepted
-- (as a database's default collation too: test/index/encode_property.sh)
CREATE INDEX ON libc_t USING tides_btree (t COLLATE "C.utf8");
CREATE COLLATION pg_temp.c_utf8_spelled (provider = libc, locale = 'C.UTF-8');
SELECT tides_index_encode('zä'::text COLLATE pg_temp.c_utf8_spelled) = tides_index_encode('zä'::text COLLATE "C") AS as_c;

-- errors that name what is not supported
SELECT tides_index_encode(ARRAY[1]);
SELECT tides_index_encode('a'::text COLLATE "C", 'int4_ops');
CREATE COLLATION pg_temp.ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT tides_index_encode('a'::text COLLATE pg_temp.ci);
