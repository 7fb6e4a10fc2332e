BEGIN;
INSERT INTO t1 (dateandtime, cashregisterid, customerid, productid, price, data) SELECT now(), floor(random() * 1000)::int, floor(random() * 100000)::int, floor(random() * 10000)::int, floor(random() * 500)::int, substr(md5(random()::text), 1, 10) FROM generate_series(1, 50);
SELECT min(transactionid) AS lo FROM t1 \gset
DELETE FROM t1 WHERE transactionid >= :lo AND transactionid < :lo::bigint + 50;
END;
