#!/usr/bin/env bash
# tests/cli/tmpl_sources.sh: every template still writes, byte for byte, the
# CUDA source it wrote when tests/fixtures/kernel_sample/sources.txt was
# made: 3319 instances (each template's default and 3 seeded samples per
# task, dtype and bucket of tests/fixtures/kernel_sample/sources.yaml), each
# with the hash of its source. A source that changes changes its cubin cache
# key (jit.h), so a refactoring of templates/ must leave this file as it is.
# A change meant to alter kernels regenerates it, and its commit says that
# cache keys change:
#
#     build/tests/kernel_sample list -n 3 tests/fixtures/kernel_sample/sources.yaml >/tmp/l &&
#     build/tests/kernel_sample sources /tmp/l >tests/fixtures/kernel_sample/sources.txt
#
# A "default" line also checks that the template's default config is still
# that one (a moved default() must return the same config).
. "$(dirname "$0")/lib.sh"

KS=$ROOT/build/tests/kernel_sample
FIX=$ROOT/tests/fixtures/kernel_sample/sources.txt
if [ ! -x "$KS" ]; then
    skip "template sources: build/tests/kernel_sample is not built (make)"
    exit 0
fi

# The check itself: the lines of $1 whose source hash or default differs.
differs() {
    "$KS" sources "$1" >"$T/now" 2>"$T/now.err"
    local rc=$?
    diff "$1" "$T/now" >"$T/diff"
    [ $rc != 0 ] || [ -s "$T/diff" ]
}

if differs "$FIX"; then
    fail "template sources differ from tests/fixtures/kernel_sample/sources.txt ($(grep -c '^[<>]' "$T/diff") diff lines; the header says how to regenerate it after a change meant to alter kernels)"
    head -n 8 "$T/diff" | cut -c1-220 | sed 's/^/    /'
    head -n 4 "$T/now.err" | sed 's/^/    err: /'
else
    ok "every template writes the source it wrote: $(wc -l <"$FIX") instances, $(cut -f1 "$FIX" | sort -u | wc -l) templates"
fi
n_tmpl=$(cut -f1 "$FIX" | sort -u | wc -l)
n_all=0
for op in "$ROOT"/templates/*/op.lua; do
    d=$(dirname "$op")
    for f in "$d"/*.lua; do
        [ "$(basename "$f")" = op.lua ] && continue
        n_all=$((n_all + 1))
    done
done
expect_eq "the fixture reaches every template family" "$n_tmpl" "$n_all"

# The check can fail: one source hash altered, one default that is not the
# default, one config the template does not know.
awk -F'\t' 'BEGIN { OFS = "\t" } NR == 5 { $6 = "0000000000000000" } { print }' "$FIX" >"$T/tampered"
if differs "$T/tampered" && grep -q '^< .*0000000000000000$' "$T/diff"; then
    ok "a changed source hash is caught"
else
    fail "a changed source hash went unnoticed"
fi
awk -F'\t' 'BEGIN { OFS = "\t"; done = 0 }
    !done && $4 == "sample" && $1 == "gemm_nt/mma" { $4 = "default"; done = 1 } { print }' "$FIX" >"$T/notdefault"
if differs "$T/notdefault" && grep -q '^> gemm_nt/mma.*default-changed$' "$T/diff"; then
    ok "a default line whose config is not the template's default is caught"
else
    fail "a default line with another config went unnoticed"
fi
printf 'gemm_nt/mma\tbf16\t16,4096,4096\tsample\t{"bm":7}\n' >"$T/badcfg"
expect_exit 1 "a config the template cannot instantiate fails" "$KS" sources "$T/badcfg"
expect_stderr 'line 1: ' "the failure names the line"
printf 'gemm_nt/mma\tbf16\n' >"$T/short"
expect_exit 1 "a line without a config fails" "$KS" sources "$T/short"
expect_stderr 'line 1: want template, dtype, shape, kind, config' "the short line is named"

done_testing
