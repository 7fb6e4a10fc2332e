--
-- scan_sample: TABLESAMPLE SYSTEM and BERNOULLI on a tides table: counts and
-- deterministic properties only.
--
CREATE TABLE sc (id int, k int, g int, pad text) USING tides;
INSERT INTO sc SELECT i, (i * 7919) % 10007, i % 10, repeat('x', 20 + i % 50)
FROM generate_series(1, 20000) i;
CREATE INDEX sc_k ON sc (k);
CREATE INDEX sc_g ON sc (g);
CREATE INDEX sc_id ON sc (id);
VACUUM ANALYZE sc;

-- the reference: a sequential scan
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SET enable_tidscan = off;
SET max_parallel_workers_per_gather = 0;
SELECT count(*), sum(id), sum(k), sum(length(pad)) FROM sc;
SELECT count(*), sum(id) FROM sc WHERE k < 1000;
RESET ALL;

--
-- TABLESAMPLE: counts and properties only
--
SELECT count(*) FROM sc TABLESAMPLE SYSTEM (100);
SELECT count(*) FROM sc TABLESAMPLE BERNOULLI (100);
SELECT count(*) FROM sc TABLESAMPLE SYSTEM (0);
SELECT count(*) FROM sc TABLESAMPLE BERNOULLI (0);
-- a fraction: about the right size, and the same with the same seed
SELECT count(*) BETWEEN 8000 AND 12000 AS about_half FROM sc TABLESAMPLE BERNOULLI (50) REPEATABLE (42);
SELECT (SELECT count(*) FROM sc TABLESAMPLE BERNOULLI (30) REPEATABLE (7)) =
       (SELECT count(*) FROM sc TABLESAMPLE BERNOULLI (30) REPEATABLE (7)) AS repeatable;
SELECT count(*) BETWEEN 1 AND 19989 AS some FROM sc TABLESAMPLE SYSTEM (50) REPEATABLE (42);
SELECT (SELECT sum(id) FROM sc TABLESAMPLE SYSTEM (30) REPEATABLE (7)) =
       (SELECT sum(id) FROM sc TABLESAMPLE SYSTEM (30) REPEATABLE (7)) AS repeatable;
-- sampled rows are real rows, each once
SELECT count(*) = count(DISTINCT s.id) AS distinct_rows, bool_and(s.k = t.k AND s.pad = t.pad) AS real_rows
FROM (SELECT * FROM sc TABLESAMPLE SYSTEM (40) REPEATABLE (3)) s JOIN sc t ON t.id = s.id;
SELECT count(*) = count(DISTINCT s.id) AS distinct_rows, bool_and(s.k = t.k AND s.pad = t.pad) AS real_rows
FROM (SELECT * FROM sc TABLESAMPLE BERNOULLI (40) REPEATABLE (3)) s JOIN sc t ON t.id = s.id;
-- rows deleted by a committed transaction are never sampled
CREATE TABLE sc_sample (id int) USING tides;
INSERT INTO sc_sample SELECT generate_series(1, 5000);
DELETE FROM sc_sample WHERE id > 1000;
SELECT count(*), max(id) FROM sc_sample TABLESAMPLE SYSTEM (100);
SELECT count(*), max(id) FROM sc_sample TABLESAMPLE BERNOULLI (100);
SELECT max(id) <= 1000 AS only_live FROM sc_sample TABLESAMPLE BERNOULLI (50) REPEATABLE (1);
DROP TABLE sc_sample;

DROP TABLE sc;
