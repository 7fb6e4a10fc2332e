# bench/pg/bench.mk -- benchmark targets.  The top-level Makefile includes
# this file with the line
#
#     include bench/pg/bench.mk
#
#   make bench         tides vs heap, every comparison (about 40 min on the
#                      2-core project machine): bench/results/pg_*.csv,
#                      pg_*.png, pg_summary.md
#   make bench-quick   the same, small and short (a few minutes):
#                      bench/results/pg_quick_*
#   make bench-kv      the engine against RocksDB (bench/kv, ~15-25 min)
#   make bench-load-ab REV=<rev> [PAIRS=4]
#                      one session's load into the Insert Benchmark's table,
#                      this tree against REV, alternating (a few minutes):
#                      bench/results/load_ab.csv
#   make bench-index-build [ROWS=2000000] [ROUNDS=3]
#                      CREATE INDEX, tides_btree against heap's btree,
#                      serial and parallel (a few minutes):
#                      bench/results/index_build.csv
#
# bench and bench-quick build the extension, install it into a private copy
# of the PostgreSQL installation under build/pg-private (so nobody's
# `make install` can swap the build under test mid-run; BENCH_PG=system uses
# the system installation instead) and run as root (initdb runs as postgres,
# data directories go on loop devices).  See bench/pg/README.md.

BENCH_PG_DIR := $(dir $(lastword $(MAKEFILE_LIST)))

.PHONY: bench bench-quick bench-kv bench-load-ab bench-index-build

bench:
	$(MAKE) all
	bash $(BENCH_PG_DIR)run.sh full

bench-quick:
	$(MAKE) all
	bash $(BENCH_PG_DIR)run.sh quick

bench-kv:
	$(MAKE) engine
	$(MAKE) -C bench/kv run

bench-load-ab:
	bash $(BENCH_PG_DIR)load_ab.sh $(REV) $(or $(PAIRS),4)

bench-index-build:
	bash $(BENCH_PG_DIR)index_build.sh $(or $(ROWS),2000000) $(or $(ROUNDS),3)
