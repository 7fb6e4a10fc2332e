# fuzz.mk -- libFuzzer targets for every on-disk reader of the engine: the
# one fuzz tree (test/fuzz/) and its one build folder (build/fuzz/).
# Included by the top-level Makefile.
#
#   make fuzz-build                 the targets (build/fuzz/fuzz_*)
#   make fuzz-smoke                 each target for FUZZ_SMOKE_SECONDS (15) from the seed corpus (CI)
#   make fuzz FUZZ_SECONDS=600      longer runs; new inputs accumulate in build/fuzz/work/<target>/
#   make fuzz-corpus                (re)generate the seed corpora (build/fuzz/seeds/<target>/)
#
# Needs clang with libFuzzer (Debian: clang-14 and libclang-rt-14-dev, which
# ships libclang_rt.fuzzer).  Targets: fuzz_sst (SSTable reader), fuzz_log
# (log records, batch decoding, log recovery), fuzz_manifest (edit decoder,
# manifest loading and recovery), fuzz_table (each table-layer parser on its
# own).  The engine is compiled for them with its assertions on
# (TIDES_ASSERTS).  Crashes are written to build/fuzz/artifacts/.

FUZZ_CC            ?= clang
FUZZ_SECONDS       ?= 600
FUZZ_SMOKE_SECONDS ?= 15
FUZZ_SAN           := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
                      -fno-sanitize-recover=undefined -DTIDES_ASSERTS
FUZZ_TARGETS       := fuzz_sst fuzz_log fuzz_manifest fuzz_table
FUZZ_BINS          := $(addprefix build/fuzz/,$(FUZZ_TARGETS))
FUZZ_ENGINE_OBJS   := $(patsubst $(ENGINE_DIR)/%.c,build/fuzz/engine/%.o,$(ENGINE_SRCS))
FUZZ_RUN_FLAGS     := -max_len=131072 -rss_limit_mb=2048 -timeout=20 -print_final_stats=1

build/fuzz/engine/%.o: $(ENGINE_DIR)/%.c $(wildcard $(ENGINE_DIR)/*.h $(ENGINE_DIR)/*/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(ENGINE_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -c $< -o $@

build/fuzz/libtides_engine_fuzz.a: $(FUZZ_ENGINE_OBJS)
	rm -f $@ && ar rcs $@ $^

build/fuzz/fuzz_%: test/fuzz/fuzz_%.c test/fuzz/memvfs.h build/fuzz/libtides_engine_fuzz.a
	$(FUZZ_CC) $(ENGINE_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -Itest/fuzz $< \
		build/fuzz/libtides_engine_fuzz.a $(ENGINE_LIBS) -o $@

build/fuzz/make_corpus: test/fuzz/make_corpus.c build/engine/libtides_engine.a
	@mkdir -p $(dir $@)
	$(CC) $(ENGINE_CFLAGS) $(ENGINE_OPT) $< build/engine/libtides_engine.a $(ENGINE_LIBS) -o $@

build/fuzz/seeds/.done: build/fuzz/make_corpus
	rm -rf build/fuzz/seeds
	build/fuzz/make_corpus build/fuzz/seeds
	touch $@

.PHONY: fuzz-build fuzz-corpus fuzz-smoke fuzz
fuzz-build: $(FUZZ_BINS)
fuzz-corpus: build/fuzz/seeds/.done

# one run per target: $(1) = seconds
define fuzz_run_all
	@mkdir -p build/fuzz/artifacts
	@pass=0; fail=0; for t in $(FUZZ_TARGETS); do \
	  c=$${t#fuzz_}; mkdir -p build/fuzz/work/$$c; \
	  echo "== $$t ($(1)s)"; \
	  if build/fuzz/$$t $(FUZZ_RUN_FLAGS) -max_total_time=$(1) \
	       -artifact_prefix=build/fuzz/artifacts/$$t- \
	       build/fuzz/work/$$c build/fuzz/seeds/$$c > build/fuzz/$$t.log 2>&1; then \
	    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)|^Done' build/fuzz/$$t.log | tr '\n' ' '; echo; \
	    pass=$$((pass+1)); \
	  else \
	    echo "FAIL $$t (log: build/fuzz/$$t.log)"; tail -n 40 build/fuzz/$$t.log; fail=$$((fail+1)); \
	  fi; \
	done; echo "fuzz: $$pass passed, $$fail failed"; [ $$fail -eq 0 ]
endef

fuzz-smoke: fuzz-build fuzz-corpus
	$(call fuzz_run_all,$(FUZZ_SMOKE_SECONDS))

fuzz: fuzz-build fuzz-corpus
	$(call fuzz_run_all,$(FUZZ_SECONDS))
