--
-- foreign_keys: foreign keys between tides tables (and to and from
-- heap tables): checks, ON DELETE / ON UPDATE CASCADE, SET NULL, SET
-- DEFAULT, RESTRICT, deferred checks, validation of a new constraint.
--
CREATE TABLE fk_parent (id int PRIMARY KEY, code text UNIQUE, name text) USING tides;
CREATE TABLE fk_child (id int PRIMARY KEY,
    parent_id int REFERENCES fk_parent (id) ON DELETE CASCADE ON UPDATE CASCADE,
    parent_code text REFERENCES fk_parent (code) ON DELETE SET NULL ON UPDATE SET NULL,
    note text) USING tides;
INSERT INTO fk_parent SELECT g, 'c' || g, 'parent ' || g FROM generate_series(1, 10) g;
INSERT INTO fk_child SELECT g, 1 + g % 10, 'c' || (1 + g % 5), 'child ' || g
FROM generate_series(1, 100) g;

-- checks on insert and update of the child
INSERT INTO fk_child VALUES (1000, 11, NULL, 'no parent');
INSERT INTO fk_child VALUES (1000, NULL, 'c99', 'no parent');
UPDATE fk_child SET parent_id = 42 WHERE id = 1;
INSERT INTO fk_child VALUES (1000, NULL, NULL, 'no parent needed');

-- non-key update of the parent: children untouched
UPDATE fk_parent SET name = 'renamed' WHERE id = 1;
SELECT count(*) FROM fk_child WHERE parent_id = 1;

-- ON UPDATE CASCADE and ON UPDATE SET NULL
UPDATE fk_parent SET id = 101 WHERE id = 1;
UPDATE fk_parent SET code = 'c2x' WHERE id = 2;
SELECT parent_id, parent_code, count(*) FROM fk_child
WHERE parent_id IN (1, 101) OR parent_code IS NULL OR parent_code IN ('c2', 'c2x')
GROUP BY 1, 2 ORDER BY 1, 2;

-- ON DELETE CASCADE and ON DELETE SET NULL
DELETE FROM fk_parent WHERE id = 3;
DELETE FROM fk_parent WHERE code = 'c4';
SELECT count(*) AS children, count(parent_code) AS with_code FROM fk_child;
SELECT count(*) FROM fk_child WHERE parent_id IN (3, 4);

-- a cascade rolled back with its transaction
BEGIN;
DELETE FROM fk_parent WHERE id = 5;
SELECT count(*) FROM fk_child WHERE parent_id = 5;
ROLLBACK;
SELECT count(*) FROM fk_child WHERE parent_id = 5;

-- RESTRICT / NO ACTION, SET DEFAULT, deferred checks
CREATE TABLE fk_restrict (id int PRIMARY KEY,
    parent_id int DEFAULT 6 REFERENCES fk_parent ON DELETE SET DEFAULT,
    other int REFERENCES fk_parent ON DELETE RESTRICT,
    later int REFERENCES fk_parent DEFERRABLE INITIALLY DEFERRED) USING tides;
INSERT INTO fk_restrict VALUES (1, 7, 8, 9);
DELETE FROM fk_parent WHERE id = 8;
DELETE FROM fk_parent WHERE id = 7;
SELECT * FROM fk_restrict;
DELETE FROM fk_parent WHERE id = 6;
BEGIN;
DELETE FROM fk_parent WHERE id = 9;
INSERT INTO fk_parent VALUES (9, 'c9new', 'back again');
COMMIT;
BEGIN;
DELETE FROM fk_parent WHERE id = 9;
COMMIT;
SELECT id, code FROM fk_parent ORDER BY id;

-- self-referencing table with cascades down a chain
CREATE TABLE fk_tree (id int PRIMARY KEY, up int REFERENCES fk_tree ON DELETE CASCADE) USING tides;
INSERT INTO fk_tree SELECT g, NULLIF(g - 1, 0) FROM generate_series(1, 200) g;
DELETE FROM fk_tree WHERE id = 101;
SELECT count(*), max(id) FROM fk_tree;

-- between heap and tides tables, both directions
CREATE TABLE fk_heap_parent (id int PRIMARY KEY) USING heap;
CREATE TABLE fk_tides_child (id int REFERENCES fk_heap_parent ON DELETE CASCADE) USING tides;
CREATE TABLE fk_heap_child (id int REFERENCES fk_parent ON DELETE CASCADE) USING heap;
INSERT INTO fk_heap_parent VALUES (1), (2);
INSERT INTO fk_tides_child VALUES (1), (2), (2);
INSERT INTO fk_heap_child VALUES (10), (10), (5);
INSERT INTO fk_tides_child VALUES (3);
INSERT INTO fk_heap_child VALUES (3);
DELETE FROM fk_heap_parent WHERE id = 2;
DELETE FROM fk_parent WHERE id = 10;
SELECT 'tides child' AS t, id FROM fk_tides_child UNION ALL
SELECT 'heap child', id FROM fk_heap_child ORDER BY 1, 2;

-- a new constraint validates the existing rows (a scan of the tides table)
CREATE TABLE fk_late (id int, pid int) USING tides;
INSERT INTO fk_late SELECT g, 1 + g % 2 FROM generate_series(1, 30) g;
ALTER TABLE fk_late ADD CONSTRAINT fk_late_pid FOREIGN KEY (pid) REFERENCES fk_heap_parent;
ALTER TABLE fk_late ADD CONSTRAINT fk_late_pid FOREIGN KEY (pid) REFERENCES fk_heap_parent NOT VALID;
ALTER TABLE fk_late VALIDATE CONSTRAINT fk_late_pid;
DELETE FROM fk_late WHERE pid <> 1;
ALTER TABLE fk_late VALIDATE CONSTRAINT fk_late_pid;
SELECT conname, convalidated FROM pg_constraint WHERE conname = 'fk_late_pid';

DROP TABLE fk_late, fk_heap_child, fk_tides_child, fk_heap_parent, fk_tree, fk_restrict, fk_child, fk_parent;
