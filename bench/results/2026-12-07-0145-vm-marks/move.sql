\set id random(1, 30000)
UPDATE vm SET k = k + 100000 WHERE id = :id;
