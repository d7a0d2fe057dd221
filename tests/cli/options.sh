#!/usr/bin/env bash
# getopt_long conventions: -j4 and -j 4, --opt=value and --opt value,
# options after positional arguments, "--" ends the options; bad options are
# one error line plus the usage, exit 2. Unknown ops and dtypes are named.
. "$(dirname "$0")/lib.sh"

small_spec
# Its kernels come from the cubin cache (seed_db): what is tested is how the
# options are read.
seed_db "$T/a.db" || { fail "seed the cubin cache"; exit 1; }
expect_exit 0 "compile -j4 (value attached to a short option)" "$AITUNE" compile -j4 "$T/small.yaml" --db="$T/a.db"
expect_exit 0 "compile -j 1 --db PATH (separate values)" "$AITUNE" compile "$T/small.yaml" -j 1 --db "$T/a.db"
expect_exit 2 "compile -j0" "$AITUNE" compile "$T/small.yaml" -j0 --db "$T/a.db"
expect_stderr "^aitune: error: -j '0' must be an integer in \[1, 1024\]" "-j0 is out of range, named"
expect_exit 2 "an unknown long option" "$AITUNE" show --colour
expect_stderr "^aitune: error: unknown option '--colour'\$" "the unknown long option is named"
expect_stderr "^usage: aitune show" "the usage follows the error"
expect_exit 2 "an unknown short option" "$AITUNE" show -x
expect_stderr "^aitune: error: unknown option '-x'\$" "the unknown short option is named"
expect_exit 2 "an unknown option given a value" "$AITUNE" show --colour=red
expect_stderr "^aitune: error: unknown option '--colour'\$" "the option is named without its value"
expect_exit 2 "a flag given a value" "$AITUNE" show --json=yes
expect_stderr "^aitune: error: option '--json' takes no value\$" "a flag with =value says it takes none"
expect_exit 2 "a value option at the end with no value" "$AITUNE" show --db
expect_stderr "^aitune: error: option '--db' needs a value\$" "a missing value is named"
expect_exit 2 "-j at the end with no value" "$AITUNE" compile "$T/small.yaml" -j
expect_stderr "^aitune: error: option '-j' needs a value\$" "a short option's missing value is named"
expect_exit 2 "after --, an option-like word is an argument" "$AITUNE" list -- --json
expect_stderr "^aitune: error: unknown op '--json'" "-- ends the options"
expect_exit 0 "options may follow the positional argument" "$AITUNE" list axpy --json
expect_stdout '^\{"root":' "list axpy --json is JSON"
expect_exit 0 "-h prints the usage" "$AITUNE" lookup -h
expect_stdout "^usage: aitune lookup" "-h shows the command's usage"
expect_exit 0 "--help after other arguments" "$AITUNE" lookup axpy --help
expect_exit 2 "too many arguments" "$AITUNE" list axpy softmax
expect_stderr "^aitune: error: unexpected argument 'softmax'" "the extra argument is named"

# Unknown ops and dtypes are named as unknown, not "no winner".
expect_exit 2 "lookup of an unknown op" "$AITUNE" lookup axpx --arch sm_90 --dtype f32 --shape 64 --db "$T/a.db"
expect_stderr "^aitune: error: unknown op 'axpx' \(ops: attn_decode, axpy, " "lookup names the unknown op"
expect_stderr_lines 1 "one line"
expect_exit 2 "lookup of an unknown dtype" "$AITUNE" lookup axpy --arch sm_90 --dtype bf61 --shape 64 --db "$T/a.db"
expect_stderr "^aitune: error: unknown dtype 'bf61' for op 'axpy' \(it has f32, f16, bf16\)\$" "lookup names the unknown dtype"
expect_exit 2 "emit of an unknown dtype" "$AITUNE" emit axpy --arch sm_90 --dtype bf61 --shape 64 --db "$T/a.db" -o "$T/x.cu"
expect_stderr "^aitune: error: unknown dtype 'bf61' for op 'axpy'" "emit names the unknown dtype"
# An op the templates lack but the registry has (tuned elsewhere) is not unknown.
sqlite3 "$T/a.db" "INSERT INTO defaults (op, arch, dtype, template, config) VALUES ('elsewhere', 'sm_90', 'f32', 'elsewhere/vec', '{\"block\":64}')"
run "$AITUNE" lookup elsewhere --arch sm_90 --dtype f32 --shape 64 --db "$T/a.db"
if grep -q "unknown" "$T/err"; then fail "an op only the registry has is called unknown"; show_last; else ok "an op only the registry has is not called unknown"; fi
done_testing
