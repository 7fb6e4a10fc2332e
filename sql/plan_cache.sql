--
-- A cached plan is made again once a tides table's tree outgrows it
-- (src/am/scan.c, replan_if_outgrown).  The planner prices a tides table
-- by the bytes of its tree (tam_relation_estimate_size), and dead versions
-- make the tree grow while the live rows stay few; a prepared statement's
-- generic plan keeps the size it was made with.  A sequential scan that
-- finds the tree four times (and a megabyte) larger than the last plan saw
-- invalidates the relation, so the next execution plans again.
--
SET plan_cache_mode = force_generic_plan;
CREATE TABLE pc (id int PRIMARY KEY, v int) USING tides;
INSERT INTO pc SELECT g, 0 FROM generate_series(1, 10) g;
ANALYZE pc;
PREPARE upd(int) AS UPDATE pc SET v = v + 1 WHERE id = $1;
-- ten rows on one page: the generic plan reads the table
EXPLAIN (COSTS OFF) EXECUTE upd(1);
EXECUTE upd(1);
-- some 40,000 dead versions, written through a plan that PL/pgSQL caches
-- (statements planned afresh in this session would each remember the new
-- size, and the point is a plan that does not)
CREATE FUNCTION pc_churn(n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. n LOOP
    UPDATE pc SET v = v + 1 WHERE id = 1 + i % 10;
  END LOOP;
END $$;
SELECT pc_churn(40000);
SELECT pg_sleep(1.1);		-- the size estimate is kept for a second
-- this execution's sequential scan notices, and invalidates at commit ...
EXECUTE upd(1);
-- ... so the plan is made again, and now goes through the primary key
EXPLAIN (COSTS OFF) EXECUTE upd(1);
SELECT sum(v) FROM pc;
DEALLOCATE upd;
DROP FUNCTION pc_churn(int);
DROP TABLE pc;
RESET plan_cache_mode;
