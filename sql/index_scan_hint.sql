--
-- Scans from the start of a unique tides_btree index seek past the run of
-- deleted entries that the previous such scan found (src/index/tidx_hint.c).
-- Whatever is inserted below that run, before or after the hint was set,
-- is found; deleted rows that a snapshot still sees are still there.
--
SET client_min_messages = warning;
SET tides.index_method = tides_btree;
CREATE TABLE sh (id bigint PRIMARY KEY, v int) USING tides WITH (autovacuum_enabled = off);
CREATE TABLE sh_nu (id bigint, v int) USING tides WITH (autovacuum_enabled = off);
CREATE INDEX sh_nu_id ON sh_nu (id);
RESET tides.index_method;
INSERT INTO sh SELECT i, i FROM generate_series(1, 20000) i;
INSERT INTO sh_nu SELECT i, i FROM generate_series(1, 2000) i;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT min(id) FROM sh;
-- a queue: delete the lowest keys in steps, asking for the lowest each time
DO $$
DECLARE lo bigint;
BEGIN
  FOR step IN 1..40 LOOP
    SELECT min(id) INTO lo FROM sh;
    IF lo <> (step - 1) * 250 + 1 THEN
      RAISE EXCEPTION 'step %: min % expected %', step, lo, (step - 1) * 250 + 1;
    END IF;
    DELETE FROM sh WHERE id >= lo AND id < lo + 250;
  END LOOP;
END $$;
SELECT min(id) FROM sh;
SELECT id FROM sh ORDER BY id LIMIT 3;
VACUUM sh;
SELECT min(id), count(*) FROM sh;
SELECT id FROM sh ORDER BY id LIMIT 3;
-- keys inserted below the deleted run (the hint must not hide them)
INSERT INTO sh VALUES (5, 5);
SELECT min(id) FROM sh;
SELECT id FROM sh ORDER BY id LIMIT 3;
INSERT INTO sh VALUES (9000, 9000), (9999, 9999);
SELECT id FROM sh ORDER BY id LIMIT 4;
DELETE FROM sh WHERE id IN (5, 9000);
SELECT id FROM sh ORDER BY id LIMIT 3;
-- inside a transaction that inserts below, and one that rolls back
BEGIN;
INSERT INTO sh VALUES (3, 3);
SELECT min(id) FROM sh;
ROLLBACK;
SELECT min(id) FROM sh;
BEGIN;
INSERT INTO sh VALUES (2, 2);
SELECT min(id) FROM sh;
COMMIT;
SELECT min(id) FROM sh;
SELECT id FROM sh WHERE id IS NOT NULL ORDER BY id LIMIT 2;
-- a cursor that turns around at the start
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT id FROM sh ORDER BY id;
FETCH 2 FROM c;
FETCH BACKWARD 5 FROM c;
FETCH 2 FROM c;
COMMIT;
-- a unique violation below the run is still found
INSERT INTO sh VALUES (2, 0);
-- a non-unique index has no hints; same answers
DELETE FROM sh_nu WHERE id <= 1500;
SELECT min(id) FROM sh_nu;
INSERT INTO sh_nu VALUES (7, 7);
SELECT min(id) FROM sh_nu;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT min(id), count(*) FROM sh;
DROP TABLE sh, sh_nu;
