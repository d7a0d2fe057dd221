#!/usr/bin/env bash
# tests/run: slow 20 (swapped wgmma configs compiled, a winner emitted and built)
# The wgmma family with its operands exchanged (gemm_nt/wgmma_swap,
# templates/lib/wgmma.lua's family with op.swap) without a GPU: it serves
# nt at m above 256 only, with k a multiple of 8; its space holds only
# direct stores, no staging and its widths along m; a seeded sample of it
# compiles for sm_90a without spills or local memory; its default takes the
# tile whose waves cost least (lib/wgmma_default.lua's swap_default); a
# fake sweep's winner keeps the exchange in its launch plan (A's tensor map
# over B's n rows, B's over A's m rows, the kernel's m and n exchanged),
# and the emitted file builds with nvcc. The transposed stores' results are
# checked on a GPU only (the worker's verification, compute-sanitizer).
. "$(dirname "$0")/lib.sh"

cat > "$T/swap.yaml" <<'YAML'
name: swap
max_evals: 10
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [wgmma_swap]
    shapes: {m: {values: [2086], exact: true}, n: {values: [4096], exact: true}, k: {values: [4096], exact: true}}
  - op: gemm_nt
    dtypes: [f16]
    templates: [wgmma_swap]
    shapes: {m: {values: [1049], exact: true}, n: {values: [14336], exact: true}, k: {values: [4096], exact: true}}
YAML
expect_exit 0 "compile a seeded sample of the swapped space" "$AITUNE" compile -v "$T/swap.yaml" --db "$T/c.db"
n=$(awk '$2 == "gemm_nt/wgmma_swap"' "$T/out" | wc -l)
expect_true "swapped configs are instantiated and compiled ($n)" test "$n" -ge 12
expect_eq "none of them spills" "$(awk '$2 == "gemm_nt/wgmma_swap" && $5 != 0' "$T/out" | wc -l)" 0
expect_eq "none uses local memory" "$(sql "$T/c.db" "select count(*) from cubins where stack > 0 and kernel like 'aitune_%'")" 0
expect_eq "every one stores directly, stages nothing, and is m-wide by a multiple of 8 from 128 to 256" \
    "$(awk '$2 == "gemm_nt/wgmma_swap"' "$T/out" | grep '"epilogue":"direct"' | grep '"stage":"none"' |
       grep -cE '"bn":(128|136|144|152|160|176|192|208|224|256),')" "$n"

# Where it is not offered: m up to 256 (swapab's), k not a multiple of 8.
for shape in "256 4096 4096" "2086 4096 4100"; do
    set -- $shape
    cat > "$T/no.yaml" <<YAML
name: no
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [wgmma_swap]
    shapes: {m: {values: [$1], exact: true}, n: {values: [$2], exact: true}, k: {values: [$3], exact: true}}
YAML
    run "$AITUNE" compile "$T/no.yaml" --plan
    expect_true "no swapped candidate at m, n, k = $1, $2, $3" grep -q ' 0 candidates' "$T/out" || show_last
done

KS=$ROOT/build/tests/kernel_sample
# One consumer with stream-K spills next to 104 accumulators (bn 208, the
# GPU sweep's three "compile" rows, nineteenth session call 9): refused.
printf 'gemm_nt/wgmma_swap\tbf16\t1025,4096,4096\tsample\t%s\n' \
    '{"bm":64,"bn":208,"cluster":"1x1","consumers":1,"epilogue":"direct","group":1,"inflight":1,"persistent":1,"producer_regs":40,"raster":"n","schedule":"coop","stage":"none","stages":5,"streamk":1}' >"$T/sk208"
run "$KS" sources -c -o "$T/sk208.out" "$T/sk208"
expect_true "one consumer, bn 208, stream-K: refused as a spill" grep -q "spills (stream-K's fix-up" "$T/err" || show_last

# The default: the tile whose waves cost least.
run "$KS" list -n 0 "$T/swap.yaml"
expect_eq "its default at 2086 x 4096 x 4096: 128 x 176 tiles (32 x 12 of them: three waves, the last nearly full)" \
    "$(awk -F'\t' '$3 == "2086,4096,4096" && $4 == "default"' "$T/out" | grep -o '"bm":[0-9]*,"bn":[0-9]*')" '"bm":128,"bn":176'
expect_eq "its default at 1049 x 14336 x 4096: 256 x 152 tiles (392 of them, three waves)" \
    "$(awk -F'\t' '$3 == "1049,14336,4096" && $4 == "default"' "$T/out" | grep -o '"bm":[0-9]*,"bn":[0-9]*')" '"bm":256,"bn":152'

# A winner's launch plan: A's map over B (n rows), B's over A (m rows), the
# kernel's m and n exchanged, A's box rows in n.
fake_sweep ok "$T/s.db" "$T/swap.yaml"
expect_eq "a fake sweep of the swapped space exits 0" "$RC" 0 || show_last
launch=$(sql "$T/s.db" "select launch from winners where template = 'gemm_nt/wgmma_swap' and shape like '%2086%' limit 1")
expect_true "A's tensor map reads B's n rows, with its box rows in n" \
    grep -q '"arg":"B","dims":\["k","n"\].*"box":\[64,"min([0-9]*, max(cdiv(n, 8) \* 8' <<<"$launch"
expect_true "B's tensor map reads A's m rows" grep -q '"arg":"A","dims":\["k","m"\]' <<<"$launch"
expect_true "the kernel's m and n are the GEMM's n and m" grep -q '"expr":"n"},{"kind":"dim","expr":"m"}' <<<"$launch"
if command -v nvcc >/dev/null 2>&1; then
    run "$AITUNE" emit gemm_nt --arch sm_90a --dtype bf16 --shape 2086,4096,4096 --db "$T/s.db" -o "$T/swap.cu"
    expect_eq "emit the swapped winner" "$RC" 0 || show_last
    run nvcc -gencode=arch=compute_90a,code=sm_90a -c "$T/swap.cu" -o "$T/swap.o"
    expect_eq "nvcc -c builds the emitted swapped kernel" "$RC" 0 || show_last
else
    skip "nvcc builds the emitted swapped kernel: no nvcc"
fi
done_testing
