# tests.mk -- engine test programs.  Every test/engine/test_*.c is one
# program, linked against the sanitizer build of the engine.  engine-check
# runs them all and prints one "PASS name" / "FAIL name" line per program.

ENGINE_TEST_SRCS := $(sort $(wildcard test/engine/test_*.c))
ENGINE_TESTS     := $(patsubst test/engine/%.c,build/test/%,$(ENGINE_TEST_SRCS))
ENGINE_TEST_LIB  := test/engine/testlib.c

build/test/%: test/engine/%.c $(ENGINE_TEST_LIB) test/engine/testlib.h build/engine-san/libtides_engine.a
	@mkdir -p $(dir $@)
	$(CC) $(ENGINE_CFLAGS) $(ENGINE_SAN) -Itest/engine $< $(ENGINE_TEST_LIB) \
		build/engine-san/libtides_engine.a $(ENGINE_LIBS) -o $@

.PHONY: engine-tests engine-check
engine-tests: $(ENGINE_TESTS)

engine-check: engine-tests
	@bash test/engine/run.sh $(ENGINE_TESTS)
