# aitune: one hand-written makefile. Settings first.
CC       ?= gcc
CUDA     ?= /usr/local/cuda
BUILD    := build
VERSION  := 0.1.0
PKG_CONFIG ?= pkg-config
PYTHON   ?= python3
# Where `make install` puts things (GNU names; DESTDIR stages a package).
PREFIX   ?= /usr/local
bindir   ?= $(PREFIX)/bin
libdir   ?= $(PREFIX)/lib
includedir ?= $(PREFIX)/include
datadir  ?= $(PREFIX)/share
# Lua, libyaml and SQLite: headers through pkg-config; their static archives
# in pkg-config's libdir, else the compiler's multiarch directory, so the same
# makefile builds on x86-64 and aarch64 (Grace Hopper).
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
LIBDIR   ?= $(or $(shell $(PKG_CONFIG) --variable=libdir lua5.4 2>/dev/null),/usr/lib/$(MULTIARCH))
DEP_CFLAGS := $(or $(shell $(PKG_CONFIG) --cflags lua5.4 yaml-0.1 sqlite3 2>/dev/null),-I/usr/include/lua5.4)
# CFLAGS is the user's (make CFLAGS=-O1); what the build needs is apart, so a
# command-line CFLAGS cannot drop the include paths.
CFLAGS   ?= -O2 -g
AITUNE_CFLAGS := -std=c11 -Wall -Wextra -Isrc $(DEP_CFLAGS) -I$(CUDA)/include \
            -DAITUNE_TOOL_VERSION='"$(VERSION)"' -DAITUNE_SOURCE_DIR='"$(CURDIR)"'
ALL_CFLAGS = $(AITUNE_CFLAGS) $(CPPFLAGS) $(CFLAGS)
# Lua, libyaml and SQLite are linked statically so the binary runs on GPU
# machines without those packages; NVRTC dynamically, found through the rpath;
# libcuda is opened at run time (cu.c).
STATIC_LIBS := $(LIBDIR)/liblua5.4.a $(LIBDIR)/libyaml.a $(LIBDIR)/libsqlite3.a
LDLIBS   := $(STATIC_LIBS) -L$(CUDA)/lib64 -lnvrtc -Wl,-rpath,$(CUDA)/lib64 -lpthread -ldl -lm
DEBS     := build-essential pkg-config liblua5.4-dev libyaml-dev libsqlite3-dev sqlite3 python3-venv python3-dev
# chromium-headless-shell (about 0.5 GB): only the report's screenshot check
# renders the page in a real browser (tests/cli/report.sh), and skips, saying
# so, without one. `make deps-browser` installs it.
BROWSER_DEBS := chromium-headless-shell

# The tool's modules, in dependency order; the registry's by what they store
# (registry.h's map).
REG_OBJS  := registry registry_cubin registry_measure registry_winner registry_vendor registry_scan registry_decided registry_export registry_merge
TOOL_OBJS := names util cu vendor expr json align dbguard plan device proto child tmpl wire search jit $(REG_OBJS) spec bench worker sweep_vendor sweep_session sweep_cand sweep_task sweep_record sweep_flow sweep_probe sweep_splitrec sweep_split sweep_part sweep_polish sweep_hold sweep_resume sweep_warm sweep_tune sweep_lanes sweep_space sweep_compile sweep_scan sweep emit cli list progress why export gc import report replay identity status merge retune window scan pin peers main
TOOL_O    := $(TOOL_OBJS:%=$(BUILD)/obj/%.o) $(BUILD)/obj/schema.o $(BUILD)/obj/migrations.o $(BUILD)/obj/rt.o $(BUILD)/obj/rt_launch.o
UNIT_TESTS := test_core test_spec test_tmpl test_registry test_jit test_worker test_plan test_progress test_replay test_search test_sweep \
              test_vendor test_names
UNIT_BINS  := $(UNIT_TESTS:%=$(BUILD)/tests/%)
LIB_O      := $(filter-out $(BUILD)/obj/main.o,$(TOOL_O))

.PHONY: all deps deps-browser test check clean check-deps install uninstall
all: $(BUILD)/aitune rt $(UNIT_BINS) $(BUILD)/tests/fake_worker $(BUILD)/tests/slow_nvrtc.so $(BUILD)/tests/kernel_sample \
     $(BUILD)/tests/fake_cublaslt.so $(BUILD)/_aitune_hot.abi3.so

include mk/rt.mk

$(BUILD)/obj/%.o: src/%.c $(wildcard src/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The registry schema, embedded as a C string.
$(BUILD)/gen/schema.c: db/schema.sql
	@mkdir -p $(@D)
	{ echo 'const char reg_schema_sql[] ='; sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; echo ';'; } > $@

$(BUILD)/obj/schema.o: $(BUILD)/gen/schema.c
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# Migrations, embedded the same way: reg_migration_sql[v] takes schema v-1 to v.
MIGRATIONS := $(sort $(wildcard db/migrations/[0-9][0-9][0-9]-*.sql))
$(BUILD)/gen/migrations.c: $(MIGRATIONS)
	@mkdir -p $(@D)
	{ echo 'const char *const reg_migration_sql[] = { 0, 0,'; \
	  for f in $(MIGRATIONS); do sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $$f; echo ','; done; \
	  echo '0 };'; } > $@

$(BUILD)/obj/migrations.o: $(BUILD)/gen/migrations.c
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/aitune: $(TOOL_O)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIB_O) tests/unit/check.h
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB_O) $(LDLIBS)

$(BUILD)/tests/fake_worker: tests/unit/fake_worker.c $(BUILD)/obj/proto.o $(BUILD)/obj/wire.o $(BUILD)/obj/names.o $(BUILD)/obj/util.o \
                            $(BUILD)/obj/plan.o $(BUILD)/obj/expr.o $(BUILD)/obj/json.o
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $^

# What a search costs before its first candidate (no GPU; not in `all`).
$(BUILD)/bench/space_start: bench/space_start.c $(LIB_O)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB_O) $(LDLIBS)

# What a whole search costs its sweep in CPU (no GPU; not in `all`).
$(BUILD)/bench/search_cost: bench/search_cost.c $(LIB_O)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB_O) $(LDLIBS)

# NVRTC made slow without using a core (LD_PRELOAD; tests/unit/slow_nvrtc.c).
$(BUILD)/tests/slow_nvrtc.so: tests/unit/slow_nvrtc.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fPIC -shared -o $@ $< -ldl

# cuBLASLt played on the host (AITUNE_CUBLASLT; tests/unit/fake_cublaslt.c).
$(BUILD)/tests/fake_cublaslt.so: tests/unit/fake_cublaslt.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fPIC -shared -o $@ $< -lpthread -lm

# The Python package's hot path (src/pyhot.c), compiled against CPython's
# limited API: one build loads in every CPython from 3.11 on (the GPU
# machines' 3.12 included); it links neither libpython nor libaitune.
PY_INCLUDE ?= $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
$(BUILD)/_aitune_hot.abi3.so: src/pyhot.c src/aitune.h
	@test -f "$(PY_INCLUDE)/Python.h" || { echo "no Python.h under '$(PY_INCLUDE)': run make deps (python3-dev), or set PY_INCLUDE"; exit 1; }
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -I$(PY_INCLUDE) -fPIC -shared -o $@ $<

# apt_install PACKAGES: those not installed yet, with sudo unless root.
apt_install = @missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	    echo "installing: $$missing"; \
	    SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $$missing; \
	fi

# Debian packages the build needs; the CUDA toolkit (nvcc, NVRTC) is assumed
# at $(CUDA).
deps:
	@missing=$$(for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	    echo "installing: $$missing"; \
	    SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $$missing; \
	fi
	@test -x $(CUDA)/bin/nvcc || { echo "make deps: no CUDA toolkit at $(CUDA) (set CUDA=...)"; exit 1; }
	@$(MAKE) --no-print-directory python-deps

# The Python layer (python/): PyTorch (PyPI's default wheel), transformers
# (patch on its Llama, a decode step from a config) and pytest in a virtual
# environment this makefile owns; tests/cli/python.sh runs its CPU tests with
# $(VENV)/bin/python and skips, saying so, when it is absent. Several trees may
# share one: make VENV=/path/to/venv deps test. The stamp names what it holds,
# so a venv made before transformers was added gets it.
VENV ?= .venv
.PHONY: python-deps
python-deps: $(VENV)/.aitune-deps-transformers
$(VENV)/.aitune-deps-transformers:
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q torch numpy pytest transformers
	touch $@

deps-browser:
	$(call apt_install,$(BROWSER_DEBS))

# Two tiers: `make check`, the unit tests and the quick command-line tests
# (75-77 s on the idle 2-core machine, about 130 CPU-seconds), for every edit;
# `make test`, everything that runs without a GPU (README, CI; 290-323 s there,
# 550-620 CPU-seconds, the Python layer's some 30 where .venv has torch
# included). Files whose header says "tests/run: slow" are in `make test` only.
check: all
	AITUNE_VENV=$(abspath $(VENV)) tests/run --quick

test: all
	AITUNE_VENV=$(abspath $(VENV)) tests/run

# make install [PREFIX=/usr/local] [DESTDIR=staging]: the tool, its templates,
# search strategies and example specs under share/aitune (the binary finds
# them relative to itself, so a staged or moved tree works), and libaitune
# with its header and aitune.pc.
SHARE := $(DESTDIR)$(datadir)/aitune
install: $(BUILD)/aitune $(BUILD)/libaitune.a $(BUILD)/libaitune.so $(BUILD)/_aitune_hot.abi3.so
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(libdir)/pkgconfig $(DESTDIR)$(includedir) $(SHARE) \
	    $(DESTDIR)$(datadir)/doc/aitune
	install -m 755 $(BUILD)/aitune $(DESTDIR)$(bindir)/aitune
	install -m 644 src/aitune.h $(DESTDIR)$(includedir)/aitune.h
	install -m 644 $(BUILD)/libaitune.a $(DESTDIR)$(libdir)/libaitune.a
	install -m 755 $(BUILD)/$(RT_SO) $(DESTDIR)$(libdir)/$(RT_SO)
	install -d $(DESTDIR)$(libdir)/aitune
	install -m 755 $(BUILD)/_aitune_hot.abi3.so $(DESTDIR)$(libdir)/aitune/_aitune_hot.abi3.so
	ln -sf $(RT_SO) $(DESTDIR)$(libdir)/$(RT_SONAME)
	ln -sf $(RT_SONAME) $(DESTDIR)$(libdir)/libaitune.so
	$(call write_pc,$(PREFIX),$(libdir),$(includedir),$(DESTDIR)$(libdir)/pkgconfig/aitune.pc)
	rm -rf $(SHARE)/templates $(SHARE)/search $(SHARE)/specs
	cp -R templates search specs $(SHARE)/
	chmod -R u=rwX,go=rX $(SHARE)
	install -m 644 README.md LICENSE docs/SPEC.md $(DESTDIR)$(datadir)/doc/aitune/
	$(ldconfig_after_install)

# Installed to the real root (no DESTDIR: a package's own scripts run it),
# the loader's cache learns libaitune.so.0, else the first program linked
# with -laitune fails to find it. Root only (ldconfig writes /etc); a
# libdir the loader does not search is named, with what to do.
LDCONFIG ?= ldconfig
define ldconfig_after_install
	@if [ -n "$(DESTDIR)" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v $(LDCONFIG) >/dev/null 2>&1; then \
	    echo "$(LDCONFIG)"; $(LDCONFIG) || exit 1; \
	    if ! $(LDCONFIG) -p 2>/dev/null | grep -q "$(libdir)/$(RT_SONAME)"; then \
	        echo "note: the loader does not search $(libdir): add it to /etc/ld.so.conf.d/ (then run ldconfig) or to LD_LIBRARY_PATH"; \
	    fi; \
	else \
	    echo "note: not root: run ldconfig as root, or add $(libdir) to LD_LIBRARY_PATH, before running programs linked with -laitune"; \
	fi
endef

uninstall:
	rm -f $(DESTDIR)$(bindir)/aitune $(DESTDIR)$(includedir)/aitune.h $(DESTDIR)$(libdir)/libaitune.a \
	    $(DESTDIR)$(libdir)/$(RT_SO) $(DESTDIR)$(libdir)/$(RT_SONAME) $(DESTDIR)$(libdir)/libaitune.so \
	    $(DESTDIR)$(libdir)/pkgconfig/aitune.pc $(DESTDIR)$(libdir)/aitune/_aitune_hot.abi3.so
	-rmdir $(DESTDIR)$(libdir)/aitune 2>/dev/null
	rm -rf $(SHARE) $(DESTDIR)$(datadir)/doc/aitune

clean:
	rm -rf $(BUILD)

# ---- untrusted input (issue 14): helper tests, fuzzing, sanitizers ----
all: $(BUILD)/tests/test_untrusted
# Exact-size bucket dims (docs/SPEC.md "Exact sizes"): spec, keys, libaitune's ranking.
all: $(BUILD)/tests/test_exact

# Fuzzing: libFuzzer harnesses in tests/fuzz/, built with Debian's clang,
# AddressSanitizer and UndefinedBehaviorSanitizer. `make fuzz` runs each for
# FUZZ_TIME seconds over its seed corpus (tests/fuzz/corpus/NAME, kept in
# the repo) plus what earlier runs found (build/fuzz/corpus-NAME); a finding
# stops it and lands in build/fuzz/NAME-crash-* (rerun: build/fuzz/fuzz_NAME
# FILE). `make fuzz-deps` installs the compiler. The harnesses that read the
# templates (emit, import) take them from the tree they were built in, or
# from AITUNE_FUZZ_SOURCE=DIR (a copy of the tree elsewhere, on another
# machine). FUZZ_OPT (-O1) is their optimisation (tests/cli/fuzz_smoke.sh
# builds them at -O0).
FUZZ_CC    ?= clang
FUZZ_TIME  ?= 60
FUZZ_DEBS  := clang libclang-rt-dev
FUZZ_NAMES := spec expr plan registry emit import merge replay
FUZZ_OPT   ?= -O1
FUZZ_FLAGS := -g $(FUZZ_OPT) -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
              -fno-sanitize-recover=undefined -std=c11 -Isrc $(DEP_CFLAGS) -I$(CUDA)/include \
              -DAITUNE_TOOL_VERSION='"$(VERSION)"' -DAITUNE_SOURCE_DIR='"$(CURDIR)"'
FUZZ_BINS  := $(FUZZ_NAMES:%=$(BUILD)/fuzz/fuzz_%)

.PHONY: fuzz fuzz-build fuzz-deps test-asan
fuzz-build: $(FUZZ_BINS)

# The tool's modules (all but main.c) compiled once with the sanitizers and
# libFuzzer's coverage, in an archive each harness links: it takes the
# modules its harness reaches (spec: spec.c and what it calls; emit: emit
# and what it reads, both registry readers, the templates, device facts,
# jit.c's option text; import, merge and replay: whole commands).
comma := ,
FUZZ_OBJ_FLAGS := $(subst fuzzer$(comma),fuzzer-no-link$(comma),$(FUZZ_FLAGS))
FUZZ_LIB_O := $(patsubst %,$(BUILD)/fuzz/obj/%.o,$(filter-out main,$(TOOL_OBJS)) rt rt_launch schema migrations)
FUZZ_LIB_A := $(BUILD)/fuzz/libaitune-fuzz.a
FUZZ_LINK := $(FUZZ_LIB_A) $(LIBDIR)/liblua5.4.a $(LIBDIR)/libyaml.a $(LIBDIR)/libsqlite3.a -L$(CUDA)/lib64 -lnvrtc \
             -Wl,-rpath,$(CUDA)/lib64 -lpthread -ldl -lm
FUZZ_DB := tests/fuzz/fuzz_db.c

$(BUILD)/fuzz/obj/%.o: src/%.c $(wildcard src/*.h)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_OBJ_FLAGS) -c -o $@ $<

$(BUILD)/fuzz/obj/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_OBJ_FLAGS) -c -o $@ $<

$(FUZZ_LIB_A): $(FUZZ_LIB_O)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/fuzz/fuzz_spec: tests/fuzz/fuzz_spec.c $(FUZZ_LIB_A)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_spec.c $(FUZZ_LINK)

$(BUILD)/fuzz/fuzz_expr: tests/fuzz/fuzz_expr.c $(FUZZ_LIB_A)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_expr.c $(FUZZ_LINK)

$(BUILD)/fuzz/fuzz_plan: tests/fuzz/fuzz_plan.c $(FUZZ_LIB_A)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_plan.c $(FUZZ_LINK)

$(BUILD)/fuzz/fuzz_registry: tests/fuzz/fuzz_registry.c $(FUZZ_DB) tests/fuzz/fuzz_db.h $(FUZZ_LIB_A)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_registry.c $(FUZZ_DB) $(FUZZ_LINK)

# One templates handle serves every run (--wrap: see fuzz_emit.c).
$(BUILD)/fuzz/fuzz_emit: tests/fuzz/fuzz_emit.c $(FUZZ_DB) tests/fuzz/fuzz_db.h $(FUZZ_LIB_A)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_emit.c $(FUZZ_DB) $(FUZZ_LINK) -Wl,--wrap=tmpl_open,--wrap=tmpl_close

$(BUILD)/fuzz/fuzz_import: tests/fuzz/fuzz_import.c $(FUZZ_DB) tests/fuzz/fuzz_db.h $(FUZZ_LIB_A)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_import.c $(FUZZ_DB) $(FUZZ_LINK) -Wl,--wrap=tmpl_open,--wrap=tmpl_close

$(BUILD)/fuzz/fuzz_merge: tests/fuzz/fuzz_merge.c $(FUZZ_DB) tests/fuzz/fuzz_db.h $(FUZZ_LIB_A)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_merge.c $(FUZZ_DB) $(FUZZ_LINK)

$(BUILD)/fuzz/fuzz_replay: tests/fuzz/fuzz_replay.c $(FUZZ_LIB_A)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/fuzz/fuzz_replay.c $(FUZZ_LINK)

fuzz: $(FUZZ_BINS)
	@for n in $(FUZZ_NAMES); do \
	    mkdir -p $(BUILD)/fuzz/corpus-$$n; \
	    echo "fuzz_$$n: $(FUZZ_TIME) s"; \
	    $(BUILD)/fuzz/fuzz_$$n -max_total_time=$(FUZZ_TIME) -print_final_stats=1 \
	        -artifact_prefix=$(BUILD)/fuzz/$$n- $(BUILD)/fuzz/corpus-$$n tests/fuzz/corpus/$$n \
	        2>$(BUILD)/fuzz/$$n.log || { tail -n 40 $(BUILD)/fuzz/$$n.log; exit 1; }; \
	    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' $(BUILD)/fuzz/$$n.log; \
	done

fuzz-deps:
	$(call apt_install,$(FUZZ_DEBS))

# The whole suite with the tool, its tests and the fake worker built with
# AddressSanitizer and UndefinedBehaviorSanitizer (any report fails a test).
# Sanitized code is slower: each test file gets ASAN_TEST_TIMEOUT seconds.
# verify_asan_link_order=0: tests preload a shim (slow_nvrtc.so, which
# defines no allocator or libc function) ahead of libasan; ASan's check
# refuses any library before its own, though this one cannot intercept it.
ASAN_TEST_TIMEOUT ?= 1200
ASAN_BUILD := $(BUILD)/asan
ASAN_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
test-asan:
	CFLAGS="$(ASAN_FLAGS)" LDFLAGS="$(ASAN_FLAGS)" $(MAKE) BUILD=$(ASAN_BUILD) all
	BUILD=$(ASAN_BUILD) AITUNE_TEST_TIMEOUT=$(ASAN_TEST_TIMEOUT) AITUNE_BIN=$(CURDIR)/$(ASAN_BUILD)/aitune \
	    AITUNE_FAKE_WORKER=$(CURDIR)/$(ASAN_BUILD)/tests/fake_worker \
	    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=86:verify_asan_link_order=0 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=87 \
	    tests/run $(TESTS)
