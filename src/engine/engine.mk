# engine.mk -- how the standalone engine library and its tests are built.
# Included by the top-level Makefile.  The engine has no PostgreSQL
# dependency except PostgreSQL's crc32c routine from libpgport.
#
# The boundary: src/engine/include/tides_engine.h is the public API and the
# only engine header a user of the engine (the extension, bench/kv) may see;
# its include line names src/engine/include alone.  The engine's own sources
# and its white-box tests also see the internal headers (ENGINE_INCLUDES).

ENGINE_DIR      := src/engine
ENGINE_SRCS     := $(sort $(wildcard $(ENGINE_DIR)/*/*.c))
PG_LIBDIR       := $(shell pg_config --pkglibdir 2>/dev/null || echo /usr/lib/postgresql/15/lib)
ENGINE_LIBS     := -llz4 -lzstd -lpthread -lm $(PG_LIBDIR)/libpgport_shlib.a

ENGINE_INCLUDES := -I$(ENGINE_DIR)/include -I$(ENGINE_DIR)
ENGINE_CFLAGS   := -std=gnu11 -g -Wall -Wextra -Wno-unused-parameter -Wshadow \
                   -Wmissing-prototypes -Wstrict-prototypes $(ENGINE_INCLUDES) -fPIC
ENGINE_OPT      := -O2
# the sanitizer build also turns the engine's assertions on (util/assert.h)
ENGINE_SAN      := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
                   -fno-sanitize-recover=undefined -DTIDES_ASSERTS

ENGINE_OBJS      := $(patsubst $(ENGINE_DIR)/%.c,build/engine/%.o,$(ENGINE_SRCS))
ENGINE_SAN_OBJS  := $(patsubst $(ENGINE_DIR)/%.c,build/engine-san/%.o,$(ENGINE_SRCS))

build/engine/%.o: $(ENGINE_DIR)/%.c $(wildcard $(ENGINE_DIR)/*.h $(ENGINE_DIR)/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ENGINE_CFLAGS) $(ENGINE_OPT) -c $< -o $@

build/engine-san/%.o: $(ENGINE_DIR)/%.c $(wildcard $(ENGINE_DIR)/*.h $(ENGINE_DIR)/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(ENGINE_CFLAGS) $(ENGINE_SAN) -c $< -o $@

build/engine/libtides_engine.a: $(ENGINE_OBJS)
	rm -f $@ && ar rcs $@ $^

build/engine-san/libtides_engine.a: $(ENGINE_SAN_OBJS)
	rm -f $@ && ar rcs $@ $^

# The extension compiles the engine sources itself (OBJS in the top-level
# Makefile, with PGXS flags); only those objects get the internal headers.
$(ENGINE_SRCS:.c=.o): CFLAGS += $(ENGINE_INCLUDES)

.PHONY: engine engine-san
engine: build/engine/libtides_engine.a
engine-san: build/engine-san/libtides_engine.a
