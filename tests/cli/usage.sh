#!/usr/bin/env bash
# The command line's usage paths and exit codes: 0 ok, 1 failure, 2 usage,
# 3 bad input. No GPU and no compile needed.
. "$(dirname "$0")/lib.sh"

expect_exit 0 "aitune --help" "$AITUNE" --help
expect_stdout "^usage: aitune COMMAND" "--help prints the usage on stdout"
expect_stdout "sweep" "--help lists the commands"
expect_exit 0 "aitune -h" "$AITUNE" -h
expect_exit 0 "aitune --version" "$AITUNE" --version
expect_stdout "^aitune [0-9]+\.[0-9]+\.[0-9]+ \(NVRTC [0-9]+\.[0-9]+\)" "--version names the version and NVRTC"
expect_exit 0 "aitune help" "$AITUNE" help

expect_exit 0 "aitune help sweep" "$AITUNE" help sweep
expect_stdout "^usage: aitune sweep SPEC" "help sweep shows the sweep usage"
expect_stdout "--budget" "help sweep lists --budget"
expect_exit 0 "aitune sweep --help" "$AITUNE" sweep --help
expect_stdout "^usage: aitune sweep SPEC" "sweep --help shows the sweep usage"
expect_exit 2 "aitune help nosuch" "$AITUNE" help nosuch
expect_stderr "no command 'nosuch'" "help of an unknown command names it"

expect_exit 2 "aitune alone is a usage error" "$AITUNE"
expect_stderr "^usage: aitune COMMAND" "aitune alone prints the usage on stderr"
[ -s "$T/out" ] && fail "aitune alone writes nothing on stdout" || ok "aitune alone writes nothing on stdout"

expect_exit 2 "unknown command" "$AITUNE" frobnicate
expect_stderr "^aitune: error: no command 'frobnicate'" "unknown command: stderr names it, git-style"

expect_exit 2 "unknown option" "$AITUNE" show --frob
expect_stderr "unknown option '--frob'" "unknown option: stderr names it"
expect_stderr "^usage: aitune show" "unknown option: stderr shows the command's usage"
expect_exit 2 "unknown option with a value" "$AITUNE" lookup axpy --frob=3 --arch sm_90 --dtype f32 --shape 4
expect_stderr "unknown option '--frob'" "unknown option=value: stderr names the option without the value"
expect_exit 2 "option without its value" "$AITUNE" show --db
expect_stderr "'--db' needs a value" "a missing value is named"
expect_exit 2 "flag given a value" "$AITUNE" show --json=yes --db "$T/x.db"
expect_exit 2 "an extra argument" "$AITUNE" show extra
expect_stderr "unexpected argument 'extra'" "an extra argument is named"

expect_exit 2 "sweep without a spec" "$AITUNE" sweep
expect_stderr "which spec" "sweep without a spec asks which"
expect_exit 2 "sweep --budget abc" "$AITUNE" sweep x.yaml --budget abc
expect_stderr "--budget 'abc'" "a bad --budget is named"
expect_exit 2 "sweep --max-evals 0" "$AITUNE" sweep x.yaml --max-evals 0
expect_exit 2 "sweep -j x" "$AITUNE" compile x.yaml -j x

# lookup / emit arguments.
expect_exit 2 "lookup without --arch" "$AITUNE" lookup axpy --dtype f32 --shape 1024 --db "$T/none.db"
expect_stderr "--arch is required" "lookup without --arch says so"
expect_exit 2 "lookup without an op" "$AITUNE" lookup --arch sm_90 --dtype f32 --shape 1024
expect_exit 2 "lookup without --shape" "$AITUNE" lookup axpy --arch sm_90 --dtype f32
expect_exit 2 "lookup --shape abc" "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape abc
expect_stderr "--shape 'abc'" "a malformed --shape is named"
expect_exit 2 "lookup --shape with 5 dims" "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape 1,2,3,4,5
# Every malformed --shape is a usage error (2), like any bad option value;
# 3 is for what specs, templates and registries hold (issue 14).
expect_exit 2 "lookup --shape 0" "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape 0 --db "$T/none.db"
expect_stderr "sizes must be >= 1" "--shape 0 says sizes must be >= 1"
expect_exit 2 "lookup --shape -5" "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape -5 --db "$T/none.db"
expect_exit 2 "emit without -o" "$AITUNE" emit axpy --arch sm_90 --dtype f32 --shape 1024 --db "$T/none.db"
expect_stderr "-o FILE is required" "emit without -o says so"

# Registries that are not there or not registries.
expect_exit 3 "show --db of a missing file" "$AITUNE" show --db "$T/missing.db"
expect_stderr "no such file" "show of a missing registry says so"
[ -e "$T/missing.db" ] && fail "show created the missing registry" || ok "show does not create a registry"
head -c 4096 /dev/urandom >"$T/garbage.db"
cp "$T/garbage.db" "$T/garbage.orig"
expect_exit 3 "show --db garbagefile" "$AITUNE" show --db "$T/garbage.db"
expect_stderr_lines 1 "show of a garbage file: one error line"
expect_stderr "^aitune: error: registry '.*garbage.db'" "show of a garbage file names the registry"
expect_true "show leaves a garbage file byte-identical" cmp "$T/garbage.db" "$T/garbage.orig"
expect_exit 3 "lookup --db garbagefile" "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape 1024 --db "$T/garbage.db"
expect_stderr_lines 1 "lookup of a garbage file: one error line"
expect_exit 3 "lookup on a missing registry" "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape 1024 --db "$T/missing.db"

# AITUNE_DB is honoured when --db is absent.
run env AITUNE_DB="$T/garbage.db" "$AITUNE" show
expect_eq "show uses \$AITUNE_DB" "$RC" 3
grep -q "garbage.db" "$T/err" && ok "the \$AITUNE_DB path is the one named" || fail "the \$AITUNE_DB path is the one named"

# No GPU here: devices says so plainly.
if has_gpu; then
    skip "devices without a GPU: this machine has a GPU"
else
    expect_exit 1 "aitune devices without a GPU" "$AITUNE" devices
    expect_stderr "no GPU" "devices without a GPU says 'no GPU'"
    expect_stderr "^hint: " "devices without a GPU gives a hint"
fi

done_testing
