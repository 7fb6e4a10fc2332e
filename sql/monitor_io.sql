--
-- monitor_io: tides block I/O counted as PostgreSQL counts buffer I/O, and
-- progress reporting (docs/operations.md, "Monitoring").
--
--  * EXPLAIN (ANALYZE, BUFFERS): engine blocks found in the block cache are
--    "shared hit", blocks read from table files "shared read", on the plan
--    node that read them (pg_stat_statements takes the same counters; the
--    extension's harness check "monitor" shows it).
--  * pg_statio_user_tables / _indexes count the same blocks for the
--    relation: the difference before and after a query is its EXPLAIN count.
--  * Rows still in memtables involve no block (a scan may still read a
--    block of a table file whose key range overlaps the relation's).
--  * CLUSTER and VACUUM FULL report their phases and counts in
--    pg_stat_progress_cluster (seen from an index expression evaluated while
--    CLUSTER rebuilds the index); VACUUM's pg_stat_progress_vacuum is shown
--    by the harness check "monitor", as it runs no user code.
--
SET client_min_messages = warning;
CREATE TABLE io_t (id int PRIMARY KEY, k int, v text) USING tides WITH (autovacuum_enabled = off);
CREATE INDEX io_k ON io_t USING tides_btree (k);
INSERT INTO io_t SELECT g, g % 1000, md5(g::text) FROM generate_series(1, 50000) g;
ANALYZE io_t;

-- shared hit / read of the plan's top node (FORMAT JSON)
CREATE FUNCTION io_buffers(q text, OUT hit bigint, OUT read bigint) LANGUAGE plpgsql AS $$
DECLARE
    plan json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, FORMAT JSON) ' || q INTO plan;
    hit := (plan -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint;
    read := (plan -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint;
END $$;
CREATE FUNCTION io_statio(rel regclass, OUT hit bigint, OUT read bigint) LANGUAGE sql AS $$
    SELECT heap_blks_hit, heap_blks_read FROM pg_statio_all_tables WHERE relid = rel
    UNION ALL
    SELECT idx_blks_hit, idx_blks_read FROM pg_statio_all_indexes WHERE indexrelid = rel
$$;


-- in table files: a sequential scan reads blocks (from the files, or the cache)
SELECT tides_flush();
SELECT tides_compact();
SELECT pg_stat_force_next_flush();
SELECT hit AS h0, read AS r0 FROM io_statio('io_t') \gset
SELECT hit AS scan_hit, read AS scan_read FROM io_buffers('SELECT count(*) FROM io_t') \gset
SELECT :scan_hit + :scan_read > 10 AS scan_counts_blocks;
SELECT pg_stat_force_next_flush();
SELECT hit - :h0 = :scan_hit AS statio_hit_agrees, read - :r0 = :scan_read AS statio_read_agrees
FROM io_statio('io_t');
-- again: now every block is in the block cache
SELECT hit > 10 AS all_hits, read = 0 AS no_reads FROM io_buffers('SELECT count(*) FROM io_t');

-- an index scan: the index's blocks count for the index, the rows' for the table
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT pg_stat_force_next_flush();
SELECT hit AS ih0, read AS ir0 FROM io_statio('io_k') \gset
SELECT hit AS th0, read AS tr0 FROM io_statio('io_t') \gset
SELECT hit AS q_hit, read AS q_read FROM io_buffers('SELECT sum(id) FROM io_t WHERE k = 7') \gset
SELECT pg_stat_force_next_flush();
SELECT (SELECT hit + read - :ih0 - :ir0 FROM io_statio('io_k')) > 0 AS index_blocks,
       (SELECT hit + read - :th0 - :tr0 FROM io_statio('io_t')) > 0 AS table_blocks,
       (SELECT hit + read - :ih0 - :ir0 FROM io_statio('io_k'))
       + (SELECT hit + read - :th0 - :tr0 FROM io_statio('io_t')) = :q_hit + :q_read AS explain_agrees;
RESET enable_seqscan;
RESET enable_bitmapscan;

--
-- CLUSTER and VACUUM FULL: pg_stat_progress_cluster, read from inside the
-- command (the index rebuild evaluates io_probe()), once
--
CREATE FUNCTION io_probe(x int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    r record;
BEGIN
    IF current_setting('io.probe', true) = 'on' THEN
        PERFORM set_config('io.probe', 'off', false);
        SELECT command, phase, heap_blks_total, heap_blks_scanned, heap_tuples_scanned, heap_tuples_written
        INTO r FROM pg_stat_progress_cluster WHERE pid = pg_backend_pid();
        RAISE WARNING 'progress: %', r;
    END IF;
    RETURN x;
END $$;
CREATE INDEX io_probe_idx ON io_t (io_probe(id));
DELETE FROM io_t WHERE id > 40000;
SELECT set_config('io.probe', 'on', false);
VACUUM FULL io_t;
-- by a btree index, sorting (a sequential pass, then the sort)
SET enable_indexscan = off;
SELECT set_config('io.probe', 'on', false);
CLUSTER io_t USING io_t_pkey;
RESET enable_indexscan;
-- by a tides_btree index, in index order (no block counts: no sequential pass)
SET enable_sort = off;
SELECT set_config('io.probe', 'on', false);
CLUSTER io_t USING io_k;
RESET enable_sort;
SELECT count(*), sum(id) FROM io_t;
SELECT * FROM pg_stat_progress_cluster WHERE pid = pg_backend_pid();

DROP TABLE io_t;
DROP FUNCTION io_buffers(text), io_statio(regclass), io_probe(int);
