#!/usr/bin/env bash
# tests/run: slow 17 (replays of every strategy, hundreds of seeds)
# Every strategy against replayed landscapes: the budget is honoured, no
# config is asked twice, runs are reproducible by seed, warm start helps,
# and on the structured landscape the guided strategies beat random, while
# random itself closes no gap (a check of the harness: its figures agree
# with the metric's analytic expectation).
. "$(dirname "$0")/../cli/lib.sh"

GEMM=$ROOT/tests/sim/landscapes/gemm-synthetic.tsv
ALL="anneal genetic model local random exhaustive"

# A small landscape: a bowl over 3 params (8 x 6 x 5 = 240 configs), a few
# compile failures and timeouts, optimum 10 us at a=5, b=2, c=3.
{
    echo "# aitune landscape v1"
    echo "# a test bowl"
    printf 'op\ttemplate\tarch\tdtype\tbucket\tstatus\ttime_us\tcompile_ms\tconfig\n'
    for a in 1 2 3 4 5 6 7 8; do for b in 0 1 2 3 4 5; do for c in 1 2 3 4 5; do
        st=ok
        [ $(( (a * 7 + b * 3 + c) % 23 )) -eq 0 ] && st=compile
        [ $(( (a * 5 + b * 11 + c * 3) % 41 )) -eq 0 ] && st=timeout
        t=$(( 10 + 3 * (a - 5) * (a - 5) + 5 * (b - 2) * (b - 2) + 2 * (c - 3) * (c - 3) + (a * b * c) % 3 ))
        printf 'bowl\tbowl/t\tsm_90\tf32\tn=2^10\t%s\t%d\t%d\t{"a":%d,"b":%d,"c":%d}\n' $st $t $((300 + a * 10)) $a $b $c
    done; done; done
} >"$T/bowl.tsv"
n_ok=$(awk -F'\t' '$6 == "ok"' "$T/bowl.tsv" | wc -l)
opt=$(awk -F'\t' '$6 == "ok" { if (m == "" || $7 < m) m = $7 } END { print m }' "$T/bowl.tsv")
expect_eq "the bowl's optimum is 10 us (not a failure)" "$opt" 10

# Each strategy: the budget (20% of 240 = 48), no repeats (replay fails on
# one), the best-so-far column never rises.
for s in $ALL; do
    run "$AITUNE" replay "$T/bowl.tsv" --strategy $s --seeds 2 --trace --tsv
    if [ "$RC" != 0 ]; then fail "$s on the bowl: exit $RC"; show_last; continue; fi
    per_seed=$(awk -F'\t' '$1 == "trace" { n[$3]++ } END { for (s in n) printf "%d ", n[s] }' "$T/out")
    expect_eq "$s evaluates exactly its budget of 48 per run" "$per_seed" "48 48 "
    mono=$(awk -F'\t' '$1 == "trace" { if ($3 == s && $8 > b) bad = 1; s = $3; b = $8 } END { print bad + 0 }' "$T/out")
    expect_eq "$s: the best-so-far never rises" "$mono" 0
done

# --budget: 5% of 240 is 12.
run "$AITUNE" replay "$T/bowl.tsv" --strategy model,anneal --seeds 1 --budget 0.05 --trace --tsv
expect_eq "--budget 0.05 stops each run at 12 evaluations" \
    "$(awk -F'\t' '$1 == "trace"' "$T/out" | wc -l)" 24

# Reproducible by seed; another seed, another run.
for s in anneal genetic model local random; do
    "$AITUNE" replay "$GEMM" --only "m=2^12" --strategy $s --seeds 1 --seed 7 --budget 0.05 --trace --tsv | grep '^trace' >"$T/a"
    "$AITUNE" replay "$GEMM" --only "m=2^12" --strategy $s --seeds 1 --seed 7 --budget 0.05 --trace --tsv | grep '^trace' >"$T/b"
    "$AITUNE" replay "$GEMM" --only "m=2^12" --strategy $s --seeds 1 --seed 8 --budget 0.05 --trace --tsv | grep '^trace' >"$T/c"
    if [ -s "$T/a" ] && cmp -s "$T/a" "$T/b"; then ok "$s: the same seed replays the same $(wc -l <"$T/a") evaluations"
    else fail "$s: seed 7 twice gives different runs"; fi
    if ! cmp -s <(cut -f5,10 "$T/a") <(cut -f5,10 "$T/c"); then ok "$s: seed 8 differs from seed 7"
    else fail "$s: seeds 7 and 8 give the same run"; fi
done

# tsv figure: mean lo hi of (strategy, figure, budget).
fig() { awk -F'\t' -v s="$1" -v f="$2" -v b="$3" -v c="${4:-5}" '$2 == s && $3 == f && $4 == b { print $c }' "$T/out"; }

# Random closes no gap: over 200 seeds its 95% interval holds 0 (the
# figures of random.lua agree with the exact expectation).
run "$AITUNE" replay "$T/bowl.tsv" --strategy random --seeds 200 --tsv
for b in 0.02 0.05 0.1; do
    lo=$(fig random gap_evals $b 6) hi=$(fig random gap_evals $b 7)
    if awk -v l="$lo" -v h="$hi" 'BEGIN { exit !(l <= 0 && h >= 0 && h - l < 0.6) }'; then
        ok "random search closes no gap at $b of the space: [$lo, $hi] holds 0"
    else
        fail "random search at $b: interval [$lo, $hi] should hold 0"
    fi
done

# The structured landscape: at 5% of the space the guided strategies close
# most of the gap, random does not. Ten seeds: the model's 95% lower bound
# at 5% is about 0.86, anneal's 0.71, far above the bar of 0.3 (the model's
# replays are most of this file's time; genetic is not judged here).
run "$AITUNE" replay "$GEMM" --only "m=2^12" --strategy anneal,model,random --seeds 10 --budget 0.1 --tsv
expect_eq "replay of the GEMM landscape exits 0" "$RC" 0 || show_last
r5=$(fig random gap_evals 0.05)
for s in anneal model; do
    lo=$(fig $s gap_evals 0.05 6)
    if awk -v l="$lo" -v r="$r5" 'BEGIN { exit !(l > 0.3 && l > r) }'; then
        ok "$s closes the gap at 5% of the GEMM space: lower bound $lo, random's mean $r5"
    else
        fail "$s at 5% of the GEMM space: lower bound $lo (want > 0.3 and > random's $r5)"
    fi
done
w=$(fig model within3_at10 10)
awk -v w="$w" 'BEGIN { exit !(w >= 0.8) }' && ok "model: within 3% by 10% of the space in $w of runs" ||
    fail "model within 3% by 10% of the space in only $w of runs"

# The measured GEMV landscape (gemm_nt/gemv at 16x4096x4096 on the H100,
# 540 configs): flat at the top (4 configs within 3%), where the model's
# pair effects and its look at the best config's neighbours pay off. The
# issue's bar: >= 0.7 of the gap closed at 5% of the space, within 3% by
# 10% on >= 80% of runs (bench/archive/RESULTS-2026.md, "lazy space").
run "$AITUNE" replay "$ROOT/tests/sim/landscapes/memory-gemm_nt.tsv" --strategy model --seeds 20 --budget 0.1 --tsv
g=$(fig model gap_evals 0.05) w=$(fig model within3_at10 20)
awk -v g="$g" -v w="$w" 'BEGIN { exit !(g >= 0.7 && w >= 0.8) }' &&
    ok "model on the GEMV landscape: $g of the gap closed at 5%, within 3% by 10% in $w of runs" ||
    fail "model on the GEMV landscape: $g of the gap at 5% (want >= 0.7), within 3% by 10% in $w (want >= 0.8)"

# Warm start: the neighbours' best configs first. On the middle bucket of
# the chain it gets close sooner than a cold start.
run "$AITUNE" replay "$GEMM" --only "m=2^11" --strategy model,anneal --seeds 10 --budget 0.05 --tsv
cold_m=$(fig model gap_evals 0.01) cold_a=$(fig anneal gap_evals 0.01)
run "$AITUNE" replay "$GEMM" --only "m=2^11" --strategy model,anneal --seeds 10 --budget 0.05 --tsv --warm 4
warm_m=$(fig model gap_evals 0.01) warm_a=$(fig anneal gap_evals 0.01)
for p in "model $cold_m $warm_m" "anneal $cold_a $warm_a"; do
    set -- $p
    awk -v c="$2" -v w="$3" 'BEGIN { exit !(w > c + 0.2) }' && ok "$1 warm-started closes more of the gap at 1%: $3 vs $2 cold" ||
        fail "$1 warm start at 1%: $3, cold $2 (want at least 0.2 more)"
done
# 27 evaluations (2% of the space): a quarter of them may go to warm configs, so all 4.
run "$AITUNE" replay "$GEMM" --only "m=2^11" --strategy genetic --seeds 1 --budget 0.02 --tsv --warm 2 --trace
first=$(awk -F'\t' '$1 == "trace" && $5 <= 4 { print $10 }' "$T/out" | sort | tr '\n' ' ')
want=$(awk -F'\t' '($5 ~ /^m=2\^10,/ || $5 ~ /^m=2\^12,/) && $6 == "ok"' "$GEMM" | sort -t"$(printf '\t')" -k5,5 -k7,7g |
       awk -F'\t' '{ if (c[$5]++ < 2) print $9 }' | sort | tr '\n' ' ')
expect_eq "the first asks of a warm start are the neighbours' 2 best each" "$first" "$want"
# 8 evaluations: 2 warm configs at most (on rmsnorm's H100 landscapes, warm configs
# filling a 4- to 11-evaluation budget lost what they gained at 10% of the space).
run "$AITUNE" replay "$GEMM" --only "m=2^11" --strategy genetic --seeds 1 --budget 0.006 --tsv --warm 2 --trace
n=$(awk -F'\t' '$1 == "trace" && $5 <= 4 { print $10 }' "$T/out" | grep -cxF -f <(echo "$want" | tr ' ' '\n' | grep .))
expect_eq "with 8 evaluations, 2 of the first 4 asks are warm configs" "$n" 2

# Configs written with spaces or keys out of order are the same configs.
printf '# aitune landscape v1\nop\ttemplate\tarch\tdtype\tbucket\tstatus\ttime_us\tcompile_ms\tconfig\n' >"$T/loose.tsv"
printf 'x\tx/a\tsm_90\tf32\tb\tok\t3\t1\t{ "b": 2, "a" : 1 }\nx\tx/a\tsm_90\tf32\tb\tok\t1\t1\t{"a":2,"b":2}\n' >>"$T/loose.tsv"
run "$AITUNE" replay "$T/loose.tsv" --strategy exhaustive --seeds 1 --budget 1 --trace --tsv
expect_eq "a landscape with loosely written JSON replays" "$RC" 0
expect_eq "its configs come back canonical" "$(awk -F'\t' '$1 == "trace" { print $10 }' "$T/out" | head -1)" '{"a":1,"b":2}'

# Bad input.
run "$AITUNE" replay "$T/bowl.tsv" --strategy nosuch
expect_eq "an unknown strategy is a usage error" "$RC" 2
expect_stderr "unknown search strategy 'nosuch'" "and says which"
printf '# aitune landscape v1\nop\tconfig\n' >"$T/bad.tsv"
run "$AITUNE" replay "$T/bad.tsv"
expect_eq "a landscape without the required columns is bad input" "$RC" 3
expect_stderr "bad.tsv line 2: the header has no column 'template'" "and says which column"
run "$AITUNE" replay "$T/bowl.tsv" --budget 2
expect_eq "--budget above 1 is a usage error" "$RC" 2

done_testing
