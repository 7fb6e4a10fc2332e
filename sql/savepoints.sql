--
-- savepoints: ROLLBACK TO SAVEPOINT on tides tables.  Rows inserted, updated
-- and deleted inside a rolled-back savepoint disappear (the updates and
-- deletes are undone); nested savepoints; errors inside a savepoint;
-- plpgsql exception blocks (implicit subtransactions); cursors.
--
CREATE TABLE sp (id int PRIMARY KEY, v text) USING tides;
INSERT INTO sp VALUES (1, 'a'), (2, 'b'), (3, 'c');

-- insert / update / delete in a savepoint, then roll it back
BEGIN;
INSERT INTO sp VALUES (4, 'd');
SAVEPOINT s1;
INSERT INTO sp VALUES (5, 'e');
UPDATE sp SET v = 'B' WHERE id = 2;
UPDATE sp SET v = 'D' WHERE id = 4;
DELETE FROM sp WHERE id = 3;
SELECT * FROM sp ORDER BY id;
ROLLBACK TO SAVEPOINT s1;
SELECT * FROM sp ORDER BY id;
-- the rows touched in the rolled-back savepoint can be changed again
UPDATE sp SET v = 'bb' WHERE id = 2;
DELETE FROM sp WHERE id = 3;
INSERT INTO sp VALUES (5, 'ee');
SELECT * FROM sp ORDER BY id;
COMMIT;
SELECT * FROM sp ORDER BY id;

-- nested savepoints: roll back the inner one, release the middle one,
-- roll back the outer one
BEGIN;
UPDATE sp SET v = v || '-t' WHERE id = 1;
SAVEPOINT a;
UPDATE sp SET v = v || '-a' WHERE id = 1;
INSERT INTO sp VALUES (10, 'a10');
SAVEPOINT b;
UPDATE sp SET v = v || '-b' WHERE id = 1;
DELETE FROM sp WHERE id = 10;
INSERT INTO sp VALUES (11, 'b11');
SAVEPOINT c;
UPDATE sp SET v = v || '-c' WHERE id = 1;
DELETE FROM sp WHERE id = 11;
SELECT * FROM sp ORDER BY id;
ROLLBACK TO SAVEPOINT c;
SELECT * FROM sp ORDER BY id;
RELEASE SAVEPOINT b;
SELECT * FROM sp ORDER BY id;
ROLLBACK TO SAVEPOINT a;
SELECT * FROM sp ORDER BY id;
COMMIT;
SELECT * FROM sp ORDER BY id;

-- the same row updated in many nested savepoints, rolled back to the middle
BEGIN;
SAVEPOINT l1;
UPDATE sp SET v = 'l1' WHERE id = 2;
SAVEPOINT l2;
UPDATE sp SET v = 'l2' WHERE id = 2;
SAVEPOINT l3;
UPDATE sp SET v = 'l3' WHERE id = 2;
SAVEPOINT l4;
UPDATE sp SET v = 'l4' WHERE id = 2;
ROLLBACK TO SAVEPOINT l3;
SELECT * FROM sp WHERE id = 2;
UPDATE sp SET v = v || '+' WHERE id = 2;
SELECT * FROM sp WHERE id = 2;
COMMIT;
SELECT * FROM sp ORDER BY id;

-- a savepoint rolled back after an error; the transaction goes on
BEGIN;
INSERT INTO sp VALUES (20, 'x');
SAVEPOINT e;
INSERT INTO sp VALUES (21, 'y');
INSERT INTO sp VALUES (1, 'duplicate');
SELECT * FROM sp ORDER BY id;
ROLLBACK TO SAVEPOINT e;
SELECT * FROM sp ORDER BY id;
INSERT INTO sp VALUES (21, 'y2');
COMMIT;
SELECT * FROM sp ORDER BY id;

-- the whole transaction rolled back after a released savepoint
BEGIN;
SAVEPOINT r;
DELETE FROM sp;
RELEASE SAVEPOINT r;
SELECT count(*) FROM sp;
ROLLBACK;
SELECT * FROM sp ORDER BY id;

-- subtransaction aborted, then its rows are looked up through the index
BEGIN;
SAVEPOINT i;
INSERT INTO sp SELECT g, 'bulk' FROM generate_series(100, 1099) g;
UPDATE sp SET v = 'bulk2' WHERE id BETWEEN 100 AND 199;
ROLLBACK TO SAVEPOINT i;
SAVEPOINT j;
INSERT INTO sp SELECT g, 'kept' FROM generate_series(100, 149) g;
RELEASE SAVEPOINT j;
COMMIT;
SET enable_seqscan = off;
SELECT count(*), min(id), max(id), min(v), max(v) FROM sp WHERE id >= 100;
RESET enable_seqscan;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT count(*), min(id), max(id), min(v), max(v) FROM sp WHERE id >= 100;
RESET enable_indexscan;
RESET enable_bitmapscan;
DELETE FROM sp WHERE id >= 100;

-- plpgsql exception blocks are subtransactions too
CREATE FUNCTION sp_try(p_id int, p_v text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        UPDATE sp SET v = p_v WHERE id = 1;
        INSERT INTO sp VALUES (p_id, p_v);
        RETURN 'inserted';
    EXCEPTION WHEN unique_violation THEN
        RETURN 'rolled back';
    END;
END $$;
SELECT sp_try(30, 'new');
SELECT sp_try(30, 'again');
SELECT * FROM sp ORDER BY id;

-- the rolled-back versions stay invisible after the engine flushes them
-- and after VACUUM
SELECT tides_flush();
VACUUM sp;
SELECT * FROM sp ORDER BY id;

-- cursors and savepoints
CREATE TABLE spc (id int PRIMARY KEY, v int) USING tides;
INSERT INTO spc SELECT g, g * 10 FROM generate_series(1, 10) g;
BEGIN;
DECLARE c1 CURSOR FOR SELECT * FROM spc ORDER BY id;
FETCH 2 FROM c1;
SAVEPOINT cs;
-- a cursor's snapshot is fixed: it does not see this update
UPDATE spc SET v = -v WHERE id <= 5;
FETCH 2 FROM c1;
-- a cursor opened in the savepoint is gone after ROLLBACK TO
DECLARE c2 CURSOR FOR SELECT * FROM spc ORDER BY id;
FETCH 3 FROM c2;
ROLLBACK TO SAVEPOINT cs;
FETCH 1 FROM c2;
ROLLBACK TO SAVEPOINT cs;
-- the outer cursor is still open; fetching is not undone
FETCH 2 FROM c1;
SELECT * FROM spc WHERE id <= 5 ORDER BY id;
-- WHERE CURRENT OF inside a savepoint that is rolled back
DECLARE c3 CURSOR FOR SELECT * FROM spc WHERE id > 7 ORDER BY id FOR UPDATE;
FETCH 1 FROM c3;
SAVEPOINT cu;
UPDATE spc SET v = 0 WHERE CURRENT OF c3;
SELECT * FROM spc WHERE id = 8;
ROLLBACK TO SAVEPOINT cu;
SELECT * FROM spc WHERE id = 8;
FETCH 1 FROM c3;
UPDATE spc SET v = 999 WHERE CURRENT OF c3;
DELETE FROM spc WHERE id = 10;
COMMIT;
SELECT * FROM spc ORDER BY id;

DROP TABLE sp, spc;
DROP FUNCTION sp_try(int, text);
