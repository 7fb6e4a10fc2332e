--
-- ddl_truncate: TRUNCATE of tides tables: transactional (rolled back, in
-- savepoints), in place for a table created or truncated in the same
-- transaction, RESTART IDENTITY.
--
--
-- TRUNCATE: transactional; a table created or truncated in the same
-- transaction is truncated in place (nontransactional truncate)
--
CREATE TABLE dd_tr (id int PRIMARY KEY, v text) USING tides;
INSERT INTO dd_tr SELECT g, 'v' || g FROM generate_series(1, 100) g;
BEGIN;
TRUNCATE dd_tr;
SELECT count(*) FROM dd_tr;
INSERT INTO dd_tr VALUES (1, 'new');
TRUNCATE dd_tr;
INSERT INTO dd_tr VALUES (2, 'newer');
SELECT * FROM dd_tr;
ROLLBACK;
SELECT count(*), min(id), max(id) FROM dd_tr;
BEGIN;
CREATE TABLE dd_tr2 (id int PRIMARY KEY) USING tides;
INSERT INTO dd_tr2 SELECT generate_series(1, 50);
TRUNCATE dd_tr2;
INSERT INTO dd_tr2 VALUES (7);
SAVEPOINT s;
TRUNCATE dd_tr2;
INSERT INTO dd_tr2 VALUES (8);
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT * FROM dd_tr2;
SET enable_seqscan = off;
SELECT * FROM dd_tr2 WHERE id = 7;
SELECT * FROM dd_tr2 WHERE id = 8;
RESET enable_seqscan;
BEGIN;
TRUNCATE dd_tr;
INSERT INTO dd_tr VALUES (1, 'only');
COMMIT;
SELECT * FROM dd_tr;
CREATE TABLE dd_tr_id (id int GENERATED ALWAYS AS IDENTITY, v int) USING tides;
INSERT INTO dd_tr_id (v) VALUES (1), (2);
TRUNCATE dd_tr_id RESTART IDENTITY;
INSERT INTO dd_tr_id (v) VALUES (3);
SELECT * FROM dd_tr_id;
DROP TABLE dd_tr, dd_tr2, dd_tr_id;

