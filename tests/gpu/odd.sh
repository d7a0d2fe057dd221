#!/usr/bin/env bash
# Every memory-bound op and dtype on odd shapes (tests/gpu/odd.yaml, or $ODD_SPEC), through
# the real sweep: each bucket must get a winner and no candidate may be
# recorded wrong, faulting or hung.   tests/gpu/odd.sh OUTDIR
set -uo pipefail
keep=${1:-/tmp/aitune-odd}
w=$(mktemp -d /tmp/aitune-odd.XXXX)
mkdir -p "$keep"
build/aitune sweep ${ODD_SPEC:-tests/gpu/odd.yaml} --db "$w/odd.db" --quiet > "$w/odd.out" 2> "$keep/odd.err"
rc=$?
python3 tests/gpu/verdict.py "$w/odd.db" "$rc" "odd shapes" | tee "$keep/odd.txt"
