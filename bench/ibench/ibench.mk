# bench/ibench/ibench.mk -- the Insert Benchmark.  The top-level Makefile
# includes this file with the line
#
#     include bench/ibench/ibench.mk
#
#   make ibench         heap, tides and tides_btree, IO-bound under a 256 MB
#                       memory cap and cached, < 60 min on the 2-CPU project
#                       machine: bench/results/ibench_*
#   make ibench-quick   the same, small cap and small data (a few minutes):
#                       bench/results/ibench_quick_*
#
# Root only (memory cgroups, loop devices).  See bench/ibench/README.md.

IBENCH_DIR := $(dir $(lastword $(MAKEFILE_LIST)))

.PHONY: ibench ibench-quick

ibench:
	$(MAKE) all
	bash $(IBENCH_DIR)run.sh full

ibench-quick:
	$(MAKE) all
	bash $(IBENCH_DIR)run.sh quick
