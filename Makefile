# pisessionfs build.
# src/ is the core library and is compiled WITHOUT fuse3 flags, so any
# accidental #include <fuse.h> there fails the build (the squashfuse split).

CC       ?= cc
PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
MANDIR   ?= $(PREFIX)/share/man
# The systemd user unit: systemctl --user looks in /usr/lib/systemd/user and
# /usr/local/lib/systemd/user (systemd.unit(5)).
USERUNITDIR ?= $(PREFIX)/lib/systemd/user
VERSION  := 0.1.0
CSTD     := -std=c11 -D_GNU_SOURCE
# Warnings are errors where the code is worked on: in a git checkout (and
# run-tests.sh, what CI runs, sets WERROR=1), so none gets in.  A release
# tarball, which distributions build with compilers newer than ours, warns
# and builds (WERROR=0).  Either can be asked for: make WERROR=0 / WERROR=1.
WERROR   ?= $(if $(wildcard $(dir $(firstword $(MAKEFILE_LIST))).git),1,0)
WARN     := -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror) -Wshadow -Wstrict-prototypes -Wmissing-prototypes
OPT      ?= -O2 -g
CFLAGS   ?=
LDFLAGS  ?=

ifeq ($(SANITIZE),1)
OPT      := -O1 -g -fno-omit-frame-pointer
SANFLAGS := -fsanitize=address,undefined,leak -fno-sanitize-recover=undefined
# src/lockorder.h: the lock order is asserted where the bugs are hunted.
DEBUGFLAGS := -DPSFS_LOCKORDER
endif
# SANITIZE=thread: ThreadSanitizer, for the daemon's threads (libfuse's
# workers, the watcher, the sizers); run-tests.sh runs the mount tests so.
ifeq ($(SANITIZE),thread)
OPT      := -O1 -g -fno-omit-frame-pointer
SANFLAGS := -fsanitize=thread
DEBUGFLAGS := -DPSFS_LOCKORDER
# jansson's reference counting as the C11 model wants it (tests/tsan/jansson.h):
# the entry cache's trees are dropped by several threads.
SANINC   := -Itests/tsan
endif

JANSSON_CFLAGS := $(shell pkg-config --cflags jansson)
JANSSON_LIBS   := $(shell pkg-config --libs jansson)
UUID_CFLAGS    := $(shell pkg-config --cflags uuid)
UUID_LIBS      := $(shell pkg-config --libs uuid)
PCRE2_CFLAGS   := $(shell pkg-config --cflags libpcre2-8)
PCRE2_LIBS     := $(shell pkg-config --libs libpcre2-8)
SQLITE_CFLAGS  := $(shell pkg-config --cflags sqlite3)
SQLITE_LIBS    := $(shell pkg-config --libs sqlite3)
FUSE_CFLAGS    := $(shell pkg-config --cflags fuse3)
FUSE_LIBS      := $(shell pkg-config --libs fuse3)
# Check is for the unit tests only: asked for when a rule that uses it runs
# (then once), so that building the daemon on a machine without Check
# (quickstart.sh installs no test packages) prints no pkg-config error.
CHECK_CFLAGS    = $(eval CHECK_CFLAGS := $$(shell pkg-config --cflags check))$(CHECK_CFLAGS)
CHECK_LIBS      = $(eval CHECK_LIBS := $$(shell pkg-config --libs check))$(CHECK_LIBS)

BUILD    ?= build
# Sanitized objects must never mix with plain ones.
ifeq ($(SANITIZE),1)
BUILD    := $(BUILD)/asan
endif
ifeq ($(SANITIZE),thread)
BUILD    := $(BUILD)/tsan
endif
# -MMD -MP: each object gets a dependency file (build/.../x.d) listing the
# headers it includes, so a changed header rebuilds exactly what uses it;
# -MP keeps a removed header from stopping the build.
DEPFLAGS := -MMD -MP
# An object without its dependency file (built before this Makefile wrote
# them) is rebuilt once, so that no header change goes unseen.
.SECONDEXPANSION:
NO_DEPFILE = $$(if $$(wildcard $$(basename $$@).d),,FORCE)
.PHONY: FORCE
CORE_CFLAGS := $(CSTD) $(WARN) $(OPT) $(SANFLAGS) $(DEBUGFLAGS) $(DEPFLAGS) $(SANINC) $(JANSSON_CFLAGS) $(UUID_CFLAGS) $(PCRE2_CFLAGS) $(SQLITE_CFLAGS) -DPS_VERSION=\"$(VERSION)\" $(CFLAGS)
FS_CFLAGS   := $(CORE_CFLAGS) $(FUSE_CFLAGS) -Isrc
LIBS_CORE   := $(JANSSON_LIBS) $(UUID_LIBS) $(PCRE2_LIBS) $(SQLITE_LIBS) -lpthread -lm

# src/*.c only: src/cli/ is the pisession program, built on the library, not in it.
CORE_SRC := $(wildcard src/*.c)
CORE_OBJ := $(patsubst src/%.c,$(BUILD)/src/%.o,$(CORE_SRC))
FS_SRC   := $(wildcard fs/*.c)
FS_OBJ   := $(patsubst fs/%.c,$(BUILD)/fs/%.o,$(FS_SRC))
UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_OBJ := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%.o,$(UNIT_SRC))
# The front end's unit tests (tests/unit/fs/): modules of fs/ that run
# without a FUSE session, linked from an archive of fs/'s objects (all
# but main.o), so a test pulls in only the objects it calls into.
FS_UNIT_SRC := $(wildcard tests/unit/fs/*.c)
FS_UNIT_OBJ := $(patsubst tests/unit/fs/%.c,$(BUILD)/tests/unit/fs/%.o,$(FS_UNIT_SRC))

LIBCORE  := $(BUILD)/libpisession.a
DAEMON   := $(BUILD)/pisessionfs
TOOL     := $(BUILD)/pisession
UNIT     := $(BUILD)/unit-tests
LIBFS    := $(BUILD)/libpsfs.a
FS_UNIT  := $(BUILD)/fs-unit-tests
# A passthrough FUSE file system for the mount tests: a store on it gets no
# inotify events for changes made underneath (tests/mount/t_nonotify.sh).
HELPER   := $(BUILD)/tests/passthrough-store

.PHONY: all check check-unit check-includes check-fs-deps check-golden check-manpages check-alloc check-runner check-mount check-diff check-diff-search check-diff-fork check-diff-tree check-diff-forkfrom check-interop clean install uninstall bench

all: $(DAEMON) $(TOOL)

$(BUILD)/src/%.o: src/%.c $(NO_DEPFILE) | $(BUILD)/src
	$(CC) $(CORE_CFLAGS) -c $< -o $@

$(BUILD)/fs/%.o: fs/%.c $(NO_DEPFILE) | $(BUILD)/fs
	$(CC) $(FS_CFLAGS) -c $< -o $@

$(BUILD)/tests/unit/%.o: tests/unit/%.c $(NO_DEPFILE) | $(BUILD)/tests/unit
	$(CC) $(CORE_CFLAGS) $(CHECK_CFLAGS) -Isrc -c $< -o $@

$(BUILD)/tests/unit/fs/%.o: tests/unit/fs/%.c $(NO_DEPFILE) | $(BUILD)/tests/unit/fs
	$(CC) $(FS_CFLAGS) $(CHECK_CFLAGS) -Ifs -Itests/unit -c $< -o $@

$(LIBCORE): $(CORE_OBJ)
	ar rcs $@ $^

$(LIBFS): $(filter-out $(BUILD)/fs/main.o,$(FS_OBJ))
	rm -f $@
	ar rcs $@ $^

$(DAEMON): $(FS_OBJ) $(LIBCORE)
	$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $(FS_OBJ) $(LIBCORE) $(FUSE_LIBS) $(LIBS_CORE)

TOOL_OBJ := $(patsubst src/cli/%.c,$(BUILD)/src/cli/%.o,$(wildcard src/cli/*.c))
$(TOOL): $(TOOL_OBJ) $(LIBCORE)
	$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $(TOOL_OBJ) $(LIBCORE) $(LIBS_CORE)

$(BUILD)/src/cli/%.o: src/cli/%.c $(NO_DEPFILE) | $(BUILD)/src/cli
	$(CC) $(CORE_CFLAGS) -Isrc -c $< -o $@

$(UNIT): $(UNIT_OBJ) $(LIBCORE)
	$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $(UNIT_OBJ) $(LIBCORE) $(CHECK_LIBS) $(LIBS_CORE)

$(FS_UNIT): $(FS_UNIT_OBJ) $(LIBFS) $(LIBCORE)
	$(CC) $(SANFLAGS) $(LDFLAGS) -o $@ $(FS_UNIT_OBJ) $(LIBFS) $(LIBCORE) $(FUSE_LIBS) $(CHECK_LIBS) $(LIBS_CORE)

$(HELPER): tests/helpers/passthrough_store.c | $(BUILD)/tests
	$(CC) $(CSTD) $(WARN) $(OPT) $(SANFLAGS) $(DEPFLAGS) $(FUSE_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(FUSE_LIBS)

$(BUILD)/src $(BUILD)/fs $(BUILD)/tests $(BUILD)/tests/unit $(BUILD)/tests/unit/fs $(BUILD)/src/cli:
	mkdir -p $@

check: all $(UNIT)
	tests/check-all.sh

# The core's suites in two halves and fs/'s, all three at once (each
# prints its own "Checks:" line; tests/check-all.sh adds them up).  A
# test's time limit only catches a hang, never a busy machine: 60 s where
# a case sets none (Check's own default is 4 s), every limit five times
# that under the sanitizers.
UNIT_ENV := CK_DEFAULT_TIMEOUT=60 CK_TIMEOUT_MULTIPLIER=$(if $(SANITIZE),5,1)
check-unit: $(UNIT) $(FS_UNIT) check-includes check-fs-deps
	$(UNIT_ENV) UNIT_SHARD=0/2 $(UNIT) & a=$$!; $(UNIT_ENV) UNIT_SHARD=1/2 $(UNIT) & b=$$!; \
	$(UNIT_ENV) $(FS_UNIT); s=$$?; wait $$a || s=1; wait $$b || s=1; exit $$s

# No two files of the core include each other, through any chain.
check-includes:
	tests/check-includes.sh src

# No two objects of the FUSE front end call each other, through any chain
# (read from the objects with nm: tests/check-fs-deps.sh).
check-fs-deps: $(FS_OBJ)
	tests/check-fs-deps.sh $(BUILD)/fs

# Every option and subcommand the programs' --help lists is in their man page.
check-manpages: $(DAEMON) $(TOOL)
	tests/check-manpages.py $(DAEMON) $(TOOL)

check-golden: $(TOOL)
	tests/golden/run.sh $(TOOL)

# Every golden case again with one allocation failing at a time
# (tests/alloc/run.py).  Its malloc shim and AddressSanitizer both replace
# malloc, so it runs on the plain build only.
FAILMALLOC := $(BUILD)/tests/failmalloc.so
$(FAILMALLOC): tests/alloc/failmalloc.c | $(BUILD)/tests
	$(CC) $(CSTD) $(WARN) $(OPT) $(DEPFLAGS) -fPIC -shared $(CFLAGS) -o $@ $< -ldl
ifneq ($(SANITIZE),)
check-alloc:
	@echo "check-alloc: runs without SANITIZE (the shim and the sanitizers both replace malloc)" >&2; exit 2
else
check-alloc: $(TOOL) $(FAILMALLOC)
	tests/alloc/run.py $(TOOL) $(FAILMALLOC)
endif

# The runner of the mount and stress tests (tests/run-suite.sh) fails what
# must fail: fake tests that skip, hang, stop early or leave a mount.
check-runner: $(DAEMON)
	tests/runner-selftest.sh $(DAEMON)

check-mount: $(DAEMON) $(TOOL) $(HELPER)
	PSFS_PASSTHROUGH=$(abspath $(HELPER)) tests/mount/run.sh $(DAEMON)

# The /resume search against pi first (no mount), then the mount against pi.
check-diff: $(DAEMON)
	tests/diff/run.sh $(DAEMON)

check-diff-search: $(TOOL) $(DAEMON)
	tests/diff/search/run.sh $(TOOL) $(DAEMON)

# pisession fork against pi's /fork (createBranchedSession), no mount.
check-diff-fork: $(TOOL)
	tests/diff/fork/run.sh $(TOOL)

# tree.txt against pi's /tree (TreeSelectorComponent), no mount.
check-diff-tree: $(TOOL)
	tests/diff/tree/run.sh $(TOOL)

# pisession fork-from against pi's SessionManager.forkFrom, no mount.
check-diff-forkfrom: $(TOOL)
	tests/diff/forkfrom/run.sh $(TOOL)

check-interop: $(DAEMON)
	tests/interop/run.sh $(DAEMON)

# make bench [PRESET=tiny|default|large]: table in tests/bench/results.md (tests/bench/README.md)
bench: $(DAEMON) $(TOOL)
	tests/bench/run.sh --daemon $(DAEMON) $(if $(PRESET),--preset $(PRESET))

# The unit in docs/ runs /usr/local/bin/pisessionfs; the installed one runs
# the program where BINDIR put it.
install: $(DAEMON) $(TOOL)
	install -D -m 755 $(DAEMON) $(DESTDIR)$(BINDIR)/pisessionfs
	install -D -m 755 $(TOOL) $(DESTDIR)$(BINDIR)/pisession
	install -D -m 644 docs/pisessionfs.1 $(DESTDIR)$(MANDIR)/man1/pisessionfs.1
	install -D -m 644 docs/pisession.1 $(DESTDIR)$(MANDIR)/man1/pisession.1
	install -d $(DESTDIR)$(USERUNITDIR)
	sed 's|^ExecStart=/usr/local/bin/pisessionfs |ExecStart=$(BINDIR)/pisessionfs |' docs/pisessionfs.service \
		>$(DESTDIR)$(USERUNITDIR)/pisessionfs.service
	chmod 644 $(DESTDIR)$(USERUNITDIR)/pisessionfs.service

# Removes what install put there (with the same PREFIX, BINDIR, MANDIR,
# USERUNITDIR and DESTDIR); directories are left, as others may use them.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/pisessionfs $(DESTDIR)$(BINDIR)/pisession \
		$(DESTDIR)$(MANDIR)/man1/pisessionfs.1 $(DESTDIR)$(MANDIR)/man1/pisession.1 \
		$(DESTDIR)$(USERUNITDIR)/pisessionfs.service

clean:
	rm -rf $(BUILD)

# ---- fuzzing and valgrind (tests/fuzz/README.md) ---------------------------
# libFuzzer harnesses over the core library, built with clang, ASan and UBSan
# (objects of their own in build/fuzz/src: the core is not rebuilt).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 10
FUZZ_CFLAGS  := $(CSTD) -Wall -Wextra -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined $(JANSSON_CFLAGS) $(UUID_CFLAGS) $(PCRE2_CFLAGS) -DPS_VERSION=\"$(VERSION)\"
FUZZERS      := fuzz_scan fuzz_session fuzz_render_parse fuzz_parse fuzz_jparse fuzz_sessioninfo
FUZZ_OBJ     := $(patsubst src/%.c,$(BUILD)/fuzz/src/%.o,$(CORE_SRC))
FUZZ_BINS    := $(addprefix $(BUILD)/fuzz/,$(FUZZERS))
.PHONY: fuzz fuzz-smoke fuzz-build check-valgrind
.SECONDARY: $(FUZZ_OBJ)
$(BUILD)/fuzz/src/%.o: src/%.c $(NO_DEPFILE) | $(BUILD)/fuzz/src
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEPFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEPFLAGS) -fsanitize=fuzzer -Isrc -o $@ $< $(FUZZ_OBJ) $(LIBS_CORE)
$(BUILD)/fuzz/src:
	mkdir -p $@
fuzz-build: $(FUZZ_BINS)
fuzz: $(FUZZ_BINS)
	tests/fuzz/run.sh $(FUZZ_SECONDS)
fuzz-smoke: $(FUZZ_BINS)
	tests/fuzz/run.sh $(FUZZ_SMOKE_SECONDS)
check-valgrind: $(UNIT) $(FS_UNIT) $(TOOL) $(DAEMON) $(HELPER)
	PSFS_PASSTHROUGH=$(abspath $(HELPER)) tests/valgrind/check-valgrind.sh $(UNIT) $(TOOL) $(DAEMON) $(FS_UNIT)

# ---- reliability tests (tests/stress/run.sh) -------------------------------
# make stress: kill -9, concurrency, disk full, store gone, escapes, a
# million-entry session, the write path against its model (tests/model)
# (< 25 min); make stress-quick: the CI sizes (< 5 min).
# SANITIZE=1 runs the ASan build.
.PHONY: stress stress-quick
stress: $(DAEMON)
	tests/stress/run.sh $(DAEMON)
# Both run all eight (t_sshfs: two sshfs mounts of one store; t_model: 20,000 random sequences, --quick 2,500 or 150 s); t_kill9 --quick is 10 rounds, 3 of them with the kill
# aimed inside the daemon's write() of a 32 MiB entry, 2 inside a migration;
# t_million --quick is a 100,000-entry session.
stress-quick: $(DAEMON)
	tests/stress/run.sh $(DAEMON) --quick

# The dependency files -MMD wrote beside each object or program (none
# before the first build).
-include $(CORE_OBJ:.o=.d) $(FS_OBJ:.o=.d) $(UNIT_OBJ:.o=.d) $(FS_UNIT_OBJ:.o=.d) $(TOOL_OBJ:.o=.d) $(FUZZ_OBJ:.o=.d) \
	$(HELPER).d $(FAILMALLOC:.so=.d) $(FUZZ_BINS:=.d)
