--
-- hot_prune: a reader that walks a long HOT chain prunes it (hot.c,
-- tides_hot_prune_opt; heap prunes a page on access the same way), and the
-- row reads the same by every path afterwards.  autovacuum is off for the
-- table, so only readers prune; pruned versions leave n_dead_tup.
--
CREATE TABLE hp (id int PRIMARY KEY, n int, pad text) USING tides WITH (autovacuum_enabled = off);
INSERT INTO hp SELECT g, 0, repeat('x', 20) FROM generate_series(1, 3) g;
-- twenty HOT updates of row 1, each its own transaction
DO $$ BEGIN FOR i IN 1..20 LOOP UPDATE hp SET n = n + 1 WHERE id = 1; COMMIT; END LOOP; END $$;
SELECT pg_stat_force_next_flush();
-- each UPDATE found row 1 through the index, walked its chain and pruned
-- it: without pruning, 20 dead versions would wait for VACUUM
SELECT n_tup_hot_upd, n_dead_tup < 10 AS pruned FROM pg_stat_user_tables WHERE relname = 'hp';
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, n FROM hp WHERE id = 1;
-- the same answer by every path, and after more updates
SELECT id, n FROM hp WHERE id = 1;
RESET enable_bitmapscan;
SET enable_indexscan = off;
SELECT id, n FROM hp WHERE id = 1;
RESET enable_indexscan;
RESET enable_seqscan;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT id, n FROM hp ORDER BY id;
RESET enable_indexscan;
RESET enable_bitmapscan;
DO $$ BEGIN FOR i IN 1..10 LOOP UPDATE hp SET n = n + 1 WHERE id = 1; COMMIT; END LOOP; END $$;
SET enable_seqscan = off;
SELECT id, n FROM hp WHERE id = 1;
VACUUM hp;
SELECT id, n FROM hp WHERE id = 1;
SELECT count(*) FROM hp;
DROP TABLE hp;
