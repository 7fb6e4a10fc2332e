--
-- VACUUM deletes the tides_btree entries of dead row versions by key
-- (computed from the version), without reading the indexes, and removes
-- the versions at once when every index could; nbtree indexes, expression
-- indexes, enum keys and key values stored out of line still go through
-- dead stubs and ambulkdelete.  Afterwards every index holds exactly the
-- live rows' entries.
--
SET client_min_messages = warning;

-- every index tides_btree: no stub, no index pass
SET tides.index_method = tides_btree;
CREATE TABLE vk (id bigserial PRIMARY KEY, a int, b text, c int) USING tides
  WITH (autovacuum_enabled = off);
CREATE INDEX vk_a ON vk USING tides_btree (a, c);
CREATE INDEX vk_b ON vk USING tides_btree (b DESC NULLS LAST);
CREATE INDEX vk_partial ON vk USING tides_btree (c) WHERE c < 10;
RESET tides.index_method;
SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.relname LIKE 'vk\_%' ORDER BY 1;
INSERT INTO vk (a, b, c)
  SELECT i % 97, CASE WHEN i % 11 = 0 THEN NULL ELSE 'v' || (i % 300) END, i % 50
  FROM generate_series(1, 3000) i;
DELETE FROM vk WHERE id <= 1000 OR id % 7 = 0;
SELECT count(*) AS live FROM vk;
SELECT tides_index_entries('vk_pkey') AS pkey, tides_index_entries('vk_a') AS a,
       tides_index_entries('vk_b') AS b, tides_index_entries('vk_partial') AS partial;
SET client_min_messages = info;
VACUUM (VERBOSE, PROCESS_TOAST false) vk;
SET client_min_messages = warning;
SELECT tides_index_entries('vk_pkey') AS pkey, tides_index_entries('vk_a') AS a,
       tides_index_entries('vk_b') AS b, tides_index_entries('vk_partial') AS partial;
SELECT count(*) FROM vk WHERE c < 10;
SELECT * FROM tides_verify_index('vk_pkey');
SELECT * FROM tides_verify_index('vk_a');
SELECT * FROM tides_verify_index('vk_b');
SELECT * FROM tides_verify_index('vk_partial');
-- a second VACUUM finds nothing left to do
SET client_min_messages = info;
VACUUM (VERBOSE, PROCESS_TOAST false) vk;
SET client_min_messages = warning;
-- index scans and index-only scans see exactly the live rows
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM vk WHERE id > 0;
SELECT count(*) FROM vk WHERE a >= 0;
SELECT count(*), count(DISTINCT b) FROM vk WHERE b > '' OR b IS NULL;
SELECT min(id), max(id) FROM vk;
RESET enable_seqscan;
RESET enable_bitmapscan;
-- the freed keys can be inserted again
INSERT INTO vk (id, a, b, c) VALUES (1, 1, 'again', 1), (7, 7, 'again', 7);
SELECT id, b FROM vk WHERE id IN (1, 7, 8) ORDER BY id;

-- a btree index beside tides_btree ones: the entries of the tides_btree
-- indexes go by key, the btree index still gets its pass
CREATE TABLE vm (id int, a int, t text) USING tides WITH (autovacuum_enabled = off);
CREATE INDEX vm_id ON vm USING tides_btree (id);
CREATE INDEX vm_a ON vm USING btree (a);
CREATE INDEX vm_expr ON vm USING tides_btree ((a + id));
INSERT INTO vm SELECT i, i % 10, 'x' || i FROM generate_series(1, 2000) i;
DELETE FROM vm WHERE id % 3 = 0;
SET client_min_messages = info;
VACUUM (VERBOSE, PROCESS_TOAST false) vm;
SET client_min_messages = warning;
SELECT tides_index_entries('vm_id') AS id, tides_index_entries('vm_expr') AS expr;
SELECT * FROM tides_verify_index('vm_id');
SELECT * FROM tides_verify_index('vm_expr');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM vm WHERE a >= 0;
SELECT count(*) FROM vm WHERE a + id > 0;
SELECT count(*) FROM vm WHERE id > 0;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- keys that cannot be computed from the dead version: an enum (its sort
-- orders may be renumbered) and a key stored out of line (its TOAST rows may
-- be gone): stubs and an index pass, as before
CREATE TYPE vk_color AS ENUM ('red', 'green', 'blue');
CREATE TABLE ve (id int, col vk_color, big text) USING tides WITH (autovacuum_enabled = off);
ALTER TABLE ve ALTER COLUMN big SET STORAGE external;
CREATE INDEX ve_id ON ve USING tides_btree (id);
CREATE INDEX ve_col ON ve USING tides_btree (col);
INSERT INTO ve SELECT i, (ARRAY['red','green','blue'])[1 + i % 3]::vk_color,
  CASE WHEN i % 50 = 0 THEN repeat(md5(i::text), 100) ELSE 'small' END
  FROM generate_series(1, 500) i;
CREATE INDEX ve_big ON ve USING tides_btree (big);
DELETE FROM ve WHERE id % 2 = 0;
SET client_min_messages = info;
VACUUM (VERBOSE, PROCESS_TOAST false) ve;
SET client_min_messages = warning;
SELECT tides_index_entries('ve_id') AS id, tides_index_entries('ve_col') AS col,
       tides_index_entries('ve_big') AS big;
SELECT * FROM tides_verify_index('ve_id');
SELECT * FROM tides_verify_index('ve_col');
SELECT * FROM tides_verify_index('ve_big');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM ve WHERE big >= '';
SELECT col, count(*) FROM ve WHERE col >= 'red' GROUP BY col ORDER BY col;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- a dead HOT chain still goes through its stub
CREATE TABLE vh (id int, a int, n int) USING tides WITH (autovacuum_enabled = off);
CREATE INDEX vh_id ON vh USING tides_btree (id);
INSERT INTO vh SELECT i, i, 0 FROM generate_series(1, 100) i;
UPDATE vh SET n = n + 1 WHERE id <= 50;
DELETE FROM vh WHERE id <= 20;
SET client_min_messages = info;
VACUUM (VERBOSE, PROCESS_TOAST false) vh;
SET client_min_messages = warning;
SELECT tides_index_entries('vh_id') AS id;
SELECT * FROM tides_verify_index('vh_id');
SELECT count(*), sum(n) FROM vh WHERE id > 0;

DROP TABLE vk, vm, ve, vh;
DROP TYPE vk_color;

-- write stalls are counted with their time (tides_stats)
SELECT name, value >= 0 AS ok FROM tides_stats() WHERE name LIKE 'write\_stall%' ORDER BY name;
