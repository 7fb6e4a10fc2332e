-- CREATE EXTENSION without shared_preload_libraries: an error that says how to fix it
CREATE EXTENSION tidesam;
-- and again in the same session (PostgreSQL keeps a library loaded even
-- when its _PG_init failed)
CREATE EXTENSION tidesam;
SELECT count(*) FROM pg_extension WHERE extname = 'tidesam';
