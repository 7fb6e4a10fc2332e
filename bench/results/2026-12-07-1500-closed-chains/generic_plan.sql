\timing on
SET client_min_messages = warning;
SET plan_cache_mode = force_generic_plan;
DROP TABLE IF EXISTS pc;
CREATE TABLE pc (id int PRIMARY KEY, n int, v text) USING :am WITH (autovacuum_enabled = off);
INSERT INTO pc SELECT g, 0, '' FROM generate_series(1, 10) g;
ANALYZE pc;
CREATE OR REPLACE FUNCTION pc_churn(k int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. k LOOP
    UPDATE pc SET n = n + 1 WHERE id = 1 + i % 10;
  END LOOP;
END $$;
SELECT pg_stat_reset();
SELECT pc_churn(:n);
SELECT pg_stat_force_next_flush();
SELECT seq_scan, idx_scan FROM pg_stat_user_tables WHERE relname = 'pc';
