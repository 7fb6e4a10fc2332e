--
-- space_relation_size: tides_relation_size() is the yardstick of the space
-- tests, so it must tell a small table from a big one: after tides_flush()
-- and tides_compact(), a 1,000-row table must measure well under 1 MB
-- while a 200,000-row table next to it measures over 5 MB, and the two
-- together no more than the engine's total level bytes.  Sizes are
-- compared, not printed.
--
CREATE TABLE rs_small (id int, v int) USING tides;
CREATE TABLE rs_big (id int, v text) USING tides;
INSERT INTO rs_small SELECT g, g FROM generate_series(1, 1000) g;
INSERT INTO rs_big SELECT g, md5(g::text) || md5((g + 1)::text) FROM generate_series(1, 200000) g;
INSERT INTO rs_small SELECT g, g FROM generate_series(1001, 1010) g;
SELECT tides_flush();
SELECT tides_compact();
SELECT tides_relation_size('rs_small') < 1000000 AS small_is_small,
       tides_relation_size('rs_big') > 5000000 AS big_is_big,
       tides_relation_size('rs_small') < tides_relation_size('rs_big') / 10 AS small_below_tenth_of_big;
SELECT tides_relation_size('rs_small') + tides_relation_size('rs_big') <=
       (SELECT sum(value) FROM tides_stats() WHERE name LIKE 'level%\_bytes') AS within_total;
-- an empty table takes no space
CREATE TABLE rs_empty (id int) USING tides;
SELECT tides_relation_size('rs_empty') < 10000 AS empty_is_tiny;
DROP TABLE rs_small, rs_big, rs_empty;
