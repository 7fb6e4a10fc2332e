BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SET LOCAL enable_indexscan = off;
SELECT count(*) AS ios_n FROM vm WHERE k > -1000000 \gset
SET LOCAL enable_indexonlyscan = off;
SET LOCAL enable_bitmapscan = on;
SELECT count(*) AS bm_n FROM vm WHERE k > -1000000 \gset
SET LOCAL enable_bitmapscan = off;
SET LOCAL enable_indexscan = on;
SELECT count(*) AS is_n FROM vm WHERE k > -1000000 \gset
SET LOCAL enable_seqscan = on;
SET LOCAL enable_indexscan = off;
SELECT count(*) AS seq_n FROM vm \gset
SELECT count(*) AS ts_n FROM vm TABLESAMPLE SYSTEM (100) \gset
COMMIT;
INSERT INTO res VALUES (:ios_n, :is_n, :seq_n, :ts_n, :bm_n);
