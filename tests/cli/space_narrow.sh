#!/usr/bin/env bash
# tests/run: slow 32 (counts six gemm buckets' spaces)
# A template's narrow(shape) drops the param values its constraints refuse
# at every config of a task (search/space.lua), so a search never draws
# them: swapab's bn by m (and the second mid-size kernel's mc and nvar where
# no bn above 64 is left), gemv nt's mt, wgmma's staging by the operands'
# alignment and its epilogues by D's. The valid configs must be the same:
# compile --plan counts each bucket's, and the counts are those recorded
# with the templates before they narrowed (tests/fixtures/space_narrow,
# m = 1, 15 and 63, a mid-size m, an unaligned k, the gated product).
. "$(dirname "$0")/lib.sh"

FIX="$ROOT/tests/fixtures/space_narrow"
run "$AITUNE" compile "$FIX/spec.yaml" --plan
expect_eq "compile --plan exits 0" "$RC" 0 || show_last
if diff "$FIX/plan.txt" "$T/out" >"$T/diff"; then
    ok "every bucket's templates hold the configs they held before narrowing ($(grep -c '^  ' "$T/out") rows)"
else
    fail "the counts moved: $(head -20 "$T/diff")"
fi
done_testing
