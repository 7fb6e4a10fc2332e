INSERT INTO vm VALUES (nextval('vm_next'), currval('vm_next'), 'new');
