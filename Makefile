# tidesam -- top-level build.
#
#   make engine          standalone engine library (build/engine/)
#   make engine-check    engine unit and model tests under ASan/UBSan
#   make                 the PostgreSQL extension (PGXS)
#   make install         install the extension into the server found by pg_config
#   make installcheck    the extension's pg_regress tests (needs a running server)
#   make deb             the Debian package postgresql-15-tidesam (build/deb/)
#   make deb-test        install that package in a fresh Debian chroot, CREATE EXTENSION
#
# See README.md for the full test and benchmark commands.

include src/engine/engine.mk
include test/engine/tests.mk
include test/fuzz/fuzz.mk
include test/crash/crash.mk
include bench/pg/bench.mk
include test/tap/tap.mk
include bench/ibench/ibench.mk

PG_CONFIG ?= pg_config

# ---- the PostgreSQL extension (PGXS)

MODULE_big = tidesam
EXTENSION  = tidesam
# every version's script: the base tidesam--1.0.sql and the update chain
# tidesam--A--B.sql (a version without a base script is installed by the chain)
DATA       = $(sort $(wildcard tidesam--*.sql))
PGFILEDESC = "tidesam - LSM table access method"

# the layers, bottom up: runtime -> am, index -> module (ARCHITECTURE.md)
TIDES_PG_SRCS := $(sort $(wildcard src/runtime/*.c src/am/*.c src/index/*.c src/module/*.c))
OBJS = $(TIDES_PG_SRCS:.c=.o) $(ENGINE_SRCS:.c=.o)

# every include line names its layer: "runtime/trt.h", "am/tam.h", "index/tidx.h";
# of the engine only its public API, tides_engine.h, is visible
PG_CPPFLAGS = -Isrc/engine/include -Isrc
PG_CFLAGS   = -std=gnu11 -Wno-declaration-after-statement
SHLIB_LINK  = -llz4 -lzstd

# make installcheck runs every sql/*.sql except those that need the server
# restarted or crashed between them: a *_restart or *_crash test and every
# test with its prefix before "_<digit>" (twophase_1 leaves prepared
# transactions for twophase_2_restart).  test/ext/run.sh runs them all, those
# around a restart and a crash.  NO_LOCALE: the database is created with the
# C locale whatever the server's default (the expected files are in C order).
TIDES_REGRESS_ALL := $(patsubst sql/%.sql,%,$(sort $(wildcard sql/*.sql)))
TIDES_REGRESS_HARNESS := $(shell printf '%s\n' $(TIDES_REGRESS_ALL) | awk '{ p = $$0; sub(/_[0-9].*$$/, "", p); t[NR] = $$0; pre[NR] = p } /_(restart|crash)$$/ { h[p] = 1 } END { for (i = 1; i <= NR; i++) if (pre[i] in h) print t[i] }')
REGRESS      = $(filter-out $(TIDES_REGRESS_HARNESS),$(TIDES_REGRESS_ALL))
REGRESS_OPTS = --load-extension=tidesam --temp-config=test/regress.conf
NO_LOCALE    = 1

# no LLVM bitcode: the JIT never inlines access method code
override with_llvm = no
# rebuild objects when headers change
override autodepend = yes

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS names an object's dependency file after its source's base name
# (.deps/ingest.Po), so of two sources with one name (src/engine/db/ingest.c
# and src/runtime/ingest.c, the two checkpoint.c) only the last compiled
# keeps its header list, and a header change no longer rebuilds the other
# (a tree built before the header changed then links objects of two layouts).
# One dependency file per source path instead, in the same directory.
%.o : %.c
	@if test ! -d $(DEPDIR); then mkdir -p $(DEPDIR); fi
	$(COMPILE.c) -o $@ $< -MMD -MP -MF $(DEPDIR)/$(subst /,__,$*).Po

# ---- packaging (debian/, META.json; see debian/README.Debian)

.PHONY: deb deb-test meta-check
deb:
	bash test/packaging/build_deb.sh
deb-test:
	bash test/packaging/deb_chroot.sh
meta-check:
	python3 test/packaging/check_meta.py

# engine objects built for the extension use the engine's own warnings
$(ENGINE_SRCS:.c=.o): CFLAGS += -Wno-missing-prototypes

# ---- tidesam_keepvfs, a test module (test/crash/keepvfs/README.md)
#
# The keep-unsynced test file system (test/vfs/vfs_keep.c) as a server module
# of its own, so that tidesam.so holds no test file system; the crash tests
# preload it after tidesam.  PGXS builds one MODULE_big, so these are plain
# rules with PGXS's flags; it is built and installed with tidesam.
KEEPVFS_SO   := test/crash/keepvfs/tidesam_keepvfs$(DLSUFFIX)
KEEPVFS_OBJS := test/crash/keepvfs/keepvfs.o test/vfs/vfs_keep.o

test/crash/keepvfs/keepvfs.o: CPPFLAGS += -Itest/vfs
test/vfs/vfs_keep.o: CFLAGS += $(ENGINE_INCLUDES)

$(KEEPVFS_SO): $(KEEPVFS_OBJS)
	$(CC) $(CFLAGS) -shared -o $@ $(KEEPVFS_OBJS) $(LDFLAGS) $(LDFLAGS_SL)

.PHONY: keepvfs install-keepvfs uninstall-keepvfs clean-keepvfs
keepvfs: $(KEEPVFS_SO)
all: keepvfs
install: install-keepvfs
install-keepvfs: $(KEEPVFS_SO) installdirs
	$(INSTALL_SHLIB) $(KEEPVFS_SO) '$(DESTDIR)$(pkglibdir)/'
uninstall: uninstall-keepvfs
uninstall-keepvfs:
	rm -f '$(DESTDIR)$(pkglibdir)/tidesam_keepvfs$(DLSUFFIX)'
clean: clean-keepvfs
clean-keepvfs:
	rm -f $(KEEPVFS_SO) $(KEEPVFS_OBJS)

.DEFAULT_GOAL := all
