#!/usr/bin/env bash
# make install into a temporary DESTDIR: the files land where PREFIX says,
# the shared library has a versioned soname, aitune.pc follows PREFIX, an
# application builds out of tree with pkg-config, and the installed aitune
# runs from another folder with its own templates. Then make uninstall.
. "$(dirname "$0")/lib.sh"

D=$T/dest
P=/opt/aitune-test
# make install must not rebuild under the other tests' feet: a stale tree
# (sources newer than build/) is left alone.
if ! make -C "$ROOT" --no-print-directory -q build/aitune build/libaitune.a build/libaitune.so 2>/dev/null; then
    skip "make install: the build tree is not up to date (run make first)"
    exit 0
fi
run make -C "$ROOT" --no-print-directory install DESTDIR="$D" PREFIX="$P"
expect_eq "make install DESTDIR PREFIX exits 0" "$RC" 0 || show_last 20
I=$D$P
for f in bin/aitune include/aitune.h lib/libaitune.a lib/libaitune.so.0.1.0 lib/pkgconfig/aitune.pc \
         share/aitune/templates/axpy/op.lua share/aitune/search/random.lua share/aitune/specs/elementwise.yaml \
         share/doc/aitune/LICENSE share/doc/aitune/SPEC.md; do
    [ -f "$I/$f" ] && ok "installed $f" || fail "not installed: $f"
done
expect_eq "libaitune.so.0 links to the versioned file" "$(readlink "$I/lib/libaitune.so.0")" libaitune.so.0.1.0
expect_eq "libaitune.so links to the soname" "$(readlink "$I/lib/libaitune.so")" libaitune.so.0
if command -v readelf >/dev/null; then
    so=$(readelf -d "$I/lib/libaitune.so.0.1.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    expect_eq "the shared library's soname is versioned" "$so" libaitune.so.0
else
    skip "soname check: no readelf"
fi
expect_eq "aitune.pc's prefix is PREFIX" "$(sed -n 's/^prefix=//p' "$I/lib/pkgconfig/aitune.pc")" "$P"

# An application, built out of tree with pkg-config (the sysroot maps the
# staged PREFIX), dynamically and statically.
mkdir -p "$T/app" "$T/elsewhere"
cp "$ROOT/examples/lookup.c" "$T/app/"
export PKG_CONFIG_PATH=$I/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D
if ! command -v pkg-config >/dev/null; then
    skip "out-of-tree build: no pkg-config"
else
    expect_eq "pkg-config --modversion aitune" "$(pkg-config --modversion aitune 2>&1)" 0.1.0
    run sh -c "cd '$T/app' && \${CC:-cc} -o lookup lookup.c \$(pkg-config --cflags --libs aitune)"
    expect_eq "examples/lookup.c builds with pkg-config --cflags --libs aitune" "$RC" 0 || show_last
    run sh -c "cd '$T/app' && \${CC:-cc} -o lookup-static lookup.c \$(pkg-config --cflags aitune) '$I/lib/libaitune.a' \$(pkg-config --static --libs-only-l aitune | sed 's/-laitune//')"
    expect_eq "examples/lookup.c links libaitune.a with pkg-config --static's libraries" "$RC" 0 || show_last
fi
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

# The installed aitune, run from another folder: its own templates.
INST=$I/bin/aitune
run sh -c "cd '$T/elsewhere' && '$INST' list"
expect_eq "installed aitune list exits 0" "$RC" 0 || show_last
expect_stdout "^templates and strategies from $I/share/aitune\$" "installed aitune finds share/aitune next to itself"
expect_stdout "^  axpy/vec " "installed aitune lists the templates"
# (A sample of 4: what is checked is that the installed tool finds what it
# needs, not NVRTC.)
small_spec
run sh -c "cd '$T/elsewhere' && '$INST' compile '$T/small.yaml' --db '$T/inst.db' --max-evals 4"
expect_eq "installed aitune compiles a spec from another folder" "$RC" 0 || show_last
run sh -c "cd '$T/elsewhere' && env AITUNE_WORKER='$FAKE' '$INST' sweep '$T/small.yaml' --db '$T/inst.db' --quiet --max-evals 4"
expect_eq "installed aitune sweeps (fake worker)" "$RC" 0 || show_last
if [ -x "$T/app/lookup" ]; then
    run env LD_LIBRARY_PATH="$I/lib" "$T/app/lookup" "$T/inst.db" axpy sm_90 f32 64
    expect_eq "the out-of-tree application runs against the installed libaitune.so" "$RC" 0 || show_last
    expect_stdout "axpy sm_90 f32 .*exact" "it finds the tuned winner"
    run "$T/app/lookup-static" "$T/inst.db" axpy sm_90 f32 64
    expect_stdout "axpy sm_90 f32 .*exact" "the statically linked application finds it too"
fi

# AITUNE_HOME serves a binary that sits alone (copied without share/).
mkdir -p "$T/alone"
cp "$INST" "$T/alone/aitune"
run env AITUNE_HOME="$I/share/aitune" "$T/alone/aitune" list
expect_stdout "^templates and strategies from $I/share/aitune\$" "a lone binary uses AITUNE_HOME"

run make -C "$ROOT" --no-print-directory uninstall DESTDIR="$D" PREFIX="$P"
expect_eq "make uninstall exits 0" "$RC" 0 || show_last
left=$(find "$D" -type f -o -type l | sed "s|^$D||")
expect_eq "make uninstall leaves no file behind" "$left" ""

# A command-line CFLAGS replaces the optimization flags, never the include paths.
run make -C "$ROOT" --no-print-directory -n -B CFLAGS=-O1 build/obj/util.o
if grep -q -- "-O1" "$T/out" && grep -q -- "-Isrc" "$T/out" && grep -q -- "$(pkg-config --cflags-only-I lua5.4 2>/dev/null | awk '{print $1}')" "$T/out"; then
    ok "make CFLAGS=-O1 keeps -Isrc and Lua's include path"
else
    fail "make CFLAGS=-O1 drops required flags"; show_last
fi
done_testing
