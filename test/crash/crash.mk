# crash.mk -- crash, wraparound and fault tests (test/crash/README.md).
# Included by the top-level Makefile:  include test/crash/crash.mk
#
#   make crash-check   CI size (7-8 minutes on 2 cores; the crash loop alone ~6): vfs_keep unit test,
#                      20 kill -9 cycles per sync mode x {kill, keep}, the
#                      wraparound test, the fault tests
#   make crash-soak    the same with 300 cycles per sync mode and variant
#   make crash-bench   commit rates per sync mode and recovery time (RESULTS.md)
#
# Each builds the extension first; the tests start their own servers from a
# private installation (test/harness: TIDES_PG_BINDIR, else one made from
# this tree), never the system's.  Needs root or a user that may run
# PostgreSQL; ends with "crash-<target>: P passed, F failed".

.PHONY: crash-check crash-soak crash-bench

# unit test of the keep-unsynced vfs (test/vfs/vfs_keep.c), run first by run.sh
build/crash/test_vfs_keep: test/crash/test_vfs_keep.c $(TEST_VFS_SAN_LIB) build/engine-san/libtides_engine.a
	@mkdir -p $(dir $@)
	$(CC) $(ENGINE_CFLAGS) $(ENGINE_SAN) -I$(TEST_VFS_DIR) $< $(TEST_VFS_SAN_LIB) \
		build/engine-san/libtides_engine.a $(ENGINE_LIBS) -o $@

crash-check: all
	bash test/crash/run.sh check

crash-soak: all
	bash test/crash/run.sh soak

crash-bench: all
	bash test/crash/run.sh bench
