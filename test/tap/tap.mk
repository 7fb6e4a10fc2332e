# test/tap/tap.mk -- the TAP tests (test/tap/README.md)
#
#   make tap-check          every test in test/tap/t (also suite 'tap' of scripts/test.sh)
#   make replication-soak   the 10-minute run of issue 14: pgbench on a primary with a
#                           streaming standby, three base backups restored and checked,
#                           a promote at the end (SOAK_SECONDS=600); not in CI

.PHONY: tap-check replication-soak
tap-check: all
	bash test/tap/run.sh

replication-soak: all
	SOAK_SECONDS=$${SOAK_SECONDS:-600} PG_TEST_TIMEOUT_DEFAULT=600 bash test/tap/run.sh soak/replication_soak.pl
