--
-- tides_btree unique indexes: violations worded as nbtree's, NULLs,
-- deferrable constraints, ON CONFLICT, foreign keys, builds.
--
SET default_table_access_method = tides;

CREATE TABLE uq (id int, v text, n int);
CREATE UNIQUE INDEX uq_id ON uq USING tides_btree (id);
CREATE UNIQUE INDEX uq_v_n ON uq USING tides_btree (v, n);
INSERT INTO uq VALUES (1, 'a', 1), (2, 'a', 2), (3, NULL, NULL), (4, NULL, NULL);
INSERT INTO uq VALUES (1, 'x', 0);
INSERT INTO uq VALUES (5, 'a', 1);
-- NULLs are distinct
INSERT INTO uq VALUES (NULL, 'n', NULL), (NULL, 'n', NULL);
-- a duplicate within one statement
INSERT INTO uq VALUES (10, 'q', 1), (10, 'q', 2);
-- deleted or updated rows free their key
DELETE FROM uq WHERE id = 2;
INSERT INTO uq VALUES (2, 'a', 2);
UPDATE uq SET id = 20 WHERE id = 2;
INSERT INTO uq VALUES (2, 'b', 2);
UPDATE uq SET id = 1 WHERE id = 20;
-- an aborted insert frees its key
BEGIN;
INSERT INTO uq VALUES (30, 'z', 1);
ROLLBACK;
INSERT INTO uq VALUES (30, 'z', 1);
-- savepoints
BEGIN;
SAVEPOINT s;
INSERT INTO uq VALUES (31, 'z', 2);
ROLLBACK TO s;
INSERT INTO uq VALUES (31, 'z', 3);
COMMIT;
SELECT * FROM uq ORDER BY id NULLS FIRST, v;
SELECT count(*) FROM tides_verify_index('uq_id');

-- NULLS NOT DISTINCT
CREATE TABLE nnd (a int, b int);
CREATE UNIQUE INDEX nnd_ab ON nnd USING tides_btree (a, b) NULLS NOT DISTINCT;
INSERT INTO nnd VALUES (1, NULL), (NULL, NULL);
INSERT INTO nnd VALUES (1, NULL);
INSERT INTO nnd VALUES (NULL, NULL);
INSERT INTO nnd VALUES (NULL, 1);

-- equal values that are not identical
CREATE TABLE eq (n numeric, f float8, i interval, t text COLLATE "en-x-icu", c char(5));
CREATE UNIQUE INDEX eq_n ON eq USING tides_btree (n);
CREATE UNIQUE INDEX eq_f ON eq USING tides_btree (f);
CREATE UNIQUE INDEX eq_i ON eq USING tides_btree (i);
CREATE UNIQUE INDEX eq_t ON eq USING tides_btree (t);
CREATE UNIQUE INDEX eq_c ON eq USING tides_btree (c);
INSERT INTO eq VALUES (1.5, 0, '1 mon', 'a', 'x'), (NULL, 'NaN', NULL, 'A', 'y');
INSERT INTO eq (n) VALUES (1.50);
INSERT INTO eq (f) VALUES ('-0');
INSERT INTO eq (f) VALUES ('-NaN');
INSERT INTO eq (i) VALUES ('30 days');
INSERT INTO eq (t) VALUES ('a');
INSERT INTO eq (t) VALUES ('ä');
INSERT INTO eq (c) VALUES ('x  ');

-- building a unique index over duplicates
CREATE TABLE dup (a int);
INSERT INTO dup VALUES (1), (2), (2), (NULL), (NULL);
CREATE UNIQUE INDEX dup_a ON dup USING tides_btree (a);
DELETE FROM dup WHERE ctid = (SELECT max(ctid) FROM dup WHERE a = 2);
CREATE UNIQUE INDEX dup_a ON dup USING tides_btree (a);
CREATE UNIQUE INDEX CONCURRENTLY dup_a2 ON dup USING tides_btree (a);
INSERT INTO dup VALUES (2);
SELECT count(*) FROM tides_verify_index('dup_a2');

-- deferrable constraints
CREATE TABLE df (id int, CONSTRAINT df_id UNIQUE (id) DEFERRABLE INITIALLY DEFERRED);
DROP TABLE df;
CREATE TABLE df (id int);
CREATE UNIQUE INDEX df_id_idx ON df USING tides_btree (id);
ALTER TABLE df ADD CONSTRAINT df_id UNIQUE USING INDEX df_id_idx DEFERRABLE INITIALLY DEFERRED;
\d df
INSERT INTO df VALUES (1), (2), (3);
-- swap keys: fine at commit
UPDATE df SET id = CASE id WHEN 1 THEN 2 WHEN 2 THEN 1 ELSE id END;
BEGIN;
INSERT INTO df VALUES (3);
UPDATE df SET id = 4 WHERE id = 3 AND ctid = (SELECT min(ctid) FROM df WHERE id = 3);
COMMIT;
BEGIN;
INSERT INTO df VALUES (1);
COMMIT;
BEGIN;
SET CONSTRAINTS df_id IMMEDIATE;
INSERT INTO df VALUES (2);
ROLLBACK;
BEGIN;
INSERT INTO df VALUES (2);
SET CONSTRAINTS df_id IMMEDIATE;
ROLLBACK;
SELECT * FROM df ORDER BY id;

-- ON CONFLICT
CREATE TABLE oc (k int PRIMARY KEY, v text);
DROP TABLE oc;
CREATE TABLE oc (k int, k2 text, v text);
CREATE UNIQUE INDEX oc_k ON oc USING tides_btree (k);
CREATE UNIQUE INDEX oc_k2 ON oc USING tides_btree (k2) WHERE v IS NOT NULL;
INSERT INTO oc VALUES (1, 'one', 'x') ON CONFLICT (k) DO UPDATE SET v = oc.v || '+' || excluded.v;
INSERT INTO oc VALUES (1, 'one', 'y') ON CONFLICT (k) DO UPDATE SET v = oc.v || '+' || excluded.v;
INSERT INTO oc VALUES (1, 'uno', 'z') ON CONFLICT (k) DO NOTHING;
INSERT INTO oc VALUES (2, 'one', 'z') ON CONFLICT DO NOTHING;
INSERT INTO oc VALUES (2, 'one', 'z') ON CONFLICT (k2) WHERE v IS NOT NULL DO UPDATE SET v = 'k2 conflict';
ALTER TABLE oc ADD CONSTRAINT oc_k_con UNIQUE USING INDEX oc_k;
INSERT INTO oc VALUES (3, 'three', 'w') ON CONFLICT ON CONSTRAINT oc_k_con DO NOTHING;
INSERT INTO oc VALUES (3, 'three', 'w') ON CONFLICT ON CONSTRAINT oc_k_con DO NOTHING;
INSERT INTO oc SELECT g, 'g' || g, 'bulk' FROM generate_series(1, 5) g
    ON CONFLICT (k) DO UPDATE SET v = excluded.v RETURNING k, v;
INSERT INTO oc VALUES (4, 'g4', 'again'), (4, 'g4', 'twice') ON CONFLICT (k) DO UPDATE SET v = excluded.v;
-- without an arbiter: the other unique index raises
INSERT INTO oc VALUES (6, 'g1', 'v') ON CONFLICT (k) DO NOTHING;
SELECT * FROM oc ORDER BY k;
SELECT count(*) FROM tides_verify_index('oc_k_con') UNION ALL SELECT count(*) FROM tides_verify_index('oc_k2');

-- foreign keys referencing tides_btree unique indexes
CREATE TABLE pk (id int, code text);
CREATE UNIQUE INDEX pk_id ON pk USING tides_btree (id);
ALTER TABLE pk ADD PRIMARY KEY USING INDEX pk_id;
CREATE UNIQUE INDEX pk_code ON pk USING tides_btree (code);
CREATE TABLE fk (id int REFERENCES pk, code text REFERENCES pk (code) ON UPDATE CASCADE);
INSERT INTO pk VALUES (1, 'a'), (2, 'b');
INSERT INTO fk VALUES (1, 'a'), (2, NULL);
INSERT INTO fk VALUES (3, NULL);
INSERT INTO fk VALUES (NULL, 'c');
UPDATE pk SET code = 'aa' WHERE id = 1;
DELETE FROM pk WHERE id = 2;
SELECT * FROM fk ORDER BY id;
-- the same in one transaction, and with ALTER TYPE
BEGIN;
CREATE TABLE pk2 (id int);
CREATE UNIQUE INDEX pk2_id ON pk2 USING tides_btree (id);
CREATE TABLE fk2 (id int REFERENCES pk2 (id));
INSERT INTO pk2 VALUES (1);
INSERT INTO fk2 VALUES (1);
COMMIT;
INSERT INTO fk2 VALUES (2);
ALTER TABLE pk2 ALTER id TYPE bigint;
ALTER TABLE fk2 ALTER id TYPE bigint;
INSERT INTO fk2 VALUES (2);
SELECT * FROM fk2;

DROP TABLE uq, nnd, eq, dup, df, oc, fk, pk, fk2, pk2;
