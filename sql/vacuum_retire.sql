--
-- vacuum_retire: VACUUM of a table deleted at its low end writes no deletion
-- for the run of dead versions there, nor for their tides_btree entries: it
-- retires their row ids (src/runtime/low_marks.c), scans step over the
-- entries, and flush and compaction drop versions and entries as they reach
-- them.  Every kind of scan sees exactly the live rows before and after
-- compaction; what stops the run (a live row, a row still visible to a
-- snapshot, a btree index, index cleanup off) keeps the old way.
--
SET client_min_messages = warning;
-- VACUUM removes only what no snapshot may see: another session's snapshot
-- (an autovacuum worker's ANALYZE of some other table) would leave the dead
-- rows "not yet removable".  Wait (at most a minute) until no other backend
-- holds a snapshot or a transaction id before each VACUUM whose counts are
-- printed.
CREATE FUNCTION rq_quiet() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..600 LOOP
    PERFORM pg_stat_clear_snapshot();
    EXIT WHEN NOT EXISTS (SELECT 1 FROM pg_stat_activity
                          WHERE pid <> pg_backend_pid()
                            AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL));
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SET tides.index_method = tides_btree;
CREATE TABLE rq (id bigserial PRIMARY KEY, a int, b text) USING tides
  WITH (autovacuum_enabled = off);
CREATE INDEX rq_a ON rq (a, id);
CREATE INDEX rq_b ON rq (b) WHERE a < 50;
RESET tides.index_method;
INSERT INTO rq (a, b) SELECT i % 100, 'v' || (i % 300) FROM generate_series(1, 3000) i;
-- the oldest third goes, and a few rows above it
DELETE FROM rq WHERE id <= 1000 OR id IN (1500, 2500);
CREATE FUNCTION rq_check() RETURNS TABLE (how text, n bigint, s numeric) LANGUAGE plpgsql AS $$
BEGIN
  SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
  RETURN QUERY SELECT 'pk', count(*), sum(id)::numeric FROM rq WHERE id > 0;
  RETURN QUERY SELECT 'pk-order', count(*), sum(id)::numeric FROM (SELECT id FROM rq ORDER BY id LIMIT 10) x;
  RETURN QUERY SELECT 'index-only', count(*), sum(a)::numeric FROM rq WHERE a >= 0;
  RETURN QUERY SELECT 'partial', count(*), sum(length(b))::numeric FROM rq WHERE b >= '' AND a < 50;
  SET LOCAL enable_indexscan = off; SET LOCAL enable_indexonlyscan = off;
  SET LOCAL enable_bitmapscan = on;
  RETURN QUERY SELECT 'bitmap', count(*), sum(a)::numeric FROM rq WHERE a >= 0;
  SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = on;
  RETURN QUERY SELECT 'seq', count(*), sum(id)::numeric FROM rq;
END $$;
SELECT * FROM rq_check();
CREATE TEMP TABLE f0 AS SELECT value FROM tides_stats() WHERE name = 'filtered_dropped';
SELECT rq_quiet();
SET client_min_messages = info;
VACUUM (VERBOSE, PROCESS_TOAST false) rq;
-- nor does ANALYZE count the retired versions compaction has not dropped yet
ANALYZE (VERBOSE) rq;
SET client_min_messages = warning;
-- the retired entries are not counted, nor met by any scan
SELECT tides_index_entries('rq_pkey') AS pkey, tides_index_entries('rq_a') AS a,
       tides_index_entries('rq_b') AS b;
SELECT * FROM rq_check();
SELECT * FROM tides_verify_index('rq_pkey');
SELECT * FROM tides_verify_index('rq_a');
-- flush and compaction drop the retired versions (a full compaction
-- rewrites every file: each key meets the filter).  Their index entries
-- were killed already by the scans above, which met their dead rows.
SELECT tides_flush();
SELECT tides_compact();
SELECT s.value - f0.value >= 1000 AS dropped
  FROM tides_stats() s, f0 WHERE s.name = 'filtered_dropped';
SELECT * FROM rq_check();
-- the freed keys can be inserted again, above the mark
INSERT INTO rq (id, a, b) VALUES (1, 1, 'again'), (999, 7, 'again');
SELECT id, a, b FROM rq WHERE id IN (1, 999, 1001) ORDER BY id;
-- the next VACUUM starts at the mark, and the run goes on from there; no
-- scan met these dead rows: their entries are retired with them, and flush
-- and compaction drop at least the 200 versions, their 200 + 200 entries
-- and 100 partial-index entries
DELETE FROM rq WHERE id BETWEEN 1001 AND 1200;
UPDATE f0 SET value = s.value FROM tides_stats() s WHERE s.name = 'filtered_dropped';
SELECT rq_quiet();
SET client_min_messages = info;
VACUUM (VERBOSE, PROCESS_TOAST false) rq;
SET client_min_messages = warning;
SELECT tides_flush();
SELECT tides_compact();
SELECT s.value - f0.value >= 700 AS dropped
  FROM tides_stats() s, f0 WHERE s.name = 'filtered_dropped';
SELECT * FROM rq_check();

-- a btree index beside them: versions go the old way, through the btree pass
CREATE TABLE rb (id int, a int) USING tides WITH (autovacuum_enabled = off);
CREATE INDEX rb_id ON rb USING tides_btree (id);
CREATE INDEX rb_a ON rb USING btree (a);
INSERT INTO rb SELECT i, i % 10 FROM generate_series(1, 1000) i;
DELETE FROM rb WHERE id <= 400;
SELECT rq_quiet();
SET client_min_messages = info;
VACUUM (VERBOSE, PROCESS_TOAST false) rb;
SET client_min_messages = warning;
SET enable_seqscan = off;
SELECT count(*), sum(id) FROM rb WHERE id > 0;
SELECT count(*), sum(a) FROM rb WHERE a >= 0;
RESET enable_seqscan;

-- index cleanup off: nothing is retired (the entries would go with the rows)
SET tides.index_method = tides_btree;
CREATE TABLE rc (id int PRIMARY KEY, a int) USING tides WITH (autovacuum_enabled = off);
RESET tides.index_method;
INSERT INTO rc SELECT i, i FROM generate_series(1, 500) i;
DELETE FROM rc WHERE id <= 200;
SELECT rq_quiet();
SET client_min_messages = info;
VACUUM (VERBOSE, PROCESS_TOAST false, INDEX_CLEANUP off) rc;
SET client_min_messages = warning;
SELECT count(*), sum(id) FROM rc;

-- a table without indexes, emptied: every row id handed out is retired
CREATE TABLE rn (a int) USING tides WITH (autovacuum_enabled = off);
INSERT INTO rn SELECT generate_series(1, 700);
DELETE FROM rn;
SELECT rq_quiet();
SET client_min_messages = info;
VACUUM (VERBOSE, PROCESS_TOAST false) rn;
SET client_min_messages = warning;
INSERT INTO rn VALUES (1), (2);
SELECT count(*), sum(a) FROM rn;

DROP TABLE rb, rc, rn;
DROP FUNCTION rq_check();
DROP FUNCTION rq_quiet();
DROP TABLE rq;
