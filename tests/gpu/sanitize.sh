#!/usr/bin/env bash
# compute-sanitizer memcheck over a sweep of tests/gpu/sanitize.yaml (or $SANITIZE_SPEC): every
# candidate's verification and timing runs under the sanitizer (the worker
# is a child process; the sanitizer follows it). PASS when the sanitizer
# reports no errors and no candidate was recorded wrong or faulting.
# $SANITIZE_ARGS: more options for the sweep (e.g. --vendor off).
#   tests/gpu/sanitize.sh OUTDIR
set -uo pipefail
keep=${1:-/tmp/aitune-sanitize}
w=$(mktemp -d /tmp/aitune-sanitize.XXXX)
mkdir -p "$keep"
compute-sanitizer --tool memcheck --print-limit 20 build/aitune sweep ${SANITIZE_SPEC:-tests/gpu/sanitize.yaml} --db "$w/s.db" \
    --timeout 120s --quiet ${SANITIZE_ARGS:-} > "$keep/sanitize.txt" 2>&1
rc=$?
errs=$(grep -o "ERROR SUMMARY: [0-9]*" "$keep/sanitize.txt" | awk '{ s += $3 } END { print s + 0 }')
grep "ERROR SUMMARY" "$keep/sanitize.txt" | tail -3
python3 tests/gpu/verdict.py "$w/s.db" "$rc" "compute-sanitizer memcheck" --sanitizer-errors "$errs" |
    tee "$keep/sanitize-result.txt"
