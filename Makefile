# aitune: one hand-written makefile. Settings first.
CC       ?= gcc
CUDA     ?= /usr/local/cuda
BUILD    := build
VERSION  := 0.1.0
LIBDIR   := /usr/lib/x86_64-linux-gnu
LUA_INC  := /usr/include/lua5.4
CFLAGS   ?= -O2 -g
CFLAGS   += -std=c11 -Wall -Wextra -Isrc -I$(LUA_INC) -I$(CUDA)/include \
            -DAITUNE_TOOL_VERSION='"$(VERSION)"' -DAITUNE_SOURCE_DIR='"$(CURDIR)"'
# Lua, libyaml and SQLite are linked statically so the binary runs on GPU
# machines without those packages; NVRTC dynamically, found through the rpath;
# libcuda is opened at run time (cu.c).
STATIC_LIBS := $(LIBDIR)/liblua5.4.a $(LIBDIR)/libyaml.a $(LIBDIR)/libsqlite3.a
LDLIBS   := $(STATIC_LIBS) -L$(CUDA)/lib64 -lnvrtc -Wl,-rpath,$(CUDA)/lib64 -lpthread -ldl -lm
DEBS     := build-essential liblua5.4-dev libyaml-dev libsqlite3-dev sqlite3

# The tool's modules, in dependency order.
TOOL_OBJS := util cu expr json plan device proto tmpl search jit registry spec bench worker sweep emit main
TOOL_O    := $(TOOL_OBJS:%=$(BUILD)/obj/%.o) $(BUILD)/obj/schema.o $(BUILD)/obj/migrations.o $(BUILD)/obj/rt.o
UNIT_TESTS := test_core test_spec test_tmpl test_registry test_jit test_worker test_plan
UNIT_BINS  := $(UNIT_TESTS:%=$(BUILD)/tests/%)
LIB_O      := $(filter-out $(BUILD)/obj/main.o,$(TOOL_O))

.PHONY: all deps test clean check-deps
all: $(BUILD)/aitune rt $(UNIT_BINS) $(BUILD)/tests/fake_worker

include mk/rt.mk

$(BUILD)/obj/%.o: src/%.c $(wildcard src/*.h)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

# The registry schema, embedded as a C string.
$(BUILD)/gen/schema.c: db/schema.sql
	@mkdir -p $(@D)
	{ echo 'const char reg_schema_sql[] ='; sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; echo ';'; } > $@

$(BUILD)/obj/schema.o: $(BUILD)/gen/schema.c
	$(CC) $(CFLAGS) -c -o $@ $<

# Migrations, embedded the same way: reg_migration_sql[v] takes schema v-1 to v.
MIGRATIONS := $(sort $(wildcard db/migrations/[0-9][0-9][0-9]-*.sql))
$(BUILD)/gen/migrations.c: $(MIGRATIONS)
	@mkdir -p $(@D)
	{ echo 'const char *const reg_migration_sql[] = { 0, 0,'; \
	  for f in $(MIGRATIONS); do sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $$f; echo ','; done; \
	  echo '0 };'; } > $@

$(BUILD)/obj/migrations.o: $(BUILD)/gen/migrations.c
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/aitune: $(TOOL_O)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIB_O) tests/unit/check.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $< $(LIB_O) $(LDLIBS)

$(BUILD)/tests/fake_worker: tests/unit/fake_worker.c $(BUILD)/obj/proto.o $(BUILD)/obj/util.o \
                            $(BUILD)/obj/plan.o $(BUILD)/obj/expr.o $(BUILD)/obj/json.o
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^

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

test: all
	tests/run

clean:
	rm -rf $(BUILD)
