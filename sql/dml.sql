--
-- dml: CREATE TABLE ... USING tides, INSERT / UPDATE / DELETE / MERGE with
-- RETURNING, many updates of one row in a transaction, system columns
-- (xmin, xmax, cmin, cmax, combo command ids), identity and generated columns.
-- (COPY: copy.sql; ON CONFLICT: on_conflict.sql)
--
CREATE TABLE dml (id int PRIMARY KEY, name text NOT NULL, qty int DEFAULT 0,
                  price numeric(10,2), note text) USING tides;
SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
WHERE c.relname = 'dml';

-- default_table_access_method picks tides too
SET default_table_access_method = tides;
CREATE TABLE dml_default (a int);
SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
WHERE c.relname = 'dml_default';
RESET default_table_access_method;
DROP TABLE dml_default;

-- INSERT: single, multi-row, defaults, RETURNING, INSERT ... SELECT
INSERT INTO dml VALUES (1, 'apple', 10, 0.50, NULL);
INSERT INTO dml (id, name, price) VALUES (2, 'banana', 0.25), (3, 'cherry', 3.00)
RETURNING id, name, qty, price;
INSERT INTO dml (id, name) VALUES (4, 'date') RETURNING *;
INSERT INTO dml SELECT g, 'item' || g, g % 7, g / 100.0, repeat('n', g % 5)
FROM generate_series(5, 2000) g;
SELECT count(*), sum(qty), sum(price), count(note), sum(length(note)) FROM dml;
SELECT * FROM dml WHERE id <= 6 ORDER BY id;
-- NOT NULL and primary key violations
INSERT INTO dml (id, name) VALUES (5, 'dup');
INSERT INTO dml (id, name) VALUES (3000, NULL);
SELECT count(*) FROM dml;

-- UPDATE: by key, many rows, RETURNING, the key itself, FROM another table
UPDATE dml SET qty = qty + 1 WHERE id = 1 RETURNING id, qty;
UPDATE dml SET note = 'even' WHERE id % 2 = 0 AND id <= 10 RETURNING id, note;
UPDATE dml SET price = price * 2 WHERE id BETWEEN 100 AND 199;
SELECT count(*), sum(price) FROM dml WHERE id BETWEEN 100 AND 199;
UPDATE dml SET id = id + 10000 WHERE id IN (3, 4) RETURNING id, name;
UPDATE dml SET id = 3 WHERE id = 10003;
SELECT * FROM dml WHERE id IN (3, 4, 10003, 10004) ORDER BY id;
CREATE TABLE dml_prices (id int, newprice numeric) USING tides;
INSERT INTO dml_prices VALUES (1, 9.99), (2, 8.88), (999999, 1);
UPDATE dml d SET price = p.newprice FROM dml_prices p WHERE p.id = d.id
RETURNING d.id, d.price;
-- the same row updated many times in one transaction
BEGIN;
UPDATE dml SET qty = qty + 1 WHERE id = 5;
UPDATE dml SET qty = qty + 1 WHERE id = 5;
UPDATE dml SET qty = qty + 1 WHERE id = 5;
SELECT id, qty FROM dml WHERE id = 5;
DO $$ BEGIN FOR i IN 1..500 LOOP UPDATE dml SET qty = qty + 1 WHERE id = 6; END LOOP; END $$;
SELECT id, qty FROM dml WHERE id = 6;
COMMIT;
SELECT id, qty FROM dml WHERE id IN (5, 6) ORDER BY id;
BEGIN;
DO $$ BEGIN FOR i IN 1..300 LOOP UPDATE dml SET qty = qty + 1 WHERE id = 7; END LOOP; END $$;
ROLLBACK;
SELECT id, qty FROM dml WHERE id = 7;
-- a data-modifying CTE
WITH u AS (UPDATE dml SET qty = 0 WHERE id BETWEEN 10 AND 14 RETURNING id)
SELECT count(*) FROM u;

-- DELETE: by key, USING, RETURNING, all rows in a rolled back transaction
DELETE FROM dml WHERE id = 2 RETURNING id, name;
DELETE FROM dml d USING dml_prices p WHERE d.id = p.id RETURNING d.id;
DELETE FROM dml WHERE id BETWEEN 1000 AND 1999;
SELECT count(*), min(id), max(id) FROM dml;
BEGIN;
DELETE FROM dml;
SELECT count(*) FROM dml;
ROLLBACK;
SELECT count(*) FROM dml;
-- deleting a row twice in one transaction, and updating a deleted row
BEGIN;
DELETE FROM dml WHERE id = 20;
DELETE FROM dml WHERE id = 20;
UPDATE dml SET qty = 1 WHERE id = 20;
COMMIT;
SELECT count(*) FROM dml WHERE id = 20;

-- MERGE
CREATE TABLE dml_src (id int, name text, qty int) USING tides;
INSERT INTO dml_src VALUES (5, 'five', 55), (21, 'twentyone', -1), (5000, 'new', 1), (5001, 'new2', 2);
MERGE INTO dml d USING dml_src s ON d.id = s.id
WHEN MATCHED AND s.qty < 0 THEN DELETE
WHEN MATCHED THEN UPDATE SET name = s.name, qty = s.qty
WHEN NOT MATCHED THEN INSERT (id, name, qty) VALUES (s.id, s.name, s.qty);
SELECT id, name, qty FROM dml WHERE id IN (5, 21, 5000, 5001) ORDER BY id;

-- system columns: tableoid, xmin/xmax, cmin/cmax within one transaction
SELECT tableoid::regclass, count(*) FROM dml GROUP BY 1;
CREATE TABLE dml_sys (id int, v int) USING tides;
BEGIN;
INSERT INTO dml_sys VALUES (1, 0);
INSERT INTO dml_sys VALUES (2, 0);
UPDATE dml_sys SET v = 1 WHERE id = 2;
INSERT INTO dml_sys VALUES (3, 0);
SELECT id, v, cmin, cmax, xmin = pg_current_xact_id()::xid AS mine,
       xmax = '0'::xid AS no_xmax FROM dml_sys ORDER BY id;
DECLARE sysc CURSOR FOR SELECT id, v, cmin, cmax FROM dml_sys ORDER BY id;
DELETE FROM dml_sys WHERE id = 3;
SELECT id, v, cmin, cmax FROM dml_sys ORDER BY id;
-- the cursor still sees row 3, now with a combo command id
FETCH ALL FROM sysc;
CLOSE sysc;
SELECT id, xmax = pg_current_xact_id()::xid AS locked_by_me FROM dml_sys WHERE id = 1 FOR UPDATE;
SELECT id, xmax = pg_current_xact_id()::xid AS locked_by_me FROM dml_sys ORDER BY id;
COMMIT;
SELECT id, v, cmin, cmax, xmin = xmax AS same FROM dml_sys ORDER BY id;

-- identity, serial and generated columns
CREATE TABLE dml_gen (id int GENERATED ALWAYS AS IDENTITY, s serial, a int,
                      b int GENERATED ALWAYS AS (a * 2) STORED) USING tides;
INSERT INTO dml_gen (a) VALUES (1), (2), (3) RETURNING *;
UPDATE dml_gen SET a = a + 10 WHERE id = 2 RETURNING *;
SELECT * FROM dml_gen ORDER BY id;

DROP TABLE dml, dml_prices, dml_src, dml_sys, dml_gen;
