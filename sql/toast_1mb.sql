--
-- toast_1mb: 1 MB text values in a tides table (compressible and not),
-- read back by md5 and length, sliced, updated, deleted; a wide row with
-- many columns.
--
CREATE TABLE big (id int PRIMARY KEY, n int, t text) USING tides;
-- compressible
INSERT INTO big VALUES (1, 0, repeat('x', 1024 * 1024));
-- hardly compressible: 32768 md5 strings of 32 characters
INSERT INTO big SELECT 2, 0, string_agg(md5(g::text), '' ORDER BY g) FROM generate_series(1, 32768) g;
-- stored uncompressed
CREATE TABLE big_plain (id int, t text) USING tides;
ALTER TABLE big_plain ALTER COLUMN t SET STORAGE EXTERNAL;
INSERT INTO big_plain SELECT 3, repeat('abcdefghij', 104858);
SELECT id, length(t), md5(t) FROM big ORDER BY id;
SELECT id, length(t), md5(t) FROM big_plain;
-- slices
SELECT id, substr(t, 500000, 20), substr(t, 1048557, 100) FROM big ORDER BY id;
SELECT substr(t, 1000001, 15) FROM big_plain;
-- the same value read back through the index and through the engine's files
SELECT tides_flush();
SET enable_seqscan = off;
SELECT id, length(t), md5(t) FROM big WHERE id = 2;
RESET enable_seqscan;

-- updates: of the big value, and of another column only
UPDATE big SET t = t || 'y' WHERE id = 1;
UPDATE big SET t = upper(t) WHERE id = 2;
UPDATE big SET n = n + 1;
UPDATE big_plain SET t = reverse(t);
SELECT id, n, length(t), md5(t) FROM big ORDER BY id;
SELECT id, length(t), md5(t) FROM big_plain;
-- an update rolled back leaves the old value
BEGIN;
UPDATE big SET t = 'small' WHERE id = 1;
SELECT id, length(t) FROM big WHERE id = 1;
ROLLBACK;
SELECT id, length(t), md5(t) FROM big WHERE id = 1;
-- many versions of a big value in one transaction
BEGIN;
UPDATE big SET t = t || 'a' WHERE id = 2;
UPDATE big SET t = t || 'b' WHERE id = 2;
UPDATE big SET t = t || 'c' WHERE id = 2;
COMMIT;
SELECT id, length(t), right(t, 5), md5(t) FROM big WHERE id = 2;
-- a 1 MB value copied within the table, and a 10 MB value
INSERT INTO big SELECT 4, n, t FROM big WHERE id = 1;
INSERT INTO big SELECT 5, 0, repeat(t, 10) FROM big WHERE id = 2;
SELECT id, length(t), md5(t) FROM big ORDER BY id;
SELECT md5(repeat((SELECT t FROM big WHERE id = 2), 10)) = md5(t) AS same FROM big WHERE id = 5;
-- VACUUM after the updates; values intact
VACUUM big;
VACUUM FULL big_plain;
SELECT id, length(t), md5(t) FROM big ORDER BY id;
SELECT id, length(t), md5(t) FROM big_plain;
-- delete
DELETE FROM big WHERE id IN (1, 5);
SELECT id, length(t), md5(t) FROM big ORDER BY id;
-- COPY out and in of a big value (through psql's file: \copy)
CREATE TABLE big_copy (id int, n int, t text) USING tides;
\getenv abs_builddir PG_ABS_BUILDDIR
\cd :abs_builddir
\copy big to 'results/toast_1mb_copy.data'
\copy big_copy from 'results/toast_1mb_copy.data'
SELECT id, length(t), md5(t) FROM big_copy ORDER BY id;

--
-- a wide row: 1600 columns (the maximum), and a row of many text columns
-- that only fits once toasted
--
DO $$
BEGIN
    EXECUTE 'CREATE TABLE wide (' ||
        (SELECT string_agg('c' || g || ' int', ', ') FROM generate_series(1, 1600) g) ||
        ') USING tides';
END $$;
DO $$
BEGIN
    EXECUTE 'INSERT INTO wide VALUES (' ||
        (SELECT string_agg(g::text, ', ') FROM generate_series(1, 1600) g) || ')';
    EXECUTE 'INSERT INTO wide (c1, c800, c1600) VALUES (-1, -800, -1600)';
END $$;
SELECT c1, c2, c799, c800, c1599, c1600 FROM wide ORDER BY c1;
UPDATE wide SET c1600 = c1600 * 10, c1 = c1 * 10;
SELECT c1, c2, c800, c1600 FROM wide ORDER BY c1;
SELECT count(*) FROM wide WHERE c1500 IS NULL;
DO $$
BEGIN
    EXECUTE 'CREATE TABLE wide_text (' ||
        (SELECT string_agg('t' || g || ' text', ', ') FROM generate_series(1, 200) g) ||
        ') USING tides';
    EXECUTE 'INSERT INTO wide_text SELECT ' ||
        (SELECT string_agg('repeat(md5(' || g || '::text), 100)', ', ') FROM generate_series(1, 200) g);
END $$;
SELECT length(t1), length(t100), length(t200), md5(t1 || t100 || t200) FROM wide_text;
UPDATE wide_text SET t100 = 'short';
SELECT length(t1), length(t100), length(t200), md5(t1 || t100 || t200) FROM wide_text;

DROP TABLE big, big_plain, big_copy, wide, wide_text;
