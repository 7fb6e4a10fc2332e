--
-- A cached plan is made again once a tides table's tree outgrows it
-- (src/am/scan.c, replan_if_outgrown).  The planner prices a tides table
-- by the bytes of its tree (tam_relation_estimate_size), and dead versions
-- make the tree grow while the live rows stay few; a prepared statement's
-- generic plan keeps the size it was made with.  A sequential scan that
-- finds the tree four times (and a megabyte) larger than the last plan saw
-- invalidates the relation, so the next execution plans again.
--
-- The dead versions carry 320 bytes of hex digits each, so that the tree
-- stays past the megabyte however much of it a flush (a full memtable, a
-- checkpoint) has compressed into a table file by the time of the check;
-- autovacuum stays away, so no VACUUM plans again first.
--
SET plan_cache_mode = force_generic_plan;
CREATE TABLE pc (id int PRIMARY KEY, n int, v text) USING tides
  WITH (autovacuum_enabled = off);
INSERT INTO pc SELECT g, 0, '' FROM generate_series(1, 10) g;
ANALYZE pc;
PREPARE upd(int) AS UPDATE pc SET n = n + 1 WHERE id = $1;
-- ten rows on one page: the generic plan reads the table
EXPLAIN (COSTS OFF) EXECUTE upd(1);
EXECUTE upd(1);
-- 10,000 dead versions (some 2.5 MB in a memtable, 2 MB in a table file),
-- written through a plan that PL/pgSQL caches (statements planned afresh
-- in this session would each remember the new size, and the point is a
-- plan that does not)
CREATE FUNCTION pc_churn(k int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. k LOOP
    UPDATE pc SET n = n + 1,
                  v = (SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 10))
     WHERE id = 1 + i % 10;
  END LOOP;
END $$;
SELECT pc_churn(10000);
SELECT pg_sleep(1.1);		-- the size estimate is kept for a second
-- a sequential scan notices (this execution's, or one of the churn's own
-- once the tree had grown enough) and invalidates the relation ...
EXECUTE upd(1);
-- ... so the plan is made again, and now goes through the primary key
EXPLAIN (COSTS OFF) EXECUTE upd(1);
SELECT sum(n), min(length(v)), max(length(v)) FROM pc;
DEALLOCATE upd;
DROP FUNCTION pc_churn(int);
DROP TABLE pc;
RESET plan_cache_mode;
