SELECT name, setting FROM pg_settings WHERE name LIKE 'tides.%' ORDER BY name;
CREATE EXTENSION tidesam;
CREATE TABLE t (a int) USING tides;
INSERT INTO t SELECT generate_series(1, 1000);
SELECT count(*) FROM t;
