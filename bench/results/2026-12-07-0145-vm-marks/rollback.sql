\set id random(1, 30000)
BEGIN;
UPDATE vm SET k = -k WHERE id = :id;
INSERT INTO vm VALUES (-:id, -1, 'aborted');
ROLLBACK;
