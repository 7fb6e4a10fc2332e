--
-- space_updates_vacuum: 200,000 updates on 10,000 rows (20 rounds that
-- update every row), with VACUUM after each round as autovacuum would do,
-- leave the table no larger than twice its size after the load.  Sizes are
-- taken after tides_flush() and tides_compact(), and compared, not printed:
-- tides_relation_size() of the table, and what the table adds to the
-- engine's total level bytes (tides_stats()).
--
CREATE FUNCTION su_settled_size(tbl regclass) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    PERFORM tides_flush();
    PERFORM tides_compact();
    RETURN tides_relation_size(tbl);
END $$;

CREATE FUNCTION su_level_bytes() RETURNS bigint LANGUAGE sql AS $$
    SELECT sum(value)::bigint FROM tides_stats() WHERE name LIKE 'level%\_bytes'
$$;
SELECT tides_flush(), tides_compact();
SELECT su_level_bytes() AS base \gset
CREATE TABLE su (id int PRIMARY KEY, n int, v text) USING tides;
INSERT INTO su SELECT g, 0, md5(g::text) || md5((-g)::text) FROM generate_series(1, 10000) g;
VACUUM su;
SELECT su_settled_size('su') AS after_load \gset
SELECT su_level_bytes() - :base AS levels_after_load \gset
SELECT :after_load > 0 AS has_size, :levels_after_load > 0 AS adds_level_bytes;

-- 20 x 10,000 updates, each round followed by VACUUM
UPDATE su SET n = n + 1, v = md5((id + 1)::text) || md5((-id - 1)::text);
VACUUM su;
UPDATE su SET n = n + 1, v = md5((id + 2)::text) || md5((-id - 2)::text);
VACUUM su;
UPDATE su SET n = n + 1, v = md5((id + 3)::text) || md5((-id - 3)::text);
VACUUM su;
UPDATE su SET n = n + 1, v = md5((id + 4)::text) || md5((-id - 4)::text);
VACUUM su;
UPDATE su SET n = n + 1, v = md5((id + 5)::text) || md5((-id - 5)::text);
VACUUM su;
UPDATE su SET n = n + 1, v = md5((id + 6)::text) || md5((-id - 6)::text);
VACUUM su;
UPDATE su SET n = n + 1, v = md5((id + 7)::text) || md5((-id - 7)::text);
VACUUM su;
UPDATE su SET n = n + 1, v = md5((id + 8)::text) || md5((-id - 8)::text);
VACUUM su;
UPDATE su SET n = n + 1, v = md5((id + 9)::text) || md5((-id - 9)::text);
VACUUM su;
UPDATE su SET n = n + 1, v = md5((id + 10)::text) || md5((-id - 10)::text);
VACUUM su;
UPDATE su SET n = n + 1, v = md5((id + 11)::text) || md5((-id - 11)::text);
VACUUM su;
UPDATE su SET n = n + 1, v = md5((id + 12)::text) || md5((-id - 12)::text);
VACUUM su;
UPDATE su SET n = n + 1, v = md5((id + 13)::text) || md5((-id - 13)::text);
VACUUM su;
UPDATE su SET n = n + 1, v = md5((id + 14)::text) || md5((-id - 14)::text);
VACUUM su;
UPDATE su SET n = n + 1, v = md5((id + 15)::text) || md5((-id - 15)::text);
VACUUM su;
UPDATE su SET n = n + 1, v = md5((id + 16)::text) || md5((-id - 16)::text);
VACUUM su;
UPDATE su SET n = n + 1, v = md5((id + 17)::text) || md5((-id - 17)::text);
VACUUM su;
UPDATE su SET n = n + 1, v = md5((id + 18)::text) || md5((-id - 18)::text);
VACUUM su;
UPDATE su SET n = n + 1, v = md5((id + 19)::text) || md5((-id - 19)::text);
VACUUM su;
UPDATE su SET n = n + 1, v = md5((id + 20)::text) || md5((-id - 20)::text);
VACUUM su;

-- the contents are right
SELECT count(*), sum(n), min(n), max(n) FROM su;
SELECT count(*) AS wrong_v FROM su WHERE v <> md5((id + 20)::text) || md5((-id - 20)::text);
SET enable_seqscan = off;
SELECT id, n, v = md5((id + 20)::text) || md5((-id - 20)::text) AS v_ok FROM su WHERE id IN (1, 5000, 10000) ORDER BY id;
RESET enable_seqscan;

-- and the size stays bounded
SELECT su_settled_size('su') AS after_updates \gset
SELECT su_level_bytes() - :base AS levels_after_updates \gset
-- (on failure, a notice gives the numbers)
CREATE FUNCTION su_at_most_twice(what text, loaded bigint, updated bigint) RETURNS bool
LANGUAGE plpgsql AS $$
BEGIN
    IF updated <= 2 * loaded THEN
        RETURN true;
    END IF;
    RAISE NOTICE '%: % bytes after the load, % after the updates (% times)',
        what, loaded, updated, round(updated::numeric / greatest(loaded, 1), 1);
    RETURN false;
END $$;
SELECT su_at_most_twice('tides_relation_size', :after_load, :after_updates) AS at_most_twice_the_loaded_size;
SELECT su_at_most_twice('level bytes', :levels_after_load, :levels_after_updates) AS level_bytes_at_most_twice;

DROP TABLE su;
DROP FUNCTION su_settled_size(regclass), su_level_bytes(), su_at_most_twice(text, bigint, bigint);
