--
-- triggers: BEFORE and AFTER row triggers (AFTER triggers fetch the
-- row versions back by TID), statement triggers with transition tables,
-- deferred constraint triggers, on tides tables.
--
CREATE TABLE trg (id int PRIMARY KEY, v text, n int, touched int DEFAULT 0) USING tides;
CREATE TABLE trg_log (seq serial, tg text, op text, old_row text, new_row text) USING tides;

-- BEFORE ROW: change the new row, or skip the operation
CREATE FUNCTION trg_before() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.v = 'keep' THEN RETURN NULL; END IF;
        RETURN OLD;
    END IF;
    IF NEW.v = 'skip' THEN RETURN NULL; END IF;
    NEW.touched := NEW.touched + 1;
    NEW.v := upper(NEW.v);
    RETURN NEW;
END $$;
CREATE TRIGGER trg_b BEFORE INSERT OR UPDATE OR DELETE ON trg
    FOR EACH ROW EXECUTE FUNCTION trg_before();

-- AFTER ROW: log OLD and NEW as the executor fetched them after the change
CREATE FUNCTION trg_after() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO trg_log (tg, op, old_row, new_row)
    VALUES (TG_NAME, TG_OP,
            CASE WHEN TG_OP <> 'INSERT' THEN OLD::text END,
            CASE WHEN TG_OP <> 'DELETE' THEN NEW::text END);
    RETURN NULL;
END $$;
CREATE TRIGGER trg_a AFTER INSERT OR UPDATE OR DELETE ON trg
    FOR EACH ROW EXECUTE FUNCTION trg_after();

INSERT INTO trg (id, v, n) VALUES (1, 'one', 1), (2, 'two', 2), (3, 'skip', 3), (4, 'keep', 4);
SELECT * FROM trg ORDER BY id;
UPDATE trg SET v = 'uno', n = n + 10 WHERE id = 1;
UPDATE trg SET v = 'skip' WHERE id = 2;
DELETE FROM trg WHERE id IN (2, 4);
SELECT * FROM trg ORDER BY id;
SELECT tg, op, old_row, new_row FROM trg_log ORDER BY seq;
TRUNCATE trg_log;

-- AFTER ROW UPDATE with a WHEN condition, on many rows
CREATE TRIGGER trg_when AFTER UPDATE ON trg FOR EACH ROW
    WHEN (OLD.n IS DISTINCT FROM NEW.n) EXECUTE FUNCTION trg_after();
INSERT INTO trg (id, v, n) SELECT g, 'r' || g, g FROM generate_series(10, 209) g;
UPDATE trg SET n = n * 2 WHERE id >= 10 AND id % 2 = 0;
UPDATE trg SET v = v WHERE id >= 10 AND id % 2 = 1;
SELECT tg, op, count(*) FROM trg_log GROUP BY tg, op ORDER BY tg, op;
SELECT old_row, new_row FROM trg_log WHERE tg = 'trg_when' ORDER BY old_row COLLATE "C" LIMIT 3;
TRUNCATE trg_log;
DROP TRIGGER trg_when ON trg;

-- a BEFORE trigger that updates its own row through a second statement is
-- refused as in heap ("tuple to be updated was already modified")
CREATE TABLE trg_self (id int PRIMARY KEY, n int) USING tides;
INSERT INTO trg_self VALUES (1, 0);
CREATE FUNCTION trg_self_fn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE trg_self SET n = n + 100 WHERE id = NEW.id;
    RETURN NEW;
END $$;
CREATE TRIGGER trg_self_b BEFORE UPDATE ON trg_self FOR EACH ROW
    WHEN (pg_trigger_depth() = 0) EXECUTE FUNCTION trg_self_fn();
UPDATE trg_self SET n = n + 1 WHERE id = 1;
SELECT * FROM trg_self;
DROP TABLE trg_self;
DROP FUNCTION trg_self_fn();

-- statement triggers with transition tables
CREATE TABLE trg_stmt_log (seq serial, op text, old_count int, new_count int,
                           old_sum bigint, new_sum bigint) USING tides;
CREATE FUNCTION trg_stmt_ins() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO trg_stmt_log (op, new_count, new_sum)
    SELECT TG_OP, count(*), sum(n) FROM newtab;
    RETURN NULL;
END $$;
CREATE FUNCTION trg_stmt_upd() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO trg_stmt_log (op, old_count, new_count, old_sum, new_sum)
    SELECT TG_OP, (SELECT count(*) FROM oldtab), (SELECT count(*) FROM newtab),
           (SELECT sum(n) FROM oldtab), (SELECT sum(n) FROM newtab);
    RETURN NULL;
END $$;
CREATE FUNCTION trg_stmt_del() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO trg_stmt_log (op, old_count, old_sum)
    SELECT TG_OP, count(*), sum(n) FROM oldtab;
    RETURN NULL;
END $$;
CREATE TRIGGER trg_s_ins AFTER INSERT ON trg REFERENCING NEW TABLE AS newtab
    FOR EACH STATEMENT EXECUTE FUNCTION trg_stmt_ins();
CREATE TRIGGER trg_s_upd AFTER UPDATE ON trg REFERENCING OLD TABLE AS oldtab NEW TABLE AS newtab
    FOR EACH STATEMENT EXECUTE FUNCTION trg_stmt_upd();
CREATE TRIGGER trg_s_del AFTER DELETE ON trg REFERENCING OLD TABLE AS oldtab
    FOR EACH STATEMENT EXECUTE FUNCTION trg_stmt_del();
INSERT INTO trg (id, v, n) SELECT g, 's' || g, 1 FROM generate_series(1000, 1099) g;
UPDATE trg SET n = n + 5 WHERE id BETWEEN 1000 AND 1049;
UPDATE trg SET n = n + 5 WHERE id = -1;
DELETE FROM trg WHERE id BETWEEN 1090 AND 1099;
INSERT INTO trg (id, v, n) VALUES (1000, 'conflict', 0)
    ON CONFLICT (id) DO UPDATE SET n = trg.n + 1000;
COPY trg (id, v, n) FROM STDIN;
2000	copied	7
2001	copied	8
\.
SELECT op, old_count, new_count, old_sum, new_sum FROM trg_stmt_log ORDER BY seq;
SELECT op, count(*) FROM trg_log GROUP BY op ORDER BY op;

-- deferred constraint trigger: fires at commit, sees the final rows
CREATE FUNCTION trg_deferred() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE cur int;
BEGIN
    SELECT n INTO cur FROM trg WHERE id = NEW.id;
    INSERT INTO trg_log (tg, op, new_row) VALUES (TG_NAME, TG_OP, 'now ' || cur);
    RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER trg_def AFTER UPDATE ON trg
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION trg_deferred();
TRUNCATE trg_log;
BEGIN;
UPDATE trg SET n = 1 WHERE id = 1;
UPDATE trg SET n = 2 WHERE id = 1;
UPDATE trg SET n = 3 WHERE id = 1;
SELECT count(*) FROM trg_log WHERE tg = 'trg_def';
COMMIT;
SELECT tg, op, new_row FROM trg_log WHERE tg = 'trg_def' ORDER BY seq;
-- a deferred trigger whose transaction rolls back never fires
BEGIN;
UPDATE trg SET n = 4 WHERE id = 1;
ROLLBACK;
SELECT count(*) FROM trg_log WHERE tg = 'trg_def';
SELECT * FROM trg WHERE id = 1;

DROP TABLE trg, trg_log, trg_stmt_log;
DROP FUNCTION trg_before(), trg_after(), trg_stmt_ins(), trg_stmt_upd(), trg_stmt_del(), trg_deferred();
