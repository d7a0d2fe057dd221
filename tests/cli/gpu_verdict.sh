#!/usr/bin/env bash
# tests/gpu/verdict.py, the PASS/FAIL line of the GPU suites, on registries
# written by fake sweeps: a clean sweep passes; a wrong candidate, a failed
# sweep or sanitizer errors fail, each with exit 1.
. "$(dirname "$0")/lib.sh"

small_spec
V="python3 $ROOT/tests/gpu/verdict.py"
# The registries start with the small spec's kernels (seed_db): verdict.py
# reads the sweeps' measurements, not how their kernels were compiled.
seed_db "$T/clean.db" && seed_db "$T/wrong.db" || { fail "seed the cubin cache"; exit 1; }

fake_sweep ok "$T/clean.db" "$T/small.yaml"
expect_eq "clean fake sweep exits 0" "$RC" 0 || show_last
expect_exit 0 "verdict on a clean sweep" $V "$T/clean.db" 0 clean
expect_stdout "^PASS clean: sweep exit 0, 38 candidates verified ok, 0 wrong/faulting, 1 of 1 buckets with a winner" \
    "the clean sweep's PASS line counts its candidates and buckets"
expect_exit 1 "verdict on a sweep that exited 1" $V "$T/clean.db" 1 failed
expect_stdout "^FAIL failed: sweep exit 1" "a failed sweep is a FAIL"
expect_exit 1 "verdict with sanitizer errors" $V "$T/clean.db" 0 san --sanitizer-errors 3
expect_stdout "^FAIL san: .*3 sanitizer errors" "sanitizer errors are a FAIL"

fake_sweep wrong_verify:2 "$T/wrong.db" "$T/small.yaml"
expect_exit 1 "verdict on a sweep with a wrong candidate" $V "$T/wrong.db" 0 wrong
expect_stdout "^  bad: \('axpy', 'f32', 'n=2\^6', 'axpy/vec', 'wrong'" "the wrong candidate is listed"
expect_stdout "^FAIL wrong: .*1 wrong/faulting" "one wrong candidate is a FAIL"
done_testing
