# mk/rt.mk: the runtime library libaitune, its example and its unit test.
# Included by the main Makefile, which defines CC, ALL_CFLAGS (with -Isrc),
# LIBDIR, PREFIX, libdir, includedir and BUILD first.
#
# libaitune.a holds rt.o, rt_launch.o and what they launch with (the launch plan, its
# expression grammar and JSON reader, the libcuda loader, the cuBLASLt
# loader for buckets the vendor holds), chooses with (align.o: a winner's
# alignment classes), names things with (names.o: dtypes, roles, arch
# names, the schema version) and opens with (dbguard.o: what a registry may
# hold, how long a query may run), compiled -fPIC: a
# static user links SQLite itself (aitune.pc says so in Libs.private).
# libaitune.so carries a private copy of SQLite, so a dynamic user needs
# nothing but -laitune; it exports only the aitune_ functions
# (mk/libaitune.map).

SQLITE_A ?= $(LIBDIR)/libsqlite3.a
RT_LIBS  := $(SQLITE_A) -lpthread -ldl -lm
RT_VERSION := $(shell sed -n 's/^.define AITUNE_VERSION "\(.*\)".*/\1/p' src/aitune.h)
# The soname carries the major version: libaitune.so.0 -> libaitune.so.0.1.0.
RT_MAJOR   := $(firstword $(subst ., ,$(RT_VERSION)))
RT_SONAME  := libaitune.so.$(RT_MAJOR)
RT_SO      := libaitune.so.$(RT_VERSION)

RT_TARGETS := $(BUILD)/libaitune.a $(BUILD)/libaitune.so $(BUILD)/aitune.pc \
              $(BUILD)/examples/lookup $(BUILD)/tests/test_rt $(BUILD)/tests/fakecuda/libcuda.so.1

.PHONY: rt rt-check
rt: $(RT_TARGETS)

rt-check: $(BUILD)/tests/test_rt
	$(BUILD)/tests/test_rt db/schema.sql

RT_PIC := $(BUILD)/obj/rt.o $(BUILD)/obj/rt_launch.o $(patsubst %,$(BUILD)/obj/pic/%.o,align dbguard plan expr json cu vendor names)

# -fPIC: one object serves both the archive and the shared library.
RT_H := src/rt_impl.h src/aitune.h src/plan.h src/cu.h src/align.h src/vendor.h src/names.h src/dbguard.h
$(BUILD)/obj/rt.o: src/rt.c $(RT_H)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fPIC -c -o $@ $<
$(BUILD)/obj/rt_launch.o: src/rt_launch.c $(RT_H)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fPIC -c -o $@ $<

$(BUILD)/obj/pic/%.o: src/%.c $(wildcard src/*.h)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fPIC -c -o $@ $<

$(BUILD)/libaitune.a: $(RT_PIC)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

# Debian's libsqlite3.a is not compiled with -fPIC. --exclude-libs makes its
# symbols local, which lets the linker resolve its PC-relative relocations,
# and keeps our SQLite from clashing with one the application has; only the
# aitune_ functions are exported. -z defs: fail here, not in the application,
# if anything is left undefined.
$(BUILD)/$(RT_SO): $(RT_PIC) mk/libaitune.map
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -shared -Wl,-soname,$(RT_SONAME) -Wl,--exclude-libs,ALL -Wl,-z,defs \
	    -Wl,--version-script,mk/libaitune.map $(LDFLAGS) -o $@ $(RT_PIC) $(RT_LIBS)

# The usual links: the soname for the loader, the bare name for -laitune.
$(BUILD)/libaitune.so: $(BUILD)/$(RT_SO)
	ln -sf $(RT_SO) $(BUILD)/$(RT_SONAME)
	ln -sf $(RT_SONAME) $@

# Libs.private, not Requires.private: sqlite3.pc need not be installed for a
# dynamic user, whose libaitune.so already contains SQLite. write_pc PREFIX
# LIBDIR INCLUDEDIR FILE: libdir and includedir follow the prefix when under it.
define write_pc
	printf '%s\n' 'prefix=$(1)' 'exec_prefix=$${prefix}' \
	    'libdir=$(patsubst $(1)%,$${exec_prefix}%,$(2))' 'includedir=$(patsubst $(1)%,$${prefix}%,$(3))' '' \
	    'Name: aitune' 'Description: tuned CUDA kernel configurations from an aitune registry' \
	    'Version: $(RT_VERSION)' 'Libs: -L$${libdir} -laitune' \
	    'Libs.private: -lsqlite3 -lpthread -ldl -lm' 'Cflags: -I$${includedir}' > $(4)
endef

# The build tree's copy; `make install` writes one for the PREFIX it is given.
$(BUILD)/aitune.pc: src/aitune.h mk/rt.mk
	@mkdir -p $(@D)
	$(call write_pc,$(PREFIX),$(libdir),$(includedir),$@)

$(BUILD)/examples/lookup: examples/lookup.c src/aitune.h $(BUILD)/libaitune.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libaitune.a $(RT_LIBS)

# libaitune's open and lookup costs at 10k winners (no GPU needed; not in `all`).
$(BUILD)/bench/rt_overhead: bench/rt_overhead.c src/aitune.h $(BUILD)/libaitune.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libaitune.a $(RT_LIBS)

# examples/launch.c needs libcuda at link time (the toolkit's stub will do);
# not part of `all`: make build/examples/launch
$(BUILD)/examples/launch: examples/launch.c src/aitune.h $(BUILD)/libaitune.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libaitune.a $(RT_LIBS) -L$(CUDA)/lib64/stubs -lcuda

$(BUILD)/tests/test_rt: tests/unit/test_rt.c tests/unit/check.h src/aitune.h \
                        $(BUILD)/libaitune.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libaitune.a $(RT_LIBS)

# A libcuda that records launches instead of running them (tests/unit/
# fake_cuda.c): test_rt and the Python tests load it by path before libaitune
# opens "libcuda.so.1", and get the kernel layer without a GPU.
$(BUILD)/tests/fakecuda/libcuda.so.1: tests/unit/fake_cuda.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -fPIC -shared -Wl,-soname,libcuda.so.1 $(LDFLAGS) -o $@ $<
