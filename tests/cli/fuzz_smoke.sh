#!/usr/bin/env bash
# tests/run: slow 22 (the fuzz harnesses built and run)
# A short run of each libFuzzer harness (tests/fuzz/) over its seed corpus,
# with ASan and UBSan: every input of the corpus, then a second of new
# ones (AITUNE_FUZZ_SECONDS), so a regression the corpus already reaches
# fails the suite. `make fuzz` is the long run. Skipped where clang cannot
# build with -fsanitize=fuzzer (`make fuzz-deps`).
. "$(dirname "$0")/lib.sh"

FUZZ_SECONDS=${AITUNE_FUZZ_SECONDS:-1}
if ! command -v "${FUZZ_CC:-clang}" >/dev/null 2>&1 ||
   ! printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' |
       "${FUZZ_CC:-clang}" -fsanitize=fuzzer,address,undefined -x c - -o "$T/probe" >/dev/null 2>&1; then
    skip "fuzz smoke runs: no clang with libFuzzer here (make fuzz-deps)"
    exit 0
fi
# At -O0 (FUZZ_OPT): the build takes a third of the CPU time, and a second
# of fuzzing needs no speed.
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES make -s -C "$ROOT" BUILD="$T/b" FUZZ_OPT=-O0 fuzz-build \
        >"$T/build.log" 2>&1; then
    fail "build the fuzz harnesses"
    tail -n 5 "$T/build.log"
    exit 1
fi
ok "the fuzz harnesses build"
for n in spec expr plan registry emit import merge replay; do
    mkdir -p "$T/new-$n"
    # New inputs go to a scratch folder: the repo's corpus is only read.
    if timeout -k 5 $((FUZZ_SECONDS + 60)) "$T/b/fuzz/fuzz_$n" -max_total_time="$FUZZ_SECONDS" -timeout=10 \
            -artifact_prefix="$T/$n-" "$T/new-$n" "$ROOT/tests/fuzz/corpus/$n" >"$T/$n.log" 2>&1; then
        runs=$(grep -oE 'Done [0-9]+ runs' "$T/$n.log" | grep -oE '[0-9]+')
        ok "fuzz_$n: ${runs:-?} inputs in ${FUZZ_SECONDS} s, no finding"
    else
        fail "fuzz_$n found something (or failed)"
        grep -m1 -A12 -E "ERROR|runtime error|deadly signal" "$T/$n.log" | sed 's/^/    /'
    fi
done
done_testing
