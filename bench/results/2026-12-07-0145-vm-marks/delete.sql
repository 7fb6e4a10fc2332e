\set id random(1, 30000)
DELETE FROM vm WHERE id = :id;
