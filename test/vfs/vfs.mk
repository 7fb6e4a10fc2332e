# vfs.mk -- the test file systems (test/vfs/), built as a static library.
# Included by test/engine/tests.mk.
#
#   vfs_fault   fault injection and simulated OS crashes (engine tests)
#   vfs_keep    unsynced log writes kept in shared memory (crash tests)
#
# They wrap the engine's tides_vfs and use a few engine internals (util/lock.h,
# util/random.h), so they compile with the engine's include line; but they are
# test code: never in libtides_engine.a, never in tidesam.so
# (scripts/check_layers.sh checks the latter).

TEST_VFS_DIR      := test/vfs
TEST_VFS_SRCS     := $(sort $(wildcard $(TEST_VFS_DIR)/*.c))
TEST_VFS_SAN_OBJS := $(patsubst $(TEST_VFS_DIR)/%.c,build/test-vfs-san/%.o,$(TEST_VFS_SRCS))
TEST_VFS_SAN_LIB  := build/test-vfs-san/libtides_test_vfs.a

build/test-vfs-san/%.o: $(TEST_VFS_DIR)/%.c $(wildcard $(TEST_VFS_DIR)/*.h $(ENGINE_DIR)/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ENGINE_CFLAGS) $(ENGINE_SAN) -I$(TEST_VFS_DIR) -c $< -o $@

$(TEST_VFS_SAN_LIB): $(TEST_VFS_SAN_OBJS)
	rm -f $@ && ar rcs $@ $^
