--
-- on_conflict: INSERT ... ON CONFLICT DO NOTHING / DO UPDATE on tides tables:
-- with and without a conflict target, ON CONSTRAINT, WHERE, RETURNING, the
-- same key twice, many rows, a partial unique index, savepoints.
--
-- ON CONFLICT
CREATE TABLE ups (k int PRIMARY KEY, v text, n int DEFAULT 1, u text UNIQUE) USING tides;
INSERT INTO ups (k, v, u) VALUES (1, 'one', 'u1'), (2, 'two', 'u2');
INSERT INTO ups (k, v, u) VALUES (1, 'uno', 'x1') ON CONFLICT DO NOTHING;
INSERT INTO ups (k, v, u) VALUES (3, 'three', 'u1') ON CONFLICT DO NOTHING RETURNING k;
INSERT INTO ups (k, v, u) VALUES (1, 'uno', 'x1') ON CONFLICT (k) DO NOTHING RETURNING k;
INSERT INTO ups (k, v, u) VALUES (4, 'four', 'u4') ON CONFLICT (k) DO NOTHING RETURNING k;
-- a conflict on the other unique index is an error when k is the arbiter
INSERT INTO ups (k, v, u) VALUES (5, 'five', 'u4') ON CONFLICT (k) DO NOTHING;
INSERT INTO ups (k, v, u) VALUES (1, 'uno', 'x1')
  ON CONFLICT (k) DO UPDATE SET v = ups.v || '/' || excluded.v, n = ups.n + 1
  RETURNING k, v, n, u;
INSERT INTO ups (k, v, u) VALUES (1, 'eins', 'x1')
  ON CONFLICT ON CONSTRAINT ups_pkey DO UPDATE SET v = excluded.v, n = ups.n + 1
  WHERE ups.n < 2 RETURNING k, v, n;
INSERT INTO ups (k, v, u) VALUES (2, 'zwei', 'x2'), (6, 'six', 'u6'), (7, 'seven', 'u7')
  ON CONFLICT (k) DO UPDATE SET v = excluded.v, n = ups.n + 10 RETURNING k, v, n;
-- the same key twice in one command
INSERT INTO ups (k, v) VALUES (8, 'a'), (8, 'b') ON CONFLICT (k) DO UPDATE SET v = excluded.v;
INSERT INTO ups (k, v) VALUES (9, 'a'), (9, 'b') ON CONFLICT (k) DO NOTHING;
SELECT * FROM ups ORDER BY k;
-- many upserts in one statement, then again (all updates)
INSERT INTO ups (k, v) SELECT g, 'bulk' FROM generate_series(1, 1000) g
  ON CONFLICT (k) DO UPDATE SET n = ups.n + 100;
INSERT INTO ups (k, v) SELECT g, 'bulk' FROM generate_series(1, 1000) g
  ON CONFLICT (k) DO UPDATE SET n = ups.n + 100;
SELECT count(*), sum(n), count(*) FILTER (WHERE v = 'bulk') FROM ups;
-- ON CONFLICT with a partial unique index as arbiter
CREATE TABLE ups_partial (k int, active bool, v text) USING tides;
CREATE UNIQUE INDEX ups_partial_k ON ups_partial (k) WHERE active;
INSERT INTO ups_partial VALUES (1, true, 'a'), (1, false, 'b');
INSERT INTO ups_partial VALUES (1, true, 'c') ON CONFLICT (k) WHERE active DO UPDATE SET v = excluded.v;
INSERT INTO ups_partial VALUES (1, false, 'd') ON CONFLICT (k) WHERE active DO UPDATE SET v = excluded.v;
SELECT * FROM ups_partial ORDER BY k, active, v;
-- ON CONFLICT in a savepoint that rolls back, and in a rolled back transaction
BEGIN;
SAVEPOINT s;
INSERT INTO ups (k, v) VALUES (1, 'rolled back') ON CONFLICT (k) DO UPDATE SET v = excluded.v;
INSERT INTO ups (k, v) VALUES (5000, 'rolled back') ON CONFLICT (k) DO UPDATE SET v = excluded.v;
ROLLBACK TO SAVEPOINT s;
INSERT INTO ups (k, v) VALUES (5001, 'kept') ON CONFLICT (k) DO NOTHING;
COMMIT;
SELECT k, v FROM ups WHERE k IN (1, 5000, 5001) ORDER BY k;

-- everything read back through a sequential scan and through the indexes
SET enable_seqscan = off;
SELECT count(*), sum(n) FROM ups WHERE k > 0;
RESET enable_seqscan;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT count(*), sum(n) FROM ups WHERE k > 0;
RESET enable_indexscan;
RESET enable_bitmapscan;

DROP TABLE ups, ups_partial;
