# tidesam -- top-level build.
#
#   make engine          standalone engine library (build/engine/)
#   make engine-check    engine unit and model tests under ASan/UBSan
#   make                 the PostgreSQL extension (PGXS)
#   make install         install the extension into the server found by pg_config
#   make installcheck    the extension's pg_regress tests (needs a running server)
#
# See README.md for the full test and benchmark commands.

include src/engine/engine.mk
include test/engine/tests.mk

PG_CONFIG ?= pg_config
