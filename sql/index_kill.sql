--
-- index_kill: an index scan that meets a row deleted for good forgets its
-- entry (kill_prior_tuple).  A tides_btree kill is a write to the tides log
-- after the deletion, so it waits only for the deleter's commit record to be
-- flushed; nbtree's kill, an LP_DEAD hint that may reach the disk before the
-- tides log, also waits until the deletion's tides records are durable (the
-- sync worker's horizon; src/am/visibility.c, tam_surely_dead).
--
CREATE EXTENSION pageinspect;
-- the sync worker's next round (and horizon) comes a minute after the current one
ALTER SYSTEM SET tides.sync_interval = '60s';
SELECT pg_reload_conf();
SELECT pg_sleep(0.5);
CREATE TABLE ik (id int, v int) USING tides WITH (autovacuum_enabled = off);
CREATE UNIQUE INDEX ik_t ON ik USING tides_btree (id);
CREATE INDEX ik_b ON ik USING btree (v);
INSERT INTO ik SELECT g, g FROM generate_series(1, 1000) g;
-- committed with its commit record flushed (synchronous_commit = on)
DELETE FROM ik WHERE id <= 400;
SELECT tides_index_entries('ik_t');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
-- scans through the tides_btree index until its dead entries are gone: at
-- once, unless another session's snapshot still sees the deleted rows
DO $$
DECLARE
	n bigint;
BEGIN
	FOR i IN 1..200 LOOP
		PERFORM count(*) FROM ik WHERE id <= 1000;
		n := tides_index_entries('ik_t');
		EXIT WHEN n = 600;
		PERFORM pg_sleep(0.1);
	END LOOP;
	RAISE NOTICE 'tides_btree entries after the scans: %', n;
END $$;
SELECT count(*) FROM ik WHERE id <= 1000;
-- nbtree marks its entries dead once the sync worker made the deletion durable
ALTER SYSTEM RESET tides.sync_interval;
SELECT pg_reload_conf();
DO $$
DECLARE
	n bigint;
BEGIN
	FOR i IN 1..300 LOOP
		PERFORM count(*) FROM ik WHERE v <= 1000;
		SELECT count(*) INTO n FROM bt_page_items('ik_b', 1) WHERE dead;
		EXIT WHEN n = 400;
		PERFORM pg_sleep(0.1);
	END LOOP;
	RAISE NOTICE 'nbtree entries marked dead: %', n;
END $$;
SELECT count(*) FROM ik WHERE v <= 1000;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexonlyscan;
DROP TABLE ik;
DROP EXTENSION pageinspect;
