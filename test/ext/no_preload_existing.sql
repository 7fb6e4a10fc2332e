-- tides tables after shared_preload_libraries lost tidesam: every use of
-- them fails with the error and the hint (the first statement loads the
-- library and fails in _PG_init; the library then stays loaded in this
-- session, so the later statements reach the access method itself, which
-- must refuse cleanly too)
SELECT extname FROM pg_extension WHERE extname = 'tidesam';
SELECT count(*) FROM t;
SELECT count(*) FROM t;
INSERT INTO t VALUES (3);
UPDATE t SET id = id + 1;
DELETE FROM t;
SELECT * FROM t WHERE ctid = '(0,1)';
COPY t TO STDOUT;
TRUNCATE t;
VACUUM t;
ANALYZE t;
CREATE INDEX t_id ON t (id);
CREATE TABLE t2 (a int) USING tides;
SELECT tides_relation_size('t');
SELECT * FROM tides_stats() LIMIT 1;
SELECT * FROM tides_verify();
SELECT tides_flush();
SELECT tides_compact();
-- the catalogs can still be read
SELECT relname FROM pg_class WHERE relname = 't';
