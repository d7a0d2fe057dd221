#!/usr/bin/env bash
# make install to the real root (no DESTDIR) runs ldconfig, so the first
# program linked with -laitune finds libaitune.so.0; staged (DESTDIR) it
# does not (a package's own scripts do). LDCONFIG names the program, here a
# fake that records its calls.
. "$(dirname "$0")/lib.sh"

if ! make -C "$ROOT" --no-print-directory -q build/aitune build/libaitune.a build/libaitune.so 2>/dev/null; then
    skip "make install: the build tree is not up to date (run make first)"
    exit 0
fi
cat >"$T/ldconfig" <<EOF2
#!/bin/sh
echo "called: \$*" >>"$T/ldlog"
EOF2
chmod +x "$T/ldconfig"
P=$T/prefix
run make -C "$ROOT" --no-print-directory install PREFIX="$P" LDCONFIG="$T/ldconfig"
expect_eq "make install PREFIX (no DESTDIR) exits 0" "$RC" 0 || show_last 20
if [ "$(id -u)" = 0 ]; then
    expect_eq "it runs ldconfig, then asks whether the loader finds the library" "$(cat "$T/ldlog" 2>&1)" "called: 
called: -p"
    expect_stdout "^note: the loader does not search $P/lib: add it to /etc/ld.so.conf.d/" \
        "a libdir the loader does not search is named"
else
    [ -e "$T/ldlog" ] && fail "ldconfig was run without root" || ok "not root: ldconfig is not run"
    expect_stdout "^note: not root: run ldconfig as root" "it says what to do instead"
fi
rm -f "$T/ldlog"
run make -C "$ROOT" --no-print-directory install DESTDIR="$T/stage" PREFIX=/usr/local LDCONFIG="$T/ldconfig"
expect_eq "make install DESTDIR exits 0" "$RC" 0 || show_last 20
[ -e "$T/ldlog" ] && fail "ldconfig ran for a staged install" || ok "a staged install (DESTDIR) does not run ldconfig"
run make -C "$ROOT" --no-print-directory uninstall PREFIX="$P"
expect_eq "make uninstall exits 0" "$RC" 0
[ -e "$P/lib/libaitune.so.0" ] && fail "uninstall left the library" || ok "uninstall removes the library"

done_testing
