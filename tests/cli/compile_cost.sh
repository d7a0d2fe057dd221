#!/usr/bin/env bash
# tests/cli/compile_cost.sh: a GEMM candidate's compile stays cheap and its
# kernel stays what it was. The defaults of the three families that cost the
# most to compile (gemm_nn/wgmma, gemm_nt/mma, gemm_nt/gemv; lines of
# bench/compile_cost/sample.txt) are compiled with aitune's NVRTC options
# (tests/unit/kernel_sample.c), and for each:
#   - the CPU seconds of the compile (user + sys of the compiling process,
#     which a loaded machine inflates far less than wall time) are at most
#     BOUND, several times what they take (0.3 to 1.4 s on a 2-core
#     machine, bench/RESULTS.md "Compile cost per GEMM candidate"): a bound
#     for a template or option change that multiplies the work, not a
#     timing;
#   - the ptxas report (registers, spills, shared memory, stack) is the one
#     in bench/compile_cost/baseline.txt, when this NVRTC is the baseline's
#     (another NVRTC may allot registers otherwise: skipped, and said).
# bench/compile_cost.sh measures the whole sample, per family.
. "$(dirname "$0")/lib.sh"

KS=$ROOT/build/tests/kernel_sample
SAMPLE=$ROOT/bench/compile_cost/sample.txt
BASE=$ROOT/bench/compile_cost/baseline.txt
BOUND=${COMPILE_COST_BOUND:-4.0}
if [ ! -x "$KS" ]; then
    skip "compile cost: build/tests/kernel_sample is not built (make)"
    exit 0
fi

# Whether CPU seconds $1 are within bound $2.
within_bound() { awk -v c="$1" -v b="$2" 'BEGIN { exit !(c != "" && c + 0 == c && c <= b) }'; }

# The chosen lines, the others commented out so line numbers stay.
awk -F'\t' '$4 == "default" && ($1 == "gemm_nn/wgmma" || $1 == "gemm_nt/mma" || $1 == "gemm_nt/gemv") && !seen[$1]++ { print; next }
    { print "#" }' "$SAMPLE" >"$T/lines.txt"
expect_eq "the sample has a default of each of the three families" "$(grep -vc '^#' "$T/lines.txt")" 3

run "$KS" compile "$T/lines.txt"
if [ "$RC" != 0 ]; then
    fail "kernel_sample compile: exit $RC"
    show_last
fi
nvrtc=$(sed -n 's/^kernel_sample: NVRTC \([0-9.]*\),.*/\1/p' "$T/err")
base_nvrtc=$(sed -n 's/^# NVRTC \([0-9.]*\)$/\1/p' "$BASE")
while IFS=$'\t' read -r num tname; do
    row=$(awk -F'\t' -v t="$tname" '$1 == t && $4 == "default" { print; exit }' "$T/out")
    if [ -z "$row" ]; then
        fail "$tname (line $num) did not compile"
        continue
    fi
    rep=$(cut -f6 <<<"$row") cpu=$(cut -f7 <<<"$row")
    if within_bound "$cpu" "$BOUND"; then
        ok "$tname default compiles in $cpu CPU s (bound $BOUND)"
    else
        fail "$tname default took $cpu CPU s to compile, over the bound of $BOUND"
    fi
    want=$(awk -F'\t' -v n="$num" '$1 == n { print $3; exit }' "$BASE")
    if [ "$nvrtc" != "$base_nvrtc" ]; then
        skip "$tname ptxas report: NVRTC $nvrtc here, the baseline's is ${base_nvrtc:-unknown}"
    else
        expect_eq "$tname default's ptxas report (regs spills smem stack) is the baseline's" "$rep" "$want"
    fi
done < <(awk '!/^#/ { print NR "\t" substr($0, 1, index($0, "\t") - 1) }' "$T/lines.txt")

# The bound check itself: over the bound, and no number at all, fail it.
if ! within_bound 4.5 4.0 && ! within_bound "" 4.0 && ! within_bound failed 4.0 && within_bound 0.25 4.0; then
    ok "the bound check passes 0.25 of 4.0 and fails 4.5, an empty value and 'failed'"
else
    fail "the bound check does not tell 4.5, '' or 'failed' from 0.25 (bound 4.0)"
fi

done_testing
