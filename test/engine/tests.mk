# tests.mk -- engine test programs.  Every test/engine/test_*.c is one
# program, linked against the sanitizer build of the engine.  engine-check
# runs them all and prints one "PASS name" / "FAIL name" line per program.

ENGINE_TEST_SRCS := $(sort $(wildcard test/engine/test_*.c))
ENGINE_TESTS     := $(patsubst test/engine/%.c,build/test/%,$(ENGINE_TEST_SRCS))
ENGINE_TEST_LIB  := test/engine/testlib.c

build/test/%: test/engine/%.c $(ENGINE_TEST_LIB) $(wildcard test/engine/*.h) build/engine-san/libtides_engine.a
	@mkdir -p $(dir $@)
	$(CC) $(ENGINE_CFLAGS) $(ENGINE_SAN) -Itest/engine $< $(ENGINE_TEST_LIB) \
		build/engine-san/libtides_engine.a $(ENGINE_LIBS) -o $@

.PHONY: engine-tests engine-check
engine-tests: $(ENGINE_TESTS)

engine-check: engine-tests
	@bash test/engine/run.sh $(ENGINE_TESTS)

# Fuzz targets (libFuzzer, clang).  They compile the engine parts they need
# from source, so a half-finished file elsewhere in the engine cannot break
# them.  Run e.g.: build/fuzz/fuzz_table -max_total_time=60 build/fuzz/corpus
FUZZ_ENGINE_SRCS := $(wildcard src/engine/table/*.c src/engine/cache/*.c src/engine/util/*.c)
FUZZ_CC          ?= clang

build/fuzz/%: test/engine/fuzz/%.c $(FUZZ_ENGINE_SRCS) $(wildcard src/engine/*/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -I$(ENGINE_DIR) $< $(FUZZ_ENGINE_SRCS) \
		$(ENGINE_LIBS) -o $@

# seed corpus: valid inputs for every parser
build/fuzz/make_seeds: test/engine/fuzz/make_seeds.c build/engine/libtides_engine.a
	@mkdir -p $(dir $@)
	$(CC) $(ENGINE_CFLAGS) -O1 $< build/engine/libtides_engine.a $(ENGINE_LIBS) -o $@

.PHONY: engine-fuzz
engine-fuzz: build/fuzz/fuzz_table build/fuzz/make_seeds
	@mkdir -p build/fuzz/corpus && build/fuzz/make_seeds build/fuzz/corpus
