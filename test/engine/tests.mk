# tests.mk -- engine test programs.  Every test/engine/test_*.c is one
# program, linked against the sanitizer build of the engine.  engine-check
# runs them all and prints one "PASS name" / "FAIL name" line per program.
# Programs that need a test file system link test/vfs (vfs.mk).

include test/vfs/vfs.mk

ENGINE_TEST_SRCS := $(sort $(wildcard test/engine/test_*.c))
ENGINE_TESTS     := $(patsubst test/engine/%.c,build/test/%,$(ENGINE_TEST_SRCS))
ENGINE_TEST_LIB  := test/engine/testlib.c

# extra link flags of one program: ENGINE_TEST_LDFLAGS_<program>
ENGINE_TEST_LDFLAGS_test_oom := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc

build/test/%: test/engine/%.c $(ENGINE_TEST_LIB) $(wildcard test/engine/*.h) \
		$(TEST_VFS_SAN_LIB) build/engine-san/libtides_engine.a
	@mkdir -p $(dir $@)
	$(CC) $(ENGINE_CFLAGS) $(ENGINE_SAN) -Itest/engine -I$(TEST_VFS_DIR) $< $(ENGINE_TEST_LIB) \
		$(TEST_VFS_SAN_LIB) build/engine-san/libtides_engine.a $(ENGINE_LIBS) \
		$(ENGINE_TEST_LDFLAGS_$*) -o $@

.PHONY: engine-tests engine-check
engine-tests: $(ENGINE_TESTS)

engine-check: engine-tests
	@bash test/engine/run.sh $(ENGINE_TESTS)

# Longer randomized runs of the model, crash, multi-process and corruption
# tests (many more crash points, operations and seeds than engine-check).
# E.g.: make engine-soak SOAK_SEEDS="1 2 3 4 5 6 7 8"
SOAK_SEEDS         ?= 1 2 3
SOAK_CRASH_POINTS  ?= 2000
SOAK_MODEL_OPS     ?= 3000000

.PHONY: engine-soak
engine-soak: engine-tests
	@set -e; for s in $(SOAK_SEEDS); do \
	  echo "== seed $$s"; \
	  TEST_SEED=$$s TEST_CRASH_POINTS=$(SOAK_CRASH_POINTS) bash test/engine/run.sh build/test/test_crash; \
	  TEST_SEED=$$s TEST_OPS=$(SOAK_MODEL_OPS) bash test/engine/run.sh build/test/test_model; \
	  TEST_SEED=$$s TEST_OPS=150000 bash test/engine/run.sh build/test/test_multiproc; \
	  TEST_SEED=$$s TEST_CORRUPTION_ROUNDS=1500 bash test/engine/run.sh build/test/test_corruption; \
	  TEST_SEED=$$s bash test/engine/run.sh build/test/test_fault build/test/test_skiplist build/test/test_log; \
	done
