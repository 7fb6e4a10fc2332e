--
-- scan_cursor: cursors on a tides table that scroll backwards (the access
-- method's backward scan), keep their snapshot, and WITH HOLD cursors.
--
--
-- cursors that scroll backwards through a sequential scan.  No ORDER BY
-- on purpose: the backward direction is the access method's.  A table
-- loaded once, without updates, returns rows in insertion order (heap too).
--
CREATE TABLE sc_cur (id int, v text) USING tides;
INSERT INTO sc_cur SELECT g, 'v' || g FROM generate_series(1, 10) g;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT * FROM sc_cur;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH PRIOR FROM c;
FETCH PRIOR FROM c;
FETCH NEXT FROM c;
FETCH ABSOLUTE 7 FROM c;
FETCH RELATIVE -3 FROM c;
FETCH LAST FROM c;
FETCH NEXT FROM c;
FETCH BACKWARD ALL FROM c;
FETCH FORWARD ALL FROM c;
MOVE ABSOLUTE 0 IN c;
FETCH 2 FROM c;
CLOSE c;
-- a scrollable cursor keeps its snapshot while the table changes
DECLARE c2 SCROLL CURSOR FOR SELECT * FROM sc_cur;
FETCH 2 FROM c2;
UPDATE sc_cur SET v = 'changed' WHERE id <= 5;
DELETE FROM sc_cur WHERE id > 8;
FETCH BACKWARD 2 FROM c2;
FETCH LAST FROM c2;
FETCH BACKWARD 3 FROM c2;
COMMIT;
-- WITH HOLD cursor: materialized at commit, scrolls after it
BEGIN;
DECLARE ch SCROLL CURSOR WITH HOLD FOR SELECT * FROM sc_cur ORDER BY id;
COMMIT;
FETCH LAST FROM ch;
FETCH BACKWARD 3 FROM ch;
CLOSE ch;
RESET ALL;


DROP TABLE sc_cur;
