--
-- hot_closed_chains: one transaction updating the same rows thousands of
-- times.  Its own versions are dead to nobody yet, so nothing prunes them:
-- each row gains an index entry every 32 updates (a chain that reached its
-- depth ends with a non-HOT update), and a walk skips the members at the
-- start of a chain that this transaction deleted in commands its snapshot
-- sees (hot.c, "Chain prefixes this transaction deleted").  Every reader
-- that must still see those members -- a cursor opened before or between
-- the updates, a subtransaction rolled back, the command doing the update
-- -- and the unique checks must get the answers heap gives.
--
CREATE TABLE cc (id int PRIMARY KEY, n int, k int) USING tides WITH (autovacuum_enabled = off);
CREATE INDEX cc_k ON cc (k);
INSERT INTO cc SELECT g, 0, g FROM generate_series(1, 5) g;
CREATE FUNCTION cc_bump(times int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1..times LOOP
		UPDATE cc SET n = n + 1 WHERE id = i % 5 + 1;
	END LOOP;
END $$;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

BEGIN;
-- a cursor whose snapshot predates every update below
DECLARE before_all CURSOR FOR SELECT id, n FROM cc WHERE id IN (1, 2) ORDER BY id;
SELECT cc_bump(2000);
SELECT id, n FROM cc WHERE id = 3;
SELECT sum(n), count(*) FROM cc;
-- the old snapshot still sees the rows as they were
FETCH ALL FROM before_all;
CLOSE before_all;
-- a cursor opened between updates sees the versions of its moment, in the
-- middle of chains whose earlier members later walks skip
DECLARE midway CURSOR FOR SELECT id, n FROM cc WHERE id IN (3, 4) ORDER BY id;
SELECT cc_bump(60);
FETCH ALL FROM midway;
CLOSE midway;
SELECT id, n FROM cc WHERE id IN (3, 4) ORDER BY id;
-- updates in a subtransaction that rolls back: the chains it closed are
-- open again (their updater is no longer this transaction)
SAVEPOINT s1;
SELECT cc_bump(500);
SELECT sum(n) FROM cc;
ROLLBACK TO SAVEPOINT s1;
SELECT id, n FROM cc WHERE id = 4;
SELECT sum(n), count(*) FROM cc;
-- and updated again after the rollback
SELECT cc_bump(100);
SELECT sum(n), count(*) FROM cc;
-- a subtransaction that commits keeps its closures
SAVEPOINT s2;
SELECT cc_bump(100);
RELEASE SAVEPOINT s2;
SELECT sum(n), count(*) FROM cc;
-- the command that updates sees the version it updates, not the chains it closes
UPDATE cc SET n = n + 1 WHERE id = 1 RETURNING n, (SELECT n FROM cc c2 WHERE c2.id = 1) AS seen_before;
-- the same rows through the secondary index and by their keys
SELECT id, n FROM cc WHERE k BETWEEN 2 AND 3 ORDER BY k;
-- unique checks: a live duplicate is refused after all those chains ...
SAVEPOINT s3;
INSERT INTO cc VALUES (2, 0, 0);
ROLLBACK TO SAVEPOINT s3;
-- ... and a key this transaction deleted may come back
DELETE FROM cc WHERE id = 5;
INSERT INTO cc VALUES (5, -1, 5);
SELECT id, n FROM cc WHERE id = 5;
-- updates of the key itself close chains too
UPDATE cc SET id = id + 10 WHERE id IN (1, 2);
UPDATE cc SET id = id - 10 WHERE id IN (11, 12);
SELECT id, n FROM cc WHERE id IN (1, 2, 11, 12) ORDER BY id;
COMMIT;

-- after commit: every path gives the same rows
SELECT id, n FROM cc ORDER BY id;
RESET enable_seqscan;
SET enable_indexscan = off;
SELECT id, n FROM cc ORDER BY id;
RESET enable_indexscan;
RESET enable_bitmapscan;
VACUUM cc;
SET enable_seqscan = off;
SELECT id, n FROM cc WHERE id = 3;
RESET enable_seqscan;
DROP TABLE cc;
DROP FUNCTION cc_bump(int);
